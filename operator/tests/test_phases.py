"""The state machine: forward only, one Step per tick, timeouts end in Failed with a reason,
restarts repeat idempotent actions, a new generation starts a new run."""

from __future__ import annotations

import copy
import datetime as dt
from typing import TypeVar

import pytest
from runner_docs import WARMUP, durability_report, pod_results
from status_parts import changed_by_types, result_changed_by_types
from tpcc_operator import plan
from tpcc_operator.runspec import RunSpec
from tpcc_operator.stages.actions import (
    Action,
    CleanUp,
    CreateCheckJob,
    CreateLoadJob,
    CreateRunJob,
    CreateRunObjects,
    CreateVerifyJob,
    DeleteRun,
    InstallDatabase,
    ReleaseRunners,
    RetireOldGenerations,
    WriteDeliveries,
    WriteResult,
    WriteStartAt,
)
from tpcc_operator.stages.dispatch import next_step
from tpcc_operator.stages.machine import ORDER, Event, JobState, Step, World, can_move, patched, set_condition
from tpcc_operator.timestamps import parse_time, rfc3339

T0 = dt.datetime(2025, 1, 1, 12, 0, 0, tzinfo=dt.timezone.utc)
RUN = plan.Run("bench", "perf", "uid", 2)
IPS = {0: "10.0.0.5", 1: "10.0.0.6"}
CHECK_OK = {
    "passed": True,
    "conditions": [{"number": n, "passed": True, "checked": 1, "violations": 0} for n in range(1, 13)],
}


A = TypeVar("A")


def kinds(actions: list[Action]) -> list[type]:
    """The kinds of the actions, for assertions about which were asked, whatever they carry."""
    return [type(a) for a in actions]


def the(step: Step, kind: type[A]) -> A:
    """The step's one action of `kind`, to look at what it carries."""
    (found,) = [a for a in step.actions if isinstance(a, kind)]
    return found


def apply(status: dict, step: Step) -> dict:
    return patched(status, step.status)


class Driver:
    """Feeds next_step successive worlds, applying each step to the status."""

    def __init__(self, spec: dict | RunSpec, run=RUN):
        # the object's spec as stored, which a test may edit between ticks; read each tick
        document = spec.document if isinstance(spec, RunSpec) else spec
        self.spec, self.run, self.status, self.now = copy.deepcopy(dict(document)), run, {}, T0
        self.actions: list[Action] = []
        self.events: list[Event] = []

    def tick(self, world: World | None = None, after: float = 3) -> Step:
        self.now += dt.timedelta(seconds=after)
        step = next_step(self.run, self.typed, self.status, world or World(), self.now)
        self.status = apply(self.status, step)
        assert changed_by_types(self.status) == []
        assert not any(result_changed_by_types(a.result) for a in step.actions if isinstance(a, WriteResult))
        self.actions += step.actions
        self.events += step.events
        return step

    @property
    def typed(self) -> RunSpec:
        """The spec as the operator reads it this tick."""
        return RunSpec.parse(self.spec)

    @property
    def phase(self):
        return self.status.get("phase")

    def condition(self, type_):
        return next(c for c in self.status["conditions"] if c["type"] == type_)


@pytest.fixture
def voltdb(document_of):
    return document_of({"database": {"type": "voltdb"}, "workload": {"clients": 8}, "runners": {"parallelism": 2}})


def test_forward_only():
    assert can_move(None, "Pending") and not can_move(None, "Running")
    assert can_move("Pending", "Deploying") and can_move("Pending", "Loading")
    assert not can_move("Running", "Loading")
    assert can_move("Verifying", "Failed") and can_move("Deploying", "Failed")
    assert not can_move("Succeeded", "Failed") and not can_move("Failed", "Succeeded")
    assert not can_move("Failed", "Pending")


