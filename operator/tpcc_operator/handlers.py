"""kopf handlers: thin. A timer per BenchmarkRun reads what stages.dispatch.observes asks for,
asks stages.dispatch.next_step, performs the actions, then records the status; deletion removes
what the run made (finalizer).

Run: kopf run -m tpcc_operator.handlers --all-namespaces
Env: TPCC_CHARTS_DIR (the database charts), TPCC_RUNNER_IMAGE, TPCC_HELM, TPCC_TICK_SECONDS,
TPCC_METRICS_PORT (Prometheus /metrics; 0 disables), TPCC_POD_RESOURCES (JSON default requests
and limits of the Jobs' pods), TPCC_ALLOWED_CHARTS (chart references allowed besides the shipped ones).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
from typing import assert_never

import kopf
import prometheus_client
import urllib3
from kubernetes.client.rest import ApiException

from . import (
    databases,
    failures,
    faults,
    history,
    kube,
    kube_actions,
    kube_chaos,
    plan,
    runner_jobs,
    schedule,
    sweep_layout,
)
from .metrics import OperatorMetrics
from .runspec import RunSpec, SpecError, charts_dir_of_image
from .stages.actions import (
    Action,
    CleanUp,
    CreateAcidJob,
    CreateAnalysisJob,
    CreateCheckJob,
    CreateLoadJob,
    CreateMidcheckJob,
    CreateRunJob,
    CreateRunObjects,
    CreateVerifyJob,
    DeleteRun,
    HealFaults,
    InstallDatabase,
    KillPods,
    PruneResults,
    ReleaseRunners,
    RetireDeployment,
    RetireOldGenerations,
    WriteDeliveries,
    WriteResult,
    WriteStartAt,
)
from .stages.dispatch import next_step, observes
from .stages.failing import CLEANUP_ACTIONS, action_failed, spec_unreadable
from .stages.generations import active_run
from .stages.machine import Step, World, patched
from .timestamps import parse_time, rfc3339

TICK_SECONDS = float(os.environ.get("TPCC_TICK_SECONDS", "3"))
SCHEDULE_TICK_SECONDS = 10.0  # start times are whole minutes
METRICS_PORT = int(os.environ.get("TPCC_METRICS_PORT", "9090"))
METRICS = OperatorMetrics()
# What kopf passes its handlers as `logger`
Logger = logging.Logger | logging.LoggerAdapter


def settings() -> plan.Settings:
    resources = os.environ.get("TPCC_POD_RESOURCES")  # JSON, the chart's podResources
    return plan.Settings(
        charts_dir=charts_dir_of_image(),
        runner_image=os.environ.get("TPCC_RUNNER_IMAGE", "local/tpcc-runner:dev"),
        pod_resources=plan.PodResources.parse(resources) if resources else plan.PodResources(),
        allowed_charts=tuple(os.environ.get("TPCC_ALLOWED_CHARTS", "").split()),
        fault_helper_namespace=os.environ.get("TPCC_FAULT_HELPER_NAMESPACE", ""),
        chaos_mesh=os.environ.get("TPCC_CHAOS_MESH") == "true",
    )


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_):
    # The status has a structural schema: keep kopf's own bookkeeping in annotations.
    settings.persistence.finalizer = f"{plan.GROUP}/cleanup"
    settings.persistence.progress_storage = kopf.AnnotationsProgressStorage(prefix=plan.GROUP)
    settings.persistence.diffbase_storage = kopf.AnnotationsDiffBaseStorage(prefix=plan.GROUP)
    settings.peering.standalone = True  # one replica (Deployment strategy Recreate)
    # Watching one namespace, the Role grants no cluster-wide list of CRDs and namespaces: kopf's
    # scanning of them would retry 9 times (~1 minute) before the first run is served.
    settings.scanning.disabled = os.environ.get("TPCC_CLUSTER_WIDE", "false") != "true"
    # On deletion kopf stops the timer before releasing the finalizer: look again soon
    # (default 60 s) when a tick is still running then.
    settings.background.cancellation_polling = 2
    # kopf logs every successful timer call: one line per run per tick says nothing
    logging.getLogger("kopf.objects").addFilter(
        lambda record: (
            not record.getMessage().startswith(("Timer 'drive' succeeded", "Timer 'keep_schedule' succeeded"))
        )
    )
    settings.posting.level = logging.INFO
    # Sync handlers run in this many threads (default: cores + 4, each thread its own malloc
    # arena): a tick is short, a Helm install holds one thread for at most HELM_TIMEOUT_SECONDS.
    settings.execution.max_workers = 4
    if METRICS_PORT:
        prometheus_client.start_http_server(METRICS_PORT, registry=METRICS.registry)


class ActionFailed(Exception):
    def __init__(self, action: Action, error: failures.ActionError):
        super().__init__(error.message)
        self.action, self.error = action, error


def perform(step: Step, run: plan.Run, spec: RunSpec, whole: RunSpec, logger: Logger) -> None:
    """The step's actions in order (spec: what the run or its sweep cell measures; whole: the
    resource's spec, a sweep's every cell); the first that fails raises ActionFailed, judged."""
    cfg = settings()
    for action in step.actions:
        logger.info("%s: %s", run.prefix, action.name)
        try:
            _perform_one(action, run, spec, whole, cfg, logger)
        except kube_actions.HelmError as e:
            raise ActionFailed(action, failures.helm_error(str(e))) from e
        except plan.chart_policy.ReleaseRefused as e:
            raise ActionFailed(action, failures.ActionError(True, e.reason, str(e))) from e
        except kube_actions.CallFailed as e:
            raise ActionFailed(action, e.error) from e
        except ApiException as e:
            raise ActionFailed(action, kube_actions.api_failure(e, action.name)) from e
        except urllib3.exceptions.HTTPError as e:  # no answer: connection refused, reset
            raise ActionFailed(action, failures.ActionError(False, "Unreachable", str(e)[:500])) from e
        except Exception as e:
            logger.exception("%s: %s", run.prefix, action.name)  # the traceback, for a bug report
            raise ActionFailed(action, failures.unexpected(action.name, e)) from e


def _perform_one(
    action: Action, run: plan.Run, spec: RunSpec, whole: RunSpec, cfg: plan.Settings, logger: Logger
) -> None:
    match action:
        case RetireOldGenerations():
            kube_actions.uninstall_releases(run.namespace, run.name, keep=plan.release_name(run))
            kube_actions.delete_generations(run, keep_current=True)
        case CreateRunObjects():
            for obj in plan.run_objects(run, spec):
                kube_actions.create(obj)
        case InstallDatabase():
            if run.deployment == 0:  # before anything is installed: every deployment of a sweep
                sweep_layout.refuse_undeployable(run, whole, cfg)
                _refuse_faults_this_cluster_cannot_take(whole, cfg)
            kube_actions.helm_install(plan.helm_release(run, spec, cfg))
        case RetireDeployment():  # the sweep's earlier deployment (the current one is not made yet)
            kube_actions.uninstall_releases(run.namespace, run.name, keep=plan.release_name(run))
        case CreateLoadJob():
            kube_actions.create(runner_jobs.load_job(run, spec, cfg))
        case CreateRunJob():
            kube_actions.create(runner_jobs.run_job(run, spec, cfg))
        case CreateMidcheckJob():
            kube_actions.create(runner_jobs.midcheck_job(run, spec, cfg))
        case WriteStartAt(start_at):
            kube_actions.write_start_at(run, start_at)
        case CreateVerifyJob(ledger_pods):
            kube_actions.create(runner_jobs.verifier_job(run, spec, cfg, ledger_pods))
        case ReleaseRunners():
            kube_actions.release_runners(run)
        case WriteDeliveries(deliveries):
            kube_actions.write_check_input(run, "deliveries.json", json.dumps(deliveries))
        case CreateAnalysisJob(analysis_input, max_pvalue):
            kube_actions.write_check_input(run, "history.json", json.dumps(analysis_input))
            kube_actions.create(runner_jobs.analyzer_job(run, spec, cfg, max_pvalue))
        case CreateCheckJob(earlier_cells):
            kube_actions.create(runner_jobs.check_job(run, spec, cfg, earlier_cells))
        case CreateAcidJob():
            kube_actions.create(runner_jobs.acid_job(run, spec, cfg))
        case KillPods(kills):
            cluster = _fault_cluster(run, spec, cfg)
            for kill in kills:  # kill-all: every pod at once, as close together as the API allows
                logger.info("%s: %s", run.prefix, faults.BY_METHOD[kill.method].inject(cluster, kill))
        case HealFaults(heals):
            cluster = _fault_cluster(run, spec, cfg)
            for heal in heals:
                logger.info("%s: %s", run.prefix, faults.BY_METHOD[heal.method].heal(cluster, heal))
        case WriteResult(result):
            _write_result(run, result, cfg, logger)
        case PruneResults(names):
            kube_actions.delete_results(run.namespace, names)
        case CleanUp():
            if spec.database.deployed:
                kube_actions.helm_uninstall(run.namespace, plan.release_name(run))
            kube_actions.delete_after_run(run)
        case DeleteRun():
            kube_actions.delete_run(run.namespace, run.name)
        case _:
            assert_never(action)


def _write_result(run: plan.Run, result: history.ResultRecord, cfg: plan.Settings, logger: Logger) -> None:
    if not kube_actions.write_result(result, cfg.runner_image):
        logger.warning(
            "%s: BenchmarkResult %s not written: its CRD is not installed (kubectl apply -f crds/benchmarkresult.yaml)",
            run.prefix,
            result.name,
        )


def _refuse_faults_this_cluster_cannot_take(spec: RunSpec, cfg: plan.Settings) -> None:
    """A fault the operator cannot inject here (a partition without the privileged fault helper,
    which only the operator chart installs, opt-in; a Chaos Mesh experiment without Chaos Mesh)
    fails the run before anything is installed, not when it is due."""
    if not spec.faults:
        return
    # which experiments the API server serves matters only to an operator that may create them
    served: frozenset[str] = frozenset()
    if cfg.chaos_mesh:
        served = kube_chaos.served_kinds(faults.chaos_mesh.GROUP, faults.chaos_mesh.VERSION)
    can = faults.Capabilities(bool(cfg.fault_helper_namespace), cfg.chaos_mesh, served)
    for i, fault in enumerate(spec.faults):
        why = faults.REGISTRY[fault.action].refusal(fault, can)
        if why:
            raise plan.chart_policy.ReleaseRefused(f"spec.faults[{i}].{why}")


def _fault_cluster(run: plan.Run, spec: RunSpec, cfg: plan.Settings) -> faults.Cluster:
    """Where a fault kind carries out the run's injections and heals."""
    container = databases.of(spec).container
    members = plan.database_pod_selector(run)
    return faults.Cluster(run.namespace, cfg.fault_helper_namespace, container, members, run.uid, run.name)


