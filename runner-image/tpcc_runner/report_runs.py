"""The runs `tpcc report` reads, whatever document each came from (a runner's results, a
BenchmarkRun, a BenchmarkResult): the Run model and its readers, pure."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .paper_values import Measured, PaperFigure, figure_of, measured

PERCENTILES = ("p50", "p90", "p95", "p99", "max")


@dataclass
class Fault:
    number: int
    action: str
    target: str
    state: str
    injected: float | None  # seconds from the start of the measured interval
    recovered: float | None


@dataclass
class Durability:
    durable: bool
    acknowledged: int
    found: int
    lost: int
    unknown_outcome: int
    ledgers: int


@dataclass
class Condition:
    number: int
    passed: bool
    checked: int
    violations: int
    example: str


@dataclass
class Consistency:
    passed: bool
    conditions: list[Condition]


@dataclass
class Acid:
    passed: bool
    counts: dict[str, int]
    tests: list[tuple[str, str, str]]  # (test, status, reason); a BenchmarkResult names only the failed


@dataclass
class TypeCounts:
    """One transaction type's outcomes in the measured window."""

    committed: int
    rollbacks: int  # the specified NewOrder rollbacks (aborts), apart from errors
    errors: int
    unknown: int
    retries: int  # attempts retried after a transient error (write conflict, restart...)

    @classmethod
    def of(cls, d: dict) -> TypeCounts:
        return cls(*(int(d.get(k, 0)) for k in ("committed", "rollbacks", "errors", "unknown", "retries")))


@dataclass
class ServerReport:
    """What the database counted and how big it is, and whether its counts agree with the clients'."""

    verdict: str  # agree, disagree, not-available
    reason: str
    size_bytes: dict[str, int | None]  # data, index, storage, memory
    comparisons: list[dict] = field(default_factory=list)  # server_agreement's, where the document has them


def _server_from_runner(doc: dict) -> ServerReport | None:
    if "server_agreement" not in doc:
        return None
    agreement, size = doc["server_agreement"], doc["server"]["size"]
    return ServerReport(
        str(agreement["verdict"]),
        str(agreement.get("reason") or size.get("unavailable") or ""),
        {k: size.get(f"{k}_bytes") for k in ("data", "index", "storage", "memory")},
        list(agreement.get("comparisons") or []),
    )


def _server_from_status(results: dict) -> ServerReport | None:
    agreement = results.get("serverAgreement")
    if not agreement:
        return None
    size = results.get("databaseBytes") or {}
    return ServerReport(
        str(agreement.get("verdict", "")),
        str(agreement.get("reason", "")),
        {k: size.get(k) for k in ("data", "index", "storage", "memory")},
    )


@dataclass
class Run:
    """One run, whatever document it came from."""

    name: str
    database: str
    warehouses: int
    clients: int
    start: str  # ISO time the measured interval began ("" if unknown)
    tpmc: float | None  # None: the run produced no results
    warmup_seconds: float
    measured_seconds: float
    timeline: list[tuple[float, float]] = field(default_factory=list)  # (t, tpmC), t<0: warmup
    latency_ms: dict[str, dict[str, float]] = field(default_factory=dict)  # type -> percentile -> ms
    faults: list[Fault] = field(default_factory=list)
    durability: Durability | None = None
    consistency: Consistency | None = None
    acid: Acid | None = None  # spec.verify.acid's tests
    phase: str = ""  # BenchmarkRun phase; "" for a runner document
    reason: str = ""
    verdict: str = ""  # status.verdict (Pass/Regressed/Improved/Inconclusive)
    baseline: float | None = None
    transactions_per_second: float | None = None  # committed, all five types
    counts: dict[str, TypeCounts] = field(default_factory=dict)
    server: ServerReport | None = None
    matrix: dict[str, str] = field(default_factory=dict)  # a sweep cell's spec.sweep.matrix values
    hosts: int = 0  # database.deploy.replicas (0: not deployed, or unknown)
    k_safety: int = 0  # database.deploy.kSafety
    # a BenchmarkRun reproducing a study's figure (bench.tpcc.dev/paper-values): the numbers it
    # prints, and ours at each configuration (a sweep's, or the run's) to put beside them
    paper: PaperFigure | None = None
    configurations: list[Measured] = field(default_factory=list)


