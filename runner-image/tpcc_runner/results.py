"""Results arithmetic: per-type counters and HdrHistograms of the measured window, the
results document, the merge of several runner pods' documents, and the human summary."""

from __future__ import annotations

import bisect
import datetime as dt
import math
import platform
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Any

from hdrh.histogram import HdrHistogram

from . import __version__
from .consistency import RunDeliveries
from .loader import constants_of
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
from .workload import TRANSACTIONS, reported_efficiency, response_time_verdicts, spec_deviations

if TYPE_CHECKING:
    from .drivers.base import LoadMeta
    from .executor import Measurement, RunPlan, Window

OUTCOMES = ("committed", "rollbacks", "errors", "unknown")
PERCENTILES = (50, 75, 90, 95, 99)
# Latencies are recorded in microseconds, 1 us .. 1 h, 3 significant digits.
_LOWEST_US, _HIGHEST_US, _DIGITS = 1, 3600 * 1_000_000, 3
TIMELINE_STEP_SECONDS = 10

# The run's latency histogram (clients count into it, metrics exports it); here, not in
# metrics, so the run's clients do not import the Prometheus client.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


def bucket_index(seconds: float) -> int:
    """Index of the first bucket whose upper bound holds the value (len = +Inf)."""
    return bisect.bisect_left(LATENCY_BUCKETS, seconds)


def new_histogram() -> HdrHistogram:
    return HdrHistogram(_LOWEST_US, _HIGHEST_US, _DIGITS)


def decode_histogram(encoded: str) -> HdrHistogram:
    return HdrHistogram.decode(encoded.encode())


def record_latency(h: HdrHistogram, seconds: float) -> None:
    h.record_value(min(max(int(seconds * 1_000_000), _LOWEST_US), _HIGHEST_US))


def latency_summary_ms(h: HdrHistogram) -> dict[str, float]:
    if h.get_total_count() == 0:
        return {"min": 0.0, **{f"p{p}": 0.0 for p in PERCENTILES}, "max": 0.0, "mean": 0.0}
    out = {"min": h.get_min_value() / 1000}
    out.update({f"p{p}": value / 1000 for p, value in percentiles_us(h, PERCENTILES).items()})
    out["max"] = h.get_max_value() / 1000
    out["mean"] = round(mean_us(h) / 1000, 3)
    return out


# hdrh walks all 23,552 counts of a histogram in Python for its mean and for each percentile,
# about 22 ms each; a run summarises ten or more histograms, a YCSB run three times over
# (status, text, JSON). These take hdrh's figures over the recorded counts only.


def _recorded(h: HdrHistogram) -> list[tuple[int, int]]:
    return [(i, c) for i, c in enumerate(h.counts) if c]


def mean_us(h: HdrHistogram) -> float:
    """HdrHistogram.get_mean_value's figure: each recorded count times its bucket's median
    equivalent value."""
    total = 0
    for i, count in _recorded(h):
        total += count * h._hdr_median_equiv_value(h.get_highest_equivalent_value(h.get_value_from_index(i)))
    return float(total) / h.total_count


def percentiles_us(h: HdrHistogram, percentiles: Iterable[float]) -> dict[float, int]:
    """HdrHistogram.get_value_at_percentile's figure for each percentile."""
    recorded = _recorded(h)
    out = {}
    for p in percentiles:
        target, total, out[p] = h.get_target_count_at_percentile(p), 0, 0
        for i, count in recorded:
            total += count
            if total >= target:
                value = h.get_value_from_index(i)
                out[p] = h.get_highest_equivalent_value(value) if p else h.get_lowest_equivalent_value(value)
                break
    return out


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

    @classmethod
    def of(cls, window: Window, measured: Measurement) -> PodWindow:
        """The planned window cut to when this pod's terminals were all running."""
        return cls(
            start_at=window.start,
            terminals_started=measured.terminals_started,
            planned_measure_start=window.measure,
            measure_start=max(window.measure, measured.terminals_started),
            measure_end=min(window.end, measured.terminals_stopped),
        )


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


def run_results(
    plan: RunPlan,
    meta: LoadMeta,
    described: dict[str, Any],
    processes: int,
    measured: Measurement,
    window: PodWindow,
    timeline: dict[int, int],
    deliveries: RunDeliveries,
) -> dict[str, Any]:
    """The results document of this runner pod's run: build_results over what it measured,
    with what the run was (run_description)."""
    measured_timeline = {b: n for b, n in timeline.items() if b * TIMELINE_STEP_SECONDS < plan.duration}
    return build_results(
        measured.stats,
        window,
        measured.new_orders_per_second,
        plan.warehouses,
        plan.clients,
        plan.think_time,
        measured_timeline,
        run_description(plan, meta, described, processes, deliveries),
    )


