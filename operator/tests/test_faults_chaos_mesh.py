"""action chaos: a Chaos Mesh experiment as a fault. Its status entry and ticks (created when
due, deleted after durationSeconds, recovered once the database settled), the object the
operator creates (selector forced to the run's database pods, owned by the run), its undoing when
the run ends another way or is deleted, and the refusals before anything is installed."""

from __future__ import annotations

import pytest
from test_faults import ALL_READY, RUN, Run, at
from test_faults_pause import heals
from test_phases import kinds
from tpcc_operator import faults
from tpcc_operator.faults import chaos_mesh
from tpcc_operator.runspec import RunSpec
from tpcc_operator.runstatus import ChaosExperiment, FaultEntry
from tpcc_operator.stages.actions import HealFaults, KillPods
from tpcc_operator.stages.dispatch import next_step
from tpcc_operator.stages.machine import World

STRESS = {"stressors": {"cpu": {"workers": 1, "load": 50}}}


@pytest.fixture
def chaos(document_of):
    return document_of(
        {
            "database": {"type": "voltdb", "deploy": {"replicas": 3, "kSafety": 1}},
            "workload": {"warmupSeconds": 10, "durationSeconds": 120},
            "faults": [
                {
                    "action": "chaos",
                    "afterSeconds": 20,
                    "durationSeconds": 30,
                    "chaos": {"kind": "StressChaos", "spec": STRESS},
                }
            ],
        }
    )


def test_the_experiment_is_recorded_when_due_over_every_database_pod(chaos):
    r = Run(chaos)
    r.tick(30, ALL_READY)
    entry = r.faults[0]
    assert (entry["state"], entry["method"], entry["durationSeconds"]) == ("Injecting", "chaos-mesh", 30)
    # the run's release and the fault's number: a retry finds the same name
    assert entry["experiment"] == {"kind": "StressChaos", "name": "bench-g2-fault-1", "spec": {**STRESS, "mode": "one"}}
    assert entry["target"] == "Chaos Mesh StressChaos bench-g2-fault-1 (mode one) over 3 database pods"
    assert [t["pod"] for t in entry["targets"]] == ["bench-g2-0", "bench-g2-1", "bench-g2-2"]


def test_it_is_created_then_deleted_after_its_duration_then_recovers(chaos):
    r = Run(chaos)
    r.tick(30, ALL_READY)
    step = r.tick(33, ALL_READY)
    experiment = ChaosExperiment(kind="StressChaos", name="bench-g2-fault-1", spec={**STRESS, "mode": "one"})
    (kill,) = [k for a in step.actions if isinstance(a, KillPods) for k in a.kills]
    assert (kill.pod, kill.method, kill.experiment) == ("bench-g2-fault-1", "chaos-mesh", experiment)
    assert faults.BY_METHOD[kill.method] is faults.REGISTRY["chaos"]
    assert "created Chaos Mesh StressChaos bench-g2-fault-1 (mode one) over 3 database pods for 30s" in (
        r.events[0].message
    )
    assert r.tick(62, ALL_READY).status == {}  # in force until 30 s after its creation
    (heal,) = heals(r.tick(63, ALL_READY))
    assert (heal.pod, heal.experiment) == ("bench-g2-fault-1", experiment)
    assert "deleted Chaos Mesh StressChaos bench-g2-fault-1 (Chaos Mesh undoes it) after 30s" in r.events[-1].message
    r.tick(73, ALL_READY)
    assert (r.faults[0]["state"], r.faults[0]["recoverySeconds"]) == ("Recovered", 40.0)


def test_a_pod_the_experiment_killed_is_waited_for_before_recovery(chaos):
    """A PodChaos pod-kill replaces a pod: recovered only once every member is Ready again."""
    r = Run(chaos)
    r.tick(30, ALL_READY), r.tick(33, ALL_READY), r.tick(63, ALL_READY)
    replaced = ALL_READY[:2] + [faults.DatabasePod("bench-g2-2", "new", False)]
    assert r.tick(73, replaced).status == {}
    r.tick(76, ALL_READY[:2] + [faults.DatabasePod("bench-g2-2", "new", True)])
    assert r.faults[0]["state"] == "Recovered"


