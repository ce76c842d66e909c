"""What a YCSB run measured, kept and reported as YCSB does: per measurement name (READ, UPDATE,
INSERT, SCAN, READ-MODIFY-WRITE; a failed operation's latency under NAME-FAILED, as YCSB's
DBWrapper names it) an HdrHistogram of latencies in microseconds and the count of each Return
status; printed in YCSB's text format (TextMeasurementsExporter with OneMeasurementHdrHistogram's
lines) and as the same numbers in JSON.

TRANSACTION is the runner's own: one per operationspertransaction group, commit included."""

from __future__ import annotations

import array
import bisect
import functools
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from ..results import decode_histogram, mean_us, new_histogram, percentiles_us, record_latency

OK, ERROR, NOT_FOUND, BATCHED_OK, UNEXPECTED_STATE = "OK", "ERROR", "NOT_FOUND", "BATCHED_OK", "UNEXPECTED_STATE"
SUCCEEDED = (OK, BATCHED_OK)  # YCSB's Status.isOk
ORDER = ("READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE", "TRANSACTION")


@dataclass
class Measurement:
    histogram: Any = field(default_factory=new_histogram)
    statuses: Counter = field(default_factory=Counter)


class Measurements:
    def __init__(self):
        self.by_name: dict[str, Measurement] = {}

    def _of(self, name: str) -> Measurement:
        if name not in self.by_name:
            self.by_name[name] = Measurement()
        return self.by_name[name]

    def measure(self, name: str, status: str, seconds: float, report_status: bool = True) -> None:
        """One operation: its latency under name (name-FAILED unless it succeeded) and, as YCSB's
        reportStatus, its Return status under name."""
        record_latency(self._of(name if status in SUCCEEDED else f"{name}-FAILED").histogram, seconds)
        if report_status:
            self._of(name).statuses[status] += 1

    def count_status(self, name: str, status: str, count: int) -> None:
        """count operations of name returned status (the compiled loop's counts)."""
        self._of(name).statuses[status] += count

    def record_latencies(self, name: str, latencies: Iterable[tuple[int, int]]) -> None:
        """(microseconds, count) pairs into name's histogram, as measure records seconds (the
        compiled loop's: it clamps them to the histogram's range as record_latency does)."""
        histogram = self._of(name).histogram
        for micros, count in latencies:
            histogram.record_value(micros, count)

    def add(self, other: Measurements) -> None:
        for name, m in other.by_name.items():
            mine = self._of(name)
            if m.histogram.get_total_count():  # hdrh's add of an empty histogram sets the minimum to 0
                mine.histogram.add(m.histogram)
            mine.statuses.update(m.statuses)

    def names(self) -> list[str]:
        def rank(name: str) -> tuple[int, str]:
            base = name.removesuffix("-FAILED")
            return (ORDER.index(base) if base in ORDER else len(ORDER), name)

        return sorted(self.by_name, key=rank)

    def summary(self, name: str) -> dict[str, Any]:
        """OneMeasurementHdrHistogram's numbers (microseconds; the percentiles YCSB prints with
        hdrhistogram.percentiles=50,95,99) and the Return counts."""
        m = self.by_name[name]
        h = m.histogram
        count = h.get_total_count()
        at = percentiles_us(h, (50, 95, 99)) if count else dict.fromkeys((50, 95, 99), 0)
        return {
            "Operations": count,
            "AverageLatency(us)": mean_us(h) if count else 0.0,
            "MinLatency(us)": h.get_min_value() if count else 0,
            "MaxLatency(us)": h.get_max_value() if count else 0,
            **{f"{p}thPercentileLatency(us)": at[p] for p in (50, 95, 99)},
            "Return": dict(sorted(m.statuses.items())),
        }

    def to_json(self) -> dict[str, Any]:
        return {
            name: {**self.summary(name), "histogram": self.by_name[name].histogram.encode().decode()}
            for name in self.names()
        }

    def to_wire(self) -> dict[str, Any]:
        """What from_json needs, for a client process to send its parent: each measurement's
        HdrHistogram encoded (exact: decoded, it adds as the original would) and Return counts."""
        return {
            name: {"histogram": m.histogram.encode().decode(), "Return": dict(m.statuses)}
            for name, m in self.by_name.items()
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Measurements:
        ms = cls()
        for name, d in doc.items():
            ms.by_name[name] = Measurement(decode_histogram(d["histogram"]), Counter(d["Return"]))
        return ms


def live_counts(of: Iterable[Measurements]) -> dict[tuple[str, str], int]:
    """(measurement, Return status) -> count over the threads' measurements, while they run: each
    copy of a dict is one step under the interpreter lock, so a thread adding a key cannot break it."""
    counts: Counter = Counter()
    for measurements in of:
        for name, m in list(measurements.by_name.items()):
            for status, n in dict(m.statuses).items():
                counts[name, status] += n
    return dict(counts)


def live_total(of: Iterable[Measurements]) -> Measurements:
    """The threads' measurements added while they run (a client process's report to its parent):
    as live_counts, each dict copied in one step, so a thread adding a measurement or a status
    cannot break the loop; each histogram is added by one C call (hdrh's encoder)."""
    total = Measurements()
    for measurements in of:
        for name, m in list(measurements.by_name.items()):
            mine = total._of(name)
            if m.histogram.get_total_count():
                mine.histogram.add(m.histogram)
            mine.statuses.update(dict(m.statuses))
    return total


@dataclass
class Buckets:
    """A Prometheus histogram of one measurement: cumulative counts at each bound (seconds) and
    at +Inf, and the sum of the latencies in seconds."""

    cumulative: list[int]
    sum_seconds: float


@functools.cache
def _midpoints_us(counts_len: int) -> tuple[float, ...]:
    """The value each counts-array slot stands for (the middle of its equivalence range, as
    HdrHistogram's mean takes it); every histogram of the runner has the same layout."""
    h = new_histogram()
    assert h.counts_len == counts_len
    return tuple(float(h._hdr_median_equiv_value(h.get_value_from_index(i))) for i in range(counts_len))


_NONZERO_BYTE = re.compile(rb"[^\x00]")


def _recorded(histogram: Any) -> list[tuple[int, int]]:
    """(slot, count) of the non-zero counts, from one copy of the array (the thread may record
    while it is read, which never lowers a count); found at C speed: a scrape stays cheap."""
    raw = bytes(histogram.counts)
    counts = array.array("Q")
    counts.frombytes(raw)
    width = counts.itemsize
    return [(i, counts[i]) for i in sorted({m.start() // width for m in _NONZERO_BYTE.finditer(raw)})]


def live_buckets(of: Iterable[Measurements], bounds: tuple[float, ...]) -> dict[str, Buckets]:
    """Each measurement's HdrHistogram (added over the threads, while they run) in Prometheus's
    buckets: a value is counted at a bound when it is at most the highest value HdrHistogram
    holds equivalent to the bound (below 2,048 us values are exact; above, within 0.1 %).
    Pure Python over the non-zero counts (numpy stays out of the runner's processes)."""
    layout = new_histogram()
    slots = [layout.get_counts_array_index(round(bound * 1_000_000)) for bound in bounds]
    middle = _midpoints_us(layout.counts_len)
    out: dict[str, Buckets] = {}
    for measurements in of:
        for name, m in list(measurements.by_name.items()):
            recorded = _recorded(m.histogram)
            buckets = out.setdefault(name, Buckets([0] * (len(bounds) + 1), 0.0))
            for i, n in recorded:
                for k in range(bisect.bisect_left(slots, i), len(slots) + 1):
                    buckets.cumulative[k] += n
                buckets.sum_seconds += n * middle[i] / 1_000_000
    return out


def java_double(value: float) -> str:
    """Double.toString: plain between 10^-3 and 10^7, else computerized scientific (1.5E7)."""
    if value == 0 or 1e-3 <= abs(value) < 1e7:
        return repr(float(value))
    mantissa, exponent = format(Decimal(repr(float(value))).normalize(), "E").split("E")
    return f"{mantissa if '.' in mantissa else mantissa + '.0'}E{int(exponent)}"


def status_summary(operations: int, runtime_ms: int, ms: Measurements) -> dict[str, Any]:
    """The few numbers a BenchmarkRun's status holds: throughput and, per operation, how many were
    attempted, the mean and percentiles of the successful ones in milliseconds and the failures
    (any Return but OK, BATCHED_OK and NOT_FOUND)."""
    per_operation = {}
    for name in ms.names():
        if name.endswith("-FAILED"):
            continue
        s = ms.summary(name)
        failures = sum(n for status, n in s["Return"].items() if status not in (*SUCCEEDED, NOT_FOUND))
        # Operations counts the successes only (failures are timed under NAME-FAILED)
        attempted = sum(s["Return"].values()) or s["Operations"]
        per_operation[name] = {
            "count": attempted,
            "averageMs": round(s["AverageLatency(us)"] / 1000, 3),
            **{f"p{p}Ms": s[f"{p}thPercentileLatency(us)"] / 1000 for p in (50, 95, 99)},
            "errors": failures,
        }
    return {
        "opsPerSecond": round(overall(operations, runtime_ms)["Throughput(ops/sec)"], 1),
        "operations": per_operation,
    }


def overall(operations: int, runtime_ms: int) -> dict[str, float]:
    return {"RunTime(ms)": runtime_ms, "Throughput(ops/sec)": 1000.0 * operations / runtime_ms if runtime_ms else 0.0}


def ycsb_text(operations: int, runtime_ms: int, ms: Measurements) -> str:
    """YCSB's own output: [OVERALL] then one block per measurement, `[NAME], Key, value` lines."""
    over = overall(operations, runtime_ms)
    lines = [
        f"[OVERALL], RunTime(ms), {runtime_ms}",
        f"[OVERALL], Throughput(ops/sec), {java_double(over['Throughput(ops/sec)'])}",
    ]
    for name in ms.names():
        summary = ms.summary(name)
        returns = summary.pop("Return")
        for key, value in summary.items():
            lines.append(f"[{name}], {key}, {java_double(value) if isinstance(value, float) else value}")
        lines.extend(f"[{name}], Return={status}, {count}" for status, count in returns.items())
    return "\n".join(lines)
