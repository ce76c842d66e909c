"""kstatus (sigs.k8s.io/cli-utils pkg/kstatus/status, what Flux's `wait` and `kubectl`-style
tools use) for a custom resource with conditions, as its documented rules read it, in the
order `Compute` applies them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Reading:
    status: str  # Current | InProgress | Failed | Terminating
    message: str


def compute(obj: dict) -> Reading:
    metadata, status = obj.get("metadata") or {}, obj.get("status") or {}
    if metadata.get("deletionTimestamp"):
        return Reading("Terminating", "Resource scheduled for deletion")
    generation, observed = metadata.get("generation"), status.get("observedGeneration")
    if generation is not None and observed is not None and observed != generation:
        return Reading("InProgress", f"generation is {generation}, but latest observed generation is {observed}")
    conditions = status.get("conditions") or []
    # the first of Reconciling=True / Stalled=True in the list decides
    for c in conditions:
        if c.get("type") == "Reconciling" and c.get("status") == "True":
            return Reading("InProgress", c.get("message", ""))
        if c.get("type") == "Stalled" and c.get("status") == "True":
            return Reading("Failed", c.get("message", ""))
    for c in conditions:
        if c.get("type") == "Ready":
            if c.get("status") == "True":
                return Reading("Current", "Resource is Ready")
            return Reading("InProgress", c.get("message", ""))
    # no condition it knows: a custom resource is taken as current
    return Reading("Current", "Resource is current")
