"""workload.kind ycsb: the same lifecycle as TPC-C (deploy, load Job, runner pods behind the
barrier, results merged into status, BenchmarkResult) with `tpcc ycsb` as the runner's CLI."""

from __future__ import annotations

import pytest
from runner_docs import ycsb_status
from test_phases import kinds, the
from test_plan import RUN, SETTINGS
from tpcc_operator import plan, runner_jobs
from tpcc_operator.stages.actions import CreateVerifyJob, KillPods, WriteResult
from tpcc_operator.workloads.ycsb import YCSB_WORKLOAD


def args_of(job: dict) -> list[str]:
    return job["spec"]["template"]["spec"]["containers"][0]["args"]


def flag(args: list[str], name: str) -> str:
    return args[args.index(name) + 1]


def properties(args: list[str]) -> dict[str, str]:
    return dict(args[i + 1].split("=", 1) for i, a in enumerate(args) if a == "-p")


def test_the_load_job_loads_the_records_with_the_load_workers(spec_of):
    spec = spec_of(
        {
            "database": {"type": "mongodb", "deploy": {"replicas": 3}},
            "workload": {
                "kind": "ycsb",
                "loadWorkers": 6,
                "ycsb": {"workload": "b", "recordCount": 50000, "batchSize": 100},
            },
        }
    )
    args = args_of(runner_jobs.load_job(RUN, spec, SETTINGS))
    assert args[:4] == ["ycsb", "load", "--workload", "b"] and flag(args, "--threads") == "6"
    assert properties(args) == {"recordcount": "50000", "batchsize": "100", "operationspertransaction": "1"}
    assert "--reset" in args and "--warehouses" not in args  # a deployed database: a fresh load


def test_the_run_job_is_the_barrier_job_with_each_pods_shard(spec_of):
    spec = spec_of(
        {
            "database": {"type": "voltdb"},
            "workload": {
                "kind": "ycsb",
                "clients": 8,
                "durationSeconds": 60,
                "warmupSeconds": 5,
                "ycsb": {
                    "workload": "d",
                    "operationsPerTransaction": 100,
                    "targetOpsPerSecond": 1000,
                    "properties": {"requestdistribution": "uniform", "fieldcount": "4"},
                },
            },
            "runners": {"parallelism": 2},
        }
    )
    job = runner_jobs.run_job(RUN, spec, SETTINGS)
    args = args_of(job)
    assert args[:4] == ["ycsb", "run", "--workload", "d"]
    assert properties(args) == {
        "recordcount": "1000",
        "batchsize": "1",
        "operationspertransaction": "100",
        "operationcount": "0",
        "requestdistribution": "uniform",
        "fieldcount": "4",
    }
    assert flag(args, "--total-threads") == "8" and flag(args, "--duration") == "65"
    assert flag(args, "--target") == "500.0"  # the whole run's target, shared by the two pods
    assert flag(args, "--shard") == "$(JOB_COMPLETION_INDEX)/2"
    assert flag(args, "--start-configmap") == "perf/bench-g3-start"
    assert flag(args, "--results-configmap") == "perf/bench-g3-results-$(JOB_COMPLETION_INDEX)"
    assert job["spec"]["completionMode"] == "Indexed" and job["spec"]["parallelism"] == 2
    pod = job["spec"]["template"]["spec"]["containers"][0]
    assert pod["readinessProbe"]["httpGet"]["path"] == "/ready" and pod["resources"]["limits"]
    # every acknowledged write in the pod's ledger, held for the verifier as tpcc run holds its own
    assert flag(args, "--hold-ledger") == "perf/bench-g3-start" and flag(args, "--ledger") == "/tmp/ledger.log"
    assert {"name": "ledger", "containerPort": plan.LEDGER_PORT, "protocol": "TCP"} in pod["ports"]


