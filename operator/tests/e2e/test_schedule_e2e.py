"""End to end on a real cluster: a BenchmarkSchedule every minute makes BenchmarkRuns one after
the other (Forbid), keeps one succeeded run (the older one is deleted, its BenchmarkResult
stays), says Ready; a schedule the operator cannot parse turns Ready=False/Stalled; the API
server refuses a malformed one; deleting the schedule deletes its runs.

Needs what test_benchmarkrun_e2e needs (cluster, images local/tpcc-runner:dev and
local/voltdb:10.1.1 on the node). About two runs of cluster time (deploy + load + 25 s each).
"""

from __future__ import annotations

import json
import re

import pytest
from test_benchmarkrun_e2e import get_run, kubectl, wait_for

pytestmark = pytest.mark.k8s

NAME = "sched-e2e"
TEMPLATE = {
    "metadata": {"labels": {"team": "e2e"}},
    "spec": {
        "database": {"type": "voltdb"},
        # below saturation: the schedule's runs need transactions, not the database's limit
        "workload": {
            "warehouses": 1,
            "clients": 2,
            "durationSeconds": 20,
            "warmupSeconds": 5,
            "targetTransactionsPerSecond": 100,
        },
        "runners": {"parallelism": 1},
        "cleanup": {"policy": "Always"},
    },
}


def schedule_manifest(name: str, **spec) -> str:
    return json.dumps(
        {"apiVersion": "bench.tpcc.dev/v1alpha1", "kind": "BenchmarkSchedule", "metadata": {"name": name}, "spec": spec}
    )


def get_schedule(ns: str, name: str) -> dict | None:
    out = kubectl("get", "benchmarkschedule", name, "-n", ns, "-o", "json", check=False)
    return json.loads(out.stdout) if out.returncode == 0 else None


def runs_of(ns: str, name: str) -> list[dict]:
    out = kubectl("get", "benchmarkruns", "-n", ns, "-l", f"bench.tpcc.dev/schedule={name}", "-o", "json")
    return sorted(json.loads(out.stdout)["items"], key=lambda r: r["metadata"]["name"])


def condition(obj: dict, type_: str) -> dict:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == type_), {})


def ready_for_generation(ns: str, name: str, want: str) -> dict | None:
    s = get_schedule(ns, name)
    if (
        s
        and s.get("status", {}).get("observedGeneration") == s["metadata"]["generation"]
        and condition(s, "Ready").get("status") == want
    ):
        return s
    return None


def test_schedule_every_minute_makes_runs_and_prunes_history(namespace, operator):
    # the session's crd fixture applied crds/ and waited for BenchmarkRun only
    wait_for(
        "BenchmarkSchedule served",
        lambda: kubectl("get", "benchmarkschedules", "-n", namespace, check=False).returncode == 0,
        60,
    )
    kubectl(
        "apply",
        "-n",
        namespace,
        "-f",
        "-",
        input=schedule_manifest(
            NAME, schedule="*/1 * * * *", successfulRunsHistoryLimit=1, failedRunsHistoryLimit=1, runTemplate=TEMPLATE
        ),
    )
    sched = wait_for("schedule Ready", lambda: ready_for_generation(namespace, NAME, "True"), 60)
    assert condition(sched, "Ready")["message"].startswith("next run at ")
    assert condition(sched, "Stalled")["status"] == "False"

    first = wait_for("the first run", lambda: runs_of(namespace, NAME), 90)[0]
    meta = first["metadata"]
    assert re.fullmatch(rf"{NAME}-\d{{8}}", meta["name"]), meta["name"]
    assert meta["labels"]["team"] == "e2e" and "bench.tpcc.dev/scheduled-time" in meta["annotations"]
    owner = meta["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == (
        "BenchmarkSchedule",
        NAME,
        sched["metadata"]["uid"],
        True,
    )
    assert first["spec"]["workload"]["durationSeconds"] == 20

    # Forbid: while the first runs, every later minute waits; no second run exists meanwhile
    seen: dict[str, str] = {}  # run name -> last phase seen

    def pruned_after_two_successes():
        runs = runs_of(namespace, NAME)
        for r in runs:
            status = r.get("status") or {}
            seen[r["metadata"]["name"]] = status.get("phase") or ""
            assert status.get("phase") != "Failed", (
                f"{r['metadata']['name']} failed: {status.get('reason')}: {status.get('message')}"
            )
        unfinished = [r for r in runs if (r.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
        assert len(unfinished) <= 1, f"Forbid let runs overlap: {[r['metadata']['name'] for r in unfinished]}"
        present = {r["metadata"]["name"] for r in runs}
        gone = [n for n, phase in seen.items() if phase == "Succeeded" and n not in present]
        succeeded = [r for r in runs if (r.get("status") or {}).get("phase") == "Succeeded"]
        return (gone, succeeded) if gone and len(succeeded) == 1 else None

    gone, kept = wait_for("two runs succeeded and the older one pruned", pruned_after_two_successes, 900, every=5)
    assert gone == [first["metadata"]["name"]] and kept[0]["metadata"]["name"] > gone[0]
    # the pruned run's BenchmarkResult outlives it
    results = json.loads(
        kubectl("get", "benchmarkresults", "-n", namespace, "-l", f"bench.tpcc.dev/run={gone[0]}", "-o", "json").stdout
    )["items"]
    assert len(results) == 1 and results[0]["spec"]["phase"] == "Succeeded"
    status = get_schedule(namespace, NAME)["status"]
    assert status["lastScheduleTime"] and status["lastSuccessfulTime"]
    assert condition(get_schedule(namespace, NAME), "Ready")["status"] == "True"

    # a schedule the schema lets through but that cannot be parsed: Ready=False, Stalled=True
    kubectl(
        "patch",
        "benchmarkschedule",
        NAME,
        "-n",
        namespace,
        "--type",
        "merge",
        "-p",
        '{"spec": {"schedule": "61 * * * *"}}',
    )
    bad = wait_for("schedule not Ready", lambda: ready_for_generation(namespace, NAME, "False"), 60)
    assert condition(bad, "Ready")["reason"] == "InvalidSchedule" and "minute" in condition(bad, "Ready")["message"]
    assert condition(bad, "Stalled")["status"] == "True"

    # deleting the schedule deletes its runs (owner references; each run's finalizer cleans up)
    kubectl("delete", "benchmarkschedule", NAME, "-n", namespace, "--wait=false")
    wait_for(
        "the schedule's runs deleted",
        lambda: not runs_of(namespace, NAME) and get_schedule(namespace, NAME) is None,
        240,
        every=5,
    )
    assert get_run(namespace, kept[0]["metadata"]["name"]) is None


def test_the_api_server_refuses_a_malformed_schedule_or_template(namespace, crd):
    wait_for(
        "BenchmarkSchedule served",
        lambda: kubectl("get", "benchmarkschedules", "-n", namespace, check=False).returncode == 0,
        60,
    )
    for spec, field in (
        (dict(schedule="@every 1m", runTemplate=TEMPLATE), "spec.schedule"),
        (
            dict(schedule="0 3 * * *", runTemplate={"spec": {"database": {"type": "oracle"}}}),
            "spec.runTemplate.spec.database.type",
        ),
    ):
        out = kubectl(
            "apply",
            "--dry-run=server",
            "-n",
            namespace,
            "-f",
            "-",
            input=schedule_manifest("refused", **spec),
            check=False,
        )
        assert out.returncode != 0 and field in out.stderr, out.stderr
