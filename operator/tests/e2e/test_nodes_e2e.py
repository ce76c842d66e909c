"""End to end on a cluster of several nodes (hack/local-k8s.sh with NODES=3, as hack/test.sh's k8s
stage brings up; skipped on fewer, a failure there): a 3-host k=1 VoltDB whose members must each
have a node of their own (database.deploy.antiAffinity: required; they tolerate the taint that
keeps CI's nodes 2 and 3 for this test, so the other share's pods are not cut off with the
node), and a node-loss: the node of one member, not the operator's nor a runner's, cut off the
network through the fault helper for longer than the node monitor's grace period. During a
TPC-C run for 100 s; during a YCSB run for good (the rest of the measured interval, long enough
for Kubernetes to evict the member there). Kubernetes marks the node NotReady; the helper's own
timer reconnects it; the node is Ready again, the member rejoins (or is made anew), nothing
acknowledged is lost (NewOrders, YCSB's updates), TPC-C's 12 conditions hold, no rule is left on
the node, and nothing but this run's members and the fault helpers was on it.

Needs local/tpcc-runner:dev and local/voltdb:10.1.1 imported into every node (hack/images.sh with
NODES set).
"""

from __future__ import annotations

import json

import pytest
from test_benchmarkrun_e2e import _unavailable, kubectl, manifest, wait_for, wait_phase
from test_voltdb_faults_e2e import fault_state, finished, voltdb_run, with_fault_helper, ycsb_a, ycsb_finished

pytestmark = pytest.mark.k8s

# past the node monitor's grace period (50 s): the node turns NotReady; and past the minute in which
# VoltDB, restarted on the cut-off node, gives up resolving the other hosts (the chart makes it wait)
LOSS_SECONDS = 100
RESERVED = "bench.tpcc.dev/reserved"  # hack/test.sh's EXTRA_NODE_TAINT key on nodes 2..N


def nodes() -> dict[str, bool]:
    """Each node's name and whether it is Ready."""
    items = json.loads(kubectl("get", "nodes", "-o", "json").stdout)["items"]
    return {
        n["metadata"]["name"]: any(c["type"] == "Ready" and c["status"] == "True" for c in n["status"]["conditions"])
        for n in items
    }


# the node's rules as the helper lists them: its own network namespace (the node's), the node's
# iptables (entering the host's mount namespace by the kubelet's process, as the fault's scripts do)
NODE_RULES = (
    'for p in /proc/[0-9]*; do [ "$(cat $p/comm 2>/dev/null)" = kubelet ] && '
    "exec nsenter -t ${p#/proc/} -m -- env PATH=/usr/sbin:/usr/bin:/sbin:/bin iptables -w -S; done"
)
NODE_LOSS_RUN = voltdb_run(150, [{"action": "node-loss", "afterSeconds": 15, "durationSeconds": LOSS_SECONDS}])
NODE_LOSS_RUN["database"]["deploy"]["antiAffinity"] = "required"
NODE_LOSS_RUN["database"]["deploy"]["values"]["tolerations"] = [{"key": RESERVED, "operator": "Exists"}]


def pods_on(node: str) -> list[str]:
    """namespace/name of every pod on the node."""
    items = json.loads(kubectl("get", "pods", "-A", "--field-selector", f"spec.nodeName={node}", "-o", "json").stdout)
    return [f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in items["items"]]


def lose_a_node(namespace: str, operator: str, name: str, run: dict) -> tuple[str, dict]:
    """The run applied, its members each on a node of their own, its node-loss injected: the node
    lost (only this run's members and the fault helpers on it) and the fault's entry."""
    if len(nodes()) < 3:
        _unavailable("needs a cluster of 3 nodes or more (NODES=3 hack/local-k8s.sh node)")
    with_fault_helper(operator)
    kubectl("apply", "-n", namespace, "-f", "-", input=manifest(name, **run))
    br = wait_phase(namespace, name, ("Running",), timeout=900)
    members = {p["node"] for p in br["status"]["placement"]["database"]}
    assert len(members) == 3, br["status"]["placement"]  # required anti-affinity: a node each

    wait_for("the node loss", lambda: fault_state(namespace, name, 0) == "Injected", 120, every=0.5)
    entry = json.loads(kubectl("get", "br", name, "-n", namespace, "-o", "json").stdout)["status"]["faults"][0]
    lost = entry["node"]
    print("lost node:", lost, json.dumps(entry))
    assert lost in members
    strangers = [p for p in pods_on(lost) if not p.startswith(f"{namespace}/{name}-") and "fault-helper" not in p]
    assert not strangers, f"pods of other work on the node this test cuts off: {strangers}"
    wait_for(f"{lost} NotReady", lambda: not nodes()[lost], 70)
    return lost, entry


