"""End to end on a real cluster, with disks: a MongoDB BenchmarkRun deployed by the operator
through Helm with the charts/mongodb test-server profile (SecantusDB as a one-member replica
set, data on a PersistentVolumeClaim), w:majority, its primary's process SIGKILLed during the
measured interval (kill-primary, method kill-process: a crash-restart on the same volume) and then
every member's at once (kill-all: the whole system), then 0 acknowledged NewOrders lost or
replaced and 12/12 consistency. VoltDB's faults: test_voltdb_faults_e2e.py.

Needs the images local/tpcc-runner:dev (with this operator) and
local/secantus:dev (hack/images.sh secantus) and a default StorageClass that provisions
(hack/local-k8s.sh: local-hostpath). Namespaces dev-mongo-*, deleted afterwards.
"""

from __future__ import annotations

import json

import pytest
from conftest import SECANTUS_IMAGE
from test_benchmarkrun_e2e import kubectl, manifest, wait_for, wait_phase

pytestmark = pytest.mark.k8s

MONGODB_RUN = dict(
    database={
        "type": "mongodb",
        "readyTimeoutSeconds": 300,
        "deploy": {"replicas": 1, "values": {"testServer": {"enabled": True, "image": {"pullPolicy": "Never"}}}},
    },
    workload={
        "warehouses": 1,
        # a tenth of the rows (py-tpcc's --scalefactor 10): a full warehouse took the test server
        # about 3 minutes to load; what is judged here is the kills, not the load
        "scaleDown": 10,
        "clients": 2,
        # measured here: the primary back 5 s after its kill, the whole system 22 s after kill-all;
        # the verifier waits for the last recovery anyway (stages/verification.py)
        "durationSeconds": 100,
        "warmupSeconds": 5,
        "loadWorkers": 2,
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
