"""End to end on a real cluster: a 3-node k=1 VoltDB deployed by the operator, each fault kind
injected during a TPC-C run, shown to have happened while it lasted and to be undone after, and
the run judged by the same verdicts (nothing acknowledged lost, the 12 consistency conditions).

Two runs carry the five kinds one after another (the operator injects a run's next fault only
once the last has recovered), so the cluster is deployed and loaded twice, not five times:
- slow-network on node 1, then node 2's process killed (it rejoins on its own voltdbroot);
- node 2 paused past the heartbeat timeout (it finds itself dropped, stops and rejoins), then
  node 1 partitioned from the others (the minority side stops itself and rejoins).
slow-network and partition go through the operator chart's fault helper (opt-in, privileged).
A YCSB run takes a pause, a partition and a Chaos Mesh experiment (action chaos: created over
the database pods, deleted after its duration); a chaos fault is refused before anything is
installed where the operator may not create experiments or the cluster does not serve the kind.

Needs the images local/tpcc-runner:dev (with this operator) and local/voltdb:10.1.1 and a
default StorageClass that provisions (hack/local-k8s.sh: local-hostpath).
"""

from __future__ import annotations

import json
import subprocess
import time

import pytest
from test_benchmarkrun_e2e import ROOT, kubectl, manifest, wait_for, wait_phase
from test_mongodb_e2e import assert_crash_restarts, pod
from tpcc_operator.faults import chaos_mesh
from tpcc_operator.plan import LIST_QDISCS_SCRIPT, LIST_RULES_SCRIPT
from tpcc_operator.timestamps import parse_time

pytestmark = pytest.mark.k8s

FAULT_SECONDS, DELAY_MS = 25, 200


def voltdb_run(duration_seconds: int, faults: list[dict]) -> dict:
    return dict(
        database={
            "type": "voltdb",
            "readyTimeoutSeconds": 300,
            # the chart's heartbeat timeout (VoltDB's default 90 s) shortened so that a 25 s
            # pause outlasts it
            "deploy": {
                "replicas": 3,
                "kSafety": 1,
                "values": {"image": {"pullPolicy": "Never"}, "heartbeatTimeoutSeconds": 10},
            },
        },
        workload={
            "warehouses": 1,
            "clients": 2,
            "durationSeconds": duration_seconds,
            "warmupSeconds": 5,
            "loadWorkers": 2,
            # below saturation (these runs last up to 160 s on the CI's two cores), 150 a second
            # a terminal: a fault's seconds-long stall still catches every terminal mid-stream
            "targetTransactionsPerSecond": 300,
        },
        runners={"parallelism": 1, "imagePullPolicy": "Never"},
        faults=faults,
        cleanup={"policy": "Never"},
    )


def timed(action: str, node: int, after: int, **more) -> dict:
    return {
        "action": action,
        "victim": "pod-index",
        "podIndex": node,
        "afterSeconds": after,
        "durationSeconds": FAULT_SECONDS,
        **more,
    }


# the kill waits for the slow network's heal and settling (~40 s); the node rejoined 20 s
# after its kill here
SLOW_THEN_KILL_RUN = voltdb_run(
    100,
    [
        timed("slow-network", 1, 10, delayMs=DELAY_MS),
        {"action": "kill-node", "podIndex": 2, "method": "kill-process", "afterSeconds": 45},
    ],
)
# the paused node stopped itself and rejoined ~35 s after its resume here; the partition
# waits for that
PAUSE_THEN_PARTITION_RUN = voltdb_run(160, [timed("pause", 2, 15), timed("partition", 1, 85)])


def fault_state(ns: str, name: str, number: int) -> str:
    """The state of the run's fault `number` (0-based), "" before it is chosen."""
    faults = (json.loads(kubectl("get", "br", name, "-n", ns, "-o", "json").stdout).get("status") or {}).get("faults")
    return faults[number]["state"] if faults and len(faults) > number else ""


def lasted(fault: dict) -> float:
    return (parse_time(fault["healedTime"]) - parse_time(fault["injectedTime"])).total_seconds()


