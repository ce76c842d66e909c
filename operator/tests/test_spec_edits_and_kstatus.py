"""kstatus conditions in every phase (read the way cli-utils' kstatus reads them), and spec
edits: what changes the measurement starts a new run, anything else applies in place and keeps
the results; a restart or resync never starts a run."""

from __future__ import annotations

import copy

import pytest
from runner_docs import results_status
from test_phases import Driver
from tpcc_operator import plan
from tpcc_operator.stages.actions import CleanUp, CreateRunJob, RetireOldGenerations
from tpcc_operator.stages.dispatch import next_step
from tpcc_operator.stages.generations import active_run
from tpcc_operator.stages.machine import JobState, World
from tpcc_operator.timestamps import rfc3339


def kstatus(generation: int, status: dict) -> str:
    """cli-utils pkg/kstatus/status for a custom resource: Current needs observedGeneration ==
    generation and Ready=True (if a Ready condition exists); Failed if Stalled=True;
    InProgress if Reconciling=True or Ready is not True."""
    c = {x["type"]: x["status"] for x in status.get("conditions") or []}
    if status.get("observedGeneration") != generation:
        return "InProgress"
    if c.get("Stalled") == "True":
        return "Failed"
    if c.get("Reconciling") == "True" or ("Ready" in c and c["Ready"] != "True"):
        return "InProgress"
    return "Current"


@pytest.fixture
def voltdb(document_of):
    return document_of({"database": {"type": "voltdb"}, "workload": {"clients": 8}, "runners": {"parallelism": 2}})


def every_condition_observes(d: Driver, generation: int) -> bool:
    return all(c["observedGeneration"] == generation for c in d.status["conditions"])


def test_working_phases_are_in_progress(voltdb):
    d = Driver(voltdb)
    seen = set()
    for world in (World(), World(), World(), World(database_ready=1), World()):
        d.tick(world)
        seen.add(d.phase)
        assert kstatus(2, d.status) == "InProgress"
        assert d.condition("Reconciling")["status"] == "True" and d.condition("Ready")["status"] == "Unknown"
        assert d.condition("Ready")["reason"] == d.phase and every_condition_observes(d, 2)
    assert seen == {"Pending", "Deploying", "Loading"}
    for phase in ("Running", "Verifying"):
        d.status["phase"] = phase
        d.tick(World(runner=JobState(exists=True)))
        assert kstatus(2, d.status) == "InProgress" and d.condition("Reconciling")["reason"] == phase


def test_an_idle_tick_patches_nothing(voltdb):
    d = Driver(voltdb)
    d.tick(), d.tick(), d.tick()
    assert d.tick(World(database_ready=0)).status == {}


def test_succeeded_is_current(voltdb):
    d = Driver(voltdb)
    d.tick()
    d.status.update(phase="Succeeded", completionTime=rfc3339(d.now))
    d.tick()
    assert kstatus(2, d.status) == "Current"
    assert d.condition("Ready")["status"] == "True"
    assert d.condition("Reconciling")["status"] == "False" and d.condition("Stalled")["status"] == "False"


def test_failed_is_stalled_with_the_reason(voltdb):
    voltdb["database"]["readyTimeoutSeconds"] = 60
    d = Driver(voltdb)
    d.tick(), d.tick(), d.tick()
    d.tick(World(database_waiting="bench-g2-0: Pending"), after=61)
    assert d.phase == "Failed" and kstatus(2, d.status) == "Failed"
    ready, stalled = d.condition("Ready"), d.condition("Stalled")
    assert ready["status"] == "False" and stalled["status"] == "True"
    assert ready["reason"] == stalled["reason"] == "DatabaseNotReady"
    assert stalled["message"] == d.status["message"] and every_condition_observes(d, 2)
    # the domain conditions stay
    assert d.condition("DatabaseReady")["status"] == "False" and d.condition("Succeeded")["status"] == "False"


# ---- spec edits -----------------------------------------------------------------------------------


def finished(spec: dict) -> Driver:
    d = Driver(spec)
    d.tick()
    d.status.update(
        phase="Succeeded",
        completionTime=rfc3339(d.now),
        results=results_status(100.0),
        consistency={"passed": True, "violated": [], "conditions": []},
        cleanedUp=True,
    )
    d.tick()
    return d


