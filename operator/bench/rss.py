#!/usr/bin/env python3
"""The operator's resident memory against its 150 MB goal, in the two cases the goals name:

  runs     N BenchmarkRuns in the cluster (issue #10): each held in Loading (an unreachable
           external database, a one-hour connect timeout, pods requesting 5m CPU), so every run
           is ticked all the time: the operator's busiest steady state. Sampled for --seconds,
           then the runs are deleted and the operator sampled again.
  results  R BenchmarkResults present (issue #11): R results of one history series, made with
           the operator's own history.record from the run the e2e test captured, then a run of
           that series that fails at once (its loader cannot connect): on its one finished tick
           the operator lists and reads all R, judges it, writes its own BenchmarkResult and
           prunes the oldest (history.limit R), which proves it read them all.

Prints one JSON line per case: RSS before, peak, after (MB), and whether peak and after are
within the goal. The RSS is the operator's process_resident_memory_bytes from its /metrics
through the API server's service proxy, or /proc/PID/status of a local operator (--pid).

  eval "$(hack/local-k8s.sh env)"
  .venv/bin/python operator/bench/rss.py --operator-namespace tpcc-system --runs 10 --results 100
  .venv/bin/python operator/bench/rss.py --pid 1234 --namespace rss-a  # a local `kopf run ... --namespace=rss-a`
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "operator"))
from history_growth import result_documents  # noqa: E402  (the results are made as the operator makes them)
from tpcc_operator import plan  # noqa: E402

GOAL_MB = 150.0
# the runs' pods wait or fail without a database, and reserve almost nothing on the node
TINY_PODS = {"requests": {"cpu": "5m", "memory": "32Mi"}, "limits": {"cpu": "100m", "memory": "256Mi"}}
HISTORY_RUN = "rss-history"


def kubectl(*args: str, input: str | None = None, check: bool = True) -> str:
    out = subprocess.run(["kubectl", *args], input=input, capture_output=True, text=True, timeout=300)
    if check and out.returncode != 0:
        sys.exit(f"rss.py: error: kubectl {' '.join(args)}: {out.stderr.strip()}")
    return out.stdout


def apply(objects: list[dict], namespace: str) -> None:
    kubectl(
        "apply", "-n", namespace, "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": objects})
    )


def metric(exposition: str, name: str) -> float | None:
    """The value of an unlabelled sample `name` in a Prometheus text exposition."""
    for line in exposition.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


class OperatorProcess:
    """Where the operator's RSS and CPU are read: its /metrics in the cluster (the process
    collector's samples), or a local process's /proc."""

    def __init__(self, operator_namespace: str, pid: int | None):
        self.pid = pid
        self.path = ""
        if pid is None:
            service = kubectl(
                "get",
                "service",
                "-n",
                operator_namespace,
                "-l",
                "app.kubernetes.io/name=tpcc-operator",
                "-o",
                "jsonpath={.items[0].metadata.name}",
            )
            if not service:
                sys.exit(f"rss.py: error: no tpcc-operator Service in namespace {operator_namespace}")
            self.path = f"/api/v1/namespaces/{operator_namespace}/services/{service}:metrics/proxy/metrics"

    def _metric(self, name: str) -> float:
        value = metric(kubectl("get", "--raw", self.path), name)
        if value is None:
            sys.exit(f"rss.py: error: the operator exports no {name}")
        return value

    def mb(self) -> float:
        """Its resident memory, MB."""
        if self.pid is not None:
            status = Path(f"/proc/{self.pid}/status").read_text()
            return int(next(ln for ln in status.splitlines() if ln.startswith("VmRSS:")).split()[1]) / 1024
        return self._metric("process_resident_memory_bytes") / 2**20

    def cpu_seconds(self) -> float:
        """Its CPU (user + system) since it started."""
        if self.pid is not None:
            fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        return self._metric("process_cpu_seconds_total")


def sample(rss: OperatorProcess, seconds: float, every: float, done=lambda: False) -> list[float]:
    """RSS every `every` seconds for `seconds`, or until done()."""
    out, deadline = [rss.mb()], time.time() + seconds
    while time.time() < deadline and not done():
        time.sleep(every)
        out.append(rss.mb())
    return out


def run_manifest(name: str, endpoint: str, connect_timeout: int, **spec) -> dict:
    return {
        "apiVersion": f"{plan.GROUP}/{plan.VERSION}",
        "kind": "BenchmarkRun",
        "metadata": {"name": name},
        "spec": {
            "database": {"type": "voltdb", "external": {"endpoints": [endpoint]}},
            "workload": {"connectTimeoutSeconds": connect_timeout},
            "runners": {"imagePullPolicy": "IfNotPresent", "resources": TINY_PODS},
            "cleanup": {"policy": "Always"},
            **spec,
        },
    }


def phases_of(namespace: str) -> dict[str, int]:
    phases = kubectl("get", "br", "-n", namespace, "-o", "jsonpath={.items[*].status.phase}").split()
    return {p: phases.count(p) for p in sorted(set(phases))}


def report(case: str, before: float, during: list[float], after: list[float], **extra) -> dict:
    peak = max(during)
    return {
        "case": case,
        **extra,
        "rssBeforeMB": round(before, 1),
        "rssPeakMB": round(peak, 1),
        "rssAfterMB": round(after[-1], 1),
        "samples": len(during),
        "goalMB": GOAL_MB,
        "withinGoal": max(peak, after[-1]) <= GOAL_MB,
    }


def measure_runs(rss: OperatorProcess, ns: str, n: int, seconds: float, every: float) -> dict:
    before = rss.mb()
    names = [f"rss-{i}" for i in range(n)]
    try:
        apply([run_manifest(name, "192.0.2.1:21212", 3600) for name in names], ns)
        during = sample(rss, seconds, every)
        phases = phases_of(ns)
    finally:
        kubectl("delete", "br", "-n", ns, *names, "--timeout=180s", check=False)
    after = sample(rss, 3 * every, every)
    return report("runs", before, during, after, runs=n, phases=phases)


def measure_results(rss: OperatorProcess, ns: str, n: int, every: float) -> dict:
    series = f"{plan.LABEL_SERIES}={HISTORY_RUN}"
    results = result_documents(ns, n, series=HISTORY_RUN)
    try:
        apply(results, ns)
        before = rss.mb()
        # 127.0.0.1:1 refuses at once: the loader fails after its 1 s connect timeout
        apply([run_manifest(HISTORY_RUN, "127.0.0.1:1", 1, history={"limit": n})], ns)

        def verdict() -> str:
            return kubectl("get", "br", HISTORY_RUN, "-n", ns, "-o", "jsonpath={.status.verdict}")

        during = sample(rss, 300, every, done=verdict)
        outcome = verdict()
        after = sample(rss, 3 * every, every)
        left = kubectl("get", "benchmarkresults", "-n", ns, "-l", series, "-o", "name").split()
    finally:
        kubectl("delete", "br", HISTORY_RUN, "-n", ns, "--timeout=180s", check=False)
        kubectl("delete", "benchmarkresults", "-n", ns, "-l", series, "--wait=false", check=False)
    oldest = f"benchmarkresult.{plan.GROUP}/{results[0]['metadata']['name']}"
    # the operator wrote one and pruned the oldest: it read all n
    return report(
        "results", before, during, after, results=n, verdict=outcome, allListed=len(left) == n and oldest not in left
    )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--operator-namespace", default="tpcc-system")
    p.add_argument("--pid", type=int, help="a local operator process instead of the cluster's (needs --namespace)")
    p.add_argument("--namespace", help="where to create the runs (default: a new one; it must be watched)")
    p.add_argument("--runs", type=int, default=10, help="0 skips the runs case")
    p.add_argument("--results", type=int, default=100, help="0 skips the results case")
    p.add_argument("--seconds", type=float, default=120, help="how long to sample the runs")
    p.add_argument("--every", type=float, default=5)
    a = p.parse_args()
    if a.runs < 0 or a.results < 0 or a.seconds <= 0 or a.every <= 0:
        p.error("--runs and --results must be >= 0, --seconds and --every > 0")
    if a.pid is not None and not a.namespace:
        p.error("--pid needs --namespace: one the local operator watches")

    rss = OperatorProcess(a.operator_namespace, a.pid)
    ns = a.namespace or f"tpcc-rss-{secrets.token_hex(3)}"
    if not a.namespace:
        kubectl("create", "namespace", ns)
    reports = []
    try:
        if a.runs:
            reports.append(measure_runs(rss, ns, a.runs, a.seconds, a.every))
        if a.results:
            reports.append(measure_results(rss, ns, a.results, a.every))
    finally:
        if not a.namespace:
            kubectl("delete", "namespace", ns, "--wait=false", check=False)
    for r in reports:
        print(json.dumps(r))
    return 0 if all(r["withinGoal"] for r in reports) else 1


if __name__ == "__main__":
    sys.exit(main())
