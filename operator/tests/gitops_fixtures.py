"""BenchmarkRun objects as `kubectl get br X -o json` shows them, in every phase and outcome,
for the Argo CD health and kstatus tests (test_gitops_health.py).

Built with the operator's own state machine (`next_step`, through test_phases.Driver) from a
realistic run: runner documents and the verifier's report made with the runner's code. The
committed copies live in fixtures/gitops/; the e2e (test_benchmarkrun_e2e.py) adds the statuses
a real cluster produced under fixtures/gitops/e2e/ as `<moment>-<run>.json`.

    python operator/tests/gitops_fixtures.py      # rewrite fixtures/gitops/*.json
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

from crd_schema import defaulted_spec
from runner_docs import durability_report, pod_results
from test_phases import CHECK_OK, IPS, Driver
from tpcc_operator.stages.machine import JobState, World

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "gitops"
E2E_FIXTURES = FIXTURES / "e2e"

# What each committed fixture must read as: (Argo CD health, kstatus).
EXPECTED = {
    "created": ("Progressing", "Current"),  # no status yet: kstatus has nothing to go by
    "pending": ("Progressing", "InProgress"),
    "deploying": ("Progressing", "InProgress"),
    "loading": ("Progressing", "InProgress"),
    "running": ("Progressing", "InProgress"),
    "verifying": ("Progressing", "InProgress"),
    "succeeded": ("Healthy", "Current"),
    "succeeded-spec-edited": ("Progressing", "InProgress"),
    "failed-load": ("Degraded", "Failed"),
    "failed-run": ("Degraded", "Failed"),
    "failed-durability": ("Degraded", "Failed"),
    "failed-consistency": ("Degraded", "Failed"),
    "regressed": ("Degraded", "Failed"),
    # onRegression: Warn keeps Ready=True: Flux goes on, Argo CD shows it Degraded
    "regressed-warn": ("Degraded", "Current"),
}
# The phase and failure reason each fixture is built to have.
REASONS = {
    "created": (None, None),
    "pending": ("Pending", None),
    "deploying": ("Deploying", None),
    "loading": ("Loading", None),
    "running": ("Running", None),
    "verifying": ("Verifying", None),
    "succeeded": ("Succeeded", None),
    "succeeded-spec-edited": ("Succeeded", None),
    "regressed": ("Succeeded", None),
    "regressed-warn": ("Succeeded", None),
    "failed-load": ("Failed", "LoadFailed"),
    "failed-run": ("Failed", "RunFailed"),
    "failed-durability": ("Failed", "DurabilityLost"),
    "failed-consistency": ("Failed", "ConsistencyViolated"),
}
# What an e2e capture must read as, by the moment it was taken.
E2E_EXPECTED = {
    "running": ("Progressing", "InProgress"),
    "succeeded": ("Healthy", "Current"),
    "failed": ("Degraded", "Failed"),
}

SPEC = {
    "database": {"type": "voltdb", "deploy": {"replicas": 1}},
    "workload": {"warehouses": 1, "clients": 8, "durationSeconds": 60, "warmupSeconds": 10},
    "runners": {"parallelism": 2},
}


def as_object(d: Driver, generation: int | None = None) -> dict:
    obj = {
        "apiVersion": "bench.tpcc.dev/v1alpha1",
        "kind": "BenchmarkRun",
        "metadata": {
            "name": d.run.name,
            "namespace": d.run.namespace,
            "uid": d.run.uid,
            "generation": generation or d.run.generation,
        },
        "spec": d.spec,
    }
    if d.status:
        obj["status"] = d.status
    return copy.deepcopy(obj)


def build() -> dict[str, dict]:
    out: dict[str, dict] = {}
    d = Driver(defaulted_spec(SPEC))
    out["created"] = as_object(d)
    d.tick()
    out["pending"] = as_object(d)
    d.tick(), d.tick()
    out["deploying"] = as_object(d)
    d.tick(World(database_ready=1)), d.tick()
    out["loading"] = as_object(d)
    d.tick(World(load=JobState(exists=True, succeeded=True))), d.tick()
    d.tick(World(runner=JobState(exists=True), runners_ready=2))
    out["running"] = as_object(d)

    at_running = copy.deepcopy(d)
    docs = {0: pod_results(0, 2, 100, 0.01), 1: pod_results(1, 2, 80, 0.01)}
    d.tick(World(runner=JobState(exists=True, succeeded=True), results=docs))
    d.tick(World(database_ready=1, runner_pod_ips=IPS))
    out["verifying"] = as_object(d)
    at_verifying = copy.deepcopy(d)
    d.tick(World(verifier=JobState(exists=True, succeeded=True), durability_report=durability_report(90)))
    at_verified = copy.deepcopy(d)
    d.tick(World()), d.tick(World(checker=JobState(exists=True, succeeded=True), check_report=CHECK_OK))
    d.tick()
    out["succeeded"] = as_object(d)
    out["succeeded-spec-edited"] = as_object(d, generation=d.run.generation + 1)

    # helper F1's regression verdict, shaped as operator/README.md documents it (onRegression:
    # Fail: Ready=False, Stalled=True, reason Regressed; Warn: Ready=True, Regressed=True),
    # written on the run that succeeded
    message = "tpmC -25.0% (limit -10%) against the median of 2 previous results"
    for name, fail in (("regressed", True), ("regressed-warn", False)):
        obj = as_object(d)
        obj["status"].update(verdict="Regressed", regression={"message": message})
        done = obj["status"]["completionTime"]
        kept = [c for c in obj["status"]["conditions"] if c["type"] not in ("Ready", "Stalled")]
        kept += [
            {
                "type": "Ready",
                "status": "False" if fail else "True",
                "reason": "Regressed",
                "message": message,
                "observedGeneration": 2,
                "lastTransitionTime": done,
            },
            {
                "type": "Stalled",
                "status": "True" if fail else "False",
                "reason": "Regressed",
                "message": message,
                "observedGeneration": 2,
                "lastTransitionTime": done,
            },
        ]
        if not fail:
            kept.append(
                {
                    "type": "Regressed",
                    "status": "True",
                    "reason": "Regressed",
                    "message": message,
                    "observedGeneration": 2,
                    "lastTransitionTime": done,
                }
            )
        obj["status"]["conditions"] = kept
        out[name] = obj

    d = at_running
    d.tick(World(runner=JobState(exists=True, failed=True, message="tpcc run: error: connection refused")))
    out["failed-run"] = as_object(d)
    d = Driver(defaulted_spec(SPEC))
    for world in (None, None, None, World(database_ready=1), None):
        d.tick(world)
    d.tick(
        World(
            load=JobState(exists=True, failed=True, message="tpcc load: error: cannot reach 10.0.0.9:21212 within 30 s")
        )
    )
    out["failed-load"] = as_object(d)

    d = at_verifying
    d.tick(World(verifier=JobState(exists=True, succeeded=True), durability_report=durability_report(90, lost=3)))
    out["failed-durability"] = as_object(d)

    d = at_verified
    d.tick(World())
    violated = copy.deepcopy(CHECK_OK)
    violated["passed"] = False
    violated["conditions"][1].update(
        passed=False, violations=1, example="w=1 d=3: D_NEXT_O_ID-1 3001 != max(O_ID) 3002"
    )
    d.tick(World(checker=JobState(exists=True, failed=True), check_report=violated))
    out["failed-consistency"] = as_object(d)
    assert set(out) == set(EXPECTED), set(out) ^ set(EXPECTED)
    reasons = {
        name: (obj.get("status", {}).get("phase"), obj.get("status", {}).get("reason")) for name, obj in out.items()
    }
    assert reasons == REASONS, f"the state machine no longer builds these statuses: {reasons}"
    return out


def main() -> int:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    for name, obj in build().items():
        (FIXTURES / f"{name}.json").write_text(json.dumps(obj, indent=2, sort_keys=True) + "\n")
    print(f"wrote {len(EXPECTED)} fixtures to {FIXTURES}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
