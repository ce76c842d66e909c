"""End to end on a real cluster, with disks: a MongoDB BenchmarkRun deployed by the operator
through Helm with the charts/mongodb test-server profile (SecantusDB as a one-member replica
set, data on a PersistentVolumeClaim), w:majority, its primary's process SIGKILLed during the
measured interval (kill-primary, method kill-process: a crash-restart on the same volume) and then
every member's at once (kill-all: the whole system), then 0 acknowledged NewOrders lost or
replaced and 12/12 consistency; and a 3-node k=1 VoltDB
whose node 2 is killed the same way and rejoins on its own voltdbroot, and whose node 2 is paused
(SIGSTOP, then SIGCONT) past the cluster's heartbeat timeout.

Needs the images local/tpcc-runner:dev (with this operator), local/voltdb:10.1.1 and
local/secantus:dev (hack/images.sh secantus) and a default StorageClass that provisions
(hack/local-k8s.sh: local-hostpath). Namespaces dev-mongo-*, deleted afterwards.
"""

from __future__ import annotations

import json
import subprocess
import time

import pytest
from conftest import SECANTUS_IMAGE
from test_benchmarkrun_e2e import ROOT, kubectl, manifest, wait_for, wait_phase
from tpcc_operator.plan import LIST_QDISCS_SCRIPT, LIST_RULES_SCRIPT
from tpcc_operator.timestamps import parse_time

pytestmark = pytest.mark.k8s

MONGODB_RUN = dict(
    database={
        "type": "mongodb",
        "readyTimeoutSeconds": 300,
        "deploy": {"replicas": 1, "values": {"testServer": {"enabled": True, "image": {"pullPolicy": "Never"}}}},
    },
    workload={
        "warehouses": 1,
        "clients": 2,
        # measured here: the primary back 5 s after its kill, the whole system 22 s after kill-all;
        # the verifier waits for the last recovery anyway (stages/verification.py)
        "durationSeconds": 100,
        "warmupSeconds": 5,
        "loadWorkers": 2,
        "loadTimeoutSeconds": 2400,
        # the paper's configuration; findAndModify costs SecantusDB a collection scan
        "driverOptions": {
            "write_concern": "majority",
            "read_concern": "majority",
            "schema": "denormalized",
            "find_and_modify": "false",
        },
    },
    runners={"parallelism": 1, "imagePullPolicy": "Never"},
    # a failover of the primary, then the loss of the whole system (clause 3.5.3): kill-all
    faults=[
        {"action": "kill-primary", "method": "kill-process", "afterSeconds": 30},
        {"action": "kill-all", "method": "kill-process", "afterSeconds": 60},
    ],
    cleanup={"policy": "Never"},
)

VOLTDB_KILL_PROCESS_RUN = dict(
    database={
        "type": "voltdb",
        "readyTimeoutSeconds": 300,
        "deploy": {"replicas": 3, "kSafety": 1, "values": {"image": {"pullPolicy": "Never"}}},
    },
    # the node rejoined 20 s after its kill here
    workload={"warehouses": 1, "clients": 2, "durationSeconds": 70, "warmupSeconds": 5, "loadWorkers": 2},
    runners={"parallelism": 1, "imagePullPolicy": "Never"},
    faults=[{"action": "kill-node", "podIndex": 2, "method": "kill-process", "afterSeconds": 20}],
    cleanup={"policy": "Never"},
)


def pod(ns: str, name: str) -> dict:
    return json.loads(kubectl("get", "pod", name, "-n", ns, "-o", "json").stdout)


def restarts(p: dict, container: str) -> int:
    return next(c["restartCount"] for c in p["status"]["containerStatuses"] if c["name"] == container)


def assert_crash_restarts(status: dict, count: int, victim: str, uid: str) -> None:
    """Every fault killed the process of the same pod (same UID: the pod and its volume stayed)
    and recovered once its container had restarted."""
    faults = status["faults"]
    assert [f["state"] for f in faults] == ["Recovered"] * count, faults
    assert all(f["method"] == "kill-process" and f["target"] == victim and f["targetUID"] == uid for f in faults)
    assert [f["restartCount"] for f in faults] == [f["targetRestarts"] + 1 for f in faults]
    assert all(f["recoverySeconds"] > 0 for f in faults)


