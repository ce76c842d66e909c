"""What a YCSB run measured, as its results document carries it: per measurement name (READ,
UPDATE, INSERT, SCAN, READ-MODIFY-WRITE; a failed operation's latency under NAME-FAILED, as YCSB's
DBWrapper names it) an HdrHistogram of latencies in microseconds and the count of each Return
status, with YCSB's summary numbers (OneMeasurementHdrHistogram's).

TRANSACTION is the runner's own: one per operationspertransaction group, commit included."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..histograms import decode_histogram, mean_us, new_histogram, percentiles_us, record_latency

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
