#!/usr/bin/env python3
"""How the operator's cost grows with the runs it holds (issue 43 §3), against the cluster
$KUBECONFIG names and the operator installed there: with 0 (idle), then 1, 10 and 50
BenchmarkRuns at once, each held in Loading (an external database at 192.0.2.1, TEST-NET-1,
which never answers, a one-hour connect timeout, pods requesting 5m CPU: rss.py's runs), so
every run is ticked all the time, the operator's busiest steady state. Per count, after every
run has a phase:

- the operator's CPU per minute over --seconds (process_cpu_seconds_total from its /metrics
  through the API server's service proxy, or /proc of a local operator with --pid), and per run
  above the idle operator's;
- its RSS, sampled every --every seconds (peak and last);
- the time from a spec change to its status update: spec.history.limit edited (in place: not a
  measured field, the run goes on) on --edits runs one after the other, until
  status.observedGeneration is the new generation (median and largest).

Then the goals: the per-run CPU constant (within 25 % from the fewest runs to the most), RSS
under 150 MB at the most runs. Prints the machine and the commit. Without $KUBECONFIG naming a
file it refuses before any kubectl call; without an API server that has the CRD, at the first.

  eval "$(hack/local-k8s.sh env)"
  .venv/bin/python operator/bench/operator_growth.py [--runs 1,10,50] [--seconds 120] [--operator-namespace tpcc-system]
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import statistics
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "runner-image" / "bench"))
import growth  # noqa: E402  (the machine, the commit and the goal lines of every growth bench)
from rss import OperatorProcess, apply, kubectl, phases_of, run_manifest  # noqa: E402
from tpcc_operator import plan  # noqa: E402

GOAL_MB = 150.0
PER_RUN_TOLERANCE = 0.25
UNREACHABLE = "192.0.2.1:21212"  # TEST-NET-1 (RFC 5737): routed nowhere, never answers


def refusal(environ: dict[str, str]) -> str | None:
    """Why this bench must not start here (no cluster named), or None."""
    kubeconfig = environ.get("KUBECONFIG", "")
    if not kubeconfig:
        return (
            'KUBECONFIG is not set: it measures the operator of the cluster it names (eval "$(hack/local-k8s.sh env)")'
        )
    missing = [p for p in kubeconfig.split(os.pathsep) if p and not Path(p).is_file()]
    if missing:
        return f"KUBECONFIG names {missing[0]}, which is not a file"
    if shutil.which("kubectl") is None:
        return "kubectl is not on PATH"
    return None


@dataclass(frozen=True)
class Sample:
    at: float  # monotonic seconds
    cpu_s: float  # the operator's CPU since it started
    rss_mb: float


def cpu_per_minute(samples: list[Sample]) -> float:
    """The operator's CPU seconds per minute from the first sample to the last."""
    first, last = samples[0], samples[-1]
    return 60 * (last.cpu_s - first.cpu_s) / (last.at - first.at)


def summary(runs: int, samples: list[Sample], edits: list[float], idle_cpu_per_minute: float | None) -> dict:
    """One point of the curve from what was sampled with `runs` runs."""
    cpu = cpu_per_minute(samples)
    return {
        "runs": runs,
        "seconds": round(samples[-1].at - samples[0].at),
        "cpu_s_per_minute": round(cpu, 2),
        "cpu_s_per_minute_per_run": round((cpu - idle_cpu_per_minute) / runs, 3)
        if runs and idle_cpu_per_minute is not None
        else None,
        "rss_peak_mb": round(max(s.rss_mb for s in samples), 1),
        "rss_last_mb": round(samples[-1].rss_mb, 1),
        "edit_to_status_s_median": round(statistics.median(edits), 2) if edits else None,
        "edit_to_status_s_max": round(max(edits), 2) if edits else None,
    }


def table(points: list[dict]) -> Iterator[str]:
    yield (
        "| runs | CPU-s per minute | per run (above idle) | RSS peak / last MB "
        "| spec change to status, median / largest s |"
    )
    yield "|---|---|---|---|---|"
    for p in points:
        per_run = "-" if p["cpu_s_per_minute_per_run"] is None else p["cpu_s_per_minute_per_run"]
        edits = (
            "-"
            if p["edit_to_status_s_median"] is None
            else f"{p['edit_to_status_s_median']} / {p['edit_to_status_s_max']}"
        )
        rss = f"{p['rss_peak_mb']} / {p['rss_last_mb']}"
        yield f"| {p['runs']} | {p['cpu_s_per_minute']} | {per_run} | {rss} | {edits} |"