def test_mongodb_test_server_kill_primary_then_kill_all(namespace, operator):
    name = "mongodb-e2e"
    kubectl("apply", "-n", namespace, "-f", "-", input=manifest(name, **MONGODB_RUN))
    wait_phase(namespace, name, ("Loading", "Running"), timeout=600)
    member = f"{name}-g1-0"
    # the profile's member: SecantusDB on a bound claim
    claim = json.loads(kubectl("get", "pvc", f"data-{member}", "-n", namespace, "-o", "json").stdout)
    assert claim["status"]["phase"] == "Bound"
    before = pod(namespace, member)
    assert before["spec"]["containers"][0]["image"].endswith(SECANTUS_IMAGE)

    br = wait_phase(namespace, name, ("Succeeded", "Failed"), timeout=3600)
    status = br["status"]
    assert status["phase"] == "Succeeded", f"{status.get('reason')}: {status.get('message')}"
    primary, whole = status["faults"]
    assert_crash_restarts({"faults": [primary]}, 1, member, before["metadata"]["uid"])
    assert (whole["action"], whole["state"], whole["target"]) == ("kill-all", "Recovered", f"all 1 pods: {member}")
    assert whole["targets"] == [{"pod": member, "uid": before["metadata"]["uid"], "restarts": primary["restartCount"]}]
    assert restarts(pod(namespace, member), "mongod") >= restarts(before, "mongod") + 2
    durability = status["durability"]
    assert durability["durable"] and durability["lost"] == durability["replaced"] == 0
    assert durability["acknowledged"] == durability["found"] > 0
    assert status["consistency"]["passed"] and len(status["consistency"]["conditions"]) == 12
    assert status["results"]["tpmC"] > 0
    events = json.loads(
        kubectl(
            "get", "events", "-n", namespace, "-o", "json", "--field-selector", f"involvedObject.name={name}"
        ).stdout
    )["items"]
    # the API server lists events in no set order: by the fault number each message starts with
    injected = sorted(e["message"] for e in events if e["reason"] == "FaultInjected")
    assert len(injected) == 2 and f"killed the database process of pod {member}" in injected[0]
    assert f"killed the database process of all 1 pods: {member}" in injected[1]

    # the claim goes with the release
    kubectl("delete", "benchmarkrun", name, "-n", namespace, "--timeout=180s")
    wait_for(
        "the member's claim to go",
        lambda: kubectl("get", "pvc", f"data-{member}", "-n", namespace, check=False).returncode != 0,
        120,
    )


def test_voltdb_node_process_killed_rejoins_on_its_own_volume(namespace, operator):
    name = "voltdb-kill-process"
    kubectl("apply", "-n", namespace, "-f", "-", input=manifest(name, **VOLTDB_KILL_PROCESS_RUN))
    wait_phase(namespace, name, ("Running",), timeout=900)
    victim = f"{name}-g1-2"
    uid = pod(namespace, victim)["metadata"]["uid"]
    br = wait_phase(namespace, name, ("Succeeded", "Failed"), timeout=1200)
    status = br["status"]
    assert status["phase"] == "Succeeded", f"{status.get('reason')}: {status.get('message')}"
    assert_crash_restarts(status, 1, victim, uid)
    assert status["durability"]["lost"] == 0 and status["durability"]["acknowledged"] > 0
    assert status["consistency"]["passed"]
    kubectl("delete", "benchmarkrun", name, "-n", namespace, "--timeout=180s")


# ---- a pause (a gray failure) longer than VoltDB's heartbeat timeout ---------------------------

PAUSE_SECONDS = 25
VOLTDB_PAUSE_RUN = dict(
    database={
        "type": "voltdb",
        "readyTimeoutSeconds": 300,
        # the chart's heartbeat timeout (VoltDB's default 90 s) shortened so that a 25 s pause
        # outlasts it inside a 60 s run
        "deploy": {
            "replicas": 3,
            "kSafety": 1,
            "values": {"image": {"pullPolicy": "Never"}, "heartbeatTimeoutSeconds": 10},
        },
    },
    workload={"warehouses": 1, "clients": 2, "durationSeconds": 60, "warmupSeconds": 5, "loadWorkers": 2},
    runners={"parallelism": 1, "imagePullPolicy": "Never"},
    faults=[
        {"action": "pause", "victim": "pod-index", "podIndex": 2, "afterSeconds": 15, "durationSeconds": PAUSE_SECONDS}
    ],
    cleanup={"policy": "Never"},
)


def process_cpu(ns: str, name: str) -> tuple[str, int]:
    """The database process's state (T: stopped) and CPU time (utime + stime, in clock ticks),
    from /proc/<pid>/stat in its container."""
    out = kubectl(
        "exec",
        "-n",
        ns,
        name,
        "-c",
        "voltdb",
        "--",
        "sh",
        "-c",
        'cut -d" " -f3,14,15 "/proc/$(cat /tmp/database.pid)/stat"',
    ).stdout.split()
    return out[0], int(out[1]) + int(out[2])


