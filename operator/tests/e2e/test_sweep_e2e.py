"""End to end on a real cluster: a 2x2 sweep (warehouses 2, 1 x clients 2, 4) on one deployed
VoltDB. Four cells, each a full run with its own runner Job, durability verification and
consistency check; the database is loaded twice (once per warehouse count, the second load
replacing the first), and the check of each cell counts the Deliveries of every cell since its
load (condition 11 fails otherwise). Four BenchmarkResults, one per cell.

Needs what test_benchmarkrun_e2e needs. About deploy + 2 loads + 4 x 60 s of cluster time.

And a sweep.matrix: 2 warehouses x 2 clients x remotePercent.newOrderLines 0 and 50, two cells on
one deployment and one load, each runner run with its own value (its results document says so).
"""
from __future__ import annotations

import base64
import gzip
import json

import pytest
from test_benchmarkrun_e2e import ROOT, get_run, helm_releases, kubectl, manifest, wait_for, wait_phase

pytestmark = pytest.mark.k8s

SWEEP = {"database": {"type": "voltdb"},
         "workload": {"durationSeconds": 10, "warmupSeconds": 5},
         "runners": {"parallelism": 2, "startDelaySeconds": 3},
         "sweep": {"warehouses": [2, 1], "clients": [2, 4]},
         "cleanup": {"policy": "Always"}}


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
    events = kubectl("get", "events", "-n", namespace, "--field-selector", f"involvedObject.name={name}",
                     "-o", "jsonpath={.items[*].reason}").stdout.split()
    assert events.count("LoadJobCreated") == 2 and events.count("DatabaseInstalled") == 1
    assert events.count("CellStarted") == 3 and events.count("CellMeasured") == 4
    kubectl("delete", "benchmarkrun", name, "-n", namespace, "--timeout=120s")
    assert get_run(namespace, name) is None


MATRIX_SWEEP = {"database": {"type": "voltdb"},
                "workload": {"warehouses": 2, "durationSeconds": 10, "warmupSeconds": 5},
                "runners": {"startDelaySeconds": 3},
                "sweep": {"clients": [2], "matrix": [{"field": "workload.remotePercent.newOrderLines",
                                                      "values": ["0", "50"]}]},
                "cleanup": {"policy": "Always"}}


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
    assert all(c["state"] == "Succeeded" and c["tpmC"] > 0 and (c["warehouses"], c["clients"]) == (2, 2)
               for c in table["cells"])
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
    events = kubectl("get", "events", "-n", namespace, "--field-selector", f"involvedObject.name={name}",
                     "-o", "jsonpath={.items[*].reason}").stdout.split()
    assert events.count("LoadJobCreated") == 1 and events.count("DatabaseInstalled") == 1
    assert events.count("CellStarted") == 1 and events.count("CellMeasured") == 2
    wait_for("the sweep's database uninstalled", lambda: name + "-g1" not in helm_releases(namespace), 120)
    kubectl("delete", "benchmarkrun", name, "-n", namespace, "--timeout=120s")
