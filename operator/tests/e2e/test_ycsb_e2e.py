"""End to end on a real cluster: a YCSB BenchmarkRun (workload.kind ycsb, workload A) against a
VoltDB the operator deploys: the load Job loads the records, two runner pods run behind the
barrier, each inserting into its own slice, the merged results land in status.ycsb and the
BenchmarkResult, and the verifier finds every write the pods saw acknowledged. Needs
local/tpcc-runner:dev and local/voltdb:10.1.1 (hack/images.sh)."""

from __future__ import annotations

import json

import pytest
from test_benchmarkrun_e2e import RUN_LABEL, kubectl, manifest, wait_for, wait_phase

pytestmark = pytest.mark.k8s

YCSB_RUN = dict(
    database={
        "type": "voltdb",
        "readyTimeoutSeconds": 300,
        "deploy": {"replicas": 1, "values": {"image": {"pullPolicy": "Never"}}},
    },
    workload={
        "kind": "ycsb",
        "clients": 4,
        "durationSeconds": 20,
        "warmupSeconds": 0,
        "loadWorkers": 2,
        "ycsb": {"workload": "a", "recordCount": 2000, "batchSize": 50, "properties": {"dataintegrity": "true"}},
    },
    runners={"parallelism": 2, "imagePullPolicy": "Never"},
    cleanup={"policy": "Never"},
)


def test_ycsb_workload_a_on_voltdb(namespace, operator):
    name = "ycsb-e2e"
    kubectl("apply", "-n", namespace, "-f", "-", input=manifest(name, **YCSB_RUN))
    br = wait_phase(namespace, name, ("Succeeded", "Failed"), timeout=900)
    status = br["status"]
    assert status["phase"] == "Succeeded", f"{status.get('reason')}: {status.get('message')}"
    ycsb = status["ycsb"]
    assert ycsb["workload"] == "a" and ycsb["runnerPods"] == 2 and ycsb["opsPerSecond"] > 0
    assert ycsb["properties"]["recordcount"] == "2000" and ycsb["properties"]["dataintegrity"] == "true"
    operations = ycsb["operations"]
    # workload A: reads and updates only, every read's values as written (dataintegrity)
    assert set(operations) >= {"READ", "UPDATE"} and operations["READ"]["count"] > 0
    assert all(op["errors"] == 0 for op in operations.values()), operations
    assert operations["READ"]["latencyMs"]["p99"] >= operations["READ"]["latencyMs"]["p50"] > 0
    assert "results" not in status and "consistency" not in status  # TPC-C's, not YCSB's
    assert status["load"]["rows"] == 2000 and status["load"]["seconds"] > 0  # the load Job's records
    # every update the pods saw acknowledged is in the database, from both pods' ledgers
    durability = status["durability"]
    assert durability["durable"] and durability["lost"] == 0 and durability["ledgers"] == 2, durability
    assert durability["acknowledged"] > 0 and durability["records"] == 2000 and durability["expectedRecords"] == "2000"
    jobs = json.loads(kubectl("get", "jobs", "-n", namespace, "-l", f"{RUN_LABEL}={name}", "-o", "json").stdout)[
        "items"
    ]
    assert sorted(j["metadata"]["name"] for j in jobs) == [
        f"{name}-g1-loader",
        f"{name}-g1-runner",
        f"{name}-g1-verifier",
    ]

    def recorded():
        out = kubectl("get", "benchmarkresults", "-n", namespace, "-l", f"{RUN_LABEL}={name}", "-o", "json")
        items = json.loads(out.stdout)["items"]
        return items[0] if items else None

    result = wait_for("the BenchmarkResult", recorded, 60)
    assert result["spec"]["opsPerSecond"] == ycsb["opsPerSecond"]
    assert result["spec"]["runSpec"]["workload"]["kind"] == "ycsb"
    # the API server's printer columns: the records the run loaded, not TPC-C's default warehouse
    row = kubectl("get", "br", name, "-n", namespace, "--no-headers").stdout.split()
    assert row[:6] == [name, "Succeeded", "voltdb", "2,000", "YCSB", "records"], row
    kubectl("delete", "benchmarkrun", name, "-n", namespace, "--timeout=180s")


def test_ycsb_writes_lost_to_a_killed_voltdb_node_fail_the_run(namespace, operator):
    """Workload D (inserts from both runner pods, each its own keys) on one VoltDB node whose pod
    the operator deletes mid-run (allowDataLoss: VoltDB CE keeps no command log, so the node comes
    back empty). The verifier runs once the node is back and finds the acknowledged writes gone:
    the run fails with DurabilityLost, the database counted as empty."""
    name = "ycsb-e2e-kill"
    spec = {
        **YCSB_RUN,
        "workload": {
            **YCSB_RUN["workload"],
            "durationSeconds": 30,
            "ycsb": {"workload": "d", "recordCount": 2000, "batchSize": 50},
        },
        "faults": [{"action": "kill-node", "afterSeconds": 10, "allowDataLoss": True}],
        "cleanup": {"policy": "Always"},
    }
    kubectl("apply", "-n", namespace, "-f", "-", input=manifest(name, **spec))
    br = wait_phase(namespace, name, ("Succeeded", "Failed"), timeout=900)
    status = br["status"]
    print("faults:", json.dumps(status.get("faults")), "durability:", status.get("durability"))
    assert (status["phase"], status["reason"]) == ("Failed", "DurabilityLost"), status.get("message")
    assert [f["state"] for f in status["faults"]] == ["Recovered"]
    assert status["faults"][0]["recoverySeconds"] > 0
    durability = status["durability"]
    assert durability["databaseEmpty"] and durability["records"] == 0 and not durability["durable"]
    # every insert the pods saw acknowledged (workload D updates nothing; the load is not in their ledgers)
    assert durability["lost"] == durability["acknowledged"] > 0 and durability["ledgers"] == 2
    assert status["ycsb"]["operations"]["INSERT"]["count"] > 0  # both pods inserted before the kill
    # the runner image has the compiled loop (hack/images.sh builds it), and it lived through the kill
    assert status["ycsb"]["clientLoop"] == "pipelined, compiled"
    assert "the database came back without its YCSB load" in status["message"]
    kubectl("delete", "benchmarkrun", name, "-n", namespace, "--timeout=180s")