def fault_state(ns: str, name: str) -> str:
    faults = (json.loads(kubectl("get", "br", name, "-n", ns, "-o", "json").stdout).get("status") or {}).get("faults")
    return faults[0]["state"] if faults else ""


def test_voltdb_node_paused_past_its_heartbeat_timeout(namespace, operator):
    """pause: node 2's VoltDB process is stopped (SIGSTOP) for 25 s, past the cluster's 10 s
    heartbeat timeout, during a TPC-C run. While stopped its CPU time does not advance; then it is
    resumed (SIGCONT), finds the others dropped it, stops itself (VoltDB's partition detection)
    and rejoins as a restarted container; nothing acknowledged is lost and the 12 conditions
    hold."""
    name = "voltdb-pause"
    kubectl("apply", "-n", namespace, "-f", "-", input=manifest(name, **VOLTDB_PAUSE_RUN))
    wait_phase(namespace, name, ("Running",), timeout=900)
    victim = f"{name}-g1-2"
    uid = pod(namespace, victim)["metadata"]["uid"]
    wait_for("the pause", lambda: fault_state(namespace, name) == "Injected", 120, every=0.5)
    state, cpu = process_cpu(namespace, victim)
    time.sleep(3)
    state2, cpu2 = process_cpu(namespace, victim)
    print("paused:", state, cpu, state2, cpu2)
    assert (state, state2) == ("T", "T") and cpu2 == cpu  # stopped: no CPU time in 3 s
    wait_for("the heal", lambda: fault_state(namespace, name) in ("Healed", "Recovered"), PAUSE_SECONDS + 30, every=0.5)
    br = wait_phase(namespace, name, ("Succeeded", "Failed"), timeout=1200)
    status = br["status"]
    assert status["phase"] == "Succeeded", f"{status.get('reason')}: {status.get('message')}"
    (fault,) = status["faults"]
    print("fault:", json.dumps(fault), "durability:", status["durability"])
    assert (fault["action"], fault["method"], fault["state"], fault["target"]) == (
        "pause",
        "sigstop",
        "Recovered",
        victim,
    )
    paused = (parse_time(fault["healedTime"]) - parse_time(fault["injectedTime"])).total_seconds()
    assert PAUSE_SECONDS <= paused < PAUSE_SECONDS + 5 and fault["recoverySeconds"] > paused
    # VoltDB's reaction: the others dropped the silent node; resumed, it stopped itself and its
    # container came back and rejoined in the same pod
    assert fault["targetUID"] == uid and fault["restartCount"] > fault["targetRestarts"]
    state, _ = process_cpu(namespace, victim)
    assert state != "T"  # nothing left stopped
    logs = kubectl("logs", "-n", namespace, victim, "-c", "voltdb", "--previous").stdout
    assert "Partition detection" in logs or "partition" in logs.lower(), logs[-2000:]
    assert status["durability"]["lost"] == 0 and status["durability"]["acknowledged"] > 0
    assert status["consistency"]["passed"] and len(status["consistency"]["conditions"]) == 12
    events = json.loads(
        kubectl(
            "get", "events", "-n", namespace, "-o", "json", "--field-selector", f"involvedObject.name={name}"
        ).stdout
    )["items"]
    assert {"FaultInjected", "FaultHealed", "FaultRecovered"} <= {e["reason"] for e in events}
    kubectl("delete", "benchmarkrun", name, "-n", namespace, "--timeout=180s")


# ---- a partition isolating one VoltDB node, through the operator's fault helper ---------------

PARTITION_SECONDS = 25
VOLTDB_PARTITION_RUN = {
    **VOLTDB_PAUSE_RUN,
    "faults": [
        {
            "action": "partition",
            "victim": "pod-index",
            "podIndex": 2,
            "afterSeconds": 15,
            "durationSeconds": PARTITION_SECONDS,
        }
    ],
}

REACH = """
import socket, sys
s = socket.socket()
s.settimeout(3)
try:
    s.connect((sys.argv[1], int(sys.argv[2])))
    print("arrived: connected")
except ConnectionRefusedError:
    print("arrived: refused")
except OSError as e:
    print("lost:", e)
"""


def reach(ns: str, src: str, dst_ip: str, port: int = 3021) -> str:
    """Whether a TCP SYN from pod src gets to dst_ip:port (the VoltDB internal port): an answer
    (connected, or refused by a node that is down) means the packets arrive both ways."""
    out = kubectl("exec", "-n", ns, src, "-c", "voltdb", "--", "python3", "-c", REACH, dst_ip, str(port), check=False)
    return out.stdout.strip() if out.returncode == 0 else f"no exec: {out.stderr.strip()}"