def goals(points: list[dict]) -> Iterator[str]:
    loaded = [p for p in points if p["runs"] and p["cpu_s_per_minute_per_run"] is not None]
    if len(loaded) >= 2:
        yield growth.flat("operator CPU per run", [p["cpu_s_per_minute_per_run"] for p in loaded], PER_RUN_TOLERANCE)
    most = max(points, key=lambda p: p["runs"])
    peak = max(most["rss_peak_mb"], most["rss_last_mb"])
    verdict = "met" if peak < GOAL_MB else "NOT met"
    yield f"operator RSS with {most['runs']} runs: {peak} MB (goal: under {GOAL_MB:.0f} MB): {verdict}"


# ---- against the cluster ----------------------------------------------------------------------


def sample(operator: OperatorProcess, seconds: float, every: float) -> list[Sample]:
    out, deadline = [], time.monotonic() + seconds
    while True:
        out.append(Sample(time.monotonic(), operator.cpu_seconds(), operator.mb()))
        if time.monotonic() >= deadline:
            return out
        time.sleep(every)


def wait_all_phased(ns: str, n: int, timeout: float = 300) -> float:
    """Seconds until all n runs have a status.phase (the operator took them all up)."""
    t0 = time.monotonic()
    while sum(phases_of(ns).values()) < n:
        if time.monotonic() - t0 > timeout:
            sys.exit(f"operator_growth.py: error: {n} runs without a phase after {timeout:.0f} s: {phases_of(ns)}")
        time.sleep(1)
    return time.monotonic() - t0


def edit_to_status(ns: str, name: str, limit: int, timeout: float = 120) -> float:
    """Seconds from an in-place spec edit (spec.history.limit) to the status observing it."""
    t0 = time.monotonic()
    patch = json.dumps({"spec": {"history": {"limit": limit}}})
    generation = kubectl(
        "patch", "br", name, "-n", ns, "--type", "merge", "-p", patch, "-o", "jsonpath={.metadata.generation}"
    )
    while kubectl("get", "br", name, "-n", ns, "-o", "jsonpath={.status.observedGeneration}") != generation:
        if time.monotonic() - t0 > timeout:
            sys.exit(f"operator_growth.py: error: {name}: generation {generation} not observed in {timeout:.0f} s")
        time.sleep(0.1)
    return time.monotonic() - t0


def measure(operator: OperatorProcess, ns: str, n: int, a: argparse.Namespace, idle: float | None) -> dict:
    names = [f"growth-{n}-{i}" for i in range(n)]
    try:
        if names:
            apply([run_manifest(name, UNREACHABLE, 3600) for name in names], ns)
            wait_all_phased(ns, n)
        samples = sample(operator, a.seconds, a.every)
        edits = [edit_to_status(ns, name, 40 + i) for i, name in enumerate(names[: a.edits])]
        phases = phases_of(ns) if names else {}
    finally:
        if names:
            kubectl("delete", "br", "-n", ns, *names, "--timeout=300s", check=False)
    return {**summary(n, samples, edits, idle), "phases": phases}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", default="1,10,50", help="run counts, comma-separated (an idle count 0 comes first)")
    p.add_argument("--seconds", type=float, default=120, help="how long to sample each count")
    p.add_argument("--every", type=float, default=5)
    p.add_argument("--edits", type=int, default=5, help="spec edits timed per count")
    p.add_argument("--operator-namespace", default="tpcc-system")
    p.add_argument("--pid", type=int, help="a local operator process instead of the cluster's (needs --namespace)")
    p.add_argument("--namespace", help="where to create the runs (default: a new one; it must be watched)")
    a = p.parse_args()
    if a.seconds <= 0 or a.every <= 0 or a.edits < 0:
        p.error("--seconds and --every must be > 0, --edits >= 0")
    if a.pid is not None and not a.namespace:
        p.error("--pid needs --namespace: one the local operator watches")
    why = refusal(dict(os.environ))
    if why:
        sys.exit(f"operator_growth.py: refused: {why}")
    kubectl("get", "crd", f"{plan.PLURAL}.{plan.GROUP}", "--request-timeout=10s")  # exits, saying why, without one
    operator = OperatorProcess(a.operator_namespace, a.pid)
    print(f"machine: {growth.machine()}; commit {growth.commit('operator/tpcc_operator')}", flush=True)
    ns = a.namespace or f"tpcc-growth-{secrets.token_hex(3)}"
    if not a.namespace:
        kubectl("create", "namespace", ns)
    points: list[dict] = []
    try:
        for n in [0, *(int(r) for r in a.runs.split(","))]:
            idle = points[0]["cpu_s_per_minute"] if points else None
            points.append(measure(operator, ns, n, a, idle))
            print(json.dumps(points[-1]), flush=True)
    finally:
        if not a.namespace:
            kubectl("delete", "namespace", ns, "--wait=false", check=False)
    print(f"done: {growth.load_average()}")
    print("\n".join(table(points)))
    lines = list(goals(points))
    print("\n".join(lines))
    return 0 if all(line.endswith(": met") for line in lines) else 1


if __name__ == "__main__":
    sys.exit(main())
