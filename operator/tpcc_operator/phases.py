"""The run's state machine: (spec, status, observed world, now) -> the next Step.

Pure: no cluster access. The timer observes the world, asks `next_step`, performs the Step's
actions (each idempotent: deterministic names, create-if-absent) and only then writes the
Step's status, so a crash between the two repeats the actions harmlessly. A phase only moves
forward. A spec edit that changes what is measured (status.specHash) starts a new run from
Pending; any other edit applies in place to the run under way, whose objects keep the names of
the generation that started it (status.runGeneration). Every step also keeps the kstatus
conditions (Reconciling, Ready, Stalled) that GitOps tools read.

This module is the machine's face: the names handlers.py and the tests use. The machine itself
is the package `stages`: `dispatch.next_step` hands the tick to one module per stage.
"""

from .results import run_status
from .stages.dispatch import next_step
from .stages.failing import ACTION_PHASE, CLEANUP_ACTIONS, PHASE_CONDITION, action_failed, spec_unreadable
from .stages.generations import MEASURED, active_run, new_run, run_generation, spec_hash, starts_new_run
from .stages.kstatus import regression_fails, with_kstatus
from .stages.machine import (
    DEPLOYING,
    FAILED,
    LOADING,
    ORDER,
    PENDING,
    RUNNING,
    SUCCEEDED,
    TERMINAL,
    VERIFYING,
    Action,
    Event,
    JobState,
    Step,
    World,
    can_move,
    patched,
    set_condition,
)
from .timestamps import parse_time, rfc3339

__all__ = [
    "ACTION_PHASE",
    "CLEANUP_ACTIONS",
    "DEPLOYING",
    "FAILED",
    "LOADING",
    "MEASURED",
    "ORDER",
    "PENDING",
    "PHASE_CONDITION",
    "RUNNING",
    "SUCCEEDED",
    "TERMINAL",
    "VERIFYING",
    "Action",
    "Event",
    "JobState",
    "Step",
    "World",
    "action_failed",
    "active_run",
    "can_move",
    "new_run",
    "next_step",
    "parse_time",
    "patched",
    "regression_fails",
    "rfc3339",
    "run_generation",
    "run_status",
    "set_condition",
    "spec_hash",
    "spec_unreadable",
    "starts_new_run",
    "with_kstatus",
]
