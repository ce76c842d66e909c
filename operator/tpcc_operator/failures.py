"""Permanent or transient? Pure decisions about what goes wrong while a run works: a spec the
API server will refuse, a pod that will never start, an API or Helm error. Permanent problems
end the run Failed at once with a message naming the cause; transient ones are retried with
backoff. kube.py only fetches the facts (PodState, the error's status code and text).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# Waiting reasons that do not resolve by themselves: the image name, the pull, the container's
# configuration (a missing Secret or key). A short grace lets a registry hiccup pass.
STUCK_WAITING = ("InvalidImageName", "ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull",
                 "CreateContainerConfigError", "CreateContainerError", "CrashLoopBackOff")
IMAGE_REASONS = ("InvalidImageName", "ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull")
STUCK_GRACE_SECONDS = 20

# API status codes worth a retry: conflicts, throttling, server-side trouble.
TRANSIENT_STATUS = (409, 429, 500, 502, 503, 504)
# Helm errors that say the cluster was briefly unreachable or busy rather than refusing.
TRANSIENT_HELM = re.compile(r"connection refused|i/o timeout|timed out|did not finish|TLS handshake|"
                            r"server is currently unable|etcdserver|EOF|connection reset|"
                            r"another operation .* is in progress|too many requests|"
                            r"context deadline exceeded", re.IGNORECASE)

# A Kubernetes quantity (apimachinery's resource.Quantity grammar).
QUANTITY = re.compile(r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)(([KMGTPE]i)|[numkMGTPE]|[eE][+-]?[0-9]+)?$")

MAX_BACKOFF_SECONDS = 60


@dataclass(frozen=True)
class PodState:
    """One container of a pod as the kubelet reports it (the pods here have one container)."""
    name: str
    age_seconds: float
    waiting_reason: str = ""
    waiting_message: str = ""
    image: str = ""


@dataclass(frozen=True)
class ActionError:
    """A failed create/patch/helm call, judged."""
    permanent: bool
    reason: str   # CamelCase, for status.reason and the Event
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


def stuck_reason(message: str) -> str:
    """The status.reason for a stuck_pod message."""
    if any(r in message for r in IMAGE_REASONS):
        return "ImagePullFailed"
    if "CrashLoopBackOff" in message:
        return "PodCrashLooping"
    return "ContainerConfigError"


def spec_problems(spec: dict) -> list[str]:
    """What the API server would refuse later (a 400 that names no field), found before
    anything is created."""
    problems = []
    resources = spec.get("runners", {}).get("resources") or {}
    for kind in ("requests", "limits"):
        for resource, value in sorted((resources.get(kind) or {}).items()):
            if not QUANTITY.match(str(value)):
                problems.append(f"spec.runners.resources.{kind}.{resource}: {value!r} is not a "
                                "Kubernetes quantity (e.g. 500m, 2, 512Mi, 1Gi)")
    return problems


def api_error(status: int, reason: str, message: str, what: str) -> ActionError:
    """An API server answer to a create/patch of `what` (e.g. "job bench-g1-loader")."""
    permanent = status not in TRANSIENT_STATUS and status != 0  # 0: no answer at all
    detail = f"{what} {'rejected' if permanent else 'failed'} by the API server ({status} {reason})"
    return ActionError(permanent, reason or "ApiError", f"{detail}: {message}"[:500])


def helm_error(message: str) -> ActionError:
    permanent = not TRANSIENT_HELM.search(message)
    return ActionError(permanent, "HelmFailed", message[:500])


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
