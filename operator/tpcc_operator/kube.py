"""Cluster I/O for the timer: carry out the reads the stages ask for (stages/reads.py), create
objects if absent, delete by label, and drive the `helm` CLI. No decisions here (they are in
stages/: what to read, what to do)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import re
import subprocess
import tempfile
from collections.abc import Callable
from typing import Any, assert_never

import kubernetes
from kubernetes.client.rest import ApiException

from . import databases, failures, faults, history, plan, schedule
from .stages import reads
from .stages.machine import JobState, World
from .timestamps import rfc3339

HELM = os.environ.get("TPCC_HELM", "helm")
HELM_TIMEOUT_SECONDS = 180
# How long a member may take to say which is the primary before the next is asked.
PRIMARY_TIMEOUT_SECONDS = 5.0


class HelmError(Exception):
    pass


class CallFailed(Exception):
    """An API call the run needed was refused or failed; `error` says whether for good."""

    def __init__(self, error: failures.ActionError):
        super().__init__(error.message)
        self.error = error


_client: kubernetes.client.ApiClient | None = None


def _api_client() -> kubernetes.client.ApiClient:
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
    return kubernetes.client.CoreV1Api(_api_client())


def batch() -> kubernetes.client.BatchV1Api:
    return kubernetes.client.BatchV1Api(_api_client())


def rbac() -> kubernetes.client.RbacAuthorizationV1Api:
    return kubernetes.client.RbacAuthorizationV1Api(_api_client())


def custom() -> kubernetes.client.CustomObjectsApi:
    return kubernetes.client.CustomObjectsApi(_api_client())


def api_failure(e: ApiException, what: str) -> failures.ActionError:
    """The API server's answer (its Status message names the field) judged by failures."""
    try:
        body = json.loads(e.body or "{}")
    except ValueError:
        body = {}
    message = body.get("message") if isinstance(body, dict) else None
    reason = body.get("reason") if isinstance(body, dict) else None
    return failures.api_error(e.status or 0, reason or e.reason or "", message or str(e.reason), what)


def _missing(e: ApiException) -> bool:
    return e.status == 404


# ---- the BenchmarkRun itself ---------------------------------------------------------------


def _get_custom(namespace: str, plural: str, name: str) -> dict | None:
    """One of our custom objects (BenchmarkRun, -Result, -Schedule), None if there is none."""
    try:
        return custom().get_namespaced_custom_object(plan.GROUP, plan.VERSION, namespace, plural, name)
    except ApiException as e:
        if _missing(e):
            return None
        raise


def get_run(namespace: str, name: str) -> dict | None:
    return _get_custom(namespace, plan.PLURAL, name)


def patch_status(namespace: str, name: str, status: dict) -> None:
    """JSON merge patch of .status (None values remove fields)."""
    custom().patch_namespaced_custom_object_status(
        plan.GROUP, plan.VERSION, namespace, plan.PLURAL, name, {"status": status}
    )


def delete_run(namespace: str, name: str) -> None:
    try:
        custom().delete_namespaced_custom_object(plan.GROUP, plan.VERSION, namespace, plan.PLURAL, name)
    except ApiException as e:
        if not _missing(e):
            raise


# ---- create if absent / delete by label ------------------------------------------------------


def _creator(kind: str) -> Callable[[str, dict], Any]:
    return {
        "ConfigMap": core().create_namespaced_config_map,
        "ServiceAccount": core().create_namespaced_service_account,
        "Role": rbac().create_namespaced_role,
        "RoleBinding": rbac().create_namespaced_role_binding,
        "Job": batch().create_namespaced_job,
    }[kind]


def create(obj: dict) -> bool:
    """Create the object; False if it already exists (the names are deterministic, so an
    existing object is this very object from an earlier attempt)."""
    try:
        _creator(obj["kind"])(obj["metadata"]["namespace"], obj)
        return True
    except ApiException as e:
        if e.status == 409:
            return False
        raise CallFailed(api_failure(e, f"{obj['kind']} {obj['metadata']['name']}")) from e


