"""The phase machine's vocabulary: phases and their order, what the timer observed (World,
JobState), the Step it gets back (a status patch, the actions of actions.py, Events), and the
Builder every stage writes its Step with (moves only forward, conditions, events, failing the run).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from .. import failures, history, regression
from .. import faults as fault_injection
from ..history import GitSource
from ..runstatus import RunnerTarget
from ..timestamps import parse_time, rfc3339
from .actions import Action

PENDING, DEPLOYING, LOADING, RUNNING, VERIFYING = "Pending", "Deploying", "Loading", "Running", "Verifying"
SUCCEEDED, FAILED = "Succeeded", "Failed"
ORDER = (PENDING, DEPLOYING, LOADING, RUNNING, VERIFYING, SUCCEEDED)
TERMINAL = (SUCCEEDED, FAILED)


def can_move(current: str | None, new: str) -> bool:
    """Forward only: Failed from any non-terminal phase, otherwise along ORDER (skips allowed,
    e.g. an external database skips Deploying)."""
    if current is None:
        return new == PENDING
    if current == new:
        return True
    if current in TERMINAL:
        return False
    if new == FAILED:
        return True
    return ORDER.index(new) > ORDER.index(current)


@dataclass
class JobState:
    exists: bool = False
    succeeded: bool = False
    failed: bool = False
    message: str = ""  # why it failed (the pod's one-line error, or the Job condition)


@dataclass
class World:
    """What the timer observed for the current phase (fields of other phases stay default)."""

    database_ready: int = 0  # Ready pods of the deployed database
    database_waiting: str = ""  # why a database pod is not ready (e.g. "db-0: ErrImagePull")
    load: JobState = field(default_factory=JobState)
    load_report: dict | None = None  # the load Job's load.json: rows, seconds
    load_check_report: dict | None = None  # verify.afterLoad: the load Job's load-check.json
    runner: JobState = field(default_factory=JobState)
    runners_ready: int = 0  # Ready runner pods (connected, waiting at the barrier)
    start_at: str | None = None  # startAt found in the start ConfigMap
    results: dict[int, dict] = field(default_factory=dict)  # shard -> results.json
    runner_pod_ips: dict[int, str] = field(default_factory=dict)  # running runner pods: shard -> IP
    midcheck: JobState = field(default_factory=JobState)  # verify.duringRun
    midcheck_report: dict | None = None  # midcheck.json
    verifier: JobState = field(default_factory=JobState)
    durability_report: dict | None = None  # durability.json
    checker: JobState = field(default_factory=JobState)
    check_report: dict | None = None  # check.json
    acid: JobState = field(default_factory=JobState)  # with spec.verify.acid
    acid_report: dict | None = None  # acid.json
    # with spec.faults, while Running and Verifying:
    database_pods: list[fault_injection.DatabasePod] = field(default_factory=list)
    primary: str | None = None  # MongoDB: the pod the replica set names primary
    busy_nodes: frozenset[str] = frozenset()  # a node-loss due: the operator's and the runners' nodes
    runner_pods: tuple[RunnerTarget, ...] = ()  # a partition with the runners on its cut-off side due
    # the pods of the phase's workload (database pods while Deploying, else the phase's Job)
    pods: list[failures.PodState] = field(default_factory=list)
    largest_node: dict[str, float] = field(default_factory=dict)  # with an unscheduled pod: cpu, memory
    failed_creates: list[str] = field(default_factory=list)  # while pods are missing: why not created
    # finished, not yet judged: the run's BenchmarkResults, the named baseline, the database's
    # images, the GitOps source (results: the runner pods' documents, for the full results)
    history: list[history.Entry] = field(default_factory=list)
    named_baseline: regression.Summary | None = None
    analyzer: JobState = field(default_factory=JobState)  # with spec.regression.changePoints
    change_points: dict | None = None  # changepoints.json
    database_images: list[str] = field(default_factory=list)
    git: GitSource | None = None


@dataclass
class Event:
    type: str  # Normal | Warning
    reason: str
    message: str


@dataclass
class Step:
    status: dict[str, Any] = field(default_factory=dict)  # merge patch for .status
    actions: list[Action] = field(default_factory=list)  # each carries what it needs (actions.py)
    events: list[Event] = field(default_factory=list)


def patched(status: dict, patch: dict) -> dict:
    """status after a JSON merge patch of its top-level fields (None removes a field)."""
    out = {**status, **patch}
    return {k: v for k, v in out.items() if v is not None}


def condition_of(status: dict, type_: str) -> dict | None:
    """The status's condition of that type, if it has one."""
    return next((c for c in status.get("conditions") or [] if c["type"] == type_), None)


