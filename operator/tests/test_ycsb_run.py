"""workload.kind ycsb: the same lifecycle as TPC-C (deploy, load Job, runner pods behind the
barrier, results merged into status, BenchmarkResult) with `tpcc ycsb` as the runner's CLI."""
from __future__ import annotations

import pytest
from test_plan import RUN, SETTINGS
from tpcc_operator import plan


def args_of(job: dict) -> list[str]:
    return job["spec"]["template"]["spec"]["containers"][0]["args"]


def flag(args: list[str], name: str) -> str:
    return args[args.index(name) + 1]


def properties(args: list[str]) -> dict[str, str]:
    return dict(args[i + 1].split("=", 1) for i, a in enumerate(args) if a == "-p")


def test_the_load_job_loads_the_records_with_the_load_workers(spec_of):
    spec = spec_of({"database": {"type": "mongodb", "deploy": {"replicas": 3}},
                    "workload": {"kind": "ycsb", "loadWorkers": 6,
                                 "ycsb": {"workload": "b", "recordCount": 50000, "batchSize": 100}}})
    args = args_of(plan.load_job(RUN, spec, SETTINGS))
    assert args[:4] == ["ycsb", "load", "--workload", "b"] and flag(args, "--threads") == "6"
    assert properties(args) == {"recordcount": "50000", "batchsize": "100", "operationspertransaction": "1"}
    assert "--reset" in args and "--warehouses" not in args  # a deployed database: a fresh load


def test_the_run_job_is_the_barrier_job_with_each_pods_shard(spec_of):
    spec = spec_of({"database": {"type": "voltdb"},
                    "workload": {"kind": "ycsb", "clients": 8, "durationSeconds": 60, "warmupSeconds": 5,
                                 "ycsb": {"workload": "d", "operationsPerTransaction": 100,
                                          "targetOpsPerSecond": 1000,
                                          "properties": {"requestdistribution": "uniform", "fieldcount": "4"}}},
                    "runners": {"parallelism": 2}})
    job = plan.run_job(RUN, spec, SETTINGS)
    args = args_of(job)
    assert args[:4] == ["ycsb", "run", "--workload", "d"]
    assert properties(args) == {"recordcount": "1000", "batchsize": "1", "operationspertransaction": "100",
                                "operationcount": "0", "requestdistribution": "uniform", "fieldcount": "4"}
    assert flag(args, "--threads") == "4" and flag(args, "--duration") == "65"
    assert flag(args, "--target") == "500.0"  # the whole run's target, shared by the two pods
    assert flag(args, "--shard") == "$(JOB_COMPLETION_INDEX)/2"
    assert flag(args, "--start-configmap") == "perf/bench-g3-start"
    assert flag(args, "--results-configmap") == "perf/bench-g3-results-$(JOB_COMPLETION_INDEX)"
    assert job["spec"]["completionMode"] == "Indexed" and job["spec"]["parallelism"] == 2
    pod = job["spec"]["template"]["spec"]["containers"][0]
    assert pod["readinessProbe"]["httpGet"]["path"] == "/ready" and pod["resources"]["limits"]


def test_a_spec_property_overrides_what_the_operator_passes(spec_of):
    spec = spec_of({"database": {"type": "voltdb"},
                    "workload": {"kind": "ycsb", "ycsb": {"properties": {"operationcount": "5000"}}}})
    assert properties(args_of(plan.run_job(RUN, spec, SETTINGS)))["operationcount"] == "5000"


def test_kind_ycsb_without_its_block_runs_the_crds_defaults(spec_of):
    spec = spec_of({"database": {"type": "voltdb"}, "workload": {"kind": "ycsb"}})
    assert spec.workload.ycsb is None and spec.workload.ycsb_or_defaults.workload == "a"
    assert args_of(plan.load_job(RUN, spec, SETTINGS))[:4] == ["ycsb", "load", "--workload", "a"]


def test_a_ycsb_run_succeeds_with_its_pods_results_merged(document_of):
    from runner_docs import ycsb_pod_results
    from test_phases import Driver
    from tpcc_operator.phases import Action, JobState, World
    d = Driver(document_of({"database": {"type": "voltdb"}, "cleanup": {"policy": "Never"},
                            "workload": {"kind": "ycsb", "clients": 4}, "runners": {"parallelism": 2}}))
    d.status = {"phase": "Running", "observedGeneration": 2, "startAt": "2025-01-01T00:00:00Z"}
    docs = {0: ycsb_pod_results(0, 2, 900, 100, .002), 1: ycsb_pod_results(1, 2, 950, 50, .004)}
    d.tick(World(runner=JobState(True), results={0: docs[0]}))
    assert d.phase == "Running"  # one pod's results: wait for the other
    d.tick(World(runner=JobState(True), results=docs))
    assert d.phase == "Succeeded" and "durability" not in d.status  # no ledger, no check: TPC-C's
    ycsb = d.status["ycsb"]
    assert ycsb["opsPerSecond"] == 100.0 and ycsb["runnerPods"] == 2  # 2,000 operations in 20 s
    assert ycsb["operations"]["READ"]["count"] == 1850 and ycsb["operations"]["UPDATE"]["errors"] == 0
    # percentiles of both pods' operations together (from the added histograms), not averaged
    update = ycsb["operations"]["UPDATE"]["latencyMs"]  # 100 at 2 ms and 50 at 4 ms
    assert update["p50"] == pytest.approx(2.0, abs=0.01) and update["p99"] == pytest.approx(4.0, abs=0.01)
    assert "YCSB workload a, 100.0 operations/s from 2 pods" in d.status["message"]
    step = d.tick(World(runner=JobState(True, True), results=docs))
    assert Action.WRITE_RESULT in step.actions and step.result.spec["opsPerSecond"] == 100.0
    assert step.result.full_results["results"]["runnerPods"] == 2  # the merged document, histograms' figures


def test_pods_of_different_ycsb_runs_fail_the_run(document_of):
    from runner_docs import ycsb_pod_results
    from test_phases import Driver
    from tpcc_operator.phases import JobState, World
    d = Driver(document_of({"database": {"type": "voltdb"}, "workload": {"kind": "ycsb", "clients": 4},
                            "runners": {"parallelism": 2}}))
    d.status = {"phase": "Running", "observedGeneration": 2, "startAt": "2025-01-01T00:00:00Z"}
    other = ycsb_pod_results(1, 2, 10, 10, .001) | {"workload": "b"}
    d.tick(World(runner=JobState(True), results={0: ycsb_pod_results(0, 2, 10, 10, .001), 1: other}))
    assert (d.phase, d.status["reason"]) == ("Failed", "ResultsInconsistent")