def test_happy_path(voltdb):
    d = Driver(voltdb)
    step = d.tick()
    assert d.phase == "Pending" and d.status["observedGeneration"] == 2 and step.actions == []
    assert step.events[0].reason == "RunStarted"

    d.tick()
    assert d.phase == "Deploying" and CreateRunObjects() in d.actions
    assert d.status["database"]["release"] == "bench-g2"
    assert d.status["database"]["endpoints"][0].startswith("bench-g2-0.bench-g2-hl.perf.svc")

    assert d.tick().actions == [InstallDatabase()] and d.status["database"]["installed"]
    assert d.tick(World(database_ready=0)).actions == [] and d.phase == "Deploying"
    d.tick(World(database_ready=1))
    assert d.phase == "Loading" and d.condition("DatabaseReady")["status"] == "True"

    assert d.tick(World()).actions == [CreateLoadJob()]
    assert d.tick(World(load=JobState(exists=True))).actions == []
    d.tick(World(load=JobState(exists=True, succeeded=True)))
    assert d.phase == "Running" and d.condition("Loaded")["status"] == "True"

    assert d.tick(World()).actions == [CreateRunJob()]
    assert d.tick(World(runner=JobState(exists=True), runners_ready=1)).actions == []
    step = d.tick(World(runner=JobState(exists=True), runners_ready=2))
    start_at = rfc3339(d.now + dt.timedelta(seconds=5))
    assert step.actions == [WriteStartAt(start_at)] and d.status["startAt"] == start_at
    # the barrier is released once: later ticks do not move startAt
    assert d.tick(World(runner=JobState(exists=True), start_at=start_at, runners_ready=0)).actions == []
    assert d.status["startAt"] == start_at

    docs = {0: pod_results(0, 2, 100, 0.01), 1: pod_results(1, 2, 80, 0.01)}
    step = d.tick(World(runner=JobState(exists=True, succeeded=True), results=docs))
    assert d.phase == "Verifying" and d.status["results"]["tpmC"] == 180.0
    # condition 11's independent count: the Deliveries of both pods, for the checker
    deliveries = {"deliveries": {"1:1": 2, "1:2": 2}, "deliveries_unknown_outcome": {"1": 1}}
    assert step.actions == [WriteDeliveries(deliveries)]
    assert d.condition("RunCompleted")["status"] == "True"

    # durability: verified once the database is whole, over the ledgers of both pods
    assert d.tick(World(database_ready=0, runner_pod_ips=IPS)).actions == []
    step = d.tick(World(database_ready=1, runner_pod_ips=IPS))
    assert step.actions == [CreateVerifyJob(IPS)]
    assert d.tick(World(verifier=JobState(exists=True))).actions == []
    step = d.tick(World(verifier=JobState(exists=True, succeeded=True), durability_report=durability_report(90)))
    assert step.actions == [ReleaseRunners()] and d.phase == "Verifying"
    assert d.condition("Durable")["status"] == "True"
    assert (d.status["durability"]["acknowledged"], d.status["durability"]["lost"]) == (90, 0)

    assert d.tick(World()).actions == [CreateCheckJob()]  # no earlier cells: not a sweep
    d.tick(World(checker=JobState(exists=True, succeeded=True), check_report=CHECK_OK))
    assert d.phase == "Succeeded" and d.status["consistency"]["passed"]
    assert d.condition("Succeeded")["status"] == "True" and d.status["completionTime"]

    assert d.condition("Ready")["status"] == "Unknown"  # judged on the next tick

    # the verdict and its BenchmarkResult, cleanup once per policy (OnSuccess), then nothing more
    step = d.tick()
    assert kinds(step.actions) == [WriteResult, ReleaseRunners, CleanUp] and d.status["cleanedUp"]
    result = the(step, WriteResult).result
    assert d.status["verdict"] == "Pass" and result.name == d.status["resultName"] == "bench-g2-uid"
    assert d.condition("Ready")["status"] == "True"
    assert d.tick().actions == [] and d.phase == "Succeeded"
    reasons = [e.reason for e in d.events]
    for r in (
        "RunStarted",
        "Deploying",
        "DatabaseInstalled",
        "Loading",
        "LoadJobCreated",
        "Running",
        "RunJobCreated",
        "RunnersReady",
        "Verifying",
        "VerifyJobCreated",
        "CheckJobCreated",
        "Succeeded",
        "CleanedUp",
    ):
        assert r in reasons
    assert all(e.type == "Normal" for e in d.events)


def _results_merged(voltdb, docs: dict) -> Driver:
    """A released run whose runner Job succeeded with these pods' results, one tick on."""
    d = Driver(voltdb)
    d.status = {
        "phase": "Running",
        "observedGeneration": 2,
        "startAt": rfc3339(T0),
        "stageStartTime": rfc3339(T0),
        "conditions": [],
    }
    d.tick(World(runner=JobState(exists=True, succeeded=True), results=docs))
    return d