def test_the_verifier_checks_the_pods_ledgers_with_the_workloads_properties(spec_of):
    spec = spec_of(
        {"database": {"type": "voltdb"}, "workload": {"kind": "ycsb", "ycsb": {"workload": "d", "recordCount": 5000}}}
    )
    args = args_of(runner_jobs.verifier_job(RUN, spec, SETTINGS, {0: "10.0.0.7", 1: "10.0.0.8"}))
    assert args[:4] == ["ycsb", "verify", "--workload", "d"] and properties(args)["recordcount"] == "5000"
    assert [args[i + 1] for i, a in enumerate(args) if a == "--ledger"] == [
        f"http://10.0.0.7:{plan.LEDGER_PORT}/ledger",
        f"http://10.0.0.8:{plan.LEDGER_PORT}/ledger",
    ]
    assert flag(args, "--results-configmap") == "perf/bench-g3-check"


def test_a_spec_property_overrides_what_the_operator_passes(spec_of):
    spec = spec_of(
        {
            "database": {"type": "voltdb"},
            "workload": {"kind": "ycsb", "ycsb": {"properties": {"operationcount": "5000"}}},
        }
    )
    assert properties(args_of(runner_jobs.run_job(RUN, spec, SETTINGS)))["operationcount"] == "5000"


def test_kind_ycsb_without_its_block_runs_the_crds_defaults(spec_of):
    spec = spec_of({"database": {"type": "voltdb"}, "workload": {"kind": "ycsb"}})
    assert spec.workload.ycsb is None and spec.workload.ycsb_or_defaults.workload == "a"
    assert args_of(runner_jobs.load_job(RUN, spec, SETTINGS))[:4] == ["ycsb", "load", "--workload", "a"]


YCSB_VERIFIED = {
    "durable": True,
    "records": 1012,
    "expected_records": [1010, 1013],
    "acknowledged_inserts": 10,
    "acknowledged_updates": 140,
    "unknown_outcome": {"inserts": 3, "updates": 1},
    "lost": 0,
    "lost_examples": [],
    "ledgers": 2,
}


def test_a_ycsb_run_succeeds_with_its_pods_results_merged_and_its_writes_verified(document_of):
    from runner_docs import ycsb_pod_results
    from test_phases import Driver
    from tpcc_operator.stages.machine import JobState, World

    d = Driver(
        document_of(
            {
                "database": {"type": "voltdb"},
                "cleanup": {"policy": "Never"},
                "workload": {"kind": "ycsb", "clients": 4},
                "runners": {"parallelism": 2},
            }
        )
    )
    d.status = {"phase": "Running", "observedGeneration": 2, "startAt": "2025-01-01T00:00:00Z"}
    docs = {0: ycsb_pod_results(0, 2, 900, 100, 0.002), 1: ycsb_pod_results(1, 2, 950, 50, 0.004)}
    d.tick(World(runner=JobState(True), results={0: docs[0]}))
    assert d.phase == "Running"  # one pod's results: wait for the other
    d.tick(World(runner=JobState(True), results=docs))
    assert d.phase == "Verifying"  # the pods hold their ledgers for the verifier
    ycsb = d.status["ycsb"]
    assert ycsb["opsPerSecond"] == 100.0 and ycsb["runnerPods"] == 2  # 2,000 operations in 20 s
    assert ycsb["operations"]["READ"]["count"] == 1850 and ycsb["operations"]["UPDATE"]["errors"] == 0
    # percentiles of both pods' operations together (from the added histograms), not averaged
    update = ycsb["operations"]["UPDATE"]["latencyMs"]  # 100 at 2 ms and 50 at 4 ms
    assert update["p50"] == pytest.approx(2.0, abs=0.01) and update["p99"] == pytest.approx(4.0, abs=0.01)
    assert "YCSB workload a, 100.0 operations/s from 2 pods" in d.status["message"]
    step = d.tick(World(runner_pod_ips={0: "10.0.0.7", 1: "10.0.0.8"}, database_ready=3))
    assert step.actions == [CreateVerifyJob({0: "10.0.0.7", 1: "10.0.0.8"})]
    d.tick(World(verifier=JobState(True, True), durability_report=YCSB_VERIFIED))
    assert d.phase == "Succeeded" and "consistency" not in d.status  # no consistency check: TPC-C's
    assert d.status["durability"] | {} == {
        "acknowledged": 150,
        "found": 150,
        "lost": 0,
        "unknownOutcome": 4,
        "ledgers": 2,
        "records": 1012,
        "expectedRecords": "1010-1013",
        "lostExamples": [],
        "databaseEmpty": False,
        "durable": True,
    }
    assert d.condition("Durable")["message"].startswith("all 150 acknowledged YCSB writes found in 2 ledgers")
    assert d.status["message"].endswith("no acknowledged write lost")
    step = d.tick(World(runner=JobState(True, True), results=docs))
    result = the(step, WriteResult).result
    assert result.spec.ops_per_second == 100.0
    assert result.full_results["results"]["runnerPods"] == 2  # the merged document, histograms' figures


