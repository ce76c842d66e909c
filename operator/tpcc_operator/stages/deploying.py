"""Stage Deploying: install the Helm release, then wait (readyTimeoutSeconds) for its pods.

Observes: status.database, the database pods' readiness. Does: InstallDatabase; moves to Loading.
"""

from __future__ import annotations

import datetime as dt

from .. import plan, waiting
from ..runspec import RunSpec
from . import reads
from .actions import InstallDatabase
from .machine import LOADING, Builder, Step, World


def observes(run: plan.Run, spec: RunSpec, status: dict, now: dt.datetime, seen: World | None) -> list[reads.Read]:
    """How many database pods are Ready, and why the first other one is not."""
    return [reads.DatabaseReadiness(plan.database_pod_selector(run))] if seen is None else []


def tick(b: Builder, run: plan.Run, spec: RunSpec, world: World, cells: list[plan.Cell]) -> Step | None:
    """Install the release, then wait for its pods (readyTimeoutSeconds)."""
    status = b.status
    database = status.get("database") or {}
    replicas = plan.database_pod_count(spec)
    timeout = spec.database.ready_timeout_seconds
    if database.get("installed") and world.database_ready >= replicas:
        b.condition("DatabaseReady", True, "Ready", f"{replicas}/{replicas} pods ready")
        b.move(LOADING, "Loading", f"database ready; loading {spec.workload.warehouses} warehouses")
    elif b.elapsed() > timeout:
        detail = waiting.pod_detail(world) or world.database_waiting or _condition_message(status, "DatabaseReady")
        msg = f"database not ready after {timeout}s: {world.database_ready}/{replicas} pods ready"
        msg += f" ({detail})" if detail else ""
        b.condition("DatabaseReady", False, "NotReady", msg)
        return b.fail("DatabaseNotReady", msg)
    elif not database.get("installed"):
        b.act(InstallDatabase())
        b.step.status["database"] = {**database, "installed": True}
        b.event(
            "DatabaseInstalled",
            f"helm release {plan.release_name(run)} installed; waiting for {replicas} pods to be ready",
        )
    return None


def _condition_message(status: dict, type_: str) -> str:
    for c in status.get("conditions") or []:
        if c["type"] == type_ and c.get("status") == "False":
            return c.get("message", "")
    return ""
