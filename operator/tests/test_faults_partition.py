"""The partition fault: its ticks (cut off, healed at the end of its duration, recovered), its
refusal without the fault helper, the helper in the operator chart (opt-in, privileged, its own
ServiceAccount), the scripts' tag, and the runner pods put on the cut-off side."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_charts import by_kind, granted, needs_helm, render
from test_faults import ALL_READY, Run
from test_faults_pause import _Pod, heals
from tpcc_operator import chart_policy, faults, handlers, kube_actions, plan
from tpcc_operator.faults import DatabasePod
from tpcc_operator.runspec import RunSpec
from tpcc_operator.runstatus import RunnerTarget
from tpcc_operator.stages import fault_moves, reads
from tpcc_operator.stages.actions import KillPods
from tpcc_operator.timestamps import parse_time


@pytest.fixture
def partition(document_of):
    return document_of(
        {
            "database": {"type": "voltdb", "deploy": {"replicas": 3, "kSafety": 1}},
            "workload": {"warmupSeconds": 10, "durationSeconds": 120},
            "faults": [
                {"action": "partition", "victim": "pod-index", "podIndex": 0, "afterSeconds": 20, "durationSeconds": 25}
            ],
        }
    )


def test_a_partition_cuts_the_member_off_then_heals_then_recovers(partition):
    r = Run(partition)
    r.tick(30, ALL_READY)
    entry = r.faults[0]
    assert (entry["action"], entry["method"], entry["target"], entry["durationSeconds"]) == (
        "partition",
        "iptables",
        "bench-g2-0",
        25,
    )
    step = r.tick(31, ALL_READY)
    assert step.actions == [KillPods((faults.Kill("bench-g2-0", "a", 0, "iptables", 0, side=("a",)),))]
    assert "cut pod bench-g2-0 off from the other members, both ways (iptables DROP), for 25s" in r.events[0].message
    # cut off, VoltDB's minority node stops itself and restarts until the partition heals
    down = [DatabasePod("bench-g2-0", "a", False, restarts=2)] + ALL_READY[1:]
    assert r.tick(55, down).status == {}
    step = r.tick(56, down)
    assert heals(step) == (faults.Kill("bench-g2-0", "a", 0, "iptables", 0),)
    assert r.faults[0]["state"] == "Healed"
    assert "rejoined pod bench-g2-0 to the other members (the iptables rules deleted) after 25s" in r.events[-1].message
    assert r.tick(70, down).status == {}  # not back yet
    r.tick(80, [DatabasePod("bench-g2-0", "a", True, restarts=3)] + ALL_READY[1:])
    entry = r.faults[0]
    assert (entry["state"], entry["recoverySeconds"], entry["restartCount"]) == ("Recovered", 49.0, 3)


def test_a_partition_is_healed_when_the_run_ends_while_it_lasts():
    cut = {"number": 1, "action": "partition", "method": "iptables", "state": "Injected", "target": "p-1"}
    cut |= {"targetUID": "u1", "durationSeconds": 30}
    entries, to_heal = faults.unhealed([cut], parse_time("2025-01-01T12:00:00Z"))
    assert to_heal == [faults.Kill("p-1", "u1", 0, "iptables", 0)] and entries[0]["state"] == "Healed"


def test_a_partition_without_the_fault_helper_is_refused_before_anything_is_installed(partition):
    spec = RunSpec.parse(partition)
    without = plan.Settings(charts_dir=Path("."))
    with pytest.raises(chart_policy.ReleaseRefused, match=r"spec.faults\[0\].action: partition needs the operator's"):
        handlers._refuse_faults_this_cluster_cannot_take(spec, without)
    handlers._refuse_faults_this_cluster_cannot_take(spec, plan.Settings(Path("."), fault_helper_namespace="tpcc"))
    partition["faults"][0] = {"action": "pause", "durationSeconds": 25}
    handlers._refuse_faults_this_cluster_cannot_take(RunSpec.parse(partition), without)


def test_the_rules_carry_the_victim_pods_uid():
    assert plan.partition_tag("9ed3-77f6") == "tpcc-partition-9ed3-77f6"
    # the scripts take the pod UID and the tag, and say "ok N" (the tagged rules left)
    for script in (plan.PARTITION_SCRIPT, plan.HEAL_PARTITION_SCRIPT):
        assert script.startswith("set -e\nU=$1; TAG=$2") and 'echo "ok ' in script
        assert "--comment $TAG" in script


@needs_helm
def test_the_fault_helper_is_opt_in_privileged_and_has_its_own_service_account():
    off = render("tpcc-operator")
    assert not by_kind(off, "DaemonSet")
    env = by_kind(off, "Deployment")[0]["spec"]["template"]["spec"]["containers"][0]["env"]
    assert {"name": "TPCC_FAULT_HELPER_NAMESPACE", "value": ""} in env
    on = render("tpcc-operator", "--set", "faultHelper.enabled=true")
    (ds,) = by_kind(on, "DaemonSet")
    pod = ds["spec"]["template"]["spec"]
    # hostNetwork: a node-loss cuts the helper's own network namespace, the node's, off
    assert pod["hostPID"] and pod["hostNetwork"] and pod["automountServiceAccountToken"] is False
    assert pod["containers"][0]["securityContext"] == {"privileged": True, "runAsUser": 0, "runAsNonRoot": False}
    assert pod["serviceAccountName"].endswith("-fault-helper")
    labels = ds["spec"]["template"]["metadata"]["labels"]
    assert labels["app.kubernetes.io/component"] == "fault-helper"
    assert {"name", "instance", "component", "part-of", "managed-by", "version"} == {
        k.removeprefix("app.kubernetes.io/") for k in labels
    }
    assert plan.FAULT_HELPER_LABELS.items() <= ds["spec"]["template"]["metadata"]["labels"].items()
    helper_sa = [s for s in by_kind(on, "ServiceAccount") if s["metadata"]["name"] == pod["serviceAccountName"]]
    assert helper_sa[0]["automountServiceAccountToken"] is False
    # the helper's ServiceAccount is bound to nothing; the operator gets exec into its pods
    bindings = by_kind(on, "RoleBinding")
    assert all(s["name"] != pod["serviceAccountName"] for b in bindings for s in b["subjects"])
    role = next(r for r in by_kind(on, "Role") if r["metadata"]["name"].endswith("-fault-helper"))
    assert granted(role["rules"]) == {("", "pods"): {"get", "list"}, ("", "pods/exec"): {"create", "get"}}
    env = by_kind(on, "Deployment")[0]["spec"]["template"]["spec"]["containers"][0]["env"]
    assert {"name": "TPCC_FAULT_HELPER_NAMESPACE", "value": "ns"} in env


FIVE = [DatabasePod(f"bench-g2-{i}", f"u{i}", True) for i in range(5)]


@pytest.fixture
def halves(document_of):
    return document_of(
        {
            "database": {"type": "voltdb", "deploy": {"replicas": 5, "kSafety": 1}},
            "workload": {"warmupSeconds": 10, "durationSeconds": 120},
            "faults": [{"action": "partition", "split": "halves", "afterSeconds": 20, "durationSeconds": 25}],
        }
    )


def test_random_halves_cut_a_minority_off_together_then_heal_it(halves):
    r = Run(halves)
    r.tick(30, FIVE)
    entry = r.faults[0]
    minority = [t["pod"] for t in entry["targets"]]
    assert len(minority) == 2 and entry["split"] == "halves" and entry["durationSeconds"] == 25
    assert entry["target"] == f"2 pods: {', '.join(minority)}"
    side = tuple(t["uid"] for t in entry["targets"])
    step = r.tick(31, FIVE)
    assert step.actions == [
        KillPods(tuple(faults.Kill(p, u, 0, "iptables", 0, side=side) for p, u in zip(minority, side)))
    ]
    assert f"cut 2 pods: {', '.join(minority)} off from the other members" in r.events[0].message
    step = r.tick(56, FIVE)
    assert heals(step) == tuple(faults.Kill(p, u, 0, "iptables", 0) for p, u in zip(minority, side))
    down = [DatabasePod(p.name, p.uid, p.name not in minority) for p in FIVE]
    assert r.tick(70, down).status == {}  # the minority not back yet
    r.tick(71, FIVE)
    assert (r.faults[0]["state"], r.faults[0]["recoverySeconds"]) == ("Recovered", 40.0)


def test_random_halves_are_the_seeds_and_half_of_an_even_count():
    inj = faults.Injection(1, "partition", parse_time("2025-01-01T12:00:30Z"), 0, 0, "iptables", 25, split="halves")
    picks = {tuple(p.name for p in faults.half(inj, FIVE, f"run-{i}")) for i in range(20)}
    assert all(len(p) == 2 for p in picks) and len(picks) > 3  # different runs, different halves
    assert faults.half(inj, FIVE, "run-1") == faults.half(inj, FIVE, "run-1")  # a repeat picks the same
    assert len(faults.half(inj, FIVE[:4], "s")) == 2 and len(faults.half(inj, FIVE[:3], "s")) == 1
    assert faults.half(inj, FIVE[:2] + [DatabasePod("bench-g2-2", "u2", False)], "s") == (
        "not every database pod is ready (bench-g2-2)"
    )


def on_a_fake_cluster(monkeypatch, victim_uid: str, members: int) -> list[list[str]]:
    """kube_actions against a cluster of `members` database pods u0.. at 10.0.0.0.., the fault
    helper Ready on the victim's node; the helper scripts' arguments (after the pod UID's place)
    are collected in the list returned."""
    calls: list[list[str]] = []

    class Core:
        def read_namespaced_pod(self, name, namespace):
            pod = _Pod(victim_uid, 0)
            pod.spec = type("Spec", (), {"node_name": "n1"})()
            return pod

        def list_namespaced_pod(self, namespace, label_selector, field_selector=""):
            if field_selector:  # the fault helper on the node
                helper = _Pod("h", 0)
                helper.metadata.name = "helper-n1"
                helper.status.phase = "Running"
                helper.status.conditions = [type("C", (), {"type": "Ready", "status": "True"})()]
                return type("L", (), {"items": [helper]})()
            pods = []
            for i in range(members):
                pod = _Pod(f"u{i}", 0)
                pod.status.pod_ip = f"10.0.0.{i}"
                pods.append(pod)
            return type("L", (), {"items": pods})()

    def exec_(namespace, pod, container, command, what, timeout_seconds=60):
        calls.append(command[4:])
        return f"ok {2 * (len(command) - 6)}\n"

    monkeypatch.setattr(kube_actions, "core", Core)
    monkeypatch.setattr(kube_actions, "_exec", exec_)
    return calls


def test_a_pod_of_the_minority_drops_only_the_other_sides_members(monkeypatch):
    calls = on_a_fake_cluster(monkeypatch, "u0", 5)
    assert kube_actions.partition("perf", "tpcc", faults.Kill("p-0", "u0", 0, "iptables", 0, side=("u0", "u3")), {})
    assert kube_actions.partition("perf", "tpcc", faults.Kill("p-0", "u0", 0, "iptables", 0), {})  # isolate
    tag = plan.partition_tag("u0")
    assert calls == [
        ["u0", tag, "10.0.0.1", "10.0.0.2", "10.0.0.4"],
        ["u0", tag, "10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"],
    ]


RUNNERS = (RunnerTarget(pod="bench-g2-runner-0-x", uid="r0"), RunnerTarget(pod="bench-g2-runner-1-y", uid="r1"))


def test_runners_on_the_cut_off_side_are_cut_off_from_the_other_members_with_it(partition):
    """runners cut-off-side: the runner pods running when it is due are recorded with it, cut off
    from the members not on the victim's side (the victim alone here: they reach only it), and
    healed with it."""
    partition["faults"][0]["runners"] = "cut-off-side"
    r = Run(partition)
    r.tick(30, ALL_READY, runner_pods=RUNNERS)
    entry = r.faults[0]
    assert entry["runners"] == "cut-off-side"
    assert entry["runnerTargets"] == [{"pod": r.pod, "uid": r.uid} for r in RUNNERS]
    step = r.tick(31, ALL_READY)
    assert step.actions == [
        KillPods(
            (
                faults.Kill("bench-g2-0", "a", 0, "iptables", 0, side=("a",)),
                faults.Kill("bench-g2-runner-0-x", "r0", 0, "iptables", side=("a",)),
                faults.Kill("bench-g2-runner-1-y", "r1", 0, "iptables", side=("a",)),
            )
        )
    ]
    assert r.events[0].message.endswith(
        "for 25s, with runner pods bench-g2-runner-0-x, bench-g2-runner-1-y on its side (they reach only it)"
    )
    assert [h.pod for h in heals(r.tick(56, ALL_READY))] == ["bench-g2-0", "bench-g2-runner-0-x", "bench-g2-runner-1-y"]
    assert "rejoined pod bench-g2-0 and runner pods bench-g2-runner-0-x, bench-g2-runner-1-y" in r.events[-1].message
    # the run ending while it lasts, or its deletion, heals the runners' rules too
    cut = [{**entry, "state": "Injected", "injectedTime": "2025-01-01T12:00:31Z"}]
    assert [h.uid for h in faults.unhealed(cut, parse_time("2025-01-01T12:00:40Z"))[1]] == ["a", "r0", "r1"]


def test_the_runner_pods_are_read_only_when_such_a_partition_is_due(partition):
    spec = RunSpec.parse(partition)
    due = parse_time("2025-01-01T12:00:30Z")
    status = {"startAt": "2025-01-01T12:00:00Z", "faults": []}
    run = plan.Run("bench", "perf", "u", 2)
    assert not [r for r in fault_moves.observes(run, spec, status, due) if isinstance(r, reads.RunnerPods)]
    partition["faults"][0]["runners"] = "cut-off-side"
    wanted = fault_moves.observes(run, RunSpec.parse(partition), status, due)
    assert reads.RunnerPods("bench-g2-runner") in wanted


def test_a_runner_pod_drops_the_members_not_on_the_victims_side(monkeypatch):
    calls = on_a_fake_cluster(monkeypatch, "r0", 3)
    assert kube_actions.partition("perf", "tpcc", faults.Kill("runner", "r0", 0, "iptables", side=("u1",)), {})
    assert calls == [["r0", plan.partition_tag("r0"), "10.0.0.0", "10.0.0.2"]]