def with_fault_helper(operator: str) -> None:
    """The operator's release upgraded with its fault helper (faultHelper.enabled; its namespace
    admits privileged pods)."""
    release = f"op-{operator[-6:]}"
    kubectl("label", "namespace", operator, "pod-security.kubernetes.io/enforce=privileged", "--overwrite")
    subprocess.run(
        ["helm", "upgrade", release, str(ROOT / "charts" / "tpcc-operator"), "-n", operator, "--reuse-values"]
        + ["--set", "faultHelper.enabled=true", "--wait", "--timeout", "180s"],
        check=True,
        capture_output=True,
        text=True,
    )


def fault_helper(operator: str, ns: str, pod_name: str) -> str:
    """The fault helper's pod on the node the pod runs on (the one that sees its processes)."""
    node = pod(ns, pod_name)["spec"]["nodeName"]
    selector = ("-l", "app.kubernetes.io/component=fault-helper", "--field-selector", f"spec.nodeName={node}")
    return kubectl("get", "pods", "-n", operator, *selector, "-o", "name").stdout.split()[0]


def test_voltdb_node_partitioned_from_the_others(namespace, operator):
    """partition: node 2 is cut off from nodes 0 and 1 (both ways) for 25 s during a TPC-C run,
    through the fault helper (the operator chart's faultHelper, opt-in). While it lasts a SYN
    from node 2 to node 0 and from node 0 to node 2 gets no answer; the rules are then deleted
    and both get one again; nothing acknowledged is lost, the 12 conditions hold, and no rule is
    left behind."""
    with_fault_helper(operator)
    name = "voltdb-partition"
    kubectl("apply", "-n", namespace, "-f", "-", input=manifest(name, **VOLTDB_PARTITION_RUN))
    wait_phase(namespace, name, ("Running",), timeout=900)
    victim, peer = f"{name}-g1-2", f"{name}-g1-0"
    victim_ip, peer_ip = pod(namespace, victim)["status"]["podIP"], pod(namespace, peer)["status"]["podIP"]
    assert reach(namespace, victim, peer_ip).startswith("arrived") and reach(namespace, peer, victim_ip).startswith(
        "arrived"
    )
    wait_for("the partition", lambda: fault_state(namespace, name) == "Injected", 120, every=0.5)
    out, back = reach(namespace, victim, peer_ip), reach(namespace, peer, victim_ip)
    print("partitioned:", out, "|", back)
    assert out.startswith("lost") and back.startswith("lost")
    wait_for("the heal", lambda: fault_state(namespace, name) in ("Healed", "Recovered"), PARTITION_SECONDS + 30)
    # the peer's SYN to node 2 gets an answer again (node 2 may be restarting: refused), and
    # node 2's, once its container runs again, to the peer
    both = wait_for(
        "packets arriving again",
        lambda: (lambda a, b: (a, b) if a.startswith("arrived") and b.startswith("arrived") else None)(
            reach(namespace, peer, victim_ip), reach(namespace, victim, peer_ip)
        ),
        180,
    )
    print("healed:", both)
    br = wait_phase(namespace, name, ("Succeeded", "Failed"), timeout=1200)
    status = br["status"]
    assert status["phase"] == "Succeeded", f"{status.get('reason')}: {status.get('message')}"
    (fault,) = status["faults"]
    print("fault:", json.dumps(fault), "durability:", status["durability"])
    what = (fault["action"], fault["method"], fault["state"], fault["target"])
    assert what == ("partition", "iptables", "Recovered", victim)
    cut = (parse_time(fault["healedTime"]) - parse_time(fault["injectedTime"])).total_seconds()
    assert PARTITION_SECONDS <= cut < PARTITION_SECONDS + 5
    assert status["durability"]["lost"] == 0 and status["durability"]["acknowledged"] > 0
    assert status["consistency"]["passed"] and len(status["consistency"]["conditions"]) == 12
    # nothing left: no rule tagged with the victim's UID in its network namespace
    helper = fault_helper(operator, namespace, victim)
    script = ("sh", "-c", LIST_RULES_SCRIPT, "sh", fault["targetUID"], "-")
    rules = kubectl("exec", "-n", operator, helper, "--", *script).stdout
    print("rules after the run:", rules)
    assert "-P INPUT ACCEPT" in rules and "tpcc-partition" not in rules
    kubectl("delete", "benchmarkrun", name, "-n", namespace, "--timeout=180s")


# ---- a slow network (netem) on one VoltDB node, through the same fault helper -----------------

