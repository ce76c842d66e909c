"""The parts of a BenchmarkRun's status the operator writes and reads again, as types: written
with `to_json`, read with `in_status` (jsonmodel's one mapping to the CRD's camelCase).

A field that every operator version wrote is required; one a later version added is `X | None`,
so a status written before it still reads (the test holds each part to the CRD's status schema,
field by field). What the runner's documents become is results.py's; this module only names it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .jsonmodel import JsonModel, named

# status.acid.tests[].status, and what fails the run
ACID_FAILED, ACID_ERROR = "failed", "error"


@dataclass(frozen=True, kw_only=True)
class AcidTest(JsonModel):
    test: str
    clause: str
    status: str  # passed | failed | not-applicable | error
    reason: str


@dataclass(frozen=True, kw_only=True)
class Acid(JsonModel):
    """status.acid: each ACID test's verdict (the observed values stay in the BenchmarkResult's
    ConfigMap)."""

    passed: bool
    seed: int
    counts: Mapping[str, int]  # tests by status: passed, failed, not-applicable, error
    tests: tuple[AcidTest, ...]

    @property
    def failed(self) -> tuple[AcidTest, ...]:
        """The tests that failed or could not run."""
        return tuple(t for t in self.tests if t.status in (ACID_FAILED, ACID_ERROR))


@dataclass(frozen=True, kw_only=True)
class ResponseTime(JsonModel):
    """Clause 5.2.5.3: a transaction type's 90th-percentile response time against its limit."""

    limit_seconds: float
    p90_seconds: float | None = None  # None (and passed): the type did not run
    passed: bool | None = None


@dataclass(frozen=True, kw_only=True)
class LateRunner(JsonModel):
    shard: int
    late_seconds: float  # after the measured interval began


@dataclass(frozen=True, kw_only=True)
class TransactionResults(JsonModel):
    """One transaction type's counts, share of the mix and latencies."""

    committed: int
    rollbacks: int
    errors: int
    unknown: int
    retries: int
    executed: int
    mix_percent: float
    latency_ms: Mapping[str, float]  # p50, p90, p99, max, ...

    @property
    def attempts(self) -> int:
        return self.executed + self.errors + self.unknown


@dataclass(frozen=True, kw_only=True)
class PodResults(JsonModel):
    """One runner pod's share of the run."""

    shard: int
    clients: int
    tpm_c: float
    committed: int
    late_seconds: float | None = None
    measure_start: str | None = None
    measure_end: str | None = None


@dataclass(frozen=True, kw_only=True)
class CounterComparison(JsonModel):
    """One of the database's own counters against what the clients counted."""

    counter: str
    what: str
    transactions: tuple[str, ...]
    client: int
    server: int
    allowed: int
    agrees: bool


@dataclass(frozen=True, kw_only=True)
class ServerAgreement(JsonModel):
    verdict: str
    tolerance: str
    reason: str | None = None
    comparisons: tuple[CounterComparison, ...]


@dataclass(frozen=True, kw_only=True)
class TimelineStep(JsonModel):
    t: int  # seconds from the start of the measured interval (negative: warmup)
    tpm_c: float  # NewOrders per minute in this step


@dataclass(frozen=True, kw_only=True)
class Results(JsonModel):
    """status.results: a TPC-C run's merged results (no histograms: their percentiles)."""

    tpm_c: float
    transactions_per_second: float | None = None
    database_bytes: Mapping[str, int] | None = None  # data, index, storage, memory: what the database reports
    server_agreement: ServerAgreement | None = None
    efficiency: float | None = None  # None: efficiency_reason says why it means nothing
    efficiency_reason: str | None = None
    measured_seconds: float
    pacing: str | None = None
    seed: int | None = None
    c_constants: Mapping[str, Mapping[str, int]] | None = None
    response_times: Mapping[str, ResponseTime] | None = None
    response_times_passed: bool | None = None
    spec_deviations: tuple[str, ...] | None = None
    late_runners: tuple[LateRunner, ...] | None = None
    start: str
    end: str
    runner_pods: int
    committed: int
    retries: int
    aborts: int
    errors: int
    unknown: int
    transactions: Mapping[str, TransactionResults]
    # NewOrders per minute in 10 s steps from the start of the measured interval (negative t:
    # warmup), so a fault's dip and the recovery show
    timeline: tuple[TimelineStep, ...] | None = None
    pods: tuple[PodResults, ...]


@dataclass(frozen=True, kw_only=True)
class OperationResults(JsonModel):
    count: int
    errors: int
    latency_ms: Mapping[str, float]


@dataclass(frozen=True, kw_only=True)
class YcsbResults(JsonModel):
    """status.ycsb: a YCSB run's merged results, as the runner merges them."""

    kind: str
    workload: str
    ops_per_second: float
    runner_pods: int
    client_loop: str | None = None
    start: str
    end: str
    properties: Mapping[str, str]
    operations: Mapping[str, OperationResults]


@dataclass(frozen=True, kw_only=True)
class Load(JsonModel):
    """status.load: what the load Job wrote (TPC-C: rows of every table; YCSB: records)."""

    rows: int
    seconds: float
    rows_per_second: float


