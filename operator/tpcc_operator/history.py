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
from dataclasses import dataclass, field
from typing import Any

from . import plan, regression, workloads
from .cost import cost_status
from .runspec import RunSpec
from .runstatus import Acid

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
class GitSource:
    """Which GitOps tool applied the BenchmarkRun, from its labels and annotations."""

    tool: str  # ArgoCD | Flux
    source: str  # Argo CD tracking id, or the Flux Kustomization/HelmRelease namespace/name
    revision: str  # bench.tpcc.dev/git-revision, "" when not given

    @classmethod
    def from_metadata(cls, metadata: dict) -> GitSource | None:
        labels, annotations = metadata.get("labels") or {}, metadata.get("annotations") or {}
        revision = annotations.get(ANNOTATION_REVISION, "")
        if "argocd.argoproj.io/tracking-id" in annotations:
            return cls("ArgoCD", annotations["argocd.argoproj.io/tracking-id"], revision)
        if "argocd.argoproj.io/instance" in labels:
            return cls("ArgoCD", labels["argocd.argoproj.io/instance"], revision)
        for kind in ("kustomize", "helm"):
            name = labels.get(f"{kind}.toolkit.fluxcd.io/name")
            if name:
                return cls("Flux", f"{labels.get(f'{kind}.toolkit.fluxcd.io/namespace', '')}/{name}", revision)
        return None

    def to_spec(self) -> dict[str, str]:
        return {"tool": self.tool, "source": self.source, **({"revision": self.revision} if self.revision else {})}


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
    spec: dict[str, Any]
    full_results: dict[str, Any]
    owner: dict | None = None  # the BenchmarkRun's owner reference when spec.history.deleteWithRun
    labels: dict[str, str] = field(default_factory=dict)


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
    durability = status.get("durability") or {}
    consistency = status.get("consistency") or {}
    acid = Acid.in_status(status, "acid")
    name = result_name(run)
    body: dict[str, Any] = {
        **_identity(run, spec, status, matrix),
        **_measured(spec, status),
        **_verified(status),
        "faults": [
            {k: f[k] for k in ("action", "state", "target", "injectedTime", "recoverySeconds") if k in f}
            for f in status.get("faults") or []
        ],
        "database": _database(spec, status, merged, database_images),
        **({"git": git.to_spec()} if git else {}),
        "runSpec": dict(spec.document),
        "resultsConfigMap": name,
    }
    full = {
        "results": merged,
        "durability": durability or None,
        "consistency": consistency or None,
        "consistencyAfterLoad": status.get("consistencyAfterLoad"),
        "consistencyDuringRun": status.get("consistencyDuringRun"),
        "acid": acid.to_json() if acid else None,
        "faults": status.get("faults") or [],
    }
    keep = spec.history.delete_with_run
    labels = {
        plan.LABEL_MANAGED_BY: plan.MANAGER,
        plan.LABEL_RUN: run.name,
        plan.LABEL_SERIES: run.history_series,
        plan.LABEL_DB: spec.database.type,
        LABEL_VERDICT: status["verdict"],
    }
    return ResultRecord(
        name,
        run.namespace,
        run.name,
        spec.database.type,
        status["verdict"],
        body,
        full,
        owner={**plan.owner_reference(run), "controller": False} if keep else None,
        labels=labels,
    )


def _identity(run: plan.Run, spec: RunSpec, status: dict, matrix: dict[str, str] | None) -> dict[str, Any]:
    """Which run, generation and cell this is, how it ended and how it is compared."""
    return {
        "run": run.name,
        "runUID": run.uid,
        "runGeneration": run.generation,
        **({"runToken": spec.run_token} if spec.run_token else {}),
        "phase": status.get("phase"),
        **({"reason": status["reason"]} if status.get("reason") else {}),
        "verdict": status["verdict"],
        "regression": status["regression"],
        "comparisonHash": status["regression"]["comparisonHash"],
        "specHash": status.get("specHash", ""),
        **({"matrix": dict(matrix)} if matrix else {}),
        **{k: status[k] for k in ("startTime", "completionTime") if status.get(k)},
    }


