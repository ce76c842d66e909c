"""The run history: one immutable BenchmarkResult per finished run, and a ConfigMap it owns with
the full results JSON. Pure: names, labels, the record, its manifests, what to prune.

The result is named `<run>-g<runGeneration>-<uid5>` (the first 5 hex digits of the run's UID, so
a BenchmarkRun deleted and created again under the same name never collides with its older
results) and created if absent, so writing it again after a crash changes nothing.
"""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from . import plan, regression, workloads
from .cost import CostFigure, cost_status
from .jsonmodel import JsonModel, named
from .regression import OPS_PER_SECOND, TPMC, Figures
from .runspec import RunSpec
from .runstatus import Acid, Consistency, Durability, Load, Results

RESULT_PLURAL = "benchmarkresults"
RESULT_KIND = "BenchmarkResult"
LABEL_VERDICT = f"{plan.GROUP}/verdict"
LABEL_RESULT = f"{plan.GROUP}/result"
# A ConfigMap holds at most 1 MiB: the JSON is compressed above this, trimmed if still too large.
PLAIN_LIMIT_BYTES = 256 * 1024
CONFIGMAP_LIMIT_BYTES = 900 * 1024
# The user's own annotation for the Git revision (GitOps tools do not put one on the objects
# they apply: Argo CD via `${ARGOCD_APP_REVISION}` in commonAnnotations, Flux via postBuild).
ANNOTATION_REVISION = f"{plan.GROUP}/git-revision"


def result_name(run: plan.Run) -> str:
    return f"{run.prefix}-{run.uid.replace('-', '')[:5]}"


@dataclass(frozen=True)
class GitSource(JsonModel):
    """Which GitOps tool applied the BenchmarkRun, from its labels and annotations (a
    BenchmarkResult's spec.git)."""

    tool: str  # ArgoCD | Flux
    source: str  # Argo CD tracking id, or the Flux Kustomization/HelmRelease namespace/name
    revision: str | None = None  # bench.tpcc.dev/git-revision, when given

    @classmethod
    def from_metadata(cls, metadata: dict) -> GitSource | None:
        labels, annotations = metadata.get("labels") or {}, metadata.get("annotations") or {}
        revision = annotations.get(ANNOTATION_REVISION) or None
        if "argocd.argoproj.io/tracking-id" in annotations:
            return cls("ArgoCD", annotations["argocd.argoproj.io/tracking-id"], revision)
        if "argocd.argoproj.io/instance" in labels:
            return cls("ArgoCD", labels["argocd.argoproj.io/instance"], revision)
        for kind in ("kustomize", "helm"):
            name = labels.get(f"{kind}.toolkit.fluxcd.io/name")
            if name:
                return cls("Flux", f"{labels.get(f'{kind}.toolkit.fluxcd.io/namespace', '')}/{name}", revision)
        return None


@dataclass(frozen=True, kw_only=True)
class ResultAcid(JsonModel):
    """The ACID tests' verdict as a BenchmarkResult keeps it."""

    passed: bool
    counts: Mapping[str, int]
    failed: tuple[str, ...]  # the tests that failed or could not run


@dataclass(frozen=True, kw_only=True)
class ResultDatabase(JsonModel):
    """The database measured."""

    type: str
    images: tuple[str, ...]
    version: str | None = None  # the server version its driver saw
    release: str | None = None  # its Helm release ("" for an external database)