def _selector(labels: dict[str, str], exclude_generation: int | None = None) -> str:
    parts = [f"{k}={v}" for k, v in labels.items()]
    if exclude_generation is not None:
        parts.append(f"{plan.LABEL_GENERATION}!={exclude_generation}")
    return ",".join(parts)


def delete_labelled(namespace: str, selector: str, kinds: tuple[str, ...]) -> int:
    """Delete the objects of the given kinds matching a label selector; returns how many."""
    c, b, r = core(), batch(), rbac()
    api = {
        "Job": (b.list_namespaced_job, b.delete_namespaced_job),
        "ConfigMap": (c.list_namespaced_config_map, c.delete_namespaced_config_map),
        "ServiceAccount": (c.list_namespaced_service_account, c.delete_namespaced_service_account),
        "Role": (r.list_namespaced_role, r.delete_namespaced_role),
        "RoleBinding": (r.list_namespaced_role_binding, r.delete_namespaced_role_binding),
    }
    deleted = 0
    for kind in kinds:
        list_fn, delete_fn = api[kind]
        for item in list_fn(namespace, label_selector=selector).items:
            try:
                # Background: the Job's pods go too, without waiting here
                delete_fn(item.metadata.name, namespace, propagation_policy="Background")
                deleted += 1
            except ApiException as e:
                if not _missing(e):
                    raise
    return deleted


RUN_KINDS = ("Job", "ConfigMap", "RoleBinding", "Role", "ServiceAccount")


def delete_generations(run: plan.Run, keep_current: bool) -> int:
    """Everything labelled with this run: of other generations only, or of all of them."""
    base = {plan.LABEL_MANAGED_BY: plan.MANAGER, plan.LABEL_RUN: run.name}
    selector = _selector(base, run.generation if keep_current else None)
    return delete_labelled(run.namespace, selector, RUN_KINDS)


def delete_after_run(run: plan.Run) -> int:
    """The cleanup policy's share: Jobs (with their pods), runner RBAC and the start
    ConfigMap of this generation; the results ConfigMaps stay until the run is deleted."""
    gen = {plan.LABEL_MANAGED_BY: plan.MANAGER, plan.LABEL_RUN: run.name, plan.LABEL_GENERATION: str(run.generation)}
    n = delete_labelled(run.namespace, _selector(gen), ("Job", "RoleBinding", "Role", "ServiceAccount"))
    try:
        core().delete_namespaced_config_map(plan.start_configmap_name(run), run.namespace)
        n += 1
    except ApiException as e:
        if not _missing(e):
            raise
    return n


# ---- observation -------------------------------------------------------------------------------


def _ready(pod) -> bool:
    if pod.metadata.deletion_timestamp:
        return False
    return any(c.type == "Ready" and c.status == "True" for c in (pod.status.conditions or []))


def ready_pods(namespace: str, labels: dict[str, str]) -> int:
    pods = core().list_namespaced_pod(namespace, label_selector=_selector(labels)).items
    return sum(1 for p in pods if _ready(p))


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
    pods = core().list_namespaced_pod(namespace, label_selector=_selector(labels)).items
    waiting = [_why_not_ready(p) for p in pods if not _ready(p)]
    return sum(1 for p in pods if _ready(p)), (waiting[0] if waiting else "")


