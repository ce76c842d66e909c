"""The run's state machine: (spec, status, observed world, now) -> the next Step.

Pure: no cluster access. The timer observes the world, asks `next_step`, performs the Step's
actions (each idempotent: deterministic names, create-if-absent) and only then writes the
Step's status, so a crash between the two repeats the actions harmlessly. A phase only moves
forward. A spec edit that changes what is measured (status.specHash) starts a new run from
Pending; any other edit applies in place to the run under way, whose objects keep the names of
the generation that started it (status.runGeneration). Every step also keeps the kstatus
conditions (Reconciling, Ready, Stalled) that GitOps tools read.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from tpcc_runner.results import merge_results
from tpcc_runner.ycsb.results import merge as merge_ycsb

from . import failures, history, plan, regression, saturation, sweep, waiting
from . import faults as fault_injection
from .cost import cost_status
from .history import GitSource
from .results import (
    acid_status,
    consistency_status,
    durability_status,
    during_run_status,
    error_budget_message,
    late_runners_message,
    load_status,
    run_deliveries,
    run_status,
    ycsb_durability_status,
)
from .runspec import RunSpec
from .timestamps import parse_time, rfc3339

PENDING, DEPLOYING, LOADING, RUNNING, VERIFYING = "Pending", "Deploying", "Loading", "Running", "Verifying"
SUCCEEDED, FAILED = "Succeeded", "Failed"
ORDER = (PENDING, DEPLOYING, LOADING, RUNNING, VERIFYING, SUCCEEDED)
TERMINAL = (SUCCEEDED, FAILED)


class Action(str, enum.Enum):
    """What the timer must do before recording the step's status."""

    RETIRE_OLD_GENERATIONS = "retire-old-generations"  # a new generation supersedes older runs
    CREATE_RUN_OBJECTS = "create-run-objects"  # runner RBAC + ConfigMaps
    INSTALL_DATABASE = "install-database"  # helm upgrade --install
    CREATE_LOAD_JOB = "create-load-job"
    CREATE_RUN_JOB = "create-run-job"
    CREATE_MIDCHECK_JOB = "create-midcheck-job"  # verify.duringRun: the check half-way through the run
    WRITE_START_AT = "write-start-at"  # release the barrier: startAt in the start ConfigMap
    CREATE_VERIFY_JOB = "create-verify-job"  # durability: the ledgers of all runner pods
    RELEASE_RUNNERS = "release-runners"  # ledgersVerified: the runner pods may exit
    WRITE_DELIVERIES = "write-deliveries"  # the runs' Deliveries for condition 11 -> check ConfigMap
    CREATE_CHECK_JOB = "create-check-job"
    CREATE_ACID_JOB = "create-acid-job"  # spec.verify.acid: the ACID tests after the check
    CREATE_ANALYSIS_JOB = "create-analysis-job"  # change points: history.json -> check ConfigMap, then the Job
    KILL_POD = "kill-pod"  # fault injection: kill the chosen database pod(s)
    WRITE_RESULT = "write-result"  # the finished run's BenchmarkResult + its ConfigMap
    PRUNE_RESULTS = "prune-results"  # the run's oldest BenchmarkResults beyond history.limit
    CLEAN_UP = "clean-up"  # per cleanup.policy
    DELETE_RUN = "delete-run"  # ttlSecondsAfterFinished elapsed


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
    actions: list[Action] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    start_at: str | None = None  # with WRITE_START_AT
    kills: list[fault_injection.Kill] = field(default_factory=list)  # with KILL_POD: one pod, or all
    ledger_pods: dict[int, str] = field(default_factory=dict)  # with CREATE_VERIFY_JOB: shard -> pod IP
    result: history.ResultRecord | None = None  # with WRITE_RESULT
    prune: list[str] = field(default_factory=list)  # with PRUNE_RESULTS: BenchmarkResult names
    deliveries: dict = field(default_factory=dict)  # with WRITE_DELIVERIES: deliveries.json
    earlier_cells: tuple[int, ...] = ()  # with CREATE_CHECK_JOB in a sweep: cells on the same load
    analysis_input: list[dict] = field(default_factory=list)  # with CREATE_ANALYSIS_JOB: history.json
    max_pvalue: float = 0.0  # with CREATE_ANALYSIS_JOB


def patched(status: dict, patch: dict) -> dict:
    """status after a JSON merge patch of its top-level fields (None removes a field)."""
    out = {**status, **patch}
    return {k: v for k, v in out.items() if v is not None}


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


class _Builder:
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
        self.step.status.update(reason=reason, message=message)
        self.move(FAILED, reason, message)
        return self.step

    def current(self, key: str) -> Any:
        """A status field as this step leaves it."""
        return self.step.status.get(key, self.status.get(key))

    def next_cell(self, phase: str, reason: str, message: str) -> None:
        """A sweep's next cell begins where its work begins (Loading or Running): the one move
        back, as the (cell, phase) pair still only moves forward."""
        if self.phase != VERIFYING or phase not in (LOADING, RUNNING):
            raise ValueError(f"a sweep moves to its next cell from {VERIFYING}, not {self.phase}")
        self.step.status.update(phase=phase, stageStartTime=rfc3339(self.now), message=message)
        self.event(reason, message)
        self.phase = phase

    def elapsed(self) -> float:
        started = self.status.get("stageStartTime")
        return (self.now - parse_time(started)).total_seconds() if started else 0.0


# The parts of the spec that shape the measurement: editing any of them starts a new run.
MEASURED = ("database", "workload", "runners", "faults", "verify")


def spec_hash(spec: RunSpec) -> str:
    """The measured spec, and spec.sweep and spec.runToken when set (a new token re-runs an
    unchanged spec; absent, the hash is what it was before they existed, so no finished run
    restarts)."""
    measured = {k: spec.section(k) for k in MEASURED}
    for optional in ("sweep", "runToken"):
        if spec.section(optional):
            measured[optional] = spec.section(optional)
    return hashlib.sha256(json.dumps(measured, sort_keys=True).encode()).hexdigest()[:16]


def run_generation(status: dict) -> int | None:
    """The generation whose objects the run under way uses (a status written before
    runGeneration existed: its observedGeneration)."""
    return status.get("runGeneration", status.get("observedGeneration"))


