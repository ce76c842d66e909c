"""Cluster reads for the timer: the API clients, and the reads the stages ask for (stages/reads.py)
carried out into a World; the custom objects read whole. What the timer does to the cluster is
kube_actions.py's. No decisions here (they are in stages/: what to read, what to do)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import re
from collections.abc import Callable
from typing import assert_never

import kubernetes
from kubernetes.client.rest import ApiException

from . import databases, failures, faults, history, plan, schedule
from .runstatus import RunnerTarget
from .stages import reads
from .stages.machine import JobState, World
from .timestamps import rfc3339

# How long a member may take to say which is the primary before the next is asked.
PRIMARY_TIMEOUT_SECONDS = 5.0

_client: kubernetes.client.ApiClient | None = None


def api_client() -> kubernetes.client.ApiClient:
    """One client (one connection pool, one TLS context) for the operator's life: a client per
    call loaded the CA bundle and opened connections every tick, which grew the RSS."""
    global _client
    if _client is None:
        try:
            kubernetes.config.load_incluster_config()
        except kubernetes.config.ConfigException:
            kubernetes.config.load_kube_config()
        _client = kubernetes.client.ApiClient()
    return _client


def core() -> kubernetes.client.CoreV1Api:
    return kubernetes.client.CoreV1Api(api_client())


def batch() -> kubernetes.client.BatchV1Api:
    return kubernetes.client.BatchV1Api(api_client())


def rbac() -> kubernetes.client.RbacAuthorizationV1Api:
    return kubernetes.client.RbacAuthorizationV1Api(api_client())


def custom() -> kubernetes.client.CustomObjectsApi:
    return kubernetes.client.CustomObjectsApi(api_client())


def not_found(e: ApiException) -> bool:
    return e.status == 404


def label_selector(labels: dict[str, str], exclude_generation: int | None = None) -> str:
    parts = [f"{k}={v}" for k, v in labels.items()]
    if exclude_generation is not None:
        parts.append(f"{plan.LABEL_GENERATION}!={exclude_generation}")
    return ",".join(parts)


# ---- our custom objects: the BenchmarkRun, its history (BenchmarkResults), BenchmarkSchedules -----


def _get_custom(namespace: str, plural: str, name: str) -> dict | None:
    """One of our custom objects (BenchmarkRun, -Result, -Schedule), None if there is none."""
    try:
        return custom().get_namespaced_custom_object(plan.GROUP, plan.VERSION, namespace, plural, name)
    except ApiException as e:
        if not_found(e):
            return None
        raise


def get_run(namespace: str, name: str) -> dict | None:
    return _get_custom(namespace, plan.PLURAL, name)


def list_results(namespace: str, series: str) -> list[dict]:
    """The BenchmarkResults of a history series (a run, or every run of a schedule); none when
    their CRD is not installed (see write_result)."""
    try:
        return custom().list_namespaced_custom_object(
            plan.GROUP, plan.VERSION, namespace, history.RESULT_PLURAL, label_selector=f"{plan.LABEL_SERIES}={series}"
        )["items"]
    except ApiException as e:
        if not_found(e):
            return []
        raise


def get_result(namespace: str, name: str) -> dict | None:
    return _get_custom(namespace, history.RESULT_PLURAL, name)


def get_schedule(namespace: str, name: str) -> dict | None:
    return _get_custom(namespace, schedule.PLURAL, name)


def runs_of_schedule(namespace: str, name: str, uid: str) -> list[dict]:
    """The BenchmarkRuns the schedule owns (by label, then by owner UID: not a namesake's)."""
    items = custom().list_namespaced_custom_object(
        plan.GROUP, plan.VERSION, namespace, plan.PLURAL, label_selector=f"{schedule.LABEL_SCHEDULE}={name}"
    )["items"]
    return [r for r in items if any(o.get("uid") == uid for o in r["metadata"].get("ownerReferences") or [])]


# ---- observation ----------------------------------------------------------------------------------


def is_ready(pod) -> bool:
    if pod.metadata.deletion_timestamp:
        return False
    return any(c.type == "Ready" and c.status == "True" for c in (pod.status.conditions or []))


def ready_pods(namespace: str, labels: dict[str, str]) -> int:
    pods = core().list_namespaced_pod(namespace, label_selector=label_selector(labels)).items
    return sum(1 for p in pods if is_ready(p))


def _why_not_ready(pod) -> str:
    for cs in pod.status.container_statuses or []:
        waiting = cs.state.waiting if cs.state else None
        if waiting and waiting.reason:
            return f"{pod.metadata.name}: {waiting.reason}"
        if cs.restart_count:
            return f"{pod.metadata.name}: restarted {cs.restart_count} times"
    if pod.status.phase == "Running":
        return f"{pod.metadata.name}: running, not ready yet (readiness probe)"
    return f"{pod.metadata.name}: {pod.status.phase}"


def database_pods(namespace: str, labels: dict[str, str]) -> tuple[int, str]:
    """Ready pods, and why the first other one is not."""
    pods = core().list_namespaced_pod(namespace, label_selector=label_selector(labels)).items
    waiting = [_why_not_ready(p) for p in pods if not is_ready(p)]
    return sum(1 for p in pods if is_ready(p)), (waiting[0] if waiting else "")


def pod_states(namespace: str, labels: dict[str, str], now: dt.datetime) -> list[failures.PodState]:
    """Each pod's first waiting container, for failures.stuck_pod; for a pod the scheduler has not
    placed, its message, requests and claims, for failures.scheduling."""
    out = []
    for pod in core().list_namespaced_pod(namespace, label_selector=label_selector(labels)).items:
        created = pod.metadata.creation_timestamp
        age = (now - created).total_seconds() if created else 0.0
        waiting = [
            (cs.state.waiting, cs.image) for cs in pod.status.container_statuses or [] if cs.state and cs.state.waiting
        ]
        w, image = waiting[0] if waiting else (None, "")
        state = failures.PodState(
            pod.metadata.name,
            age,
            (w.reason or "") if w else "",
            (w.message or "") if w else "",
            image,
            node=pod.spec.node_name or "",
        )
        if not pod.spec.node_name and not pod.metadata.deletion_timestamp:
            state = dataclasses.replace(
                state,
                unschedulable=_unschedulable(pod),
                requests=_requests(pod),
                claims=tuple(
                    _claim_state(namespace, v.persistent_volume_claim.claim_name, now)
                    for v in pod.spec.volumes or []
                    if v.persistent_volume_claim
                ),
            )
        out.append(state)
    return out


def _unschedulable(pod) -> str:
    return next(
        (
            c.message or c.reason or ""
            for c in pod.status.conditions or []
            if c.type == "PodScheduled" and c.status == "False" and c.reason == "Unschedulable"
        ),
        "",
    )


def _requests(pod) -> dict[str, float]:
    """What the scheduler places the pod by: the sum of its containers' requests (init
    containers run one at a time: the largest of them counts, if larger)."""

    def total(containers) -> dict[str, float]:
        out: dict[str, float] = {}
        for c in containers or []:
            for resource, value in ((c.resources and c.resources.requests) or {}).items():
                if resource in ("cpu", "memory"):
                    out[resource] = out.get(resource, 0.0) + float(kubernetes.utils.parse_quantity(value))
        return out

    main, init = total(pod.spec.containers), [total([c]) for c in pod.spec.init_containers or []]
    return {
        r: max([main.get(r, 0.0)] + [i.get(r, 0.0) for i in init])
        for r in ("cpu", "memory")
        if r in main or any(r in i for i in init)
    }


def _claim_state(namespace: str, name: str, now: dt.datetime) -> failures.ClaimState:
    """A claim, whether its StorageClass exists, and its latest Event (the provisioner's words).
    What the operator may not read (no RBAC for StorageClasses) counts as existing: unknown is
    never a reason to fail a run."""
    try:
        claim = core().read_namespaced_persistent_volume_claim(name, namespace)
    except ApiException as e:
        if e.status in (403, 404):  # not made yet by the StatefulSet, or not ours to read
            return failures.ClaimState(name, "Pending", "", True, 0.0)
        raise
    if claim.status.phase == "Bound":
        return failures.ClaimState(name, "Bound", claim.spec.storage_class_name or "", True, 0.0)
    sc_name = claim.spec.storage_class_name or ""
    exists, waits = True, False
    if sc_name:
        try:
            sc = kubernetes.client.StorageV1Api(api_client()).read_storage_class(sc_name)
            waits = sc.volume_binding_mode == "WaitForFirstConsumer" and not (claim.metadata.annotations or {}).get(
                "volume.kubernetes.io/selected-node"
            )
        except ApiException as e:
            if e.status not in (403, 404):
                raise
            exists = e.status == 403  # not ours to read: unknown, so not missing
    created = claim.metadata.creation_timestamp
    return failures.ClaimState(
        name,
        claim.status.phase or "Pending",
        sc_name,
        exists,
        (now - created).total_seconds() if created else 0.0,
        _last_event(namespace, "PersistentVolumeClaim", name),
        waits,
    )


def _last_event(namespace: str, kind: str, name: str) -> str:
    try:
        events = (
            core()
            .list_namespaced_event(namespace, field_selector=f"involvedObject.kind={kind},involvedObject.name={name}")
            .items
        )
    except ApiException as e:
        if e.status == 403:
            return ""
        raise
    if not events:
        return ""
    last = max(events, key=lambda e: e.last_timestamp or e.event_time or e.metadata.creation_timestamp)
    return f"{last.reason}: {(last.message or '').strip()}"


def failed_creates(namespace: str, name_prefix: str) -> list[str]:
    """The FailedCreate Events of the run's controllers (their names start with the run's
    prefix): why a StatefulSet or Job has no pods."""
    try:
        events = core().list_namespaced_event(namespace, field_selector="reason=FailedCreate").items
    except ApiException as e:
        if e.status == 403:
            return []
        raise
    return [(e.message or "").strip() for e in events if (e.involved_object.name or "").startswith(name_prefix)]


def largest_node() -> dict[str, float]:
    """The largest allocatable cpu (cores) and memory (bytes) of any node; {} when the operator
    may not list nodes (then no request is judged too large)."""
    try:
        nodes = core().list_node().items
    except ApiException as e:
        if e.status == 403:
            return {}
        raise
    out: dict[str, float] = {}
    for node in nodes:
        for resource in ("cpu", "memory"):
            value = (node.status.allocatable or {}).get(resource)
            if value is not None:
                out[resource] = max(out.get(resource, 0.0), float(kubernetes.utils.parse_quantity(value)))
    return out


def _container_status(pod, container: str):
    """The status the kubelet reports for the pod's container of that name (None before it has one)."""
    return next((cs for cs in pod.status.container_statuses or [] if cs.name == container), None)


def restarts(pod, container: str) -> int:
    status = _container_status(pod, container)
    return (status.restart_count or 0) if status else 0


def pods_of(namespace: str, labels: dict[str, str], container: str) -> list[faults.DatabasePod]:
    """The database pods, each with the restartCount of its database container, when it was last
    OOMKilled and its memory limit."""
    pods = core().list_namespaced_pod(namespace, label_selector=label_selector(labels)).items
    return [
        faults.DatabasePod(
            p.metadata.name,
            p.metadata.uid,
            is_ready(p),
            restarts(p, container),
            oom_killed_at=_oom_killed_at(p, container),
            memory_limit=_memory_limit(p, container),
            node=p.spec.node_name or "",
        )
        for p in pods
    ]


def _memory_limit(pod, container: str) -> str:
    spec = next((c for c in pod.spec.containers if c.name == container), None)
    return str(((spec and spec.resources and spec.resources.limits) or {}).get("memory", ""))


def _oom_killed_at(pod, container: str) -> str:
    """finishedAt of the container's last end, if the kernel killed it at its memory limit."""
    status = _container_status(pod, container)
    ended = status and status.last_state and status.last_state.terminated
    if not ended or ended.reason != "OOMKilled":
        return ""
    return rfc3339(ended.finished_at) if ended.finished_at else "unknown time"


def not_ready_seconds(pod, now: dt.datetime) -> float:
    """How long a pod has been not Ready: since its Ready condition last changed, or since it was
    made when it has none yet."""
    ready = next((c for c in pod.status.conditions or [] if c.type == "Ready"), None)
    since = ready.last_transition_time if ready and ready.last_transition_time else pod.metadata.creation_timestamp
    return (now - since).total_seconds() if since else 0.0


def busy_nodes(namespace: str, job: str) -> frozenset[str]:
    """The nodes of the runner Job's pods and of the operator's own pod (NODE_NAME, from the
    downward API in its Deployment)."""
    pods = core().list_namespaced_pod(namespace, label_selector=f"job-name={job}").items
    runners = {p.spec.node_name for p in pods if p.spec.node_name}
    return frozenset(runners | ({os.environ["NODE_NAME"]} if os.environ.get("NODE_NAME") else set()))


def _running_runner_pods(namespace: str, job: str) -> list:
    """The runner Job's pods that run and are not being deleted."""
    pods = core().list_namespaced_pod(namespace, label_selector=f"job-name={job}").items
    return [p for p in pods if p.status.phase == "Running" and not p.metadata.deletion_timestamp]


def runner_pods(namespace: str, job: str) -> tuple[RunnerTarget, ...]:
    """The runner Job's running pods (not being deleted), by name."""
    running = _running_runner_pods(namespace, job)
    return tuple(sorted((RunnerTarget(pod=p.metadata.name, uid=p.metadata.uid) for p in running), key=lambda t: t.pod))


def runner_pod_ips(namespace: str, job: str) -> dict[int, str]:
    """Shard -> IP of each running pod of the runner Job (the pods holding their ledgers)."""
    out = {}
    for pod in _running_runner_pods(namespace, job):
        index = (pod.metadata.annotations or {}).get("batch.kubernetes.io/job-completion-index")
        if index is not None and pod.status.pod_ip:
            out[int(index)] = pod.status.pod_ip
    return out


def error_line(message: str) -> str:
    """The runner's one-line error ("tpcc load: error: ...") from a termination message that
    may hold the tail of the log; else its last line."""
    lines = [ln.strip() for ln in message.splitlines() if ln.strip()]
    errors = [ln for ln in lines if re.search(r"\berror\b", ln, re.IGNORECASE)]
    return (errors or lines or [""])[-1]


def _failure_message(namespace: str, job: str) -> str:
    """The first failed pod's termination message (the runner's one-line error)."""
    for pod in core().list_namespaced_pod(namespace, label_selector=f"job-name={job}").items:
        for cs in pod.status.container_statuses or []:
            t = cs.state.terminated if cs.state else None
            if t and t.exit_code != 0:
                detail = error_line(t.message or "") or t.reason or "error"
                return f"pod {pod.metadata.name} exited {t.exit_code}: {detail}"[:500]
    return ""


def job_state(namespace: str, name: str) -> JobState:
    try:
        job = batch().read_namespaced_job(name, namespace)
    except ApiException as e:
        if not_found(e):
            return JobState()
        raise
    conditions = {c.type: c for c in (job.status.conditions or []) if c.status == "True"}
    if "Failed" in conditions:
        c = conditions["Failed"]
        detail = _failure_message(namespace, name)
        return JobState(exists=True, failed=True, message=detail or f"{c.reason}: {c.message or 'job failed'}")
    return JobState(exists=True, succeeded="Complete" in conditions)


def configmap_data(namespace: str, name: str) -> dict[str, str]:
    try:
        return core().read_namespaced_config_map(name, namespace).data or {}
    except ApiException as e:
        if not_found(e):
            return {}
        raise


def _json(text: str | None) -> dict | None:
    if not text:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def observe(namespace: str, now: dt.datetime, wanted: Callable[[World | None], list[reads.Read]]) -> World:
    """Carries out the reads the stages ask for (stages/dispatch.observes): first those asked
    with nothing seen, then those that follow from what they found."""
    world = World()
    for read in wanted(None):
        _read(namespace, now, read, world)
    for read in wanted(world):
        _read(namespace, now, read, world)
    return world


def _read(ns: str, now: dt.datetime, read: reads.Read, world: World) -> None:
    """One read, into the World field it names (`now`: for the ages of pods and claims)."""
    match read:
        case reads.Job(into, name):
            setattr(world, into, job_state(ns, name))
        case reads.Report(into, configmap, key):
            setattr(world, into, _json(configmap_data(ns, configmap).get(key)))
        case reads.StartAt(configmap):
            world.start_at = configmap_data(ns, configmap).get("startAt")
        case reads.ReadyRunners(job):
            world.runners_ready = ready_pods(ns, {"job-name": job})
        case reads.Results(shard, configmap):
            doc = _json(configmap_data(ns, configmap).get("results.json"))
            if doc is not None:
                world.results[shard] = doc
        case reads.RunnerPodIps(job):
            world.runner_pod_ips = runner_pod_ips(ns, job)
        case reads.BusyNodes(job):
            world.busy_nodes = busy_nodes(ns, job)
        case reads.RunnerPods(job):
            world.runner_pods = runner_pods(ns, job)
        case reads.DatabaseReadiness(labels):
            world.database_ready, world.database_waiting = database_pods(ns, labels)
        case reads.DatabasePods(labels, container):
            world.database_pods = pods_of(ns, labels, container)
        case reads.Primary(database, endpoints):
            world.primary = databases.named(database).primary(list(endpoints), PRIMARY_TIMEOUT_SECONDS)
        case reads.DatabaseImages(labels):
            pods = core().list_namespaced_pod(ns, label_selector=label_selector(labels)).items
            world.database_images = sorted({c.image for p in pods for c in p.spec.containers})
        case reads.PodStates(labels):
            world.pods = pod_states(ns, labels, now)
        case reads.LargestNode():
            world.largest_node = largest_node()
        case reads.FailedCreates(prefix):
            world.failed_creates = failed_creates(ns, prefix)
        case reads.History(series):
            world.history = [history.summary_of(o) for o in list_results(ns, series)]
        case reads.NamedBaseline(name):
            found = get_result(ns, name)
            world.named_baseline = history.summary_of(found).summary if found else None
        case _:
            assert_never(read)
