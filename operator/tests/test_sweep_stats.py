"""The sweep's statistics against scipy's (in the test environment only: the operator has no numpy)."""

from __future__ import annotations

import random

import pytest
from scipy import stats
from tpcc_operator import sweep_layout
from tpcc_operator import sweep_stats as statistics
from tpcc_operator.runspec import RunSpec


@pytest.mark.parametrize("n1, n2", [(1, 1), (2, 3), (3, 3), (5, 5), (4, 9), (10, 12), (20, 20)])
def test_mann_whitney_u_exact_matches_scipy(n1, n2):
    rng = random.Random(n1 * 100 + n2)
    for shift in (0.0, 0.5, 2.0):
        a = [rng.gauss(0, 1) for _ in range(n1)]
        b = [rng.gauss(shift, 1) for _ in range(n2)]
        u, p = statistics.mann_whitney_u(a, b)
        expected = stats.mannwhitneyu(a, b, alternative="two-sided", method="exact")
        assert u == expected.statistic and p == pytest.approx(expected.pvalue, rel=1e-9)


@pytest.mark.parametrize("n1, n2", [(25, 30), (8, 40)])
def test_mann_whitney_u_normal_and_ties_match_scipy(n1, n2):
    rng = random.Random(7)
    a = [rng.randint(0, 10) for _ in range(n1)]  # ties
    b = [rng.randint(2, 12) for _ in range(n2)]
    u, p = statistics.mann_whitney_u(a, b)
    expected = stats.mannwhitneyu(a, b, alternative="two-sided", method="asymptotic", use_continuity=True)
    assert u == expected.statistic and p == pytest.approx(expected.pvalue, rel=1e-9)


def test_a_clear_difference_is_significant_and_none_is_not():
    faster = [1010.0, 1020.0, 1030.0, 1040.0, 1050.0]
    slower = [900.0, 910.0, 920.0, 930.0, 940.0]
    assert statistics.mann_whitney_u(faster, slower)[1] < 0.01
    assert statistics.mann_whitney_u(faster, list(faster))[1] == 1.0


def test_the_confidence_interval_is_students():
    values = [98.0, 102.0, 100.0, 97.0, 103.0]
    s = statistics.summary(values)
    mean, sem = stats.tmean(values), stats.sem(values)
    low, high = stats.t.interval(0.95, len(values) - 1, loc=mean, scale=sem)
    assert s.ci95 == pytest.approx((low, high), rel=1e-4)
    assert (s.median, s.minimum, s.maximum, s.n) == (100.0, 97.0, 103.0, 5)
    assert statistics.summary([5.0]).ci95 is None and statistics.summary([5.0]).maximum == 5.0
    assert all(statistics.T_975[df - 1] == pytest.approx(stats.t.ppf(0.975, df), abs=5e-4) for df in range(1, 31))


def as_json(parts) -> list[dict]:
    """status.sweep.configurations or comparisons as the status has them."""
    return [p.to_json() for p in parts]


def test_a_sweeps_configurations_and_the_next_client_counts_comparison():
    from tpcc_operator import sweep

    spec = RunSpec.parse(
        {
            "database": {"type": "voltdb"},
            "runners": {"parallelism": 2},
            "sweep": {"warehouses": [1], "clients": [2, 4, 8], "repetitions": 3},
        }
    )
    cells = sweep_layout.sweep_cells(spec)
    table = sweep.initial(cells, sweep_layout.sweep_plan(spec, cells))
    tpmc = {2: [500.0, 510.0, 505.0], 4: [900.0, 880.0, 910.0], 8: [905.0, 890.0]}
    for i, cell in enumerate(table.cells):
        values = tpmc[cell.clients]
        if cell.repetition <= len(values):
            table = sweep.with_cell(table, i, state="Succeeded", tpm_c=values[cell.repetition - 1])
        else:
            table = sweep.with_cell(table, i, state="Failed")  # not counted
    configurations = as_json(sweep.configurations(table))
    assert [(c["clients"], c["tpmC"]["n"], c["tpmC"]["median"], c["tpmC"]["best"]) for c in configurations] == [
        (2, 3, 505.0, 510.0),
        (4, 3, 900.0, 910.0),
        (8, 2, 897.5, 905.0),
    ]
    assert configurations[0]["tpmC"]["ci95"][0] < 505.0 < configurations[0]["tpmC"]["ci95"][1]
    first, second = as_json(sweep.comparisons(table))
    assert first["clients"] == [2, 4] and first["medianChangePercent"] == pytest.approx(78.22, abs=0.01)
    # 3 against 3, all of one above all of the other: the smallest exact p-value there is, 2/20
    assert first["pValue"] == pytest.approx(0.1)
    assert second["clients"] == [4, 8] and second["pValue"] > 0.5  # saturated: no difference


