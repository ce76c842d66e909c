"""Which run is under way: the measured spec's hash (status.specHash), the generation whose objects
the run uses (status.runGeneration), and the Step that starts a new run from Pending.

Observes: the spec and the status. Does: RetireOldGenerations; clears the previous run's status.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json

from .. import faults as fault_injection
from .. import plan, sweep, sweep_layout, waiting, workloads
from ..runspec import RunSpec
from ..runspec import Workload as WorkloadSpec
from ..timestamps import rfc3339
from .actions import RetireOldGenerations
from .machine import PENDING, Event, Step

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
    return run_under_way(run, status)


def run_under_way(run: plan.Run, status: dict) -> plan.Run:
    generation = run_generation(status)
    assert generation is not None, "a run under way has its generation in status"
    return dataclasses.replace(run, generation=generation)


def scale(workload: WorkloadSpec, sweep_warehouses: list[int]) -> str:
    """The Scale printer column: what the run loads ("4 warehouses", "10,000 YCSB records"), a
    sweep's range of warehouse counts ("1-4 warehouses"). From the status, not the spec: a YCSB
    run's spec.workload.warehouses is the schema's default 1, which such a column showed."""
    if len(sweep_warehouses) > 1:
        return f"{sweep_warehouses[0]}-{sweep_warehouses[-1]} warehouses"
    if sweep_warehouses:
        workload = dataclasses.replace(workload, warehouses=sweep_warehouses[0])
    return workloads.loaded(workload)


def new_run(spec: RunSpec, status: dict, generation: int, now: dt.datetime) -> Step:
    """A new measurement: forget the previous run's status and retire its objects."""
    step = Step()
    if status.get("observedGeneration") is not None:
        step.actions.append(RetireOldGenerations())
    cleared = {k: None for k in status if k not in ("phase",)}
    cells = sweep_layout.sweep_cells(spec)
    w = spec.workload
    counts = sorted({c.warehouses for c in cells if c.warehouses is not None})
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
        "scale": scale(w, counts),
        **({"sweep": sweep.initial(cells, sweep_layout.sweep_plan(spec, cells)).to_json()} if cells else {}),
    }
    axes = "".join(f" x {len(a.values)} {a.field}" for a in ((spec.sweep and spec.sweep.matrix) or ()))
    size = (
        f"a sweep of {len(cells)} cells ({f'{counts} warehouses x ' if counts else ''}"
        f"{sorted({c.clients for c in cells})} clients{axes} x {spec.sweep.repetitions}) on "
        f"{sum(c.loads for c in cells)} loads"
        + (f" and {cells[-1].deployment + 1} deployments" if cells and cells[-1].deployment else "")
        if spec.sweep
        else f"{workloads.loaded(w)}, {w.clients} clients"
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
