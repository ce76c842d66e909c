"""Permanent or transient? Pure decisions about what goes wrong while a run works: a spec the
API server will refuse, a pod that will never start, an API or Helm error. Permanent problems
end the run Failed at once with a message naming the cause; transient ones are retried with
backoff. kube.py only fetches the facts (PodState, the error's status code and text).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from . import databases
from .faults import DatabasePod
from .runspec import Resources, RunSpec
from .timestamps import parse_time

# Waiting reasons that do not resolve by themselves: the image name, the pull, the container's
# configuration (a missing Secret or key). A short grace lets a registry hiccup pass.
STUCK_WAITING = (
    "InvalidImageName",
    "ErrImagePull",
    "ImagePullBackOff",
    "ErrImageNeverPull",
    "CreateContainerConfigError",
    "CreateContainerError",
    "CrashLoopBackOff",
)
IMAGE_REASONS = ("InvalidImageName", "ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull")
STUCK_GRACE_SECONDS = 20

# API status codes worth a retry: conflicts, throttling, server-side trouble.
TRANSIENT_STATUS = (409, 429, 500, 502, 503, 504)
# Helm errors that say the cluster was briefly unreachable or busy rather than refusing.
TRANSIENT_HELM = re.compile(
    r"connection refused|i/o timeout|timed out|did not finish|TLS handshake|"
    r"server is currently unable|etcdserver|EOF|connection reset|"
    r"another operation .* is in progress|too many requests|"
    r"context deadline exceeded",
    re.IGNORECASE,
)

# A Kubernetes quantity (apimachinery's resource.Quantity grammar).
QUANTITY = re.compile(r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)(([KMGTPE]i)|[numkMGTPE]|[eE][+-]?[0-9]+)?$")

MAX_BACKOFF_SECONDS = 60


@dataclass(frozen=True)
class ClaimState:
    """A PersistentVolumeClaim a pod that is not scheduled mounts, as the cluster reports it."""

    name: str
    phase: str  # Pending | Bound | Lost
    storage_class: str  # "" when the claim names none (and no default class filled it in)
    class_exists: bool  # the StorageClass it names exists
    age_seconds: float
    last_event: str = ""  # the claim's latest Event, "Reason: message" (the provisioner's words)
    waits_for_pod: bool = False  # WaitForFirstConsumer and no node chosen yet: the pod decides first


@dataclass(frozen=True)
class PodState:
    """One container of a pod as the kubelet reports it (the pods here have one container), and,
    while the scheduler has not placed it, why not."""

    name: str
    age_seconds: float
    waiting_reason: str = ""
    waiting_message: str = ""
    image: str = ""
    node: str = ""  # where the scheduler placed it ("": not yet): status.placement
    unschedulable: str = ""  # the scheduler's message (condition PodScheduled=False, Unschedulable)
    requests: dict[str, float] = field(default_factory=dict)  # cpu in cores, memory in bytes
    claims: tuple[ClaimState, ...] = ()


@dataclass(frozen=True)
class ActionError:
    """A failed create/patch/helm call, judged."""

    permanent: bool
    reason: str  # CamelCase, for status.reason and the Event
    message: str


def stuck_pod(pods: list[PodState], image_only: bool = False) -> str | None:
    """Why a pod will not start (past the grace), naming the pod, the image or the Secret."""
    reasons = IMAGE_REASONS if image_only else STUCK_WAITING
    for pod in pods:
        if pod.waiting_reason in reasons and pod.age_seconds >= STUCK_GRACE_SECONDS:
            detail = f"{pod.waiting_reason}"
            if pod.waiting_reason in IMAGE_REASONS and pod.image:
                detail += f" for image {pod.image!r}"
            if pod.waiting_message:
                detail += f": {pod.waiting_message}"
            return f"pod {pod.name}: {detail}"[:500]
    return None


# A claim no volume was made for in this long is not waiting for a busy provisioner: a cloud's
# CSI driver makes one in seconds; none is running, or it refuses the claim.
CLAIM_GRACE_SECONDS = 45


@dataclass(frozen=True)
class Scheduling:
    """Why a pod is not scheduled: for good (`permanent`: the run fails with `reason`), or for
    now (a busy node: the run waits, and `message` says for what)."""

    permanent: bool
    reason: str
    message: str


def _claim_problem(claim: ClaimState) -> str | None:
    """Why this unbound claim will get no volume, or None while it may still get one."""
    if claim.phase == "Bound" or claim.waits_for_pod:
        return None
    if claim.storage_class and not claim.class_exists:
        return f"claim {claim.name}: StorageClass {claim.storage_class!r} does not exist"
    if claim.age_seconds < CLAIM_GRACE_SECONDS:
        return None
    if not claim.storage_class:
        return (
            f"claim {claim.name} names no StorageClass, the cluster has no default one, and no "
            f"PersistentVolume bound it in {int(claim.age_seconds)}s"
        )
    said = f" ({claim.last_event})" if claim.last_event else ""
    return (
        f"claim {claim.name}: no volume after {int(claim.age_seconds)}s from the provisioner of "
        f"StorageClass {claim.storage_class!r}{said}: is that provisioner running?"
    )


def _too_big(pod: PodState, largest_node: dict[str, float]) -> str | None:
    """A request no node can hold even when empty (the largest allocatable of each resource)."""
    for resource, wanted in sorted(pod.requests.items()):
        most = largest_node.get(resource)
        if most is not None and wanted > most:
            unit = " bytes" if resource == "memory" else ""
            return (
                f"pod {pod.name} requests {resource} {wanted:g}{unit}, more than any node can "
                f"allocate (largest: {most:g}{unit})"
            )
    return None


def scheduling(pods: list[PodState], largest_node: dict[str, float]) -> Scheduling | None:
    """The first pod the scheduler cannot place, judged: a claim that gets no volume (no such
    StorageClass, no provisioner answering) or a request larger than every node will not resolve
    by itself; anything else (a node busy with other pods) may. The scheduler's own message is
    kept in both."""
    for pod in pods:
        claim_problems = [m for m in map(_claim_problem, pod.claims) if m]
        if not pod.unschedulable and not claim_problems:
            continue
        said = f"; the scheduler: {pod.unschedulable}" if pod.unschedulable else ""
        if claim_problems:
            return Scheduling(
                True,
                "StorageUnavailable",
                (f"pod {pod.name} cannot be scheduled: " + "; ".join(claim_problems) + said)[:900],
            )
        if too_big := _too_big(pod, largest_node):
            return Scheduling(True, "Unschedulable", f"{too_big}{said}"[:900])
        pending = [c.name for c in pod.claims if c.phase != "Bound"]
        waits = f" (claims {', '.join(pending)} not bound yet)" if pending else ""
        return Scheduling(False, "Unschedulable", f"pod {pod.name} not scheduled yet{waits}{said}"[:900])
    return None


def creation_refused(failed_creates: list[str]) -> str | None:
    """A controller (StatefulSet, Job) that cannot create the run's pods because the API server
    refuses the pod itself: an invalid pod (requests above limits, say) or one a policy forbids
    does not become valid by retrying. An exceeded quota may free up: that one waits."""
    for message in failed_creates:
        if " is invalid" in message or ("forbidden" in message and "exceeded quota" not in message):
            return f"the cluster refuses to create the run's pods: {message}"[:900]
    return None


def stuck_reason(message: str) -> str:
    """The status.reason for a stuck_pod message."""
    if any(r in message for r in IMAGE_REASONS):
        return "ImagePullFailed"
    if "CrashLoopBackOff" in message:
        return "PodCrashLooping"
    return "ContainerConfigError"


def new_oom_kills(recorded: list[dict], pods: list[DatabasePod]) -> list[dict]:
    """The database containers' OOM kills not in status.databaseOOMKills yet (one entry per pod
    and end time): a database killed at its memory limit restarts in place, and one that kept
    its rows in memory only (VoltDB without k-safety) comes back empty, which the durability
    verdict then reports as lost orders without saying why."""
    known = {(k["pod"], k["finishedAt"]) for k in recorded}
    return [
        {"pod": p.name, "finishedAt": p.oom_killed_at, "memoryLimit": p.memory_limit}
        for p in pods
        if p.oom_killed_at and (p.name, p.oom_killed_at) not in known
    ]


def oom_killed(kill: dict) -> str:
    limit = f" at its memory limit {kill['memoryLimit']}" if kill.get("memoryLimit") else ""
    return f"database pod {kill['pod']} was OOMKilled{limit} ({kill['finishedAt']})"


def oom_note(kills: list[dict]) -> str:
    """What a failed run's message adds when the database was OOMKilled during the run."""
    if not kills:
        return ""
    more = f" and {len(kills) - 1} more time(s)" if len(kills) > 1 else ""
    return (
        f"; {oom_killed(kills[0])}{more}: give it more memory (spec.database.deploy.values.resources.limits.memory) "
        "or a shorter run (a run adds rows for as long as it lasts)"
    )