def test_a_late_runner_pod_fails_the_run_with_its_shard_named(voltdb):
    # shard 1's terminals were all running 2.5 s into the measured interval (after the warmup)
    docs = {0: pod_results(0, 2, 100, 0.01), 1: pod_results(1, 2, 80, 0.01, late_seconds=WARMUP + 2.5)}
    d = _results_merged(voltdb, docs)
    assert d.phase == "Failed" and d.status["reason"] == "RunnerLate"
    assert d.status["message"] == (
        "runner pods started their terminals more than 1 s into the measured interval (startAt + warmup): "
        "shard 1 (12.5 s after startAt)"
    )
    assert d.status["results"]["lateRunners"] == [{"shard": 1, "lateSeconds": 12.5}]
    assert d.condition("RunCompleted")["reason"] == "RunnerLate"
    # within the warmup (as a busy node may wake a pod 1.1 s after startAt) and within a second
    # of the measured interval's start are on time: every pod measured the whole interval
    for late_seconds in (0.9, 1.1, WARMUP - 1, WARMUP + 0.9):
        docs[1] = pod_results(1, 2, 80, 0.01, late_seconds=late_seconds)
        d = _results_merged(voltdb, docs)
        assert d.phase == "Verifying" and d.status["results"]["lateRunners"] == []
        assert [p["lateSeconds"] for p in d.status["results"]["pods"]] == [0.01, late_seconds]


def test_phase_never_moves_backwards(voltdb):
    d = Driver(voltdb)
    seen = []
    worlds = [
        World(),
        World(),
        World(),
        World(database_ready=1),
        World(),
        World(load=JobState(True, True)),
        World(runner=JobState(True), runners_ready=2),
        World(runner=JobState(True, True), results={0: pod_results(0, 2, 5, 0.01), 1: pod_results(1, 2, 5, 0.01)}),
        World(database_ready=1, runner_pod_ips=IPS),
        World(verifier=JobState(True, True), durability_report=durability_report(10)),
        World(),
        World(checker=JobState(True, True), check_report=CHECK_OK),
        World(),
    ]
    for w in worlds:
        d.tick(w)
        seen.append(d.phase)
    order = [ORDER.index(p) for p in seen]
    assert order == sorted(order) and seen[-1] == "Succeeded"


def test_external_database_skips_deploying(spec_of):
    spec = spec_of({"database": {"type": "mongodb", "external": {"endpoints": ["db:27017"]}}})
    d = Driver(spec)
    d.tick()
    d.tick()
    assert d.phase == "Loading" and d.status["database"] == {"endpoints": ["db:27017"], "release": ""}
    assert d.condition("DatabaseReady")["reason"] == "External"
    d.tick(World(load=JobState(True, True)))
    d.tick(World())
    d.tick(World(runner=JobState(True), runners_ready=1))
    d.tick(World(runner=JobState(True, True), results={0: pod_results(0, 1, 10, 0.01)}))
    # nothing deployed to wait for: verified at once
    assert d.tick(World(runner_pod_ips={0: "10.0.0.5"})).actions == [CreateVerifyJob({0: "10.0.0.5"})]
    d.tick(World(verifier=JobState(True, True), durability_report=durability_report(10, ledgers=1)))
    d.tick(World(checker=JobState(True, True), check_report=CHECK_OK))
    assert d.phase == "Succeeded"
    assert InstallDatabase() not in d.actions
    # the Jobs go; there is no release to remove
    assert kinds(d.tick().actions) == [WriteResult, ReleaseRunners, CleanUp]


def test_database_never_ready_fails_after_the_timeout(voltdb):
    voltdb["database"]["readyTimeoutSeconds"] = 60
    d = Driver(voltdb)
    d.tick(), d.tick(), d.tick()
    assert d.phase == "Deploying"
    d.tick(World(database_ready=0), after=30)
    assert d.phase == "Deploying"
    d.tick(World(database_ready=0, database_waiting="bench-g2-0: ErrImagePull"), after=31)
    assert d.phase == "Failed" and d.status["reason"] == "DatabaseNotReady"
    assert d.status["message"] == "database not ready after 60s: 0/1 pods ready (bench-g2-0: ErrImagePull)"
    assert d.events[-1].type == "Warning" and d.condition("Succeeded")["status"] == "False"
    # OnSuccess keeps a failed run's database for debugging; the failure is recorded
    assert kinds(d.tick().actions) == [WriteResult] and d.status["cleanedUp"]
    assert d.status["verdict"] == "Failed"


def test_helm_failures_are_retried_until_the_timeout_and_reported(voltdb):
    voltdb["database"]["readyTimeoutSeconds"] = 60
    d = Driver(voltdb)
    d.tick(), d.tick()
    # a failed install: the handler records a HelmFailed condition and does not apply the step
    d.status["conditions"] = set_condition(
        [], "DatabaseReady", False, "HelmFailed", "helm upgrade: chart not found", 2, d.now
    )
    assert next_step(RUN, RunSpec.parse(voltdb), d.status, World(), d.now).actions == [InstallDatabase()]
    d.tick(World(), after=61)
    assert d.phase == "Failed" and "chart not found" in d.status["message"]


