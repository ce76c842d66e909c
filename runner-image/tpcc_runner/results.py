"""This pod's results document (tpcc_contract.results builds it and merges several pods') from what
its run measured and what the run was, the run's Prometheus latency buckets, and the human summary."""

from __future__ import annotations

import bisect
import platform
from typing import TYPE_CHECKING, Any

from tpcc_contract.deliveries import RunDeliveries
from tpcc_contract.results import TIMELINE_STEP_SECONDS, PodWindow, build_results
from tpcc_contract.tpcc import TRANSACTIONS

from . import __version__
from .loader import constants_of
from .workload import spec_deviations

if TYPE_CHECKING:
    from .drivers.base import LoadMeta
    from .executor import Measurement, RunPlan, Window

# The run's latency histogram (clients count into it, metrics exports it); here, not in
# metrics, so the run's clients do not import the Prometheus client.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


def bucket_index(seconds: float) -> int:
    """Index of the first bucket whose upper bound holds the value (len = +Inf)."""
    return bisect.bisect_left(LATENCY_BUCKETS, seconds)


def pod_window(window: Window, measured: Measurement) -> PodWindow:
    """The planned window cut to when this pod's terminals were all running."""
    return PodWindow(
        start_at=window.start,
        terminals_started=measured.terminals_started,
        planned_measure_start=window.measure,
        measure_start=max(window.measure, measured.terminals_started),
        measure_end=min(window.end, measured.terminals_stopped),
    )


def run_results(
    plan: RunPlan,
    meta: LoadMeta,
    described: dict[str, Any],
    processes: int,
    measured: Measurement,
    window: PodWindow,
    timeline: dict[int, int],
    deliveries: RunDeliveries,
) -> dict[str, Any]:
    """The results document of this runner pod's run: build_results over what it measured,
    with what the run was (run_description)."""
    measured_timeline = {b: n for b, n in timeline.items() if b * TIMELINE_STEP_SECONDS < plan.duration}
    return build_results(
        measured.stats,
        window,
        measured.new_orders_per_second,
        plan.warehouses,
        plan.clients,
        plan.think_time,
        measured_timeline,
        run_description(plan, meta, described, processes, deliveries),
    )


def run_description(
    plan: RunPlan, meta: LoadMeta, described: dict[str, Any], processes: int, deliveries: RunDeliveries
) -> dict[str, Any]:
    """What the run was, beside what it measured: its options and the driver's (`described`,
    Driver.describe), where it deviates from the spec, the C constants of load and run, the
    versions, and every Delivery of the run (warmup included: consistency condition 11)."""
    return {
        "warmup_seconds": plan.warmup,
        "shard": f"{plan.shard}/{plan.shards}",
        "options": {
            "db": plan.db,
            "mix": list(plan.mix),
            "think_time": plan.think_time,
            "remote_percent": {"new_order_line": plan.remote.new_order_line, "payment": plan.remote.payment},
            "processes": processes,
            "max_retries": plan.max_retries,
            "retry_wait": plan.retry_wait,
            "target_tps": plan.target_tps,
            "driver_options": plan.connection.extra,
            "seed": plan.seed,
            "scale": {"items": meta.items, "customers_per_district": meta.customers_per_district},
            "driver": described,
        },
        "spec_deviations": spec_deviations(
            paced=plan.think_time,
            target_tps=plan.target_tps,
            mix=plan.mix,
            clients=plan.all_clients,
            warehouses=plan.warehouses,
            items=meta.items,
            customers_per_district=meta.customers_per_district,
            schema_variant=str(described.get("schema_variant", "")),
            measured_seconds=plan.duration,
            remote=plan.remote,
        ),
        "c_constants": {"load": constants_of(meta).to_dict(), "run": plan.constants.to_dict()},
        "versions": {"runner": __version__, "python": platform.python_version()},
        **deliveries.to_json(),
    }


def summary(doc: dict[str, Any]) -> str:
    """One screen for a human (stderr)."""
    eff = "n/a (no think times)" if doc["efficiency"] is None else f"{doc['efficiency']:.1f}%"
    lines = [
        f"tpmC {doc['tpmC']:.1f}  {doc.get('transactions_per_second', 0.0):.1f} transactions/s  "
        f"efficiency {eff}  ({doc['warehouses']} warehouses, {doc['clients']} clients, "
        f"{doc['measured_seconds']:.0f} s measured)",
        f"{'transaction':<13}{'executed':>9}{'mix%':>7}{'rollbk':>7}{'errors':>7}"
        f"{'unknown':>8}{'retries':>8}{'minms':>8}{'p50ms':>9}{'p95ms':>9}{'p99ms':>9}{'maxms':>9}",
    ]
    for t in TRANSACTIONS:
        s = doc["transactions"][t]
        lat = s["latency_ms"]
        lines.append(
            f"{t:<13}{s['executed']:>9}{s['mix_percent']:>7.1f}{s['rollbacks']:>7}"
            f"{s['errors']:>7}{s['unknown']:>8}{s['retries']:>8}{lat.get('min', 0.0):>8.2f}"
            f"{lat['p50']:>9.2f}{lat['p95']:>9.2f}{lat['p99']:>9.2f}{lat['max']:>9.2f}"
        )
    failed = [t for t, v in doc["response_times"].items() if v["passed"] is False]
    lines.append(
        "90th percentile response times within clause 5.2.5.3 limits"
        if not failed
        else f"90th percentile response time over the clause 5.2.5.3 limit: {', '.join(failed)}"
    )
    lines.extend(server_lines(doc))
    return "\n".join(lines)


def _mib(n: int | None) -> str:
    return "n/a" if n is None else f"{n / 2**20:.1f} MiB"


def server_lines(doc: dict[str, Any]) -> list[str]:
    """The server's size and whether its counters agree with the clients' (for people)."""
    if "server" not in doc:
        return []
    size, agreement = doc["server"]["size"], doc["server_agreement"]
    lines = [
        f"database size: {size['unavailable']}"
        if size.get("unavailable")
        else f"database size: data {_mib(size['data_bytes'])}, indexes {_mib(size['index_bytes'])}, "
        f"storage {_mib(size['storage_bytes'])}, server memory {_mib(size['memory_bytes'])}"
    ]
    detail = f": {agreement['reason']}" if agreement.get("reason") else ""
    lines.append(f"server counters vs clients: {agreement['verdict']}{detail}")
    return lines
