"""The YCSB runner pods' result documents merged into one, for a BenchmarkRun's status.ycsb (the
operator calls `merge`). Pure. Counts add up; latencies come from the pods' HdrHistograms added
together, so the merged percentiles are those of all operations, not an average of percentiles;
throughput is the successful operations over the pods' common window (the latest start to the
earliest end of the pods released by one barrier), as a run's tpmC is."""

from __future__ import annotations

import datetime as dt
from typing import Any

from .measurements import SUCCEEDED, Measurements


def merge(docs: list[dict[str, Any]]) -> dict[str, Any]:
    """status.ycsb of N pods' `tpcc ycsb run` documents; ValueError if they are not one run."""
    if not docs:
        raise ValueError("no YCSB results to merge")
    if any(d.get("kind") != "ycsb" or "window" not in d for d in docs):
        raise ValueError("not every document is a `tpcc ycsb run --results-configmap` result")
    first = docs[0]
    for d in docs[1:]:
        for key in ("workload", "properties", "db"):
            if _comparable(d.get(key)) != _comparable(first.get(key)):
                raise ValueError(f"the pods ran different {key}: {first.get(key)!r} and {d.get(key)!r}")
    measurements = Measurements()
    for d in docs:
        measurements.add(Measurements.from_json(d["operations"]))
    start = max(d["window"]["start"] for d in docs)
    end = min(d["window"]["end"] for d in docs)
    seconds = max(end - start, 1e-9)
    operations = _operations(measurements)
    succeeded = sum(op["count"] - op["errors"] for name, op in operations.items() if name != "TRANSACTION")
    return {
        "kind": "ycsb",
        "workload": first.get("workload") or "",
        "runnerPods": len(docs),
        "opsPerSecond": round(succeeded / seconds, 1),
        # which loop ran the pods' clients (executor.runners): whether the compiled one did
        "clientLoop": "; ".join(sorted({(d.get("driver") or {}).get("client_loop") or "not recorded" for d in docs})),
        "start": _rfc3339(start),
        "end": _rfc3339(end),
        "properties": {
            k: _text(v)
            for k, v in sorted((first.get("properties") or {}).items())
            if k not in ("threadcount", "target")
        },
        "operations": operations,
    }


def _comparable(value: Any) -> Any:
    """Properties that differ between pods by design (each pod's threads and share of the target)
    do not make them different runs."""
    if isinstance(value, dict):
        return {k: v for k, v in value.items() if k not in ("threadcount", "target")}
    return value


def _operations(ms: Measurements) -> dict[str, dict[str, Any]]:
    out = {}
    for name in ms.names():
        if name.endswith("-FAILED"):
            continue
        m = ms.by_name[name]
        attempted = sum(m.statuses.values()) or m.histogram.get_total_count()
        errors = sum(n for status, n in m.statuses.items() if status not in SUCCEEDED and status != "NOT_FOUND")
        h = m.histogram
        latency = (
            {}
            if not h.get_total_count()
            else {f"p{p}": round(h.get_value_at_percentile(p) / 1000, 3) for p in (50, 95, 99)}
        )
        if h.get_total_count():
            latency["max"] = round(h.get_max_value() / 1000, 3)
        out[name] = {"count": attempted, "errors": errors, "latencyMs": latency}
    return out


def _text(value: Any) -> str:
    """A property as YCSB writes it (booleans lowercase)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def _rfc3339(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