@kopf.timer(plan.GROUP, plan.VERSION, plan.PLURAL, interval=TICK_SECONDS)
# retry has a default: kopf passes it to timers too, but its TimerFn protocol does not name it
def drive(name: str, namespace: str | None, logger: Logger, retry: int = 0, **_):
    assert namespace, "BenchmarkRun is a namespaced resource"
    body = kube.get_run(namespace, name)  # fresh: the watch may lag behind our last patch
    if body is None or body["metadata"].get("deletionTimestamp"):
        return
    meta, status = body["metadata"], body.get("status") or {}
    run = plan.Run(
        name, namespace, meta["uid"], meta["generation"], series=(meta.get("labels") or {}).get(plan.LABEL_SCHEDULE, "")
    )
    now = dt.datetime.now(dt.timezone.utc)
    try:
        spec = RunSpec.parse(body["spec"], settings().charts_dir)
    except SpecError as e:
        _record(body, namespace, name, status, spec_unreadable(run, status, str(e), now))
        return
    active = active_run(run, spec, status)  # None: this tick starts a new run
    # in a sweep: the cell under way, with the workload it measures
    cell = sweep_layout.current_cell(spec, status) if active else None
    active, measured = sweep_layout.cell_run(active, cell) if active else None, sweep_layout.cell_spec(spec, cell)
    try:
        world = (
            kube.observe(run.namespace, now, lambda seen: observes(active, measured, status, now, seen))
            if active
            else World()
        )
    except (ApiException, urllib3.exceptions.HTTPError) as e:
        METRICS.reconcile_errors.labels(namespace, name).inc()
        raise kopf.TemporaryError(f"observing: {e}", delay=failures.retry_delay(retry)) from e
    world.git = history.GitSource.from_metadata(meta)
    try:
        step = next_step(run, spec, status, world, now)
    except Exception as e:  # a bug in a decision: said in status and events, not hidden by a timeout
        logger.exception("%s: deciding the next step", run.name)
        step = _failed(body, run, status, None, failures.unexpected("deciding the next step", e), retry, now)
    else:
        try:
            perform(step, active or run, measured, spec, logger)
        except ActionFailed as e:
            step = _failed(body, run, status, e.action, e.error, retry, now)
    _record(body, namespace, name, status, step)
    METRICS.observe(namespace, name, spec, patched(status, step.status))


