"""End to end on a real cluster: the run history and the regression verdict. One spec is run three
times by changing spec.runToken; the third run's VoltDB is slowed (one site per host and a CPU
limit, through deploy.values: the database's configuration is not part of what is compared).
Expected verdicts: Inconclusive (no history yet), Pass (against the first), Regressed (against
the median of both) with Ready=False, Stalled=True, reason Regressed. Each run leaves an immutable
BenchmarkResult with its ConfigMap; they survive the BenchmarkRun's deletion.

Needs what test_benchmarkrun_e2e needs (cluster, images local/tpcc-runner:dev and
local/voltdb:10.1.1 on the node). About 3 x (deploy + load + 30 s) of cluster time.
"""

from __future__ import annotations

import json

import pytest
from test_benchmarkrun_e2e import ROOT, get_run, kubectl, manifest, wait_for

pytestmark = pytest.mark.k8s

RUN = {
    "database": {"type": "voltdb"},
    "workload": {"warehouses": 1, "clients": 4, "durationSeconds": 20, "warmupSeconds": 10},
    "runners": {"parallelism": 1},
    # two equal 20 s runs on a shared 2-core node have measured 53,151 and 82,734 tpmC (-36 %):
    # the limit sits well above that noise; the slowed database (100m CPU) loses far more
    "regression": {
        "baseline": {"previous": 2},
        "maxTpmCDropPercent": 60,
        "maxP99IncreasePercent": {"NEW_ORDER": 300},
        # the third run has two earlier results: its change points are analysed
        # in an analyzer Job (tpcc changepoints in the runner image)
        "changePoints": {"minHistory": 2},
    },
    "cleanup": {"policy": "Always"},
    "runToken": "1",
}
# A tenth of a core, one site: alone on the local cluster (2026-11-29) it ran 2,325 tpmC against
# 134,265 and 135,924 (-98 %; its run 150 s against 73). 200m ran 7,566 (-94 %), but a CI's
# baseline, run beside the other share's four paper runs, came within 60 % of it and the run passed.
SLOW_VALUES = {"sitesPerHost": 1, "resources": {"requests": {"cpu": "50m"}, "limits": {"cpu": "100m"}}}


def judged(ns: str, name: str, generation: int) -> dict:
    def verdict():
        br = get_run(ns, name)
        status = (br or {}).get("status", {})
        if status.get("runGeneration") == generation and status.get("verdict"):
            return br
        return None

    # not wait_phase: right after a runToken patch the status still shows the last run's phase
    return wait_for(f"{name} generation {generation} judged", verdict, 900)


def condition(br: dict, type_: str) -> dict:
    return next(c for c in br["status"]["conditions"] if c["type"] == type_)


def results_of(ns: str, name: str) -> list[dict]:
    out = kubectl("get", "benchmarkresults", "-n", ns, "-l", f"bench.tpcc.dev/run={name}", "-o", "json")
    return sorted(json.loads(out.stdout)["items"], key=lambda r: r["spec"]["runGeneration"])


def test_three_runs_pass_then_regress(namespace, operator):
    kubectl("apply", "-f", str(ROOT / "crds" / "benchmarkresult.yaml"))
    name = "regression-e2e"
    kubectl("apply", "-n", namespace, "-f", "-", input=manifest(name, **RUN))
    first = judged(namespace, name, get_run(namespace, name)["metadata"]["generation"])
    assert first["status"]["phase"] == "Succeeded", first["status"].get("message")
    assert first["status"]["verdict"] == "Inconclusive"
    assert condition(first, "Ready")["status"] == "True"

    kubectl("patch", "benchmarkrun", name, "-n", namespace, "--type", "merge", "-p", '{"spec": {"runToken": "2"}}')
    second = judged(namespace, name, first["metadata"]["generation"] + 1)
    # equal runs: within the limits (a warmer second run may come out Improved, never Regressed)
    assert second["status"]["verdict"] in ("Pass", "Improved"), second["status"]["regression"]["message"]
    assert second["status"]["regression"]["baseline"]["results"] == [first["status"]["resultName"]]
    assert condition(second, "Ready")["status"] == "True"

    patch = {"spec": {"runToken": "3", "database": {"deploy": {"values": SLOW_VALUES}}}}
    kubectl("patch", "benchmarkrun", name, "-n", namespace, "--type", "merge", "-p", json.dumps(patch))
    third = judged(namespace, name, second["metadata"]["generation"] + 1)
    status = third["status"]
    assert status["phase"] == "Succeeded" and status["verdict"] == "Regressed", status["regression"]["message"]
    assert sorted(status["regression"]["baseline"]["results"]) == sorted(
        [first["status"]["resultName"], second["status"]["resultName"]]
    )
    ready, stalled = condition(third, "Ready"), condition(third, "Stalled")
    assert (ready["status"], stalled["status"], stalled["reason"]) == ("False", "True", "Regressed")
    tpmc = next(m for m in status["regression"]["metrics"] if m["name"] == "tpmC")
    print(
        "tpmC of the three runs:",
        [r["status"].get("results", {}).get("tpmC") for r in (first, second, third)],
        "third against its baseline:",
        tpmc,
    )
    assert tpmc["deltaPercent"] < -60 and tpmc["outcome"] == "Regressed"
    # the analyzer Job ran and its changepoints.json was read (too little history before)
    assert "1 earlier comparable result(s), 2 needed" in second["status"]["regression"]["message"]
    message = status["regression"]["message"]
    assert "not analysed" not in message and "change point" in message, message
    assert isinstance(status["regression"]["changePoints"], list)

    # the history: three immutable results, each with its full results in a ConfigMap it owns
    history = results_of(namespace, name)
    assert [r["spec"]["verdict"] for r in history] == [
        first["status"]["verdict"],
        second["status"]["verdict"],
        "Regressed",
    ]
    for r in history:
        cm = json.loads(kubectl("get", "configmap", r["metadata"]["name"], "-n", namespace, "-o", "json").stdout)
        assert cm["metadata"]["ownerReferences"][0]["uid"] == r["metadata"]["uid"]
        assert json.loads(cm["data"]["results.json"])["results"]["tpmC"] == r["spec"]["tpmC"]
    edit = kubectl(
        "patch",
        "benchmarkresult",
        history[0]["metadata"]["name"],
        "-n",
        namespace,
        "--type",
        "merge",
        "-p",
        '{"spec": {"verdict": "Pass"}}',
        check=False,
    )
    assert edit.returncode != 0 and "a BenchmarkResult is immutable" in edit.stderr

    # results outlive the run by default
    kubectl("delete", "benchmarkrun", name, "-n", namespace, "--wait=true", "--timeout=180s")
    assert len(results_of(namespace, name)) == 3
