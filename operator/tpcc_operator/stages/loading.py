"""Stage Loading: one load Job (with verify.afterLoad, checking what it loaded).

Observes: the load Job, load.json, load-check.json. Does: CreateLoadJob; moves to Running.
"""

from __future__ import annotations

import datetime as dt

from .. import plan, runner_jobs, sweep_layout, waiting, workloads
from ..results import consistency_status, load_status
from ..runspec import RunSpec
from . import reads
from .actions import CreateLoadJob
from .machine import RUNNING, Builder, Step, World


def observes(run: plan.Run, spec: RunSpec, status: dict, now: dt.datetime, seen: World | None) -> list[reads.Read]:
    """The load Job; once it finished, its load.json (and with verify.afterLoad, load-check.json)."""
    if seen is None:
        return [reads.Job("load", plan.job_name(run, "loader"))]
    if not (seen.load.succeeded or seen.load.failed):
        return []
    check = plan.check_configmap_name(run)
    wanted: list[reads.Read] = [reads.Report("load_report", check, "load.json")]
    if spec.verify.after_load:
        wanted.append(reads.Report("load_check_report", check, "load-check.json"))
    return wanted


def tick(b: Builder, run: plan.Run, spec: RunSpec, world: World, cells: list[sweep_layout.Cell]) -> Step | None:
    """One load Job (with verify.afterLoad, checking what it loaded); the run moves on when it
    succeeded."""
    if world.load_check_report is not None and (world.load.failed or world.load.succeeded):
        consistency = consistency_status(world.load_check_report)
        b.step.status["consistencyAfterLoad"] = consistency.to_json()
        if not consistency.passed:
            msg = "the loaded database violates consistency conditions " + ", ".join(map(str, consistency.violated))
            b.condition("Loaded", False, "LoadInconsistent", msg)
            return b.fail("LoadInconsistent", msg)
    if world.load.failed:
        b.condition("Loaded", False, "LoadFailed", world.load.message)
        return b.fail("LoadFailed", f"load failed: {world.load.message}")
    load = load_status(world.load_report) if world.load_report is not None and world.load.succeeded else None
    if load is not None:
        b.step.status["load"] = load.to_json()
    if world.load.succeeded and spec.verify.after_load and world.load_check_report is None:
        msg = "the load Job succeeded but wrote no consistency report (load-check.json)"
        b.condition("Loaded", False, "LoadFailed", msg)
        return b.fail("LoadFailed", msg)
    if world.load.succeeded:
        held = "; consistency conditions hold" if spec.verify.after_load else ""
        took = f" in {load.seconds:g} s ({load.rows_per_second:,.0f} rows/s)" if load is not None else ""
        b.condition("Loaded", True, "Loaded", f"{workloads.loaded(spec.workload)} loaded{took}{held}")
        b.move(RUNNING, "Running", f"starting {spec.runners.parallelism} runner pods")
    elif b.elapsed() > runner_jobs.load_timeout(spec):
        msg = f"not loaded after {runner_jobs.load_timeout(spec)}s"
        msg += f" ({detail})" if (detail := waiting.pod_detail(world)) else ""
        b.condition("Loaded", False, "LoadTimedOut", msg)
        return b.fail("LoadTimedOut", msg)
    elif not world.load.exists:
        b.act(CreateLoadJob())
        b.event("LoadJobCreated", f"job {plan.job_name(run, 'loader')}")
    return None
