"""The pause fault (a gray failure): its schedule and victim, its four ticks (stopped, resumed at
the end of its duration, recovered once the database has settled), and its undoing when the run
ends another way or is deleted."""

from __future__ import annotations

import datetime as dt

import pytest
from test_faults import ALL_READY, RUN, START, Run, at, pods
from test_phases import kinds, the
from tpcc_operator import faults, kube_actions, plan
from tpcc_operator.databases.mongodb import MONGODB
from tpcc_operator.databases.voltdb import VOLTDB
from tpcc_operator.faults import DatabasePod, Injection
from tpcc_operator.runspec import RunSpec
from tpcc_operator.stages.actions import HealFaults, KillPods
from tpcc_operator.stages.dispatch import next_step
from tpcc_operator.stages.machine import World

T0 = dt.datetime(2025, 1, 1, 12, 0, 0, tzinfo=dt.timezone.utc)


@pytest.fixture
def pause(document_of):
    return document_of(
        {
            "database": {"type": "voltdb", "deploy": {"replicas": 3, "kSafety": 1}},
            "workload": {"warmupSeconds": 10, "durationSeconds": 120},
            "faults": [
                {"action": "pause", "victim": "pod-index", "podIndex": 2, "afterSeconds": 20, "durationSeconds": 30}
            ],
        }
    )


def test_a_pause_is_scheduled_with_its_duration_and_victim(pause):
    (inj,) = faults.schedule(RunSpec.parse(pause), T0)
    assert (inj.action, inj.method, inj.duration_seconds, inj.victim, inj.pod_index) == (
        "pause",
        "sigstop",
        30,
        "pod-index",
        2,
    )
    assert (inj.due - T0).total_seconds() == 30  # 10 s warmup + 20 s


def test_a_pause_takes_the_victim_it_names():
    by_index = Injection(1, "pause", T0, 0, 1, faults.SIGSTOP, 30, "pod-index")
    assert faults.choose_victim(by_index, faults.Members(VOLTDB, "bench-g2", ALL_READY, None, "s")).name == "bench-g2-1"
    primary = Injection(1, "pause", T0, 0, 0, faults.SIGSTOP, 30, "primary")
    assert (
        faults.choose_victim(primary, faults.Members(MONGODB, "bench-g2", ALL_READY, "bench-g2-2", "s")).name
        == "bench-g2-2"
    )
    assert (
        faults.choose_victim(primary, faults.Members(MONGODB, "bench-g2", ALL_READY, None, "s"))
        == "no mongodb member names a primary"
    )
    # VoltDB has no primary: a random member, as random-member takes
    anyone = Injection(1, "pause", T0, 0, 0, faults.SIGSTOP, 30, "random-member")
    assert faults.choose_victim(
        primary, faults.Members(VOLTDB, "bench-g2", ALL_READY, None, "u")
    ) == faults.choose_victim(anyone, faults.Members(VOLTDB, "bench-g2", ALL_READY, None, "u"))


def heals(step) -> tuple[faults.Kill, ...]:
    return the(step, HealFaults).heals if HealFaults in kinds(step.actions) else ()


def test_a_pause_stops_then_resumes_then_recovers_once_the_database_settled(pause):
    victim = DatabasePod("bench-g2-2", "c", True, restarts=1)
    members = ALL_READY[:2] + [victim]
    r = Run(pause)
    r.tick(30, members)
    assert r.faults[0] | {} == {
        "number": 1,
        "action": "pause",
        "method": "sigstop",
        "dueTime": "2025-01-01T12:00:30Z",
        "gracePeriodSeconds": 0,
        "state": "Injecting",
        "target": "bench-g2-2",
        "targetUID": "c",
        "targetRestarts": 1,
        "durationSeconds": 30,
    }
    step = r.tick(33, members)
    assert step.actions == [KillPods((faults.Kill("bench-g2-2", "c", 0, "sigstop", 1),))]
    assert r.faults[0]["state"] == "Injected" and r.faults[0]["injectedTime"] == "2025-01-01T12:00:33Z"
    assert "stopped the database process of pod bench-g2-2 (SIGSTOP) for 30s" in r.events[0].message
    # stopped: the pod may stay Ready (the kernel still accepts on its port) or not; nothing until 30 s
    assert r.tick(50, members).status == {} and r.tick(62, ALL_READY[:2]).status == {}
    step = r.tick(63, members)
    assert heals(step) == (faults.Kill("bench-g2-2", "c", 0, "sigstop", 1),)
    assert r.faults[0]["state"] == "Healed" and r.faults[0]["healedTime"] == "2025-01-01T12:01:03Z"
    assert "resumed the database process of pod bench-g2-2 (SIGCONT) after 30s" in r.events[-1].message
    # the database's reaction shows within SETTLE_SECONDS: here VoltDB stops the dropped node,
    # its container restarts; recovered once every pod is Ready after the settling
    restarting = ALL_READY[:2] + [DatabasePod("bench-g2-2", "c", False, restarts=2)]
    assert r.tick(66, members).status == {}  # Ready, but too soon to say
    assert r.tick(73, restarting).status == {}
    assert faults.in_progress(r.faults)
    r.tick(76, ALL_READY[:2] + [DatabasePod("bench-g2-2", "c", True, restarts=2)])
    entry = r.faults[0]
    assert (entry["state"], entry["recoverySeconds"], entry["restartCount"]) == ("Recovered", 43.0, 2)
    assert "(its container restarted: restartCount 1 -> 2)" in r.events[-1].message
    assert [e.reason for e in r.events] == ["FaultInjected", "FaultHealed", "FaultRecovered"]