def test_configurations_and_comparisons_keep_matrix_values_apart():
    """Two read concerns at the same clients are two configurations, not one of six values; the
    next-client-count comparison stays within one read concern."""
    from tpcc_operator import sweep

    spec = RunSpec.parse(
        {
            "database": {"type": "mongodb"},
            "sweep": {
                "clients": [2, 4],
                "repetitions": 3,
                "matrix": [{"field": "workload.driverOptions.read_concern", "values": ["local", "snapshot"]}],
            },
        }
    )
    cells = sweep_layout.sweep_cells(spec)
    table = sweep.initial(cells, sweep_layout.sweep_plan(spec, cells))
    tpmc = {(2, "local"): 100.0, (2, "snapshot"): 50.0, (4, "local"): 200.0, (4, "snapshot"): 60.0}
    for i, c in enumerate(cells):
        concern = dict(c.matrix)["workload.driverOptions.read_concern"]
        table = sweep.with_cell(table, i, state="Succeeded", tpm_c=tpmc[c.clients, concern] + c.repetition)
    rows = as_json(sweep.configurations(table))
    assert [
        (r["clients"], r["matrix"]["workload.driverOptions.read_concern"], r["tpmC"]["n"], r["tpmC"]["median"])
        for r in rows
    ] == [(2, "local", 3, 102.0), (2, "snapshot", 3, 52.0), (4, "local", 3, 202.0), (4, "snapshot", 3, 62.0)]
    by_clients = {
        (c["matrix"]["workload.driverOptions.read_concern"], tuple(c["clients"])): c["medianChangePercent"]
        for c in as_json(sweep.comparisons(table))
        if "axis" not in c
    }
    assert by_clients == {
        ("local", (2, 4)): pytest.approx(98.04, abs=0.01),
        ("snapshot", (2, 4)): pytest.approx(19.23, abs=0.01),
    }
    # and the axis itself: snapshot against local (the first value), at each client count
    by_axis = [c for c in as_json(sweep.comparisons(table)) if "axis" in c]
    assert [(c["clients"], c["axis"], c["values"], c["pValue"]) for c in by_axis] == [
        ([2, 2], "workload.driverOptions.read_concern", ["local", "snapshot"], pytest.approx(0.1)),
        ([4, 4], "workload.driverOptions.read_concern", ["local", "snapshot"], pytest.approx(0.1)),
    ]
    assert [c["medianChangePercent"] for c in by_axis] == [
        pytest.approx(-49.02, abs=0.01),
        pytest.approx(-69.31, abs=0.01),
    ]
    assert all("matrix" not in c for c in by_axis)  # no other axis to hold alike


def test_a_matrix_comparison_holds_the_other_axes_alike():
    from tpcc_operator import sweep

    spec = RunSpec.parse(
        {
            "database": {"type": "mongodb"},
            "sweep": {
                "clients": [2],
                "repetitions": 2,
                "matrix": [
                    {"field": "workload.driverOptions.read_concern", "values": ["majority", "snapshot"]},
                    {"field": "workload.driverOptions.causal", "values": ["true", "false"]},
                ],
            },
        }
    )
    cells = sweep_layout.sweep_cells(spec)
    table = sweep.initial(cells, sweep_layout.sweep_plan(spec, cells))
    for i, c in enumerate(cells):
        values = dict(c.matrix)
        tpmc = (100.0 if values["workload.driverOptions.read_concern"] == "majority" else 200.0) * (
            1 if values["workload.driverOptions.causal"] == "true" else 3
        )
        table = sweep.with_cell(table, i, state="Succeeded", tpm_c=tpmc + c.repetition)
    rows = {
        (c["axis"], tuple(sorted(c["matrix"].items()))): c["medianChangePercent"]
        for c in as_json(sweep.comparisons(table))
        if "axis" in c
    }
    concern, causal = "workload.driverOptions.read_concern", "workload.driverOptions.causal"
    assert rows == {
        (concern, ((causal, "true"),)): pytest.approx(98.52, abs=0.01),  # 201.5 / 101.5
        (concern, ((causal, "false"),)): pytest.approx(99.5, abs=0.01),  # 601.5 / 301.5
        (causal, ((concern, "majority"),)): pytest.approx(197.04, abs=0.01),  # 301.5 / 101.5
        (causal, ((concern, "snapshot"),)): pytest.approx(198.51, abs=0.01),
    }  # 601.5 / 201.5