@dataclass(frozen=True, kw_only=True)
class ResultSpec(JsonModel):
    """A BenchmarkResult's spec: one finished run (or sweep cell), its verdict and figures.
    The CRD requires only run and verdict, and results an older operator stored lack later
    fields: every other field may be absent."""

    run: str
    run_uid: str | None = field(default=None, metadata=named("runUID"))
    run_generation: int | None = None
    run_token: str | None = None
    phase: str | None = None
    reason: str | None = None
    verdict: str
    regression: Mapping[str, Any] | None = None  # status.regression as the run reported it
    comparison_hash: str | None = None
    spec_hash: str | None = None
    matrix: Mapping[str, str] | None = None  # a sweep cell's sweep.matrix values
    start_time: str | None = None
    completion_time: str | None = None
    measure_start: str | None = None
    measure_end: str | None = None
    tpm_c: float | None = None
    ops_per_second: float | None = None  # a YCSB run's throughput
    efficiency: float | None = None
    efficiency_reason: str | None = None
    measured_seconds: float | None = None
    seed: int | None = None
    transactions_per_second: float | None = None
    database_bytes: Mapping[str, int] | None = None
    server_agreement: str | None = None  # its verdict
    cost: CostFigure | None = None  # status.cost
    p99_ms: Mapping[str, float] | None = None
    latency_ms: Mapping[str, Mapping[str, float]] | None = None
    load: Load | None = None
    durable: bool | None = None
    lost: int | None = None
    consistent: bool | None = None
    violated: tuple[int, ...] | None = None
    consistent_after_load: bool | None = None
    consistent_during_run: bool | None = None
    acid: ResultAcid | None = None
    faults: tuple[Mapping[str, Any], ...] | None = None  # each fault's action, state, target, times
    database: ResultDatabase | None = None
    git: GitSource | None = None
    run_spec: Mapping[str, Any] | None = None  # the spec measured, as the API server stored it
    results_config_map: str | None = None
    runner_image: str | None = None

    @property
    def figures(self) -> Figures:
        """Its throughput (tpmC, or a YCSB run's operations per second) and p99s."""
        p99 = {k: float(v) for k, v in (self.p99_ms or {}).items()}
        if self.ops_per_second is not None:
            return Figures(self.ops_per_second, OPS_PER_SECOND, p99)
        return Figures(self.tpm_c, TPMC, p99)


@dataclass(frozen=True)
class Entry:
    """A BenchmarkResult as the history lists it."""

    summary: regression.Summary
    run_uid: str = ""


@dataclass
class ResultRecord:
    """What the timer writes for a finished run: the BenchmarkResult's spec (the runner image
    is added when it is written) and the full results for its ConfigMap."""

    name: str
    namespace: str
    run: str
    db: str
    verdict: str
    spec: ResultSpec
    full_results: dict[str, Any]
    owner: dict | None = None  # the BenchmarkRun's owner reference when spec.history.deleteWithRun
    labels: dict[str, str] = field(default_factory=dict)


# The status fields the full results keep as they are, besides the runner pods' merged results.
VERIFICATIONS = ("durability", "consistency", "consistencyAfterLoad", "consistencyDuringRun", "acid")
# What of each status.faults entry a BenchmarkResult keeps.
FAULT_FIELDS = ("action", "state", "target", "injectedTime", "recoverySeconds")


def record(
    run: plan.Run,
    spec: RunSpec,
    status: dict,
    merged: dict | None,
    git: GitSource | None,
    database_images: list[str],
    matrix: dict[str, str] | None = None,
) -> ResultRecord:
    """The record of a finished run from its final status (verdict included) and the merged
    results of its runner pods (None when the run never measured); a sweep cell's with its
    sweep.matrix values."""
    name = result_name(run)
    result = _verified(_measured(_identity(run, spec, status, matrix), spec, status), status)
    result = replace(
        result,
        faults=tuple({k: f[k] for k in FAULT_FIELDS if k in f} for f in status.get("faults") or []),
        database=_database(spec, status, merged, database_images),
        git=git,
        run_spec=dict(spec.document),
        results_config_map=name,
    )
    full = {
        "results": merged,
        **{k: status.get(k) or None for k in VERIFICATIONS},
        "faults": status.get("faults") or [],
    }
    keep = spec.history.delete_with_run
    labels = {
        **recommended_labels(run),
        plan.LABEL_RUN: run.name,
        plan.LABEL_SERIES: run.history_series,
        plan.LABEL_DB: spec.database.type,
        LABEL_VERDICT: result.verdict,
    }
    return ResultRecord(
        name,
        run.namespace,
        run.name,
        spec.database.type,
        result.verdict,
        result,
        full,
        owner={**plan.owner_reference(run), "controller": False} if keep else None,
        labels=labels,
    )


