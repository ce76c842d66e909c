"""The slow-network fault: netem's arguments, its ticks (slowed, restored at the end of its
duration, recovered), its undoing when the run ends another way or is deleted, its refusal
without the fault helper, and the helper commands the operator execs."""

from __future__ import annotations

import os
import random
import shutil
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_faults import ALL_READY, RUN, Run, at
from test_faults_pause import _Pod, heals
from tpcc_operator import chart_policy, faults, handlers, kube_actions, nfqueue_delayer, plan
from tpcc_operator.faults import Netem
from tpcc_operator.runspec import RunSpec
from tpcc_operator.stages.actions import KillPods
from tpcc_operator.stages.dispatch import next_step
from tpcc_operator.stages.machine import World

SLOWED = ("delay", "100ms", "20ms", "loss", "2.5%")


@pytest.fixture
def slow(document_of):
    return document_of(
        {
            "database": {"type": "voltdb", "deploy": {"replicas": 3, "kSafety": 1}},
            "workload": {"warmupSeconds": 10, "durationSeconds": 120},
            "faults": [
                {
                    "action": "slow-network",
                    "victim": "pod-index",
                    "podIndex": 1,
                    "afterSeconds": 20,
                    "durationSeconds": 30,
                    "delayMs": 100,
                    "jitterMs": 20,
                    "lossPercent": 2.5,
                }
            ],
        }
    )


@pytest.mark.parametrize(
    ("netem", "args"),
    [
        (Netem(delay_ms=250), ("delay", "250ms")),
        (Netem(delay_ms=100, jitter_ms=20, loss_percent=2.5), SLOWED),
        (Netem(loss_percent=10), ("loss", "10%")),
        (Netem(loss_percent=0.1), ("loss", "0.1%")),
    ],
)
def test_netem_gets_what_the_spec_asks(netem, args):
    assert faults.netem_args(netem) == args
    assert Netem.of_status(netem.status()) == netem  # what the status keeps makes the same command


def test_a_slow_network_is_scheduled_with_its_netem(slow):
    (inj,) = faults.schedule(RunSpec.parse(slow), at(0))
    assert (inj.action, inj.method, inj.duration_seconds, inj.netem) == (
        "slow-network",
        "netem",
        30,
        Netem(100, 20, 2.5),
    )


def test_a_slow_network_slows_then_restores_then_recovers(slow):
    r = Run(slow)
    r.tick(30, ALL_READY)
    entry = r.faults[0]
    assert {k: entry[k] for k in ("action", "method", "target", "durationSeconds", "state")} == {
        "action": "slow-network",
        "method": "netem",
        "target": "bench-g2-1",
        "durationSeconds": 30,
        "state": "Injecting",
    }
    assert (entry["delayMs"], entry["jitterMs"], entry["lossPercent"]) == (100, 20, 2.5)
    step = r.tick(31, ALL_READY)
    assert step.actions == [KillPods((faults.Kill("bench-g2-1", "b", 0, "netem", 0, Netem(100, 20, 2.5)),))]
    assert "slowed the packets pod bench-g2-1 sends (netem delay 100ms 20ms loss 2.5%) for 30s" in r.events[0].message
    assert r.tick(60, ALL_READY).status == {}  # 29 s: still slowed
    step = r.tick(61, ALL_READY)
    assert heals(step) == (faults.Kill("bench-g2-1", "b", 0, "netem", 0),)
    assert r.faults[0]["state"] == "Healed"
    assert (
        "restored the network of pod bench-g2-1 (its netem qdisc or NFQUEUE delayer removed) after 30s"
        in r.events[-1].message
    )
    r.tick(71, ALL_READY)
    assert (r.faults[0]["state"], r.faults[0]["recoverySeconds"]) == ("Recovered", 40.0)


def test_a_run_that_ends_while_slowed_restores_its_member(slow):
    r = Run(slow)
    r.tick(30, ALL_READY), r.tick(31, ALL_READY)
    failed = {**r.status, "phase": "Failed", "reason": "TooManyErrors", "completionTime": "2025-01-01T12:00:40Z"}
    step = next_step(RUN, RunSpec.parse(slow), {**failed, "verdict": "Failed"}, World(), at(40))
    assert heals(step) == (faults.Kill("bench-g2-1", "b", 0, "netem", 0),)


def test_the_finalizer_restores_the_network_through_the_helper(monkeypatch):
    injected = {"number": 1, "action": "slow-network", "method": "netem", "state": "Injected", "target": "p-1"}
    injected |= {"targetUID": "u1", "durationSeconds": 30, "delayMs": 100}
    body = {"metadata": {"uid": "uid-1"}, "spec": {"database": {"type": "voltdb"}}, "status": {"faults": [injected]}}
    healed = []
    monkeypatch.setattr(handlers, "settings", lambda: plan.Settings(Path("."), fault_helper_namespace="tpcc"))
    monkeypatch.setattr(kube_actions, "heal_slow_network", lambda ns, helper, heal: healed.append((ns, helper, heal)))
    handlers._heal_on_delete("perf", "bench", body, _Logger())
    assert healed == [("perf", "tpcc", faults.Kill("p-1", "u1", 0, "netem", 0))]


