"""The regression judge: this run's figures against a baseline taken from the run history
(BenchmarkResults) or from fixed numbers -> Pass / Regressed / Improved / Inconclusive / Failed,
with each metric's value, baseline and delta.

Pure: the timer lists the history; this module only decides. A run that lost an acknowledged
order or violated a consistency condition is Failed whatever its throughput, and a failed or
regressed result is never a baseline.
"""
from __future__ import annotations

import hashlib
import json
import statistics
from dataclasses import dataclass, field
from typing import Any

PASS, REGRESSED, IMPROVED, INCONCLUSIVE, FAILED = "Pass", "Regressed", "Improved", "Inconclusive", "Failed"
VERDICTS = (PASS, REGRESSED, IMPROVED, INCONCLUSIVE, FAILED)
# Results whose figures may serve as a baseline: the run succeeded and was not a regression.
BASELINE_VERDICTS = (PASS, IMPROVED, INCONCLUSIVE)
NO_DATA = "NoData"  # a metric the run or the baseline lacks: not compared

TPMC = "tpmC"
P99_PREFIX = "p99Ms/"

# Workload fields that shape only the load or the connection, not what is measured.
LOAD_ONLY = ("loadWorkers", "loadTimeoutSeconds", "connectTimeoutSeconds", "resetBeforeLoad")