@dataclass(frozen=True, kw_only=True)
class Durability(JsonModel):
    """status.durability: the verifier's counts over every runner pod's ledger. TPC-C's count
    NewOrders (missing, replaced, duplicates, unknown outcomes resolved), YCSB's writes and
    records; a status schema that pruned a count leaves it None, and a loss decides whatever
    `durable` says (`verdict`)."""

    acknowledged: int | None = None
    found: int | None = None
    lost: int | None = None
    missing: int | None = None
    replaced: int | None = None
    duplicates: int | None = None
    unknown_outcome: int | None = None
    unknown_committed: int | None = None
    unknown_not_committed: int | None = None
    ledgers: int | None = None
    records: int | None = None
    expected_records: str | None = None  # "N", or "LOW-HIGH" with inserts of unknown outcome
    durable: bool | None = None
    database_empty: bool | None = None
    lost_examples: tuple[str, ...] | None = None

    @property
    def verdict(self) -> bool | None:
        """Durable or not; None: not verified. A count of lost writes decides even without
        `durable` (a status schema that prunes the flag must not turn a loss into "not verified")."""
        if self.lost:
            return False
        return self.durable if self.durable is not None else (True if self.lost is not None else None)


@dataclass(frozen=True, kw_only=True)
class Condition(JsonModel):
    """One of clause 3.3.2's consistency conditions as the check found it."""

    number: int
    passed: bool
    checked: int
    violations: int
    example: str | None = None
    note: str | None = None


@dataclass(frozen=True, kw_only=True)
class Consistency(JsonModel):
    """status.consistency (after the run) and status.consistencyAfterLoad."""

    passed: bool
    violated: tuple[int, ...]
    conditions: tuple[Condition, ...]


@dataclass(frozen=True, kw_only=True)
class ConsistencyDuringRun(Consistency):
    """status.consistencyDuringRun: the check that read while the runners' transactions
    committed, and when it read."""

    started_at: str
    finished_at: str
    while_running: bool


@dataclass(frozen=True, kw_only=True)
class MetricJudged(JsonModel):
    """One metric of status.regression: the run's value against its baseline (value, baseline
    and delta absent where the run or the baseline lacks the metric)."""

    name: str  # tpmC | opsPerSecond | p99Ms/<TYPE>
    limit_percent: float
    outcome: str  # Pass | Regressed | Improved | NoData
    value: float | None = None
    baseline: float | None = None
    delta_percent: float | None = None


@dataclass(frozen=True, kw_only=True)
class ChangePointJudged(JsonModel):
    """A change point of the history in status.regression.changePoints."""

    metric: str
    result: str
    results_since: int
    mean_before: float
    mean_after: float
    change_percent: float
    p_value: float
    limit_percent: float
    outcome: str  # Pass | Regressed | Improved


@dataclass(frozen=True, kw_only=True)
class Baseline(JsonModel):
    source: str  # previous | result | fixed | none
    results: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class Regression(JsonModel):
    """status.regression: how the run was judged (the verdict itself is status.verdict)."""

    message: str
    comparison_hash: str
    on_regression: str  # Fail | Warn
    baseline: Baseline
    metrics: tuple[MetricJudged, ...]
    change_points: tuple[ChangePointJudged, ...] | None = None  # None: no spec.regression.changePoints


@dataclass(frozen=True, kw_only=True)
class FaultTarget(JsonModel):
    """One pod of a fault that takes several (kill-all, a partition's half), as it was chosen."""

    pod: str
    uid: str
    restarts: int = 0


@dataclass(frozen=True, kw_only=True)
class RunnerTarget(JsonModel):
    """A runner pod a partition put on its cut-off side."""

    pod: str
    uid: str


@dataclass(frozen=True, kw_only=True)
class ChaosExperiment(JsonModel):
    """A chaos fault's Chaos Mesh experiment as the operator creates it (and deletes it)."""

    kind: str
    name: str
    spec: Mapping[str, Any]


@dataclass(frozen=True, kw_only=True)
class FaultEntry(JsonModel):
    """An entry of status.faults: one injection through its states (the faults package writes
    them). Each kind records the fields it has; an entry skipped before it chose a victim has
    none of them."""

    number: int
    action: str
    state: str  # Injecting | Injected | Healed | Recovered | Skipped
    method: str | None = None
    due_time: str | None = None
    grace_period_seconds: int | None = None
    target: str | None = None
    targets: tuple[FaultTarget, ...] | None = None
    target_uid: str | None = field(default=None, metadata=named("targetUID"))
    target_restarts: int | None = None
    restart_count: int | None = None
    duration_seconds: int | None = None
    for_good: bool | None = None  # node-loss: for the rest of the measured interval
    delay_ms: int | None = None
    jitter_ms: int | None = None
    loss_percent: float | None = None
    split: str | None = None
    runners: str | None = None  # partition: where the runner pods were
    runner_targets: tuple[RunnerTarget, ...] | None = None  # partition cut-off-side: the runner pods with it
    node: str | None = None  # node-loss: the node cut off
    experiment: ChaosExperiment | None = None  # chaos: the experiment created
    injected_time: str | None = None
    healed_time: str | None = None
    recovered_time: str | None = None
    recovery_seconds: float | None = None
    throughput_recovery_seconds: float | None = None
    message: str | None = None

    @property
    def victims(self) -> tuple[FaultTarget, ...]:
        """The pods it takes: its targets, or its one target."""
        if self.targets is not None:
            return self.targets
        assert self.target is not None and self.target_uid is not None, f"fault {self.number} chose no victim"
        return (FaultTarget(pod=self.target, uid=self.target_uid, restarts=self.target_restarts or 0),)

    @property
    def who(self) -> str:
        """The victims as an event names them."""
        return f"{self.target}" if self.targets is not None else f"pod {self.target}"