@pytest.mark.parametrize(
    "edit",
    [
        lambda s: s["cleanup"].update(policy="Always"),
        lambda s: s["cleanup"].update(ttlSecondsAfterFinished=600),
        lambda s: s.update(baselineTpmC=90.0),
    ],
)
def test_edits_that_measure_nothing_apply_in_place(voltdb, edit):
    voltdb["cleanup"]["policy"] = "Never"
    d = finished(voltdb)
    edit(d.spec)
    d.run = plan.Run("bench", "perf", "uid", 3)
    step = d.tick()
    assert RetireOldGenerations() not in step.actions
    assert d.phase == "Succeeded" and d.status["results"] == results_status(100.0)
    assert d.status["observedGeneration"] == 3 and d.status["runGeneration"] == 2
    assert every_condition_observes(d, 3) and kstatus(3, d.status) == "Current"
    assert [e.reason for e in step.events] == ["SpecUpdated"]
    # the run's objects keep their generation-2 names
    assert active_run(d.run, d.typed, d.status).prefix == "bench-g2"


def test_a_new_cleanup_policy_applies_to_a_finished_run(voltdb):
    voltdb["cleanup"]["policy"] = "Never"
    d = finished(voltdb)
    d.spec["cleanup"]["policy"] = "Always"
    d.run = plan.Run("bench", "perf", "uid", 3)
    d.tick()
    assert CleanUp() in d.tick().actions and d.status["cleanedUp"]
    assert CleanUp() not in d.tick().actions


@pytest.mark.parametrize(
    "edit",
    [
        lambda s: s["workload"].update(clients=16),
        lambda s: s["database"].update(readyTimeoutSeconds=900),
        lambda s: s["runners"].update(parallelism=4),
        lambda s: s.update(faults=[{"action": "kill-node", "podIndex": 0}]),
        lambda s: s["verify"].update(enabled=False),
    ],
)
def test_edits_that_change_the_measurement_start_a_new_run(voltdb, edit):
    d = finished(voltdb)
    edit(d.spec)
    d.run = plan.Run("bench", "perf", "uid", 3)
    step = d.tick()
    assert step.actions == [RetireOldGenerations()]
    assert d.phase == "Pending" and "results" not in d.status
    assert d.status["runGeneration"] == d.status["observedGeneration"] == 3
    assert active_run(d.run, d.typed, d.status).prefix == "bench-g3"
    assert kstatus(3, d.status) == "InProgress"


def test_an_edit_while_loading_keeps_the_load_going(voltdb):
    d = Driver(voltdb)
    d.tick(), d.tick(), d.tick()
    d.tick(World(database_ready=1))
    d.tick()
    assert d.phase == "Loading"
    d.spec["cleanup"]["ttlSecondsAfterFinished"] = 60
    d.run = plan.Run("bench", "perf", "uid", 3)
    step = d.tick(World(load=JobState(exists=True)))
    assert d.phase == "Loading" and step.actions == [] and d.status["observedGeneration"] == 3
    d.tick(World(load=JobState(exists=True, succeeded=True)))
    assert d.phase == "Running"
    assert d.tick().actions == [CreateRunJob()]  # named for generation 2, as active_run says


@pytest.mark.parametrize("phase", ["Pending", "Deploying", "Loading", "Running", "Verifying", "Succeeded", "Failed"])
def test_a_restart_or_resync_never_starts_a_run(voltdb, phase):
    d = Driver(voltdb)
    d.tick()
    d.status["phase"] = phase
    for _ in range(3):  # the same spec and status seen again, as after an operator restart
        step = next_step(d.run, d.typed, copy.deepcopy(d.status), World(), d.now)
        assert "RunStarted" not in [e.reason for e in step.events]
        assert RetireOldGenerations() not in step.actions


def test_a_status_from_before_spec_hashes_is_continued(voltdb):
    """An older operator's status: no specHash or runGeneration; same generation = same run."""
    d = Driver(voltdb)
    d.status = {"phase": "Loading", "observedGeneration": 2, "stageStartTime": rfc3339(d.now)}
    step = d.tick(World(load=JobState(exists=True)))
    assert d.phase == "Loading" and "RunStarted" not in [e.reason for e in step.events]
    assert active_run(d.run, d.typed, d.status).generation == 2
