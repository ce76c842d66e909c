#!/usr/bin/env python3
"""The operator's resident memory with N BenchmarkRuns in the cluster (goal: <= 150 MB with 10).

Creates N runs in a fresh namespace (an unreachable external database and a long connect
timeout, so every run stays in Loading and is ticked all the time: the operator's busiest
steady state), samples the operator's process_resident_memory_bytes from its /metrics through
the API server's service proxy, prints what it measured, then deletes the runs.

  eval "$(hack/local-k8s.sh env)"
  operator/bench/rss.py --operator-namespace tpcc-system --runs 10 --seconds 120
"""
from __future__ import annotations

import argparse
import json
import secrets
import subprocess
import sys
import time

GOAL_MB = 150.0


def kubectl(*args: str, input: str | None = None) -> str:
    out = subprocess.run(["kubectl", *args], input=input, capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        sys.exit(f"rss.py: error: kubectl {' '.join(args)}: {out.stderr.strip()}")
    return out.stdout


def operator_rss_bytes(namespace: str) -> float:
    service = kubectl("get", "service", "-n", namespace, "-l", "app.kubernetes.io/name=tpcc-operator",
                      "-o", "jsonpath={.items[0].metadata.name}")
    if not service:
        sys.exit(f"rss.py: error: no tpcc-operator Service in namespace {namespace}")
    text = kubectl("get", "--raw", f"/api/v1/namespaces/{namespace}/services/{service}:metrics/proxy/metrics")
    for line in text.splitlines():
        if line.startswith("process_resident_memory_bytes "):
            return float(line.split()[1])
    sys.exit("rss.py: error: the operator exports no process_resident_memory_bytes")


def run_manifest(name: str) -> str:
    return json.dumps({"apiVersion": "bench.tpcc.dev/v1alpha1", "kind": "BenchmarkRun",
                       "metadata": {"name": name},
                       "spec": {"database": {"type": "voltdb", "external": {"endpoints": ["192.0.2.1:21212"]}},
                                "workload": {"connectTimeoutSeconds": 3600},
                                "runners": {"imagePullPolicy": "IfNotPresent"},
                                "cleanup": {"policy": "Always"}}})


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--operator-namespace", default="tpcc-system")
    p.add_argument("--namespace", help="where to create the runs (default: a new one; it must be watched)")
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--seconds", type=float, default=120, help="how long to sample after creating the runs")
    p.add_argument("--every", type=float, default=5)
    a = p.parse_args()
    if a.runs < 0 or a.seconds <= 0 or a.every <= 0:
        p.error("--runs must be >= 0, --seconds and --every > 0")

    before = operator_rss_bytes(a.operator_namespace)
    ns = a.namespace or f"tpcc-rss-{secrets.token_hex(3)}"
    if not a.namespace:
        kubectl("create", "namespace", ns)
    names = [f"rss-{i}" for i in range(a.runs)]
    try:
        for name in names:
            kubectl("apply", "-n", ns, "-f", "-", input=run_manifest(name))
        samples = []
        deadline = time.time() + a.seconds
        while time.time() < deadline:
            samples.append(operator_rss_bytes(a.operator_namespace))
            time.sleep(a.every)
        phases = kubectl("get", "br", "-n", ns, "-o", "jsonpath={.items[*].status.phase}").split()
    finally:
        if names:
            subprocess.run(["kubectl", "delete", "br", "-n", ns, *names, "--timeout=180s"], capture_output=True)
        if not a.namespace:
            subprocess.run(["kubectl", "delete", "namespace", ns, "--wait=false"], capture_output=True)
    mb = [s / 2**20 for s in samples]
    peak = max(mb)
    print(json.dumps({"runs": a.runs, "phases": {p: phases.count(p) for p in sorted(set(phases))},
                      "rssBeforeMB": round(before / 2**20, 1), "rssPeakMB": round(peak, 1),
                      "rssLastMB": round(mb[-1], 1), "samples": len(mb), "goalMB": GOAL_MB,
                      "withinGoal": peak <= GOAL_MB}))
    return 0 if peak <= GOAL_MB else 1


if __name__ == "__main__":
    sys.exit(main())