def finished(ns: str, name: str) -> dict:
    """The run's status once it ended, asserted Succeeded with nothing acknowledged lost and the
    12 conditions holding."""
    status = wait_phase(ns, name, ("Succeeded", "Failed"), timeout=1200)["status"]
    assert status["phase"] == "Succeeded", f"{status.get('reason')}: {status.get('message')}"
    print("faults:", json.dumps(status["faults"]), "durability:", status["durability"])
    assert status["durability"]["lost"] == 0 and status["durability"]["acknowledged"] > 0
    assert status["consistency"]["passed"] and len(status["consistency"]["conditions"]) == 12
    return status


def ycsb_finished(ns: str, name: str) -> dict:
    """A YCSB run's status once it ended, asserted Succeeded with every acknowledged update found
    by the verifier (workload A over 2,000 records, its data integrity checked) and both reads and
    updates done."""
    status = wait_phase(ns, name, ("Succeeded", "Failed"), timeout=1200)["status"]
    print("faults:", json.dumps(status.get("faults")), "durability:", status.get("durability"))
    print("operations:", json.dumps(status.get("ycsb", {}).get("operations")))
    assert status["phase"] == "Succeeded", f"{status.get('reason')}: {status.get('message')}"
    durability = status["durability"]
    assert durability["durable"] and durability["lost"] == 0, durability
    assert durability["acknowledged"] > 0 and durability["records"] == 2000, durability
    operations = status["ycsb"]["operations"]
    assert operations["UPDATE"]["count"] > 0 and operations["READ"]["count"] > 0, operations
    return status


def event_reasons(ns: str, name: str) -> set[str]:
    selector = ("--field-selector", f"involvedObject.name={name}")
    events = json.loads(kubectl("get", "events", "-n", ns, "-o", "json", *selector).stdout)["items"]
    return {e["reason"] for e in events}


def upgraded(operator: str, value: str) -> None:
    """The operator's release upgraded with one more value set (--reuse-values keeps the rest)."""
    release = f"op-{operator[-6:]}"
    subprocess.run(
        ["helm", "upgrade", release, str(ROOT / "charts" / "tpcc-operator"), "-n", operator, "--reuse-values"]
        + ["--set", value, "--wait", "--timeout", "180s"],
        check=True,
        capture_output=True,
        text=True,
    )


def with_fault_helper(operator: str) -> None:
    """The operator's release upgraded with its fault helper (faultHelper.enabled; its namespace
    admits privileged pods)."""
    kubectl("label", "namespace", operator, "pod-security.kubernetes.io/enforce=privileged", "--overwrite")
    upgraded(operator, "faultHelper.enabled=true")


def chaos_mesh_allowed(operator: str) -> None:
    """The operator's release upgraded with chaosMesh.enabled (its Role may create experiments)."""
    upgraded(operator, "chaosMesh.enabled=true")


def chaos_mesh_crds_served() -> bool:
    return kubectl("get", "crd", "stresschaos.chaos-mesh.org", check=False).returncode == 0


@pytest.fixture(scope="module")
def chaos_mesh_installed(operator):
    """Chaos Mesh's CRDs (from its Go module: hack/chaos-mesh.sh crds) and an operator allowed to
    create experiments. Chaos Mesh's controller is not installed here (hack/chaos-mesh.sh up
    builds and installs it; minutes of Go compile, left out of CI): an experiment then exists
    for its duration and does nothing."""
    chaos_mesh_allowed(operator)
    subprocess.run([str(ROOT / "hack" / "chaos-mesh.sh"), "crds"], check=True, capture_output=True, text=True)
    wait_for("StressChaos served", chaos_mesh_crds_served, 60)
    return operator


def fault_helper(operator: str, ns: str, pod_name: str) -> str:
    """The fault helper's pod on the node the pod runs on (the one that sees its processes)."""
    node = pod(ns, pod_name)["spec"]["nodeName"]
    selector = ("-l", "app.kubernetes.io/component=fault-helper", "--field-selector", f"spec.nodeName={node}")
    return kubectl("get", "pods", "-n", operator, *selector, "-o", "name").stdout.split()[0]


def in_netns(operator: str, helper: str, uid: str, script: str) -> str:
    """What a fault helper's listing script prints from inside pod uid's network namespace."""
    return kubectl("exec", "-n", operator, helper, "--", "sh", "-c", script, "sh", uid, "-").stdout


# ---- a chaos fault the operator cannot inject ---------------------------------------------------

STRESS_RUN = voltdb_run(
    60,
    [
        {
            "action": "chaos",
            "afterSeconds": 10,
            "durationSeconds": 20,
            "chaos": {"kind": "StressChaos", "spec": {"stressors": {"cpu": {"workers": 1, "load": 50}}}},
        }
    ],
)


