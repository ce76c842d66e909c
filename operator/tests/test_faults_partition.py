"""The partition fault: its ticks (cut off, healed at the end of its duration, recovered), its
refusal without the fault helper, the helper in the operator chart (opt-in, privileged, its own
ServiceAccount), and the scripts' tag."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_charts import by_kind, granted, render
from test_faults import ALL_READY, Run
from test_faults_pause import heals
from tpcc_operator import chart_policy, faults, handlers, plan
from tpcc_operator.faults import DatabasePod
from tpcc_operator.runspec import RunSpec
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
    assert step.actions == [KillPods((faults.Kill("bench-g2-0", "a", 0, "iptables", 0),))]
    assert "cut pod bench-g2-0 off from the other members, both ways (iptables DROP), for 25s" in r.events[0].message
    # cut off, VoltDB's minority node stops itself and restarts until the partition heals
    down = [DatabasePod("bench-g2-0", "a", False, restarts=2)] + ALL_READY[1:]
    assert r.tick(55, down).status == {}
    step = r.tick(56, down)
    assert heals(step) == (faults.Kill("bench-g2-0", "a", 0, "iptables", 0),)
    assert r.faults[0]["state"] == "Healed"
    assert "rejoined pod bench-g2-0 to the other members (its iptables rules deleted) after 25s" in r.events[-1].message
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
        handlers._refuse_partition_without_helper(spec, without)
    handlers._refuse_partition_without_helper(spec, plan.Settings(Path("."), fault_helper_namespace="tpcc"))
    partition["faults"][0] = {"action": "pause", "durationSeconds": 25}
    handlers._refuse_partition_without_helper(RunSpec.parse(partition), without)


def test_the_rules_carry_the_victim_pods_uid():
    assert plan.partition_tag("9ed3-77f6") == "tpcc-partition-9ed3-77f6"
    # the scripts take the pod UID and the tag, and say "ok N" (the tagged rules left)
    for script in (plan.PARTITION_SCRIPT, plan.HEAL_PARTITION_SCRIPT):
        assert script.startswith("set -e\nU=$1; TAG=$2") and 'echo "ok ' in script
        assert "--comment $TAG" in script


def test_the_fault_helper_is_opt_in_privileged_and_has_its_own_service_account():
    off = render("tpcc-operator")
    assert not by_kind(off, "DaemonSet")
    env = by_kind(off, "Deployment")[0]["spec"]["template"]["spec"]["containers"][0]["env"]
    assert {"name": "TPCC_FAULT_HELPER_NAMESPACE", "value": ""} in env
    on = render("tpcc-operator", "--set", "faultHelper.enabled=true")
    (ds,) = by_kind(on, "DaemonSet")
    pod = ds["spec"]["template"]["spec"]
    assert pod["hostPID"] and not pod.get("hostNetwork") and pod["automountServiceAccountToken"] is False
    assert pod["containers"][0]["securityContext"] == {"privileged": True, "runAsUser": 0, "runAsNonRoot": False}
    assert pod["serviceAccountName"].endswith("-fault-helper")
    assert ds["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/component"] == "fault-helper"
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