SLOW_SECONDS, DELAY_MS = 25, 200
VOLTDB_SLOW_NETWORK_RUN = {
    **VOLTDB_PAUSE_RUN,
    "faults": [
        {
            "action": "slow-network",
            "victim": "pod-index",
            "podIndex": 2,
            "afterSeconds": 15,
            "durationSeconds": SLOW_SECONDS,
            "delayMs": DELAY_MS,
        }
    ],
}

CONNECT_MS = """
import socket, statistics, sys, time
took = []
for _ in range(5):
    s = socket.socket()
    s.settimeout(5)
    t = time.monotonic()
    try:
        s.connect((sys.argv[1], int(sys.argv[2])))
    except ConnectionRefusedError:
        pass  # the RST comes back through the same queue as a SYN-ACK would
    took.append((time.monotonic() - t) * 1000)
    s.close()
print(round(statistics.median(took), 1))
"""


def connect_ms(ns: str, src: str, dst_ip: str, port: int = 3021) -> float:
    """The median time of five TCP handshakes from pod src to dst_ip:port, in milliseconds."""
    out = kubectl("exec", "-n", ns, src, "-c", "voltdb", "--", "python3", "-c", CONNECT_MS, dst_ip, str(port))
    return float(out.stdout.strip())


def test_voltdb_node_network_slowed_then_restored(namespace, operator):
    """slow-network: node 2's outgoing packets held 200 ms for 25 s during a TPC-C run, through
    the fault helper (netem, or where the node's kernel has none, as here, the NFQUEUE delayer).
    While it lasts a TCP handshake from node 0 to node 2 takes about 200 ms longer, and as long as
    before once restored; nothing acknowledged is lost, the 12 conditions hold, and no qdisc,
    rule or delayer is left in node 2's network namespace."""
    with_fault_helper(operator)
    name = "voltdb-slow-network"
    kubectl("apply", "-n", namespace, "-f", "-", input=manifest(name, **VOLTDB_SLOW_NETWORK_RUN))
    wait_phase(namespace, name, ("Running",), timeout=900)
    victim, peer = f"{name}-g1-2", f"{name}-g1-0"
    victim_ip, uid = pod(namespace, victim)["status"]["podIP"], pod(namespace, victim)["metadata"]["uid"]
    helper = fault_helper(operator, namespace, victim)

    def in_netns() -> str:
        return kubectl("exec", "-n", operator, helper, "--", "sh", "-c", LIST_QDISCS_SCRIPT, "sh", uid, "-").stdout

    before = connect_ms(namespace, peer, victim_ip)
    wait_for("the slow network", lambda: fault_state(namespace, name) == "Injected", 120, every=0.5)
    during, there = connect_ms(namespace, peer, victim_ip), in_netns()
    wait_for("the heal", lambda: fault_state(namespace, name) in ("Healed", "Recovered"), SLOW_SECONDS + 30)
    after = connect_ms(namespace, peer, victim_ip)
    by = "netem" if "netem" in there else "nfqueue" if "NFQUEUE" in there else "nothing"
    print(f"handshake node 0 -> node 2: {before} ms before, {during} ms slowed (by {by}), {after} ms after")
    assert by != "nothing", there
    assert 0.8 * DELAY_MS <= during - before <= DELAY_MS + 150 and after < before + 50
    br = wait_phase(namespace, name, ("Succeeded", "Failed"), timeout=1200)
    status = br["status"]
    assert status["phase"] == "Succeeded", f"{status.get('reason')}: {status.get('message')}"
    (fault,) = status["faults"]
    print("fault:", json.dumps(fault), "durability:", status["durability"])
    assert (fault["method"], fault["state"], fault["target"], fault["delayMs"]) == (
        "netem",
        "Recovered",
        victim,
        DELAY_MS,
    )
    slowed = (parse_time(fault["healedTime"]) - parse_time(fault["injectedTime"])).total_seconds()
    assert SLOW_SECONDS <= slowed < SLOW_SECONDS + 5
    assert status["durability"]["lost"] == 0 and status["durability"]["acknowledged"] > 0
    assert status["consistency"]["passed"] and len(status["consistency"]["conditions"]) == 12
    left = in_netns()
    print("qdiscs and rules after the run:", left)
    assert "qdisc" in left and "netem" not in left and "NFQUEUE" not in left
    delayers = kubectl(
        "exec", "-n", operator, helper, "--", "sh", "-c", "ls /tmp; cat /proc/[0-9]*/cmdline | tr '\\0' ' '"
    ).stdout
    assert "nfqueue_delayer" not in delayers and "tpcc-slow-network" not in delayers
    kubectl("delete", "benchmarkrun", name, "-n", namespace, "--timeout=180s")