def refused(ns: str, name: str) -> str:
    """The message of a run that failed ReleaseRefused, asserted to have installed nothing."""
    kubectl("apply", "-n", ns, "-f", "-", input=manifest(name, **STRESS_RUN))
    status = wait_phase(ns, name, ("Failed", "Running", "Succeeded"), timeout=120)["status"]
    assert status["reason"] == "ReleaseRefused", status
    sets = kubectl("get", "statefulsets", "-n", ns, "-l", f"bench.tpcc.dev/run={name}", "-o", "name").stdout
    assert sets.strip() == "", sets
    kubectl("delete", "benchmarkrun", name, "-n", ns, "--timeout=120s")
    return status["message"]


def test_a_chaos_fault_is_refused_before_anything_is_installed_without_chaos_mesh(namespace, operator):
    """An operator installed without chaosMesh.enabled refuses a chaos fault naming the value to
    set; allowed, on a cluster without Chaos Mesh's CRDs (a fresh one, as CI's: on a cluster
    where an earlier session applied them this half is not shown), it refuses naming the kind."""
    message = refused(namespace, "chaos-not-allowed")
    print("not allowed:", message)
    assert message.startswith("spec.faults[0].action: chaos creates a Chaos Mesh experiment"), message
    assert "chaosMesh.enabled=true" in message
    if chaos_mesh_crds_served():
        print("Chaos Mesh's CRDs are served here already: the unserved kind is not shown")
        return
    chaos_mesh_allowed(operator)
    message = refused(namespace, "chaos-not-served")
    print("not served:", message)
    assert message.startswith(
        "spec.faults[0].chaos.kind: StressChaos: this cluster does not serve stresschaos.chaos-mesh.org/v1alpha1"
    ), message


# ---- slow-network, then a process kill ----------------------------------------------------------

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


def test_voltdb_network_slowed_then_a_node_process_killed(namespace, operator):
    """slow-network: node 1's outgoing packets held 200 ms for 25 s (netem, or where the node's
    kernel has none, as here, the NFQUEUE delayer): a TCP handshake from node 0 to node 1 takes
    about 200 ms longer while it lasts and as long as before once restored, and no qdisc, rule
    or delayer is left in node 1's network namespace. Then kill-node (kill-process): node 2's
    process SIGKILLed, its container restarts in the same pod (same UID, same volume) and
    rejoins. Nothing acknowledged is lost and the 12 conditions hold."""
    with_fault_helper(operator)
    name = "voltdb-slow-kill"
    kubectl("apply", "-n", namespace, "-f", "-", input=manifest(name, **SLOW_THEN_KILL_RUN))
    wait_phase(namespace, name, ("Running",), timeout=900)
    slowed, peer, killed = f"{name}-g1-1", f"{name}-g1-0", f"{name}-g1-2"
    slowed_ip, slowed_uid = pod(namespace, slowed)["status"]["podIP"], pod(namespace, slowed)["metadata"]["uid"]
    killed_uid = pod(namespace, killed)["metadata"]["uid"]
    helper = fault_helper(operator, namespace, slowed)

    before = connect_ms(namespace, peer, slowed_ip)
    wait_for("the slow network", lambda: fault_state(namespace, name, 0) == "Injected", 120, every=0.5)
    during, there = connect_ms(namespace, peer, slowed_ip), in_netns(operator, helper, slowed_uid, LIST_QDISCS_SCRIPT)
    wait_for("the heal", lambda: fault_state(namespace, name, 0) in ("Healed", "Recovered"), FAULT_SECONDS + 30)
    after = connect_ms(namespace, peer, slowed_ip)
    by = "netem" if "netem" in there else "nfqueue" if "NFQUEUE" in there else "nothing"
    print(f"handshake node 0 -> node 1: {before} ms before, {during} ms slowed (by {by}), {after} ms after")
    assert by != "nothing", there
    assert 0.8 * DELAY_MS <= during - before <= DELAY_MS + 150 and after < before + 50

    status = finished(namespace, name)
    slow, kill = status["faults"]
    what = (slow["action"], slow["method"], slow["state"], slow["target"], slow["delayMs"])
    assert what == ("slow-network", "netem", "Recovered", slowed, DELAY_MS)
    assert FAULT_SECONDS <= lasted(slow) < FAULT_SECONDS + 5
    assert_crash_restarts({"faults": [kill]}, 1, killed, killed_uid)
    left = in_netns(operator, helper, slowed_uid, LIST_QDISCS_SCRIPT)
    print("qdiscs and rules after the run:", left)
    assert "qdisc" in left and "netem" not in left and "NFQUEUE" not in left
    processes = ("sh", "-c", "ls /tmp; cat /proc/[0-9]*/cmdline | tr '\\0' ' '")
    delayers = kubectl("exec", "-n", operator, helper, "--", *processes).stdout
    assert "nfqueue_delayer" not in delayers and "tpcc-slow-network" not in delayers
    kubectl("delete", "benchmarkrun", name, "-n", namespace, "--timeout=180s")


