"""Results arithmetic: per-type counters and HdrHistograms of the measured window, the
results document, the merge of several runner pods' documents, and the human summary."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hdrh.histogram import HdrHistogram

from .workload import NEW_ORDER, TRANSACTIONS, efficiency

OUTCOMES = ("committed", "rollbacks", "errors", "unknown")
PERCENTILES = (50, 75, 90, 95, 99)
# Latencies are recorded in microseconds, 1 us .. 1 h, 3 significant digits.
_LOWEST_US, _HIGHEST_US, _DIGITS = 1, 3600 * 1_000_000, 3
TIMELINE_STEP_SECONDS = 10


def new_histogram() -> HdrHistogram:
    return HdrHistogram(_LOWEST_US, _HIGHEST_US, _DIGITS)


def decode_histogram(encoded: str) -> HdrHistogram:
    return HdrHistogram.decode(encoded.encode())


def record_latency(h: HdrHistogram, seconds: float) -> None:
    h.record_value(min(max(int(seconds * 1_000_000), _LOWEST_US), _HIGHEST_US))


def latency_summary_ms(h: HdrHistogram) -> dict[str, float]:
    if h.get_total_count() == 0:
        return {**{f"p{p}": 0.0 for p in PERCENTILES}, "max": 0.0, "mean": 0.0}
    out = {f"p{p}": h.get_value_at_percentile(p) / 1000 for p in PERCENTILES}
    out["max"] = h.get_max_value() / 1000
    out["mean"] = round(h.get_mean_value() / 1000, 3)
    return out


@dataclass
class TypeStats:
    """Measured-window statistics of one transaction type."""
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))
    retries: int = 0
    histogram: HdrHistogram = field(default_factory=new_histogram)

    def add(self, other: "TypeStats") -> None:
        for k in OUTCOMES:
            self.counts[k] += other.counts[k]
        self.retries += other.retries
        self.histogram.add(other.histogram)

    def to_dict(self, total_executed: int) -> dict[str, Any]:
        executed = self.counts["committed"] + self.counts["rollbacks"]
        return {**self.counts, "retries": self.retries, "executed": executed,
                "mix_percent": round(100.0 * executed / total_executed, 3) if total_executed else 0.0,
                "latency_ms": latency_summary_ms(self.histogram),
                "histogram": self.histogram.encode().decode()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "TypeStats":
        return cls({k: int(d[k]) for k in OUTCOMES}, int(d["retries"]),
                   decode_histogram(d["histogram"]))


def build_results(stats: dict[str, TypeStats], measured_seconds: float, warehouses: int,
                  clients: int, timeline: dict[int, int], extra: dict[str, Any]) -> dict[str, Any]:
    """The results document of one runner. timeline: committed NewOrders per
    TIMELINE_STEP_SECONDS bucket, keyed by bucket index from the start of the measured
    window (negative = warmup)."""
    executed = sum(s.counts["committed"] + s.counts["rollbacks"] for s in stats.values())
    tpmc = 60.0 * stats[NEW_ORDER].counts["committed"] / measured_seconds if measured_seconds else 0.0
    return {
        "tpmC": round(tpmc, 2),
        "efficiency": round(efficiency(tpmc, warehouses), 2),
        "measured_seconds": round(measured_seconds, 3),
        "warehouses": warehouses,
        "clients": clients,
        "transactions": {t: stats[t].to_dict(executed) for t in TRANSACTIONS},
        "totals": {**{k: sum(s.counts[k] for s in stats.values()) for k in OUTCOMES},
                   "retries": sum(s.retries for s in stats.values())},
        "timeline": timeline_series(timeline),
        **extra,
    }


def timeline_series(timeline: dict[int, int]) -> list[dict[str, float]]:
    return [{"t": b * TIMELINE_STEP_SECONDS, "tpmC": round(n * 60.0 / TIMELINE_STEP_SECONDS, 2)}
            for b, n in sorted(timeline.items())]


def merge_results(docs: list[dict[str, Any]]) -> dict[str, Any]:
    """One document for runner pods that ran the same window against the same database:
    counts and histograms add up, tpmC is the sum of the pods' tpmC, percentiles come from
    the merged histograms (never averaged)."""
    if not docs:
        raise ValueError("no results to merge")
    stats = {t: TypeStats() for t in TRANSACTIONS}
    timeline: dict[int, int] = {}
    for doc in docs:
        for t in TRANSACTIONS:
            stats[t].add(TypeStats.from_dict(doc["transactions"][t]))
        for point in doc.get("timeline", []):
            b = int(point["t"]) // TIMELINE_STEP_SECONDS
            timeline[b] = timeline.get(b, 0) + round(point["tpmC"] * TIMELINE_STEP_SECONDS / 60.0)
    first = docs[0]
    warehouses = first["warehouses"]
    tpmc = sum(d["tpmC"] for d in docs)
    measured = max(d["measured_seconds"] for d in docs)
    merged = build_results(stats, measured, warehouses, sum(d["clients"] for d in docs),
                           timeline, {k: v for k, v in first.items() if k not in _COMPUTED})
    merged["tpmC"] = round(tpmc, 2)
    merged["efficiency"] = round(efficiency(tpmc, warehouses), 2)
    merged["start"] = min(d["start"] for d in docs)
    merged["end"] = max(d["end"] for d in docs)
    merged["pods"] = len(docs)
    merged["pod_tpmC"] = [d["tpmC"] for d in docs]
    ledgers = [d["durability"] for d in docs if "durability" in d]
    if ledgers:
        merged["durability"] = merge_durability(ledgers)
    return merged


DURABILITY_COUNTS = ("acknowledged", "found", "lost", "unknown_outcome")


def merge_durability(reports: list[dict[str, Any]]) -> dict[str, Any]:
    """Ledger verifications of several pods: counts add up, examples are kept up to 10."""
    out: dict[str, Any] = {k: sum(int(r[k]) for r in reports) for k in DURABILITY_COUNTS}
    out["lost_examples"] = [e for r in reports for e in r.get("lost_examples", [])][:10]
    out["pods"] = len(reports)
    return out


_COMPUTED = {"tpmC", "efficiency", "measured_seconds", "warehouses", "clients", "transactions",
             "totals", "timeline", "start", "end", "shard", "durability"}


def summary(doc: dict[str, Any]) -> str:
    """One screen for a human (stderr)."""
    lines = [f"tpmC {doc['tpmC']:.1f}  efficiency {doc['efficiency']:.1f}%  "
             f"({doc['warehouses']} warehouses, {doc['clients']} clients, "
             f"{doc['measured_seconds']:.0f} s measured)",
             f"{'transaction':<13}{'executed':>9}{'mix%':>7}{'rollbk':>7}{'errors':>7}"
             f"{'unknown':>8}{'retries':>8}{'p50ms':>9}{'p95ms':>9}{'p99ms':>9}{'maxms':>9}"]
    for t in TRANSACTIONS:
        s = doc["transactions"][t]
        lat = s["latency_ms"]
        lines.append(f"{t:<13}{s['executed']:>9}{s['mix_percent']:>7.1f}{s['rollbacks']:>7}"
                     f"{s['errors']:>7}{s['unknown']:>8}{s['retries']:>8}{lat['p50']:>9.2f}"
                     f"{lat['p95']:>9.2f}{lat['p99']:>9.2f}{lat['max']:>9.2f}")
    return "\n".join(lines)
