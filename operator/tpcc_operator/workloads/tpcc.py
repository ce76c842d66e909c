"""TPC-C (the default workload.kind): warehouses loaded by `tpcc load`, terminals run by `tpcc
run`, every acknowledged NewOrder verified by `tpcc verify-ledger`, the 12 consistency conditions
of clause 3.3.2 checked by `tpcc check`."""

from __future__ import annotations

from collections.abc import Mapping

from tpcc_contract.commands import Connection, Load, Run, RunnerPod, VerifyLedger
from tpcc_contract.results import merge_results
from tpcc_contract.tpcc import RESPONSE_TIME_LIMIT_SECONDS

from ..capacity import Unit, warehouses
from ..regression import TPMC, Figures, p99_of
from ..results import durability_status, late_runners_message, run_deliveries, run_status
from ..runspec import RemotePercent, RunSpec
from ..runspec import Workload as WorkloadSpec
from ..runstatus import Results
from .base import DurabilityVerdict, Measured, Workload

# clause 5.2.5.4's 90th-percentile response-time limits, in ms (Stock-Level 20 s, the others 5 s)
P90_LIMITS_MS = {t: s * 1000 for t, s in RESPONSE_TIME_LIMIT_SECONDS.items()}


def mix(spec: RunSpec) -> tuple[int, int, int, int, int]:
    """The TPC-C mix as `tpcc run --mix` takes it: NewOrder, Payment, OrderStatus, Delivery, StockLevel."""
    m = spec.workload.mix
    return (m.new_order, m.payment, m.order_status, m.delivery, m.stock_level)


class TPCC(Workload):
    kind = "tpcc"
    throughput = "tpmC"
    consistency_conditions = True

    def loaded(self, workload: WorkloadSpec) -> str:
        scaled = f" scaled down {workload.scale_down}x" if (workload.scale_down or 1) > 1 else ""
        return f"{workload.warehouses} warehouse{'' if workload.warehouses == 1 else 's'}{scaled}"

    def largest_load(self, spec: RunSpec) -> tuple[str, int, Unit]:
        unit = warehouses(spec.workload.scale_down)
        if spec.sweep is not None and spec.sweep.warehouses:
            return "spec.sweep.warehouses", max(spec.sweep.warehouses), unit
        return "spec.workload.warehouses", spec.workload.warehouses, unit

    def sweep_warehouses(self, spec: RunSpec) -> list[int | None]:
        return list((spec.sweep and spec.sweep.warehouses) or [spec.workload.warehouses])

    def load_command(
        self, spec: RunSpec, seed: int, connection: Connection, reset: bool, results_configmap: str
    ) -> Load:
        """An external database's data is refused unless the spec resets it: never touch a user's
        own TPC-C data unasked. With verify.afterLoad the Job checks the 12 conditions too."""
        w = spec.workload
        return Load(
            connection,
            warehouses=w.warehouses,
            workers=w.load_workers,
            seed=seed,
            results_configmap=results_configmap,
            reset=reset,
            refuse_existing=not reset and not spec.database.deployed,
            check=spec.verify.after_load,
            scale_down=w.scale_down,
        )

    def run_command(self, spec: RunSpec, seed: int, connection: Connection, pod: RunnerPod) -> Run:
        """workload.remotePercent: an absent key keeps the runner's clause value."""
        w = spec.workload
        remote = w.remote_percent or RemotePercent()
        return Run(
            connection,
            warehouses=w.warehouses,
            total_clients=w.clients,
            duration=w.duration_seconds,
            warmup=w.warmup_seconds,
            mix=mix(spec),
            seed=seed,
            pod=pod,
            think_time=w.pacing == "spec",
            remote_line_percent=remote.new_order_lines,
            remote_payment_percent=remote.payments,
            retry_wait=w.retry_wait,
            target_tps=w.target_transactions_per_second,
        )

    def verify_command(
        self, spec: RunSpec, connection: Connection, ledgers: tuple[str, ...], results_configmap: str
    ) -> VerifyLedger:
        return VerifyLedger(connection, ledgers, results_configmap)

    def merge(self, docs: list[dict]) -> dict:
        return merge_results(docs)

    def measured(self, docs: list[dict]) -> Measured:
        """With their Deliveries for the consistency check's independent count (condition 11)."""
        results = run_status(docs)
        completed = f"tpmC {results.tpm_c:.1f}"
        return Measured(
            "results",
            results.to_json(),
            f"{completed} from {len(docs)} pods",
            f"{completed}; verifying durability",
            deliveries=run_deliveries(docs),
            late=late_runners_message(results),
        )

    def figures(self, status: dict) -> Figures:
        results = Results.in_status(status, "results")
        if results is None:
            return Figures(None, TPMC)
        ran = {t: v.latency_ms for t, v in results.transactions.items() if v.executed > 0}
        return Figures(results.tpm_c, TPMC, p99_of(ran))

    def durability(self, report: dict) -> DurabilityVerdict:
        d = durability_status(report)
        return DurabilityVerdict(
            d,
            "TPC-C",
            lost=(
                f"{d.lost} of {d.acknowledged} acknowledged NewOrders lost "
                f"({d.missing} missing, {d.replaced} replaced by a later order under the same "
                f"O_ID, {d.duplicates} acknowledged twice)"
            ),
            reason="AcknowledgedOrdersLost",
            held=(
                f"all {d.acknowledged} acknowledged NewOrders found in {d.ledgers} ledgers; "
                f"{d.unknown_outcome} of unknown outcome: {d.unknown_committed} committed"
            ),
        )

    def held(self, spec: RunSpec) -> list[str]:
        held = ["consistency conditions held during the run"] if spec.verify.during_run else []
        held += ["no acknowledged order lost"]
        held += ["consistency conditions hold"] if spec.verify.enabled else ["consistency check disabled"]
        held += ["ACID tests passed"] if spec.verify.acid_tests is not None else []
        return held

    def p90_limits(self, written: Mapping[str, float] | None) -> dict[str, float]:
        """Clause 5.2.5.4's, with the search's p90LimitsMs over them."""
        return {**P90_LIMITS_MS, **dict(written or {})}


TPCC_WORKLOAD = TPCC()