def test_a_pause_the_database_rode_through_recovers_without_a_restart(pause):
    r = Run(pause)
    r.tick(30, ALL_READY), r.tick(33, ALL_READY), r.tick(63, ALL_READY)
    r.tick(73, ALL_READY)
    assert r.faults[0]["state"] == "Recovered" and r.faults[0]["restartCount"] == 0
    assert r.events[-1].message.endswith("is back and ready after 40.0s")


def test_a_restart_between_the_heal_and_its_status_resumes_again(pause):
    """SIGCONT is harmless twice: the heal is repeated when its status was lost."""
    r = Run(pause)
    r.tick(30, ALL_READY), r.tick(33, ALL_READY)
    before = dict(r.status)
    first = r.tick(63, ALL_READY)
    r.status = before
    again = r.tick(64, ALL_READY)
    assert heals(first) == heals(again) != ()


def test_the_next_injection_waits_for_the_pause_to_recover(pause):
    pause["faults"][0].update(count=2, everySeconds=40, durationSeconds=30)
    r = Run(pause)
    r.tick(30, ALL_READY), r.tick(33, ALL_READY)
    assert r.tick(62, ALL_READY).status == {}
    r.tick(70, ALL_READY)  # the second is due at 70 s: the first is healed, not yet recovered
    assert [f["state"] for f in r.faults] == ["Healed"]
    r.tick(80, ALL_READY)
    r.tick(81, ALL_READY)
    assert [f["state"] for f in r.faults] == ["Recovered", "Injecting"]


def failed_while_paused(pause) -> tuple[RunSpec, dict]:
    r = Run(pause)
    r.tick(30, ALL_READY), r.tick(33, ALL_READY)
    status = {
        **r.status,
        "phase": "Failed",
        "reason": "TooManyErrors",
        "completionTime": "2025-01-01T12:00:40Z",
        "verdict": "Failed",
    }
    return RunSpec.parse(pause), status


def test_a_run_that_ends_while_paused_resumes_its_member(pause):
    spec, status = failed_while_paused(pause)
    step = next_step(RUN, spec, status, World(), at(40))
    assert heals(step) == (faults.Kill("bench-g2-2", "c", 0, "sigstop", 0),)
    assert kinds(step.actions)[0] is HealFaults  # before the runners are released and the release goes
    entry = step.status["faults"][0]
    assert (entry["state"], entry["healedTime"]) == ("Healed", "2025-01-01T12:00:40Z")
    assert "healed at the end of the run" in [e.message for e in step.events if e.reason == "FaultHealed"][0]
    # once: the status says cleanedUp and Healed
    after = {**status, **step.status}
    assert heals(next_step(RUN, spec, after, World(), at(43))) == ()


def test_the_finalizer_finds_the_pause_to_undo():
    injected = [{"number": 1, "action": "pause", "method": "sigstop", "state": "Injected", "target": "p-0"}]
    injected[0] |= {"targetUID": "u", "targetRestarts": 3, "durationSeconds": 30}
    entries, to_heal = faults.unhealed(injected, T0)
    assert to_heal == [faults.Kill("p-0", "u", 0, "sigstop", 3)] and entries is not None
    assert entries[0]["state"] == "Healed" and injected[0]["state"] == "Injected"  # a copy
    for state in ("Healed", "Recovered", "Skipped"):
        assert faults.unhealed([{**injected[0], "state": state}], T0) == (None, [])
    killed = [{"number": 1, "action": "kill-node", "state": "Injected", "target": "p-0", "targetUID": "u"}]
    assert faults.unhealed(killed, T0) == (None, [])


def test_a_pause_due_after_the_window_is_skipped(pause):
    r = Run(pause)
    r.tick(30, ALL_READY)
    r.tick(131, ALL_READY)  # the measured interval ended at 130 s before the stop was sent
    assert r.faults[0]["state"] == "Skipped" and not r.kills