def test_the_stages_name_the_records_a_ycsb_run_loads_not_warehouses(document_of):
    from test_phases import Driver
    from tpcc_operator.stages.machine import JobState, World

    d = Driver(
        document_of(
            {
                "database": {"type": "voltdb"},
                "workload": {"kind": "ycsb", "clients": 8, "ycsb": {"workload": "a", "recordCount": 10000}},
            }
        )
    )
    assert d.tick().events[0].message.endswith("voltdb, 10,000 YCSB records, 8 clients on 1 runner pods")
    d.tick(), d.tick()
    d.tick(World(database_ready=1))
    assert d.phase == "Loading" and d.status["message"] == "database ready; loading 10,000 YCSB records"
    d.tick(World(load=JobState(exists=True)))
    assert "waiting for load job bench-g2-loader to load 10,000 YCSB records (timeout" in d.status["message"]
    d.tick(World(load=JobState(True, True), load_report={"rows": 10000, "seconds": 1.4, "rows_per_second": 7267.4}))
    assert d.condition("Loaded")["message"] == "10,000 YCSB records loaded in 1.4 s (7,267 rows/s)"


def test_pods_of_different_ycsb_runs_fail_the_run(document_of):
    from runner_docs import ycsb_pod_results
    from test_phases import Driver
    from tpcc_operator.stages.machine import JobState, World

    d = Driver(
        document_of(
            {"database": {"type": "voltdb"}, "workload": {"kind": "ycsb", "clients": 4}, "runners": {"parallelism": 2}}
        )
    )
    d.status = {"phase": "Running", "observedGeneration": 2, "startAt": "2025-01-01T00:00:00Z"}
    other = ycsb_pod_results(1, 2, 10, 10, 0.001) | {"workload": "b"}
    d.tick(World(runner=JobState(True), results={0: ycsb_pod_results(0, 2, 10, 10, 0.001), 1: other}))
    assert (d.phase, d.status["reason"]) == ("Failed", "ResultsInconsistent")


def test_a_lost_ycsb_write_fails_the_run_with_the_record_count(document_of):
    from test_phases import Driver
    from tpcc_operator.stages.machine import JobState, World

    d = Driver(document_of({"database": {"type": "voltdb"}, "workload": {"kind": "ycsb"}}))
    d.status = {"phase": "Verifying", "observedGeneration": 2, "startAt": "2025-01-01T00:00:00Z"}
    lost = {
        **YCSB_VERIFIED,
        "durable": False,
        "records": 1009,
        "lost": 1,
        "lost_examples": ["insert of user6284781860667377211: no record"],
    }
    d.tick(World(verifier=JobState(True, False, True, "exit 1"), durability_report=lost))
    assert (d.phase, d.status["reason"]) == ("Failed", "DurabilityLost")
    assert d.status["message"] == (
        "1 of 150 acknowledged YCSB writes lost (1009 records, 1010-1013 expected), "
        "e.g. insert of user6284781860667377211: no record"
    )
    assert d.condition("Durable")["reason"] == "AcknowledgedWritesLost"


