"""The Kubernetes I/O of chaos faults (faults.chaos_mesh decides): which Chaos Mesh kinds the API
server serves, and a fault's experiment created and deleted."""

from __future__ import annotations

from kubernetes.client.rest import ApiException

from . import failures, runstatus
from .faults import chaos_mesh
from .kube import custom, not_found
from .kube_actions import CallFailed, api_failure


def served_kinds(group: str, version: str) -> frozenset[str]:
    """The kinds the API server serves in group/version (discovery, which every authenticated
    client may read); none when it serves no such group."""
    try:
        found = custom().get_api_resources(group, version)
    except ApiException as e:
        if e.status == 404:
            return frozenset()
        raise CallFailed(api_failure(e, f"discovery of {group}/{version}")) from e
    return frozenset(r.kind for r in found.resources or () if "/" not in r.name)


def create_experiment(obj: dict) -> bool:
    """Create a chaos fault's Chaos Mesh experiment; False if it exists (its name is the run's
    release and the fault's number: a repeat after an operator restart finds it)."""
    group, version = obj["apiVersion"].split("/")
    meta = obj["metadata"]
    try:
        custom().create_namespaced_custom_object(group, version, meta["namespace"], chaos_mesh.plural(obj["kind"]), obj)
        return True
    except ApiException as e:
        if e.status == 409:
            return False
        raise CallFailed(_fault_failure(e, f"{obj['kind']} {meta['name']}", "FaultNotInjected")) from e


def delete_experiment(namespace: str, experiment: runstatus.ChaosExperiment) -> bool:
    """Delete it (Chaos Mesh's finalizer undoes what it did); False if it is gone already."""
    try:
        custom().delete_namespaced_custom_object(
            chaos_mesh.GROUP,
            chaos_mesh.VERSION,
            namespace,
            chaos_mesh.plural(experiment.kind),
            experiment.name,
        )
        return True
    except ApiException as e:
        if not_found(e):
            return False
        raise CallFailed(_fault_failure(e, f"{experiment.kind} {experiment.name}", "FaultNotHealed")) from e


def _fault_failure(e: ApiException, what: str, reason: str) -> failures.ActionError:
    """The API server's answer to a fault's create or delete: one that will not change (refused,
    forbidden) fails the run with the fault's reason; a transient one is retried."""
    error = api_failure(e, what)
    return failures.ActionError(True, reason, error.message) if error.permanent else error
