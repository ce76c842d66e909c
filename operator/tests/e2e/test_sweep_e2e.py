"""End to end on a real cluster: a 2x2 sweep (warehouses 2, 1 x clients 2, 4) on one deployed
VoltDB. Four cells, each a full run with its own runner Job, durability verification and
consistency check; the database is loaded twice (once per warehouse count, the second load
replacing the first), and the check of each cell counts the Deliveries of every cell since its
load (condition 11 fails otherwise). Four BenchmarkResults, one per cell.

Needs what test_benchmarkrun_e2e needs. About deploy + 2 loads + 4 x 60 s of cluster time.

And a sweep.matrix: 2 warehouses x 2 clients x remotePercent.newOrderLines 0 and 50, two cells on
one deployment and one load, each runner run with its own value (its results document says so).

And a sweep over the database's shape: database.deploy.replicas 1 and 2, one short cell each on a
deployment of its own (the first retired, its pods gone, before the second is installed).
"""

from __future__ import annotations

import base64
import gzip
import json
import time

import pytest
from test_benchmarkrun_e2e import ROOT, get_run, helm_releases, kubectl, manifest, wait_for, wait_phase

pytestmark = pytest.mark.k8s

# The sweeps but the saturation search run below saturation: their cells need transactions, not
# the database's limit, and on the CI's two cores a saturated cell takes the other tests' CPU.
SWEEP = {
    "database": {"type": "voltdb"},
    "workload": {"durationSeconds": 10, "warmupSeconds": 5, "targetTransactionsPerSecond": 200},
    "runners": {"parallelism": 2, "startDelaySeconds": 3},
    "sweep": {"warehouses": [2, 1], "clients": [2, 4]},
    "cleanup": {"policy": "Always"},
}


def event_reasons(namespace: str, name: str) -> list[str]:
    """The reasons of every Event about the BenchmarkRun `name`."""
    out = kubectl(
        "get",
        "events",
        "-n",
        namespace,
        "--field-selector",
        f"involvedObject.name={name}",
        "-o",
        "jsonpath={.items[*].reason}",
    )
    return out.stdout.split()


def test_a_two_by_two_sweep_gives_four_results(namespace, operator):
    kubectl("apply", "-f", str(ROOT / "crds" / "benchmarkresult.yaml"))
    name = "sweep-e2e"
    kubectl("apply", "-n", namespace, "-f", "-", input=manifest(name, **SWEEP))
    br = wait_phase(namespace, name, ("Succeeded", "Failed"), 900)
    status = br["status"]
    table = status["sweep"]
    assert status["phase"] == "Succeeded", (status.get("message"), table)
    assert (table["total"], table["succeeded"], table["failed"], table["progress"]) == (4, 4, 0, "4/4")
    assert [(c["warehouses"], c["clients"]) for c in table["cells"]] == [(2, 2), (2, 4), (1, 2), (1, 4)]
    assert all(c["state"] == "Succeeded" and c["verdict"] == "Pass" and c["tpmC"] > 0 for c in table["cells"])
    assert status["verdict"] == "Pass" and "sweep of 4 cells: 4 Pass" in status["regression"]["message"]

    out = kubectl("get", "benchmarkresults", "-n", namespace, "-l", f"bench.tpcc.dev/run={name}", "-o", "json")
    results = {r["metadata"]["name"]: r["spec"] for r in json.loads(out.stdout)["items"]}
    assert sorted(results) == sorted(c["result"] for c in table["cells"])
    for cell in table["cells"]:
        result = results[cell["result"]]
        workload = result["runSpec"]["workload"]
        assert (workload["warehouses"], workload["clients"]) == (cell["warehouses"], cell["clients"])
        # every cell verified on its own: no acknowledged order lost, all 12 conditions hold
        assert result["durable"] is True and result["consistent"] is True, result
        assert result["tpmC"] == pytest.approx(cell["tpmC"])
    # one database for the whole sweep, which cleanup Always removes once the sweep is judged
    wait_for("the sweep's database uninstalled", lambda: name + "-g1" not in helm_releases(namespace), 120)
    events = event_reasons(namespace, name)
    assert events.count("LoadJobCreated") == 2 and events.count("DatabaseInstalled") == 1
    assert events.count("CellStarted") == 3 and events.count("CellMeasured") == 4
    kubectl("delete", "benchmarkrun", name, "-n", namespace, "--timeout=120s")
    assert get_run(namespace, name) is None