# ---- a pause past the heartbeat timeout, then a partition ---------------------------------------


def process_cpu(ns: str, name: str) -> tuple[str, int]:
    """The database process's state (T: stopped) and CPU time (utime + stime, in clock ticks),
    from /proc/<pid>/stat in its container."""
    stat = 'cut -d" " -f3,14,15 "/proc/$(cat /tmp/database.pid)/stat"'
    out = kubectl("exec", "-n", ns, name, "-c", "voltdb", "--", "sh", "-c", stat).stdout.split()
    return out[0], int(out[1]) + int(out[2])


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


def reach(ns: str, src: str, dst_ip: str, port: int = 3021, container: str = "voltdb") -> str:
    """Whether a TCP SYN from pod src gets to dst_ip:port (the VoltDB internal port): an answer
    (connected, or refused by a node that is down) means the packets arrive both ways."""
    command = ("python3", "-c", REACH, dst_ip, str(port))
    out = kubectl("exec", "-n", ns, src, "-c", container, "--", *command, check=False)
    return out.stdout.strip() if out.returncode == 0 else f"no exec: {out.stderr.strip()}"


def both_arrive(ns: str, a: str, a_ip: str, b: str, b_ip: str) -> tuple[str, str] | None:
    there, back = reach(ns, a, b_ip), reach(ns, b, a_ip)
    return (there, back) if there.startswith("arrived") and back.startswith("arrived") else None


def test_voltdb_node_paused_then_another_partitioned(namespace, operator):
    """pause: node 2's process stopped (SIGSTOP) for 25 s, past the cluster's 10 s heartbeat
    timeout: its CPU time does not advance; resumed (SIGCONT), it finds the others dropped it,
    stops itself (VoltDB's partition detection) and rejoins as a restarted container. Then
    partition: node 1 cut off from nodes 0 and 2, both ways, for 25 s: a SYN either way gets no
    answer while it lasts and one again after, and no rule is left. Nothing acknowledged is
    lost and the 12 conditions hold."""
    with_fault_helper(operator)
    name = "voltdb-pause-partition"
    kubectl("apply", "-n", namespace, "-f", "-", input=manifest(name, **PAUSE_THEN_PARTITION_RUN))
    wait_phase(namespace, name, ("Running",), timeout=900)
    paused, cut, peer = f"{name}-g1-2", f"{name}-g1-1", f"{name}-g1-0"
    paused_uid = pod(namespace, paused)["metadata"]["uid"]
    cut_ip, peer_ip = pod(namespace, cut)["status"]["podIP"], pod(namespace, peer)["status"]["podIP"]
    assert both_arrive(namespace, cut, cut_ip, peer, peer_ip)

    wait_for("the pause", lambda: fault_state(namespace, name, 0) == "Injected", 120, every=0.5)
    state, cpu = process_cpu(namespace, paused)
    time.sleep(3)
    state2, cpu2 = process_cpu(namespace, paused)
    print("paused:", state, cpu, state2, cpu2)
    assert (state, state2) == ("T", "T") and cpu2 == cpu  # stopped: no CPU time in 3 s

    wait_for("the partition", lambda: fault_state(namespace, name, 1) == "Injected", 180, every=0.5)
    out, back = reach(namespace, cut, peer_ip), reach(namespace, peer, cut_ip)
    print("partitioned:", out, "|", back)
    assert out.startswith("lost") and back.startswith("lost")
    wait_for("the heal", lambda: fault_state(namespace, name, 1) in ("Healed", "Recovered"), FAULT_SECONDS + 30)
    # the peer's SYN to node 1 gets an answer again (node 1 may be restarting: refused), and
    # node 1's, once its container runs again, to the peer
    print(
        "healed:", wait_for("packets arriving again", lambda: both_arrive(namespace, cut, cut_ip, peer, peer_ip), 180)
    )

    status = finished(namespace, name)
    pause, partition = status["faults"]
    assert (pause["action"], pause["method"], pause["state"], pause["target"]) == (
        "pause",
        "sigstop",
        "Recovered",
        paused,
    )
    assert FAULT_SECONDS <= lasted(pause) < FAULT_SECONDS + 5 and pause["recoverySeconds"] > lasted(pause)
    # VoltDB's reaction: the others dropped the silent node; resumed, it stopped itself and its
    # container came back and rejoined in the same pod
    assert pause["targetUID"] == paused_uid and pause["restartCount"] > pause["targetRestarts"]
    assert process_cpu(namespace, paused)[0] != "T"  # nothing left stopped
    logs = kubectl("logs", "-n", namespace, paused, "-c", "voltdb", "--previous").stdout
    assert "Partition detection" in logs or "partition" in logs.lower(), logs[-2000:]
    what = (partition["action"], partition["method"], partition["state"], partition["target"])
    assert what == ("partition", "iptables", "Recovered", cut)
    assert FAULT_SECONDS <= lasted(partition) < FAULT_SECONDS + 5
    assert {"FaultInjected", "FaultHealed", "FaultRecovered"} <= event_reasons(namespace, name)
    # nothing left: no rule tagged with the victim's UID in its network namespace
    rules = in_netns(operator, fault_helper(operator, namespace, cut), partition["targetUID"], LIST_RULES_SCRIPT)
    print("rules after the run:", rules)
    assert "-P INPUT ACCEPT" in rules and "tpcc-partition" not in rules
    kubectl("delete", "benchmarkrun", name, "-n", namespace, "--timeout=180s")


