"""kopf handlers: thin. A timer per BenchmarkRun observes, asks phases.next_step, performs the
actions, then records the status; deletion removes what the run made (finalizer).

Run: kopf run -m tpcc_operator.handlers --all-namespaces
Env: TPCC_CHARTS_DIR (the database charts), TPCC_RUNNER_IMAGE, TPCC_HELM, TPCC_TICK_SECONDS,
TPCC_METRICS_PORT (Prometheus /metrics; 0 disables), TPCC_POD_RESOURCES (JSON default requests
and limits of the Jobs' pods), TPCC_ALLOWED_CHARTS (chart references allowed besides the shipped ones).
"""
from __future__ import annotations

import datetime as dt
import logging
import os
from pathlib import Path

import kopf
import prometheus_client
from kubernetes.client.rest import ApiException

from . import kube, plan
from .metrics import OperatorMetrics
from .phases import Action, Step, next_step, patched, set_condition

TICK_SECONDS = float(os.environ.get("TPCC_TICK_SECONDS", "3"))
METRICS_PORT = int(os.environ.get("TPCC_METRICS_PORT", "9090"))
METRICS = OperatorMetrics()
# In the repository the charts sit two levels above this package; the image sets TPCC_CHARTS_DIR.
_REPO_CHARTS = Path(__file__).resolve().parents[2] / "charts"


def settings() -> plan.Settings:
    resources = os.environ.get("TPCC_POD_RESOURCES")  # JSON, the chart's podResources
    return plan.Settings(charts_dir=Path(os.environ.get("TPCC_CHARTS_DIR", _REPO_CHARTS)),
                         runner_image=os.environ.get("TPCC_RUNNER_IMAGE", "local/tpcc-runner:dev"),
                         pod_resources=plan.PodResources.parse(resources) if resources else plan.PodResources(),
                         allowed_charts=tuple(os.environ.get("TPCC_ALLOWED_CHARTS", "").split()))


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_):
    # The status has a structural schema: keep kopf's own bookkeeping in annotations.
    settings.persistence.finalizer = f"{plan.GROUP}/cleanup"
    settings.persistence.progress_storage = kopf.AnnotationsProgressStorage(prefix=plan.GROUP)
    settings.persistence.diffbase_storage = kopf.AnnotationsDiffBaseStorage(prefix=plan.GROUP)
    settings.peering.standalone = True  # one replica (Deployment strategy Recreate)
    # On deletion kopf stops the timer before releasing the finalizer: look again soon
    # (default 60 s) when a tick is still running then.
    settings.background.cancellation_polling = 2
    # kopf logs every successful timer call: one line per run per tick says nothing
    logging.getLogger("kopf.objects").addFilter(
        lambda record: not record.getMessage().startswith("Timer 'drive' succeeded"))
    settings.posting.level = logging.INFO
    if METRICS_PORT:
        prometheus_client.start_http_server(METRICS_PORT, registry=METRICS.registry)


def perform(step: Step, run: plan.Run, spec: dict, logger: logging.Logger) -> None:
    cfg = settings()
    for action in step.actions:
        logger.info("%s: %s", run.prefix, action.value)
        if action is Action.RETIRE_OLD_GENERATIONS:
            kube.uninstall_releases(run.namespace, run.name, keep=plan.release_name(run))
            kube.delete_generations(run, keep_current=True)
        elif action is Action.CREATE_RUN_OBJECTS:
            for obj in plan.run_objects(run, spec):
                kube.create(obj)
        elif action is Action.INSTALL_DATABASE:
            kube.helm_install(plan.helm_release(run, spec, cfg))
        elif action is Action.CREATE_LOAD_JOB:
            kube.create(plan.load_job(run, spec, cfg))
        elif action is Action.CREATE_RUN_JOB:
            kube.create(plan.run_job(run, spec, cfg))
        elif action is Action.WRITE_START_AT:
            kube.write_start_at(run, step.start_at)
        elif action is Action.CREATE_CHECK_JOB:
            kube.create(plan.check_job(run, spec, cfg))
        elif action is Action.KILL_POD:
            killed = kube.kill_pod(run.namespace, step.kill)
            logger.info("%s: pod %s %s", run.prefix, step.kill.pod, "deleted" if killed else "already gone")
        elif action is Action.CLEAN_UP:
            if plan.is_deployed(spec):
                kube.helm_uninstall(run.namespace, plan.release_name(run))
            kube.delete_after_run(run)
        elif action is Action.DELETE_RUN:
            kube.delete_run(run.namespace, run.name)


@kopf.timer(plan.GROUP, plan.VERSION, plan.PLURAL, interval=TICK_SECONDS)
def drive(name: str, namespace: str, logger: logging.Logger, **_):
    body = kube.get_run(namespace, name)  # fresh: the watch may lag behind our last patch
    if body is None or body["metadata"].get("deletionTimestamp"):
        return
    meta, spec, status = body["metadata"], body["spec"], body.get("status") or {}
    run = plan.Run(name, namespace, meta["uid"], meta["generation"])
    phase = status.get("phase") if status.get("observedGeneration") == run.generation else None
    try:
        now = dt.datetime.now(dt.timezone.utc)
        step = next_step(run, spec, status, kube.observe(run, spec, status, phase, now), now)
        perform(step, run, spec, logger)
    except kube.HelmError as e:
        # Retried on the next tick until database.readyTimeoutSeconds fails the run.
        METRICS.reconcile_errors.labels(namespace, name).inc()
        kopf.warn(body, reason="HelmFailed", message=str(e))
        kube.patch_status(namespace, name, {"conditions": _helm_failed(status, run, str(e))})
        return
    except ApiException:
        METRICS.reconcile_errors.labels(namespace, name).inc()
        raise  # kopf logs it and the next tick retries
    if step.status:
        kube.patch_status(namespace, name, step.status)
    for e in step.events:
        kopf.event(body, type=e.type, reason=e.reason, message=e.message)
    METRICS.observe(namespace, name, spec, patched(status, step.status))


def _helm_failed(status: dict, run: plan.Run, message: str) -> list[dict]:
    return set_condition(status.get("conditions") or [], "DatabaseReady", False, "HelmFailed",
                         message, run.generation, dt.datetime.now(dt.timezone.utc))


@kopf.on.delete(plan.GROUP, plan.VERSION, plan.PLURAL)
def remove(name: str, namespace: str, logger: logging.Logger, **_):
    """Finalizer: the Helm releases are not owned by the run, so uninstall them here; the
    rest is owned too, but deleting it now stops a load or run at once."""
    released = kube.uninstall_releases(namespace, name)
    n = kube.delete_generations(plan.Run(name, namespace, "", 0), keep_current=False)
    METRICS.forget(namespace, name)
    logger.info("removed releases %s and %d objects of %s", released, n, name)
