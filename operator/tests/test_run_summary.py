"""hack/k8s/run_summary.py, the summary hack/demo.sh prints, against the statuses the operator
writes now: a real e2e run's (results without efficiency: no think time), a run with faults, and
runs that failed before and after they measured."""

from __future__ import annotations

import copy
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "hack" / "k8s" / "run_summary.py"
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "gitops"
_spec = importlib.util.spec_from_file_location("run_summary", SCRIPT)
run_summary = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(run_summary)


def fixture(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text())


def test_a_real_succeeded_run_prints_throughput_mix_percentiles_and_verdicts():
    run = fixture("e2e/succeeded-voltdb-e2e.json")
    lines, code = run_summary.summary(run)
    text = "\n".join(lines)
    assert code == 0 and "efficiency" not in run["status"]["results"]
    assert lines[0] == "BenchmarkRun voltdb-e2e: Succeeded"
    assert "tpmC 42132 over 20 s from 2 runner pods; committed 31372, rollbacks 132, errors 0" in text
    assert "efficiency n/a (no keying/think times" in text
    new_order = next(line for line in lines if line.strip().startswith("NEW_ORDER"))
    assert new_order.split()[:3] == ["NEW_ORDER", "14176", "45.0%"]
    assert new_order.split()[3:] == ["1.21", "2.01", "4.01", "407.55"]  # p50 p90 p99 max
    assert "durability: 16906 acknowledged NewOrders, 16906 found, 0 lost" in text
    assert "consistency: all 12 conditions hold" in text and "verdict: Pass" in text


def test_a_real_ycsb_run_prints_operations_per_second_per_operation_and_its_writes_verified():
    """crds/samples/voltdb-ycsb.yaml as hack/demo.sh ran it (2026-11-27): YCSB's figures, not TPC-C's."""
    lines, code = run_summary.summary(fixture("e2e/succeeded-voltdb-ycsb.json"))
    text = "\n".join(lines)
    assert code == 0 and lines[0] == "BenchmarkRun voltdb-ycsb: Succeeded"
    assert lines[1] == "YCSB workload a: 26421.7 operations/s from 2 runner pods (client loop: pipelined, compiled)"
    read = next(line for line in lines if line.strip().startswith("READ"))
    assert read.split() == ["READ", "859674", "0", "0.24", "0.67", "1.13", "126.08"]  # p50 p95 p99 max
    assert "tpmC" not in text and "NewOrders" not in text
    assert "load: 10,000 rows in 1.4 s (7,267 rows/s)" in lines
    assert "durability: 10000 acknowledged writes (records inserted or updated), 10000 found, 0 lost" in text
    assert "  10000 records in the database (expected 10000)" in lines and "verdict: Pass" in text


def test_faults_are_listed_with_their_recovery_or_why_they_were_skipped():
    run = fixture("e2e/succeeded-voltdb-e2e.json")
    run["status"]["faults"] = [
        {
            "number": 1,
            "action": "kill-random-member",
            "method": "delete-pod",
            "state": "Recovered",
            "target": "voltdb-e2e-g1-2",
            "targetUID": "u1",
            "injectedTime": "2026-11-23T17:17:35Z",
            "recoveredTime": "2026-11-23T17:18:05Z",
            "recoverySeconds": 30.0,
        },
        {
            "number": 2,
            "action": "kill-primary",
            "method": "kill-process",
            "state": "Skipped",
            "message": "no Ready member to kill",
        },
    ]
    lines, _ = run_summary.summary(run)
    assert "fault 1 kill-random-member (delete-pod) voltdb-e2e-g1-2: Recovered, back after 30.0 s" in lines
    assert "fault 2 kill-primary (kill-process): Skipped: no Ready member to kill" in lines


def test_a_run_that_lost_orders_exits_1_naming_the_loss():
    lines, code = run_summary.summary(fixture("failed-durability.json"))
    text = "\n".join(lines)
    assert code == 1 and "Failed (DurabilityLost: 3 of 90 acknowledged NewOrders lost" in lines[0]
    assert "90 acknowledged NewOrders, 87 found, 3 lost, 1 of unknown outcome: NOT DURABLE" in text
    assert "  lost: order (w=1, d=3, o_id=3001)" in text


def test_a_run_that_failed_before_measuring_exits_1_with_its_reason_only():
    lines, code = run_summary.summary(fixture("e2e/failed-unreachable.json"))
    assert code == 1 and len(lines) == 1
    assert lines[0].startswith("BenchmarkRun unreachable: Failed (LoadFailed: load failed: pod unreachable-g1-loader")


def test_a_run_with_efficiency_and_no_status_yet():
    run = fixture("e2e/succeeded-voltdb-e2e.json")
    with_think_time = copy.deepcopy(run)
    with_think_time["status"]["results"]["efficiency"] = 97.3
    assert "efficiency 97.3%" in run_summary.summary(with_think_time)[0]
    assert run_summary.summary({"metadata": {"name": "new"}}) == (["BenchmarkRun new: no status yet"], 1)


def test_the_script_reads_kubectl_json_on_stdin():
    out = subprocess.run(
        [sys.executable, str(SCRIPT)],
        input=(FIXTURES / "e2e/succeeded-voltdb-e2e.json").read_text(),
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0 and out.stdout.startswith("BenchmarkRun voltdb-e2e: Succeeded\ntpmC 42132")


def test_acid_tests_are_counted_and_the_failed_ones_named():
    from runner_docs import acid_report
    from tpcc_operator.results import acid_status

    run = fixture("e2e/succeeded-voltdb-e2e.json")
    run["status"]["acid"] = acid_status(acid_report(not_applicable={"consistency": "no snapshot read"})).to_json()
    text = "\n".join(run_summary.summary(run)[0])
    assert "ACID tests: 10 passed, 1 not-applicable" in text and "consistency not-applicable: no snapshot" in text
    run["status"]["acid"] = acid_status(acid_report(failed={"isolation1": "dirty read of O_ID 3001"})).to_json()
    text = "\n".join(run_summary.summary(run)[0])
    assert "ACID tests: 10 passed, 1 failed: FAILED" in text and "isolation1 failed: dirty read of O_ID 3001" in text


def test_a_saturation_search_lists_its_steps_and_where_it_stopped():
    run = {
        "metadata": {"name": "search"},
        "status": {
            "phase": "Succeeded",
            "sweep": {
                "saturation": [
                    {
                        "warehouses": 1,
                        "metric": "tpmC",
                        "steps": [
                            {"clients": 1, "throughput": 500.0},
                            {"clients": 2, "throughput": 900.0, "gainPercent": 80.0},
                            {
                                "clients": 4,
                                "throughput": 2000.0,
                                "gainPercent": 122.2,
                                "limitsBroken": ["NEW_ORDER p90 6000 ms > 5000 ms"],
                            },
                        ],
                        "stopped": "LimitBroken",
                        "reason": "4 clients broke the p90 limits (NEW_ORDER p90 6000 ms > 5000 ms)",
                        "saturationClients": 2,
                        "throughput": 900.0,
                    }
                ]
            },
        },
    }
    lines, code = run_summary.summary(run)
    assert code == 0 and lines[1:] == [
        "saturation search, 1 warehouses (tpmC): 1 clients 500, 2 clients 900 (+80.0 %), "
        "4 clients 2000 (+122.2 %) over the p90 limits",
        "  stopped (LimitBroken: 4 clients broke the p90 limits (NEW_ORDER p90 6000 ms > 5000 ms)); "
        "saturation point: 2 clients, 900 tpmC",
    ]