def _failed(
    body: dict,
    run: plan.Run,
    status: dict,
    action: Action | None,
    error: failures.ActionError,
    retry: int,
    now: dt.datetime,
) -> Step:
    """A failed action (None: deciding the step): the step that fails the run when the error is
    permanent (an OperatorError after failures.UNEXPECTED_RETRIES attempts in a row); else
    kopf.TemporaryError, retried with backoff, the verdict unchanged."""
    METRICS.reconcile_errors.labels(run.namespace, run.name).inc()
    error = failures.given_up(error, retry)
    step = action_failed(run, status, action, error, now)
    if not step.status:  # transient, or a cleanup: retried with backoff, the verdict stays
        delay = failures.retry_delay(retry)
        reason = "CleanupFailed" if isinstance(action, CLEANUP_ACTIONS) else error.reason
        # an OperatorError's message names what it was doing already
        doing = f"{action.name}: " if action and error.reason != failures.OPERATOR_ERROR else ""
        kopf.warn(body, reason=reason, message=f"{doing}{error.message} (retrying in {delay:.0f}s)")
        raise kopf.TemporaryError(error.message, delay=delay)
    return step


def _record(body: dict, namespace: str, name: str, status: dict, step: Step) -> None:
    if step.status:
        kube_actions.patch_status(namespace, name, step.status)
    for e in step.events:
        kopf.event(body, type=e.type, reason=e.reason, message=e.message)