def starts_new_run(spec: RunSpec, status: dict, generation: int) -> bool:
    """A new run when there is none yet or the measured part of the spec changed. A status
    without specHash (an older operator's) compares generations as that operator did."""
    if not status.get("phase"):
        return True
    if status.get("specHash") is None:
        return status.get("observedGeneration") != generation
    return status["specHash"] != spec_hash(spec)


def active_run(run: plan.Run, spec: RunSpec, status: dict) -> plan.Run | None:
    """The run whose objects exist: `run` (metadata.generation) under the generation that
    started it; None when this tick starts a new run."""
    if starts_new_run(spec, status, run.generation):
        return None
    return _under_way(run, status)


def _under_way(run: plan.Run, status: dict) -> plan.Run:
    generation = run_generation(status)
    assert generation is not None, "a run under way has its generation in status"
    return dataclasses.replace(run, generation=generation)


def new_run(spec: RunSpec, status: dict, generation: int, now: dt.datetime) -> Step:
    """A new measurement: forget the previous run's status and retire its objects."""
    step = Step()
    if status.get("observedGeneration") is not None:
        step.actions.append(Action.RETIRE_OLD_GENERATIONS)
    cleared = {k: None for k in status if k not in ("phase",)}
    cells = plan.sweep_cells(spec)
    step.status = {
        **cleared,
        "phase": PENDING,
        "observedGeneration": generation,
        "runGeneration": generation,
        "specHash": spec_hash(spec),
        "startTime": rfc3339(now),
        "stageStartTime": rfc3339(now),
        "conditions": [],
        "message": waiting.message("creating the run's objects", rfc3339(now)),
        **({"sweep": sweep.initial(cells, plan.sweep_plan(spec, cells))} if cells else {}),
    }
    w = spec.workload
    axes = "".join(f" x {len(a.values)} {a.field}" for a in ((spec.sweep and spec.sweep.matrix) or ()))
    size = (
        f"a sweep of {len(cells)} cells ({sorted({c.warehouses for c in cells})} warehouses x "
        f"{sorted({c.clients for c in cells})} clients{axes} x {spec.sweep.repetitions}) on "
        f"{sum(c.loads for c in cells)} loads"
        if spec.sweep
        else f"{w.warehouses} warehouses, {w.clients} clients"
    )
    step.events.append(
        Event(
            "Normal",
            "RunStarted",
            f"generation {generation}: {spec.database.type}, {size} on {spec.runners.parallelism} runner pods",
        )
    )
    late = fault_injection.outside_window(spec)
    if late:
        step.events.append(
            Event(
                "Warning",
                "FaultsOutsideWindow",
                f"fault injections {late} are due after the measured interval and will not be injected",
            )
        )
    return step


def _inject_faults(b: _Builder, run: plan.Run, spec: RunSpec, world: World) -> None:
    """One move of fault injection (see faults.py), while the runners measure and, for
    recovery only, before the consistency check."""
    start_at = b.status.get("startAt") or b.step.status.get("startAt")
    if not spec.faults or not start_at:
        return
    d = fault_injection.decide(
        spec,
        b.status.get("faults") or [],
        parse_time(start_at),
        b.now,
        plan.release_name(run),
        world.database_pods,
        world.primary,
        run.uid,
    )
    if d.faults is not None:
        b.step.status["faults"] = d.faults
    if d.kills:
        b.act(Action.KILL_POD)
        b.step.kills = d.kills
    for type_, reason, message in d.events:
        b.step.events.append(Event(type_, reason, message))


def next_step(run: plan.Run, spec: RunSpec, status: dict, world: World, now: dt.datetime) -> Step:
    """`run` carries metadata.generation; the run under way may have started at an earlier one."""
    if starts_new_run(spec, status, run.generation):
        step = new_run(spec, status, run.generation, now)
    else:
        b = _Builder(status, run.generation, now)
        if status.get("observedGeneration") != run.generation:
            _apply_in_place(b)
        cells = plan.sweep_cells(spec)
        cell = plan.current_cell(spec, status)
        measured = plan.cell_spec(spec, cell)  # a sweep's cell measures its own workload
        under_way = plan.cell_run(_under_way(run, status), cell)
        search = saturation.Search.of(spec)  # the sweep's, which the cell's own spec has not
        step = _fail_fast(b, measured, world) or _advance(b, under_way, measured, world, cells, search)
        _say_what_it_waits_for(step, under_way, measured, status, world)
    return with_kstatus(step, status, run.generation, now)


def _say_what_it_waits_for(step: Step, run: plan.Run, spec: RunSpec, status: dict, world: World) -> None:
    """status.message of a run that stays in its phase: what it waits for and since when (a step
    that moves the run says where it moved, in move())."""
    if "stageStartTime" in step.status:
        return
    after = patched(status, step.status)
    text = waiting.describe(after["phase"], run, spec, after, world)
    if text:
        wanted = waiting.message(text, after.get("stageStartTime"))
        if wanted != status.get("message"):
            step.status["message"] = wanted


def _apply_in_place(b: _Builder) -> None:
    """An edit that does not change what is measured (cleanup, ttl, baseline): the run goes on
    with its results; a finished run applies the (maybe new) cleanup policy again."""
    old = b.status.get("observedGeneration")
    b.step.status["observedGeneration"] = b.generation
    b.step.status["conditions"] = [{**c, "observedGeneration": b.generation} for c in b.status.get("conditions") or []]
    if b.phase in TERMINAL and b.status.get("cleanedUp"):
        b.step.status["cleanedUp"] = None
    b.event(
        "SpecUpdated",
        f"generation {b.generation} applied in place (the measured spec is "
        f"unchanged since generation {old}); run objects keep their names",
    )


# The condition a phase's failure turns False.
PHASE_CONDITION = {
    DEPLOYING: "DatabaseReady",
    LOADING: "Loaded",
    RUNNING: "RunCompleted",
    VERIFYING: "ConsistencyVerified",
}