def test_a_ycsb_run_is_judged_on_its_operations_per_second_and_operation_p99(spec_of):
    from specs import regression_policy
    from tpcc_operator import history
    from tpcc_operator.regression import REGRESSED, Summary, judge

    spec = spec_of({"database": {"type": "voltdb"}, "workload": {"kind": "ycsb"}})

    def status(ops: float, read_p99: float, completed: str) -> dict:
        return {
            "phase": "Succeeded",
            "completionTime": completed,
            "durability": {"lost": 0, "durable": True},
            "ycsb": {
                **ycsb_status(ops),
                "operations": {
                    "READ": {"count": 900, "errors": 0, "latencyMs": {"p99": read_p99}},
                    "UPDATE": {"count": 100, "errors": 0, "latencyMs": {"p99": 9.0}},
                },
            },
        }

    # three earlier runs as their BenchmarkResults hold them, then one 20 % slower
    earlier = []
    for i, ops in enumerate((1000.0, 1010.0, 990.0)):
        st = {
            **status(ops, 2.0, f"2025-01-0{i + 1}T00:00:00Z"),
            "verdict": "Pass",
            "regression": {"comparisonHash": "c0ffee", "message": ""},
        }
        rec = history.record(RUN, spec, st, None, None, [])
        assert rec.spec.ops_per_second == ops and rec.spec.p99_ms == {"READ": 2.0, "UPDATE": 9.0}
        earlier.append(history.summary_of({"metadata": {"name": f"r{i}"}, "spec": rec.spec.to_json()}).summary)
    now = status(800.0, 2.1, "")
    run = Summary.of_status("now", "c0ffee", now, YCSB_WORKLOAD.figures(now))
    assert run.throughput_metric == "opsPerSecond" and earlier[0].throughput_metric == "opsPerSecond"
    verdict = judge(
        run, earlier, regression_policy(max_tpmc_drop_percent=10.0, max_p99_increase_percent={"READ": 50.0})
    )
    assert verdict.outcome == REGRESSED and verdict.message.startswith("Regressed: opsPerSecond -20.0% (limit 10%)")
    assert {m.name: m.outcome for m in verdict.metrics} == {"opsPerSecond": REGRESSED, "p99Ms/READ": "Pass"}


def test_a_ycsb_run_under_a_fault_is_verified_after_recovery_with_its_ledgers(document_of):
    """kill-node during a YCSB run: injected while its pods measure, the verifier waits until the
    node is back, then the YCSB ledger's verdict (unknown-outcome writes allowed) decides."""
    from runner_docs import ycsb_pod_results
    from test_faults import ALL_READY, Run, pods
    from tpcc_operator.stages.machine import JobState

    spec = document_of(
        {
            "database": {"type": "voltdb", "deploy": {"replicas": 3, "kSafety": 1}},
            "workload": {"kind": "ycsb", "clients": 4, "warmupSeconds": 10, "durationSeconds": 60},
            "runners": {"parallelism": 2},
            "faults": [{"action": "kill-node", "afterSeconds": 20, "podIndex": 1}],
        }
    )
    r = Run(spec)
    r.tick(30, ALL_READY)  # due at warmup + 20 s: chosen
    step = r.tick(31, ALL_READY)
    assert kinds(step.actions) == [KillPods] and the(step, KillPods).kills[0].pod == "bench-g2-1"
    down = [ALL_READY[0], ALL_READY[2]]
    docs = {0: ycsb_pod_results(0, 2, 900, 100, 0.002), 1: ycsb_pod_results(1, 2, 950, 50, 0.004)}
    r.tick(70, down, results=docs)  # both pods' windows over while the node is still down
    assert r.status["phase"] == "Verifying" and r.status["ycsb"]["opsPerSecond"] == 100.0
    ips = {0: "10.0.0.7", 1: "10.0.0.8"}
    step = r.tick(75, down, database_ready=2, runner_pod_ips=ips)
    assert CreateVerifyJob not in kinds(step.actions)  # the YCSB ledgers are read on a whole cluster
    back = ALL_READY[:1] + pods(("bench-g2-1", "b2", True)) + ALL_READY[2:]
    step = r.tick(80, back, database_ready=3, runner_pod_ips=ips)
    assert step.actions == [CreateVerifyJob(ips)] and r.faults[0]["state"] == "Recovered"
    assert r.faults[0]["recoverySeconds"] == 49.0
    # 3 inserts and 1 update of unknown outcome: 1012 records lie within 1010-1013
    r.tick(90, back, database_ready=3, verifier=JobState(True, True), durability_report=YCSB_VERIFIED)
    r.tick(91, back, database_ready=3, verifier=JobState(True, True), durability_report=YCSB_VERIFIED, results=docs)
    assert r.status["phase"] == "Succeeded", r.status["message"]
    assert r.status["durability"]["unknownOutcome"] == 4 and r.status["durability"]["durable"]
    assert [e.reason for e in r.events if e.reason.startswith("Fault")] == ["FaultInjected", "FaultRecovered"]


