"""What a run is waiting for, in words, for status.message while it works. Pure.

Every long wait of the operator (the database's pods, the load, the runner pods at the barrier,
the measured interval, a fault's recovery, the verifier and the checker) says what it waits for,
its timeout, and why a pod of it is not there yet (the scheduler's or the kubelet's words), so a
wait that ends in a timeout has already named its cause in the status.
"""

from __future__ import annotations

from . import failures, plan, runner_jobs, sweep, workloads
from . import faults as fault_injection
from .runspec import RunSpec
from .timestamps import parse_time, rfc3339

DEPLOYING, LOADING, RUNNING, VERIFYING = "Deploying", "Loading", "Running", "Verifying"


def pod_detail(world) -> str:
    """Why the first pod that is not running yet is not."""
    placed = failures.scheduling(world.pods, world.largest_node)
    if placed:
        return placed.message
    for pod in world.pods:
        if pod.waiting_reason:
            return f"pod {pod.name}: {pod.waiting_reason}" + (f": {pod.waiting_message}" if pod.waiting_message else "")
    return ""


def _with(text: str, detail: str) -> str:
    return f"{text}; {detail}" if detail else text


def _deploying(run: plan.Run, spec: RunSpec, status: dict, world) -> str:
    if not (status.get("database") or {}).get("installed") and run.deployment and world.pods:
        return (
            f"waiting for the earlier deployment's {len(world.pods)} pods to be gone "
            f"before installing {plan.release_name(run)}"
        )
    if not (status.get("database") or {}).get("installed"):
        return f"installing helm release {plan.release_name(run)}"
    replicas = plan.database_pod_count(spec)
    return _with(
        f"waiting for the database pods to be ready: {world.database_ready}/{replicas} "
        f"(timeout {spec.database.ready_timeout_seconds}s)",
        pod_detail(world) or world.database_waiting,
    )


def _loading(run: plan.Run, spec: RunSpec, world) -> str:
    return _with(
        f"waiting for load job {plan.job_name(run, 'loader')} to load {workloads.loaded(spec.workload)} "
        f"(timeout {runner_jobs.load_timeout(spec)}s)",
        pod_detail(world),
    )


def _running(run: plan.Run, spec: RunSpec, status: dict, world) -> str:
    n = spec.runners.parallelism
    start_at = status.get("startAt")
    if not start_at:
        return _with(
            f"waiting for the runner pods to connect and be ready: {world.runners_ready}/{n} "
            f"(timeout {spec.runners.ready_timeout_seconds}s)",
            pod_detail(world),
        )
    w = spec.workload
    end = fault_injection.measured_end(spec, parse_time(start_at))
    text = (
        f"measuring: {n} runner pods started at {start_at}, {w.warmup_seconds}s warmup + "
        f"{w.duration_seconds}s measured; results due at {rfc3339(end)}"
    )
    faults = status.get("faults") or []
    if fault_injection.in_progress(faults):
        last = faults[-1]
        text += f"; fault {last['number']} ({last['action']}) on {last.get('target')}: {last['state']}"
    return text


def _verifying(run: plan.Run, spec: RunSpec, status: dict, world) -> str:
    job = runner_jobs.verifying_role(spec, status)
    if job == "checker":
        return _with(f"waiting for consistency check job {plan.job_name(run, 'checker')}", pod_detail(world))
    if job == "acid":
        return _with(f"waiting for the ACID tests' job {plan.job_name(run, 'acid')}", pod_detail(world))
    if world.verifier.exists:
        return _with(
            f"waiting for verifier job {plan.job_name(run, 'verifier')} to read the durability ledgers "
            f"of {spec.runners.parallelism} runner pods",
            pod_detail(world),
        )
    faults = status.get("faults") or []
    timeout = spec.database.ready_timeout_seconds
    if fault_injection.in_progress(faults):
        last = faults[-1]
        return (
            f"waiting for fault {last['number']}'s pod {last.get('target')} to be back and ready "
            f"before verifying durability (timeout {timeout}s)"
        )
    replicas = plan.database_pod_count(spec) if spec.database.deployed else 0
    return (
        f"waiting for the database pods to be ready before verifying durability: "
        f"{world.database_ready}/{replicas} (timeout {timeout}s)"
    )


def describe(phase: str, run: plan.Run, spec: RunSpec, status: dict, world) -> str:
    """What the run under way (or the sweep's cell under way) waits for in `phase`, as `world`
    (what the timer observed for that phase) shows it."""
    if phase == DEPLOYING:
        text = _deploying(run, spec, status, world)
    elif phase == LOADING:
        text = _loading(run, spec, world)
    elif phase == RUNNING:
        text = _running(run, spec, status, world)
    elif phase == VERIFYING:
        text = _verifying(run, spec, status, world)
    else:
        return ""
    table = sweep.Table.in_status(status, "sweep")
    if table and run.cell is not None:
        text = f"cell {run.cell + 1}/{table.total}: {text}"
    return text[:1000]


def message(text: str, since: str | None) -> str:
    """status.message of a working run: what it waits for and since when (the stage's start)."""
    return f"since {since}: {text}" if since else text
