"""The dispatcher: `next_step` starts a new run (generations.py) or hands the tick to the module of
the run's phase, after the permanent failures (failing.py) and, in a sweep, the judging of a
finished cell or the start of the next (sweep_cells.py); then says what the run waits for and
adds the kstatus conditions (kstatus.py).

`observes` gathers, the same way, what the stages ask the timer to read (reads.py).

Observes: the spec, the status and the World. Does: applies an edit that measures the same in place;
CreateRunObjects when a sweep's cell starts; every other decision is a stage's.
"""

from __future__ import annotations

import datetime as dt

from .. import plan, saturation, sweep, sweep_layout, waiting
from ..runspec import RunSpec
from ..timestamps import rfc3339
from . import deploying, failing, finished, loading, pending, recording, running, verifying
from .actions import CreateRunObjects
from .failing import fail_fast, note_oom_kills
from .generations import new_run, run_under_way, starts_new_run
from .kstatus import with_kstatus
from .machine import (
    DEPLOYING,
    FAILED,
    LOADING,
    PENDING,
    RUNNING,
    SUCCEEDED,
    TERMINAL,
    VERIFYING,
    Builder,
    Step,
    World,
    patched,
)
from .reads import Read, once
from .sweep_cells import judge_cell, next_cell_or_finish

# What each phase reads (Pending: nothing), besides fail_fast's pods and a sweep cell's judging.
PHASE_READS = {
    DEPLOYING: deploying.observes,
    LOADING: loading.observes,
    RUNNING: running.observes,
    VERIFYING: verifying.observes,
    SUCCEEDED: finished.observes,
    FAILED: finished.observes,
}


def observes(run: plan.Run, spec: RunSpec, status: dict, now: dt.datetime, seen: World | None) -> list[Read]:
    """What the tick's decision needs read for the run under way (`run` and `spec`: in a sweep,
    the cell's), asked first with nothing `seen`, then with the World those reads filled: the
    pods fail_fast judges, the phase's own reads, and a finished sweep cell's for its verdict."""
    phase = status.get("phase")
    wanted = failing.observes(run, spec, status, seen)
    if phase in PHASE_READS:
        wanted += PHASE_READS[phase](run, spec, status, now, seen)
    if sweep.awaiting_judgement(sweep.Table.in_status(status, "sweep")):
        wanted += recording.observes(run, spec, seen)
    return once(wanted)


def next_step(run: plan.Run, spec: RunSpec, status: dict, world: World, now: dt.datetime) -> Step:
    """`run` carries metadata.generation; the run under way may have started at an earlier one."""
    if starts_new_run(spec, status, run.generation):
        step = new_run(spec, status, run.generation, now)
    else:
        b = Builder(status, run.generation, now)
        if status.get("observedGeneration") != run.generation:
            _apply_in_place(b)
        cells = sweep_layout.sweep_cells(spec)
        cell = sweep_layout.current_cell(spec, status)
        measured = sweep_layout.cell_spec(spec, cell)  # a sweep's cell measures its own workload
        under_way = sweep_layout.cell_run(run_under_way(run, status), cell)
        search = saturation.Search.of(spec)  # the sweep's, which the cell's own spec has not
        note_oom_kills(b, world)
        step = fail_fast(b, measured, world) or _advance(b, under_way, measured, world, cells, search)
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


def _apply_in_place(b: Builder) -> None:
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


# What each phase under way does on a tick (each may end the run Failed: it returns that Step).
PHASE_STEPS = {
    PENDING: pending.tick,
    DEPLOYING: deploying.tick,
    LOADING: loading.tick,
    RUNNING: running.tick,
    VERIFYING: verifying.tick,
}


def _advance(
    b: Builder,
    run: plan.Run,
    spec: RunSpec,
    world: World,
    cells: list[sweep_layout.Cell],
    search: saturation.Search | None,
) -> Step:
    """The phase's own logic for the run under way (`run` names its objects; in a sweep, those
    of the cell under way, whose workload `spec` has; `search`: the sweep's saturation search)."""
    status, now = b.status, b.now
    phase = status["phase"]
    table = sweep.Table.in_status(status, "sweep")
    if table and phase not in TERMINAL:
        if sweep.awaiting_judgement(table):
            judged, policy = judge_cell(b, run, spec, world, cells)
            return next_cell_or_finish(b, run, cells, search, policy, spec) if judged else b.step
        if run.cell and table.cells[run.cell].state == sweep.PENDING:
            b.act(CreateRunObjects())  # the cell's own ConfigMaps and runner RBAC
            started = sweep.with_cell(table, run.cell, state=sweep.RUNNING, start_time=rfc3339(now))
            b.step.status["sweep"] = started.to_json()
            b.event("CellStarted", f"cell {run.cell}: {sweep.label(table.cells[run.cell])}")
            return b.step

    if phase in TERMINAL:
        return finished.tick(b, run, spec, world, cells, search) or b.step
    return PHASE_STEPS[phase](b, run, spec, world, cells) or b.step
