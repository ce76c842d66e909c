"""Stage Succeeded or Failed: the verdict and BenchmarkResult once, the cost figure, the cleanup
policy once, the ttl.

Observes: the status, the spec's cleanup and cost, and until judged what recording.py reads.
Does: HealFaults (a pause the run ended in), ReleaseRunners, CleanUp, DeleteRun (and what
recording.py does).
"""

from __future__ import annotations

import datetime as dt

from .. import plan, saturation, sweep_layout, workloads
from ..cost import CostFigure, cost_status
from ..runspec import RunSpec
from ..timestamps import parse_time
from . import reads, recording
from .actions import CleanUp, DeleteRun, ReleaseRunners
from .fault_moves import heal_at_the_end
from .kstatus import regression_fails
from .machine import SUCCEEDED, Builder, Step, World, patched
from .recording import judge_and_record
from .sweep_cells import judge_cell, sweep_table, sweep_verdict


def observes(run: plan.Run, spec: RunSpec, status: dict, now: dt.datetime, seen: World | None) -> list[reads.Read]:
    """Until the run is judged, what its verdict and BenchmarkResult need (recording.py)."""
    return recording.observes(run, spec, seen) if "verdict" not in status else []


def tick(
    b: Builder,
    run: plan.Run,
    spec: RunSpec,
    world: World,
    cells: list[sweep_layout.Cell],
    search: saturation.Search | None,
) -> Step | None:
    """The verdict and BenchmarkResult once, the cleanup policy once, the ttl."""
    status, now = b.status, b.now
    phase = b.status["phase"]
    table = b.status.get("sweep")
    if "verdict" not in status and table:  # a sweep that failed in its current cell
        _, policy = judge_cell(b, run, spec, world, cells)
        b.step.status["sweep"] = saturation.after_failure(sweep_table(b), cells, search).to_json()
        sweep_verdict(b, policy, spec)
    elif "verdict" not in status:
        judge_and_record(b, run, spec, world)
        if "verdict" not in b.step.status:  # the change-point analysis first; cleanup after
            return b.step
    after = patched(status, b.step.status)
    figure = cost_status(spec.cost, workloads.of(spec).figures(after))  # spec.cost may be edited later
    if figure != CostFigure.in_status(status, "cost"):
        b.step.status["cost"] = figure.to_json() if figure else None
    if not status.get("cleanedUp"):
        heal_at_the_end(b)
        if status.get("startAt"):
            b.act(ReleaseRunners())  # runner pods holding their ledgers exit now
        cleanup = spec.cleanup.policy
        # a regression that fails the verdict keeps the database to look into, as a failure
        succeeded = phase == SUCCEEDED and not regression_fails(patched(status, b.step.status))
        if cleanup == "Always" or (cleanup == "OnSuccess" and succeeded):
            b.act(CleanUp())
            b.event("CleanedUp", f"cleanup policy {cleanup}: removed the database and Jobs")
        b.step.status["cleanedUp"] = True
    ttl = spec.cleanup.ttl_seconds_after_finished
    done = status.get("completionTime")
    if ttl is not None and done and (now - parse_time(done)).total_seconds() >= ttl:
        b.act(DeleteRun())
    return None
