"""The verdict of a finished run against its history (regression.judge, after a change-point
analysis when spec.regression.changePoints asks), the BenchmarkResult that records it and the
pruning of results beyond spec.history.limit.

Observes: the run's history, named baseline, analyzer Job and its report, the runner pods'
results, the database's images, the Git source.
Does: CreateAnalysisJob, WriteResult, PruneResults.
"""

from __future__ import annotations

from .. import history, plan, regression, workloads
from ..runspec import RunSpec
from ..timestamps import rfc3339
from . import reads
from .actions import CreateAnalysisJob, PruneResults, WriteResult
from .machine import Builder, World, patched


def observes(run: plan.Run, spec: RunSpec, seen: World | None) -> list[reads.Read]:
    """For the verdict and BenchmarkResult of a finished run (or sweep cell): the runner pods'
    documents (still in their ConfigMaps), the run's history, the named baseline, the database's
    images, with spec.regression.changePoints the analyzer Job; then its report once it finished."""
    regression_spec = spec.regression
    analysed = regression_spec is not None and regression_spec.change_points is not None
    if seen is not None:
        if analysed and (seen.analyzer.succeeded or seen.analyzer.failed):
            return [reads.Report("change_points", plan.check_configmap_name(run), "changepoints.json")]
        return []
    wanted: list[reads.Read] = [
        reads.Results(i, plan.results_configmap_name(run, i)) for i in range(spec.runners.parallelism)
    ]
    wanted.append(reads.History(run.history_series))
    if regression_spec and regression_spec.baseline and regression_spec.baseline.result:
        wanted.append(reads.NamedBaseline(regression_spec.baseline.result))
    if analysed:
        wanted.append(reads.Job("analyzer", plan.job_name(run, "analyzer")))
    if spec.database.deployed:
        wanted.append(reads.DatabaseImages(plan.database_pod_selector(run)))
    return wanted


def judge_and_record(b: Builder, run: plan.Run, spec: RunSpec, world: World) -> None:
    """Once per finished run: the regression verdict against its history, the BenchmarkResult
    that records it, and the pruning of the oldest results beyond spec.history.limit."""
    recorded = record(b, run, spec, world, patched(b.status, b.step.status), history.history_limit(spec))
    if recorded is None:
        return
    verdict, fields, policy = recorded
    b.step.status.update(fields)
    if policy is not None:
        b.condition("Regressed", verdict.outcome == regression.REGRESSED, verdict.outcome, verdict.message)
    b.event(
        verdict.outcome,
        f"{verdict.message}; recorded as BenchmarkResult {fields['resultName']}",
        warning=verdict.outcome in (regression.REGRESSED, regression.FAILED),
    )


def _change_point_analysis(
    b: Builder,
    run: plan.Run,
    world: World,
    this: regression.Summary,
    earlier: list[regression.Summary],
    policy: regression.Policy | None,
) -> tuple[bool, dict | None]:
    """With spec.regression.changePoints, before a measured run (or cell) is judged: one
    analyzer Job over its comparable history. (done, changepoints.json or None): None when
    there is nothing to analyse (regression.analysis_input) or the Job failed, which the
    verdict's message then says."""
    points = regression.analysis_input(this, earlier, policy, rfc3339(b.now))
    if points is None:
        return True, None
    if world.analyzer.succeeded or world.analyzer.failed:
        return True, world.change_points
    assert policy is not None and policy.change_points is not None, "analysis_input needs them"
    if not world.analyzer.exists:
        b.act(CreateAnalysisJob(points, policy.change_points.max_pvalue))
        b.event("AnalysisJobCreated", f"job {plan.job_name(run, 'analyzer')}: change points over {len(points)} results")
    return False, None


def record(
    b: Builder,
    run: plan.Run,
    spec: RunSpec,
    world: World,
    finished: dict,
    limit: int,
    matrix: tuple[tuple[str, str], ...] = (),
) -> tuple[regression.Verdict, dict, regression.Policy | None] | None:
    """The verdict of a finished run (or sweep cell, with its matrix values) whose final status
    is `finished`, its BenchmarkResult (WriteResult) and the pruning beyond `limit` results.
    `spec` is the cell's own, so its comparison hash, and with it the history it is judged
    against, is that of the same cell (same warehouses, clients and matrix values). Returns the verdict,
    the status fields that report it, and the regression policy (None without one), or None
    while its change points are being analysed."""
    chash = regression.comparison_hash(spec)
    name = history.result_name(run)
    try:
        policy = regression.Policy.from_spec(spec.regression)
    except ValueError as e:  # the CRD refuses this at apply; an older CRD may not have
        policy, verdict = None, regression.Verdict(regression.INCONCLUSIVE, str(e))
    else:
        this = regression.Summary.of_status(name, chash, finished, workloads.of(spec).figures(finished))
        earlier = [e.summary for e in world.history]
        analysed, analysis = _change_point_analysis(b, run, world, this, earlier, policy)
        if not analysed:
            return None
        verdict = regression.judge(this, earlier, policy, world.named_baseline, analysis)
    on_regression = policy.on_regression if policy else "Fail"
    fields = {
        "verdict": verdict.outcome,
        "regression": verdict.to_status(chash, on_regression).to_json(),
        "resultName": name,
    }
    docs = [world.results[i] for i in sorted(world.results)]
    merged = workloads.of(spec).merge(docs) if docs else None
    result = history.record(
        run, spec, {**finished, **fields}, merged, world.git, world.database_images, matrix=dict(matrix)
    )
    b.act(WriteResult(result))
    prune = history.to_prune(world.history, limit, name)
    if prune:
        b.act(PruneResults(tuple(prune)))
    return verdict, fields, policy
