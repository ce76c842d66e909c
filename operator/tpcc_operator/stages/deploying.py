"""Stage Deploying: install the Helm release, then wait (readyTimeoutSeconds) for its pods. A
sweep's later deployment (a sweep.matrix value of database.deploy) first uninstalls the earlier
one and waits for its pods to be gone, so the two never share the nodes and the new one starts
empty (a release of its own name: new volume claims).

Observes: status.database, the database pods' readiness and states (the earlier deployment's
pods, until they are gone). Does: RetireDeployment, InstallDatabase; once ready, records the
members' nodes (status.placement, from the pods' states) and moves to Loading.
"""

from __future__ import annotations

import datetime as dt

from .. import placement, plan, sweep_layout, waiting, workloads
from ..runspec import RunSpec
from . import reads
from .actions import InstallDatabase, RetireDeployment
from .machine import LOADING, Builder, Step, World, condition_of


def observes(run: plan.Run, spec: RunSpec, status: dict, now: dt.datetime, seen: World | None) -> list[reads.Read]:
    """How many database pods are Ready, and why the first other one is not; the pods themselves,
    whose presence before an install is a sweep's earlier deployment still going."""
    labels = plan.database_pod_selector(run)
    return [reads.DatabaseReadiness(labels), reads.PodStates(labels)] if seen is None else []


def tick(b: Builder, run: plan.Run, spec: RunSpec, world: World, cells: list[sweep_layout.Cell]) -> Step | None:
    """Install the release, then wait for its pods (readyTimeoutSeconds)."""
    status = b.status
    database = status.get("database") or {}
    replicas = plan.database_pod_count(spec)
    timeout = spec.database.ready_timeout_seconds
    if database.get("installed") and world.database_ready >= replicas:
        b.condition("DatabaseReady", True, "Ready", f"{replicas}/{replicas} pods ready")
        b.step.status["placement"] = placement.with_database(world.pods).to_json()
        b.move(LOADING, "Loading", f"database ready; loading {workloads.loaded(spec.workload)}")
    elif b.elapsed() > timeout:
        detail = waiting.pod_detail(world) or world.database_waiting or _condition_message(status, "DatabaseReady")
        msg = f"database not ready after {timeout}s: {world.database_ready}/{replicas} pods ready"
        msg += f" ({detail})" if detail else ""
        b.condition("DatabaseReady", False, "NotReady", msg)
        return b.fail("DatabaseNotReady", msg)
    elif not database.get("installed") and run.deployment and not database.get("retired"):
        b.act(RetireDeployment())
        b.step.status["database"] = {**database, "retired": True}
        b.event(
            "DeploymentRetired",
            f"cell {run.cell}: the earlier deployment uninstalled; "
            f"{plan.release_name(run)} follows once its pods are gone",
        )
    elif not database.get("installed") and run.deployment and world.pods:
        return None  # the earlier deployment's pods still terminating (waiting.py says so)
    elif not database.get("installed"):
        b.act(InstallDatabase())
        # a sweep's later deployment has its own release and endpoints
        b.step.status["database"] = {
            **database,
            "installed": True,
            "release": plan.release_name(run),
            "endpoints": plan.endpoints(run, spec),
        }
        b.event(
            "DatabaseInstalled",
            f"helm release {plan.release_name(run)} installed; waiting for {replicas} pods to be ready",
        )
    return None


def _condition_message(status: dict, type_: str) -> str:
    c = condition_of(status, type_)
    return c.get("message", "") if c is not None and c.get("status") == "False" else ""
