"""The TPC-C results document: what one runner pod measured (its per-type counts and latency
histograms, its window, NewOrders per second, Deliveries and the server's counters), built by the
runner, and the merge of several pods' documents into one, done by the operator for the run's status
and by `tpcc` for runs outside Kubernetes. Pure."""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from hdrh.histogram import HdrHistogram

from .deliveries import RunDeliveries
from .histograms import decode_histogram, latency_summary_ms, new_histogram
from .server_agreement import NOT_AVAILABLE, Agreement, judge
from .server_stats import (
    ClientCounts,
    DatabaseSize,
    ServerCounters,
    client_counts_from,
    counter_deltas,
    earliest,
    latest,
    summed_client_counts,
)
from .tpcc import TRANSACTIONS, reported_efficiency, response_time_verdicts

OUTCOMES = ("committed", "rollbacks", "errors", "unknown")
TIMELINE_STEP_SECONDS = 10


@dataclass
class TypeStats:
    """Measured-window statistics of one transaction type."""

    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))
    retries: int = 0
    histogram: HdrHistogram = field(default_factory=new_histogram)

    def add(self, other: TypeStats) -> None:
        for k in OUTCOMES:
            self.counts[k] += other.counts[k]
        self.retries += other.retries
        self.histogram.add(other.histogram)

    def to_dict(self, total_executed: int) -> dict[str, Any]:
        executed = self.counts["committed"] + self.counts["rollbacks"]
        return {
            **self.counts,
            "retries": self.retries,
            "executed": executed,
            "mix_percent": round(100.0 * executed / total_executed, 3) if total_executed else 0.0,
            "latency_ms": latency_summary_ms(self.histogram),
            "histogram": self.histogram.encode().decode(),
        }

    def to_wire(self) -> dict[str, Any]:
        """What from_dict reads (a client process's statistics for its parent): no summary."""
        return {**self.counts, "retries": self.retries, "histogram": self.histogram.encode().decode()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TypeStats:
        return cls({k: int(d[k]) for k in OUTCOMES}, int(d["retries"]), decode_histogram(d["histogram"]))


@dataclass(frozen=True)
class PodWindow:
    """When one runner pod really measured (epoch seconds). Second k of its
    new_orders_per_second is [planned_measure_start + k, +1): the same seconds in every pod,
    since all pods share the barrier's start_at and the warmup."""

    start_at: float  # the barrier's instant: every terminal was to start then
    terminals_started: float  # when the pod's last terminal began
    planned_measure_start: float  # start_at + warmup
    measure_start: float  # max(planned_measure_start, terminals_started)
    measure_end: float  # min(planned end, when the pod's first terminal stopped)

    @property
    def late_seconds(self) -> float:
        """How long after start_at the pod's terminals were all running."""
        return max(0.0, self.terminals_started - self.start_at)

    @property
    def late_for_measuring(self) -> bool:
        """Whether the pod's terminals were all running only after the measured interval had
        begun (by more than LATE_START_SECONDS)."""
        return self.terminals_started - self.planned_measure_start > LATE_START_SECONDS

    def whole_seconds(self) -> range:
        """Indices of the whole seconds of the planned window inside the real one."""
        first = math.ceil(round(self.measure_start - self.planned_measure_start, 6))
        last = math.floor(round(self.measure_end - self.planned_measure_start, 6))
        return range(first, max(first, last))

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "late_seconds": round(self.late_seconds, 3)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PodWindow:
        return cls(*(float(d[f.name]) for f in fields(cls)))


def tpmc_over(new_orders_per_second: list[list[int]], seconds: range) -> float:
    """NewOrders committed by all pods in these seconds, per minute."""
    if not seconds:
        return 0.0
    committed = sum(n for pod in new_orders_per_second for n in pod[seconds.start : seconds.stop])
    return 60.0 * committed / len(seconds)


def _document(
    stats: dict[str, TypeStats],
    tpmc: float,
    seconds: range,
    stats_seconds: float,
    warehouses: int,
    clients: int,
    paced: bool,
    timeline: dict[int, int],
) -> dict[str, Any]:
    """stats_seconds: the window the per-type statistics cover (from the planned start of the
    measured window to its end), for the transactions per second."""
    executed = sum(s.counts["committed"] + s.counts["rollbacks"] for s in stats.values())
    committed = sum(s.counts["committed"] for s in stats.values())
    eff, eff_reason = reported_efficiency(tpmc, warehouses, paced)
    p90 = {
        t: stats[t].histogram.get_value_at_percentile(90) / 1_000_000 if stats[t].histogram.get_total_count() else None
        for t in TRANSACTIONS
    }
    verdicts = response_time_verdicts(p90)
    return {
        "tpmC": round(tpmc, 2),
        # all five types, committed: the FoundationDB and VoltDB studies' throughput
        "transactions_per_second": round(committed / stats_seconds, 2) if stats_seconds > 0 else 0.0,
        "efficiency": eff,
        **({"efficiency_reason": eff_reason} if eff_reason else {}),
        "measured_seconds": len(seconds),
        "warehouses": warehouses,
        "clients": clients,
        "pacing": "spec" if paced else "none",
        "transactions": {t: stats[t].to_dict(executed) for t in TRANSACTIONS},
        "totals": {
            **{k: sum(s.counts[k] for s in stats.values()) for k in OUTCOMES},
            "retries": sum(s.retries for s in stats.values()),
        },
        "response_times": verdicts,
        "response_times_passed": all(v["passed"] is not False for v in verdicts.values()),
        "timeline": timeline_series(timeline),
    }


def build_results(
    stats: dict[str, TypeStats],
    window: PodWindow,
    new_orders_per_second: list[int],
    warehouses: int,
    clients: int,
    paced: bool,
    timeline: dict[int, int],
    extra: dict[str, Any],
) -> dict[str, Any]:
    """The results document of one runner pod. tpmC counts the NewOrders committed in the
    whole seconds the pod really measured. timeline: committed NewOrders per
    TIMELINE_STEP_SECONDS bucket, keyed by bucket index from the start of the measured
    window (negative = warmup)."""
    seconds = window.whole_seconds()
    return {
        **_document(
            stats,
            tpmc_over([new_orders_per_second], seconds),
            seconds,
            window.measure_end - window.planned_measure_start,
            warehouses,
            clients,
            paced,
            timeline,
        ),
        "start": _iso(window.measure_start),
        "end": _iso(window.measure_end),
        "window": window.to_dict(),
        "new_orders_per_second": new_orders_per_second,
        **extra,
    }


def _iso(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.timezone.utc).isoformat().replace("+00:00", "Z")


def timeline_series(timeline: dict[int, int]) -> list[dict[str, float]]:
    return [
        {"t": b * TIMELINE_STEP_SECONDS, "tpmC": round(n * 60.0 / TIMELINE_STEP_SECONDS, 2)}
        for b, n in sorted(timeline.items())
    ]


# A pod whose terminals were all running only this long after the measured interval began
# (start_at + warmup) missed part of what the other pods measured: late. A pod late within the
# warmup measured the whole interval (its late_seconds says by how much it missed start_at): on a
# busy node a process woken at start_at can take a second to run, which a warmup exists to absorb.
LATE_START_SECONDS = 1.0


def _shard_index(doc: dict[str, Any]) -> int:
    return int(str(doc.get("shard", "0/1")).partition("/")[0])


def _same_everywhere(docs: list[dict[str, Any]], what: str, value) -> Any:
    values = {repr(value(d)) for d in docs}
    if len(values) > 1:
        raise ValueError(f"runner pods disagree on {what}: {sorted(values)}")
    return value(docs[0])


def merge_results(docs: list[dict[str, Any]]) -> dict[str, Any]:
    """One document for runner pods that ran the same window against the same database:
    counts and histograms add up, percentiles come from the merged histograms (never
    averaged), and tpmC counts the NewOrders of all pods committed in the common window
    (the whole seconds in which every pod measured) over its length. Pods whose terminals
    were all running only more than LATE_START_SECONDS into the measured interval are listed in
    late_runners."""
    if not docs:
        raise ValueError("no results to merge")
    _same_everywhere(docs, "the seed and C constants", lambda d: (d["options"]["seed"], d["c_constants"]))
    _same_everywhere(docs, "the planned window", lambda d: round(d["window"]["planned_measure_start"], 3))
    stats = {t: TypeStats() for t in TRANSACTIONS}
    timeline: dict[int, int] = {}
    for doc in docs:
        for t in TRANSACTIONS:
            stats[t].add(TypeStats.from_dict(doc["transactions"][t]))
        for point in doc.get("timeline", []):
            b = int(point["t"]) // TIMELINE_STEP_SECONDS
            timeline[b] = timeline.get(b, 0) + round(point["tpmC"] * TIMELINE_STEP_SECONDS / 60.0)
    windows = [PodWindow.from_dict(d["window"]) for d in docs]
    ranges = [w.whole_seconds() for w in windows]
    common_start = max(r.start for r in ranges)
    common = range(common_start, max(common_start, min(r.stop for r in ranges)))
    tpmc = tpmc_over([d["new_orders_per_second"] for d in docs], common)
    first = docs[0]
    stats_seconds = max(w.measure_end for w in windows) - windows[0].planned_measure_start
    merged = {
        **_document(
            stats,
            tpmc,
            common,
            stats_seconds,
            first["warehouses"],
            sum(d["clients"] for d in docs),
            first["pacing"] == "spec",
            timeline,
        ),
        **{k: v for k, v in first.items() if k not in _COMPUTED},
    }
    planned = windows[0].planned_measure_start
    merged["start"] = _iso(planned + common.start)
    merged["end"] = _iso(planned + common.stop)
    merged["pods"] = len(docs)
    merged["pod_tpmC"] = [d["tpmC"] for d in docs]
    merged["pod_windows"] = sorted(({"shard": _shard_index(d), **d["window"]} for d in docs), key=lambda w: w["shard"])
    merged["late_runners"] = [
        {"shard": w["shard"], "late_seconds": w["late_seconds"]}
        for w in merged["pod_windows"]
        if PodWindow.from_dict(w).late_for_measuring
    ]
    if all("deliveries" in d for d in docs):
        merged.update(merge_deliveries(docs).to_json())
    if all("server" in d for d in docs):
        merged.update(merge_server(docs))
    # Per-pod ledger verifications (`tpcc run --verify-ledger`) are not summed: a key two pods
    # both acknowledged is found by each; only all ledgers judged together can tell
    # (durability.judge, the operator's verifier, `tpcc verify-ledger` with every ledger).
    return merged


def server_results(
    before: ServerCounters, after: ServerCounters, size: DatabaseSize, clients: dict[str, ClientCounts], pods: int
) -> dict[str, Any]:
    """`server` (the database's counters before the terminals started and after they all
    stopped, what it counted in between, its size, and what the clients counted over the same
    time) and `server_agreement`. With several runner pods a pod's snapshots hold the others'
    work too: the agreement is judged when their documents are merged."""
    section = {
        "counters_before": before.to_dict(),
        "counters_after": after.to_dict(),
        "counted_during_run": counter_deltas(before, after),
        "size": size.to_dict(),
        "client_counts": {t: c.to_dict() for t, c in clients.items()},
    }
    agreement = (
        judge(clients, before, after)
        if pods == 1
        else Agreement(NOT_AVAILABLE, reason=f"judged over all {pods} runner pods when their documents are merged")
    )
    return {"server": section, "server_agreement": agreement.to_dict()}


def merge_server(docs: list[dict[str, Any]]) -> dict[str, Any]:
    """server_results over all runner pods: the earliest counters before, the latest after, the
    clients' counts added up, the size the last pod fetched."""
    sections = [d["server"] for d in docs]
    before = earliest([ServerCounters.from_dict(s["counters_before"]) for s in sections])
    afters = [ServerCounters.from_dict(s["counters_after"]) for s in sections]
    after = latest(afters)
    last = max(range(len(afters)), key=lambda i: afters[i].taken_at)
    clients = summed_client_counts([client_counts_from(s["client_counts"]) for s in sections])
    return server_results(before, after, DatabaseSize.from_dict(sections[last]["size"]), clients, 1)


def merge_deliveries(docs: list[dict[str, Any]]) -> RunDeliveries:
    """The Deliveries of all runner pods (condition 11 of the consistency check counts them)."""
    total = RunDeliveries()
    for doc in docs:
        total.merge(RunDeliveries.from_json(doc, f"runner pod {doc.get('shard', '?')}"))
    return total


_COMPUTED = {
    "tpmC",
    "efficiency",
    "efficiency_reason",
    "measured_seconds",
    "warehouses",
    "clients",
    "pacing",
    "transactions",
    "totals",
    "response_times",
    "response_times_passed",
    "timeline",
    "start",
    "end",
    "shard",
    "window",
    "new_orders_per_second",
    "durability",
    "deliveries",
    "deliveries_unknown_outcome",
    "transactions_per_second",
    "server",
    "server_agreement",
}
