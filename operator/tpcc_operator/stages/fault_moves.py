"""Fault injection's moves (the decisions are faults.decide): while the runners measure and, for
recovery only, before the durability verifier starts.

Observes: status.startAt and status.faults, the database pods and the primary. Does: KillPods,
HealFaults.
"""

from __future__ import annotations

import datetime as dt

from .. import databases, plan
from .. import faults as fault_injection
from ..runspec import RunSpec
from ..timestamps import parse_time
from . import reads
from .actions import HealFaults, KillPods
from .failing import database_pods
from .machine import Builder, Event, Step, World


def observes(run: plan.Run, spec: RunSpec, status: dict, now: dt.datetime) -> list[reads.Read]:
    """With spec.faults on a deployed database: its pods, each with its container's restartCount
    and node; the primary (a database that has one) only when a victim named primary is to be
    chosen now, the nodes a node-loss spares while one is still to come, the runner pods when a
    partition that puts them on its cut-off side is due."""
    if not spec.faults or not spec.database.deployed:
        return []
    wanted = database_pods(run, spec)
    start_at = status.get("startAt")
    due = start_at and fault_injection.next_due(spec, status.get("faults") or [], parse_time(start_at), now)
    if due and fault_injection.REGISTRY[due.action].needs_runner_pods(due):
        wanted.append(reads.RunnerPods(plan.job_name(run, "runner")))
    if due and fault_injection.REGISTRY[due.action].which(due) == fault_injection.PRIMARY:
        if databases.of(spec).has_primary:
            wanted.append(reads.Primary(spec.database.type, tuple(plan.endpoints(run, spec))))
    to_come = fault_injection.pending(spec, status.get("faults") or [], parse_time(start_at)) if start_at else []
    if any(fault_injection.REGISTRY[i.action].spares_busy_nodes for i in to_come):
        wanted.append(reads.BusyNodes(plan.job_name(run, "runner")))
    return wanted


def inject_faults(b: Builder, run: plan.Run, spec: RunSpec, world: World) -> Step | None:
    """One move of fault injection (see the faults package), while the runners measure and, for
    recovery only, before the consistency check; the failed run's step when a fault cannot be
    injected here (a node-loss without a node to lose)."""
    start_at = b.status.get("startAt") or b.step.status.get("startAt")
    if not spec.faults or not start_at:
        return None
    d = fault_injection.decide(
        spec,
        b.status.get("faults") or [],
        parse_time(start_at),
        b.now,
        plan.release_name(run),
        world.database_pods,
        world.primary,
        run.uid,
        world.busy_nodes,
        world.runner_pods,
    )
    if d.faults is not None:
        b.step.status["faults"] = d.faults
    timeline = (b.current("results") or {}).get("timeline")
    if timeline:  # the results are in: how long each recovered fault took throughput to come back
        more = fault_injection.with_throughput_recovery(spec, b.current("faults") or [], parse_time(start_at), timeline)
        if more is not None:
            b.step.status["faults"] = more
    if d.kills:
        b.act(KillPods(tuple(d.kills)))
    if d.heals:
        b.act(HealFaults(tuple(d.heals)))
    for type_, reason, message in d.events:
        b.step.events.append(Event(type_, reason, message))
    return b.fail("FaultNotInjected", d.failure) if d.failure else None


def heal_at_the_end(b: Builder) -> None:
    """A timed fault (a pause, partition or slow network) still in force when the run ended
    otherwise (failed while it lasted): undone now, its entry Healed "at the end of the run"."""
    entries, heals = fault_injection.unhealed(b.current("faults") or [], b.now)
    if entries is None:
        return
    b.step.status["faults"] = entries
    b.act(HealFaults(tuple(heals)))
    b.event("FaultHealed", f"fault {entries[-1]['number']} ({entries[-1]['action']}): healed at the end of the run")