def _fail_fast(b: _Builder, spec: RunSpec, world: World) -> Step | None:
    """Permanent problems found before the phase's own logic: a spec the API server would
    refuse, a pod that will never start (bad image, missing Secret)."""
    if b.phase == PENDING:
        problems = failures.spec_problems(spec)
        if problems:
            return b.fail("InvalidSpec", "; ".join(problems))
    if b.phase in PHASE_CONDITION:
        stuck = failures.stuck_pod(world.pods, image_only=b.phase == DEPLOYING)
        if stuck:
            reason = failures.stuck_reason(stuck)
            b.condition(PHASE_CONDITION[b.phase], False, reason, stuck)
            return b.fail(reason, stuck)
        refused = failures.creation_refused(world.failed_creates)
        if refused:
            b.condition(PHASE_CONDITION[b.phase], False, "PodRefused", refused)
            return b.fail("PodRefused", refused)
        placed = failures.scheduling(world.pods, world.largest_node)
        if placed and placed.permanent:
            b.condition(PHASE_CONDITION[b.phase], False, placed.reason, placed.message)
            return b.fail(placed.reason, placed.message)
    return None


# The phase an action belongs to (whose condition its permanent failure turns False).
ACTION_PHASE = {
    Action.INSTALL_DATABASE: DEPLOYING,
    Action.CREATE_LOAD_JOB: LOADING,
    Action.CREATE_RUN_JOB: RUNNING,
    Action.WRITE_START_AT: RUNNING,
    Action.CREATE_MIDCHECK_JOB: RUNNING,
    Action.CREATE_CHECK_JOB: VERIFYING,
    Action.CREATE_ACID_JOB: VERIFYING,
}
# Actions that clean up: their failures never change the run's verdict.
CLEANUP_ACTIONS = (Action.RETIRE_OLD_GENERATIONS, Action.CLEAN_UP, Action.DELETE_RUN)


def spec_unreadable(run: plan.Run, status: dict, message: str, now: dt.datetime) -> Step:
    """A spec the typed model cannot read (the CRD admits none; an older CRD might): the run
    ends Failed with reason InvalidSpec and the field named, once."""
    b = _Builder(status, run.generation, now)
    if b.phase in TERMINAL:
        return Step()
    if b.phase is None:
        b.move(PENDING, "Pending", "reading the spec")
    return with_kstatus(b.fail("InvalidSpec", message), status, run.generation, now)


def action_failed(run: plan.Run, status: dict, action: Action, error: failures.ActionError, now: dt.datetime) -> Step:
    """A permanent failure of one of the run's actions ends the run Failed (`run` carries
    metadata.generation). Transient and cleanup failures are retried and change nothing."""
    b = _Builder(status, run.generation, now)
    if not error.permanent or action in CLEANUP_ACTIONS or b.phase in TERMINAL or not b.phase:
        return Step()
    if action in ACTION_PHASE:
        b.condition(PHASE_CONDITION[ACTION_PHASE[action]], False, error.reason, error.message)
    return with_kstatus(b.fail(error.reason, error.message), status, run.generation, now)


def with_kstatus(step: Step, status: dict, generation: int, now: dt.datetime) -> Step:
    """Adds the kstatus conditions (as Flux and cli-utils read them) for the phase the step
    leaves: working: Reconciling=True, Ready=Unknown; Succeeded: Ready=True once judged
    (Regressed under onRegression: Fail: Ready=False, Stalled=True, reason Regressed); Failed:
    Ready=False and Stalled=True with the reason. Unchanged conditions are not rewritten, so
    an idle tick patches nothing."""
    after = patched(status, step.status)
    phase, reason, message = after.get("phase"), after.get("reason", ""), after.get("message", "")
    verdict = after.get("verdict")
    verdict_message = (after.get("regression") or {}).get("message", "")
    wanted: dict[str, tuple[bool | None, str, str]]  # condition type -> (status, reason, message)
    if phase == SUCCEEDED and verdict is None:  # one tick: the verdict comes with the result
        wanted = {
            "Ready": (None, "Judging", "run complete; judging it against its baseline"),
            "Reconciling": (True, "Judging", "run complete; judging it against its baseline"),
        }
    elif phase == SUCCEEDED and regression_fails(after):
        wanted = {
            "Ready": (False, regression.REGRESSED, verdict_message),
            "Reconciling": (False, regression.REGRESSED, verdict_message),
            "Stalled": (True, regression.REGRESSED, verdict_message),
        }
    elif phase == SUCCEEDED:
        why, text = (
            ("Succeeded", "run complete")
            if verdict in (regression.PASS, None)
            else (verdict, f"run complete; {verdict_message}")
        )
        wanted = {"Ready": (True, why, text), "Reconciling": (False, why, text), "Stalled": (False, why, text)}
    elif phase == FAILED:
        wanted = {
            "Ready": (False, reason, message),
            "Reconciling": (False, reason, message),
            "Stalled": (True, reason, message),
        }
    else:
        wanted = {"Ready": (None, str(phase), f"phase {phase}"), "Reconciling": (True, str(phase), f"phase {phase}")}
    conditions = after.get("conditions") or []
    current = {c["type"]: c for c in conditions}
    value = {True: "True", False: "False", None: "Unknown"}
    for type_, (ok, why, text) in wanted.items():
        c = current.get(type_)
        if c and (c["status"], c.get("reason"), c.get("message"), c.get("observedGeneration")) == (
            value[ok],
            why,
            text,
            generation,
        ):
            continue
        conditions = set_condition(conditions, type_, ok, why, text, generation, now)
    if conditions != (after.get("conditions") or []):
        step.status["conditions"] = conditions
    return step


def _pending(b: _Builder, run: plan.Run, spec: RunSpec, world: World, cells: list[plan.Cell]) -> Step | None:
    """Create the run's objects; deploy the database, or load an external one."""
    now = b.now
    table = b.status.get("sweep")
    b.act(Action.CREATE_RUN_OBJECTS)
    if table:
        b.step.status["sweep"] = sweep.with_cell(table, 0, state=sweep.RUNNING, startTime=rfc3339(now))
    b.step.status["database"] = {
        "endpoints": plan.endpoints(run, spec),
        "release": plan.release_name(run) if spec.database.deployed else "",
    }
    if spec.database.deployed:
        b.move(DEPLOYING, "Deploying", f"helm release {plan.release_name(run)}")
    else:
        b.condition("DatabaseReady", True, "External", "external database")
        b.move(LOADING, "Loading", f"loading {spec.workload.warehouses} warehouses")
    return None