def set_condition(
    conditions: list[dict],
    type_: str,
    status: bool | None,
    reason: str,
    message: str,
    generation: int,
    now: dt.datetime,
) -> list[dict]:
    """Conditions with `type_` set (None: "Unknown"); lastTransitionTime changes only when the
    status does."""
    value = "Unknown" if status is None else "True" if status else "False"
    out, old = [], None
    for c in conditions:
        if c["type"] == type_:
            old = c
        else:
            out.append(c)
    since = old["lastTransitionTime"] if old is not None and old.get("status") == value else rfc3339(now)
    out.append(
        {
            "type": type_,
            "status": value,
            "reason": reason,
            "message": message,
            "observedGeneration": generation,
            "lastTransitionTime": since,
        }
    )
    return out


class Builder:
    """Accumulates one Step from the current status."""

    def __init__(self, status: dict, generation: int, now: dt.datetime):
        self.phase = status.get("phase")
        self.status = status
        self.generation = generation
        self.now = now
        self.step = Step()

    def act(self, action: Action) -> None:
        self.step.actions.append(action)

    def event(self, reason: str, message: str, warning: bool = False) -> None:
        self.step.events.append(Event("Warning" if warning else "Normal", reason, message))

    def condition(self, type_: str, ok: bool | None, reason: str, message: str) -> None:
        current = self.step.status.get("conditions", self.status.get("conditions") or [])
        self.step.status["conditions"] = set_condition(current, type_, ok, reason, message, self.generation, self.now)

    def move(self, phase: str, reason: str, message: str) -> None:
        if not can_move(self.phase, phase):
            raise ValueError(f"phase may not move from {self.phase} to {phase}")
        self.step.status.update(phase=phase, stageStartTime=rfc3339(self.now), message=message)
        if phase in TERMINAL:
            self.step.status["completionTime"] = rfc3339(self.now)
            self.condition("Succeeded", phase == SUCCEEDED, reason, message)
        self.event(reason, message, warning=phase == FAILED)
        self.phase = phase

    def fail(self, reason: str, message: str) -> Step:
        """Failed, the message naming any OOM kill of the database (what a loss, a runner's
        error or a database not back may come from)."""
        message += failures.oom_note(self.current("databaseOOMKills") or [])
        self.step.status.update(reason=reason, message=message)
        self.move(FAILED, reason, message)
        return self.step

    def current(self, key: str) -> Any:
        """A status field as this step leaves it."""
        return self.step.status.get(key, self.status.get(key))

    def next_cell(self, phase: str, reason: str, message: str) -> None:
        """A sweep's next cell begins where its work begins (Deploying, Loading or Running): the
        one move back, as the (cell, phase) pair still only moves forward."""
        if self.phase != VERIFYING or phase not in (DEPLOYING, LOADING, RUNNING):
            raise ValueError(f"a sweep moves to its next cell from {VERIFYING}, not {self.phase}")
        self.step.status.update(phase=phase, stageStartTime=rfc3339(self.now), message=message)
        self.event(reason, message)
        self.phase = phase

    def elapsed(self) -> float:
        started = self.status.get("stageStartTime")
        return (self.now - parse_time(started)).total_seconds() if started else 0.0
