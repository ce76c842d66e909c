"""Stage Pending: create the run's objects; deploy the database, or load an external one.

Observes: the spec. Does: CreateRunObjects; moves to Deploying or Loading.
"""

from __future__ import annotations

from .. import plan, sweep, sweep_layout, workloads
from ..runspec import RunSpec
from ..timestamps import rfc3339
from .actions import CreateRunObjects
from .machine import DEPLOYING, LOADING, Builder, Step, World


def tick(b: Builder, run: plan.Run, spec: RunSpec, world: World, cells: list[sweep_layout.Cell]) -> Step | None:
    """Create the run's objects; deploy the database, or load an external one."""
    now = b.now
    table = sweep.Table.in_status(b.status, "sweep")
    b.act(CreateRunObjects())
    if table:
        b.step.status["sweep"] = sweep.with_cell(table, 0, state=sweep.RUNNING, start_time=rfc3339(now)).to_json()
    b.step.status["database"] = {
        "endpoints": plan.endpoints(run, spec),
        "release": plan.release_name(run) if spec.database.deployed else "",
    }
    if spec.database.deployed:
        b.move(DEPLOYING, "Deploying", f"helm release {plan.release_name(run)}")
    else:
        b.condition("DatabaseReady", True, "External", "external database")
        b.move(LOADING, "Loading", f"loading {workloads.loaded(spec.workload)}")
    return None
