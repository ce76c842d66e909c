"""Change points of a run history, per metric (tpmC and the p99 latency of each transaction
type): Apache Otava's E-Divisive in Hunter's form (sliding windows, each split confirmed by a
Student's t-test instead of random permutations, so the same history always gives the same
change points). A level that held for one run inside the history is an outlier, not a change
(_without_one_run_levels); the last run alone can still open a new segment, as nothing after it
tells it from an outlier yet: what a change at the run judged means is the judge's to say.

Pure: a typed history in, the change points out; `tpcc changepoints` reads and writes the JSON
(changepoints.json). The operator never imports this module, so numpy and scipy stay out of its
process: it only reads the analysis (tpcc_operator.regression.judge).
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field
from typing import Any

# The operator's metric names (tpcc_operator.regression): the judge looks the metrics up by them.
TPMC = "tpmC"
P99_PREFIX = "p99Ms/"
MAX_PVALUE = 0.001  # Otava's default significance
WINDOW = 50  # Otava's default sliding window, as long as the default history (spec.history.limit)
LIBRARY = "apache-otava"


@dataclass(frozen=True)
class HistoryPoint:
    """One measured run: a BenchmarkResult, or the run being judged (the last point)."""

    name: str  # the BenchmarkResult's name
    time: str  # RFC 3339 completion time; the history is oldest first
    tpmc: float | None
    p99_ms: dict[str, float] = field(default_factory=dict)  # transaction type -> p99 latency

    @classmethod
    def from_json(cls, doc: Any, where: str) -> HistoryPoint:
        if not isinstance(doc, dict) or not isinstance(doc.get("name"), str) or not isinstance(doc.get("time"), str):
            raise ValueError(f"{where}: expected an object with name and time (RFC 3339), got {str(doc)[:80]}")
        p99 = doc.get("p99Ms") or {}
        if not isinstance(p99, dict):
            raise ValueError(f"{where} ({doc['name']}): p99Ms must map transaction types to milliseconds")
        try:
            return cls(
                doc["name"],
                doc["time"],
                float(doc["tpmC"]) if doc.get("tpmC") is not None else None,
                {str(t): float(v) for t, v in p99.items() if v is not None},
            )
        except (TypeError, ValueError):
            raise ValueError(f"{where} ({doc['name']}): tpmC and p99Ms values must be numbers") from None

    def metrics(self) -> dict[str, float]:
        values = {TPMC: self.tpmc, **{P99_PREFIX + t: v for t, v in self.p99_ms.items()}}
        return {k: v for k, v in values.items() if v is not None and math.isfinite(v)}


@dataclass(frozen=True)
class ChangePoint:
    """Where a metric's level moved: `index` (0 = oldest) is the first point of the new segment."""

    metric: str
    index: int
    name: str
    time: str
    mean_before: float
    mean_after: float
    stddev_before: float
    stddev_after: float
    change_percent: float  # (mean after - mean before) / mean before, in percent
    pvalue: float  # the t-test's: the two segments have the same mean

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "result": self.name,
            "time": self.time,
            "meanBefore": self.mean_before,
            "meanAfter": self.mean_after,
            "stddevBefore": self.stddev_before,
            "stddevAfter": self.stddev_after,
            "changePercent": self.change_percent,
            "pValue": self.pvalue,
        }


@dataclass(frozen=True)
class Analysis:
    points: int  # length of the history, the run judged included
    last: str  # name of the last point (the run judged)
    max_pvalue: float
    window: int
    library: str  # e.g. apache-otava 0.8.0
    metric_points: dict[str, int]  # metric -> points that have it
    change_points: dict[str, list[ChangePoint]]  # metric -> oldest first

    def to_json(self) -> dict[str, Any]:
        return {
            "library": self.library,
            "maxPValue": self.max_pvalue,
            "window": self.window,
            "points": self.points,
            "last": self.last,
            "metrics": {
                m: {"points": n, "changePoints": [c.to_json() for c in self.change_points[m]]}
                for m, n in sorted(self.metric_points.items())
            },
        }


