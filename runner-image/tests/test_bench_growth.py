"""The growth benches' goal lines (bench/growth.py, load_growth.py, ycsb_growth.py) from
given curves, without a server: a curve that grows is reported as growing."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import growth  # noqa: E402
import load_growth  # noqa: E402
import ycsb_growth  # noqa: E402


@pytest.mark.parametrize(("power", "expected"), [(0, 0.0), (1, 1.0), (2, 2.0)])
def test_the_growth_exponent_of_a_power_law_is_its_power(power, expected):
    sizes = [10, 100, 1000]
    assert growth.growth_exponent(sizes, [3.0 * s**power for s in sizes]) == pytest.approx(expected)


def test_at_most_linear_fails_a_quadratic_cost_and_passes_a_linear_one():
    sizes = [1, 2, 4, 8]
    assert growth.at_most_linear("t", sizes, [5 + 2 * s for s in sizes]).endswith(": met")
    assert growth.at_most_linear("t", sizes, [s * s for s in sizes]).endswith("NOT met")
    # a fixed cost hides a steep top under a low exponent over all sizes: the top one judges
    steep_top = growth.at_most_linear("t", [10, 100, 1000], [5.0, 5.4, 100.0])
    assert "size^1.27 from 100 to 1000" in steep_top and steep_top.endswith("NOT met")


def test_spread_is_the_range_over_the_median():
    assert growth.spread([90, 100, 110]) == pytest.approx(0.2)
    assert growth.flat("x", [90, 100, 110], 0.2).endswith(": met")
    assert growth.flat("x", [80, 100, 110], 0.2).endswith("NOT met")


def test_not_worse_judges_the_largest_size_against_the_best_of_any():
    rising_rate = growth.not_worse("rate", [100, 200, 300], 0.2, higher_is_better=True)
    falling_rate = growth.not_worse("rate", [100, 300, 200], 0.2, higher_is_better=True)
    assert rising_rate.endswith(": met") and "0% worse" in rising_rate
    assert falling_rate.endswith("NOT met") and "33% worse than the best (300)" in falling_rate
    assert growth.not_worse("cost", [5.0, 4.0, 4.5], 0.2, higher_is_better=False).endswith(": met")
    assert growth.not_worse("cost", [5.0, 4.0, 5.0], 0.2, higher_is_better=False).endswith("NOT met")


def test_the_linear_fit_finds_the_fixed_and_the_per_unit_parts():
    assert growth.linear_fit([1, 2, 4, 8], [3 + 2.5 * w for w in (1, 2, 4, 8)]) == pytest.approx((3.0, 2.5))


def _load(w: int, rows_per_s: int, rss: int = 88) -> dict:
    rows = 500_000 * w
    return {
        "db": "voltdb",
        "warehouses": w,
        "rows": rows,
        "wall_s": round(rows / rows_per_s, 1),
        "rows_per_s": rows_per_s,
        "client_cpu_s": rows * 4e-6,
        "client_cpu_us_per_row": 4.0,
        "peak_rss_mb": rss,
        "processes": 3,
        "server_cpu_s": 1.0,
    }


def test_a_load_whose_rate_falls_with_its_size_misses_the_goal():
    flat = [_load(w, 200_000) for w in (1, 2, 4, 8)]
    falling = [_load(w, 200_000 // w) for w in (1, 2, 4, 8)]
    growing_memory = [_load(w, 200_000, rss=80 * w) for w in (1, 2, 4, 8)]
    assert all(line.endswith(": met") for line in load_growth.goals("voltdb", flat) if "least squares" not in line)
    assert [g for g in load_growth.goals("voltdb", falling) if "NOT met" in g][0].startswith("voltdb rows/s")
    assert any("peak RSS" in g and "NOT met" in g for g in load_growth.goals("voltdb", growing_memory))
    assert list(load_growth.goals("mongodb", flat)) == []  # no curve of that database
    assert len(list(load_growth.table(flat))) == 2 + 4


def _ycsb(threads: int, cpu_ms: float) -> dict:
    return {
        "db": "voltdb",
        "workload": "a",
        "threads": threads,
        "processes": 1,
        "ops_per_s": 1000.0 * threads,
        "runner_cpu_ms_per_op": cpu_ms,
        "server_cpu_ms_per_op": 0.03,
        "runner_machine_share": 0.2,
        "server_machine_share": 0.6,
        "errors": 0,
    }


def test_the_runners_cpu_per_operation_growing_with_threads_misses_the_goal():
    (falling,) = ycsb_growth.goals([_ycsb(1, 0.03), _ycsb(64, 0.01)])
    (growing,) = ycsb_growth.goals([_ycsb(64, 0.05), _ycsb(1, 0.03)])
    assert falling.endswith(": met") and "1 to 64 threads" in falling
    assert growing.endswith("NOT met") and "67% worse than the best (0.03)" in growing