def _deploying(b: _Builder, run: plan.Run, spec: RunSpec, world: World, cells: list[plan.Cell]) -> Step | None:
    """Install the release, then wait for its pods (readyTimeoutSeconds)."""
    status = b.status
    database = status.get("database") or {}
    replicas = plan.database_pod_count(spec)
    timeout = spec.database.ready_timeout_seconds
    if database.get("installed") and world.database_ready >= replicas:
        b.condition("DatabaseReady", True, "Ready", f"{replicas}/{replicas} pods ready")
        b.move(LOADING, "Loading", f"database ready; loading {spec.workload.warehouses} warehouses")
    elif b.elapsed() > timeout:
        detail = waiting.pod_detail(world) or world.database_waiting or _condition_message(status, "DatabaseReady")
        msg = f"database not ready after {timeout}s: {world.database_ready}/{replicas} pods ready"
        msg += f" ({detail})" if detail else ""
        b.condition("DatabaseReady", False, "NotReady", msg)
        return b.fail("DatabaseNotReady", msg)
    elif not database.get("installed"):
        b.act(Action.INSTALL_DATABASE)
        b.step.status["database"] = {**database, "installed": True}
        b.event(
            "DatabaseInstalled",
            f"helm release {plan.release_name(run)} installed; waiting for {replicas} pods to be ready",
        )
    return None


def _loading(b: _Builder, run: plan.Run, spec: RunSpec, world: World, cells: list[plan.Cell]) -> Step | None:
    """One load Job (with verify.afterLoad, checking what it loaded); the run moves on when it
    succeeded."""
    if world.load_check_report is not None and (world.load.failed or world.load.succeeded):
        consistency = consistency_status(world.load_check_report)
        b.step.status["consistencyAfterLoad"] = consistency
        if not consistency["passed"]:
            msg = "the loaded database violates consistency conditions " + ", ".join(map(str, consistency["violated"]))
            b.condition("Loaded", False, "LoadInconsistent", msg)
            return b.fail("LoadInconsistent", msg)
    if world.load.failed:
        b.condition("Loaded", False, "LoadFailed", world.load.message)
        return b.fail("LoadFailed", f"load failed: {world.load.message}")
    if world.load_report is not None and world.load.succeeded:
        b.step.status["load"] = load_status(world.load_report)
    if world.load.succeeded and spec.verify.after_load and world.load_check_report is None:
        msg = "the load Job succeeded but wrote no consistency report (load-check.json)"
        b.condition("Loaded", False, "LoadFailed", msg)
        return b.fail("LoadFailed", msg)
    if world.load.succeeded:
        held = "; consistency conditions hold" if spec.verify.after_load else ""
        load = b.step.status.get("load")
        took = f" in {load['seconds']:g} s ({load['rowsPerSecond']:,.0f} rows/s)" if load else ""
        what = "records" if spec.workload.kind == plan.YCSB else f"{spec.workload.warehouses} warehouses"
        b.condition("Loaded", True, "Loaded", f"{what} loaded{took}{held}")
        b.move(RUNNING, "Running", f"starting {spec.runners.parallelism} runner pods")
    elif b.elapsed() > plan.load_timeout(spec):
        msg = f"not loaded after {plan.load_timeout(spec)}s"
        msg += f" ({detail})" if (detail := waiting.pod_detail(world)) else ""
        b.condition("Loaded", False, "LoadTimedOut", msg)
        return b.fail("LoadTimedOut", msg)
    elif not world.load.exists:
        b.act(Action.CREATE_LOAD_JOB)
        b.event("LoadJobCreated", f"job {plan.job_name(run, 'loader')}")
    return None


def _running(b: _Builder, run: plan.Run, spec: RunSpec, world: World, cells: list[plan.Cell]) -> Step | None:
    """The runner Job, the barrier, faults while measuring, the merged results."""
    status, now = b.status, b.now
    n = spec.runners.parallelism
    if world.runner.failed:
        b.condition("RunCompleted", False, "RunFailed", world.runner.message)
        return b.fail("RunFailed", f"run failed: {world.runner.message}")
    missing = sorted(set(range(n)) - set(world.results))
    if status.get("startAt") and not missing and spec.workload.kind == plan.YCSB:
        return _ycsb_measured(b, run, spec, [world.results[i] for i in range(n)])
    if status.get("startAt") and not missing:
        # Every pod's window is over; the pods now hold their ledgers for the verifier.
        docs = [world.results[i] for i in range(n)]
        try:
            results = run_status(docs)
            deliveries = run_deliveries(docs)
        except ValueError as e:  # pods that disagree on seed, constants or window
            msg = f"runner pods' results cannot be merged: {e}"
            b.condition("RunCompleted", False, "ResultsInconsistent", msg)
            return b.fail("ResultsInconsistent", msg)
        b.step.status["results"] = results
        b.act(Action.WRITE_DELIVERIES)
        b.step.deliveries = deliveries
        if late := late_runners_message(results):
            b.condition("RunCompleted", False, "RunnerLate", late)
            return b.fail("RunnerLate", late)
        b.condition("RunCompleted", True, "Completed", f"tpmC {results['tpmC']:.1f} from {n} pods")
        b.move(VERIFYING, "Verifying", f"tpmC {results['tpmC']:.1f}; verifying durability")
    elif world.runner.succeeded:
        msg = f"runner pods {missing} wrote no results"
        b.condition("RunCompleted", False, "ResultsMissing", msg)
        return b.fail("ResultsMissing", msg)
    else:
        if not world.runner.exists:
            b.act(Action.CREATE_RUN_JOB)
            b.event(
                "RunJobCreated",
                f"job {plan.job_name(run, 'runner')}: {n} pods, {plan.clients_per_pod(spec)} clients each",
            )
        if not status.get("startAt"):
            if world.start_at:  # written before a restart, status not yet: adopt it
                b.step.status["startAt"] = world.start_at
            elif world.runners_ready >= n:
                start_at = rfc3339(now + dt.timedelta(seconds=spec.runners.start_delay_seconds))
                b.act(Action.WRITE_START_AT)
                b.step.start_at = start_at
                b.step.status["startAt"] = start_at
                b.event("RunnersReady", f"all {n} runner pods ready; starting at {start_at}")
            elif b.elapsed() > spec.runners.ready_timeout_seconds:
                msg = f"{world.runners_ready}/{n} runner pods ready after {spec.runners.ready_timeout_seconds}s"
                msg += f" ({detail})" if (detail := waiting.pod_detail(world)) else ""
                b.condition("RunCompleted", False, "RunnersNotReady", msg)
                return b.fail("RunnersNotReady", msg)
        else:
            _inject_faults(b, run, spec, world)
            _start_midcheck(b, run, spec, world)
    return None