def parse_history(doc: Any) -> list[HistoryPoint]:
    """The points of a history document: a JSON list, oldest first."""
    if not isinstance(doc, list):
        raise ValueError("the history must be a JSON list of points ({name, time, tpmC, p99Ms}), oldest first")
    points = [HistoryPoint.from_json(p, f"point {i}") for i, p in enumerate(doc)]
    for a, b in zip(points, points[1:]):
        if _instant(b.time) < _instant(a.time):
            raise ValueError(f"the history must be oldest first: {b.name} ({b.time}) follows {a.name} ({a.time})")
    return points


def _instant(text: str) -> float:
    try:
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise ValueError(f"not a RFC 3339 time: {text!r}") from None


def _otava():
    """Otava's analysis module, imported when first needed: `tpcc run` and its client processes
    never load numpy and scipy."""
    try:
        from otava import analysis
    except ImportError as e:
        raise ImportError(
            f"change points need Apache Otava ({e}): install tpcc-runner[changepoints] and "
            "apache-otava as runner-image/pyproject.toml says"
        ) from None
    return analysis


def analyze(history: list[HistoryPoint], max_pvalue: float = MAX_PVALUE, window: int = WINDOW) -> Analysis:
    """The change points of every metric of the history (oldest first). A point lacking a metric
    is left out of that metric's series, not filled in."""
    if not history:
        raise ValueError("an empty history has no change points")
    otava = _otava()
    series: dict[str, list[tuple[int, float]]] = {}
    for i, point in enumerate(history):
        for metric, value in point.metrics().items():
            series.setdefault(metric, []).append((i, value))
    found: dict[str, list[ChangePoint]] = {}
    for metric, indexed in series.items():
        values = [v for _, v in indexed]
        change_points = otava.compute_change_points(values, window_len=window, max_pvalue=max_pvalue)[0]
        change_points = _without_one_run_levels(otava, values, change_points, max_pvalue)
        found[metric] = [
            _change_point(metric, history[indexed[c.index][0]], indexed[c.index][0], c.stats) for c in change_points
        ]
    return Analysis(
        points=len(history),
        last=history[-1].name,
        max_pvalue=max_pvalue,
        window=window,
        library=f"{LIBRARY} {_version(LIBRARY)}",
        metric_points={m: len(v) for m, v in series.items()},
        change_points=found,
    )


def _version(library: str) -> str:
    # importlib.metadata here, not at the top: every `tpcc` process imports this module (for
    # its parser's default), and the metadata machinery costs each about 20 ms of CPU
    import importlib.metadata

    return importlib.metadata.version(library)


def _without_one_run_levels(otava, values: list[float], change_points: list, max_pvalue: float) -> list:
    """Otava may enclose one run far off its neighbours between two change points: a level that
    held for one run, which is an outlier (a noisy neighbour, a slow node), not a change. The two
    become the better single change point of the two (the outlier joins the segment before or
    after it: the level may still have moved there), and Otava's merge step drops whatever is
    no longer significant, recomputing its neighbours."""
    tester = otava.TTestSignificanceTester(max_pvalue)

    def with_stats(points: list) -> list:
        intervals = tester.get_intervals(points)
        return [tester.change_point(c.to_candidate(), values, intervals) for c in points]

    while True:
        i = next(
            (i for i in range(len(change_points) - 1) if change_points[i + 1].index == change_points[i].index + 1), None
        )
        if i is None:
            return otava.merge(change_points, values, max_pvalue, 0.0)
        joins_before = with_stats(change_points[:i] + change_points[i + 1 :])
        joins_after = with_stats(change_points[: i + 1] + change_points[i + 2 :])
        change_points = min(joins_before, joins_after, key=lambda points: points[i].stats.pvalue)


def _change_point(metric: str, point: HistoryPoint, index: int, stats) -> ChangePoint:
    return ChangePoint(
        metric=metric,
        index=index,
        name=point.name,
        time=point.time,
        mean_before=float(stats.mean_before()),
        mean_after=float(stats.mean_after()),
        stddev_before=float(stats.stddev_before()),
        stddev_after=float(stats.stddev_after()),
        change_percent=float(stats.forward_change_percent()),
        pvalue=float(stats.pvalue),
    )