def recommended_labels(run: plan.Run) -> dict[str, str]:
    """The app.kubernetes.io labels of a run's BenchmarkResult and its ConfigMap: like the run's
    other objects, its instance (run.prefix) of the application tpcc-benchmark, as the component
    "result"."""
    return {
        plan.LABEL_MANAGED_BY: plan.MANAGER,
        plan.LABEL_NAME: plan.APP_NAME,
        plan.LABEL_INSTANCE: run.prefix,
        plan.LABEL_VERSION: plan.OPERATOR_VERSION,
        plan.LABEL_COMPONENT: "result",
        plan.LABEL_PART_OF: plan.MANAGER,
    }


def _identity(run: plan.Run, spec: RunSpec, status: dict, matrix: dict[str, str] | None) -> ResultSpec:
    """Which run, generation and cell this is, how it ended and how it is compared."""
    return ResultSpec(
        run=run.name,
        run_uid=run.uid,
        run_generation=run.generation,
        run_token=spec.run_token or None,
        phase=status.get("phase"),
        reason=status.get("reason") or None,
        verdict=status["verdict"],
        regression=status["regression"],
        comparison_hash=status["regression"]["comparisonHash"],
        spec_hash=status.get("specHash", ""),
        matrix=dict(matrix) if matrix else None,
        start_time=status.get("startTime") or None,
        completion_time=status.get("completionTime") or None,
    )


def _measured(result: ResultSpec, spec: RunSpec, status: dict) -> ResultSpec:
    """What the run measured: its workload's throughput and p99s, the measured window, what it
    cost, the load."""
    results = Results.in_status(status, "results")
    figures = workloads.of(spec).figures(status)
    result = replace(
        result,
        tpm_c=figures.throughput if figures.metric == TPMC else None,
        ops_per_second=figures.throughput if figures.metric == OPS_PER_SECOND else None,
        cost=cost_status(spec.cost, figures),
        p99_ms=figures.p99_ms,
        latency_ms={t: v.latency_ms for t, v in results.transactions.items()} if results else {},
        load=Load.in_status(status, "load"),
    )
    if results is None:
        return result
    return replace(
        result,
        measure_start=results.start or None,
        measure_end=results.end or None,
        efficiency=results.efficiency,
        efficiency_reason=results.efficiency_reason,
        measured_seconds=results.measured_seconds,
        seed=results.seed,
        transactions_per_second=results.transactions_per_second,
        database_bytes=results.database_bytes,
        server_agreement=results.server_agreement.verdict if results.server_agreement else None,
    )


def _verified(result: ResultSpec, status: dict) -> ResultSpec:
    """The durability, consistency and ACID verdicts."""
    durability = Durability.in_status(status, "durability")
    durable = durability.verdict if durability else None
    consistency = Consistency.in_status(status, "consistency")
    after_load = Consistency.in_status(status, "consistencyAfterLoad")
    during_run = Consistency.in_status(status, "consistencyDuringRun")
    acid = Acid.in_status(status, "acid")
    return replace(
        result,
        durable=durable,
        lost=(durability.lost or 0) if durability and durable is not None else None,
        consistent=consistency.passed if consistency else None,
        violated=consistency.violated if consistency else None,
        consistent_after_load=after_load.passed if after_load else None,
        consistent_during_run=during_run.passed if during_run else None,
        acid=ResultAcid(passed=acid.passed, counts=acid.counts, failed=tuple(t.test for t in acid.failed))
        if acid
        else None,
    )


def _database(spec: RunSpec, status: dict, merged: dict | None, images: list[str]) -> ResultDatabase:
    """The database measured: its type, images, the server version its driver saw, the release."""
    driver = ((merged or {}).get("options") or {}).get("driver") or {}
    return ResultDatabase(
        type=spec.database.type,
        images=tuple(sorted(images)),
        version=str(driver["server_version"]) if driver.get("server_version") else None,
        release=(status.get("database") or {}).get("release", ""),
    )


