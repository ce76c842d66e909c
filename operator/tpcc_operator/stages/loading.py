"""Stage Loading: one load Job (with verify.afterLoad, checking what it loaded).

Observes: the load Job, load.json, load-check.json. Does: CREATE_LOAD_JOB; moves to Running.
"""

from __future__ import annotations

from .. import plan, waiting
from ..results import (
    consistency_status,
    load_status,
)
from ..runspec import RunSpec
from .machine import RUNNING, Action, Builder, Step, World


def tick(b: Builder, run: plan.Run, spec: RunSpec, world: World, cells: list[plan.Cell]) -> Step | None:
    """One load Job (with verify.afterLoad, checking what it loaded); the run moves on when it
    succeeded."""
    if world.load_check_report is not None and (world.load.failed or world.load.succeeded):
        consistency = consistency_status(world.load_check_report)
        b.step.status["consistencyAfterLoad"] = consistency
        if not consistency["passed"]:
            msg = "the loaded database violates consistency conditions " + ", ".join(map(str, consistency["violated"]))
            b.condition("Loaded", False, "LoadInconsistent", msg)
            return b.fail("LoadInconsistent", msg)
    if world.load.failed:
        b.condition("Loaded", False, "LoadFailed", world.load.message)
        return b.fail("LoadFailed", f"load failed: {world.load.message}")
    if world.load_report is not None and world.load.succeeded:
        b.step.status["load"] = load_status(world.load_report)
    if world.load.succeeded and spec.verify.after_load and world.load_check_report is None:
        msg = "the load Job succeeded but wrote no consistency report (load-check.json)"
        b.condition("Loaded", False, "LoadFailed", msg)
        return b.fail("LoadFailed", msg)
    if world.load.succeeded:
        held = "; consistency conditions hold" if spec.verify.after_load else ""
        load = b.step.status.get("load")
        took = f" in {load['seconds']:g} s ({load['rowsPerSecond']:,.0f} rows/s)" if load else ""
        what = "records" if spec.workload.kind == plan.YCSB else f"{spec.workload.warehouses} warehouses"
        b.condition("Loaded", True, "Loaded", f"{what} loaded{took}{held}")
        b.move(RUNNING, "Running", f"starting {spec.runners.parallelism} runner pods")
    elif b.elapsed() > plan.load_timeout(spec):
        msg = f"not loaded after {plan.load_timeout(spec)}s"
        msg += f" ({detail})" if (detail := waiting.pod_detail(world)) else ""
        b.condition("Loaded", False, "LoadTimedOut", msg)
        return b.fail("LoadTimedOut", msg)
    elif not world.load.exists:
        b.act(Action.CREATE_LOAD_JOB)
        b.event("LoadJobCreated", f"job {plan.job_name(run, 'loader')}")
    return None
