"""One experiment of each study (crds/samples/papers), scaled as `hack/papers.sh --scaled` runs
it, on the shared cluster: all applied at once (most of a run is waiting), each followed to
Succeeded with a throughput figure from its status; what cannot run here passes the API
server's dry run and says why."""

from __future__ import annotations

import importlib.util
import json
import time

import pytest
from test_benchmarkrun_e2e import ROOT, get_run, kubectl

pytestmark = pytest.mark.k8s

_spec = importlib.util.spec_from_file_location("papers", ROOT / "hack" / "k8s" / "papers.py")
papers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(papers)


def test_one_experiment_of_each_study_runs_scaled(namespace, operator):
    t0 = time.time()
    running, skipped = {}, {}
    for where, manifest in papers.smallest_of_each_study():
        study = where.split("/")[3]
        assert papers.dry_run(manifest, namespace) is None, where
        reason = papers.not_runnable(manifest["spec"])
        if reason:
            skipped[study] = reason
            continue
        scaled, _ = papers.scaled(manifest)
        kubectl("apply", "-n", namespace, "-f", "-", input=json.dumps(scaled))
        running[manifest["metadata"]["name"]] = study
    # the sharded study's runnable one is its unsharded replica set (Fig. 10), scaled
    assert set(running.values()) == {"vldb2019", "sharded", "voltdb", "fdb-ycsb"} and not skipped
    outcomes, deadline = {}, time.time() + 1200
    while len(outcomes) < len(running) and time.time() < deadline:
        for name in set(running) - set(outcomes):
            status = (get_run(namespace, name) or {}).get("status") or {}
            if status.get("phase") in ("Succeeded", "Failed"):
                outcomes[name] = status
        time.sleep(5)
    print(f"papers e2e: {len(outcomes)} of {len(running)} finished in {time.time() - t0:.0f} s")
    for name, study in running.items():
        status = outcomes.get(name)
        assert status, f"{study}/{name} not finished after 1200 s: {get_run(namespace, name)['status']}"
        assert status["phase"] == "Succeeded", f"{study}/{name}: {status.get('reason')}: {status.get('message')}"
        figure = papers.ours(status)
        assert ("tpmC" in figure or "ops/s" in figure) and "no result" not in figure, figure
        print(f"papers e2e: {study}/{name}: {figure}")
    kubectl("delete", "benchmarkrun", *running, "-n", namespace, "--timeout=180s")