def _start_midcheck(b: _Builder, run: plan.Run, spec: RunSpec, world: World) -> None:
    """verify.duringRun: the check Job, once, when the measured interval starts (its pod starts
    and reads while the runners' transactions commit)."""
    if not spec.verify.during_run or world.midcheck.exists or "consistencyDuringRun" in b.status:
        return
    if b.now >= parse_time(b.status["startAt"]) + dt.timedelta(seconds=spec.workload.warmup_seconds):
        b.act(Action.CREATE_MIDCHECK_JOB)
        b.event(
            "DuringRunCheckJobCreated",
            f"job {plan.job_name(run, 'midcheck')}: the consistency "
            f"conditions read while the runners' transactions commit",
        )


def _ycsb_measured(b: _Builder, run: plan.Run, spec: RunSpec, docs: list[dict]) -> Step | None:
    """A YCSB run's pods' results merged (tpcc_runner.ycsb.results); Verifying then checks every
    acknowledged write of their ledgers (no consistency check: that is TPC-C's)."""
    try:
        merged = merge_ycsb(docs)  # already status.ycsb's shape (the CRD schema)
    except ValueError as e:  # pods that disagree on the workload or its properties
        msg = f"runner pods' results cannot be merged: {e}"
        b.condition("RunCompleted", False, "ResultsInconsistent", msg)
        return b.fail("ResultsInconsistent", msg)
    b.step.status["ycsb"] = merged
    text = f"{merged['opsPerSecond']:.1f} operations/s from {len(docs)} pods"
    b.condition("RunCompleted", True, "Completed", text)
    b.move(VERIFYING, "Verifying", f"YCSB workload {merged['workload']}, {text}; verifying durability")
    return None


def _verifying(b: _Builder, run: plan.Run, spec: RunSpec, world: World, cells: list[plan.Cell]) -> Step | None:
    """Durability (the verifier Job over every ledger), consistency (the checker Job), then the
    ACID tests (their Job); the run (or cell) is measured when the last of them has passed."""
    job = plan.verifying_role(spec, b.status)
    if job == "midcheck":
        failed = _check_during_run(b, run, spec, world)
    elif job == "verifier":
        failed = _verify_durability(b, run, spec, world)
    elif job == "checker":
        failed = _check_consistency(b, run, world, cells)
    elif spec.verify.acid_tests is not None and "acid" not in b.status:
        failed = _test_acid(b, run, world)
    else:
        failed = None
    if not failed and _all_verified(spec, patched(b.status, b.step.status)):
        _measured(b, run, spec, "run complete: " + ", ".join(_what_held(spec)))
    return failed


def _all_verified(spec: RunSpec, status: dict) -> bool:
    return (
        "durability" in status
        and ("consistency" in status or not spec.checks_consistency)
        and ("acid" in status or spec.verify.acid_tests is None)
        and ("consistencyDuringRun" in status or not spec.verify.during_run)
    )


def _what_held(spec: RunSpec) -> list[str]:
    if spec.workload.kind == plan.YCSB:
        return ["no acknowledged write lost"]
    held = ["consistency conditions held during the run"] if spec.verify.during_run else []
    held += ["no acknowledged order lost"]
    held += ["consistency conditions hold"] if spec.verify.enabled else ["consistency check disabled"]
    held += ["ACID tests passed"] if spec.verify.acid_tests is not None else []
    return held


def _check_consistency(b: _Builder, run: plan.Run, world: World, cells: list[plan.Cell]) -> Step | None:
    if world.check_report is not None and (world.checker.succeeded or world.checker.failed):
        consistency = consistency_status(world.check_report)
        b.step.status["consistency"] = consistency
        if not consistency["passed"]:
            msg = "violated consistency conditions " + ", ".join(map(str, consistency["violated"]))
            b.condition("ConsistencyVerified", False, "Violated", msg)
            return b.fail("ConsistencyViolated", msg)
        b.condition("ConsistencyVerified", True, "Passed", "all consistency conditions hold")
    elif world.checker.failed or world.checker.succeeded:
        msg = world.checker.message or "the check wrote no report"
        b.condition("ConsistencyVerified", False, "CheckFailed", msg)
        return b.fail("CheckFailed", f"consistency check failed: {msg}")
    elif not world.checker.exists:
        b.act(Action.CREATE_CHECK_JOB)
        if run.cell is not None:
            b.step.earlier_cells = tuple(c.index for c in plan.load_cells(cells, cells[run.cell])[:-1])
        b.event("CheckJobCreated", f"job {plan.job_name(run, 'checker')}")
    return None


def _check_during_run(b: _Builder, run: plan.Run, spec: RunSpec, world: World) -> Step | None:
    """The report of the check Job started with the measured interval (created now if the run
    ended before that, which whileRunning then says)."""
    if world.midcheck_report is not None and (world.midcheck.succeeded or world.midcheck.failed):
        start_at = parse_time(b.status["startAt"])
        consistency = during_run_status(world.midcheck_report, start_at, fault_injection.measured_end(spec, start_at))
        b.step.status["consistencyDuringRun"] = consistency
        if not consistency["passed"]:
            msg = "violated consistency conditions while transactions ran: " + ", ".join(
                map(str, consistency["violated"])
            )
            b.condition("ConsistencyVerified", False, "ViolatedDuringRun", msg)
            return b.fail("ConsistencyViolatedDuringRun", msg)
        b.event(
            "ConsistentDuringRun",
            f"the consistency conditions held in a read from {consistency['startedAt']} to {consistency['finishedAt']}",
        )
    elif world.midcheck.failed or world.midcheck.succeeded:
        msg = world.midcheck.message or "the check wrote no report"
        b.condition("ConsistencyVerified", False, "CheckFailed", msg)
        return b.fail("CheckFailed", f"consistency check during the run failed: {msg}")
    elif not world.midcheck.exists:
        b.act(Action.CREATE_MIDCHECK_JOB)
        b.event(
            "DuringRunCheckJobCreated",
            f"job {plan.job_name(run, 'midcheck')}: created after the run ended",
            warning=True,
        )
    return None