def test_a_ycsb_write_lost_to_a_fault_fails_the_run(document_of):
    from test_faults import ALL_READY, Run
    from tpcc_operator.stages.machine import JobState

    spec = document_of(
        {
            "database": {"type": "voltdb", "deploy": {"replicas": 3, "kSafety": 1}},
            "workload": {"kind": "ycsb"},
            "faults": [{"action": "kill-node", "podIndex": 1}],
        }
    )
    r = Run(spec)
    r.status = {
        **r.status,
        "phase": "Verifying",
        "faults": [{"number": 1, "action": "kill-node", "state": "Recovered", "target": "bench-g2-1"}],
    }
    beyond = {**YCSB_VERIFIED, "durable": False, "records": 1014, "lost": 0}  # more than any write explains
    r.tick(200, ALL_READY, database_ready=3, verifier=JobState(True, False, True, "exit 1"), durability_report=beyond)
    assert (r.status["phase"], r.status["reason"]) == ("Failed", "DurabilityLost")
    assert r.status["message"] == (
        "the record count is off: 1014 records, 1010-1013 expected, all 150 acknowledged YCSB writes found"
    )


def test_a_database_back_empty_after_a_fault_fails_the_run_saying_so(document_of):
    """kill-all with allowDataLoss on a VoltDB without a command log: `tpcc ycsb verify` finds no
    table (test_ycsb_failover_voltdb.py shows it on a real node) and every write lost."""
    from test_faults import ALL_READY, Run
    from tpcc_operator.stages.machine import JobState

    spec = document_of(
        {
            "database": {"type": "voltdb", "deploy": {"replicas": 3, "kSafety": 1}},
            "workload": {"kind": "ycsb"},
            "faults": [{"action": "kill-all", "allowDataLoss": True}],
        }
    )
    r = Run(spec)
    r.status = {
        **r.status,
        "phase": "Verifying",
        "faults": [{"number": 1, "action": "kill-all", "state": "Recovered", "target": "bench-g2-0"}],
    }
    empty = {
        **YCSB_VERIFIED,
        "durable": False,
        "records": 0,
        "lost": 150,
        "lost_examples": ["insert of user6284781860667377211: no table"],
    }
    r.tick(200, ALL_READY, database_ready=3, verifier=JobState(True, False, True, "exit 1"), durability_report=empty)
    assert (r.status["phase"], r.status["reason"]) == ("Failed", "DurabilityLost")
    assert r.status["durability"]["databaseEmpty"] and r.status["message"] == (
        "150 of 150 acknowledged YCSB writes lost (0 records, 1010-1013 expected), e.g. insert of "
        "user6284781860667377211: no table; the database came back without its YCSB load"
    )