MATRIX_SWEEP = {
    "database": {"type": "voltdb"},
    "workload": {"warehouses": 2, "durationSeconds": 10, "warmupSeconds": 5, "targetTransactionsPerSecond": 100},
    "runners": {"startDelaySeconds": 3},
    "sweep": {"clients": [2], "matrix": [{"field": "workload.remotePercent.newOrderLines", "values": ["0", "50"]}]},
    "cleanup": {"policy": "Always"},
}


def _full_results(namespace: str, result: str) -> dict:
    """The results ConfigMap of a BenchmarkResult: results.json, or its gzipped form."""
    cm = json.loads(kubectl("get", "configmap", result, "-n", namespace, "-o", "json").stdout)
    if "results.json" in (cm.get("data") or {}):
        return json.loads(cm["data"]["results.json"])
    return json.loads(gzip.decompress(base64.b64decode(cm["binaryData"]["results.json.gz"])))


def test_a_matrix_sweep_runs_each_value_on_one_load(namespace, operator):
    kubectl("apply", "-f", str(ROOT / "crds" / "benchmarkresult.yaml"))
    name = "matrix-e2e"
    kubectl("apply", "-n", namespace, "-f", "-", input=manifest(name, **MATRIX_SWEEP))
    br = wait_phase(namespace, name, ("Succeeded", "Failed"), 600)
    status, field = br["status"], "workload.remotePercent.newOrderLines"
    table = status["sweep"]
    assert status["phase"] == "Succeeded", (status.get("message"), table)
    assert table["plan"] == {"cells": 2, "loads": 1, "deployments": 1, "estimatedSeconds": 2 * (3 + 5 + 10)}
    assert [c["matrix"] for c in table["cells"]] == [{field: "0"}, {field: "50"}]
    assert all(
        c["state"] == "Succeeded" and c["tpmC"] > 0 and (c["warehouses"], c["clients"]) == (2, 2)
        for c in table["cells"]
    )
    assert [c["matrix"] for c in table["configurations"]] == [{field: "0"}, {field: "50"}]

    out = kubectl("get", "benchmarkresults", "-n", namespace, "-l", f"bench.tpcc.dev/run={name}", "-o", "json")
    results = {r["metadata"]["name"]: r["spec"] for r in json.loads(out.stdout)["items"]}
    assert sorted(results) == sorted(c["result"] for c in table["cells"])
    for cell, percent in zip(table["cells"], (0, 50)):
        result = results[cell["result"]]
        assert result["matrix"] == cell["matrix"] and result["durable"] is True and result["consistent"] is True
        assert result["runSpec"]["workload"]["remotePercent"] == {"newOrderLines": percent}
        # what the runner itself ran with, from its results document
        options = _full_results(namespace, cell["result"])["results"]["options"]
        assert options["remote_percent"]["new_order_line"] == percent, options
    assert len({r["comparisonHash"] for r in results.values()}) == 2  # each value its own history
    events = event_reasons(namespace, name)
    assert events.count("LoadJobCreated") == 1 and events.count("DatabaseInstalled") == 1
    assert events.count("CellStarted") == 1 and events.count("CellMeasured") == 2
    wait_for("the sweep's database uninstalled", lambda: name + "-g1" not in helm_releases(namespace), 120)
    kubectl("delete", "benchmarkrun", name, "-n", namespace, "--timeout=120s")