def _test_acid(b: _Builder, run: plan.Run, world: World) -> Step | None:
    """The ACID tests' Job; a test that failed or could not run fails the run with its reason."""
    if world.acid_report is not None and (world.acid.succeeded or world.acid.failed):
        acid = acid_status(world.acid_report)
        b.step.status["acid"] = acid
        counts = ", ".join(f"{n} {s}" for s, n in acid["counts"].items() if n)
        if not acid["passed"]:
            bad = [t for t in acid["tests"] if t["status"] in ("failed", "error")]
            msg = f"ACID tests: {counts}; " + "; ".join(f"{t['test']} {t['status']}: {t['reason']}" for t in bad)
            b.condition("ACIDVerified", False, "ACIDTestFailed", msg[:1000])
            return b.fail("ACIDTestFailed", msg[:1000])
        b.condition("ACIDVerified", True, "Passed", f"ACID tests: {counts}")
        b.event("ACIDVerified", f"ACID tests: {counts}")
    elif world.acid.failed or world.acid.succeeded:
        msg = world.acid.message or "the ACID tests wrote no report"
        b.condition("ACIDVerified", False, "ACIDTestsFailed", msg)
        return b.fail("ACIDUnverified", f"ACID tests could not run: {msg}")
    elif not world.acid.exists:
        b.act(Action.CREATE_ACID_JOB)
        b.event("ACIDJobCreated", f"job {plan.job_name(run, 'acid')}")
    return None


def _finished(
    b: _Builder, run: plan.Run, spec: RunSpec, world: World, cells: list[plan.Cell], search: saturation.Search | None
) -> Step | None:
    """The verdict and BenchmarkResult once, the cleanup policy once, the ttl."""
    status, now = b.status, b.now
    phase = b.status["phase"]
    table = b.status.get("sweep")
    if "verdict" not in status and table:  # a sweep that failed in its current cell
        _, policy = _judge_cell(b, run, spec, world, cells)
        b.step.status["sweep"] = saturation.after_failure(b.current("sweep"), cells, search)
        _sweep_verdict(b, policy)
    elif "verdict" not in status:
        _judge_and_record(b, run, spec, world)
        if "verdict" not in b.step.status:  # the change-point analysis first; cleanup after
            return b.step
    figure = cost_status(spec.cost, patched(status, b.step.status))  # spec.cost may be edited later
    if figure != status.get("cost"):
        b.step.status["cost"] = figure
    if not status.get("cleanedUp"):
        if status.get("startAt"):
            b.act(Action.RELEASE_RUNNERS)  # runner pods holding their ledgers exit now
        cleanup = spec.cleanup.policy
        # a regression that fails the verdict keeps the database to look into, as a failure
        succeeded = phase == SUCCEEDED and not regression_fails(patched(status, b.step.status))
        if cleanup == "Always" or (cleanup == "OnSuccess" and succeeded):
            b.act(Action.CLEAN_UP)
            b.event("CleanedUp", f"cleanup policy {cleanup}: removed the database and Jobs")
        b.step.status["cleanedUp"] = True
    ttl = spec.cleanup.ttl_seconds_after_finished
    done = status.get("completionTime")
    if ttl is not None and done and (now - parse_time(done)).total_seconds() >= ttl:
        b.act(Action.DELETE_RUN)
    return None


# What each phase under way does on a tick (each may end the run Failed: it returns that Step).
PHASE_STEPS = {PENDING: _pending, DEPLOYING: _deploying, LOADING: _loading, RUNNING: _running, VERIFYING: _verifying}


def _advance(
    b: _Builder, run: plan.Run, spec: RunSpec, world: World, cells: list[plan.Cell], search: saturation.Search | None
) -> Step:
    """The phase's own logic for the run under way (`run` names its objects; in a sweep, those
    of the cell under way, whose workload `spec` has; `search`: the sweep's saturation search)."""
    status, now = b.status, b.now
    phase = status["phase"]
    table = status.get("sweep")
    if table and phase not in TERMINAL:
        if sweep.awaiting_judgement(table):
            judged, policy = _judge_cell(b, run, spec, world, cells)
            return _next_cell_or_finish(b, cells, search, policy) if judged else b.step
        if run.cell and table["cells"][run.cell]["state"] == sweep.PENDING:
            b.act(Action.CREATE_RUN_OBJECTS)  # the cell's own ConfigMaps and runner RBAC
            b.step.status["sweep"] = sweep.with_cell(table, run.cell, state=sweep.RUNNING, startTime=rfc3339(now))
            b.event("CellStarted", f"cell {run.cell}: {sweep.label(table['cells'][run.cell])}")
            return b.step

    if phase in TERMINAL:
        return _finished(b, run, spec, world, cells, search) or b.step
    return PHASE_STEPS[phase](b, run, spec, world, cells) or b.step


def regression_fails(status: dict) -> bool:
    """A Regressed verdict under onRegression: Fail (the default) is a failed verdict."""
    return (
        status.get("verdict") == regression.REGRESSED
        and (status.get("regression") or {}).get("onRegression", "Fail") != "Warn"
    )


def _judge_and_record(b: _Builder, run: plan.Run, spec: RunSpec, world: World) -> None:
    """Once per finished run: the regression verdict against its history, the BenchmarkResult
    that records it, and the pruning of the oldest results beyond spec.history.limit."""
    recorded = _record(b, run, spec, world, patched(b.status, b.step.status), history.history_limit(spec))
    if recorded is None:
        return
    verdict, fields, policy = recorded
    b.step.status.update(fields)
    if policy is not None:
        b.condition("Regressed", verdict.outcome == regression.REGRESSED, verdict.outcome, verdict.message)
    b.event(
        verdict.outcome,
        f"{verdict.message}; recorded as BenchmarkResult {fields['resultName']}",
        warning=verdict.outcome in (regression.REGRESSED, regression.FAILED),
    )


def _change_point_analysis(
    b: _Builder,
    run: plan.Run,
    world: World,
    this: regression.Summary,
    earlier: list[regression.Summary],
    policy: regression.Policy | None,
) -> tuple[bool, dict | None]:
    """With spec.regression.changePoints, before a measured run (or cell) is judged: one
    analyzer Job over its comparable history. (done, changepoints.json or None): None when
    there is nothing to analyse (regression.analysis_input) or the Job failed, which the
    verdict's message then says."""
    points = regression.analysis_input(this, earlier, policy, rfc3339(b.now))
    if points is None:
        return True, None
    if world.analyzer.succeeded or world.analyzer.failed:
        return True, world.change_points
    assert policy is not None and policy.change_points is not None, "analysis_input needs them"
    if not world.analyzer.exists:
        b.act(Action.CREATE_ANALYSIS_JOB)
        b.step.analysis_input, b.step.max_pvalue = points, policy.change_points.max_pvalue
        b.event("AnalysisJobCreated", f"job {plan.job_name(run, 'analyzer')}: change points over {len(points)} results")
    return False, None