def run_description(
    plan: RunPlan, meta: LoadMeta, described: dict[str, Any], processes: int, deliveries: RunDeliveries
) -> dict[str, Any]:
    """What the run was, beside what it measured: its options and the driver's (`described`,
    Driver.describe), where it deviates from the spec, the C constants of load and run, the
    versions, and every Delivery of the run (warmup included: consistency condition 11)."""
    return {
        "warmup_seconds": plan.warmup,
        "shard": f"{plan.shard}/{plan.shards}",
        "options": {
            "db": plan.db,
            "mix": list(plan.mix),
            "think_time": plan.think_time,
            "remote_percent": {"new_order_line": plan.remote.new_order_line, "payment": plan.remote.payment},
            "processes": processes,
            "max_retries": plan.max_retries,
            "driver_options": plan.connection.extra,
            "seed": plan.seed,
            "scale": {"items": meta.items, "customers_per_district": meta.customers_per_district},
            "driver": described,
        },
        "spec_deviations": spec_deviations(
            paced=plan.think_time,
            mix=plan.mix,
            clients=plan.all_clients,
            warehouses=plan.warehouses,
            items=meta.items,
            customers_per_district=meta.customers_per_district,
            schema_variant=str(described.get("schema_variant", "")),
            measured_seconds=plan.duration,
            remote=plan.remote,
        ),
        "c_constants": {"load": constants_of(meta).to_dict(), "run": plan.constants.to_dict()},
        "versions": {"runner": __version__, "python": platform.python_version()},
        **deliveries.to_json(),
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


def summary(doc: dict[str, Any]) -> str:
    """One screen for a human (stderr)."""
    eff = "n/a (no think times)" if doc["efficiency"] is None else f"{doc['efficiency']:.1f}%"
    lines = [
        f"tpmC {doc['tpmC']:.1f}  {doc.get('transactions_per_second', 0.0):.1f} transactions/s  "
        f"efficiency {eff}  ({doc['warehouses']} warehouses, {doc['clients']} clients, "
        f"{doc['measured_seconds']:.0f} s measured)",
        f"{'transaction':<13}{'executed':>9}{'mix%':>7}{'rollbk':>7}{'errors':>7}"
        f"{'unknown':>8}{'retries':>8}{'minms':>8}{'p50ms':>9}{'p95ms':>9}{'p99ms':>9}{'maxms':>9}",
    ]
    for t in TRANSACTIONS:
        s = doc["transactions"][t]
        lat = s["latency_ms"]
        lines.append(
            f"{t:<13}{s['executed']:>9}{s['mix_percent']:>7.1f}{s['rollbacks']:>7}"
            f"{s['errors']:>7}{s['unknown']:>8}{s['retries']:>8}{lat.get('min', 0.0):>8.2f}"
            f"{lat['p50']:>9.2f}{lat['p95']:>9.2f}{lat['p99']:>9.2f}{lat['max']:>9.2f}"
        )
    failed = [t for t, v in doc["response_times"].items() if v["passed"] is False]
    lines.append(
        "90th percentile response times within clause 5.2.5.3 limits"
        if not failed
        else f"90th percentile response time over the clause 5.2.5.3 limit: {', '.join(failed)}"
    )
    lines.extend(server_lines(doc))
    return "\n".join(lines)


def _mib(n: int | None) -> str:
    return "n/a" if n is None else f"{n / 2**20:.1f} MiB"


def server_lines(doc: dict[str, Any]) -> list[str]:
    """The server's size and whether its counters agree with the clients' (for people)."""
    if "server" not in doc:
        return []
    size, agreement = doc["server"]["size"], doc["server_agreement"]
    lines = [
        f"database size: {size['unavailable']}"
        if size.get("unavailable")
        else f"database size: data {_mib(size['data_bytes'])}, indexes {_mib(size['index_bytes'])}, "
        f"storage {_mib(size['storage_bytes'])}, server memory {_mib(size['memory_bytes'])}"
    ]
    detail = f": {agreement['reason']}" if agreement.get("reason") else ""
    lines.append(f"server counters vs clients: {agreement['verdict']}{detail}")
    return lines