def lost_with_a_node(spec: RunSpec, kills: list[dict], ready_since: str | None) -> str | None:
    """Why the run cannot go on, if the database it deployed lost its data with an OOM-killed
    node after it was ready (ready_since: when DatabaseReady last turned True; a kill before it
    hit an empty database), as its Database.loses_data_with_a_node says (VoltDB with kSafety 0).
    Measuring on would only time errors against an empty database until the duration ends; the
    verdict is known now. A k-safe VoltDB's node rejoins with its rows (the kill-node faults
    measure exactly that), a MongoDB member restarts on its volume: both go on."""
    if not spec.database.deployed or not ready_since:
        return None
    lost = databases.of(spec).loses_data_with_a_node(spec.deploy)
    since = parse_time(ready_since)
    if not lost or not any(parse_time(k["finishedAt"]) >= since for k in kills):
        return None
    return lost


def spec_problems(spec: RunSpec) -> list[str]:
    """What the API server would refuse later (a 400 that names no field), found before
    anything is created."""
    problems = []
    resources = spec.runners.resources or Resources()
    for kind, values in (("requests", resources.requests), ("limits", resources.limits)):
        for resource, value in sorted((values or {}).items()):
            if not QUANTITY.match(str(value)):
                problems.append(
                    f"spec.runners.resources.{kind}.{resource}: {value!r} is not a "
                    "Kubernetes quantity (e.g. 500m, 2, 512Mi, 1Gi)"
                )
    return problems