def _record(
    b: _Builder,
    run: plan.Run,
    spec: RunSpec,
    world: World,
    finished: dict,
    limit: int,
    matrix: tuple[tuple[str, str], ...] = (),
) -> tuple[regression.Verdict, dict, regression.Policy | None] | None:
    """The verdict of a finished run (or sweep cell, with its matrix values) whose final status
    is `finished`, its BenchmarkResult (WRITE_RESULT) and the pruning beyond `limit` results.
    `spec` is the cell's own, so its comparison hash, and with it the history it is judged
    against, is that of the same cell (same warehouses, clients and matrix values). Returns the verdict,
    the status fields that report it, and the regression policy (None without one), or None
    while its change points are being analysed."""
    chash = regression.comparison_hash(spec)
    name = history.result_name(run)
    try:
        policy = regression.Policy.from_spec(spec.regression)
    except ValueError as e:  # the CRD refuses this at apply; an older CRD may not have
        policy, verdict = None, regression.Verdict(regression.INCONCLUSIVE, str(e))
    else:
        this = regression.Summary.of_status(name, chash, finished)
        earlier = [e.summary for e in world.history]
        analysed, analysis = _change_point_analysis(b, run, world, this, earlier, policy)
        if not analysed:
            return None
        verdict = regression.judge(this, earlier, policy, world.named_baseline, analysis)
    on_regression = policy.on_regression if policy else "Fail"
    fields = {"verdict": verdict.outcome, "regression": verdict.to_status(chash, on_regression), "resultName": name}
    docs = [world.results[i] for i in sorted(world.results)]
    merged = None if not docs else merge_ycsb(docs) if spec.workload.kind == plan.YCSB else merge_results(docs)
    b.act(Action.WRITE_RESULT)
    b.step.result = history.record(
        run, spec, {**finished, **fields}, merged, world.git, world.database_images, matrix=dict(matrix)
    )
    prune = history.to_prune(world.history, limit, name)
    if prune:
        b.act(Action.PRUNE_RESULTS)
        b.step.prune = prune
    return verdict, fields, policy


# What a sweep's cell reports in the run's status; the next cell starts without them.
CELL_STATUS = (
    "startAt",
    "load",
    "results",
    "durability",
    "consistency",
    "consistencyAfterLoad",
    "consistencyDuringRun",
    "faults",
)


def _measured(b: _Builder, run: plan.Run, spec: RunSpec, message: str) -> None:
    """The run (or the sweep's cell under way) measured and verified everything, unless a fault
    the spec asked for was never injected (a durability verdict that covers fewer failovers than
    the spec says is not a pass; a replica set naming no primary skips a kill-primary, too) or
    the database refused too much of the work."""
    skipped = [f for f in b.current("faults") or [] if f["state"] == fault_injection.SKIPPED]
    if skipped:
        b.fail(
            "FaultNotInjected",
            "; ".join(f"fault {f['number']} ({f['action']}) was not injected: {f['message']}" for f in skipped)
            + "; the durability verdict covers only the faults injected",
        )
        return
    if errors := error_budget_message(b.current("results") or {}, spec.workload.max_error_percent):
        b.fail("TooManyErrors", errors)
        return
    table = b.current("sweep")
    if not table:
        b.move(SUCCEEDED, "Succeeded", message)
        return
    b.step.status["sweep"] = sweep.with_cell(table, run.sweep_cell, state=sweep.SUCCEEDED)
    b.event("CellMeasured", f"cell {run.cell} ({sweep.label(table['cells'][run.cell])}): {message}")


def _judge_cell(
    b: _Builder, run: plan.Run, spec: RunSpec, world: World, cells: list[plan.Cell]
) -> tuple[bool, regression.Policy | None]:
    """A finished cell's verdict against the same cell of earlier runs, its BenchmarkResult
    and its row in status.sweep. A cell the run failed in (not yet finished) is Failed.
    Returns (judged: False while its change points are analysed, the regression policy)."""
    table = b.current("sweep")
    row = table["cells"][run.sweep_cell]
    state = row["state"] if row["state"] in sweep.FINISHED else sweep.FAILED
    after = patched(b.status, b.step.status)
    finished = {
        **after,
        "phase": SUCCEEDED if state == sweep.SUCCEEDED else FAILED,
        "startTime": row.get("startTime", after.get("startTime")),
        "completionTime": rfc3339(b.now),
    }
    # history.limit counts runs: each run of a sweep writes one result per cell
    recorded = _record(
        b, run, spec, world, finished, history.history_limit(spec) * len(cells), cells[run.sweep_cell].matrix
    )
    if recorded is None:
        return False, None
    verdict, fields, policy = recorded
    results = after.get("results") or {}
    p99 = history.p99_by_type(results).get("NEW_ORDER")
    p90 = {
        t: v["latencyMs"]["p90"]
        for t, v in (results.get("transactions") or {}).items()
        if (v.get("latencyMs") or {}).get("p90") is not None
    }
    b.step.status["sweep"] = sweep.with_cell(
        table,
        run.sweep_cell,
        state=state,
        verdict=verdict.outcome,
        result=fields["resultName"],
        tpmC=results.get("tpmC"),
        opsPerSecond=(after.get("ycsb") or {}).get("opsPerSecond"),
        p99NewOrderMs=p99,
        p90Ms=p90 or None,
        reason=after.get("reason") if state == sweep.FAILED else None,
    )
    b.event(
        verdict.outcome,
        f"cell {run.cell} ({sweep.label(row)}): {verdict.message}; recorded as BenchmarkResult {fields['resultName']}",
        warning=verdict.outcome in (regression.REGRESSED, regression.FAILED),
    )
    return True, policy


