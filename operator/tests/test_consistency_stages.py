"""verify.afterLoad and verify.duringRun: the 12 conditions checked by the load Job, and by a
check Job started with the measured interval; a violation at either fails the run
with its conditions in status and the BenchmarkResult."""

from __future__ import annotations

import datetime as dt

import pytest
from runner_docs import durability_report, pod_results
from test_phases import CHECK_OK, RUN, Driver
from test_plan import SETTINGS
from tpcc_operator import history, regression, runner_jobs
from tpcc_operator.stages.actions import CreateMidcheckJob
from tpcc_operator.stages.machine import JobState, World
from tpcc_operator.timestamps import rfc3339

VIOLATED_9 = {
    "passed": False,
    "violated": [9],
    "conditions": [
        {
            "number": n,
            "passed": n != 9,
            "checked": 10,
            "violations": int(n == 9),
            **({"example": "district (1, 3): D_YTD=30001.00, sum(H_AMOUNT)=30000.00"} if n == 9 else {}),
        }
        for n in range(1, 13)
    ],
}


def during(report: dict, started: dt.datetime) -> dict:
    """The mid-run check's report, read from `started` for 20 s."""
    return {
        **report,
        "snapshot": True,
        "started_at": rfc3339(started),
        "finished_at": rfc3339(started + dt.timedelta(seconds=20)),
    }


@pytest.fixture
def checked_run(document_of):
    return document_of(
        {
            "database": {"type": "voltdb"},
            "cleanup": {"policy": "Never"},
            "workload": {"warmupSeconds": 10, "durationSeconds": 60},
            "verify": {"afterLoad": True, "duringRun": True},
        }
    )


def loading(d: Driver) -> None:
    d.status = {"phase": "Loading", "observedGeneration": 2, "phaseTime": rfc3339(d.now)}


def test_the_load_job_checks_what_it_loaded(checked_run, spec_of):
    job = runner_jobs.load_job(RUN, spec_of(checked_run), SETTINGS)
    pod = job["spec"]["template"]["spec"]
    args = pod["containers"][0]["args"]
    assert "--check" in args and args[args.index("--results-configmap") + 1] == "perf/bench-g2-check"
    assert pod["automountServiceAccountToken"] is True  # it writes load.json and load-check.json
    plain = runner_jobs.load_job(RUN, spec_of({"database": {"type": "voltdb"}}), SETTINGS)["spec"]["template"]["spec"]
    assert "--check" not in plain["containers"][0]["args"]


def test_the_load_time_and_rate_are_in_status(document_of):
    d = Driver(document_of({"database": {"type": "voltdb"}, "workload": {"warehouses": 2}}))
    loading(d)
    d.tick(
        World(
            load=JobState(True, True),
            load_report={"warehouses": 2, "rows": 1105020, "seconds": 30.6, "rows_per_second": 36111.8},
        )
    )
    assert d.status["load"] == {"rows": 1105020, "seconds": 30.6, "rowsPerSecond": 36111.8}
    assert d.condition("Loaded")["message"] == "2 warehouses loaded in 30.6 s (36,112 rows/s)"


def test_a_consistent_load_moves_on_and_is_in_status(checked_run):
    d = Driver(checked_run)
    loading(d)
    d.tick(World(load=JobState(True, True), load_check_report=CHECK_OK))
    assert d.phase == "Running" and d.status["consistencyAfterLoad"]["passed"]
    assert d.condition("Loaded")["message"].endswith("consistency conditions hold")


def test_an_inconsistent_load_fails_the_run_naming_the_conditions(checked_run):
    d = Driver(checked_run)
    loading(d)
    # the load Job exits 1 after writing load-check.json
    d.tick(World(load=JobState(True, False, True, "exit 1"), load_check_report=VIOLATED_9))
    assert (d.phase, d.status["reason"]) == ("Failed", "LoadInconsistent")
    assert d.status["message"].endswith("violates consistency conditions 9")
    assert d.status["consistencyAfterLoad"]["violated"] == [9]


def test_a_load_that_wrote_no_report_does_not_pass_as_checked(checked_run):
    d = Driver(checked_run)
    loading(d)
    d.tick(World(load=JobState(True, True)))
    assert (d.phase, d.status["reason"]) == ("Failed", "LoadFailed")
    assert "wrote no consistency report" in d.status["message"]


def running(d: Driver) -> dt.datetime:
    start_at = d.now
    d.status = {
        "phase": "Running",
        "observedGeneration": 2,
        "startAt": rfc3339(start_at),
        "phaseTime": rfc3339(start_at),
    }
    return start_at


def test_the_check_job_starts_with_the_measured_interval_once(checked_run):
    d = Driver(checked_run)
    start_at = running(d)
    # after the 10 s warm-up: not at 7 s
    assert CreateMidcheckJob() not in d.tick(World(runner=JobState(True), start_at="x"), after=7).actions
    step = d.tick(World(runner=JobState(True), start_at="x"), after=3)
    assert CreateMidcheckJob() in step.actions and d.now == start_at + dt.timedelta(seconds=10)
    assert any(e.reason == "DuringRunCheckJobCreated" for e in step.events)
    assert CreateMidcheckJob() not in d.tick(World(runner=JobState(True), midcheck=JobState(True))).actions


