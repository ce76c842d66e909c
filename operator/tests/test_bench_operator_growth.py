"""operator/bench/operator_growth.py's pure parts, without a cluster: when it refuses, the
figures it derives from samples, and its goal lines; and rss.py's reading of /metrics."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "operator" / "bench"))
import operator_growth  # noqa: E402
import rss  # noqa: E402
from operator_growth import Sample  # noqa: E402


def test_it_refuses_without_a_kubeconfig_file(tmp_path):
    assert "KUBECONFIG is not set" in operator_growth.refusal({})
    assert "which is not a file" in operator_growth.refusal({"KUBECONFIG": str(tmp_path / "none")})
    config = tmp_path / "config"
    config.write_text("apiVersion: v1\nkind: Config\n")
    assert "which is not a file" in operator_growth.refusal({"KUBECONFIG": f"{config}:{tmp_path / 'gone'}"})


def test_cpu_per_minute_and_per_run_above_idle():
    samples = [Sample(0.0, 10.0, 90.0), Sample(60.0, 13.0, 110.0), Sample(120.0, 16.0, 100.0)]
    point = operator_growth.summary(10, samples, [1.0, 4.0, 2.0], idle_cpu_per_minute=1.0)
    assert point["cpu_s_per_minute"] == 3.0
    assert point["cpu_s_per_minute_per_run"] == pytest.approx(0.2)
    assert (point["rss_peak_mb"], point["rss_last_mb"]) == (110.0, 100.0)
    assert (point["edit_to_status_s_median"], point["edit_to_status_s_max"]) == (2.0, 4.0)
    idle = operator_growth.summary(0, samples[:2], [], idle_cpu_per_minute=None)
    assert idle["cpu_s_per_minute_per_run"] is None and idle["edit_to_status_s_median"] is None


def _point(runs: int, per_run: float | None, rss_mb: float) -> dict:
    return {
        "runs": runs,
        "cpu_s_per_minute": 1.0 + (per_run or 0) * runs,
        "cpu_s_per_minute_per_run": per_run,
        "rss_peak_mb": rss_mb,
        "rss_last_mb": rss_mb,
        "edit_to_status_s_median": 3.0 if runs else None,
        "edit_to_status_s_max": 5.0 if runs else None,
    }


def test_the_goals_catch_a_per_run_cost_that_grows_and_memory_over_the_bound():
    good = [_point(0, None, 80), _point(1, 0.10, 82), _point(10, 0.11, 90), _point(50, 0.10, 120)]
    bad = [_point(0, None, 80), _point(1, 0.10, 82), _point(10, 0.20, 120), _point(50, 0.40, 160)]
    assert all(line.endswith(": met") for line in operator_growth.goals(good))
    per_run, memory = operator_growth.goals(bad)
    assert per_run.startswith("operator CPU per run") and per_run.endswith("NOT met")
    assert "with 50 runs: 160 MB" in memory and memory.endswith("NOT met")
    assert len(list(operator_growth.table(good))) == 2 + 4


def test_a_metric_is_read_from_the_exposition_by_its_exact_name():
    text = (
        "# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n"
        "process_cpu_seconds_total 12.5\nprocess_cpu_seconds_total_other 1\n"
        "process_resident_memory_bytes 1.048576e+08\n"
    )
    assert rss.metric(text, "process_cpu_seconds_total") == 12.5
    assert rss.metric(text, "process_resident_memory_bytes") == 104857600.0
    assert rss.metric(text, "process_open_fds") is None
