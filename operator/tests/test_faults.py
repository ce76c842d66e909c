"""Fault injection: the schedule, the victim, an injection's three ticks (restart-safe), the
wait for recovery before the check, the durability verdict."""

from __future__ import annotations

import datetime as dt

import pytest
from runner_docs import durability_report, pod_results
from test_phases import kinds, the
from tpcc_operator import faults, plan
from tpcc_operator.databases import mongodb
from tpcc_operator.databases.mongodb import MONGODB
from tpcc_operator.databases.voltdb import VOLTDB
from tpcc_operator.faults import DatabasePod, Injection
from tpcc_operator.results import run_status
from tpcc_operator.runspec import RunSpec
from tpcc_operator.stages.actions import CreateVerifyJob, KillPods, ReleaseRunners
from tpcc_operator.stages.dispatch import next_step
from tpcc_operator.stages.machine import Event, JobState, Step, World, patched
from tpcc_operator.timestamps import parse_time

T0 = dt.datetime(2025, 1, 1, 12, 0, 0, tzinfo=dt.timezone.utc)
RUN = plan.Run("bench", "perf", "uid-1", 2)
START = "2025-01-01T12:00:00Z"  # startAt; warmup 10 s -> the measured interval starts 12:00:10


def pods(*names_uids_ready) -> list[DatabasePod]:
    return [DatabasePod(n, u, r) for n, u, r in names_uids_ready]


ALL_READY = pods(("bench-g2-0", "a", True), ("bench-g2-1", "b", True), ("bench-g2-2", "c", True))


@pytest.fixture
def spec(document_of):
    return document_of(
        {
            "database": {"type": "voltdb", "deploy": {"replicas": 3, "kSafety": 1}},
            "workload": {"warmupSeconds": 10, "durationSeconds": 120},
            "faults": [{"action": "kill-node", "afterSeconds": 20, "everySeconds": 30, "count": 2, "podIndex": 1}],
        }
    )


def step_of(spec: dict, status: dict, world: World, now: dt.datetime) -> Step:
    """One tick of the run whose object's spec is `spec`."""
    return next_step(RUN, RunSpec.parse(spec), status, world, now)


