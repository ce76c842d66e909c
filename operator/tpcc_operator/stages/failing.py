"""Permanent failures: a spec the API server would refuse, a pod that will never start or be
scheduled (before any stage's own logic), an action the cluster refused for good, a spec the
typed model cannot read. Each ends the run Failed and turns the phase's condition False. And
the database's OOM kills, which do not end a run by themselves but explain what fails after them.

Observes: the pods of the phase's workload, the nodes, FailedCreate Events, the database pods
while it loads, runs and is verified; the failed action.
Does: fails the run; records status.databaseOOMKills with a Warning Event for each.
"""

from __future__ import annotations

import datetime as dt

from .. import databases, failures, plan, runner_jobs, workloads
from ..runspec import RunSpec
from . import reads
from .actions import (
    Action,
    CleanUp,
    CreateAcidJob,
    CreateCheckJob,
    CreateLoadJob,
    CreateMidcheckJob,
    CreateRunJob,
    DeleteRun,
    InstallDatabase,
    RetireDeployment,
    RetireOldGenerations,
    WriteStartAt,
)
from .kstatus import with_kstatus
from .machine import DEPLOYING, LOADING, PENDING, RUNNING, TERMINAL, VERIFYING, Builder, Step, World, condition_of

# The condition a phase's failure turns False.
PHASE_CONDITION = {
    DEPLOYING: "DatabaseReady",
    LOADING: "Loaded",
    RUNNING: "RunCompleted",
    VERIFYING: "ConsistencyVerified",
}


# The Job whose pods a phase watches for a start that will never happen (Verifying: the Job of
# the check under way, runner_jobs.verifying_role).
JOB_ROLE = {LOADING: "loader", RUNNING: "runner"}


def observes(run: plan.Run, spec: RunSpec, status: dict, seen: World | None) -> list[reads.Read]:
    """For fail_fast: the pods of the phase's workload (the database's while Deploying, else the
    phase's Job); then the nodes when one of them is not scheduled, and the FailedCreate Events
    while they are missing (no database pod ready, no pod of the Job)."""
    phase = status.get("phase")
    if phase == DEPLOYING:
        labels = plan.database_pod_selector(run)
        if seen is None:
            return [reads.DatabaseReadiness(labels), reads.PodStates(labels)]
        missing = not seen.database_ready
    elif phase in (LOADING, RUNNING, VERIFYING):
        role = runner_jobs.verifying_role(spec, status) if phase == VERIFYING else JOB_ROLE[phase]
        if seen is None:
            return [reads.PodStates({"job-name": plan.job_name(run, role)}), *database_pods(run, spec)]
        missing = not seen.pods
    else:
        return []
    wanted: list[reads.Read] = []
    if any(p.unschedulable for p in seen.pods):
        wanted.append(reads.LargestNode())
    if missing:
        wanted.append(reads.FailedCreates(run.prefix))
    return wanted


def database_pods(run: plan.Run, spec: RunSpec) -> list[reads.Read]:
    """The deployed database's pods, each with its database container's state (its OOM kills,
    its restarts); nothing for an external database, whose pods are not the operator's."""
    container = databases.of(spec).container
    if not spec.database.deployed or container is None:
        return []
    return [reads.DatabasePods(plan.database_pod_selector(run), container)]


def note_oom_kills(b: Builder, world: World) -> None:
    """Each new OOM kill of a database container into status.databaseOOMKills, with a Warning
    Event; every failure message from then on names it (Builder.fail)."""
    recorded = b.current("databaseOOMKills") or []
    new = failures.new_oom_kills(recorded, world.database_pods)
    if new:
        b.step.status["databaseOOMKills"] = recorded + new
    for kill in new:
        b.event("DatabaseOOMKilled", failures.oom_killed(kill), warning=True)


def fail_fast(b: Builder, spec: RunSpec, world: World) -> Step | None:
    """Permanent problems found before the phase's own logic: a spec the API server (or, for
    YCSB properties, the runner) would refuse, a pod that will never start (bad image, missing
    Secret), a database that lost its data with a node (failures.lost_with_a_node)."""
    if b.phase == PENDING:
        problems = [*failures.spec_problems(spec), *workloads.of(spec).input_problems(spec)]
        if problems:
            return b.fail("InvalidSpec", "; ".join(problems))
    if b.phase in (LOADING, RUNNING):
        lost = failures.lost_with_a_node(spec, b.current("databaseOOMKills") or [], _ready_since(b))
        if lost:
            b.condition(PHASE_CONDITION[b.phase], False, "DatabaseLost", lost)
            return b.fail("DatabaseLost", lost)
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


def _ready_since(b: Builder) -> str | None:
    """When the deployment under way became ready (DatabaseReady's last turn to True)."""
    ready = condition_of(b.status, "DatabaseReady")
    return ready["lastTransitionTime"] if ready is not None and ready.get("status") == "True" else None


# The phase an action belongs to (whose condition its permanent failure turns False).
ACTION_PHASE: dict[type[Action], str] = {
    InstallDatabase: DEPLOYING,
    RetireDeployment: DEPLOYING,
    CreateLoadJob: LOADING,
    CreateRunJob: RUNNING,
    WriteStartAt: RUNNING,
    CreateMidcheckJob: RUNNING,
    CreateCheckJob: VERIFYING,
    CreateAcidJob: VERIFYING,
}


# Actions that clean up: their failures never change the run's verdict.
CLEANUP_ACTIONS = (RetireOldGenerations, CleanUp, DeleteRun)


def spec_unreadable(run: plan.Run, status: dict, message: str, now: dt.datetime) -> Step:
    """A spec the typed model cannot read (the CRD admits none; an older CRD might): the run
    ends Failed with reason InvalidSpec and the field named, once."""
    b = Builder(status, run.generation, now)
    if b.phase in TERMINAL:
        return Step()
    if b.phase is None:
        b.move(PENDING, "Pending", "reading the spec")
    return with_kstatus(b.fail("InvalidSpec", message), status, run.generation, now)


def action_failed(
    run: plan.Run, status: dict, action: Action | None, error: failures.ActionError, now: dt.datetime
) -> Step:
    """A permanent failure of one of the run's actions (None: of deciding the next step) ends the
    run Failed (`run` carries metadata.generation). Transient and cleanup failures are retried and
    change nothing."""
    b = Builder(status, run.generation, now)
    if not error.permanent or isinstance(action, CLEANUP_ACTIONS) or b.phase in TERMINAL or not b.phase:
        return Step()
    if action is not None and type(action) in ACTION_PHASE:
        b.condition(PHASE_CONDITION[ACTION_PHASE[type(action)]], False, error.reason, error.message)
    return with_kstatus(b.fail(error.reason, error.message), status, run.generation, now)