def comparison_hash(spec: dict) -> str:
    """What two runs must share to be compared: the database type, the workload, the runner pods
    and the faults. Not the database's image, version, chart values or topology — those are what
    a change under test alters — and not runToken, cleanup, regression or history."""
    workload = {k: v for k, v in (spec.get("workload") or {}).items() if k not in LOAD_ONLY}
    runners = spec.get("runners") or {}
    compared = {"database": (spec.get("database") or {}).get("type"), "workload": workload,
                "runners": {"parallelism": runners.get("parallelism"), "resources": runners.get("resources")},
                "faults": spec.get("faults") or []}
    return hashlib.sha256(json.dumps(compared, sort_keys=True).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class FixedBaseline:
    """Numbers given in the spec instead of a history."""
    tpmc: float | None = None
    p99_ms: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Policy:
    """spec.regression, defaulted."""
    previous: int = 3              # median of the N most recent passing comparable results
    min_results: int = 1           # fewer comparable passing results: Inconclusive
    result: str | None = None      # or one named BenchmarkResult
    fixed: FixedBaseline | None = None  # or fixed numbers
    max_tpmc_drop_percent: float = 10.0
    max_p99_increase_percent: dict[str, float] = field(default_factory=lambda: {"NEW_ORDER": 50.0})
    on_regression: str = "Fail"    # Fail | Warn

    @classmethod
    def from_spec(cls, regression: dict | None) -> "Policy | None":
        """None without spec.regression (nothing is compared)."""
        if regression is None:
            return None
        baseline = regression.get("baseline") or {}
        if sum(k in baseline for k in ("previous", "result", "fixed")) > 1:
            raise ValueError("spec.regression.baseline: give one of previous, result, fixed")
        fixed = baseline.get("fixed")
        defaults = cls()
        return cls(previous=int(baseline.get("previous", defaults.previous)),
                   min_results=int(baseline.get("minResults", defaults.min_results)),
                   result=baseline.get("result"),
                   fixed=FixedBaseline(fixed.get("tpmC"), {k: float(v) for k, v in
                                                           (fixed.get("p99Ms") or {}).items()})
                   if fixed is not None else None,
                   max_tpmc_drop_percent=float(regression.get("maxTpmCDropPercent",
                                                              defaults.max_tpmc_drop_percent)),
                   max_p99_increase_percent={k: float(v) for k, v in regression.get(
                       "maxP99IncreasePercent", defaults.max_p99_increase_percent).items()},
                   on_regression=regression.get("onRegression", defaults.on_regression))


@dataclass(frozen=True)
class Summary:
    """The comparable figures of one run (the run judged, or a BenchmarkResult of the history)."""
    name: str
    comparison_hash: str
    tpmc: float | None
    p99_ms: dict[str, float] = field(default_factory=dict)  # transaction type -> p99 latency
    failed: bool = False            # the run ended Failed (any reason)
    durable: bool | None = None     # None: not verified
    consistent: bool | None = None  # None: not checked
    verdict: str = ""               # the result's own verdict (history); "" for the run judged
    completed: str = ""             # RFC 3339; orders the history

    @classmethod
    def of_status(cls, name: str, comparison_hash_: str, status: dict) -> "Summary":
        """This run's figures from its BenchmarkRun status."""
        results = status.get("results") or {}
        durability = status.get("durability") or {}
        consistency = status.get("consistency") or {}
        p99 = {t: float(v["latencyMs"]["p99"]) for t, v in (results.get("transactions") or {}).items()
               if (v.get("latencyMs") or {}).get("p99") is not None and v.get("executed", 1) > 0}
        return cls(name=name, comparison_hash=comparison_hash_, tpmc=results.get("tpmC"), p99_ms=p99,
                   failed=status.get("phase") == "Failed", durable=durable_of(durability),
                   consistent=consistency["passed"] if "passed" in consistency else None,
                   completed=status.get("completionTime", ""))


def durable_of(durability: dict) -> bool | None:
    """status.durability's verdict; a count of lost orders decides even without `durable` (a
    status schema that prunes the flag must not turn a loss into "not verified")."""
    if durability.get("lost"):
        return False
    return durability.get("durable", True if "lost" in durability else None)


@dataclass(frozen=True)
class MetricVerdict:
    name: str               # tpmC | p99Ms/<TYPE>
    value: float | None
    baseline: float | None
    delta_percent: float | None
    limit_percent: float
    outcome: str            # Pass | Regressed | Improved | NoData

    def to_status(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "limitPercent": self.limit_percent, "outcome": self.outcome}
        for key, v in (("value", self.value), ("baseline", self.baseline), ("deltaPercent", self.delta_percent)):
            if v is not None:  # null in a merge patch deletes: absent instead
                out[key] = round(v, 3)
        return out


@dataclass(frozen=True)
class Verdict:
    outcome: str                      # one of VERDICTS
    message: str
    source: str = "none"              # previous | result | fixed | none
    baseline_results: tuple[str, ...] = ()
    metrics: tuple[MetricVerdict, ...] = ()

    def to_status(self, comparison_hash_: str, on_regression: str) -> dict[str, Any]:
        """status.regression (the verdict itself is status.verdict)."""
        return {"message": self.message, "comparisonHash": comparison_hash_, "onRegression": on_regression,
                "baseline": {"source": self.source, "results": list(self.baseline_results)},
                "metrics": [m.to_status() for m in self.metrics]}


def _failure(run: Summary) -> str | None:
    """Why the run counts as failed whatever its throughput, or None."""
    if run.durable is False:
        return "acknowledged NewOrders were lost"
    if run.consistent is False:
        return "a consistency condition was violated"
    if run.failed:
        return "the run failed"
    if run.tpmc is None:
        return "the run has no results"
    return None


def _compare(name: str, value: float | None, baseline: float | None, limit: float,
             higher_is_better: bool) -> MetricVerdict:
    if value is None or not baseline:  # a zero baseline gives no percentage
        return MetricVerdict(name, value, baseline, None, limit, NO_DATA)
    delta = (value - baseline) / baseline * 100.0
    worse = -delta if higher_is_better else delta
    outcome = REGRESSED if worse > limit else IMPROVED if worse < -limit else PASS
    return MetricVerdict(name, value, baseline, delta, limit, outcome)


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def baseline_of(run: Summary, history: list[Summary], policy: Policy,
                named: Summary | None) -> tuple[str, list[Summary], FixedBaseline | None, str]:
    """(source, the results used, the baseline figures or None, why None)."""
    if policy.fixed is not None:
        return "fixed", [], policy.fixed, ""
    if policy.result is not None:
        if named is None:
            return "result", [], None, f"baseline result {policy.result} not found"
        if named.verdict not in BASELINE_VERDICTS:
            return "result", [named], None, f"baseline result {named.name} is {named.verdict or 'unjudged'}"
        return "result", [named], FixedBaseline(named.tpmc, dict(named.p99_ms)), ""
    comparable = sorted((h for h in history if h.name != run.name and h.comparison_hash == run.comparison_hash
                         and h.verdict in BASELINE_VERDICTS and h.tpmc is not None),
                        key=lambda h: h.completed, reverse=True)[:policy.previous]
    if len(comparable) < policy.min_results:
        return "previous", comparable, None, (f"{len(comparable)} comparable passing result(s) in the history, "
                                              f"{policy.min_results} needed")
    types = {t for h in comparable for t in h.p99_ms}
    figures = FixedBaseline(_median([h.tpmc for h in comparable]),
                            {t: _median([h.p99_ms[t] for h in comparable if t in h.p99_ms]) for t in types})
    return "previous", comparable, figures, ""


def judge(run: Summary, history: list[Summary], policy: Policy | None,
          named: Summary | None = None) -> Verdict:
    """The verdict of `run`. `history`: the BenchmarkResults of this BenchmarkRun; `named`: the
    BenchmarkResult policy.result names, if it exists."""
    failure = _failure(run)
    if failure:
        return Verdict(FAILED, f"{failure}: never compared, never a baseline")
    if policy is None:
        return Verdict(PASS, "no spec.regression: nothing compared")
    source, used, figures, why = baseline_of(run, history, policy, named)
    names = tuple(h.name for h in used)
    if figures is None:
        return Verdict(INCONCLUSIVE, why, source, names)
    metrics = [_compare(TPMC, run.tpmc, figures.tpmc, policy.max_tpmc_drop_percent, higher_is_better=True)]
    for type_, limit in sorted(policy.max_p99_increase_percent.items()):
        metrics.append(_compare(P99_PREFIX + type_, run.p99_ms.get(type_), figures.p99_ms.get(type_), limit,
                                higher_is_better=False))
    compared = [m for m in metrics if m.outcome != NO_DATA]
    against = {"fixed": "the fixed baseline", "result": f"result {names[0] if names else ''}",
               "previous": f"the median of {len(used)} previous result(s)"}[source]
    if not compared:
        return Verdict(INCONCLUSIVE, f"no metric could be compared with {against}", source, names, tuple(metrics))
    regressed = [m for m in compared if m.outcome == REGRESSED]
    improved = [m for m in compared if m.outcome == IMPROVED]
    outcome = REGRESSED if regressed else IMPROVED if improved else PASS
    shown = regressed or improved or compared
    detail = ", ".join(f"{m.name} {m.delta_percent:+.1f}% (limit {m.limit_percent:g}%)" for m in shown)
    return Verdict(outcome, f"{outcome}: {detail} against {against}", source, names, tuple(metrics))