def _next_cell_or_finish(
    b: _Builder, cells: list[plan.Cell], search: saturation.Search | None, policy: regression.Policy | None
) -> Step:
    """After a cell's verdict: the next cell (loading first when its warehouse count differs;
    a saturation search that stopped skips the rest of its warehouse count), or the sweep's end
    with the sweep's verdict."""
    following, table = saturation.advance(b.current("sweep"), cells, search)
    b.step.status["sweep"] = table
    for entry in table.get("saturation") or []:
        if entry["warehouses"] == cells[table["current"]].warehouses and "stopped" in entry:
            b.event(
                "SaturationFound",
                f"{entry['warehouses']} warehouses: {entry['reason']}; saturation at "
                f"{entry.get('saturationClients', 'no')} clients",
            )
    if following is not None:
        cell = cells[following]
        b.step.status["sweep"] = {**table, "current": following}
        b.step.status.update({k: None for k in CELL_STATUS})
        if cell.loads:
            b.next_cell(LOADING, "Loading", f"cell {following}: loading {cell.warehouses} warehouses")
        else:
            b.next_cell(RUNNING, "Running", f"cell {following}: {cell.clients} clients")
        return b.step
    _sweep_verdict(b, policy)
    b.move(SUCCEEDED, "Succeeded", sweep.message(b.current("sweep")))
    return b.step


def _sweep_verdict(b: _Builder, policy: regression.Policy | None) -> None:
    """status.verdict of a sweep: the worst of its cells'; the statistics of its configurations."""
    table = b.current("sweep")
    b.step.status["sweep"] = table = {
        **table,
        "configurations": sweep.configurations(table),
        "comparisons": sweep.comparisons(table),
    }
    outcome, text = sweep.verdict(table), sweep.message(table)
    b.step.status.update(
        verdict=outcome, regression={"message": text, "onRegression": policy.on_regression if policy else "Fail"}
    )
    if policy is not None:
        b.condition("Regressed", outcome == regression.REGRESSED, outcome, text)


def _ycsb_durable(b: _Builder, d: dict) -> Step | None:
    b.step.status["durability"] = d
    counted = f"{d['records']} records, {d['expectedRecords']} expected"
    if not d["durable"]:
        msg = (
            f"{d['lost']} of {d['acknowledged']} acknowledged YCSB writes lost ({counted})"
            if d["lost"]
            # every acknowledged write is there, yet records vanished or appeared that no write explains
            else f"the record count is off: {counted}, all {d['acknowledged']} acknowledged YCSB writes found"
        )
        msg += f", e.g. {d['lostExamples'][0]}" if d["lostExamples"] else ""
        msg += "; the database came back without its YCSB load" if d["databaseEmpty"] else ""
        b.condition("Durable", False, "AcknowledgedWritesLost", msg)
        return b.fail("DurabilityLost", msg)
    b.condition(
        "Durable",
        True,
        "NoLoss",
        f"all {d['acknowledged']} acknowledged YCSB writes found in {d['ledgers']} "
        f"ledgers ({counted}); {d['unknownOutcome']} of unknown outcome",
    )
    return None


def _verify_durability(b: _Builder, run: plan.Run, spec: RunSpec, world: World) -> Step | None:
    """The durability step of Verifying: once the faults are over and the database is whole
    again, one verifier Job reads the ledgers of all runner pods and judges them together;
    then the runner pods are released. Returns the Step if the run fails."""
    n = spec.runners.parallelism
    timeout = spec.database.ready_timeout_seconds
    if world.verifier.succeeded or world.verifier.failed:
        b.act(Action.RELEASE_RUNNERS)
        if world.durability_report is None:
            msg = world.verifier.message or "the verifier wrote no report"
            b.condition("Durable", False, "VerificationFailed", msg)
            return b.fail("DurabilityUnverified", f"durability verification failed: {msg}")
        if spec.workload.kind == plan.YCSB:
            return _ycsb_durable(b, ycsb_durability_status(world.durability_report))
        d = durability_status(world.durability_report)
        b.step.status["durability"] = d
        if not d["durable"]:
            msg = (
                f"{d['lost']} of {d['acknowledged']} acknowledged NewOrders lost "
                f"({d['missing']} missing, {d['replaced']} replaced by a later order under the same "
                f"O_ID, {d['duplicates']} acknowledged twice)"
            )
            msg += f", e.g. {d['lostExamples'][0]}" if d["lostExamples"] else ""
            msg += "; the database came back without its TPC-C load" if d["databaseEmpty"] else ""
            b.condition("Durable", False, "AcknowledgedOrdersLost", msg)
            return b.fail("DurabilityLost", msg)
        b.condition(
            "Durable",
            True,
            "NoLoss",
            f"all {d['acknowledged']} acknowledged NewOrders found in {d['ledgers']} ledgers; "
            f"{d['unknownOutcome']} of unknown outcome: {d['unknownCommitted']} committed",
        )
        return None
    if world.verifier.exists:
        return None
    # Verified only after the last fault has recovered and every member is back.
    _inject_faults(b, run, spec, world)
    faults = b.step.status.get("faults", b.status.get("faults") or [])
    replicas = plan.database_pod_count(spec) if spec.database.deployed else 0
    if not fault_injection.in_progress(faults) and world.database_ready >= replicas:
        gone = sorted(set(range(n)) - set(world.runner_pod_ips))
        if gone:
            msg = f"runner pods {gone} are gone: their durability ledgers cannot be verified"
            b.condition("Durable", False, "LedgersUnavailable", msg)
            return b.fail("DurabilityUnverified", msg)
        b.act(Action.CREATE_VERIFY_JOB)
        b.step.ledger_pods = dict(world.runner_pod_ips)
        b.event("VerifyJobCreated", f"job {plan.job_name(run, 'verifier')}: the ledgers of {n} runner pods")
    elif b.elapsed() > timeout:
        if faults and fault_injection.in_progress(faults):
            last = faults[-1]
            msg = f"{last['target']} not back and ready {timeout}s after the run (fault {last['number']})"
        else:
            msg = f"{world.database_ready}/{replicas} database pods ready {timeout}s after the run"
        b.condition("Durable", False, "DatabaseNotRecovered", msg)
        return b.fail("DatabaseNotRecovered", msg)
    return None


def _condition_message(status: dict, type_: str) -> str:
    for c in status.get("conditions") or []:
        if c["type"] == type_ and c.get("status") == "False":
            return c.get("message", "")
    return ""
