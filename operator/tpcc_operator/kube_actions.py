"""Cluster actions for the timer: create objects if absent, delete by label, act on the database's
pods for fault injection, write the run's inputs and its BenchmarkResults, and drive the `helm`
CLI. What it reads is kube.py's. No decisions here (they are in stages/: what to do)."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import tempfile
from collections.abc import Callable
from typing import Any

import kubernetes
from kubernetes.client.rest import ApiException

from . import failures, faults, history, kube, plan, schedule
from .kube import (
    api_client,
    batch,
    core,
    custom,
    error_line,
    get_result,
    is_ready,
    label_selector,
    not_found,
    rbac,
    restarts,
)

HELM = os.environ.get("TPCC_HELM", "helm")
HELM_TIMEOUT_SECONDS = 180


class HelmError(Exception):
    pass


class CallFailed(Exception):
    """An API call the run needed was refused or failed; `error` says whether for good."""

    def __init__(self, error: failures.ActionError):
        super().__init__(error.message)
        self.error = error


def api_failure(e: ApiException, what: str) -> failures.ActionError:
    """The API server's answer (its Status message names the field) judged by failures."""
    try:
        body = json.loads(e.body or "{}")
    except ValueError:
        body = {}
    message = body.get("message") if isinstance(body, dict) else None
    reason = body.get("reason") if isinstance(body, dict) else None
    return failures.api_error(e.status or 0, reason or e.reason or "", message or str(e.reason), what)


# ---- the BenchmarkRun itself ----------------------------------------------------------------------


def patch_status(namespace: str, name: str, status: dict) -> None:
    """JSON merge patch of .status (None values remove fields)."""
    custom().patch_namespaced_custom_object_status(
        plan.GROUP, plan.VERSION, namespace, plan.PLURAL, name, {"status": status}
    )


def delete_run(namespace: str, name: str) -> None:
    try:
        custom().delete_namespaced_custom_object(plan.GROUP, plan.VERSION, namespace, plan.PLURAL, name)
    except ApiException as e:
        if not not_found(e):
            raise


# ---- create if absent / delete by label -----------------------------------------------------------


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
                if not not_found(e):
                    raise
    return deleted


RUN_KINDS = ("Job", "ConfigMap", "RoleBinding", "Role", "ServiceAccount")


def delete_generations(run: plan.Run, keep_current: bool) -> int:
    """Everything labelled with this run: of other generations only, or of all of them."""
    base = {plan.LABEL_MANAGED_BY: plan.MANAGER, plan.LABEL_RUN: run.name}
    selector = label_selector(base, run.generation if keep_current else None)
    return delete_labelled(run.namespace, selector, RUN_KINDS)


def delete_after_run(run: plan.Run) -> int:
    """The cleanup policy's share: Jobs (with their pods), runner RBAC and the start
    ConfigMap of this generation; the results ConfigMaps stay until the run is deleted."""
    gen = {plan.LABEL_MANAGED_BY: plan.MANAGER, plan.LABEL_RUN: run.name, plan.LABEL_GENERATION: str(run.generation)}
    n = delete_labelled(run.namespace, label_selector(gen), ("Job", "RoleBinding", "Role", "ServiceAccount"))
    try:
        core().delete_namespaced_config_map(plan.start_configmap_name(run), run.namespace)
        n += 1
    except ApiException as e:
        if not not_found(e):
            raise
    return n


# ---- fault injection on the database's pods -------------------------------------------------------


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
    if pod.metadata.uid != kill.uid or restarts(pod, container) != kill.restarts:
        return False
    out = _exec(namespace, kill.pod, container, list(command), f"{what} in pod {kill.pod}", timeout_seconds=30)
    if out.strip():  # kill prints only when it could not kill: the fault asked for did not happen
        reason = "FaultNotHealed" if command == plan.RESUME_PROCESS_COMMAND else "FaultNotInjected"
        raise CallFailed(failures.ActionError(True, reason, f"{what} in {kill.pod}/{container}: {error_line(out)}"))
    return True