def _deploy_shape(spec: dict) -> tuple[int, int]:
    """(hosts, k-safety) of a BenchmarkRun spec that deploys its database (CRD defaults: 1, 0);
    (0, 0) for an external database."""
    deploy = (spec.get("database") or {}).get("deploy")
    if not isinstance(deploy, dict):
        return 0, 0
    return int(deploy.get("replicas", 1)), int(deploy.get("kSafety", 0))


def _time(value: str) -> dt.datetime:
    return dt.datetime.fromisoformat(value.replace("Z", "+00:00"))


def _durability(d: dict | None) -> Durability | None:
    if not d:
        return None
    lost = int(d.get("lost", 0))
    return Durability(
        bool(d.get("durable", lost == 0)) and lost == 0,
        int(d.get("acknowledged", 0)),
        int(d.get("found", 0)),
        lost,
        int(d.get("unknownOutcome", d.get("unknown_outcome", 0))),
        int(d.get("ledgers", d.get("runnerPods", 0))),
    )


def _consistency(d: dict | None) -> Consistency | None:
    if not d:
        return None
    conditions = [
        Condition(
            int(c["number"]),
            bool(c["passed"]),
            int(c.get("checked", 0)),
            int(c.get("violations", 0)),
            str(c.get("example") or ""),
        )
        for c in d.get("conditions", [])
    ]
    return Consistency(bool(d.get("passed")) and all(c.passed for c in conditions), conditions)


def _acid(d: dict | None) -> Acid | None:
    """status.acid, or the BenchmarkResult's summary of it (counts and the failed tests)."""
    if not d:
        return None
    tests = [(str(t["test"]), str(t["status"]), str(t.get("reason", ""))) for t in d.get("tests") or []]
    tests += [(str(name), "failed", "") for name in d.get("failed") or []]
    return Acid(bool(d.get("passed")), {k: int(v) for k, v in (d.get("counts") or {}).items()}, tests)


def _from_runner(doc: dict, name: str) -> Run:
    return Run(
        name=name,
        database=str(doc.get("options", {}).get("db", "?")),
        warehouses=int(doc["warehouses"]),
        clients=int(doc["clients"]),
        start=str(doc.get("start", "")),
        tpmc=float(doc["tpmC"]),
        warmup_seconds=float(doc.get("warmup_seconds", 0)),
        measured_seconds=float(doc.get("measured_seconds", 0)),
        timeline=[(float(p["t"]), float(p["tpmC"])) for p in doc.get("timeline", [])],
        latency_ms={t: v["latency_ms"] for t, v in doc["transactions"].items()},
        durability=_durability(doc.get("durability")),
        consistency=_consistency(doc.get("consistency")),
        transactions_per_second=doc.get("transactions_per_second"),
        counts={t: TypeCounts.of(v) for t, v in doc["transactions"].items()},
        server=_server_from_runner(doc),
    )


def _from_benchmarkrun(obj: dict) -> Run:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    workload, results = spec.get("workload") or {}, status.get("results") or {}
    start = str(results.get("start", ""))
    faults: list[Fault] = []
    for f in status.get("faults") or []:

        def rel(key: str) -> float | None:
            return (_time(f[key]) - _time(start)).total_seconds() if f.get(key) and start else None

        faults.append(
            Fault(
                int(f.get("number", len(faults) + 1)),
                str(f.get("action", "")),
                str(f.get("target", "")),
                str(f.get("state", "")),
                rel("injectedTime"),
                rel("recoveredTime"),
            )
        )
    baseline = status.get("baselineTpmC", spec.get("baselineTpmC"))
    hosts, k_safety = _deploy_shape(spec)
    paper = figure_of(obj.get("metadata") or {})
    return Run(
        name=obj["metadata"]["name"],
        database=str((spec.get("database") or {}).get("type", "?")),
        warehouses=int(workload.get("warehouses", 0)),
        clients=int(workload.get("clients", 0)),
        start=start or str(status.get("startTime", "")),
        tpmc=float(results["tpmC"]) if "tpmC" in results else None,
        warmup_seconds=float(workload.get("warmupSeconds", 0)),
        measured_seconds=float(results.get("measuredSeconds", 0)),
        timeline=[(float(p["t"]), float(p["tpmC"])) for p in results.get("timeline", [])],
        latency_ms={t: v["latencyMs"] for t, v in (results.get("transactions") or {}).items()},
        faults=faults,
        durability=_durability(status.get("durability")),
        consistency=_consistency(status.get("consistency")),
        acid=_acid(status.get("acid")),
        phase=str(status.get("phase", "")),
        reason=str(status.get("reason", "")),
        verdict=str(status.get("verdict", "")),
        baseline=float(baseline) if baseline is not None else None,
        transactions_per_second=results.get("transactionsPerSecond"),
        counts={t: TypeCounts.of(v) for t, v in (results.get("transactions") or {}).items()},
        server=_server_from_status(results),
        hosts=hosts,
        k_safety=k_safety,
        paper=paper,
        configurations=measured(spec, status) if paper else [],
    )


