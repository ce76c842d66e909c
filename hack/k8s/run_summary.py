"""Prints a BenchmarkRun's outcome from `kubectl get br NAME -o json` on stdin: throughput, the
mix and latency percentiles per transaction (YCSB: per operation), the load, faults, durability,
consistency, ACID tests and the verdict; exit 0 only if it Succeeded (hack/demo.sh). Every field but
the phase may be missing: a run that failed early has no results, one without think time no
efficiency, one without faults no faults.
"""

from __future__ import annotations

import json
import sys

TPCC_PERCENTILES = ("p50", "p90", "p99", "max")  # clause 5's 90th, as status.results has them
YCSB_PERCENTILES = ("p50", "p95", "p99", "max")  # what YCSB prints


def _latency_header(percentiles: tuple[str, ...]) -> str:
    return "".join(f"{p + ' ms':>9}" for p in percentiles)


def _latency_cells(latency_ms: dict, percentiles: tuple[str, ...]) -> str:
    """Each percentile in milliseconds, '-' for one the status does not have."""
    return "".join(f"{latency_ms[p]:>9.2f}" if p in latency_ms else f"{'-':>9}" for p in percentiles)


def _results(results: dict) -> list[str]:
    if not results:
        return []
    efficiency = (
        f"efficiency {results['efficiency']}%"
        if results.get("efficiency") is not None
        else f"efficiency n/a ({results['efficiencyReason']})"
        if results.get("efficiencyReason")
        else ""
    )
    lines = [
        f"tpmC {results.get('tpmC')} over {results.get('measuredSeconds', '?')} s from "
        f"{results.get('runnerPods', '?')} runner pods; committed {results.get('committed')}, "
        f"rollbacks {results.get('aborts')}, errors {results.get('errors')}, "
        f"unknown {results.get('unknown')}, retries {results.get('retries', 0)}"
    ]
    if efficiency:
        lines.append(efficiency)
    transactions = results.get("transactions") or {}
    if transactions:
        lines.append(f"  {'transaction':<13}{'executed':>9}{'mix':>8}{_latency_header(TPCC_PERCENTILES)}")
    for name, t in transactions.items():
        cells = _latency_cells(t.get("latencyMs") or {}, TPCC_PERCENTILES)
        lines.append(f"  {name:<13}{t.get('executed', 0):>9}{t.get('mixPercent', 0):>7.1f}%{cells}")
    if "responseTimesPassed" in results:
        lines.append(
            "response times (clause 5.2.5.3, 90th percentile): "
            + ("within the limits" if results["responseTimesPassed"] else "LIMIT EXCEEDED")
        )
    return lines


def _ycsb(ycsb: dict) -> list[str]:
    """status.ycsb: what YCSB prints as [OVERALL] Throughput and, per operation, its count, errors
    and percentiles."""
    if not ycsb:
        return []
    loop = f" (client loop: {ycsb['clientLoop']})" if ycsb.get("clientLoop") else ""
    lines = [
        f"YCSB workload {ycsb.get('workload', '?')}: {ycsb.get('opsPerSecond')} operations/s from "
        f"{ycsb.get('runnerPods', '?')} runner pods{loop}"
    ]
    operations = ycsb.get("operations") or {}
    if operations:
        lines.append(f"  {'operation':<11}{'operations':>11}{'errors':>8}{_latency_header(YCSB_PERCENTILES)}")
    for name, op in operations.items():
        cells = _latency_cells(op.get("latencyMs") or {}, YCSB_PERCENTILES)
        lines.append(f"  {name:<11}{op.get('count', 0):>11}{op.get('errors', 0):>8}{cells}")
    return lines


def _load(load: dict) -> list[str]:
    if not load:
        return []
    rate = load.get("rowsPerSecond", 0)
    return [f"load: {load.get('rows', 0):,} rows in {load.get('seconds')} s ({rate:,.0f} rows/s)"]


