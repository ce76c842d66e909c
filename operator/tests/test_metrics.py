"""Operator metrics follow the run's status: phase series move, results appear, deletion clears."""

from prometheus_client import generate_latest
from runner_docs import results_status
from status_parts import sweep_status
from tpcc_operator.metrics import OperatorMetrics
from tpcc_operator.runspec import RunSpec

# status.consistency of a check whose report listed no conditions
CONSISTENT = {"passed": True, "violated": [], "conditions": []}
SPEC = RunSpec.parse({"database": {"type": "voltdb"}, "baselineTpmC": 1000.0})


def sample(m: OperatorMetrics, name: str, **labels) -> float | None:
    return m.registry.get_sample_value(name, labels)


def test_phase_series_moves_with_the_run():
    m = OperatorMetrics()
    m.observe("ns", "r", SPEC, {"phase": "Loading"})
    assert sample(m, "tpcc_operator_runs", namespace="ns", run="r", db="voltdb", phase="Loading") == 1
    m.observe("ns", "r", SPEC, {"phase": "Running"})
    assert sample(m, "tpcc_operator_runs", namespace="ns", run="r", db="voltdb", phase="Loading") is None
    assert sample(m, "tpcc_operator_runs", namespace="ns", run="r", db="voltdb", phase="Running") == 1
    assert sample(m, "tpcc_operator_run_failed", namespace="ns", run="r", db="voltdb") is None
    assert sample(m, "tpcc_operator_run_baseline_tpmc", namespace="ns", run="r", db="voltdb") == 1000.0


def test_final_results_and_verdicts():
    m = OperatorMetrics()
    m.observe("ns", "r", SPEC, {"phase": "Succeeded", "results": results_status(812.5), "consistency": CONSISTENT})
    labels = dict(namespace="ns", run="r", db="voltdb")
    assert sample(m, "tpcc_operator_run_tpmc", **labels) == 812.5
    assert sample(m, "tpcc_operator_run_failed", **labels) == 0
    assert sample(m, "tpcc_operator_run_consistency_passed", **labels) == 1
    m.observe("ns", "f", SPEC, {"phase": "Failed", "consistency": {**CONSISTENT, "passed": False, "violated": [3]}})
    assert sample(m, "tpcc_operator_run_failed", namespace="ns", run="f", db="voltdb") == 1
    assert sample(m, "tpcc_operator_run_consistency_passed", namespace="ns", run="f", db="voltdb") == 0


def test_a_new_generation_clears_the_old_results():
    m = OperatorMetrics()
    m.observe("ns", "r", SPEC, {"phase": "Succeeded", "results": results_status(5.0)})
    m.observe("ns", "r", SPEC, {"phase": "Pending"})
    assert sample(m, "tpcc_operator_run_tpmc", namespace="ns", run="r", db="voltdb") is None
    assert sample(m, "tpcc_operator_run_failed", namespace="ns", run="r", db="voltdb") is None


def test_forget_removes_every_series_of_the_run():
    m = OperatorMetrics()
    m.observe("ns", "r", SPEC, {"phase": "Succeeded", "results": results_status(5.0)})
    m.reconcile_errors.labels("ns", "r").inc()
    m.forget("ns", "r")
    lines = [ln for ln in generate_latest(m.registry).decode().splitlines() if 'run="r"' in ln]
    assert lines and all(ln.startswith("tpcc_operator_reconcile_errors") for ln in lines)  # counters stay


def test_faults_and_durability_follow_the_status():
    m = OperatorMetrics()
    labels = dict(namespace="ns", run="r", db="voltdb")
    faults = [
        {"number": 1, "action": "kill-node", "state": "Recovered", "recoverySeconds": 14.5},
        {"number": 2, "action": "kill-node", "state": "Injected"},
        {"number": 3, "action": "kill-random-member", "state": "Skipped"},
        {"number": 4, "action": "pause", "state": "Healed"},  # resumed, not yet recovered: injected
    ]
    m.observe("ns", "r", SPEC, {"phase": "Running", "faults": faults})
    assert sample(m, "tpcc_operator_fault_injections", **labels, action="kill-node") == 2
    assert sample(m, "tpcc_operator_fault_injections", **labels, action="pause") == 1
    assert sample(m, "tpcc_operator_fault_injections", **labels, action="kill-random-member") is None
    assert sample(m, "tpcc_operator_fault_recovery_seconds", **labels) == 14.5
    assert sample(m, "tpcc_operator_run_durability_lost", **labels) is None
    m.observe("ns", "r", SPEC, {"phase": "Failed", "faults": faults, "durability": {"lost": 3}})
    assert sample(m, "tpcc_operator_run_durability_lost", **labels) == 3
    m.observe("ns", "r", SPEC, {"phase": "Pending"})  # a new generation
    assert sample(m, "tpcc_operator_fault_injections", **labels, action="kill-node") is None
    assert sample(m, "tpcc_operator_fault_recovery_seconds", **labels) is None


