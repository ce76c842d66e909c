"""Permanent failures: a spec the API server would refuse, a pod that will never start or be
scheduled (before any stage's own logic), an action the cluster refused for good, a spec the
typed model cannot read. Each ends the run Failed and turns the phase's condition False.

Observes: the World's pods and failed creates; the failed action. Does: fails the run.
"""

from __future__ import annotations

import datetime as dt

from .. import failures, plan
from ..runspec import RunSpec
from .kstatus import with_kstatus
from .machine import DEPLOYING, LOADING, PENDING, RUNNING, TERMINAL, VERIFYING, Action, Builder, Step, World

# The condition a phase's failure turns False.
PHASE_CONDITION = {
    DEPLOYING: "DatabaseReady",
    LOADING: "Loaded",
    RUNNING: "RunCompleted",
    VERIFYING: "ConsistencyVerified",
}


def fail_fast(b: Builder, spec: RunSpec, world: World) -> Step | None:
    """Permanent problems found before the phase's own logic: a spec the API server (or, for
    YCSB properties, the runner) would refuse, a pod that will never start (bad image, missing
    Secret)."""
    if b.phase == PENDING:
        problems = [*failures.spec_problems(spec), *plan.ycsb_input_problems(spec)]
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
    b = Builder(status, run.generation, now)
    if b.phase in TERMINAL:
        return Step()
    if b.phase is None:
        b.move(PENDING, "Pending", "reading the spec")
    return with_kstatus(b.fail("InvalidSpec", message), status, run.generation, now)


def action_failed(run: plan.Run, status: dict, action: Action, error: failures.ActionError, now: dt.datetime) -> Step:
    """A permanent failure of one of the run's actions ends the run Failed (`run` carries
    metadata.generation). Transient and cleanup failures are retried and change nothing."""
    b = Builder(status, run.generation, now)
    if not error.permanent or action in CLEANUP_ACTIONS or b.phase in TERMINAL or not b.phase:
        return Step()
    if action in ACTION_PHASE:
        b.condition(PHASE_CONDITION[ACTION_PHASE[action]], False, error.reason, error.message)
    return with_kstatus(b.fail(error.reason, error.message), status, run.generation, now)