def _fault(f: dict) -> str:
    line = f"fault {f.get('number')} {f.get('action')} ({f.get('method', 'delete-pod')})"
    if f.get("target"):
        line += f" {f['target']}"
    line += f": {f.get('state')}"
    if "recoverySeconds" in f:
        line += f", back after {f['recoverySeconds']} s"
    if f.get("message"):
        line += f": {f['message']}"
    return line


def _durability(d: dict, ycsb: bool) -> list[str]:
    """TPC-C's acknowledged NewOrders, or YCSB's acknowledged writes (a record inserted or updated
    counts once) and the record count against what the load and the inserts make."""
    if not d:
        return []
    what = "acknowledged writes (records inserted or updated)" if ycsb else "acknowledged NewOrders"
    lines = [
        f"durability: {d.get('acknowledged')} {what}, {d.get('found')} found, "
        f"{d.get('lost')} lost, {d.get('unknownOutcome', 0)} of unknown outcome"
        + ("" if d.get("durable", True) else ": NOT DURABLE")
    ]
    if ycsb and "records" in d:
        lines.append(f"  {d['records']} records in the database (expected {d.get('expectedRecords')})")
    lines += [f"  lost: {e}" for e in d.get("lostExamples") or []]
    return lines


def _consistency(c: dict) -> list[str]:
    if not c:
        return []
    if c.get("passed"):
        return [f"consistency: all {len(c.get('conditions') or []) or 12} conditions hold"]
    return [f"consistency: violated conditions {c.get('violated')}"]


def _acid(a: dict) -> list[str]:
    if not a:
        return []
    counts = ", ".join(f"{n} {state}" for state, n in (a.get("counts") or {}).items() if n)
    lines = [f"ACID tests: {counts}" + ("" if a.get("passed") else ": FAILED")]
    return lines + [
        f"  {t['test']} {t['status']}: {t.get('reason', '')}"
        for t in a.get("tests") or []
        if t.get("status") in ("failed", "error", "not-applicable")
    ]


def _saturation(searches: list[dict]) -> list[str]:
    """status.sweep.saturation: every step's figure, then where the search stopped and why."""
    lines = []
    for search in searches:
        steps = ", ".join(
            f"{s['clients']} clients {s['throughput']:g}"
            + (f" ({s['gainPercent']:+.1f} %)" if "gainPercent" in s else "")
            + (" over the p90 limits" if s.get("limitsBroken") else "")
            for s in search["steps"]
        )
        lines.append(f"saturation search, {search['warehouses']} warehouses ({search['metric']}): {steps}")
        if "stopped" in search:
            point = (
                f"{search['saturationClients']} clients, {search['throughput']:g} {search['metric']}"
                if "saturationClients" in search
                else "none within the limits"
            )
            lines.append(f"  stopped ({search['stopped']}: {search['reason']}); saturation point: {point}")
    return lines


def summary(run: dict) -> tuple[list[str], int]:
    """The lines to print and the exit code for one BenchmarkRun object."""
    name = (run.get("metadata") or {}).get("name", "?")
    status = run.get("status") or {}
    phase = status.get("phase")
    lines = [
        f"BenchmarkRun {name}: {phase or 'no status yet'}"
        + (f" ({status['reason']}: {status.get('message')})" if status.get("reason") else "")
    ]
    lines += _results(status.get("results") or {})
    lines += _ycsb(status.get("ycsb") or {})
    lines += _load(status.get("load") or {})
    lines += [_fault(f) for f in status.get("faults") or []]
    lines += _durability(status.get("durability") or {}, "ycsb" in status)
    lines += _consistency(status.get("consistency") or {})
    lines += _acid(status.get("acid") or {})
    lines += _saturation((status.get("sweep") or {}).get("saturation") or [])
    if status.get("verdict"):
        regression = status.get("regression") or {}
        lines.append(
            f"verdict: {status['verdict']}" + (f" ({regression['message']})" if regression.get("message") else "")
        )
    return lines, 0 if phase == "Succeeded" else 1


def main() -> int:
    lines, code = summary(json.load(sys.stdin))
    print("\n".join(lines))
    return code


if __name__ == "__main__":
    raise SystemExit(main())