def test_a_run_that_ends_while_it_lasts_deletes_it(chaos):
    r = Run(chaos)
    r.tick(30, ALL_READY), r.tick(33, ALL_READY)
    status = {**r.status, "phase": "Failed", "reason": "TooManyErrors", "completionTime": "2025-01-01T12:00:40Z"}
    status["verdict"] = "Failed"
    step = next_step(RUN, RunSpec.parse(chaos), status, World(), at(40))
    assert kinds(step.actions)[0] is HealFaults
    assert [h.experiment.name for h in heals(step) if h.experiment] == ["bench-g2-fault-1"]
    # and the finalizer, from the status alone
    _, to_heal = faults.unhealed(r.faults, at(41))
    assert [h.method for h in to_heal] == ["chaos-mesh"]


def cluster() -> faults.Cluster:
    members = {"bench.tpcc.dev/run": "bench", "bench.tpcc.dev/generation": "2", "bench.tpcc.dev/role": "database"}
    return faults.Cluster("perf", "", "voltdb", members, "uid-1", "bench")


def test_the_object_selects_the_run_s_database_pods_and_is_owned_by_the_run():
    spec = chaos_mesh.asked_spec("PodChaos", {"action": "pod-kill"})
    obj = chaos_mesh.experiment_object(cluster(), ChaosExperiment(kind="PodChaos", name="bench-g2-fault-1", spec=spec))
    assert obj["apiVersion"] == "chaos-mesh.org/v1alpha1" and obj["kind"] == "PodChaos"
    assert obj["metadata"]["name"] == "bench-g2-fault-1" and obj["metadata"]["namespace"] == "perf"
    (owner,) = obj["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["uid"]) == ("BenchmarkRun", "bench", "uid-1")
    assert obj["spec"] == {
        "action": "pod-kill",
        "mode": "one",
        "selector": {"namespaces": ["perf"], "labelSelectors": cluster().members},
    }
    assert "selector" not in spec  # the status keeps what was asked; the selector is the operator's


def test_a_network_chaos_target_without_a_selector_is_the_database_pods_too():
    asked = {"action": "partition", "direction": "both", "target": {}}
    spec = chaos_mesh.asked_spec("NetworkChaos", asked)
    assert spec["target"] == {"mode": "all"} and asked["target"] == {}  # a copy
    obj = chaos_mesh.experiment_object(cluster(), ChaosExperiment(kind="NetworkChaos", name="x", spec=spec))
    assert obj["spec"]["target"]["selector"] == obj["spec"]["selector"]
    # a target with a selector of its own (the runners, say) is the user's
    own = {"target": {"mode": "all", "selector": {"labelSelectors": {"app": "runner"}}}}
    obj = chaos_mesh.experiment_object(cluster(), ChaosExperiment(kind="NetworkChaos", name="x", spec=own))
    assert obj["spec"]["target"]["selector"] == {"labelSelectors": {"app": "runner"}}


def test_an_entry_round_trips_through_the_typed_status(chaos):
    r = Run(chaos)
    r.tick(30, ALL_READY)
    typed = FaultEntry.from_json(r.faults[0])
    assert typed.experiment and typed.experiment.spec["stressors"] == STRESS["stressors"]
    assert typed.to_json() == r.faults[0]


def test_refused_without_the_chart_s_permission_or_the_kind_s_crd(chaos):
    kind, fault = faults.REGISTRY["chaos"], RunSpec.parse(chaos).faults[0]
    served = frozenset({"StressChaos", "PodChaos"})
    why = kind.refusal(fault, faults.Capabilities(fault_helper=True, chaos_mesh=False, chaos_kinds=served))
    assert why and why.startswith("action: chaos creates a Chaos Mesh experiment") and "chaosMesh.enabled=true" in why
    why = kind.refusal(fault, faults.Capabilities(chaos_mesh=True, chaos_kinds=frozenset({"PodChaos"})))
    assert why == (
        "chaos.kind: StressChaos: this cluster does not serve stresschaos.chaos-mesh.org/v1alpha1; "
        "install Chaos Mesh (its CRDs and controller) first"
    )
    assert kind.refusal(fault, faults.Capabilities(chaos_mesh=True, chaos_kinds=served)) is None


def test_the_helper_kinds_are_refused_without_the_helper(document_of):
    doc = document_of(
        {
            "database": {"type": "voltdb", "deploy": {"replicas": 3, "kSafety": 1}},
            "faults": [{"action": "partition", "durationSeconds": 20}],
        }
    )
    fault = RunSpec.parse(doc).faults[0]
    why = faults.REGISTRY["partition"].refusal(fault, faults.Capabilities())
    assert why and why.startswith("action: partition needs the operator's fault helper")
    assert faults.REGISTRY["partition"].refusal(fault, faults.Capabilities(fault_helper=True)) is None
    assert faults.REGISTRY["kill-node"].refusal(fault, faults.Capabilities()) is None