def at(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def test_schedule_counts_from_the_measured_interval(spec):
    spec["faults"].append(
        {
            "action": "kill-random-member",
            "afterSeconds": 35,
            "everySeconds": 1,
            "count": 1,
            "gracePeriodSeconds": 5,
            "podIndex": 0,
        }
    )
    got = faults.schedule(RunSpec.parse(spec), T0)
    assert [(i.number, i.action, (i.due - T0).total_seconds(), i.grace_seconds) for i in got] == [
        (1, "kill-node", 30, 0),
        (2, "kill-random-member", 45, 5),
        (3, "kill-node", 60, 0),
    ]


def test_injections_after_the_window_are_announced(spec, spec_of):
    spec["faults"][0]["count"] = 5  # due at 20, 50, 80, 110, 140 s of a 120 s window
    assert faults.outside_window(RunSpec.parse(spec)) == [5]
    step = step_of(spec, {}, World(), T0)
    assert ("Warning", "FaultsOutsideWindow") in [(e.type, e.reason) for e in step.events]


@pytest.mark.parametrize(
    "hello, pod",
    [
        # a member of a replica set answering hello (MongoDB 6+ field names)
        (
            {
                "isWritablePrimary": False,
                "secondary": True,
                "setName": "rs0",
                "hosts": ["db-g1-0.db-g1-hl.ns.svc.cluster.local:27017", "db-g1-1.db-g1-hl.ns.svc.cluster.local:27017"],
                "primary": "db-g1-1.db-g1-hl.ns.svc.cluster.local:27017",
                "me": "db-g1-0.db-g1-hl.ns.svc.cluster.local:27017",
                "ok": 1.0,
            },
            "db-g1-1",
        ),
        # the primary itself, older servers' field name
        ({"ismaster": True, "setName": "rs0", "me": "db-g1-2.db-g1-hl:27017", "ok": 1.0}, "db-g1-2"),
        # an election in progress: no primary
        ({"isWritablePrimary": False, "secondary": True, "setName": "rs0", "me": "db-g1-0.x:27017"}, None),
        (None, None),
    ],
)
def test_primary_is_what_the_replica_set_says(hello, pod):
    assert mongodb.primary_pod(hello) == pod


def test_victims():
    inj = Injection(1, "kill-node", T0, 0, 2)
    assert faults.choose_victim(inj, faults.Members(VOLTDB, "bench-g2", ALL_READY, None, "s")).name == "bench-g2-2"
    down = pods(("bench-g2-0", "a", True), ("bench-g2-2", "c", False))
    assert (
        faults.choose_victim(inj, faults.Members(VOLTDB, "bench-g2", down, None, "s"))
        == "pod bench-g2-2 is not running and ready"
    )
    primary = Injection(1, "kill-primary", T0, 0, 0)
    assert (
        faults.choose_victim(primary, faults.Members(MONGODB, "bench-g2", ALL_READY, "bench-g2-1", "s")).name
        == "bench-g2-1"
    )
    assert (
        faults.choose_victim(primary, faults.Members(MONGODB, "bench-g2", ALL_READY, None, "s"))
        == "no mongodb member names a primary"
    )
    # VoltDB has no primary: a random ready member, the same one for the same seed and number
    chosen = {
        faults.choose_victim(
            Injection(n, "kill-primary", T0, 0, 0), faults.Members(VOLTDB, "bench-g2", ALL_READY, None, "uid-1")
        ).name
        for n in range(1, 30)
    }
    assert len(chosen) > 1 and chosen <= {p.name for p in ALL_READY}
    again = faults.choose_victim(
        Injection(7, "kill-random-member", T0, 0, 0),
        faults.Members(VOLTDB, "bench-g2", list(reversed(ALL_READY)), None, "uid-1"),
    )
    assert again == faults.choose_victim(
        Injection(7, "kill-random-member", T0, 0, 0), faults.Members(VOLTDB, "bench-g2", ALL_READY, None, "uid-1")
    )
    assert (
        faults.choose_victim(
            Injection(1, "kill-random-member", T0, 0, 0),
            faults.Members(VOLTDB, "bench-g2", pods(("bench-g2-0", "a", False)), None, "s"),
        )
        == "no database pod is ready"
    )


class Run:
    """The Running phase with faults, tick by tick, applying each step to the status."""

    def __init__(self, spec):
        self.spec = spec
        self.status = {"phase": "Running", "observedGeneration": 2, "startAt": START, "stageStartTime": START}
        self.kills: list[faults.Kill] = []
        self.events: list[Event] = []

    def tick(self, seconds: float, pods_now: list[DatabasePod], **world) -> Step:
        w = World(runner=JobState(exists=True), start_at=START, database_pods=pods_now, **world)
        step = next_step(RUN, RunSpec.parse(self.spec), self.status, w, at(seconds))
        self.status = patched(self.status, step.status)
        if KillPods in kinds(step.actions):
            self.kills += the(step, KillPods).kills
        self.events += step.events
        return step

    @property
    def faults(self):
        return self.status.get("faults") or []


def test_an_injection_is_chosen_then_killed_then_recovered(spec):
    r = Run(spec)
    assert r.tick(29, ALL_READY).actions == [] and not r.faults  # due at 30 s
    r.tick(30, ALL_READY)
    assert r.faults == [
        {
            "number": 1,
            "action": "kill-node",
            "method": "delete-pod",
            "dueTime": "2025-01-01T12:00:30Z",
            "gracePeriodSeconds": 0,
            "state": "Injecting",
            "target": "bench-g2-1",
            "targetUID": "b",
        }
    ]
    assert r.kills == []  # recorded first, killed on the next tick
    step = r.tick(33, ALL_READY)
    assert step.actions == [KillPods((faults.Kill("bench-g2-1", "b", 0),))]
    assert r.faults[0]["state"] == "Injected" and r.faults[0]["injectedTime"] == "2025-01-01T12:00:33Z"
    # the pod is gone, then back with a new UID but not ready, then ready: recovered
    gone = [ALL_READY[0], ALL_READY[2]]
    assert r.tick(36, gone).status == {}
    back = gone + pods(("bench-g2-1", "b2", False))
    assert r.tick(39, back).status == {}
    r.tick(45, gone + pods(("bench-g2-1", "b2", True)))
    assert r.faults[0]["state"] == "Recovered" and r.faults[0]["recoverySeconds"] == 12.0
    assert [e.reason for e in r.events] == ["FaultInjected", "FaultRecovered"]
    assert r.events[0].type == "Warning"


def test_kill_process_records_the_restart_count_and_recovers_on_a_restarted_container(document_of):
    """kill-process: the same pod (same UID) must come back with its database container's
    restartCount above the recorded one; Ready alone, or the old container, is not recovery."""
    spec = document_of(
        {
            "database": {"type": "mongodb", "deploy": {"replicas": 1}},
            "workload": {"warmupSeconds": 10, "durationSeconds": 120},
            "faults": [{"action": "kill-primary", "method": "kill-process", "afterSeconds": 20}],
        }
    )
    member = [DatabasePod("bench-g2-0", "m", True, restarts=2)]
    r = Run(spec)
    r.tick(30, member, primary="bench-g2-0")
    assert r.faults[0]["method"] == "kill-process" and r.faults[0]["targetRestarts"] == 2
    step = r.tick(33, member)
    assert step.actions == [KillPods((faults.Kill("bench-g2-0", "m", 0, "kill-process", 2),))]
    assert "killed the database process of pod bench-g2-0" in r.events[0].message
    # still the old container (the kill has not landed yet), even though Ready: not recovered
    assert r.tick(34, member).status == {}
    crashed = [DatabasePod("bench-g2-0", "m", False, restarts=3)]
    assert r.tick(36, crashed).status == {}
    r.tick(41, [DatabasePod("bench-g2-0", "m", True, restarts=3)])
    assert r.faults[0]["state"] == "Recovered" and r.faults[0]["restartCount"] == 3
    assert r.faults[0]["recoverySeconds"] == 8.0


def test_kill_process_counts_a_replaced_pod_as_back():
    entry = {"target": "p", "targetUID": "m", "method": "kill-process", "targetRestarts": 0}
    (victim,) = faults.victims_of(entry)
    assert faults.came_back(entry, victim, DatabasePod("p", "m2", True, restarts=0))
    assert not faults.came_back(entry, victim, DatabasePod("p", "m", True, restarts=0))
    # delete-pod: a restarted container of the same pod is not the new pod the delete makes
    deleted = {"target": "p", "targetUID": "m"}
    assert not faults.came_back(deleted, faults.victims_of(deleted)[0], DatabasePod("p", "m", True, restarts=5))


def test_a_restart_between_kill_and_status_kills_the_same_pod_only(spec):
    """The kill is repeated with the same pod UID as precondition: a replacement pod is never
    killed by the repeat (kube_actions.kill_pod's 409)."""
    r = Run(spec)
    r.tick(30, ALL_READY)
    before = dict(r.status)
    first = r.tick(33, ALL_READY)
    r.status = before  # the status patch after the kill was lost
    again = r.tick(35, [ALL_READY[0], ALL_READY[2]] + pods(("bench-g2-1", "b2", False)))
    assert first.actions == again.actions == [KillPods((faults.Kill("bench-g2-1", "b", 0),))]


def test_injections_wait_for_the_previous_recovery(spec):
    r = Run(spec)
    r.tick(30, ALL_READY), r.tick(33, ALL_READY)
    # the second injection is due at 60 s, but pod 1 is still not back
    down = [ALL_READY[0], ALL_READY[2]]
    assert r.tick(61, down).status == {} and len(r.faults) == 1
    r.tick(64, ALL_READY[:1] + pods(("bench-g2-1", "b2", True)) + ALL_READY[2:])
    r.tick(67, ALL_READY[:1] + pods(("bench-g2-1", "b2", True)) + ALL_READY[2:])
    assert [f["state"] for f in r.faults] == ["Recovered", "Injecting"]
    assert r.faults[1]["targetUID"] == "b2"


def test_no_victim_is_skipped_and_the_schedule_goes_on(spec):
    r = Run(spec)
    r.tick(30, [ALL_READY[0]])
    assert r.faults[0]["state"] == "Skipped" and "bench-g2-1" in r.faults[0]["message"]
    assert r.events[-1].reason == "FaultSkipped"
    r.tick(60, ALL_READY)
    assert r.faults[1]["state"] == "Injecting"


@pytest.mark.parametrize("verify", [True, False])
def test_a_run_whose_fault_was_skipped_fails_however_clean_its_checks(spec, verify):
    """The database came through every check, but one of the two failovers the spec asked for
    never happened: not a pass."""
    spec["verify"]["enabled"] = verify
    skipped = {
        "number": 2,
        "action": "kill-node",
        "state": "Skipped",
        "message": "pod bench-g2-1 is not running and ready",
    }
    recovered = {"number": 1, "action": "kill-node", "state": "Recovered", "target": "bench-g2-1"}
    verifying = {"phase": "Verifying", "observedGeneration": 2, "startAt": START}
    if verify:
        verifying["durability"] = {"durable": True}
        world = World(
            checker=JobState(True, True),
            check_report={
                "passed": True,
                "conditions": [{"number": n, "passed": True, "checked": 1, "violations": 0} for n in range(1, 13)],
            },
        )
    else:
        world = World(verifier=JobState(True, True), durability_report=durability_report(90))
    clean = step_of(spec, {**verifying, "faults": [recovered, dict(recovered, number=2)]}, world, at(200))
    assert clean.status["phase"] == "Succeeded", clean.status.get("message")
    step = step_of(spec, {**verifying, "faults": [recovered, skipped]}, world, at(200))
    assert step.status["phase"] == "Failed" and step.status["reason"] == "FaultNotInjected"
    assert step.status["message"] == (
        "fault 2 (kill-node) was not injected: pod bench-g2-1 is not running "
        "and ready; the durability verdict covers only the faults injected"
    )
    assert [(e.type, e.reason) for e in step.events][-1] == ("Warning", "FaultNotInjected")


def test_a_database_that_refuses_one_transaction_type_fails_the_run_however_good_its_tpmc(spec):
    """Every Payment of one pod ends in an error (a driver bug, a procedure the database
    rejects): the runner counts them and goes on, NewOrders still commit, durability and the
    consistency conditions can still hold. The error budget fails the run."""
    spec["runners"]["parallelism"] = 2
    good = {0: pod_results(0, 2, 500, 0.01), 1: pod_results(1, 2, 500, 0.01, errors={"DELIVERY": 3})}
    bad = {0: pod_results(0, 2, 500, 0.01, errors={"PAYMENT": 950}), 1: pod_results(1, 2, 500, 0.01)}
    verifying = {"phase": "Verifying", "observedGeneration": 2, "startAt": START, "durability": {"durable": True}}
    world = World(checker=JobState(True, True), check_report={"passed": True, "conditions": []})

    def finish(docs: dict) -> dict:
        results = run_status([docs[0], docs[1]]).to_json()
        return step_of(spec, {**verifying, "results": results}, world, at(300)).status

    assert finish(good)["phase"] == "Succeeded"  # 3 of 103 Deliveries: 2.9%, under the default 10%
    failed = finish(bad)
    assert failed["phase"] == "Failed" and failed["reason"] == "TooManyErrors"
    assert failed["message"] == ("errors above workload.maxErrorPercent (10%): PAYMENT 950 of 1050 attempts (90.5%)")
    spec["workload"]["maxErrorPercent"] = 2.5
    assert "DELIVERY 3 of 103 attempts (2.9%)" in finish(good)["message"]
    spec["workload"]["maxErrorPercent"] = 100
    assert finish(bad)["phase"] == "Succeeded"


def test_nothing_is_injected_after_the_measured_interval(spec):
    r = Run(spec)
    r.tick(30, ALL_READY)
    r.tick(131, ALL_READY)  # the window ended (10 + 120 s) before the kill
    assert r.faults[0]["state"] == "Skipped" and r.kills == []


def test_durability_is_verified_only_after_recovery(spec):
    spec["database"]["readyTimeoutSeconds"] = 60
    status = {
        "phase": "Verifying",
        "observedGeneration": 2,
        "startAt": START,
        "stageStartTime": "2025-01-01T12:02:20Z",
        "faults": [
            {
                "number": 2,
                "action": "kill-node",
                "state": "Injected",
                "target": "bench-g2-1",
                "targetUID": "b",
                "gracePeriodSeconds": 0,
                "injectedTime": "2025-01-01T12:02:00Z",
            }
        ],
    }
    ips = {0: "10.0.0.9"}
    down = [ALL_READY[0], ALL_READY[2]]
    step = step_of(spec, status, World(database_pods=down, database_ready=2, runner_pod_ips=ips), at(150))
    assert CreateVerifyJob not in kinds(step.actions)
    back = ALL_READY[:1] + pods(("bench-g2-1", "b2", True)) + ALL_READY[2:]
    step = step_of(spec, status, World(database_pods=back, database_ready=3, runner_pod_ips=ips), at(152))
    assert step.actions == [CreateVerifyJob(ips)] and step.status["faults"][0]["state"] == "Recovered"
    late = step_of(spec, status, World(database_pods=down, database_ready=2), at(140 + 61))
    assert late.status["phase"] == "Failed" and late.status["reason"] == "DatabaseNotRecovered"


def test_a_runner_pod_gone_before_verification_fails_the_run(spec):
    spec["runners"]["parallelism"] = 2
    status = {"phase": "Verifying", "observedGeneration": 2, "startAt": START, "stageStartTime": "2025-01-01T12:02:20Z"}
    step = step_of(
        spec, status, World(database_pods=ALL_READY, database_ready=3, runner_pod_ips={1: "10.0.0.9"}), at(150)
    )
    assert step.status["reason"] == "DurabilityUnverified"
    assert step.status["message"] == "runner pods [0] are gone: their durability ledgers cannot be verified"


def test_results_move_the_run_to_verification_while_the_pods_hold_their_ledgers(spec):
    spec["runners"]["parallelism"] = 2
    docs = {0: pod_results(0, 2, 50, 0.01), 1: pod_results(1, 2, 40, 0.01)}
    running = {"phase": "Running", "observedGeneration": 2, "startAt": START}
    step = step_of(spec, running, World(runner=JobState(True), results={0: docs[0]}), at(200))
    assert "phase" not in step.status  # one pod is still measuring
    step = step_of(spec, running, World(runner=JobState(True), results=docs), at(200))
    assert step.status["phase"] == "Verifying" and "durability" not in step.status
    assert step.status["results"]["timeline"] == [{"t": 0, "tpmC": 540.0}]


def test_durability_is_recorded_and_a_loss_fails_the_run(spec):
    verifying = {"phase": "Verifying", "observedGeneration": 2, "startAt": START}
    done = JobState(True, True)
    step = step_of(spec, verifying, World(verifier=done, durability_report=durability_report(90)), at(200))
    assert step.actions == [ReleaseRunners()] and "phase" not in step.status
    assert step.status["durability"] == {
        "acknowledged": 90,
        "found": 90,
        "lost": 0,
        "missing": 0,
        "replaced": 0,
        "duplicates": 0,
        "unknownOutcome": 1,
        "unknownCommitted": 0,
        "unknownNotCommitted": 1,
        "ledgers": 2,
        "lostExamples": [],
        "durable": True,
        "databaseEmpty": False,
    }
    step = step_of(
        spec,
        verifying,
        World(verifier=JobState(True, failed=True), durability_report=durability_report(90, lost=2)),
        at(200),
    )
    assert step.actions == [ReleaseRunners()]
    assert step.status["phase"] == "Failed" and step.status["reason"] == "DurabilityLost"
    assert step.status["message"].startswith(
        "2 of 90 acknowledged NewOrders lost (0 missing, 2 replaced "
        "by a later order under the same O_ID, 0 acknowledged twice), "
        "e.g. order (w=1, d=3, o_id=3001) of customer 1"
    )
    assert len(step.status["durability"]["lostExamples"]) == 2
    crashed = step_of(spec, verifying, World(verifier=JobState(True, failed=True, message="boom")), at(200))
    assert crashed.status["reason"] == "DurabilityUnverified" and "boom" in crashed.status["message"]


def test_next_due_names_the_injection_to_choose_a_victim_for_now(spec):
    """What the timer asks before observing: the replica set is asked for its primary only
    when this is an injection."""
    start = parse_time(START)
    assert faults.next_due(RunSpec.parse(spec), [], start, at(29)) is None
    assert faults.next_due(RunSpec.parse(spec), [], start, at(30)).number == 1
    injecting = [{"number": 1, "action": "kill-node", "state": "Injecting"}]
    assert faults.next_due(RunSpec.parse(spec), injecting, start, at(61)) is None  # one at a time
    recovered = [{"number": 1, "action": "kill-node", "state": "Recovered"}]
    assert faults.next_due(RunSpec.parse(spec), recovered, start, at(61)).number == 2
    assert faults.next_due(RunSpec.parse(spec), recovered, start, at(130)) is None  # the interval is over
    both = recovered + [{"number": 2, "action": "kill-node", "state": "Skipped"}]
    assert faults.next_due(RunSpec.parse(spec), both, start, at(100)) is None  # the schedule is done


# ---- kill-all: the loss of the whole system (clause 3.5.3) -------------------------------------


@pytest.fixture
def whole(document_of):
    return document_of(
        {
            "database": {"type": "voltdb", "deploy": {"replicas": 3, "kSafety": 1}},
            "workload": {"warmupSeconds": 10, "durationSeconds": 120},
            "faults": [{"action": "kill-all", "method": "kill-process", "afterSeconds": 20, "allowDataLoss": True}],
        }
    )


def test_kill_all_kills_every_pod_at_once_and_recovers_when_all_are_back(whole):
    r = Run(whole)
    r.tick(30, ALL_READY)
    entry = r.faults[0]
    assert entry["state"] == "Injecting" and entry["target"] == "all 3 pods: bench-g2-0, bench-g2-1, bench-g2-2"
    assert [t["pod"] for t in entry["targets"]] == ["bench-g2-0", "bench-g2-1", "bench-g2-2"]
    step = r.tick(33, ALL_READY)
    assert step.actions == [KillPods(tuple(faults.Kill(p.name, p.uid, 0, "kill-process", 0) for p in ALL_READY))]
    assert "killed the database process of all 3 pods: bench-g2-0" in r.events[-1].message
    # two came back (restarted containers), the third not yet: not recovered
    restarted = [DatabasePod(p.name, p.uid, True, restarts=1) for p in ALL_READY]
    assert r.tick(40, restarted[:2] + [DatabasePod("bench-g2-2", "c", True, restarts=0)]).status == {}
    r.tick(45, restarted)
    assert r.faults[0]["state"] == "Recovered" and r.faults[0]["recoverySeconds"] == 12.0


def test_kill_all_waits_for_nothing_and_skips_when_a_pod_is_down(whole):
    r = Run(whole)
    r.tick(30, [ALL_READY[0], DatabasePod("bench-g2-1", "b", False), ALL_READY[2]])
    assert r.faults[0]["state"] == "Skipped" and "bench-g2-1" in r.faults[0]["message"] and r.kills == []


def test_a_restart_between_kill_all_and_status_kills_the_same_pods_only(whole):
    r = Run(whole)
    r.tick(30, ALL_READY)
    before = dict(r.status)
    first = r.tick(33, ALL_READY)
    r.status = before  # the status patch after the kills was lost: the same preconditions again
    again = r.tick(35, [DatabasePod(p.name, p.uid, False, restarts=1) for p in ALL_READY])
    assert first.actions == again.actions and len(the(again, KillPods).kills) == 3