def pod_states(namespace: str, labels: dict[str, str], now: dt.datetime) -> list[failures.PodState]:
    """Each pod's first waiting container, for failures.stuck_pod; for a pod the scheduler has not
    placed, its message, requests and claims, for failures.scheduling."""
    out = []
    for pod in core().list_namespaced_pod(namespace, label_selector=_selector(labels)).items:
        created = pod.metadata.creation_timestamp
        age = (now - created).total_seconds() if created else 0.0
        waiting = [
            (cs.state.waiting, cs.image) for cs in pod.status.container_statuses or [] if cs.state and cs.state.waiting
        ]
        w, image = waiting[0] if waiting else (None, "")
        state = failures.PodState(
            pod.metadata.name, age, (w.reason or "") if w else "", (w.message or "") if w else "", image
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
            sc = kubernetes.client.StorageV1Api(_api_client()).read_storage_class(sc_name)
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


def _restarts(pod, container: str) -> int:
    status = _container_status(pod, container)
    return (status.restart_count or 0) if status else 0


def pods_of(namespace: str, labels: dict[str, str], container: str) -> list[faults.DatabasePod]:
    """The database pods, each with the restartCount of its database container, when it was last
    OOMKilled and its memory limit."""
    pods = core().list_namespaced_pod(namespace, label_selector=_selector(labels)).items
    return [
        faults.DatabasePod(
            p.metadata.name,
            p.metadata.uid,
            _ready(p),
            _restarts(p, container),
            oom_killed_at=_oom_killed_at(p, container),
            memory_limit=_memory_limit(p, container),
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


def kill_pod(namespace: str, kill: faults.Kill) -> bool:
    """Delete the pod if it is still the one chosen (UID precondition): a repeat after an
    operator restart finds it gone or replaced and kills nothing."""
    body = kubernetes.client.V1DeleteOptions(
        grace_period_seconds=kill.grace_seconds, preconditions=kubernetes.client.V1Preconditions(uid=kill.uid)
    )
    try:
        core().delete_namespaced_pod(kill.pod, namespace, body=body)
        return True
    except ApiException as e:
        if e.status in (404, 409):
            return False
        raise


def kill_process(
    namespace: str, kill: faults.Kill, container: str, command: tuple[str, ...] = plan.KILL_PROCESS_COMMAND
) -> bool:
    """SIGKILL the database process inside its container (pods/exec), if the pod is still the
    one chosen (UID) and its container has not restarted since (restartCount): a repeat after an
    operator restart kills nothing more. The charts write the process's pid to /tmp/database.pid
    and share the pod's PID namespace, so it is not PID 1 (which ignores SIGKILL from inside).
    With another command, the same for another signal (a pause's SIGSTOP, its SIGCONT)."""
    from kubernetes.stream import stream  # patches the client it is given: use one of its own

    what = (
        "pause"
        if command == plan.PAUSE_PROCESS_COMMAND
        else "resume"
        if command == plan.RESUME_PROCESS_COMMAND
        else "kill-process"
    )
    try:
        pod = core().read_namespaced_pod(kill.pod, namespace)
    except ApiException as e:
        if e.status == 404:
            return False
        raise
    if pod.metadata.uid != kill.uid or _restarts(pod, container) != kill.restarts:
        return False
    api = kubernetes.client.CoreV1Api(kubernetes.client.ApiClient(_api_client().configuration))
    try:
        out = stream(
            api.connect_get_namespaced_pod_exec,
            kill.pod,
            namespace,
            container=container,
            command=list(command),
            stderr=True,
            stdout=True,
            stdin=False,
            tty=False,
            _request_timeout=30,
        )
    except ApiException as e:
        # a refused websocket upgrade comes as status 0 with "Handshake status 403 ..." in the reason
        status = e.status or int((re.search(r"Handshake status (\d+)", str(e.reason)) or [0, 0])[1])
        raise CallFailed(
            failures.api_error(status, "ExecFailed", error_line(str(e.body or e.reason)), f"{what} in pod {kill.pod}")
        ) from None
    if out.strip():  # kill prints only when it could not kill: the fault asked for did not happen
        reason = "FaultNotHealed" if command == plan.RESUME_PROCESS_COMMAND else "FaultNotInjected"
        raise CallFailed(failures.ActionError(True, reason, f"{what} in {kill.pod}/{container}: {error_line(out)}"))
    return True


def resume_process(namespace: str, heal: faults.Kill, container: str) -> bool:
    """SIGCONT to a paused database process, if its pod and container are still the ones
    paused (a restarted container's new process was never stopped)."""
    return kill_process(namespace, heal, container, plan.RESUME_PROCESS_COMMAND)


def _exec(namespace: str, pod: str, container: str, command: list[str], what: str) -> str:
    """pods/exec: the command's stdout and stderr (a refused exec: CallFailed)."""
    from kubernetes.stream import stream  # patches the client it is given: use one of its own

    api = kubernetes.client.CoreV1Api(kubernetes.client.ApiClient(_api_client().configuration))
    try:
        return stream(
            api.connect_get_namespaced_pod_exec,
            pod,
            namespace,
            container=container,
            command=command,
            stderr=True,
            stdout=True,
            stdin=False,
            tty=False,
            _request_timeout=60,
        )
    except ApiException as e:
        status = e.status or int((re.search(r"Handshake status (\d+)", str(e.reason)) or [0, 0])[1])
        raise CallFailed(failures.api_error(status, "ExecFailed", error_line(str(e.body or e.reason)), what)) from None


def _fault_helper(helper_namespace: str, node: str, what: str) -> str:
    """The fault helper's pod on the node (the operator chart's faultHelper DaemonSet)."""
    if not helper_namespace:
        raise CallFailed(
            failures.ActionError(
                True,
                "FaultNotInjected",
                f"{what}: the operator has no fault helper (install its chart with faultHelper.enabled=true)",
            )
        )
    pods = (
        core()
        .list_namespaced_pod(
            helper_namespace, label_selector=_selector(plan.FAULT_HELPER_LABELS), field_selector=f"spec.nodeName={node}"
        )
        .items
    )
    running = [p.metadata.name for p in pods if p.status.phase == "Running" and _ready(p)]
    if not running:
        raise CallFailed(
            failures.ActionError(False, "FaultHelperNotReady", f"{what}: no ready fault helper pod on node {node}")
        )
    return running[0]


def partition(namespace: str, helper_namespace: str, target: faults.Kill, members: dict[str, str]) -> bool:
    """Cut the target pod off from the other database members (members: the run's database pods'
    labels), both ways, if it is still the pod chosen: the fault helper on its node puts DROP rules
    for each other member's IP into its network namespace (plan.PARTITION_SCRIPT)."""
    try:
        pod = core().read_namespaced_pod(target.pod, namespace)
    except ApiException as e:
        if e.status == 404:
            return False
        raise
    if pod.metadata.uid != target.uid:
        return False
    peers = [
        p.status.pod_ip
        for p in core().list_namespaced_pod(namespace, label_selector=_selector(members)).items
        if p.metadata.uid != target.uid and p.status.pod_ip
    ]
    what = f"partition of pod {target.pod}"
    helper = _fault_helper(helper_namespace, pod.spec.node_name, what)
    script = ["sh", "-c", plan.PARTITION_SCRIPT, "sh", target.uid, plan.partition_tag(target.uid), *peers]
    out = _exec(helper_namespace, helper, "helper", script, what)
    if out.strip().splitlines()[-1:] != [f"ok {2 * len(peers)}"]:
        raise CallFailed(failures.ActionError(True, "FaultNotInjected", f"{what}: {error_line(out)}"))
    return True


def heal_partition(namespace: str, helper_namespace: str, target: faults.Kill) -> bool:
    """Delete a partition's rules (by their tag) from the target pod's network namespace; a pod
    gone or replaced took its network namespace, and the rules, with it."""
    try:
        pod = core().read_namespaced_pod(target.pod, namespace)
    except ApiException as e:
        if e.status == 404:
            return False
        raise
    if pod.metadata.uid != target.uid:
        return False
    what = f"healing the partition of pod {target.pod}"
    helper = _fault_helper(helper_namespace, pod.spec.node_name, what)
    script = ["sh", "-c", plan.HEAL_PARTITION_SCRIPT, "sh", target.uid, plan.partition_tag(target.uid)]
    out = _exec(helper_namespace, helper, "helper", script, what)
    if out.strip().splitlines()[-1:] != ["ok 0"]:
        raise CallFailed(failures.ActionError(True, "FaultNotHealed", f"{what}: {error_line(out)}"))
    return True


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
        if _missing(e):
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
        if _missing(e):
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
        case reads.DatabaseReadiness(labels):
            world.database_ready, world.database_waiting = database_pods(ns, labels)
        case reads.DatabasePods(labels, container):
            world.database_pods = pods_of(ns, labels, container)
        case reads.Primary(database, endpoints):
            world.primary = databases.named(database).primary(list(endpoints), PRIMARY_TIMEOUT_SECONDS)
        case reads.DatabaseImages(labels):
            pods = core().list_namespaced_pod(ns, label_selector=_selector(labels)).items
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


# ---- the run history (BenchmarkResults) ----------------------------------------------------------


def list_results(namespace: str, series: str) -> list[dict]:
    """The BenchmarkResults of a history series (a run, or every run of a schedule); none when
    their CRD is not installed (see write_result)."""
    try:
        return custom().list_namespaced_custom_object(
            plan.GROUP, plan.VERSION, namespace, history.RESULT_PLURAL, label_selector=f"{plan.LABEL_SERIES}={series}"
        )["items"]
    except ApiException as e:
        if _missing(e):
            return []
        raise


def get_result(namespace: str, name: str) -> dict | None:
    return _get_custom(namespace, history.RESULT_PLURAL, name)


def write_result(rec: history.ResultRecord, runner_image: str) -> bool:
    """The BenchmarkResult if absent (an existing one is this run's, written before a crash),
    then its ConfigMap, owned by it. False when the BenchmarkResult CRD is not installed (`helm
    upgrade` does not add CRDs): the verdict is still recorded in the run's status."""
    obj = history.result_object(rec, runner_image)
    try:
        created = custom().create_namespaced_custom_object(
            plan.GROUP, plan.VERSION, rec.namespace, history.RESULT_PLURAL, obj
        )
    except ApiException as e:
        if _missing(e):
            return False
        if e.status != 409:
            raise CallFailed(api_failure(e, f"BenchmarkResult {rec.name}")) from e
        created = get_result(rec.namespace, rec.name)
    create(history.result_configmap(rec, created["metadata"]["uid"]))
    return True


def delete_results(namespace: str, names: tuple[str, ...]) -> None:
    """Prune: each BenchmarkResult goes with its ConfigMap (owner reference)."""
    for name in names:
        try:
            custom().delete_namespaced_custom_object(
                plan.GROUP, plan.VERSION, namespace, history.RESULT_PLURAL, name, propagation_policy="Background"
            )
        except ApiException as e:
            if not _missing(e):
                raise


def runner_pod_ips(namespace: str, job: str) -> dict[int, str]:
    """Shard -> IP of each running pod of the runner Job (the pods holding their ledgers)."""
    out = {}
    for pod in core().list_namespaced_pod(namespace, label_selector=f"job-name={job}").items:
        index = (pod.metadata.annotations or {}).get("batch.kubernetes.io/job-completion-index")
        if (
            index is not None
            and pod.status.phase == "Running"
            and pod.status.pod_ip
            and not pod.metadata.deletion_timestamp
        ):
            out[int(index)] = pod.status.pod_ip
    return out


def write_start_at(run: plan.Run, start_at: str) -> None:
    core().patch_namespaced_config_map(plan.start_configmap_name(run), run.namespace, {"data": {"startAt": start_at}})


def write_check_input(run: plan.Run, key: str, text: str) -> None:
    """A file the checker reads from the check ConfigMap it mounts."""
    core().patch_namespaced_config_map(plan.check_configmap_name(run), run.namespace, {"data": {key: text}})


def release_runners(run: plan.Run) -> None:
    """ledgersVerified: the runner pods stop serving their ledgers and exit."""
    try:
        core().patch_namespaced_config_map(
            plan.start_configmap_name(run), run.namespace, {"data": {"ledgersVerified": "true"}}
        )
    except ApiException as e:
        if not _missing(e):  # cleaned up already: the pods are gone with their Job
            raise


# ---- helm ------------------------------------------------------------------------------------


def _helm(*args: str) -> str:
    try:
        out = subprocess.run([HELM, *args], capture_output=True, text=True, timeout=HELM_TIMEOUT_SECONDS)
    except FileNotFoundError:
        raise HelmError(f"helm CLI not found ({HELM})") from None
    except subprocess.TimeoutExpired:
        raise HelmError(f"helm {args[0]} did not finish in {HELM_TIMEOUT_SECONDS}s") from None
    if out.returncode != 0:
        lines = [ln for ln in out.stderr.splitlines() if ln.strip()] or ["no output"]
        raise HelmError(f"helm {args[0]}: {lines[-1].strip()}"[:500])
    return out.stdout


def helm_install(release: plan.HelmRelease) -> None:
    """helm upgrade --install without --wait: the timer polls readiness itself."""
    with tempfile.NamedTemporaryFile("w", suffix=".json") as values:
        json.dump(release.values, values)  # JSON is YAML
        values.flush()
        args = [
            "upgrade",
            "--install",
            release.name,
            release.chart,
            "--namespace",
            release.namespace,
            "--values",
            values.name,
            "--wait=false",
        ]
        if release.version:
            args += ["--version", release.version]
        _helm(*args)


def helm_releases(namespace: str) -> list[str]:
    out = _helm("list", "--namespace", namespace, "--all", "--short")
    return [ln.strip() for ln in out.splitlines() if ln.strip()]


def helm_uninstall(namespace: str, release: str) -> None:
    _helm("uninstall", release, "--namespace", namespace, "--ignore-not-found", "--wait=false")


def uninstall_releases(namespace: str, run_name: str, keep: str | None = None) -> list[str]:
    """Uninstall every release made by the named run (except `keep`)."""
    gone = [r for r in helm_releases(namespace) if plan.is_release_of(run_name, r) and r != keep]
    for r in gone:
        helm_uninstall(namespace, r)
    return gone


# ---- BenchmarkSchedules (decisions in schedule.py) ------------------------------------------------


def get_schedule(namespace: str, name: str) -> dict | None:
    return _get_custom(namespace, schedule.PLURAL, name)


def runs_of_schedule(namespace: str, name: str, uid: str) -> list[dict]:
    """The BenchmarkRuns the schedule owns (by label, then by owner UID: not a namesake's)."""
    items = custom().list_namespaced_custom_object(
        plan.GROUP, plan.VERSION, namespace, plan.PLURAL, label_selector=f"{schedule.LABEL_SCHEDULE}={name}"
    )["items"]
    return [r for r in items if any(o.get("uid") == uid for o in r["metadata"].get("ownerReferences") or [])]


def create_run(obj: dict) -> bool:
    """Create the BenchmarkRun; False if it exists (its name is its start time: made before)."""
    try:
        custom().create_namespaced_custom_object(
            plan.GROUP, plan.VERSION, obj["metadata"]["namespace"], plan.PLURAL, obj
        )
        return True
    except ApiException as e:
        if e.status == 409:
            return False
        raise CallFailed(api_failure(e, f"BenchmarkRun {obj['metadata']['name']}")) from e


def patch_schedule_status(namespace: str, name: str, status: dict) -> None:
    custom().patch_namespaced_custom_object_status(
        plan.GROUP, plan.VERSION, namespace, schedule.PLURAL, name, {"status": status}
    )