# A saturation search on a database whose throughput a CPU limit caps: clients 1, 2, 4, 8, 16,
# ... until a doubling gains less than 20 %. Half a core for VoltDB and no think times: the
# plateau comes within the ladder, but where depends on how fast the runner is (CI stop 28: +5 %
# at 8 -> 16; stop 37: +22.7 % at 8 -> 16, +2.5 % at 16 -> 32), so the ladder reaches 64: the
# search stops on the plateau and skips at least the last count.
SATURATION = {
    "database": {
        "type": "voltdb",
        "deploy": {
            "values": {
                "resources": {"requests": {"cpu": "250m", "memory": "1Gi"}, "limits": {"cpu": "500m", "memory": "2Gi"}}
            }
        },
    },
    "workload": {"warehouses": 1, "durationSeconds": 10, "warmupSeconds": 3},
    "runners": {"startDelaySeconds": 3},
    "verify": {"enabled": False},  # the search is what this measures; the other sweeps check
    "sweep": {"saturation": {"startClients": 1, "factor": 2, "maxClients": 64, "minGainPercent": 20}},
    "cleanup": {"policy": "Always"},
}


def test_a_saturation_search_stops_at_the_plateau_of_a_cpu_capped_database(namespace, operator):
    kubectl("apply", "-f", str(ROOT / "crds" / "benchmarkresult.yaml"))
    name = "saturation-e2e"
    kubectl("apply", "-n", namespace, "-f", "-", input=manifest(name, **SATURATION))
    br = wait_phase(namespace, name, ("Succeeded", "Failed"), 600)
    status = br["status"]
    table = status["sweep"]
    assert status["phase"] == "Succeeded", (status.get("message"), table)
    [search] = table["saturation"]
    steps = search["steps"]
    print("saturation search:", json.dumps(search))  # what it measured, for the report
    # it stopped because the gain fell, before maxClients: the cap is a plateau
    assert search["stopped"] == "GainBelowThreshold", search
    assert steps[-1]["clients"] < 64 and steps[-1]["gainPercent"] < 20
    assert all(s["gainPercent"] >= 20 for s in steps[1:-1])  # every step before grew enough
    assert [s["clients"] for s in steps] == [1, 2, 4, 8, 16, 32, 64][: len(steps)]
    ran = [c for c in table["cells"] if c["state"] != "Skipped"]
    assert [c["state"] for c in ran] == ["Succeeded"] * len(steps)
    assert [c["tpmC"] for c in ran] == pytest.approx([s["throughput"] for s in steps])
    best = max(steps, key=lambda s: s["throughput"])
    assert (search["saturationClients"], search["throughput"]) == (best["clients"], best["throughput"])
    skipped = table["cells"][len(steps) :]
    assert skipped and all(c["state"] == "Skipped" and "result" not in c for c in skipped)
    assert f"saturate at {best['clients']} clients" in status["regression"]["message"]

    out = kubectl("get", "benchmarkresults", "-n", namespace, "-l", f"bench.tpcc.dev/run={name}", "-o", "json")
    results = {r["metadata"]["name"]: r["spec"] for r in json.loads(out.stdout)["items"]}
    assert sorted(results) == sorted(c["result"] for c in ran)  # none for the cells never run
    events = event_reasons(namespace, name)
    assert events.count("LoadJobCreated") == 1 and events.count("SaturationFound") == 1
    wait_for("the search's database uninstalled", lambda: name + "-g1" not in helm_releases(namespace), 120)
    kubectl("delete", "benchmarkrun", name, "-n", namespace, "--timeout=120s")