def test_the_regression_verdict_and_its_deltas():
    m = OperatorMetrics()
    labels = dict(namespace="ns", run="r", db="voltdb")
    regressed = {
        "phase": "Succeeded",
        "verdict": "Regressed",
        "regression": {
            "metrics": [{"name": "tpmC", "deltaPercent": -31.5}, {"name": "p99Ms/NEW_ORDER", "outcome": "NoData"}]
        },
    }
    m.observe("ns", "r", SPEC, regressed)
    assert sample(m, "tpcc_operator_run_verdict", verdict="Regressed", **labels) == 1
    assert sample(m, "tpcc_operator_run_regression_delta_ratio", metric="tpmC", **labels) == -0.315
    assert sample(m, "tpcc_operator_run_regression_delta_ratio", metric="p99Ms/NEW_ORDER", **labels) is None
    m.observe("ns", "r", SPEC, {"phase": "Pending"})  # a re-run: the old verdict goes
    assert sample(m, "tpcc_operator_run_verdict", verdict="Regressed", **labels) is None
    assert sample(m, "tpcc_operator_run_regression_delta_ratio", metric="tpmC", **labels) is None
    m.observe("ns", "r", SPEC, {**regressed, "verdict": "Pass"})
    assert sample(m, "tpcc_operator_run_verdict", verdict="Pass", **labels) == 1
    m.forget("ns", "r")
    assert sample(m, "tpcc_operator_run_verdict", verdict="Pass", **labels) is None
    assert sample(m, "tpcc_operator_run_regression_delta_ratio", metric="tpmC", **labels) is None


def test_a_sweeps_measured_cells_are_its_curves():
    m = OperatorMetrics()
    cells = [
        {"warehouses": 2, "clients": 4, "repetition": 1, "state": "Succeeded", "tpmC": 900.0},
        {"warehouses": 2, "clients": 8, "repetition": 1, "state": "Running"},
    ]
    m.observe("ns", "s", SPEC, {"phase": "Running", "sweep": sweep_status(cells)})
    cell = dict(namespace="ns", run="s", db="voltdb", warehouses="2", matrix="", repetition="1")
    assert sample(m, "tpcc_operator_sweep_cell_tpmc", clients="4", **cell) == 900.0
    assert sample(m, "tpcc_operator_sweep_cell_tpmc", clients="8", **cell) is None  # not measured yet
    # a matrix sweep's cells of one (warehouses, clients, repetition) are series of their own
    two = [
        {**cells[0], "matrix": {"workload.pacing": p, "workload.remotePercent.payments": "0"}, "tpmC": t}
        for p, t in (("none", 900.0), ("spec", 25.0))
    ]
    m.observe("ns", "m", SPEC, {"phase": "Running", "sweep": sweep_status(two)})
    paced = dict(cell, run="m", clients="4", matrix="workload.pacing=spec,workload.remotePercent.payments=0")
    assert sample(m, "tpcc_operator_sweep_cell_tpmc", **paced) == 25.0
    m.observe(
        "ns",
        "s",
        SPEC,
        {"phase": "Pending", "sweep": sweep_status([{**c, "state": "Pending", "tpmC": None} for c in cells])},
    )
    assert sample(m, "tpcc_operator_sweep_cell_tpmc", clients="4", **cell) is None  # a new generation
    m.observe("ns", "s", SPEC, {"phase": "Running", "sweep": sweep_status(cells)})
    m.forget("ns", "s")
    assert sample(m, "tpcc_operator_sweep_cell_tpmc", clients="4", **cell) is None