def back_and_whole(namespace: str, operator: str, name: str, lost: str, judged=finished) -> dict:
    """After the run: the node Ready again, the fault Recovered, the run judged whole (`judged`:
    TPC-C's or YCSB's verdicts), no runner on the lost node and no node-loss rule left on it."""
    wait_for(f"{lost} Ready again", lambda: nodes()[lost], 300)
    status = judged(namespace, name)
    (fault,) = status["faults"]
    assert (fault["action"], fault["state"], fault["node"]) == ("node-loss", "Recovered", lost)
    runners = {p["node"] for p in status["placement"]["runners"]}
    assert lost not in runners
    helper = kubectl(
        "get",
        "pods",
        "-n",
        operator,
        "-l",
        "app.kubernetes.io/component=fault-helper",
        "--field-selector",
        f"spec.nodeName={lost}",
        "-o",
        "name",
    ).stdout.split()[0]
    rules = kubectl("exec", "-n", operator, helper, "--", "sh", "-c", NODE_RULES).stdout
    print("rules on the node after the run:", rules)
    assert "tpcc-node-loss" not in rules, rules
    return fault


def test_voltdb_member_node_lost_then_back(namespace, operator):
    name = "voltdb-node-loss"
    try:
        lost, _ = lose_a_node(namespace, operator, name, NODE_LOSS_RUN)
        wait_for("the heal", lambda: fault_state(namespace, name, 0) in ("Healed", "Recovered"), LOSS_SECONDS + 120)
        back_and_whole(namespace, operator, name, lost)
    finally:  # its database off the reserved nodes, whatever happened: the next test loses one of them
        kubectl("delete", "benchmarkrun", name, "-n", namespace, "--timeout=180s", check=False)


# lost for good at 15 s of 150: for the 135 s left, past the node monitor's grace period (50 s)
# and the member's toleration of the unreachable taint (20 s here, 300 s by default) after it
EVICT_AFTER_SECONDS = 20
FOR_GOOD_RUN = voltdb_run(150, [{"action": "node-loss", "afterSeconds": 15, "forGood": True}])
FOR_GOOD_RUN["workload"] = ycsb_a(150)
FOR_GOOD_RUN["database"]["deploy"]["antiAffinity"] = "required"
FOR_GOOD_RUN["database"]["deploy"]["values"]["tolerations"] = [
    {"key": RESERVED, "operator": "Exists"},
    {
        "key": "node.kubernetes.io/unreachable",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": EVICT_AFTER_SECONDS,
    },
]


def test_ycsb_voltdb_member_node_lost_for_good_is_evicted_and_made_anew(namespace, operator):
    """forGood, under YCSB workload A: the node stays lost to the end of the measured interval;
    Kubernetes evicts the member there once its toleration runs out (its pod marked for deletion
    while the node is still cut off), the run goes on with two hosts (updates and reads go on
    being acknowledged after the eviction), the helper reconnects the node when the measurement
    ends and the StatefulSet makes the member anew; every update acknowledged is found."""
    name = "ycsb-node-lost-for-good"
    try:
        lost_for_good(namespace, operator, name)
    finally:
        kubectl("delete", "benchmarkrun", name, "-n", namespace, "--timeout=180s", check=False)


def lost_for_good(namespace: str, operator: str, name: str) -> None:
    lost, entry = lose_a_node(namespace, operator, name, FOR_GOOD_RUN)
    # the rest of the measured interval from the cut: 135 s after the 15 s it was due, less any delay
    assert entry["forGood"] and 120 <= entry["durationSeconds"] <= 150 - 15, entry
    victim = entry["target"]

    def evicted() -> bool:
        pod = json.loads(kubectl("get", "pod", victim, "-n", namespace, "-o", "json", check=False).stdout or "{}")
        return (
            "deletionTimestamp" in pod.get("metadata", {}) or pod.get("metadata", {}).get("uid") != entry["targetUID"]
        )

    wait_for(f"{victim} evicted", evicted, EVICT_AFTER_SECONDS + 60)
    assert fault_state(namespace, name, 0) == "Injected" and not nodes()[lost]  # evicted while still lost
    fault = back_and_whole(namespace, operator, name, lost, judged=ycsb_finished)
    made_anew = json.loads(kubectl("get", "pod", victim, "-n", namespace, "-o", "json").stdout)["metadata"]
    assert made_anew["uid"] != entry["targetUID"], "the evicted member is the StatefulSet's new pod"
    print("lost for good:", json.dumps(fault))
