"""The regression judge: this run's figures against a baseline taken from the run history
(BenchmarkResults) or from fixed numbers -> Pass / Regressed / Improved / Inconclusive / Failed,
with each metric's value, baseline and delta; with spec.regression.changePoints, also the change
points of the history (E-Divisive, `tpcc changepoints` in the runner image) that the run is at.

Pure: the timer lists the history and has the history analysed; this module only decides (it
reads the analysis as JSON: numpy and the analysis library stay out of the operator). A run that
lost an acknowledged order or violated a consistency condition is Failed whatever its
throughput, and a failed or regressed result is never a baseline.
"""

from __future__ import annotations

import hashlib
import json
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from . import runspec
from .runstatus import Baseline, ChangePointJudged, Consistency, Durability, MetricJudged, Regression

PASS, REGRESSED, IMPROVED, INCONCLUSIVE, FAILED = "Pass", "Regressed", "Improved", "Inconclusive", "Failed"
VERDICTS = (PASS, REGRESSED, IMPROVED, INCONCLUSIVE, FAILED)
# Results whose figures may serve as a baseline: the run succeeded and was not a regression.
BASELINE_VERDICTS = (PASS, IMPROVED, INCONCLUSIVE)
NO_DATA = "NoData"  # a metric the run or the baseline lacks: not compared

TPMC = "tpmC"
OPS_PER_SECOND = "opsPerSecond"  # a YCSB run's throughput
P99_PREFIX = "p99Ms/"

# Workload fields that shape only the load, the connection or the run's own pass/fail gate,
# not what is measured.
NOT_COMPARED = ("loadWorkers", "loadTimeoutSeconds", "connectTimeoutSeconds", "resetBeforeLoad", "maxErrorPercent")


