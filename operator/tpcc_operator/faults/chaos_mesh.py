"""action chaos: a Chaos Mesh experiment as a fault, for what the operator's own kinds do not do
(IO faults, clock skew, CPU or memory stress, DNS errors, or Chaos Mesh's own pod and network
chaos where a team already runs it).

The operator creates the experiment (chaos-mesh.org/v1alpha1, the kind the spec names) in the
run's namespace when the fault is due, and deletes it durationSeconds later: Chaos Mesh injects
on create and undoes on delete (its controller's finalizer), so the operator never touches the
pods itself. Its selector is the run's database pods, whatever the user wrote (the CRD refuses
one); its mode, absent, is `one`. Its owner is the BenchmarkRun, so the garbage collector takes
an experiment whose run is gone even if no heal ran. The entry lives through the timed states
(Injected: created; Healed: deleted; Recovered: every database pod Ready SETTLE_SECONDS later).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from .. import plan
from ..runspec import Fault
from ..runstatus import ChaosExperiment, FaultEntry
from .base import CHAOS_MESH, Capabilities, Cluster, DatabasePod, FaultKind, Injection, Kill, Members, Scene

GROUP, VERSION = "chaos-mesh.org", "v1alpha1"
DEFAULT_MODE = "one"


def plural(kind: str) -> str:
    """The resource of a Chaos Mesh kind (PodChaos: podchaos; their CRDs name them so)."""
    return kind.lower()


def experiment_name(release: str, number: int) -> str:
    return f"{release}-fault-{number}"


def asked_spec(kind: str, spec: Mapping[str, Any] | None) -> dict[str, Any]:
    """The experiment's spec as the status records it: the user's, with mode `one` where it has
    none (and a NetworkChaos target's mode `all`: every member on the other side)."""
    out = copy.deepcopy(dict(spec or {}))
    out.setdefault("mode", DEFAULT_MODE)
    if kind == "NetworkChaos" and isinstance(out.get("target"), dict) and "selector" not in out["target"]:
        out["target"].setdefault("mode", "all")
    return out


def experiment_object(cluster: Cluster, experiment: ChaosExperiment) -> dict[str, Any]:
    """The experiment to create: its spec with the selector of the run's database pods (a
    NetworkChaos target without a selector: the same pods), owned by the run."""
    selector = {"namespaces": [cluster.namespace], "labelSelectors": dict(cluster.members)}
    spec = copy.deepcopy(dict(experiment.spec))
    spec["selector"] = selector
    if isinstance(spec.get("target"), dict) and "selector" not in spec["target"]:
        spec["target"]["selector"] = copy.deepcopy(selector)
    run = plan.Run(cluster.run_name, cluster.namespace, cluster.run_uid, 0)
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": experiment.kind,
        "metadata": {
            "name": experiment.name,
            "namespace": cluster.namespace,
            "labels": {plan.LABEL_RUN: cluster.run_name, "app.kubernetes.io/managed-by": "tpcc-operator"},
            "ownerReferences": [plan.owner_reference(run)],
        },
        "spec": spec,
    }


class ChaosMesh(FaultKind):
    """The experiment spec.faults[i].chaos names, over the run's database pods, for
    durationSeconds."""

    action = "chaos"
    methods = (CHAOS_MESH,)
    timed = True

    def refusal(self, fault: Fault, can: Capabilities) -> str | None:
        assert fault.chaos, "the CRD asks a chaos fault for its experiment"
        if not can.chaos_mesh:
            return (
                "action: chaos creates a Chaos Mesh experiment, which this operator may not: install the operator "
                "chart with chaosMesh.enabled=true (it grants create and delete on chaos-mesh.org experiments)"
            )
        if fault.chaos.kind not in can.chaos_kinds:
            return (
                f"chaos.kind: {fault.chaos.kind}: this cluster does not serve {plural(fault.chaos.kind)}."
                f"{GROUP}/{VERSION}; install Chaos Mesh (its CRDs and controller) first"
            )
        return None

    def choose(self, injection: Injection, among: Members) -> list[DatabasePod] | str:
        """Every database pod: the experiment's selector (its mode picks among them)."""
        return sorted(among.pods, key=lambda p: p.name) if among.pods else "no database pod found"

    def record(self, entry: dict, injection: Injection, chosen: list[DatabasePod], scene: Scene) -> None:
        super().record(entry, injection, chosen, scene)
        assert injection.chaos, "the CRD asks a chaos fault for its experiment"
        kind, spec = injection.chaos.kind, asked_spec(injection.chaos.kind, injection.chaos.spec)
        name = experiment_name(scene.release, injection.number)
        entry["experiment"] = ChaosExperiment(kind=kind, name=name, spec=spec).to_json()
        entry["target"] = f"Chaos Mesh {kind} {name} (mode {spec['mode']}) over {len(chosen)} database pods"

    def kills(self, entry: FaultEntry) -> list[Kill]:
        """One: the experiment (the victims are whichever pods its mode picks)."""
        assert entry.experiment, "a chaos entry records its experiment"
        return [Kill(entry.experiment.name, "", 0, CHAOS_MESH, experiment=entry.experiment)]

    def heals(self, entry: FaultEntry) -> list[Kill]:
        return self.kills(entry)

    def injected(self, entry: FaultEntry) -> str:
        return f"created {entry.target} for {entry.duration_seconds}s"

    def healed(self, entry: FaultEntry) -> str:
        assert entry.experiment, "a chaos entry records its experiment"
        return f"deleted Chaos Mesh {entry.experiment.kind} {entry.experiment.name} (Chaos Mesh undoes it)"

    def inject(self, cluster: Cluster, kill: Kill) -> str:
        from .. import kube_chaos

        assert kill.experiment, "a chaos Kill carries its experiment"
        created = kube_chaos.create_experiment(experiment_object(cluster, kill.experiment))
        return f"Chaos Mesh {kill.experiment.kind} {kill.pod} {'created' if created else 'already there'}"

    def heal(self, cluster: Cluster, kill: Kill) -> str:
        from .. import kube_chaos

        assert kill.experiment, "a chaos Kill carries its experiment"
        deleted = kube_chaos.delete_experiment(cluster.namespace, kill.experiment)
        return f"Chaos Mesh {kill.experiment.kind} {kill.pod} {'deleted' if deleted else 'already gone'}"
