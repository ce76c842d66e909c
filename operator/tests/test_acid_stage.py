"""spec.verify.acid: the ACID tests' Job after the consistency check, one verdict per test in
status.acid and the BenchmarkResult; a failed test fails the run with its evidence."""

from __future__ import annotations

import pytest
from runner_docs import acid_report, durability_report, pod_results
from test_phases import CHECK_OK, RUN, Driver, kinds
from test_plan import SETTINGS
from tpcc_operator import history, plan, runner_jobs
from tpcc_operator.runspec import RunSpec
from tpcc_operator.stages.actions import CreateAcidJob, WriteResult
from tpcc_operator.stages.machine import JobState, World


@pytest.fixture
def acid_run(document_of):
    return document_of(
        {"database": {"type": "voltdb"}, "cleanup": {"policy": "Never"}, "verify": {"acid": {"enabled": True}}}
    )


def verified(d: Driver) -> None:
    """From Running through durability and the consistency check, as the runner reports them."""
    d.status = {"phase": "Running", "observedGeneration": 2, "startAt": "x"}
    d.tick(World(runner=JobState(True, True), results={0: pod_results(0, 1, 5, 0.01)}))
    d.tick(World(verifier=JobState(True, True), durability_report=durability_report(10, ledgers=1)))
    d.tick(World(checker=JobState(True, True), check_report=CHECK_OK))


def test_the_acid_tests_run_after_the_check_and_pass_the_run(acid_run):
    d = Driver(acid_run)
    verified(d)
    assert d.phase == "Verifying" and "consistency" in d.status  # not Succeeded yet
    assert d.tick().actions == [CreateAcidJob()]
    assert d.tick(World(acid=JobState(True))).actions == []  # running
    assert "waiting for the ACID tests' job bench-g2-acid" in d.status["message"]
    d.tick(World(acid=JobState(True, True), acid_report=acid_report(not_applicable={"consistency": "no snapshot"})))
    assert d.phase == "Succeeded" and d.status["message"].endswith("ACID tests passed")
    acid = d.status["acid"]
    assert acid["passed"] and acid["counts"] == {"passed": 10, "failed": 0, "not-applicable": 1, "error": 0}
    assert {t["test"] for t in acid["tests"]} >= {"atomicity", "isolation9"} and acid["seed"] == 7
    assert d.condition("ACIDVerified")["status"] == "True"
    assert WriteResult in kinds(d.tick().actions)  # the verdict and the BenchmarkResult follow


def test_a_failed_acid_test_fails_the_run_with_its_evidence(acid_run):
    d = Driver(acid_run)
    verified(d)
    d.tick()
    # the Job exits 1 when a test failed, after writing acid.json
    d.tick(
        World(
            acid=JobState(True, False, True, "exit 1"),
            acid_report=acid_report(
                failed={"isolation3": "lost update: D_NEXT_O_ID rose by 1 for 2 committed NewOrders"}
            ),
        )
    )
    assert d.phase == "Failed" and d.status["reason"] == "ACIDTestFailed"
    assert "isolation3 failed: lost update" in d.status["message"] and not d.status["acid"]["passed"]
    assert d.condition("ACIDVerified")["status"] == "False"


def test_acid_tests_that_never_reported_fail_the_run_unverified(acid_run):
    d = Driver(acid_run)
    verified(d)
    d.tick()
    d.tick(World(acid=JobState(True, False, True, "the database holds no TPC-C load")))
    assert (d.phase, d.status["reason"]) == ("Failed", "ACIDUnverified")
    assert "no TPC-C load" in d.status["message"]


def test_without_acid_the_check_ends_the_run_as_before(document_of):
    d = Driver(document_of({"database": {"type": "voltdb"}}))
    verified(d)
    assert d.phase == "Succeeded" and "acid" not in d.status


@pytest.mark.parametrize(
    "verify, status, role",
    [
        ({}, {}, "verifier"),
        ({}, {"durability": {}}, "checker"),
        ({}, {"durability": {}, "consistency": {}}, "acid"),
        ({"enabled": False}, {"durability": {}}, "acid"),  # no check asked: the ACID tests next
    ],
)
def test_the_job_verifying_is_at(verify, status, role):
    spec = RunSpec.parse({"database": {"type": "voltdb"}, "verify": {**verify, "acid": {"enabled": True}}})
    assert runner_jobs.verifying_role(spec, status) == role


def test_the_acid_job_on_the_runners_cli(spec_of):
    spec = spec_of(
        {
            "database": {"type": "mongodb", "deploy": {"replicas": 3}},
            "verify": {"acid": {"enabled": True, "tests": ["atomicity", "isolation7"]}},
        }
    )
    job = runner_jobs.acid_job(RUN, spec, SETTINGS)
    pod = job["spec"]["template"]["spec"]
    args = pod["containers"][0]["args"]
    assert args[0] == "acid" and args[args.index("--tests") + 1] == "atomicity,isolation7"
    assert args[args.index("--seed") + 1] == str(runner_jobs.run_seed(RUN, spec))
    assert args[args.index("--results-configmap") + 1] == "perf/bench-g2-check"
    assert job["metadata"]["name"] == "bench-g2-acid" and job["metadata"]["labels"][plan.LABEL_ROLE] == "acid"
    assert pod["containers"][0]["resources"]["limits"] and pod["automountServiceAccountToken"] is True
    everything = runner_jobs.acid_job(
        RUN, spec_of({"database": {"type": "voltdb"}, "verify": {"acid": {"enabled": True}}}), SETTINGS
    )
    assert "--tests" not in everything["spec"]["template"]["spec"]["containers"][0]["args"]  # all of them


def test_the_benchmark_result_records_the_acid_verdicts(spec_of):
    from tpcc_operator.results import acid_status

    acid = acid_status(acid_report(failed={"isolation5": "C_BALANCE off by 12.50"}))
    status = {
        "phase": "Failed",
        "verdict": "Failed",
        "acid": acid.to_json(),
        "regression": {"comparisonHash": "c0ffee", "message": "failed"},
    }
    rec = history.record(RUN, spec_of({"database": {"type": "voltdb"}}), status, None, None, [])
    assert rec.spec.to_json()["acid"] == {
        "passed": False,
        "failed": ["isolation5"],
        "counts": {"passed": 10, "failed": 1, "not-applicable": 0, "error": 0},
    }
    assert rec.full_results["acid"]["tests"][5]["reason"] == "C_BALANCE off by 12.50"