class _Logger:
    def info(self, *args):
        pass

    warning = info


def test_a_slow_network_without_the_fault_helper_is_refused_before_anything_is_installed(slow):
    without = plan.Settings(charts_dir=Path("."))
    with pytest.raises(chart_policy.ReleaseRefused, match=r"spec.faults\[0\].action: slow-network needs the"):
        handlers._refuse_faults_this_cluster_cannot_take(RunSpec.parse(slow), without)
    handlers._refuse_faults_this_cluster_cannot_take(
        RunSpec.parse(slow), plan.Settings(Path("."), fault_helper_namespace="tpcc")
    )


class _Core:
    """The pods kube_actions reads: the victim p-1 (UID u1, on node n2) and the fault helpers."""

    def read_namespaced_pod(self, name, namespace):
        pod = _Pod("u1", 0)
        pod.spec = type("Spec", (), {"node_name": "n2"})()
        return pod

    def list_namespaced_pod(self, namespace, label_selector, field_selector=""):
        helper = _Pod("h", 0)
        helper.metadata.name = "helper-n2"
        helper.status.phase = "Running"
        helper.status.conditions = [type("C", (), {"type": "Ready", "status": "True"})()]
        return type("L", (), {"items": [helper]})()


@pytest.fixture
def helper(monkeypatch):
    """The commands exec'd in the fault helper, each answered by the next of `answers`."""
    calls, answers = [], []

    def exec_(namespace, pod, container, command, what, timeout_seconds=60):
        calls.append((namespace, pod, container, command))
        return answers.pop(0)

    monkeypatch.setattr(kube_actions, "core", _Core)
    monkeypatch.setattr(kube_actions, "_exec", exec_)
    return calls, answers


TARGET = faults.Kill("p-1", "u1", 0, "netem", 0, Netem(100, 20, 2.5))


def test_the_helper_on_the_victims_node_slows_it_and_restores_it(helper):
    calls, answers = helper
    answers += ["ok 1 nfqueue\n", "ok 0\n", "ok 1 netem\n"]
    assert kube_actions.slow_network("perf", "tpcc", TARGET) == "nfqueue"
    assert kube_actions.heal_slow_network("perf", "tpcc", faults.Kill("p-1", "u1", 0, "netem", 0))
    tag = "tpcc-slow-network-u1"
    assert calls == [
        (
            "tpcc",
            "helper-n2",
            "helper",
            ["sh", "-c", plan.SLOW_NETWORK_SCRIPT, "sh", "u1", tag, "100", "20", "2.5", *SLOWED],
        ),
        ("tpcc", "helper-n2", "helper", ["sh", "-c", plan.HEAL_SLOW_NETWORK_SCRIPT, "sh", "u1", tag]),
    ]
    assert kube_actions.slow_network("perf", "tpcc", TARGET) == "netem"
    # a pod replaced since it was chosen took its network namespace along: nothing to do
    assert kube_actions.slow_network("perf", "tpcc", faults.Kill("p-1", "u0", 0, "netem", 0, Netem(5))) is None
    assert len(calls) == 3


def test_what_the_helper_could_not_do_fails_the_run_with_what_it_said(helper):
    calls, answers = helper
    answers.append("no netem in the node's kernel, and the NFQUEUE delayer ended: PermissionError\n")
    with pytest.raises(kube_actions.CallFailed) as e:
        kube_actions.slow_network("perf", "tpcc", TARGET)
    assert (e.value.error.permanent, e.value.error.reason) == (True, "FaultNotInjected")
    assert "slow network of pod p-1: no netem in the node's kernel, and the NFQUEUE" in e.value.error.message
    answers.append("ok 1\n")  # a heal that left a qdisc or rule in place
    with pytest.raises(kube_actions.CallFailed) as e:
        kube_actions.heal_slow_network("perf", "tpcc", faults.Kill("p-1", "u1", 0, "netem", 0))
    assert e.value.error.reason == "FaultNotHealed"


def test_the_delayer_speaks_nfnetlink_queue():
    header = struct.pack(">IHB", 42, 0x0800, 3)  # nfqnl_msg_packet_hdr: id, protocol, hook
    attrs = struct.pack("=HH", 4 + len(header), 1) + header + b"\0"  # padded to 4
    attrs += struct.pack("=HH", 8, 11) + struct.pack(">I", 60)  # another attribute (NFQA_IFINDEX_OUTDEV)
    body = struct.pack("BB", 0, 0) + struct.pack(">H", 7) + attrs
    packet = struct.pack("=IHHII", 16 + len(body), 3 << 8, 0, 0, 0) + body
    assert nfqueue_delayer.packet_ids(packet + packet.replace(b"\0\0\0\x2a", b"\0\0\0\x2b", 1)) == [42, 43]
    v = nfqueue_delayer.verdict(7, 42, accept=True)
    assert struct.unpack_from("=IH", v) == (len(v), 3 << 8 | 1) and struct.unpack(">II", v[-8:]) == (1, 42)
    assert struct.unpack(">II", nfqueue_delayer.verdict(7, 42, accept=False)[-8:]) == (0, 42)
    assert [struct.unpack_from("=IH", m)[1] for m in nfqueue_delayer.config(7)] == [3 << 8 | 2] * 3
    assert all(struct.unpack_from(">H", m, 18) == (7,) for m in nfqueue_delayer.config(7))  # the queue
    rng = random.Random(1)
    held = [nfqueue_delayer.hold_for(100, 20, rng) for _ in range(1000)]
    assert 0.08 <= min(held) < 0.085 and 0.115 < max(held) <= 0.12
    assert nfqueue_delayer.hold_for(5, 20, rng) >= 0


