"""TPC-C (the default workload.kind): warehouses loaded by `tpcc load`, terminals run by `tpcc
run`, every acknowledged NewOrder verified by `tpcc verify-ledger`, the 12 consistency conditions
of clause 3.3.2 checked by `tpcc check`."""

from __future__ import annotations

from collections.abc import Mapping

from tpcc_runner.results import merge_results
from tpcc_runner.workload import RESPONSE_TIME_LIMIT_SECONDS

from ..capacity import WAREHOUSES, Unit
from ..regression import TPMC, Figures, p99_of
from ..results import durability_status, late_runners_message, run_deliveries, run_status
from ..runspec import RemotePercent, RunSpec
from ..runspec import Workload as WorkloadSpec
from ..runstatus import Results
from .base import DurabilityVerdict, Measured, Workload

# clause 5.2.5.4's 90th-percentile response-time limits, in ms (Stock-Level 20 s, the others 5 s)
P90_LIMITS_MS = {t: s * 1000 for t, s in RESPONSE_TIME_LIMIT_SECONDS.items()}


def mix_argument(spec: RunSpec) -> str:
    """The TPC-C mix as `tpcc run --mix` takes it: NewOrder, Payment, OrderStatus, Delivery, StockLevel."""
    mix = spec.workload.mix
    return ",".join(str(n) for n in (mix.new_order, mix.payment, mix.order_status, mix.delivery, mix.stock_level))


def remote_arguments(spec: RunSpec) -> list[str]:
    """workload.remotePercent as `tpcc run` flags; an absent key keeps the runner's clause value."""
    remote = spec.workload.remote_percent or RemotePercent()
    flags = (("--remote-line-percent", remote.new_order_lines), ("--remote-payment-percent", remote.payments))
    return [arg for flag, percent in flags if percent is not None for arg in (flag, str(percent))]


class TPCC(Workload):
    kind = "tpcc"
    throughput = "tpmC"
    consistency_conditions = True
    refuses_existing_data = True  # never touch a user's own TPC-C data unasked

    def loaded(self, workload: WorkloadSpec) -> str:
        return f"{workload.warehouses} warehouses"

    def largest_load(self, spec: RunSpec) -> tuple[str, int, Unit]:
        if spec.sweep is not None and spec.sweep.warehouses:
            return "spec.sweep.warehouses", max(spec.sweep.warehouses), WAREHOUSES
        return "spec.workload.warehouses", spec.workload.warehouses, WAREHOUSES

    def load_arguments(self, spec: RunSpec, seed: int) -> tuple[list[str], list[str]]:
        w = spec.workload
        return ["load"], ["--warehouses", str(w.warehouses), "--workers", str(w.load_workers), "--seed", str(seed)]

    def run_arguments(self, spec: RunSpec, seed: int) -> tuple[list[str], list[str]]:
        w = spec.workload
        flags = [
            "--warehouses",
            str(w.warehouses),
            "--total-clients",
            str(w.clients),
            "--duration",
            str(w.duration_seconds),
            "--warmup",
            str(w.warmup_seconds),
            "--mix",
            mix_argument(spec),
            "--seed",
            str(seed),
            *(["--think-time"] if w.pacing == "spec" else []),
            *remote_arguments(spec),
        ]
        return ["run"], flags

    def verify_command(self, spec: RunSpec) -> list[str]:
        return ["verify-ledger"]

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