def test_load_failure_carries_the_runners_one_line_error(voltdb):
    d = Driver(voltdb)
    d.status = {"phase": "Loading", "observedGeneration": 2, "stageStartTime": "2025-01-01T12:00:00Z"}
    d.tick(World(load=JobState(True, failed=True, message="pod x exited 1: tpcc load: error: unreachable")))
    assert d.phase == "Failed" and d.status["reason"] == "LoadFailed"
    assert d.status["message"] == "load failed: pod x exited 1: tpcc load: error: unreachable"


def test_runners_never_ready(voltdb):
    d = Driver(voltdb)
    d.status = {"phase": "Running", "observedGeneration": 2, "stageStartTime": "2025-01-01T12:00:00Z"}
    d.tick(World(runner=JobState(True), runners_ready=1), after=301)
    assert d.phase == "Failed" and d.status["reason"] == "RunnersNotReady"
    assert d.status["message"] == "1/2 runner pods ready after 300s"


def test_missing_results_fail_the_run(voltdb):
    d = Driver(voltdb)
    d.status = {"phase": "Running", "observedGeneration": 2, "startAt": "x"}
    d.tick(World(runner=JobState(True, True), results={0: pod_results(0, 2, 5, 0.01)}))
    assert d.status["reason"] == "ResultsMissing" and "[1]" in d.status["message"]


def test_consistency_violation_fails_the_run(voltdb):
    d = Driver(voltdb)
    d.status = {"phase": "Verifying", "observedGeneration": 2, "durability": {"lost": 0}}
    report = {
        "passed": False,
        "conditions": [
            {"number": 2, "passed": False, "violations": 1},
            {"number": 7, "passed": False, "violations": 3},
        ],
    }
    d.tick(World(checker=JobState(True, failed=True, message="exit 1"), check_report=report))
    assert d.phase == "Failed" and d.status["reason"] == "ConsistencyViolated"
    assert d.status["message"] == "violated consistency conditions 2, 7"
    assert d.status["consistency"]["violated"] == [2, 7]


def test_check_crash_without_report(voltdb):
    d = Driver(voltdb)
    d.status = {"phase": "Verifying", "observedGeneration": 2, "durability": {"lost": 0}}
    d.tick(World(checker=JobState(True, failed=True, message="pod c exited 1: boom")))
    assert d.status["reason"] == "CheckFailed" and "boom" in d.status["message"]


def test_verify_disabled_succeeds_after_the_run(spec_of):
    spec = spec_of({"database": {"type": "voltdb"}, "verify": {"enabled": False}, "cleanup": {"policy": "Never"}})
    d = Driver(spec)
    d.status = {"phase": "Running", "observedGeneration": 2, "startAt": "x"}
    d.tick(World(runner=JobState(True, True), results={0: pod_results(0, 1, 5, 0.01)}))
    assert d.phase == "Verifying"  # durability is always verified
    d.tick(World(verifier=JobState(True, True), durability_report=durability_report(10, ledgers=1)))
    assert d.phase == "Succeeded"
    assert kinds(d.tick().actions) == [WriteResult, ReleaseRunners]  # policy Never


def test_restart_adopts_a_start_time_already_written(voltdb):
    """The operator wrote startAt into the ConfigMap and died before recording it."""
    d = Driver(voltdb)
    d.status = {"phase": "Running", "observedGeneration": 2, "stageStartTime": "2025-01-01T12:00:00Z"}
    step = d.tick(World(runner=JobState(True), start_at="2025-01-01T12:00:09Z", runners_ready=2))
    assert step.actions == [] and d.status["startAt"] == "2025-01-01T12:00:09Z"


def test_repeated_ticks_in_a_phase_repeat_only_idempotent_creates(voltdb):
    d = Driver(voltdb)
    d.status = {"phase": "Loading", "observedGeneration": 2}
    # the Job is not visible yet (or the create's status patch was lost): asked again, same name
    assert d.tick(World()).actions == [CreateLoadJob()]
    assert d.tick(World()).actions == [CreateLoadJob()]
    assert d.phase == "Loading"


def test_new_generation_starts_a_new_run(voltdb):
    d = Driver(voltdb)
    d.status = {
        "phase": "Succeeded",
        "observedGeneration": 1,
        "results": {"tpmC": 5.0},
        "startAt": "x",
        "cleanedUp": True,
        "message": "old",
    }
    step = d.tick()
    assert step.actions == [RetireOldGenerations()]
    assert d.status["phase"] == "Pending" and d.status["observedGeneration"] == 2
    assert "results" not in d.status and "startAt" not in d.status
    assert d.status["message"].endswith("creating the run's objects")  # the old run's message is gone


