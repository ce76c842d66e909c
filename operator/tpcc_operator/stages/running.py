"""Stage Running: the runner Job, the barrier (startAt), faults and the during-run check while it
measures, then the runner pods' merged results (TPC-C or YCSB).

Observes: the runner Job, its ready pods, startAt, results.json of every pod, fault injection's
reads. Does: CreateRunJob, WriteStartAt (recording the runner pods' nodes, status.placement),
KillPods, CreateMidcheckJob, WriteDeliveries; moves to Verifying. The runner pods' states (and
nodes) are fail_fast's read (failing.observes).
"""

from __future__ import annotations

import datetime as dt

from .. import faults as fault_injection
from .. import placement, plan, sweep_layout, waiting, workloads
from ..runspec import RunSpec
from ..timestamps import parse_time, rfc3339
from . import fault_moves, reads
from .actions import CreateMidcheckJob, CreateRunJob, WriteDeliveries, WriteStartAt
from .fault_moves import inject_faults
from .machine import VERIFYING, Builder, Step, World


def observes(run: plan.Run, spec: RunSpec, status: dict, now: dt.datetime, seen: World | None) -> list[reads.Read]:
    """The runner Job, startAt in the start ConfigMap, with verify.duringRun the check Job, and
    fault injection's reads; then the Ready runner pods while the barrier holds, and each pod's
    results.json once the measured interval is over (each pod writes its own then: not looked
    for every tick before)."""
    runner = plan.job_name(run, "runner")
    if seen is None:
        wanted: list[reads.Read] = [reads.Job("runner", runner), reads.StartAt(plan.start_configmap_name(run))]
        if spec.verify.during_run:
            wanted.append(reads.Job("midcheck", plan.job_name(run, "midcheck")))
        return wanted + fault_moves.observes(run, spec, status, now)
    if not seen.runner.exists:
        return []
    if not seen.start_at:
        return [reads.ReadyRunners(runner)]
    if now < fault_injection.measured_end(spec, parse_time(seen.start_at)):
        return []
    return [reads.Results(i, plan.results_configmap_name(run, i)) for i in range(spec.runners.parallelism)]


def tick(b: Builder, run: plan.Run, spec: RunSpec, world: World, cells: list[sweep_layout.Cell]) -> Step | None:
    """The runner Job, the barrier, faults while measuring, the merged results."""
    n = spec.runners.parallelism
    if world.runner.failed:
        b.condition("RunCompleted", False, "RunFailed", world.runner.message)
        return b.fail("RunFailed", f"run failed: {world.runner.message}")
    missing = sorted(set(range(n)) - set(world.results))
    if b.status.get("startAt") and not missing:
        # Every pod's window is over; the pods now hold their ledgers for the verifier.
        return _measured(b, spec, [world.results[i] for i in range(n)])
    if world.runner.succeeded:
        msg = f"runner pods {missing} wrote no results"
        b.condition("RunCompleted", False, "ResultsMissing", msg)
        return b.fail("ResultsMissing", msg)
    if not world.runner.exists:
        b.act(CreateRunJob())
        b.event(
            "RunJobCreated",
            f"job {plan.job_name(run, 'runner')}: {n} pods, {_clients_each(spec)}",
        )
    if not b.status.get("startAt"):
        return _release_barrier(b, spec, world)
    failed = inject_faults(b, run, spec, world)
    if failed:
        return failed
    _start_midcheck(b, run, spec, world)
    return None


def _clients_each(spec: RunSpec) -> str:
    """What each runner pod drives: "4 clients each", or "24, 24, 23, 23 clients"."""
    shares = workloads.client_shares(spec)
    if len(set(shares)) == 1:
        return f"{shares[0]} clients each"
    return f"{', '.join(map(str, shares))} clients"


def _release_barrier(b: Builder, spec: RunSpec, world: World) -> Step | None:
    """startAt, once every runner pod is ready (runners.readyTimeoutSeconds), a start delay ahead."""
    n = spec.runners.parallelism
    if world.start_at:  # written before a restart, status not yet: adopt it
        b.step.status["startAt"] = world.start_at
    elif world.runners_ready >= n:
        start_at = rfc3339(b.now + dt.timedelta(seconds=spec.runners.start_delay_seconds))
        b.act(WriteStartAt(start_at))
        b.step.status["startAt"] = start_at
        placed = placement.with_runners(b.status, world.pods)
        b.step.status["placement"] = placed.to_json()
        beside = f" (beside database members on {', '.join(placed.shared_nodes)})" if placed.shared_nodes else ""
        b.event("RunnersReady", f"all {n} runner pods ready{beside}; starting at {start_at}")
    elif b.elapsed() > spec.runners.ready_timeout_seconds:
        msg = f"{world.runners_ready}/{n} runner pods ready after {spec.runners.ready_timeout_seconds}s"
        msg += f" ({detail})" if (detail := waiting.pod_detail(world)) else ""
        b.condition("RunCompleted", False, "RunnersNotReady", msg)
        return b.fail("RunnersNotReady", msg)
    return None


def _measured(b: Builder, spec: RunSpec, docs: list[dict]) -> Step | None:
    """The pods' results merged as the workload records them (with TPC-C's Deliveries for the
    consistency check); pods that disagree on what they ran, or that started late, fail the run."""
    try:
        measured = workloads.of(spec).measured(docs)
    except ValueError as e:  # pods that disagree on seed, constants, window or workload
        msg = f"runner pods' results cannot be merged: {e}"
        b.condition("RunCompleted", False, "ResultsInconsistent", msg)
        return b.fail("ResultsInconsistent", msg)
    b.step.status[measured.field] = measured.value
    if measured.deliveries is not None:
        b.act(WriteDeliveries(measured.deliveries))
    if measured.late:
        b.condition("RunCompleted", False, "RunnerLate", measured.late)
        return b.fail("RunnerLate", measured.late)
    b.condition("RunCompleted", True, "Completed", measured.completed)
    b.move(VERIFYING, "Verifying", measured.moving)
    return None


def _start_midcheck(b: Builder, run: plan.Run, spec: RunSpec, world: World) -> None:
    """verify.duringRun: the check Job, once, when the measured interval starts (its pod starts
    and reads while the runners' transactions commit)."""
    if not spec.verify.during_run or world.midcheck.exists or "consistencyDuringRun" in b.status:
        return
    if b.now >= parse_time(b.status["startAt"]) + dt.timedelta(seconds=spec.workload.warmup_seconds):
        b.act(CreateMidcheckJob())
        b.event(
            "DuringRunCheckJobCreated",
            f"job {plan.job_name(run, 'midcheck')}: the consistency "
            f"conditions read while the runners' transactions commit",
        )