def result_object(rec: ResultRecord, runner_image: str) -> dict:
    """The BenchmarkResult manifest."""
    meta: dict[str, Any] = {"name": rec.name, "namespace": rec.namespace, "labels": dict(rec.labels)}
    if rec.owner:
        meta["ownerReferences"] = [rec.owner]
    measured_by = (rec.spec.run_spec or {}).get("runners", {}).get("image") or runner_image
    spec = replace(rec.spec, runner_image=measured_by).to_json()
    return {"apiVersion": f"{plan.GROUP}/{plan.VERSION}", "kind": RESULT_KIND, "metadata": meta, "spec": spec}


def results_payload(full: dict[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    """(data, binaryData) of the result's ConfigMap: results.json as is when small, gzipped
    above PLAIN_LIMIT_BYTES, and without the timelines and per-pod detail if still too large."""
    text = json.dumps(full, separators=(",", ":"), sort_keys=True)
    if len(text.encode()) <= PLAIN_LIMIT_BYTES:
        return {"results.json": text}, {}
    packed = base64.b64encode(gzip.compress(text.encode(), mtime=0)).decode()
    if len(packed) > CONFIGMAP_LIMIT_BYTES:
        merged = dict(full.get("results") or {})
        for key in ("timeline", "pods", "pod_windows", "pod_tpmC"):
            merged.pop(key, None)
        trimmed = {**full, "results": merged, "trimmed": ["timeline", "pods", "pod_windows", "pod_tpmC"]}
        packed = base64.b64encode(gzip.compress(json.dumps(trimmed, separators=(",", ":")).encode(), mtime=0)).decode()
    return {}, {"results.json.gz": packed}


def result_configmap(rec: ResultRecord, owner_uid: str) -> dict:
    """The ConfigMap of the full results, owned by the BenchmarkResult (deleted with it). It
    carries no bench.tpcc.dev/run label: retiring a run's generations must not delete it."""
    data, binary = results_payload(rec.full_results)
    owner = {
        "apiVersion": f"{plan.GROUP}/{plan.VERSION}",
        "kind": RESULT_KIND,
        "name": rec.name,
        "uid": owner_uid,
        "controller": True,
        "blockOwnerDeletion": False,
    }
    cm: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": rec.name,
            "namespace": rec.namespace,
            # the record's app.kubernetes.io labels, not its bench.tpcc.dev ones: a run's own
            # ConfigMaps are found by its run label, and this one outlives the run
            "labels": {
                **{k: v for k, v in rec.labels.items() if k.startswith("app.kubernetes.io/")},
                LABEL_RESULT: rec.name,
            },
            "ownerReferences": [owner],
        },
    }
    if data:
        cm["data"] = data
    if binary:
        cm["binaryData"] = binary
    return cm


def summary_of(obj: dict) -> Entry:
    """A listed BenchmarkResult -> what the judge and the pruning need."""
    result = ResultSpec.from_json(obj.get("spec") or {})
    figures = result.figures
    return Entry(
        regression.Summary(
            name=obj["metadata"]["name"],
            comparison_hash=result.comparison_hash or "",
            throughput=figures.throughput,
            throughput_metric=figures.metric,
            p99_ms=figures.p99_ms,
            failed=result.phase == "Failed",
            durable=result.durable,
            consistent=result.consistent,
            verdict=result.verdict,
            completed=result.completion_time or "",
        ),
        result.run_uid or "",
    )


def to_prune(history: list[Entry], limit: int, written: str) -> list[str]:
    """The oldest results of the run beyond `limit`, counting the one just written."""
    others = sorted(
        (e.summary for e in history if e.summary.name != written), key=lambda s: (s.completed, s.name), reverse=True
    )
    return sorted(s.name for s in others[max(limit - 1, 0) :])


def history_limit(spec: RunSpec) -> int:
    return spec.history.limit
