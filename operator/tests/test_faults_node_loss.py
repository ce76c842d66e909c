"""The node-loss fault: its victim (a member on a node without the operator or a runner pod, or
the run fails naming the fault), its status entry and ticks, the helper commands the operator
execs, and the scripts themselves in a scratch network namespace (the node's)."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from test_charts import by_kind, needs_helm, render
from test_faults import RUN, START, T0, Run, at
from tpcc_operator import faults, kube_actions
from tpcc_operator.databases.voltdb import VOLTDB
from tpcc_operator.faults import DatabasePod, Injection
from tpcc_operator.faults.node_loss import (
    _ON_NODE,
    CUT_DELAY_SECONDS,
    HEAL_NODE_LOSS_SCRIPT,
    HELPER_COMMAND,
    NODE_LOSS_SCRIPT,
    RULES_PER_NODE,
    eligible,
)
from tpcc_operator.runspec import RunSpec
from tpcc_operator.runstatus import FaultEntry
from tpcc_operator.stages import reads
from tpcc_operator.stages.actions import KillPods
from tpcc_operator.stages.dispatch import observes

ON_NODES = [
    DatabasePod("bench-g2-0", "a", True, node="node-1"),  # with the operator
    DatabasePod("bench-g2-1", "b", True, node="node-2"),  # with a runner pod
    DatabasePod("bench-g2-2", "c", True, node="node-3"),
]
BUSY = frozenset({"node-1", "node-2"})


@pytest.fixture
def node_loss(document_of):
    return document_of(
        {
            "database": {"type": "voltdb", "deploy": {"replicas": 3, "kSafety": 1}},
            "workload": {"warmupSeconds": 10, "durationSeconds": 120},
            "faults": [
                {"action": "kill-node", "podIndex": 0, "afterSeconds": 5},
                {"action": "node-loss", "afterSeconds": 20, "durationSeconds": 60},
            ],
        }
    )


def decide(spec: dict, entries: list[dict], second: float, pods=ON_NODES, busy=BUSY) -> faults.Decision:
    return faults.decide(RunSpec.parse(spec), entries, T0, at(second), "bench-g2", pods, None, "uid-1", busy)


def test_the_victim_is_a_member_on_a_node_without_the_operator_or_a_runner():
    assert eligible(ON_NODES, BUSY) == ON_NODES[2:]
    assert eligible([DatabasePod("p", "u", True)], frozenset()) == []  # not scheduled: no node to lose
    inj = Injection(1, "node-loss", T0, 0, 0, "node-iptables", 30)
    for seed in ("s1", "s2", "s3"):
        assert faults.choose_victims(inj, faults.Members(VOLTDB, "bench-g2", ON_NODES, None, seed, BUSY)) == [
            ON_NODES[2]
        ]
    by_index = Injection(1, "node-loss", T0, 0, 1, "node-iptables", 30, "pod-index")
    assert faults.choose_victims(by_index, faults.Members(VOLTDB, "bench-g2", ON_NODES, None, "s", BUSY)) == (
        "pod bench-g2-1 is not running and ready"  # its node has a runner pod: not among those to lose
    )


def test_no_node_to_lose_fails_the_run_naming_the_fault(node_loss):
    recovered = [{"number": 1, "action": "kill-node", "state": "Recovered", "target": "bench-g2-0"}]
    one_node = [DatabasePod(p.name, p.uid, True, node="node-1") for p in ON_NODES]
    d = decide(node_loss, recovered, 31, one_node, frozenset({"node-1"}))
    assert d.failure is not None and d.failure.startswith("spec.faults[1].action: node-loss: no database member")
    assert "node-1" in d.failure and "several nodes" in d.failure
    assert d.faults is None and not d.kills  # known before its turn: failed, nothing recorded
    # a member not scheduled yet when it is due: no node to lose either, the entry says so
    unscheduled = [*ON_NODES[:2], DatabasePod("bench-g2-2", "c", False)]
    d = decide(node_loss, recovered, 31, unscheduled, BUSY)
    assert d.faults is not None and d.faults[-1]["state"] == "Skipped" and not d.kills
    assert d.failure is not None and d.failure.startswith("spec.faults[1].action: node-loss: no database member")


def test_a_run_whose_node_loss_finds_no_node_to_lose_fails_naming_it(node_loss):
    """The Running phase asks for the nodes a node-loss spares while one is still to come, and on
    a one-node cluster fails at its first tick, long before the fault is due, naming it."""
    node_loss["faults"] = node_loss["faults"][1:]
    status = {"phase": "Running", "observedGeneration": 2, "startAt": START, "stageStartTime": START}
    assert reads.BusyNodes("bench-g2-runner") in observes(RUN, RunSpec.parse(node_loss), status, at(11), None)
    done = {**status, "faults": [{"number": 1, "action": "node-loss", "state": "Recovered"}]}
    assert reads.BusyNodes("bench-g2-runner") not in observes(RUN, RunSpec.parse(node_loss), done, at(90), None)
    r = Run(node_loss)
    one_node = [DatabasePod(p.name, p.uid, True, node="node-1") for p in ON_NODES]
    step = r.tick(11, one_node, busy_nodes=frozenset({"node-1"}))
    assert (r.status["phase"], r.status["reason"]) == ("Failed", "FaultNotInjected")
    assert r.status["message"].startswith("spec.faults[0].action: node-loss: no database member runs on a node")
    assert KillPods not in {type(a) for a in step.actions}
    r = Run(node_loss)
    r.tick(30, ON_NODES, busy_nodes=BUSY)
    assert r.status["phase"] == "Running" and r.faults[0]["node"] == "node-3"


def test_a_node_loss_is_recorded_cut_then_healed_with_its_node(node_loss):
    entries = [{"number": 1, "action": "kill-node", "state": "Recovered", "target": "bench-g2-0"}]
    d = decide(node_loss, entries, 31)
    entry = d.faults[-1]
    assert (entry["state"], entry["method"], entry["target"], entry["node"], entry["durationSeconds"]) == (
        "Injecting",
        "node-iptables",
        "bench-g2-2",
        "node-3",
        60,
    )
    assert FaultEntry.from_json(entry).to_json() == entry and d.failure is None
    d = decide(node_loss, d.faults, 32)
    assert d.kills == [faults.Kill("bench-g2-2", "c", 0, "node-iptables", 0, node="node-3", duration_seconds=60)]
    assert "cut node node-3 (with pod bench-g2-2) off the network" in d.events[0][2]
    assert decide(node_loss, d.faults, 91).faults is None  # lasts its 60 s
    d = decide(node_loss, d.faults, 92)
    assert d.heals == [faults.Kill("bench-g2-2", "c", 0, "node-iptables", 0, node="node-3")]
    assert d.faults[-1]["state"] == "Healed" and "reconnected node node-3" in d.events[0][2]
    entries, heals = faults.unhealed(d.faults[:-1] + [{**d.faults[-1], "state": "Injected"}], at(95))
    assert heals == d.heals and entries[-1]["state"] == "Healed"  # the end of the run heals it too


def test_a_node_lost_for_good_stays_lost_to_the_end_of_the_measured_interval(node_loss):
    """forGood: the helper's timer is the rest of the measured interval, from when the loss is due
    (120 - 20 s) in the schedule and the entry chosen, from when it is injected once it is (2 s
    later: 98 s; a loss waiting on an earlier fault's recovery would otherwise outlast the
    interval), the event says so, and the heal comes no sooner; the end of the run reconnects
    the node as for a timed loss."""
    node_loss["faults"][1] = {"action": "node-loss", "afterSeconds": 20, "forGood": True}
    (inj,) = [i for i in faults.schedule(RunSpec.parse(node_loss), T0) if i.action == "node-loss"]
    assert (inj.duration_seconds, inj.for_good) == (100, True)
    entries = [{"number": 1, "action": "kill-node", "state": "Recovered", "target": "bench-g2-0"}]
    d = decide(node_loss, entries, 31)
    entry = d.faults[-1]
    assert (entry["node"], entry["durationSeconds"], entry["forGood"]) == ("node-3", 100, True)
    assert FaultEntry.from_json(entry).to_json() == entry
    d = decide(node_loss, d.faults, 32)
    assert d.faults[-1]["durationSeconds"] == 98
    assert d.kills == [faults.Kill("bench-g2-2", "c", 0, "node-iptables", 0, node="node-3", duration_seconds=98)]
    assert (
        "off the network, every interface but lo (iptables DROP), for good: the rest of the measured interval (98s)"
        in (d.events[0][2])
    )
    assert decide(node_loss, d.faults, 129).faults is None  # still lost when the measured interval is nearly over
    entries, heals = faults.unhealed(d.faults, at(131))
    assert heals == [faults.Kill("bench-g2-2", "c", 0, "node-iptables", 0, node="node-3")]
    assert entries[-1]["state"] == "Healed"
    # a timed loss records no forGood
    node_loss["faults"][1] = {"action": "node-loss", "afterSeconds": 20, "durationSeconds": 60}
    assert "forGood" not in decide(node_loss, [entries[0]], 31).faults[-1]


def pod(name: str, uid: str, ready: bool = True, since: dt.datetime | None = None) -> SimpleNamespace:
    """A pod on node-3 as the client reads it (Ready, or not Ready since `since`)."""
    condition = SimpleNamespace(type="Ready", status="True" if ready else "False", last_transition_time=since)
    return SimpleNamespace(
        metadata=SimpleNamespace(name=name, uid=uid, deletion_timestamp=None, creation_timestamp=since),
        spec=SimpleNamespace(node_name="node-3"),
        status=SimpleNamespace(phase="Running", conditions=[condition]),
    )


class _Helper:
    """The API calls of kube_actions.node_loss / heal_node_loss: the victim bench-g2-2 on node-3
    and the fault helper there; what each exec answers."""

    def __init__(self):
        self.helper = pod("tpcc-fault-helper-x", "h")
        self.answer, self.execs = "ok armed", []

    def read_namespaced_pod(self, name, namespace):
        return pod(name, "c")

    def list_namespaced_pod(self, namespace, label_selector="", field_selector=""):
        assert field_selector == "spec.nodeName=node-3"
        return SimpleNamespace(items=[self.helper])


@pytest.fixture
def helper(monkeypatch):
    h = _Helper()
    monkeypatch.setattr(kube_actions, "core", lambda: h)
    monkeypatch.setattr(kube_actions, "_exec", lambda ns, name, c, cmd, what: h.execs.append(cmd) or h.answer)
    return h


CLUSTER = faults.Cluster("perf", "tpcc", "voltdb", {}, run_uid="uid-1")


def test_the_helper_on_the_victims_node_arms_the_cut_and_heals_it(helper):
    kill = faults.Kill("bench-g2-2", "c", 0, "node-iptables", 0, node="node-3", duration_seconds=60)
    assert faults.BY_METHOD["node-iptables"].inject(CLUSTER, kill) == "node node-3 of pod bench-g2-2 cut off"
    assert helper.execs[-1] == ["sh", "-c", NODE_LOSS_SCRIPT, "sh", "tpcc-node-loss-uid-1", "60"]
    helper.answer = "ok 0"
    assert faults.BY_METHOD["node-iptables"].heal(CLUSTER, kill) == "node node-3 reconnected"
    assert helper.execs[-1] == ["sh", "-c", HEAL_NODE_LOSS_SCRIPT, "sh", "tpcc-node-loss-uid-1"]


def test_a_helper_not_ready_fails_the_injection_after_a_minute_but_not_the_heal_of_a_lost_node(helper):
    kill = faults.Kill("bench-g2-2", "c", 0, "node-iptables", 0, node="node-3", duration_seconds=60)
    now = dt.datetime.now(dt.timezone.utc)
    for since, permanent in ((now - dt.timedelta(seconds=10), False), (now - dt.timedelta(seconds=61), True)):
        helper.helper = pod("tpcc-fault-helper-x", "h", ready=False, since=since)
        with pytest.raises(kube_actions.CallFailed) as e:
            faults.BY_METHOD["node-iptables"].inject(CLUSTER, kill)
        assert (e.value.error.reason, e.value.error.permanent) == ("FaultHelperNotReady", permanent)
        assert "the fault helper pod on node node-3 is not ready" in e.value.error.message
        with pytest.raises(kube_actions.CallFailed) as e:
            faults.BY_METHOD["node-iptables"].heal(CLUSTER, kill)
        assert not e.value.error.permanent  # a lost node's helper is back with its node: retried till then
    assert helper.execs == []


@needs_helm
def test_the_helper_deletes_every_node_loss_rule_on_its_node_when_it_starts():
    """The chart's helper command is HELPER_COMMAND: a helper restarted while its node was cut off
    (its timer gone with the old container) reconnects the node."""
    (ds,) = by_kind(render("tpcc-operator", "--set", "faultHelper.enabled=true"), "DaemonSet")
    assert ds["spec"]["template"]["spec"]["containers"][0]["command"] == list(HELPER_COMMAND)


def helper_start_in_scratch_netns() -> str:
    """HELPER_COMMAND's cleanup with the kubelet's mount namespace replaced by a scratch network
    namespace, and without its idling."""
    kubelet = 'for p in /proc/[0-9]*; do [ "$(cat $p/comm 2>/dev/null)" = kubelet ] && nsenter -t ${p#/proc/} -m -- '
    script = HELPER_COMMAND[2].replace(kubelet, 'nsenter -t "$NETNS_PID" -n -- ')
    return script.replace("env PATH=/usr/sbin:/usr/bin:/sbin:/bin ", "").replace(
        " && break; done; exec sleep infinity", ""
    )


NETNS_TOOLS = ("unshare", "nsenter", "ip", "iptables", "setsid")


def in_scratch_netns(script: str) -> str:
    """A node-loss script with its node lookup replaced by a scratch network namespace."""
    return script.replace(_ON_NODE, 'set -e\nTAG=$1; shift\nNODE="nsenter -t $NETNS_PID -n --"\n')


def refused_fast(ns_pid: int, ip: str) -> bool:
    """Whether a connection from the namespace to ip:9 is refused at once (not dropped)."""
    probe = f"import socket; s = socket.socket(); s.settimeout(0.5); s.connect(('{ip}', 9))"
    cmd = ["nsenter", "-t", str(ns_pid), "-n", "--", "python3", "-c", probe]
    out = subprocess.run(cmd, capture_output=True, text=True)
    return "ConnectionRefusedError" in out.stderr


def alive(pid: int) -> bool:
    """Whether the process runs (a zombie, ended and not yet reaped by its new parent, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(
    os.geteuid() != 0 or not all(shutil.which(t) for t in NETNS_TOOLS), reason="needs root and " + " ".join(NETNS_TOOLS)
)
def test_the_scripts_cut_a_node_namespace_off_heal_it_by_timer_and_leave_nothing():
    """The node's network namespace with a veth to a peer: armed, the cut comes CUT_DELAY_SECONDS
    later (three tagged rules, a connection to the peer dropped, one over lo still refused at once),
    the timer removes it after the duration; the operator's heal then finds nothing, stops an armed
    timer before it fires, and leaves no rule, process or file."""
    node_ns = subprocess.Popen(["unshare", "-n", "sleep", "120"])
    peer_ns = subprocess.Popen(["unshare", "-n", "sleep", "120"])
    tag = f"tpcc-node-loss-test-{os.getpid()}"
    try:
        time.sleep(0.2)
        node, peer = (["nsenter", "-t", str(p.pid), "-n", "--"] for p in (node_ns, peer_ns))
        for ns, cmd in (
            (node, f"ip link add n0 type veth peer name n1 netns {peer_ns.pid}"),
            (node, "ip addr add 10.9.1.1/24 dev n0"),
            (peer, "ip addr add 10.9.1.2/24 dev n1"),
            (node, "ip link set lo up"),
            (node, "ip link set n0 up"),
            (peer, "ip link set n1 up"),
        ):
            subprocess.run([*ns, *cmd.split()], check=True)
        env = {**os.environ, "NETNS_PID": str(node_ns.pid)}

        def run(script, *args):
            cmd = ["sh", "-c", in_scratch_netns(script), "sh", tag, *args]
            out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=30)
            return (out.stdout.strip().splitlines() or [out.stderr])[-1]

        def tagged() -> int:
            rules = subprocess.run([*node, "iptables", "-w", "-S"], capture_output=True, text=True).stdout
            return sum(f"--comment {tag} " in r + " " for r in rules.splitlines())

        assert refused_fast(node_ns.pid, "10.9.1.2") and refused_fast(node_ns.pid, "127.0.0.1")
        t0 = time.monotonic()
        assert run(NODE_LOSS_SCRIPT, "3") == "ok armed"
        assert run(NODE_LOSS_SCRIPT, "3") == "ok armed"  # a repeat arms nothing more
        time.sleep(CUT_DELAY_SECONDS + 0.5)
        assert tagged() == RULES_PER_NODE
        assert not refused_fast(node_ns.pid, "10.9.1.2")  # dropped: the connection times out
        assert refused_fast(node_ns.pid, "127.0.0.1")  # lo untouched
        while tagged() and time.monotonic() - t0 < CUT_DELAY_SECONDS + 3 + 5:
            time.sleep(0.2)
        healed_after = time.monotonic() - t0
        print(f"cut after {CUT_DELAY_SECONDS}s, healed by its timer {healed_after:.1f}s after arming (3s asked)")
        assert CUT_DELAY_SECONDS + 3 <= healed_after < CUT_DELAY_SECONDS + 3 + 2
        assert refused_fast(node_ns.pid, "10.9.1.2")
        assert run(HEAL_NODE_LOSS_SCRIPT) == "ok 0" and not list(Path("/tmp").glob(f"{tag}.*"))
        assert run(HEAL_NODE_LOSS_SCRIPT) == "ok 0"  # a second heal finds nothing
        # healed by the operator before its timer: the timer goes too, and cuts nothing later
        assert run(NODE_LOSS_SCRIPT, "60") == "ok armed"
        timer = int(Path(f"/tmp/{tag}.pid").read_text())
        time.sleep(CUT_DELAY_SECONDS + 0.5)
        assert tagged() == RULES_PER_NODE
        assert run(HEAL_NODE_LOSS_SCRIPT) == "ok 0" and tagged() == 0
        time.sleep(0.2)
        assert not alive(timer) and not list(Path("/tmp").glob(f"{tag}.*"))
        assert refused_fast(node_ns.pid, "10.9.1.2")
        # the helper restarted while the node is cut off: its timer is gone, its start reconnects
        assert run(NODE_LOSS_SCRIPT, "60") == "ok armed"
        time.sleep(CUT_DELAY_SECONDS + 0.5)
        os.killpg(int(Path(f"/tmp/{tag}.pid").read_text()), 9)
        assert tagged() == RULES_PER_NODE
        subprocess.run(["sh", "-c", helper_start_in_scratch_netns()], env=env, check=True, timeout=30)
        assert tagged() == 0 and refused_fast(node_ns.pid, "10.9.1.2")
    finally:
        node_ns.kill(), peer_ns.kill()
        for left in Path("/tmp").glob(f"{tag}.*"):
            left.unlink()