def resume_process(namespace: str, heal: faults.Kill, container: str) -> bool:
    """SIGCONT to a paused database process, if its pod and container are still the ones
    paused (a restarted container's new process was never stopped)."""
    return kill_process(namespace, heal, container, plan.RESUME_PROCESS_COMMAND)


def _exec(namespace: str, pod: str, container: str, command: list[str], what: str, timeout_seconds: int = 60) -> str:
    """pods/exec: the command's stdout and stderr (a refused exec: CallFailed). A signal to a
    process returns at once (30 s is ample); the fault helper's scripts enter namespaces and run
    iptables or tc on a busy node (60 s)."""
    from kubernetes.stream import stream  # patches the client it is given: use one of its own

    api = kubernetes.client.CoreV1Api(kubernetes.client.ApiClient(api_client().configuration))
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
            _request_timeout=timeout_seconds,
        )
    except ApiException as e:
        # a refused websocket upgrade comes as status 0 with "Handshake status 403 ..." in the reason
        status = e.status or int((re.search(r"Handshake status (\d+)", str(e.reason)) or [0, 0])[1])
        raise CallFailed(failures.api_error(status, "ExecFailed", error_line(str(e.body or e.reason)), what)) from None


# how long a fault helper pod may be not Ready before a fault that needs it fails the run
HELPER_READY_SECONDS = 60


def _fault_helper(helper_namespace: str, node: str, what: str, patient: bool = False) -> str:
    """The fault helper's pod on the node (the operator chart's faultHelper DaemonSet). One that
    is not Ready is waited for (a transient failure, retried) for HELPER_READY_SECONDS, then the
    run fails; a patient caller (a node-loss's heal: the helper on a lost node is not Ready until
    the node is back) waits as long as it takes."""
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
            helper_namespace,
            label_selector=label_selector(plan.FAULT_HELPER_LABELS),
            field_selector=f"spec.nodeName={node}",
        )
        .items
    )
    running = [p.metadata.name for p in pods if p.status.phase == "Running" and is_ready(p)]
    if running:
        return running[0]
    waited = max((kube.not_ready_seconds(p, dt.datetime.now(dt.timezone.utc)) for p in pods), default=None)
    if waited is None:
        message = f"{what}: no fault helper pod on node {node} (its DaemonSet does not run there)"
    else:
        message = f"{what}: the fault helper pod on node {node} is not ready ({waited:.0f}s)"
    give_up = not patient and (waited is None or waited >= HELPER_READY_SECONDS)
    raise CallFailed(failures.ActionError(give_up, "FaultHelperNotReady", message))


def victim(namespace: str, target: faults.Kill):
    """The target pod if it is still the one chosen (its UID), else None: a pod gone or replaced
    took its network namespace, and whatever a fault put there, with it."""
    try:
        pod = core().read_namespaced_pod(target.pod, namespace)
    except ApiException as e:
        if e.status == 404:
            return None
        raise
    return pod if pod.metadata.uid == target.uid else None


def _on_helper(
    helper_namespace: str, pod, script: str, args: list[str], what: str, done: tuple[str, ...], reason: str
) -> str:
    """Run one of plan's fault helper scripts (`sh -c SCRIPT sh POD_UID ARG...`) in the helper on
    the pod's node; its last line (returned) is one of `done` when it did what was asked, else
    what went wrong (the run fails with reason: FaultNotInjected or FaultNotHealed)."""
    args = [pod.metadata.uid, *args]
    return on_node_helper(helper_namespace, pod.spec.node_name, script, args, what, done, reason)


