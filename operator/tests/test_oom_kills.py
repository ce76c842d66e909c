"""A database killed at its memory limit: recorded once with a Warning Event, and named in the
message of whatever fails after it (here, as seen on the local cluster, a one-node VoltDB whose
restart came back without its rows: every acknowledged NewOrder lost)."""

from __future__ import annotations

import datetime as dt

import kubernetes
import pytest
from runner_docs import durability_report
from test_faults import RUN, START, at
from tpcc_operator import failures, kube
from tpcc_operator.faults import DatabasePod
from tpcc_operator.runspec import RunSpec
from tpcc_operator.stages.dispatch import next_step
from tpcc_operator.stages.machine import JobState, World, patched

KILLED_AT = "2025-01-01T12:03:30Z"
OOM_KILLED = DatabasePod("bench-g2-0", "a", True, restarts=1, oom_killed_at=KILLED_AT, memory_limit="2Gi")
NOTE = (
    "; database pod bench-g2-0 was OOMKilled at its memory limit 2Gi (2025-01-01T12:03:30Z): give it more "
    "memory (spec.database.deploy.values.resources.limits.memory) or a shorter run (a run adds rows for as "
    "long as it lasts)"
)


@pytest.fixture
def smoke(document_of):
    """crds/samples/voltdb-smoke.yaml's database, run longer."""
    return RunSpec.parse(
        document_of({"database": {"type": "voltdb", "deploy": {"replicas": 1}}, "workload": {"durationSeconds": 300}})
    )


def test_an_oom_kill_is_recorded_once_with_a_warning_and_named_when_the_durability_verdict_fails(smoke):
    status = {"phase": "Running", "observedGeneration": 2, "startAt": START, "stageStartTime": START}
    running = World(runner=JobState(exists=True), start_at=START, database_pods=[OOM_KILLED])
    first = next_step(RUN, smoke, status, running, at(215))
    status = patched(status, first.status)
    assert status["databaseOOMKills"] == [{"pod": "bench-g2-0", "finishedAt": KILLED_AT, "memoryLimit": "2Gi"}]
    warnings = [(e.type, e.reason, e.message) for e in first.events]
    killed = "database pod bench-g2-0 was OOMKilled at its memory limit 2Gi (2025-01-01T12:03:30Z)"
    assert warnings == [("Warning", "DatabaseOOMKilled", killed)]
    again = next_step(RUN, smoke, status, running, at(225))
    assert "databaseOOMKills" not in again.status and not again.events  # the same kill, seen again

    verifying = {**status, "phase": "Verifying"}
    lost = durability_report(527, lost=527, ledgers=1)
    verdict = World(database_pods=[OOM_KILLED], verifier=JobState(True, False, True, "exit 1"), durability_report=lost)
    step = next_step(RUN, smoke, verifying, verdict, at(400))
    assert (step.status["phase"], step.status["reason"]) == ("Failed", "DurabilityLost")
    assert step.status["message"].startswith("527 of 527 acknowledged NewOrders lost")
    assert step.status["message"].endswith(NOTE)
    failed = [e for e in step.events if e.reason == "DurabilityLost"]
    assert [e.type for e in failed] == ["Warning"] and failed[0].message.endswith(NOTE)


READY = {"type": "DatabaseReady", "status": "True", "lastTransitionTime": "2025-01-01T11:58:00Z"}
LOST = (
    "VoltDB with kSafety 0 keeps one copy of each partition: with a node killed the database restarted "
    "without its data, so the run stops here instead of measuring errors to the end"
)


@pytest.mark.parametrize("phase, condition", [("Running", "RunCompleted"), ("Loading", "Loaded")])
def test_a_voltdb_without_k_safety_killed_at_its_limit_ends_the_run_at_once(smoke, phase, condition):
    status = {"phase": phase, "observedGeneration": 2, "startAt": START, "stageStartTime": START, "conditions": [READY]}
    world = World(runner=JobState(exists=True), start_at=START, database_pods=[OOM_KILLED])
    step = next_step(RUN, smoke, status, world, at(215))
    assert (step.status["phase"], step.status["reason"]) == ("Failed", "DatabaseLost")
    assert step.status["message"] == LOST + NOTE
    [failed] = [c for c in step.status["conditions"] if c["type"] == condition]
    assert (failed["status"], failed["reason"]) == ("False", "DatabaseLost")
    assert [e.reason for e in step.events if e.type == "Warning"] == ["DatabaseOOMKilled", "DatabaseLost"]


def _running_after(spec: RunSpec, pod: DatabasePod, ready: dict = READY) -> dict:
    status = {"phase": "Running", "observedGeneration": 2, "startAt": START, "stageStartTime": START}
    world = World(runner=JobState(exists=True), start_at=START, database_pods=[pod])
    return next_step(RUN, spec, {**status, "conditions": [ready]}, world, at(215)).status


