"""What a YCSB run measured (tpcc_contract.ycsb.measurements), while its threads run (live counts
and Prometheus buckets) and printed in YCSB's text format (TextMeasurementsExporter with
OneMeasurementHdrHistogram's lines)."""

from __future__ import annotations

import array
import bisect
import functools
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from tpcc_contract.histograms import new_histogram
from tpcc_contract.ycsb.measurements import NOT_FOUND, SUCCEEDED, Measurements


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