# sweep.matrix over the database's shape: VoltDB on 1 host, then on 2 (kSafety 0), one short
# cell each. Two deployments, one after the other: the second retires the first (its pods gone)
# and installs a release of its own, then loads it anew.
SHAPE_SWEEP = {
    "database": {"type": "voltdb"},
    "workload": {"warehouses": 1, "durationSeconds": 10, "warmupSeconds": 3, "targetTransactionsPerSecond": 100},
    "runners": {"startDelaySeconds": 3},
    "sweep": {"clients": [2], "matrix": [{"field": "database.deploy.replicas", "values": ["1", "2"]}]},
    "cleanup": {"policy": "Always"},
}


def _database_pods_by_cell(namespace: str, name: str, timeout: float) -> tuple[dict, dict[int, set[str]]]:
    """Follows the sweep to its end, noting the Ready database pods seen while each cell ran."""
    seen: dict[int, set[str]] = {}
    selector = f"bench.tpcc.dev/run={name},bench.tpcc.dev/role=database"
    deadline = time.time() + timeout
    while time.time() < deadline:
        br = get_run(namespace, name) or {}
        status = br.get("status") or {}
        if status.get("phase") in ("Succeeded", "Failed"):
            return status, seen
        if status.get("phase") == "Running" and "sweep" in status:
            pods = json.loads(kubectl("get", "pods", "-n", namespace, "-l", selector, "-o", "json").stdout)["items"]
            ready = {
                p["metadata"]["name"]
                for p in pods
                if any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions") or [])
            }
            seen.setdefault(status["sweep"]["current"], set()).update(ready)
        time.sleep(2)
    raise AssertionError(f"{name} not finished after {timeout:.0f}s")


def test_a_sweep_over_replicas_deploys_each_shape_once(namespace, operator):
    kubectl("apply", "-f", str(ROOT / "crds" / "benchmarkresult.yaml"))
    name = "shape-e2e"
    t0 = time.time()
    kubectl("apply", "-n", namespace, "-f", "-", input=manifest(name, **SHAPE_SWEEP))
    status, seen = _database_pods_by_cell(namespace, name, 420)
    table = status["sweep"]
    started = [c.get("startTime") for c in table["cells"]]
    print(f"shape e2e: 2 deployments, 2 cells in {time.time() - t0:.0f} s; cells started {started}")
    assert status["phase"] == "Succeeded", (status.get("message"), table)
    assert table["plan"] == {"cells": 2, "loads": 2, "deployments": 2, "estimatedSeconds": 2 * (3 + 3 + 10) + 90}
    assert [(c["deployment"], c["state"]) for c in table["cells"]] == [(0, "Succeeded"), (1, "Succeeded")]
    assert all(c["tpmC"] > 0 for c in table["cells"]), table["cells"]
    # the pods each cell ran on: the first deployment's one host, then the second's two
    assert seen == {0: {f"{name}-g1-0"}, 1: {f"{name}-g1-d1-0", f"{name}-g1-d1-1"}}, seen
    out = kubectl("get", "benchmarkresults", "-n", namespace, "-l", f"bench.tpcc.dev/run={name}", "-o", "json")
    results = {r["metadata"]["name"]: r["spec"] for r in json.loads(out.stdout)["items"]}
    for cell, (replicas, release) in zip(table["cells"], ((1, f"{name}-g1"), (2, f"{name}-g1-d1"))):
        result = results[cell["result"]]
        # each cell verified on its own database: no acknowledged order lost, all 12 conditions hold
        assert result["durable"] is True and result["consistent"] is True, result
        assert result["runSpec"]["database"]["deploy"]["replicas"] == replicas
        assert result["database"]["release"] == release
    events = event_reasons(namespace, name)
    assert events.count("DatabaseInstalled") == 2 and events.count("DeploymentRetired") == 1
    assert events.count("LoadJobCreated") == 2
    # cleanup Always removes the last deployment; the first was retired before the second came
    wait_for(
        "the sweep's databases uninstalled",
        lambda: not [r for r in helm_releases(namespace) if r.startswith(name)],
        120,
    )
    kubectl("delete", "benchmarkrun", name, "-n", namespace, "--timeout=120s")