@kopf.on.delete(plan.GROUP, plan.VERSION, plan.PLURAL)
def remove(name: str, namespace: str | None, body: kopf.Body, logger: Logger, retry: int, runtime: dt.timedelta, **_):
    """Finalizer: the Helm releases are not owned by the run, so uninstall them here; the
    rest is owned too, but deleting it now stops a load or run at once. A failing uninstall
    is retried with backoff for failures.DELETION_GIVE_UP_SECONDS, then the finalizer goes
    with a Warning naming what was left behind: deletion never hangs."""
    assert namespace, "BenchmarkRun is a namespaced resource"
    _heal_on_delete(namespace, name, body, logger)
    try:
        released = kube_actions.uninstall_releases(namespace, name)
    except kube_actions.HelmError as e:
        delay = failures.deletion_retry(runtime.total_seconds(), retry)
        if delay is not None:
            kopf.warn(body, reason="UninstallRetrying", message=f"{e} (retrying in {delay:.0f}s)")
            raise kopf.TemporaryError(str(e), delay=delay) from e
        release = ((body.get("status") or {}).get("database") or {}).get("release") or f"{name}-g<N>"
        kopf.warn(
            body,
            reason="CleanupAbandoned",
            message=f"left behind in {namespace}: Helm release(s) of this run (e.g. {release}; "
            f"remove with helm uninstall) after {runtime.total_seconds():.0f}s: {e}",
        )
        released = []
    try:
        n = kube_actions.delete_generations(plan.Run(name, namespace, "", 0), keep_current=False)
    except (ApiException, urllib3.exceptions.HTTPError) as e:
        n = 0  # owned by the run: the garbage collector removes them anyway
        logger.warning("deleting the objects of %s: %s (left to the garbage collector)", name, e)
    METRICS.forget(namespace, name)
    logger.info("removed releases %s and %d objects of %s", released, n, name)