def test_a_database_that_survives_a_node_goes_on(document_of):
    def spec(database: dict) -> RunSpec:
        return RunSpec.parse(document_of({"database": database, "workload": {"durationSeconds": 300}}))

    k_safe = spec({"type": "voltdb", "deploy": {"replicas": 3, "kSafety": 1}})
    mongodb = spec({"type": "mongodb", "deploy": {"replicas": 3}})
    for survivor in (k_safe, mongodb):
        after = _running_after(survivor, OOM_KILLED)
        assert after.get("phase", "Running") == "Running" and after["databaseOOMKills"], after


def test_a_kill_before_the_database_was_ready_lost_nothing(smoke):
    # killed at 12:03:30 while its deployment (a sweep's next shape) was coming up, ready at 12:05
    redeployed = {**READY, "lastTransitionTime": "2025-01-01T12:05:00Z"}
    assert _running_after(smoke, OOM_KILLED, redeployed).get("phase", "Running") == "Running"
    not_ready = {**READY, "status": "False"}
    assert _running_after(smoke, OOM_KILLED, not_ready).get("phase", "Running") == "Running"
    # and a kill of the one that was ready, after it was
    assert _running_after(smoke, OOM_KILLED)["phase"] == "Failed"


def test_an_external_database_is_not_judged_by_pods_it_does_not_have(document_of):
    external = RunSpec.parse(document_of({"database": {"type": "voltdb", "external": {"endpoints": ["voltdb:21212"]}}}))
    kills = failures.new_oom_kills([], [OOM_KILLED])
    assert failures.lost_with_a_node(external, kills, READY["lastTransitionTime"]) is None


def test_a_run_whose_database_was_never_oom_killed_fails_without_the_note(smoke):
    healthy = DatabasePod("bench-g2-0", "a", True, restarts=1)  # restarted, by a fault or a crash
    status = {"phase": "Verifying", "observedGeneration": 2, "startAt": START, "stageStartTime": START}
    world = World(
        database_pods=[healthy],
        verifier=JobState(True, False, True, "exit 1"),
        durability_report=durability_report(10, lost=2, ledgers=1),
    )
    step = next_step(RUN, smoke, status, world, at(400))
    assert step.status["reason"] == "DurabilityLost" and "OOMKilled" not in step.status["message"]
    assert "databaseOOMKills" not in step.status


def test_each_kill_of_a_pod_is_new_once():
    again = DatabasePod("bench-g2-0", "a", True, restarts=2, oom_killed_at="2025-01-01T12:04:10Z", memory_limit="2Gi")
    recorded = failures.new_oom_kills([], [OOM_KILLED])
    assert failures.new_oom_kills(recorded, [OOM_KILLED]) == []
    assert failures.new_oom_kills(recorded, [again]) == [
        {"pod": "bench-g2-0", "finishedAt": "2025-01-01T12:04:10Z", "memoryLimit": "2Gi"}
    ]
    both = recorded + failures.new_oom_kills(recorded, [again])
    assert failures.oom_note(both).startswith(
        "; database pod bench-g2-0 was OOMKilled at its memory limit 2Gi (2025-01-01T12:03:30Z) and 1 more time(s): "
    )
    assert failures.oom_note([]) == ""


def _pod(last_reason: str | None, container: str = "voltdb") -> kubernetes.client.V1Pod:
    """A pod as the API returns it: its container's last end (lastState.terminated) with this reason."""
    finished = dt.datetime(2025, 1, 1, 12, 3, 30, tzinfo=dt.timezone.utc)
    ended = (
        kubernetes.client.V1ContainerState(
            terminated=kubernetes.client.V1ContainerStateTerminated(
                exit_code=137, reason=last_reason, finished_at=finished
            )
        )
        if last_reason
        else kubernetes.client.V1ContainerState()
    )
    status = kubernetes.client.V1ContainerStatus(
        name=container, image="local/voltdb:10.1.1", image_id="", ready=True, restart_count=1, last_state=ended
    )
    return kubernetes.client.V1Pod(status=kubernetes.client.V1PodStatus(container_statuses=[status]))


def test_only_the_database_containers_oom_kill_counts():
    assert kube._oom_killed_at(_pod("OOMKilled"), "voltdb") == KILLED_AT
    assert kube._oom_killed_at(_pod("Error"), "voltdb") == ""  # a kill-process fault: SIGKILL, exit 137
    assert kube._oom_killed_at(_pod(None), "voltdb") == ""
    assert kube._oom_killed_at(_pod("OOMKilled", container="sidecar"), "voltdb") == ""