def _from_benchmarkresult(obj: dict) -> Run:
    """The operator's record of a finished run (its spec; the timeline stays in its ConfigMap)."""
    rec = obj.get("spec") or {}
    workload = (rec.get("runSpec") or {}).get("workload") or {}
    start = str(rec.get("measureStart", rec.get("startTime", "")))
    faults = []
    for i, f in enumerate(rec.get("faults") or []):
        injected = (
            (_time(f["injectedTime"]) - _time(start)).total_seconds() if f.get("injectedTime") and start else None
        )
        recovered = injected + float(f["recoverySeconds"]) if injected is not None and "recoverySeconds" in f else None
        faults.append(
            Fault(
                i + 1, str(f.get("action", "")), str(f.get("target", "")), str(f.get("state", "")), injected, recovered
            )
        )
    baseline = next(
        (m.get("baseline") for m in (rec.get("regression") or {}).get("metrics") or [] if m.get("name") == "tpmC"), None
    )
    hosts, k_safety = _deploy_shape(rec.get("runSpec") or {})
    return Run(
        name=obj["metadata"]["name"],
        database=str((rec.get("database") or {}).get("type", "?")),
        warehouses=int(workload.get("warehouses", 0)),
        clients=int(workload.get("clients", 0)),
        start=start,
        tpmc=float(rec["tpmC"]) if rec.get("tpmC") is not None else None,
        warmup_seconds=float(workload.get("warmupSeconds", 0)),
        measured_seconds=float(rec.get("measuredSeconds", 0)),
        latency_ms=rec.get("latencyMs") or {},
        faults=faults,
        consistency=Consistency(
            bool(rec["consistent"]), [Condition(n, False, 0, 0, "") for n in rec.get("violated", [])]
        )
        if "consistent" in rec
        else None,
        durability=Durability(bool(rec["durable"]), 0, 0, int(rec.get("lost", 0)), 0, 0) if "durable" in rec else None,
        acid=_acid(rec.get("acid")),
        phase=str(rec.get("phase", "")),
        reason=str(rec.get("reason", "")),
        verdict=str(rec.get("verdict", "")),
        baseline=float(baseline) if baseline is not None else None,
        transactions_per_second=rec.get("transactionsPerSecond"),
        matrix={str(k): str(v) for k, v in (rec.get("matrix") or {}).items()},
        hosts=hosts,
        k_safety=k_safety,
    )


def read_runs(doc: Any, source: str) -> list[Run]:
    """The runs in one JSON document; ValueError naming the source if it is none we know."""
    if isinstance(doc, dict) and doc.get("kind") == "BenchmarkRun":
        return [_from_benchmarkrun(doc)]
    if isinstance(doc, dict) and doc.get("kind") == "BenchmarkResult":
        return [_from_benchmarkresult(doc)]
    if isinstance(doc, dict) and isinstance(doc.get("items"), list):
        return [r for item in doc["items"] for r in read_runs(item, source)]
    if isinstance(doc, dict) and {"tpmC", "transactions", "warehouses", "clients"} <= doc.keys():
        return [_from_runner(doc, Path(source).stem)]
    raise ValueError(f"{source}: neither a `tpcc run` results document nor a BenchmarkRun or BenchmarkResult (list)")


def distinct(runs: list[Run]) -> list[Run]:
    """One Run per measurement: a BenchmarkRun and its BenchmarkResult (same measured start)
    are the same run; the one with the timeline stays."""
    best: dict[str, Run] = {}
    for r in runs:
        key = r.start or f"#{id(r)}"
        if key not in best or len(r.timeline) > len(best[key].timeline):
            best[key] = r
    return list(best.values())


def matrix_label(matrix: dict[str, str]) -> str:
    """`field=value, ...` in the matrix's order (without "workload."); "" for a run without matrix values."""
    return ", ".join(f"{k.removeprefix('workload.')}={v}" for k, v in matrix.items())
