"""`promtool check metrics` (Prometheus's own linter of metric names, types, units and help) over
the exposition of both registries, each with every family it can expose filled in: the operator's
(a run with faults, a regression verdict and a sweep) and a runner's (TPC-C transactions, a load,
consistency, YCSB operations). A gauge named `_total`, a counter without it, a `_percent` (Prometheus
wants ratios 0..1, `_ratio`: Debian's promtool 2.42 does not check units, so the tests here do)
and the like fail here. promtool is Debian's (hack/prometheus.sh install), as for the rules' tests."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from prometheus_client import generate_latest

ROOT = Path(__file__).resolve().parents[2]


def families(exposition: bytes) -> set[str]:
    return {line.split()[2] for line in exposition.decode().splitlines() if line.startswith("# TYPE ")}


def promtool_check_metrics(exposition: bytes) -> subprocess.CompletedProcess:
    subprocess.run([str(ROOT / "hack" / "prometheus.sh"), "install"], check=True, timeout=600)
    return subprocess.run(
        [shutil.which("promtool") or "promtool", "check", "metrics"],
        input=exposition,
        capture_output=True,
        timeout=60,
    )


def operator_exposition() -> bytes:
    from tpcc_operator.metrics import OperatorMetrics
    from tpcc_operator.runspec import RunSpec
    from tpcc_operator.runstatus import Results

    m = OperatorMetrics()
    # the typed status parts the operator reads back whole (runstatus), the least each holds
    results = Results(
        tpm_c=812.5,
        measured_seconds=60.0,
        start="2026-11-28T10:00:00Z",
        end="2026-11-28T10:01:00Z",
        runner_pods=1,
        committed=1800,
        retries=0,
        aborts=8,
        errors=0,
        unknown=0,
        transactions={},
        pods=(),
    )
    status = {
        "phase": "Succeeded",
        "results": results.to_json(),
        "consistency": {"passed": True, "violated": [], "conditions": []},
        "durability": {"lost": 0},
        "faults": [{"number": 1, "action": "kill-node", "state": "Recovered", "recoverySeconds": 14.5}],
        "verdict": "Regressed",
        "regression": {"metrics": [{"name": "tpmC", "deltaPercent": -31.5}]},
        "sweep": {
            "current": 0,
            "cells": [{"warehouses": 1, "clients": 2, "repetition": 1, "state": "Succeeded", "tpmC": 700.0}],
            "total": 1,
            "progress": "1/1",
            "succeeded": 1,
            "failed": 0,
            "regressed": 0,
        },
    }
    m.observe("ns", "r", RunSpec.parse({"database": {"type": "voltdb"}, "baselineTpmC": 1000.0}), status)
    m.reconcile_errors.labels("ns", "r").inc()
    return generate_latest(m.registry)


def runner_exposition() -> bytes:
    from tpcc_contract.ycsb.measurements import OK, Measurements
    from tpcc_runner.metrics import RunnerMetrics

    m = RunnerMetrics()
    m.info.labels("voltdb", "run", "1", "4", "0/1", "test").set(1)
    m.load_units_total.set(10)
    m.load_units_done.set(3)
    m.load_rows.labels("stock").inc(1000)
    m.consistency.labels("1").set(1)
    m.reconnects.inc()
    measured = Measurements()
    measured.measure("READ", OK, 0.001)
    m.ycsb.source = lambda: [measured]
    return generate_latest(m.registry)


def test_promtool_finds_nothing_to_fix_in_the_operators_metrics():
    exposition = operator_exposition()
    assert (
        b"tpcc_operator_fault_injections{" in exposition and b"tpcc_operator_run_regression_delta_ratio{" in exposition
    )
    assert [f for f in families(exposition) if f.endswith("_percent")] == []  # a ratio 0..1, `_ratio`
    done = promtool_check_metrics(exposition)
    assert done.returncode == 0 and not done.stdout + done.stderr, (done.stdout + done.stderr).decode()


def test_promtool_finds_nothing_to_fix_in_the_runners_metrics():
    exposition = runner_exposition()
    assert b"tpcc_load_units_planned 10.0" in exposition and b"tpcc_ycsb_operations_total{" in exposition
    assert [f for f in families(exposition) if f.endswith("_percent")] == []  # a ratio 0..1, `_ratio`
    done = promtool_check_metrics(exposition)
    assert done.returncode == 0 and not done.stdout + done.stderr, (done.stdout + done.stderr).decode()


def test_promtool_would_flag_the_old_names():
    """The check has teeth: a gauge named `_total`, as two were before the renames, fails it."""
    old = (
        b"# HELP tpcc_load_units_total Load units to load\n# TYPE tpcc_load_units_total gauge\n"
        b"tpcc_load_units_total 10.0\n"
        b"# HELP tpcc_operator_fault_injections_total Kills\n# TYPE tpcc_operator_fault_injections_total gauge\n"
        b'tpcc_operator_fault_injections_total{action="kill-node"} 2.0\n'
    )
    done = promtool_check_metrics(old)
    said = (done.stdout + done.stderr).decode()
    assert "tpcc_load_units_total" in said and "tpcc_operator_fault_injections_total" in said, said
