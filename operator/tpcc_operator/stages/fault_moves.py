"""Fault injection's moves (the decisions are faults.decide): while the runners measure and, for
recovery only, before the durability verifier starts.

Observes: status.startAt and status.faults, the database pods and the primary. Does: KILL_POD.
"""

from __future__ import annotations

from .. import faults as fault_injection
from .. import plan
from ..runspec import RunSpec
from ..timestamps import parse_time
from .machine import Action, Builder, Event, World


def inject_faults(b: Builder, run: plan.Run, spec: RunSpec, world: World) -> None:
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