def comparison_hash(spec: runspec.RunSpec) -> str:
    """What two runs must share to be compared: the database type, the workload, the runner pods
    and the faults. Not the database's image, version, chart values or topology — those are what
    a change under test alters — and not runToken, cleanup, regression or history. Defined over
    the spec's JSON, as recorded in every BenchmarkResult (comparisonHash)."""
    workload = {k: v for k, v in spec.section("workload").items() if k not in NOT_COMPARED}
    runners = spec.section("runners")
    compared = {
        "database": spec.database.type,
        "workload": workload,
        "runners": {"parallelism": runners.get("parallelism"), "resources": runners.get("resources")},
        "faults": spec.section("faults") or [],
    }
    if spec.verify.during_run:  # its reads compete with the measured transactions
        compared["verify"] = {"duringRun": True}
    return hashlib.sha256(json.dumps(compared, sort_keys=True).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class FixedBaseline:
    """Numbers given in the spec instead of a history (or the median of the history's)."""

    throughput: float | None = None
    p99_ms: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class ChangePointPolicy:
    """spec.regression.changePoints, defaulted (absent or enabled: false is no policy)."""

    min_history: int  # fewer earlier comparable results: the change points say nothing
    max_pvalue: float  # the significance a change point needs (tpcc changepoints --max-pvalue)
    recent_results: int  # a change point judges while its new level holds at most this many results

    @classmethod
    def from_spec(cls, change_points: runspec.ChangePoints | None) -> ChangePointPolicy | None:
        if change_points is None or not change_points.enabled:
            return None
        return cls(
            min_history=change_points.min_history,
            max_pvalue=change_points.max_p_value,
            recent_results=change_points.recent_results,
        )


@dataclass(frozen=True)
class Policy:
    """spec.regression as the judge reads it (the CRD holds the defaults)."""

    min_results: int  # fewer comparable passing results: Inconclusive
    max_tpmc_drop_percent: float
    max_p99_increase_percent: dict[str, float]
    on_regression: str  # Fail | Warn
    change_points: ChangePointPolicy | None
    # baseline: the median of the `previous` most recent passing comparable results (3 when
    # the spec names no baseline: the CRD cannot default one of three exclusive fields), or
    # one named BenchmarkResult, or fixed numbers
    previous: int = 3
    result: str | None = None
    fixed: FixedBaseline | None = None

    @classmethod
    def from_spec(cls, regression: runspec.Regression | None) -> Policy | None:
        """None without spec.regression (nothing is compared)."""
        if regression is None:
            return None
        baseline = regression.baseline_or_defaults
        if sum(x is not None for x in (baseline.previous, baseline.result, baseline.fixed)) > 1:
            raise ValueError("spec.regression.baseline: give one of previous, result, fixed")
        fixed = baseline.fixed
        return cls(
            previous=cls.previous if baseline.previous is None else baseline.previous,
            min_results=baseline.min_results,
            result=baseline.result,
            fixed=FixedBaseline(fixed.tpm_c, dict(fixed.p99_ms or {})) if fixed else None,
            max_tpmc_drop_percent=regression.max_tpm_c_drop_percent,
            max_p99_increase_percent=dict(regression.max_p99_increase_percent),
            on_regression=regression.on_regression,
            change_points=ChangePointPolicy.from_spec(regression.change_points),
        )


@dataclass(frozen=True)
class Figures:
    """A run's measured figures as its workload reads them from the status
    (workloads.Workload.figures): its throughput and each type's p99."""

    throughput: float | None
    metric: str  # what throughput is: tpmC | opsPerSecond
    p99_ms: dict[str, float] = field(default_factory=dict)  # transaction (YCSB: operation) type -> p99


@dataclass(frozen=True)
class Summary:
    """The comparable figures of one run (the run judged, or a BenchmarkResult of the history)."""

    name: str
    comparison_hash: str
    throughput: float | None  # tpmC, or a YCSB run's operations per second
    p99_ms: dict[str, float] = field(default_factory=dict)  # transaction (YCSB: operation) type -> p99
    failed: bool = False  # the run ended Failed (any reason)
    durable: bool | None = None  # None: not verified
    consistent: bool | None = None  # None: not checked
    verdict: str = ""  # the result's own verdict (history); "" for the run judged
    completed: str = ""  # RFC 3339; orders the history
    throughput_metric: str = TPMC  # what throughput is: tpmC | opsPerSecond

    @classmethod
    def of_status(cls, name: str, comparison_hash_: str, status: dict, figures: Figures) -> Summary:
        """This run's figures (its workload's reading of its status) and verdicts."""
        durability = Durability.in_status(status, "durability")
        consistency = Consistency.in_status(status, "consistency")
        return cls(
            name=name,
            comparison_hash=comparison_hash_,
            throughput=figures.throughput,
            p99_ms=figures.p99_ms,
            failed=status.get("phase") == "Failed",
            durable=durability.verdict if durability else None,
            consistent=consistency.passed if consistency else None,
            completed=status.get("completionTime", ""),
            throughput_metric=figures.metric,
        )


def p99_of(latencies: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """type -> p99 latency (ms) of the transaction or operation types given (those that ran)."""
    return {t: float(ms["p99"]) for t, ms in latencies.items() if ms.get("p99") is not None}


@dataclass(frozen=True)
class MetricVerdict:
    name: str  # tpmC | p99Ms/<TYPE>
    value: float | None
    baseline: float | None
    delta_percent: float | None
    limit_percent: float
    outcome: str  # Pass | Regressed | Improved | NoData

    def to_status(self) -> MetricJudged:
        def rounded(v: float | None) -> float | None:
            return None if v is None else round(v, 3)

        return MetricJudged(
            name=self.name,
            limit_percent=self.limit_percent,
            outcome=self.outcome,
            value=rounded(self.value),
            baseline=rounded(self.baseline),
            delta_percent=rounded(self.delta_percent),
        )


@dataclass(frozen=True)
class ChangePointVerdict:
    """A change point of the history that judges the run: the last of its metric, whose new
    level the run belongs to."""

    metric: str  # tpmC | p99Ms/<TYPE>
    result: str  # the BenchmarkResult (or this run) the new level begins with
    results_since: int  # results at the new level, this run included
    mean_before: float
    mean_after: float
    change_percent: float  # (mean after - mean before) / mean before
    pvalue: float
    limit_percent: float
    outcome: str  # Pass | Regressed | Improved

    def to_status(self) -> ChangePointJudged:
        return ChangePointJudged(
            metric=self.metric,
            result=self.result,
            results_since=self.results_since,
            mean_before=round(self.mean_before, 3),
            mean_after=round(self.mean_after, 3),
            change_percent=round(self.change_percent, 3),
            p_value=float(f"{self.pvalue:.3g}"),
            limit_percent=self.limit_percent,
            outcome=self.outcome,
        )

    def describe(self) -> str:
        return (
            f"change point at {self.result}: {self.metric} {self.change_percent:+.1f}% "
            f"(limit {self.limit_percent:g}%, p {self.pvalue:.2g}, {self.results_since} result(s) since)"
        )


@dataclass(frozen=True)
class Verdict:
    outcome: str  # one of VERDICTS
    message: str
    source: str = "none"  # previous | result | fixed | none
    baseline_results: tuple[str, ...] = ()
    metrics: tuple[MetricVerdict, ...] = ()
    change_points: tuple[ChangePointVerdict, ...] | None = None  # None: no spec.regression.changePoints

    def to_status(self, comparison_hash_: str, on_regression: str) -> Regression:
        """status.regression (the verdict itself is status.verdict)."""
        change_points = self.change_points
        return Regression(
            message=self.message,
            comparison_hash=comparison_hash_,
            on_regression=on_regression,
            baseline=Baseline(source=self.source, results=self.baseline_results),
            metrics=tuple(m.to_status() for m in self.metrics),
            change_points=None if change_points is None else tuple(c.to_status() for c in change_points),
        )


def _failure(run: Summary) -> str | None:
    """Why the run counts as failed whatever its throughput, or None."""
    if run.durable is False:
        return "acknowledged NewOrders were lost"
    if run.consistent is False:
        return "a consistency condition was violated"
    if run.failed:
        return "the run failed"
    if run.throughput is None:
        return "the run has no results"
    return None


def _compare(
    name: str, value: float | None, baseline: float | None, limit: float, higher_is_better: bool
) -> MetricVerdict:
    if value is None or not baseline:  # a zero baseline gives no percentage
        return MetricVerdict(name, value, baseline, None, limit, NO_DATA)
    delta = (value - baseline) / baseline * 100.0
    worse = -delta if higher_is_better else delta
    outcome = REGRESSED if worse > limit else IMPROVED if worse < -limit else PASS
    return MetricVerdict(name, value, baseline, delta, limit, outcome)


def _median(values: list[float]) -> float:
    """The median of at least one value."""
    return statistics.median(values)


def baseline_of(
    run: Summary, history: list[Summary], policy: Policy, named: Summary | None
) -> tuple[str, list[Summary], FixedBaseline | None, str]:
    """(source, the results used, the baseline figures or None, why None)."""
    if policy.fixed is not None:
        return "fixed", [], policy.fixed, ""
    if policy.result is not None:
        if named is None:
            return "result", [], None, f"baseline result {policy.result} not found"
        if named.verdict not in BASELINE_VERDICTS:
            return "result", [named], None, f"baseline result {named.name} is {named.verdict or 'unjudged'}"
        return "result", [named], FixedBaseline(named.throughput, dict(named.p99_ms)), ""
    comparable = sorted(
        (
            h
            for h in history
            if h.name != run.name
            and h.comparison_hash == run.comparison_hash
            and h.verdict in BASELINE_VERDICTS
            and h.throughput is not None
        ),
        key=lambda h: h.completed,
        reverse=True,
    )[: policy.previous]
    if len(comparable) < policy.min_results:
        return (
            "previous",
            comparable,
            None,
            (f"{len(comparable)} comparable passing result(s) in the history, {policy.min_results} needed"),
        )
    types = {t for h in comparable for t in h.p99_ms}
    figures = FixedBaseline(
        _median([h.throughput for h in comparable if h.throughput is not None]),
        {t: _median([h.p99_ms[t] for h in comparable if t in h.p99_ms]) for t in types},
    )
    return "previous", comparable, figures, ""


def judge(
    run: Summary,
    history: list[Summary],
    policy: Policy | None,
    named: Summary | None = None,
    analysis: dict | None = None,
) -> Verdict:
    """The verdict of `run`. `history`: the BenchmarkResults of this BenchmarkRun; `named`: the
    BenchmarkResult policy.result names, if it exists; `analysis`: changepoints.json of `tpcc
    changepoints` over changepoint_history(run, history, now), None when not analysed (needed
    only with policy.change_points and at least min_history earlier comparable results)."""
    failure = _failure(run)
    if failure:
        return Verdict(FAILED, f"{failure}: never compared, never a baseline")
    if policy is None:
        return Verdict(PASS, "no spec.regression: nothing compared")
    verdict = _against_baseline(run, history, policy, named)
    if policy.change_points is None:
        return verdict
    return _with_change_points(verdict, run, history, policy, analysis)


def _against_baseline(run: Summary, history: list[Summary], policy: Policy, named: Summary | None) -> Verdict:
    source, used, figures, why = baseline_of(run, history, policy, named)
    names = tuple(h.name for h in used)
    if figures is None:
        return Verdict(INCONCLUSIVE, why, source, names)
    metrics = [
        _compare(
            run.throughput_metric,
            run.throughput,
            figures.throughput,
            policy.max_tpmc_drop_percent,
            higher_is_better=True,
        )
    ]
    for type_, limit in sorted(policy.max_p99_increase_percent.items()):
        metrics.append(
            _compare(
                P99_PREFIX + type_, run.p99_ms.get(type_), figures.p99_ms.get(type_), limit, higher_is_better=False
            )
        )
    compared = [m for m in metrics if m.outcome != NO_DATA]
    against = {
        "fixed": "the fixed baseline",
        "result": f"result {names[0] if names else ''}",
        "previous": f"the median of {len(used)} previous result(s)",
    }[source]
    if not compared:
        return Verdict(INCONCLUSIVE, f"no metric could be compared with {against}", source, names, tuple(metrics))
    regressed = [m for m in compared if m.outcome == REGRESSED]
    improved = [m for m in compared if m.outcome == IMPROVED]
    outcome = REGRESSED if regressed else IMPROVED if improved else PASS
    shown = regressed or improved or compared
    detail = ", ".join(f"{m.name} {m.delta_percent:+.1f}% (limit {m.limit_percent:g}%)" for m in shown)
    return Verdict(outcome, f"{outcome}: {detail} against {against}", source, names, tuple(metrics))


# ---- change points -------------------------------------------------------------------------------


def changepoint_history(run: Summary, history: list[Summary], now: str) -> list[dict[str, Any]]:
    """What `tpcc changepoints --history` reads for `run`: its comparable measured results (the
    same comparison hash, none that failed), oldest first, and the run itself last (at its
    completion time, or `now` before it has one). Regressed results are in: they measured the
    level whose changes are sought, as a new normal would."""
    earlier = sorted(
        (h for h in history if h.name != run.name and h.comparison_hash == run.comparison_hash and _failure(h) is None),
        key=lambda h: (h.completed, h.name),
    )
    # `tpcc changepoints` calls the throughput series tpmC whatever it measures (_change_points_of)
    return [
        {"name": s.name, "time": s.completed or now, "tpmC": s.throughput, "p99Ms": dict(s.p99_ms)}
        for s in [*earlier, run]
    ]


def analysis_input(run: Summary, history: list[Summary], policy: Policy | None, now: str) -> list[dict] | None:
    """What `tpcc changepoints` must analyse before `run` is judged, or None when its change
    points cannot judge it: no changePoints policy, a failed run, or fewer than minHistory earlier
    comparable results (the judge says so without an analysis)."""
    cp = policy.change_points if policy else None
    if cp is None or _failure(run) is not None:
        return None
    points = changepoint_history(run, history, now)
    return points if len(points) - 1 >= cp.min_history else None


def _judged_metrics(run: Summary, policy: Policy) -> list[tuple[str, float | None, float, bool]]:
    """(metric, the run's value, limit, higher is better) of what the policy judges."""
    return [
        (run.throughput_metric, run.throughput, policy.max_tpmc_drop_percent, True),
        *(
            (P99_PREFIX + t, run.p99_ms.get(t), limit, False)
            for t, limit in sorted(policy.max_p99_increase_percent.items())
        ),
    ]


def _change_point_verdict(
    metric: str, found: dict, points: int, value: float, limit: float, higher_is_better: bool
) -> ChangePointVerdict | None:
    """A change beyond the limit judges the run only if the run itself is beyond the limit from
    the old level too: a bad run just before it may have opened a 'new level' the run is not at."""
    before, change = float(found["meanBefore"]), float(found["changePercent"])
    if not before:
        return None
    own = (value - before) / before * 100.0
    sign = -1.0 if higher_is_better else 1.0  # worse is positive
    worse, own_worse = sign * change, sign * own
    outcome = (
        REGRESSED
        if worse > limit and own_worse > limit
        else IMPROVED
        if worse < -limit and own_worse < -limit
        else PASS
    )
    return ChangePointVerdict(
        metric,
        str(found["result"]),
        points - int(found["index"]),
        before,
        float(found["meanAfter"]),
        change,
        float(found["pValue"]),
        limit,
        outcome,
    )


def _change_points_of(
    run: Summary, history: list[Summary], policy: Policy, analysis: dict | None
) -> tuple[list[ChangePointVerdict], str]:
    """The change points that judge the run, or why there are none (too little history needs
    no analysis)."""
    cp = policy.change_points
    assert cp is not None, "judged only with spec.regression.changePoints"
    if analysis_input(run, history, policy, "") is None:
        earlier = len(changepoint_history(run, history, "")) - 1
        return [], f"change points: {earlier} earlier comparable result(s), {cp.min_history} needed"
    if analysis is None:
        return [], "change points: not analysed"
    if analysis.get("last") != run.name:
        return [], f"change points: the analysis ends at {analysis.get('last')}, not at this run"
    points = int(analysis["points"])
    judged = []
    for metric, value, limit, higher_is_better in _judged_metrics(run, policy):
        series = TPMC if metric == run.throughput_metric else metric  # the analysis's name (changepoint_history)
        found = ((analysis.get("metrics") or {}).get(series) or {}).get("changePoints") or []
        if value is None or not found or points - int(found[-1]["index"]) > cp.recent_results:
            continue
        verdict = _change_point_verdict(metric, found[-1], points, value, limit, higher_is_better)
        if verdict is not None:
            judged.append(verdict)
    return judged, "" if judged else f"no change point in the last {cp.recent_results} results"


def _with_change_points(
    verdict: Verdict, run: Summary, history: list[Summary], policy: Policy, analysis: dict | None
) -> Verdict:
    """The baseline's verdict with the change points the run is at: either side regressed is
    Regressed, else either improved is Improved, else the baseline's verdict stands."""
    judged, why_none = _change_points_of(run, history, policy, analysis)
    outcomes = {verdict.outcome, *(c.outcome for c in judged)}
    outcome = REGRESSED if REGRESSED in outcomes else IMPROVED if IMPROVED in outcomes else verdict.outcome
    shown = [c for c in judged if c.outcome == outcome] or judged
    said = "; ".join(c.describe() for c in shown) or why_none
    message = (
        f"{verdict.message}; {said}"
        if outcome == verdict.outcome
        else f"{outcome}: {said}; the baseline comparison: {verdict.message}"
    )
    return replace(verdict, outcome=outcome, message=message, change_points=tuple(judged))
