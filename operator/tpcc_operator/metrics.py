"""The operator's Prometheus metrics, derived from each run's status on every tick (so an
operator restart rebuilds them). Names and labels are what dashboards/generate.py queries."""

from __future__ import annotations

from collections.abc import Mapping

from prometheus_client import CollectorRegistry, Counter, Gauge, ProcessCollector, disable_created_metrics

from .faults import HEALED, INJECTED, RECOVERED
from .runspec import RunSpec
from .runstatus import Consistency, Durability, Results
from .stages.machine import FAILED, SUCCEEDED
from .sweep import Table

# No `_created` series: prometheus_client's creation timestamp of every counter child, which
# nothing reads and which doubles each counter's series (process-wide, so set where it is imported).
disable_created_metrics()

RUN_LABELS = ("namespace", "run", "db")
SWEEP_CELL_LABELS = ("warehouses", "clients", "matrix", "repetition")


class OperatorMetrics:
    def __init__(self, registry: CollectorRegistry | None = None):
        self.registry = registry or CollectorRegistry()
        r = self.registry
        # process_resident_memory_bytes and friends: what operator/bench/rss.py reads
        ProcessCollector(registry=r)
        self.runs = Gauge(
            "tpcc_operator_runs", "BenchmarkRuns by phase (1 per run)", RUN_LABELS + ("phase",), registry=r
        )
        errors = "Ticks that failed (API or Helm errors); retried"
        self.reconcile_errors = Counter(
            "tpcc_operator_reconcile_errors_total", errors, ("namespace", "run"), registry=r
        )

        def run_gauge(name: str, text: str, *labels: str) -> Gauge:
            return Gauge(name, text, RUN_LABELS + labels, registry=r)  # and per `labels` beyond the run's

        self.tpmc = run_gauge("tpcc_operator_run_tpmc", "Final tpmC of the run, all runner pods")
        self.baseline_tpmc = run_gauge("tpcc_operator_run_baseline_tpmc", "spec.baselineTpmC of the run")
        self.failed = run_gauge("tpcc_operator_run_failed", "1 if the run ended Failed, 0 if Succeeded")
        self.consistency_passed = run_gauge(
            "tpcc_operator_run_consistency_passed", "1 if every TPC-C consistency condition held after the run"
        )
        self.durability_lost = run_gauge(
            "tpcc_operator_run_durability_lost", "Acknowledged NewOrders missing from the database after the run"
        )
        # a gauge set from status.faults (it survives operator restarts), monotonic per run; not
        # a counter (no _total): it is the run's count as its status has it, set, never incremented
        self.fault_injections = run_gauge(
            "tpcc_operator_fault_injections",
            "Database pods the operator has killed in this run so far, by action",
            "action",
        )
        self.fault_recovery = run_gauge(
            "tpcc_operator_fault_recovery_seconds", "Seconds from the last kill until the database was whole and ready"
        )
        # the regression verdict: one series per run, labelled with the verdict (status.verdict)
        self.verdict = run_gauge(
            "tpcc_operator_run_verdict",
            "1 for the run's regression verdict (Pass, Regressed, Improved, Inconclusive, Failed)",
            "verdict",
        )
        self.delta = run_gauge(
            "tpcc_operator_run_regression_delta_ratio",
            "Each compared metric (tpmC, p99Ms/<TYPE>) against the run's baseline: (value - baseline) / baseline",
            "metric",
        )
        # a sweep's curves: one series per finished cell (status.sweep.cells), as its BenchmarkResults
        self.sweep_cell_tpmc = run_gauge(
            "tpcc_operator_sweep_cell_tpmc", "tpmC of each measured cell of a sweep", *SWEEP_CELL_LABELS
        )
        self._phase: dict[tuple[str, str], tuple[str, str]] = {}  # (ns, run) -> (db, phase)
        # (ns, run) -> gauge -> the label values beyond RUN_LABELS of the run's series in it
        self._series: dict[tuple[str, str], dict[Gauge, set[tuple[str, ...]]]] = {}
        self._run_gauges: tuple[Gauge, ...] = (self.tpmc, self.baseline_tpmc, self.failed, self.consistency_passed)
        self._run_gauges += (self.durability_lost, self.fault_recovery)

    def observe(self, namespace: str, name: str, spec: RunSpec, status: dict) -> None:
        """Set the run's series from its spec and (fresh) status."""
        db = spec.database.type
        key = (namespace, name)
        phase = status.get("phase")
        old = self._phase.get(key)
        if old and old != (db, phase):
            self.runs.remove(namespace, name, *old)
        if phase:
            self.runs.labels(namespace, name, db, phase).set(1)
            self._phase[key] = (db, phase)
        labels = (namespace, name, db)
        results = Results.in_status(status, "results")
        self._set_or_clear(self.tpmc, labels, results.tpm_c if results else None)
        self._set_or_clear(self.baseline_tpmc, labels, spec.baseline_tpm_c)
        ended = {SUCCEEDED: 0, FAILED: 1}.get(phase or "")
        self._set_or_clear(self.failed, labels, ended)
        consistency = Consistency.in_status(status, "consistency")
        self._set_or_clear(self.consistency_passed, labels, int(consistency.passed) if consistency else None)
        durability = Durability.in_status(status, "durability")
        self._set_or_clear(self.durability_lost, labels, durability.lost if durability else None)
        faults = status.get("faults") or []
        killed: dict[str, int] = {}
        for f in faults:
            if f.get("state") in (INJECTED, HEALED, RECOVERED):  # HEALED: a pause or partition undone
                killed[f["action"]] = killed.get(f["action"], 0) + 1
        self._set_series(self.fault_injections, key, labels, {(action,): n for action, n in killed.items()})
        recovered = [f["recoverySeconds"] for f in faults if f.get("state") == RECOVERED]
        self._set_or_clear(self.fault_recovery, labels, recovered[-1] if recovered else None)
        self._observe_verdict(key, labels, status)
        self._observe_sweep(key, labels, status)

    def _observe_verdict(self, key: tuple[str, str], labels: tuple[str, ...], status: dict) -> None:
        verdict = status.get("verdict")
        self._set_series(self.verdict, key, labels, {(verdict,): 1} if verdict else {})
        self._set_series(
            self.delta,
            key,
            labels,
            {
                (m["name"],): m["deltaPercent"] / 100
                for m in (status.get("regression") or {}).get("metrics", [])
                if "deltaPercent" in m
            },
        )

    def _observe_sweep(self, key: tuple[str, str], labels: tuple[str, ...], status: dict) -> None:
        table = Table.in_status(status, "sweep")
        self._set_series(
            self.sweep_cell_tpmc,
            key,
            labels,
            {
                (str(c.warehouses), str(c.clients), matrix_label(c.matrix), str(c.repetition)): c.tpm_c
                for c in (table.cells if table else ())
                if c.tpm_c is not None
            },
        )

    def _set_series(
        self, gauge: Gauge, key: tuple[str, str], labels: tuple[str, ...], values: dict[tuple[str, ...], float]
    ) -> None:
        """The run's series of a gauge with labels beyond RUN_LABELS: these values, and the series
        its status no longer has (a new generation's) removed."""
        had = self._series.setdefault(key, {})
        for extra in had.get(gauge, set()) - set(values):
            self._set_or_clear(gauge, (*labels, *extra), None)
        for extra, value in values.items():
            gauge.labels(*labels, *extra).set(value)
        had[gauge] = set(values)

    def forget(self, namespace: str, name: str) -> None:
        """The run is gone: drop its series."""
        old = self._phase.pop((namespace, name), None)
        if old:
            self.runs.remove(namespace, name, *old)
            for gauge in self._run_gauges:
                self._set_or_clear(gauge, (namespace, name, old[0]), None)
            for gauge, extras in self._series.pop((namespace, name), {}).items():
                for extra in extras:
                    self._set_or_clear(gauge, (namespace, name, old[0], *extra), None)

    @staticmethod
    def _set_or_clear(gauge: Gauge, labels: tuple[str, ...], value) -> None:
        if value is None:
            try:
                gauge.remove(*labels)
            except KeyError:
                pass
        else:
            gauge.labels(*labels).set(value)


def matrix_label(matrix: Mapping[str, str] | None) -> str:
    """A sweep cell's matrix values as one label value, field=value joined by commas ("" without)."""
    return ",".join(f"{field}={value}" for field, value in (matrix or {}).items())