def test_a_ycsb_saturation_search_is_judged_on_operations_per_second(namespace, operator):
    """A YCSB sweep (the CRD refused them before): a saturation search over 2 and 4 clients on
    one load, each cell verified and recorded on its own, the search judged on ops/s."""
    name = "ycsb-search-e2e"
    spec = {
        **YCSB_RUN,
        "workload": {**YCSB_RUN["workload"], "durationSeconds": 8},
        "sweep": {"saturation": {"startClients": 2, "factor": 2, "maxClients": 4, "minGainPercent": 0}},
        "cleanup": {"policy": "Always"},
    }
    kubectl("apply", "-n", namespace, "-f", "-", input=manifest(name, **spec))
    br = wait_phase(namespace, name, ("Succeeded", "Failed"), timeout=600)
    status = br["status"]
    table = status["sweep"]
    assert status["phase"] == "Succeeded", (status.get("message"), table)
    assert [(c["clients"], c["state"]) for c in table["cells"]] == [(2, "Succeeded"), (4, "Succeeded")]
    assert all(c["opsPerSecond"] > 0 and "tpmC" not in c for c in table["cells"])
    [search] = table["saturation"]
    print("YCSB saturation search:", json.dumps(search))
    assert search["metric"] == "opsPerSecond" and search["stopped"] in ("MaxClients", "GainBelowThreshold")
    assert [s["throughput"] for s in search["steps"]] == [c["opsPerSecond"] for c in table["cells"]]
    best = max(search["steps"], key=lambda s: s["throughput"])
    assert search["saturationClients"] == best["clients"]
    configurations = [c["opsPerSecond"] for c in table["configurations"]]
    # n survives kubectl's YAML 1.1 (a bare `n:` in the CRD was `false:`, and n was pruned)
    assert [(c["n"], c["median"]) for c in configurations] == [(1, c["opsPerSecond"]) for c in table["cells"]]
    out = kubectl("get", "benchmarkresults", "-n", namespace, "-l", f"{RUN_LABEL}={name}", "-o", "json")
    results = {r["metadata"]["name"]: r["spec"] for r in json.loads(out.stdout)["items"]}
    for cell in table["cells"]:  # each cell's writes verified and recorded on its own
        assert results[cell["result"]]["opsPerSecond"] == cell["opsPerSecond"]
        assert results[cell["result"]]["durable"] is True
        assert results[cell["result"]]["runSpec"]["workload"]["clients"] == cell["clients"]
    kubectl("delete", "benchmarkrun", name, "-n", namespace, "--timeout=180s")


def test_ycsb_timeseries_a_on_voltdb(namespace, operator):
    """YCSB's TimeSeries A (workload tsa, scaled: 8 series keys x 8 tag combinations, 10 data
    points each on load) through the same lifecycle: the load Job, two runner pods writing their
    own series keys, the verifier finding every series key written holding a data point written to
    it. One record per series key, as YCSB's MongoDB binding keeps them (docs/workloads.md "YCSB TimeSeries")."""
    name = "ycsb-ts-e2e"
    spec = {
        **YCSB_RUN,
        "workload": {
            **YCSB_RUN["workload"],
            "durationSeconds": 10,
            "ycsb": {
                "workload": "tsa",
                "recordCount": 640,
                "batchSize": 25,
                "properties": {"fieldcount": "8", "tagcardinality": "1,2,2,2"},
            },
        },
        "cleanup": {"policy": "Always"},
    }
    kubectl("apply", "-n", namespace, "-f", "-", input=manifest(name, **spec))
    br = wait_phase(namespace, name, ("Succeeded", "Failed"), timeout=900)
    status = br["status"]
    print("ycsb:", json.dumps(status.get("ycsb", {}).get("operations")), "durability:", status.get("durability"))
    assert status["phase"] == "Succeeded", f"{status.get('reason')}: {status.get('message')}"
    ycsb = status["ycsb"]
    assert ycsb["workload"] == "tsa" and ycsb["runnerPods"] == 2 and ycsb["opsPerSecond"] > 0
    operations = ycsb["operations"]
    # tsworkloada: 90 % inserts of data points, 10 % reads
    assert operations["INSERT"]["count"] > operations["READ"]["count"] > 0, operations
    assert all(op["errors"] == 0 for op in operations.values()), operations
    durability = status["durability"]
    assert durability["durable"] and durability["lost"] == 0 and durability["ledgers"] == 2, durability
    assert durability["records"] == 8  # one record per series key
    kubectl("delete", "benchmarkrun", name, "-n", namespace, "--timeout=180s")