# status.results fields a BenchmarkResult keeps as they are
KEPT_RESULTS = ("efficiency", "efficiencyReason", "measuredSeconds", "seed", "transactionsPerSecond", "databaseBytes")


def _measured(spec: RunSpec, status: dict) -> dict[str, Any]:
    """What the run measured: its workload's throughput and p99s, the measured window, what it
    cost, the load."""
    results = status.get("results") or {}
    figures = workloads.of(spec).figures(status)
    return {
        **{f"measure{k.title()}": results[k] for k in ("start", "end") if results.get(k)},
        **({figures.metric: figures.throughput} if figures.throughput is not None else {}),
        **{k: results[k] for k in KEPT_RESULTS if k in results},
        **({"serverAgreement": results["serverAgreement"]["verdict"]} if results.get("serverAgreement") else {}),
        **({"cost": figure} if (figure := cost_status(spec.cost, figures)) else {}),
        "p99Ms": figures.p99_ms,
        "latencyMs": {t: v.get("latencyMs") or {} for t, v in (results.get("transactions") or {}).items()},
        **({"load": status["load"]} if status.get("load") else {}),
    }


def _verified(status: dict) -> dict[str, Any]:
    """The durability, consistency and ACID verdicts."""
    durability = status.get("durability") or {}
    consistency = status.get("consistency") or {}
    acid = Acid.in_status(status, "acid")
    durable = regression.durable_of(durability)
    return {
        **({"durable": durable, "lost": durability.get("lost", 0)} if durable is not None else {}),
        **(
            {"consistent": consistency["passed"], "violated": consistency.get("violated", [])}
            if "passed" in consistency
            else {}
        ),
        **{
            f"consistent{when}": status[f"consistency{when}"]["passed"]
            for when in ("AfterLoad", "DuringRun")
            if status.get(f"consistency{when}")
        },
        **(
            {"acid": {"passed": acid.passed, "counts": dict(acid.counts), "failed": [t.test for t in acid.failed]}}
            if acid
            else {}
        ),
    }


def _database(spec: RunSpec, status: dict, merged: dict | None, images: list[str]) -> dict[str, Any]:
    """The database measured: its type, images, the server version its driver saw, the release."""
    driver = ((merged or {}).get("options") or {}).get("driver") or {}
    return {
        "type": spec.database.type,
        "images": sorted(images),
        **({"version": str(driver["server_version"])} if driver.get("server_version") else {}),
        "release": (status.get("database") or {}).get("release", ""),
    }


def result_object(rec: ResultRecord, runner_image: str) -> dict:
    """The BenchmarkResult manifest."""
    meta: dict[str, Any] = {"name": rec.name, "namespace": rec.namespace, "labels": dict(rec.labels)}
    if rec.owner:
        meta["ownerReferences"] = [rec.owner]
    spec = dict(rec.spec)
    spec["runnerImage"] = (rec.spec.get("runSpec") or {}).get("runners", {}).get("image") or runner_image
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
            "labels": {plan.LABEL_MANAGED_BY: plan.MANAGER, LABEL_RESULT: rec.name},
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
    spec = obj.get("spec") or {}
    return Entry(
        regression.Summary(
            name=obj["metadata"]["name"],
            comparison_hash=spec.get("comparisonHash", ""),
            throughput=spec["opsPerSecond"] if "opsPerSecond" in spec else spec.get("tpmC"),
            throughput_metric=regression.OPS_PER_SECOND if "opsPerSecond" in spec else regression.TPMC,
            p99_ms={k: float(v) for k, v in (spec.get("p99Ms") or {}).items()},
            failed=spec.get("phase") == "Failed",
            durable=spec.get("durable"),
            consistent=spec.get("consistent"),
            verdict=spec.get("verdict", ""),
            completed=spec.get("completionTime", ""),
        ),
        spec.get("runUID", ""),
    )


def to_prune(history: list[Entry], limit: int, written: str) -> list[str]:
    """The oldest results of the run beyond `limit`, counting the one just written."""
    others = sorted(
        (e.summary for e in history if e.summary.name != written), key=lambda s: (s.completed, s.name), reverse=True
    )
    return sorted(s.name for s in others[max(limit - 1, 0) :])


def history_limit(spec: RunSpec) -> int:
    return spec.history.limit