NETNS_TOOLS = ("unshare", "nsenter", "ip", "tc", "iptables")


def in_scratch_netns(script: str) -> str:
    """A fault helper script as run on a node, with its preamble's pod lookup replaced by a
    scratch network namespace (PID in /tmp/...): the rest runs as written."""
    return script.replace(plan._IN_POD_NETNS, "set -e\nU=$1; TAG=$2; shift 2\nPID=$NETNS_PID\n" + _IN_NETNS)


_IN_NETNS = 'in_pod() { nsenter -t "$PID" -n -- sh -c "$1"; }\n'

CONNECT = """
import socket, statistics, sys, time
took = []
for _ in range(5):
    s = socket.socket()
    t = time.monotonic()
    try:
        s.connect((sys.argv[1], 9))
    except ConnectionRefusedError:
        took.append(time.monotonic() - t)
    s.close()
print(statistics.median(took) * 1000)
"""


@pytest.mark.skipif(
    os.geteuid() != 0 or not all(shutil.which(t) for t in NETNS_TOOLS), reason="needs root and " + " ".join(NETNS_TOOLS)
)
def test_the_scripts_slow_a_network_namespace_and_leave_nothing():
    """The slow network's scripts in a scratch network namespace (the pod's) with its default
    route on a veth to another (a peer's): a refused connection to the peer takes 150 ms longer
    while slowed (its SYN held: by netem where the kernel has it, else, as here with
    CONFIG_NET_SCH_NETEM unset, by the NFQUEUE delayer), one to its own address (over lo) does
    not; the heal leaves no qdisc, rule, delayer or file, and a second heal finds nothing."""
    pod_ns = subprocess.Popen(["unshare", "-n", "sleep", "60"])
    peer_ns = subprocess.Popen(["unshare", "-n", "sleep", "60"])
    try:
        time.sleep(0.2)
        pod, peer = (["nsenter", "-t", str(p.pid), "-n", "--"] for p in (pod_ns, peer_ns))
        for ns, cmd in (
            (pod, f"ip link add d0 type veth peer name d1 netns {peer_ns.pid}"),
            (pod, "ip addr add 10.9.0.1/24 dev d0"),
            (peer, "ip addr add 10.9.0.2/24 dev d1"),
            (pod, "ip link set lo up"),
            (pod, "ip link set d0 up"),
            (peer, "ip link set d1 up"),
            (pod, "ip route add default via 10.9.0.2"),
        ):
            subprocess.run([*ns, *cmd.split()], check=True)
        env = {
            **os.environ,
            "NETNS_PID": str(pod_ns.pid),
            "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        }
        tag = f"tpcc-slow-network-test-{os.getpid()}"
        slow = ("150", "0", "0", *faults.netem_args(faults.Netem(delay_ms=150)))

        def run(script, *args):
            out = subprocess.run(
                ["sh", "-c", in_scratch_netns(script), "sh", "u", tag, *args],
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
                cwd=Path(kube_actions.__file__).parents[1],  # where python3 -m finds the delayer
            )
            return (out.stdout.strip().splitlines() or [out.stderr])[-1]

        def connect_ms(ip):
            out = subprocess.run([*pod, sys.executable, "-c", CONNECT, ip], capture_output=True, text=True)
            return float(out.stdout)

        before, local = connect_ms("10.9.0.2"), connect_ms("10.9.0.1")
        by = run(plan.SLOW_NETWORK_SCRIPT, *slow)
        assert by in ("ok 1 netem", "ok 1 nfqueue")
        slowed, local_slowed = connect_ms("10.9.0.2"), connect_ms("10.9.0.1")
        print(f"{by}: to the peer {before:.2f} -> {slowed:.2f} ms, to itself {local:.2f} -> {local_slowed:.2f} ms")
        assert 140 <= slowed - before <= 250 and local_slowed < local + 20
        assert run(plan.SLOW_NETWORK_SCRIPT, *slow) == by  # a repeat (an operator restart) adds nothing
        assert run(plan.HEAL_SLOW_NETWORK_SCRIPT) == "ok 0"
        left = subprocess.run([*pod, "sh", "-c", "tc qdisc show; iptables -w -S"], capture_output=True, text=True)
        assert "netem" not in left.stdout and "NFQUEUE" not in left.stdout
        assert not list(Path("/tmp").glob(f"{tag}.*"))
        assert connect_ms("10.9.0.2") < before + 20
        assert run(plan.HEAL_SLOW_NETWORK_SCRIPT) == "ok 0"
    finally:
        pod_ns.kill(), peer_ns.kill()