def _heal_on_delete(namespace: str, name: str, body: kopf.Body, logger: Logger) -> None:
    """A pause, partition or slow network still in force when its run is deleted: undone before
    the release goes (a stopped process ignores the pod's SIGTERM until its grace period ends), so
    that a kept database (cleanup policy) is not left frozen, cut off or slowed. Best effort: the
    run is going either way (a pod that goes takes its process and network namespace, and the
    rules, with it)."""
    status = body.get("status") or {}
    _, heals = faults.unhealed(list(status.get("faults") or []), dt.datetime.now(dt.timezone.utc))
    if not heals:
        return
    container = databases.named(body["spec"]["database"]["type"]).container
    cluster = faults.Cluster(namespace, settings().fault_helper_namespace, container, run_uid=body["metadata"]["uid"])
    for heal in heals:
        try:
            logger.info("%s: %s", name, faults.BY_METHOD[heal.method].heal(cluster, heal))
        except (kube_actions.CallFailed, ApiException, urllib3.exceptions.HTTPError) as e:
            logger.warning("%s: undoing fault %s on pod %s: %s", name, heal.method, heal.pod, e)


@kopf.timer(plan.GROUP, plan.VERSION, schedule.PLURAL, interval=SCHEDULE_TICK_SECONDS)
def keep_schedule(name: str, namespace: str | None, logger: Logger, retry: int = 0, **_):
    assert namespace, "BenchmarkSchedule is a namespaced resource"
    """A BenchmarkSchedule: schedule.decide says what to delete and create; a run the API server
    refuses makes the schedule Ready=False (InvalidTemplate), any other failure is retried."""
    body = kube.get_schedule(namespace, name)
    if body is None or body["metadata"].get("deletionTimestamp"):
        return
    meta, status = body["metadata"], body.get("status") or {}
    now = dt.datetime.now(dt.timezone.utc)
    try:
        runs = [schedule.OwnedRun.from_object(r) for r in kube.runs_of_schedule(namespace, name, meta["uid"])]
        decision = schedule.decide(
            name, body["spec"], meta["generation"], status, parse_time(meta["creationTimestamp"]), runs, now
        )
        for run in decision.delete:
            logger.info("schedule %s: deleting BenchmarkRun %s", name, run)
            kube_actions.delete_run(namespace, run)
        if decision.create:
            assert decision.scheduled_time is not None, "a run to create has its scheduled time"
            if kube_actions.create_run(schedule.run_object(body, decision.create, decision.scheduled_time)):
                kopf.event(
                    body,
                    type="Normal",
                    reason="RunCreated",
                    message=f"BenchmarkRun {decision.create} for {rfc3339(decision.scheduled_time)}",
                )
    except kube_actions.CallFailed as e:
        if not e.error.permanent:
            raise kopf.TemporaryError(e.error.message, delay=failures.retry_delay(retry)) from e
        decision = schedule.template_refused(decision, meta["generation"], status, e.error.message, now)
    except (ApiException, urllib3.exceptions.HTTPError) as e:
        raise kopf.TemporaryError(f"schedule {name}: {e}", delay=failures.retry_delay(retry)) from e
    if any(status.get(k) != v for k, v in decision.status.items()):
        kube_actions.patch_schedule_status(namespace, name, decision.status)
    for event in decision.events:
        kopf.event(body, type=event.type, reason=event.reason, message=event.message)