def test_no_pods_while_stopped_is_still_waiting(pause):
    r = Run(pause)
    r.tick(30, ALL_READY), r.tick(33, ALL_READY), r.tick(63, ALL_READY)
    assert r.tick(80, pods(("bench-g2-0", "a", True), ("bench-g2-1", "b", True))).status == {}  # victim gone
    assert START  # the run's startAt the ticks count from


def test_throughput_recovery_is_the_first_step_back_within_ten_percent(pause):
    spec = RunSpec.parse(pause)  # warmup 10 s: the measured interval starts at T0 + 10 s
    timeline = [
        {"t": -10, "tpmC": 10.0},  # warmup: not the level
        {"t": 0, "tpmC": 100.0},
        {"t": 10, "tpmC": 110.0},  # level: 105 (the steps that ended before the fault)
        {"t": 20, "tpmC": 40.0},  # the fault at t=23 falls in this step
        {"t": 30, "tpmC": 0.0},
        {"t": 40, "tpmC": 90.0},  # below 94.5
        {"t": 50, "tpmC": 95.0},  # back
    ]
    fault = T0 + dt.timedelta(seconds=33)
    assert faults.throughput_recovery(spec, T0, fault, timeline) == 27.0  # t=50 - t=23
    assert faults.throughput_recovery(spec, T0, fault, timeline[:-1]) is None  # never back
    assert faults.throughput_recovery(spec, T0, T0 + dt.timedelta(seconds=15), timeline) is None  # no level yet
    recovered = {"number": 1, "action": "pause", "state": "Recovered", "injectedTime": "2025-01-01T12:00:33Z"}
    entries = faults.with_throughput_recovery(spec, [recovered, {**recovered, "state": "Skipped"}], T0, timeline)
    assert entries is not None and entries[0]["throughputRecoverySeconds"] == 27.0
    assert "throughputRecoverySeconds" not in entries[1]
    assert faults.with_throughput_recovery(spec, entries, T0, timeline) is None  # once


def test_the_verifying_stage_records_the_throughput_recovery_once_the_results_are_in(pause):
    r = Run(pause)
    r.tick(30, ALL_READY), r.tick(33, ALL_READY), r.tick(63, ALL_READY), r.tick(73, ALL_READY)
    assert r.faults[0]["state"] == "Recovered" and "throughputRecoverySeconds" not in r.faults[0]
    timeline = [{"t": t, "tpmC": 100.0 if t < 23 or t >= 40 else 0.0} for t in range(0, 120, 10)]
    verifying = {**r.status, "phase": "Verifying", "stageStartTime": "2025-01-01T12:02:11Z"}
    verifying["results"] = {"tpmC": 90.0, "timeline": timeline}
    world = World(database_pods=ALL_READY, database_ready=3, start_at=START)
    step = next_step(RUN, RunSpec.parse(pause), verifying, world, at(131))
    assert step.status["faults"][0]["throughputRecoverySeconds"] == 17.0  # injected at t=23, back at t=40


class _Pod:
    """What kill_process reads of the victim pod: its UID and its container's restartCount."""

    def __init__(self, uid: str, restarts: int):
        self.metadata = type("M", (), {"uid": uid, "name": "", "deletion_timestamp": None})()
        self.status = type(
            "S", (), {"container_statuses": [type("C", (), {"name": "voltdb", "restart_count": restarts})()]}
        )()


def test_a_signal_goes_through_the_one_exec_with_its_short_timeout(monkeypatch):
    calls = []

    def exec_(namespace, pod, container, command, what, timeout_seconds=60):
        calls.append((namespace, pod, container, command, what, timeout_seconds))
        return outputs.pop(0)

    outputs = ["", "sh: kill: No such process\n"]
    api = type("Core", (), {"read_namespaced_pod": lambda self, name, ns: _Pod("u2", 1)})()
    monkeypatch.setattr(kube_actions, "core", lambda: api)
    monkeypatch.setattr(kube_actions, "_exec", exec_)
    stop = faults.Kill("p-2", "u2", 0, "sigstop", 1)
    assert kube_actions.kill_process("ns", stop, "voltdb", plan.PAUSE_PROCESS_COMMAND)
    assert calls == [("ns", "p-2", "voltdb", list(plan.PAUSE_PROCESS_COMMAND), "pause in pod p-2", 30)]
    with pytest.raises(kube_actions.CallFailed) as e:  # kill printed: nothing was stopped
        kube_actions.kill_process("ns", stop, "voltdb", plan.PAUSE_PROCESS_COMMAND)
    assert (e.value.error.reason, e.value.error.permanent) == ("FaultNotInjected", True)
    # the container restarted since the victim was chosen: no exec at all
    assert not kube_actions.kill_process("ns", faults.Kill("p-2", "u2", 0, "sigstop", 0), "voltdb")
    assert len(calls) == 2