def api_error(status: int, reason: str, message: str, what: str) -> ActionError:
    """An API server answer to a create/patch of `what` (e.g. "job bench-g1-loader")."""
    permanent = status not in TRANSIENT_STATUS and status != 0  # 0: no answer at all
    detail = f"{what} {'rejected' if permanent else 'failed'} by the API server ({status} {reason})"
    return ActionError(permanent, reason or "ApiError", f"{detail}: {message}"[:500])


def helm_error(message: str) -> ActionError:
    permanent = not TRANSIENT_HELM.search(message)
    return ActionError(permanent, "HelmFailed", message[:500])


# An exception none of the operator's clients name (its own bug, or an answer no client expected)
# is retried with backoff like a transient error; after this many in a row (3 + 6 + 12 + 24 + 48 s)
# the run fails with it, instead of waiting for its phase's timeout under a reason that hides it.
UNEXPECTED_RETRIES = 5
OPERATOR_ERROR = "OperatorError"


def unexpected(doing: str, e: Exception) -> ActionError:
    """An exception no client names, judged transient at first (see given_up)."""
    return ActionError(False, OPERATOR_ERROR, f"{doing}: {type(e).__name__}: {e}"[:500])


def given_up(error: ActionError, attempt: int) -> ActionError:
    """An OperatorError becomes permanent on its UNEXPECTED_RETRIES-th attempt in a row (kopf's
    retry count); any other error stays as it was judged."""
    if error.reason == OPERATOR_ERROR and attempt >= UNEXPECTED_RETRIES:
        return replace(error, permanent=True)
    return error


def retry_delay(attempt: int) -> float:
    """Exponential backoff for transient errors: 3, 6, 12, ... seconds, at most a minute."""
    return float(min(MAX_BACKOFF_SECONDS, 3 * 2 ** min(attempt, 10)))


# Deletion: Helm uninstall is retried with backoff this long, then the finalizer goes anyway.
DELETION_GIVE_UP_SECONDS = 120


def deletion_retry(runtime_seconds: float, attempt: int) -> float | None:
    """Seconds until the next uninstall attempt of a deleted run, or None: give up (the
    finalizer is removed and a Warning names what was left behind)."""
    delay = retry_delay(attempt)
    if runtime_seconds + delay > DELETION_GIVE_UP_SECONDS:
        return None
    return delay