def through_the_run(d: Driver, start_at: dt.datetime) -> None:
    d.tick(World(runner=JobState(True), midcheck=JobState(True), results={0: pod_results(0, 1, 5, 0.01)}), after=40)
    assert d.phase == "Verifying"


def test_a_consistent_read_during_the_run_comes_first_in_verifying(checked_run):
    d = Driver(checked_run)
    start_at = running(d)
    through_the_run(d, start_at)
    assert d.tick(World(midcheck=JobState(True))).actions == []  # still reading
    report = during(CHECK_OK, start_at + dt.timedelta(seconds=40))
    d.tick(World(midcheck=JobState(True, True), midcheck_report=report))
    during_run = d.status["consistencyDuringRun"]
    assert during_run["passed"] and during_run["whileRunning"] and during_run["startedAt"] == report["started_at"]
    assert runner_jobs.verifying_role(d.typed, d.status) == "verifier"
    d.tick(World(verifier=JobState(True, True), durability_report=durability_report(10, ledgers=1)))
    d.tick(World(checker=JobState(True, True), check_report=CHECK_OK))
    assert d.phase == "Succeeded"
    assert d.status["message"].startswith("run complete: consistency conditions held during the run")


def test_a_read_after_the_window_is_not_in_it(checked_run):
    d = Driver(checked_run)
    start_at = running(d)
    through_the_run(d, start_at)
    d.tick(World(midcheck=JobState(True, True), midcheck_report=during(CHECK_OK, start_at + dt.timedelta(seconds=71))))
    assert d.status["consistencyDuringRun"]["whileRunning"] is False


def test_a_violation_during_the_run_fails_it(checked_run):
    d = Driver(checked_run)
    start_at = running(d)
    through_the_run(d, start_at)
    d.tick(
        World(
            midcheck=JobState(True, False, True, "exit 1"),
            midcheck_report=during(VIOLATED_9, start_at + dt.timedelta(seconds=40)),
        )
    )
    assert (d.phase, d.status["reason"]) == ("Failed", "ConsistencyViolatedDuringRun")
    assert d.condition("ConsistencyVerified")["reason"] == "ViolatedDuringRun"


def test_a_check_that_could_not_read_fails_the_run_with_its_error(checked_run):
    d = Driver(checked_run)
    through_the_run(d, running(d))
    d.tick(World(midcheck=JobState(True, False, True, "mongodb: reading warehouse 1 in one snapshot: ...")))
    assert (d.phase, d.status["reason"]) == ("Failed", "CheckFailed")
    assert "in one snapshot" in d.status["message"]


def test_a_run_that_ended_before_half_way_still_gets_its_check_late(checked_run):
    d = Driver(checked_run)
    running(d)
    d.tick(World(runner=JobState(True), results={0: pod_results(0, 1, 5, 0.01)}), after=1)
    step = d.tick(World())
    assert step.actions == [CreateMidcheckJob()]
    assert [e.type for e in step.events if e.reason == "DuringRunCheckJobCreated"] == ["Warning"]


def test_the_midcheck_job_reads_in_snapshots_into_its_own_key(checked_run, spec_of):
    job = runner_jobs.midcheck_job(RUN, spec_of(checked_run), SETTINGS)
    args = job["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[:2] == ["check", "--snapshot"] and "--deliveries" not in args
    assert args[args.index("--results-key") + 1] == runner_jobs.MIDCHECK_KEY != "check.json"
    assert job["metadata"]["name"] == "bench-g2-midcheck" and len(job["metadata"]["name"]) - len(RUN.prefix) <= 9


def test_a_check_during_the_run_makes_runs_incomparable_with_runs_without(spec_of):
    base = {"database": {"type": "voltdb"}}
    assert regression.comparison_hash(spec_of(base)) == regression.comparison_hash(
        spec_of({**base, "verify": {"afterLoad": True}})
    )
    assert regression.comparison_hash(spec_of(base)) != regression.comparison_hash(
        spec_of({**base, "verify": {"duringRun": True}})
    )


def test_the_benchmark_result_records_each_check(checked_run, spec_of):
    from tpcc_operator.results import consistency_status

    status = {
        "phase": "Failed",
        "verdict": "Failed",
        "consistencyAfterLoad": consistency_status(CHECK_OK).to_json(),
        "consistencyDuringRun": {**consistency_status(VIOLATED_9).to_json(), "whileRunning": True},
        "regression": {"comparisonHash": "c0ffee", "message": "failed"},
    }
    rec = history.record(RUN, spec_of(checked_run), status, None, None, [])
    assert rec.spec.consistent_after_load is True and rec.spec.consistent_during_run is False
    assert rec.full_results["consistencyDuringRun"]["violated"] == [9]