@pytest.mark.parametrize(
    "spec, scale",
    [
        ({"workload": {"warehouses": 4}}, "4 warehouses"),
        ({"workload": {"warehouses": 2, "scaleDown": 10}}, "2 warehouses scaled down 10x"),
        # the schema defaults spec.workload.warehouses to 1 for YCSB too: the column showed 1
        ({"workload": {"kind": "ycsb", "ycsb": {"recordCount": 25000}}}, "25,000 YCSB records"),
        ({"sweep": {"warehouses": [2, 8, 4], "clients": [1, 2]}}, "2-8 warehouses"),
        ({"workload": {"warehouses": 1}, "sweep": {"warehouses": [3], "clients": [1, 2]}}, "3 warehouses"),
    ],
)
def test_a_new_run_says_what_it_loads_for_the_scale_column(spec_of, spec, scale):
    d = Driver(spec_of({"database": {"type": "voltdb"}, **spec}))
    d.tick()
    assert d.status["phase"] == "Pending" and d.status["scale"] == scale


def test_ttl_deletes_the_run(spec_of):
    spec = spec_of({"database": {"type": "voltdb"}, "cleanup": {"ttlSecondsAfterFinished": 60}})
    d = Driver(spec)
    d.status = {"phase": "Failed", "observedGeneration": 2, "cleanedUp": True, "completionTime": "2025-01-01T12:00:00Z"}
    assert kinds(d.tick(after=30).actions) == [WriteResult]
    assert d.tick(after=31).actions == [DeleteRun()]


def test_cleanup_always_applies_to_failures(spec_of):
    spec = spec_of({"database": {"type": "voltdb"}, "cleanup": {"policy": "Always"}})
    d = Driver(spec)
    d.status = {"phase": "Failed", "observedGeneration": 2}
    assert kinds(d.tick().actions) == [WriteResult, CleanUp]


def test_results_that_cannot_be_merged_fail_the_run_with_the_reason(voltdb):
    d = Driver(voltdb)
    d.status = {"phase": "Running", "observedGeneration": 2, "startAt": "x"}
    other_seed = pod_results(1, 2, 5, 0.01)
    other_seed["options"]["seed"] = 43
    d.tick(World(runner=JobState(True), results={0: pod_results(0, 2, 5, 0.01), 1: other_seed}))
    assert d.phase == "Failed" and d.status["reason"] == "ResultsInconsistent"
    assert "seed" in d.status["message"]


def test_every_wait_says_what_it_waits_for_and_since_when(voltdb):
    """status.message while a run works names the phase's wait, its timeout and, when a pod is
    the hold-up, that pod's own words; each phase's move says where the run moved."""
    from tpcc_operator.failures import PodState

    d = Driver(voltdb)
    d.tick()
    assert d.status["message"] == f"since {d.status['stageStartTime']}: creating the run's objects"
    d.tick()
    assert d.phase == "Deploying" and d.status["message"] == "helm release bench-g2"
    d.tick()  # installs
    d.tick(World(database_ready=0, database_waiting="bench-g2-0: ContainerCreating"))
    assert d.status["message"] == (
        f"since {d.status['stageStartTime']}: waiting for the database pods to be "
        "ready: 0/1 (timeout 600s); bench-g2-0: ContainerCreating"
    )
    d.tick(World(database_ready=1))
    assert d.phase == "Loading"
    d.tick(World(load=JobState(exists=True), pods=[PodState("bench-g2-loader-x", 30, "ContainerCreating")]))
    assert (
        "waiting for load job bench-g2-loader to load 1 warehouse (timeout 900s); "
        "pod bench-g2-loader-x: ContainerCreating" in d.status["message"]
    )
    d.tick(World(load=JobState(exists=True, succeeded=True)))
    d.tick(World(runner=JobState(exists=True), runners_ready=1))
    assert "waiting for the runner pods to connect and be ready: 1/2 (timeout" in d.status["message"]
    d.tick(World(runner=JobState(exists=True), runners_ready=2))
    d.tick(World(runner=JobState(exists=True)))
    assert d.status["message"].endswith(
        f"measuring: 2 runner pods started at {d.status['startAt']}, 30s warmup + "
        "300s measured; results due at " + rfc3339(parse_time(d.status["startAt"]) + dt.timedelta(seconds=330))
    )