# ---- the gray failures under YCSB ---------------------------------------------------------------

CHAOS_SECONDS = 20
# a PodChaos pod-kill: with Chaos Mesh's controller installed one member is deleted (and
# rejoins); with its CRDs only, the experiment exists for its duration and does nothing
POD_KILL = {
    "action": "chaos",
    "afterSeconds": 115,
    "durationSeconds": CHAOS_SECONDS,
    "chaos": {"kind": "PodChaos", "spec": {"action": "pod-kill", "mode": "one"}},
}


def ycsb_a(duration_seconds: int) -> dict:
    """The workload of the YCSB fault runs: A (reads and updates) over 2,000 records with their
    data integrity checked, 4 client threads at 1,000 operations a second in all (below
    saturation: a 150 s run at VoltDB's limit takes the CI's two cores from the other tests, and
    250 a second a thread still meets every fault mid-stream); every operation may fail
    (maxErrorPercent 100: while the clients reach only a stopped minority, or a lost host, they do)."""
    return {
        "kind": "ycsb",
        "clients": 4,
        "durationSeconds": duration_seconds,
        "maxErrorPercent": 100,
        "warmupSeconds": 0,
        "loadWorkers": 2,
        "ycsb": {
            "workload": "a",
            "recordCount": 2000,
            "batchSize": 50,
            "targetOpsPerSecond": 1000,
            "properties": {"dataintegrity": "true"},
        },
    }


# the partition puts both runner pods with node 1: they reach only the member that stops itself
YCSB_PAUSE_THEN_PARTITION_RUN = {
    **voltdb_run(150, [timed("pause", 2, 10), timed("partition", 1, 70, runners="cut-off-side"), POD_KILL]),
    "workload": ycsb_a(150),
    "runners": {"parallelism": 2, "imagePullPolicy": "Never"},
}


def experiment(ns: str, kind: str, name: str) -> dict | None:
    out = kubectl("get", chaos_mesh.plural(kind) + "." + chaos_mesh.GROUP, name, "-n", ns, "-o", "json", check=False)
    return json.loads(out.stdout) if out.returncode == 0 else None