def on_node_helper(
    helper_namespace: str,
    node: str,
    script: str,
    args: list[str],
    what: str,
    done: tuple[str, ...],
    reason: str,
    patient: bool = False,
) -> str:
    """Run a fault helper script (`sh -c SCRIPT sh ARG...`) in the helper on the node; its last
    line (returned) is one of `done` when it did what was asked, else the run fails with reason."""
    helper = _fault_helper(helper_namespace, node, what, patient)
    out = _exec(helper_namespace, helper, "helper", ["sh", "-c", script, "sh", *args], what)
    last = (out.strip().splitlines() or [""])[-1]
    if last not in done:
        raise CallFailed(failures.ActionError(True, reason, f"{what}: {error_line(out)}"))
    return last


def partition(namespace: str, helper_namespace: str, target: faults.Kill, members: dict[str, str]) -> bool:
    """Cut the target pod off from the database members on the other side (members: the run's
    database pods' labels; its side: target.side, or itself alone), both ways, if it is still the
    pod chosen: the fault helper on its node puts DROP rules for each of their IPs into its network
    namespace (plan.PARTITION_SCRIPT)."""
    pod = victim(namespace, target)
    if pod is None:
        return False
    side = set(target.side) | {target.uid}
    peers = [
        p.status.pod_ip
        for p in core().list_namespaced_pod(namespace, label_selector=label_selector(members)).items
        if p.metadata.uid not in side and p.status.pod_ip
    ]
    what = f"partition of pod {target.pod}"
    args = [plan.partition_tag(target.uid), *peers]
    _on_helper(helper_namespace, pod, plan.PARTITION_SCRIPT, args, what, (f"ok {2 * len(peers)}",), "FaultNotInjected")
    return True


def heal_partition(namespace: str, helper_namespace: str, target: faults.Kill) -> bool:
    """Delete a partition's rules (by their tag) from the target pod's network namespace."""
    what = f"healing the partition of pod {target.pod}"
    return _heal(namespace, helper_namespace, target, plan.HEAL_PARTITION_SCRIPT, plan.partition_tag, what)


def slow_network(namespace: str, helper_namespace: str, target: faults.Kill) -> str | None:
    """Slow the target pod's outgoing packets as target.netem says, if it is still the pod
    chosen: the fault helper on its node puts a netem qdisc into its network namespace, or where
    the kernel has no netem starts the NFQUEUE delayer there (plan.SLOW_NETWORK_SCRIPT). Which
    of the two, or None when the pod is gone."""
    pod = victim(namespace, target)
    if pod is None:
        return None
    netem = target.netem or faults.Netem()
    what = f"slow network of pod {target.pod}"
    numbers = [str(netem.delay_ms), str(netem.jitter_ms), f"{netem.loss_percent:g}"]
    args = [plan.slow_network_tag(target.uid), *numbers, *faults.netem_args(netem)]
    done = ("ok 1 netem", "ok 1 nfqueue")
    return _on_helper(helper_namespace, pod, plan.SLOW_NETWORK_SCRIPT, args, what, done, "FaultNotInjected").split()[-1]


def heal_slow_network(namespace: str, helper_namespace: str, target: faults.Kill) -> bool:
    """Delete the netem qdisc, or the NFQUEUE rule and its delayer, from the target pod's network
    namespace."""
    what = f"restoring the network of pod {target.pod}"
    return _heal(namespace, helper_namespace, target, plan.HEAL_SLOW_NETWORK_SCRIPT, plan.slow_network_tag, what)


def _heal(
    namespace: str, helper_namespace: str, target: faults.Kill, script: str, tag: Callable[[str], str], what: str
) -> bool:
    """Run a heal script on the fault helper for the target pod's tagged changes ("ok 0": none
    left); False when the pod is gone."""
    pod = victim(namespace, target)
    if pod is None:
        return False
    _on_helper(helper_namespace, pod, script, [tag(target.uid)], what, ("ok 0",), "FaultNotHealed")
    return True


# ---- the run's inputs and its history (BenchmarkResults) ------------------------------------------


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
        if not not_found(e):  # cleaned up already: the pods are gone with their Job
            raise


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
        if not_found(e):
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
            if not not_found(e):
                raise


# ---- helm -----------------------------------------------------------------------------------------


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
