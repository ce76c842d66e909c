"""Latencies as HdrHistograms (microseconds, 1 us .. 1 h, 3 significant digits): how both
workloads' result documents record, encode and summarise them, so that a merge of several runner
pods' documents adds their histograms and takes percentiles of all operations."""

from __future__ import annotations

from collections.abc import Iterable

from hdrh.histogram import HdrHistogram

PERCENTILES = (50, 75, 90, 95, 99)
# Latencies are recorded in microseconds, 1 us .. 1 h, 3 significant digits.
_LOWEST_US, _HIGHEST_US, _DIGITS = 1, 3600 * 1_000_000, 3


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