def test_ycsb_through_a_pause_a_partition_and_a_chaos_experiment_keeps_every_acknowledged_update(
    namespace, chaos_mesh_installed
):
    """YCSB workload A (reads and updates) from two runner pods on the same 3-node k=1 VoltDB:
    node 2 paused past the heartbeat timeout; then node 1 partitioned from the others with both
    runner pods on its side (a SYN from a runner to nodes 0 and 2 gets no answer, to node 1 one:
    the clients are stuck with the minority, which stops itself); then a Chaos Mesh PodChaos:
    created when due over the run's database pods (the selector the operator set, the run its
    owner), gone after its 20 s. What the clients saw while they reached no majority is counted
    as errors and unknown outcomes, not as losses: every update the pods saw acknowledged is
    found by the verifier, and the three faults recovered."""
    with_fault_helper(chaos_mesh_installed)
    name = "ycsb-pause-partition"
    kubectl("apply", "-n", namespace, "-f", "-", input=manifest(name, **YCSB_PAUSE_THEN_PARTITION_RUN))
    wait_for("the partition", lambda: fault_state(namespace, name, 1) == "Injected", 900, every=0.5)
    cut = json.loads(kubectl("get", "br", name, "-n", namespace, "-o", "json").stdout)["status"]["faults"][1]
    runners = [r["pod"] for r in cut["runnerTargets"]]
    # node 0 stands for the majority (node 2 is the same to a runner), node 1 is the cut-off member
    ips = {i: pod(namespace, f"{name}-g1-{i}")["status"]["podIP"] for i in (0, 1)}
    seen = {(r, i): reach(namespace, r, ips[i], 21212, container="tpcc") for r in runners for i in (0, 1)}
    print("runners -> members while cut off:", seen)
    assert len(runners) == 2 and cut["runners"] == "cut-off-side"
    assert all(seen[r, 0].startswith("lost") and seen[r, 1].startswith("arrived") for r in runners), seen
    wait_for("the heal", lambda: fault_state(namespace, name, 1) in ("Healed", "Recovered"), FAULT_SECONDS + 30)

    def again():
        return all(reach(namespace, r, ips[0], 21212, container="tpcc").startswith("arrived") for r in runners)

    wait_for("the runners reaching node 0 again", again, 60)
    wait_for("the chaos fault", lambda: fault_state(namespace, name, 2) == "Injected", 900, every=0.5)
    run = json.loads(kubectl("get", "br", name, "-n", namespace, "-o", "json").stdout)
    made = run["status"]["faults"][2]["experiment"]
    created = experiment(namespace, "PodChaos", made["name"])
    print("experiment:", json.dumps(created and created["spec"]))
    assert created and made["name"] == f"{name}-g1-fault-3"
    labels = {"bench.tpcc.dev/run": name, "bench.tpcc.dev/generation": "1", "bench.tpcc.dev/role": "database"}
    assert created["spec"]["selector"] == {"namespaces": [namespace], "labelSelectors": labels}
    assert (created["spec"]["action"], created["spec"]["mode"]) == ("pod-kill", "one")
    (owner,) = created["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["uid"]) == ("BenchmarkRun", run["metadata"]["uid"])
    wait_for("the heal", lambda: fault_state(namespace, name, 2) in ("Healed", "Recovered"), CHAOS_SECONDS + 30)
    wait_for("the experiment gone", lambda: experiment(namespace, "PodChaos", made["name"]) is None, 60)

    status = ycsb_finished(namespace, name)
    pause, partition, chaos = status["faults"]
    assert [(f["action"], f["state"]) for f in (pause, partition, chaos)] == [
        ("pause", "Recovered"),
        ("partition", "Recovered"),
        ("chaos", "Recovered"),
    ]
    assert all(FAULT_SECONDS <= lasted(f) < FAULT_SECONDS + 5 for f in (pause, partition))
    assert CHAOS_SECONDS <= lasted(chaos) < CHAOS_SECONDS + 5
    # with Chaos Mesh's controller (hack/chaos-mesh.sh up) one member was deleted and came back as
    # a new pod; with its CRDs only, none
    replaced = [t["pod"] for t in chaos["targets"] if pod(namespace, t["pod"])["metadata"]["uid"] != t["uid"]]
    controller = kubectl("get", "deployment", "chaos-controller-manager", "-n", "chaos-mesh", check=False)
    print("Chaos Mesh's controller:", "installed" if controller.returncode == 0 else "absent", "replaced:", replaced)
    assert len(replaced) == (1 if controller.returncode == 0 else 0), replaced
    assert status["durability"]["ledgers"] == 2, status["durability"]  # one per runner pod
    kubectl("delete", "benchmarkrun", name, "-n", namespace, "--timeout=180s")
