"""YCSB (workload.kind ycsb): records loaded by `tpcc ycsb load`, CoreWorkload's operations run by
`tpcc ycsb run`, every acknowledged write and the record count verified by `tpcc ycsb verify`; the
Jobs are told workload.ycsb as YCSB's own properties, judged by the runner's parser before anything
is deployed."""

from __future__ import annotations

from typing import Any

from tpcc_contract.commands import Connection, RunnerPod, YcsbLoad, YcsbRun, YcsbVerify, YcsbWorkload
from tpcc_contract.ycsb import properties as ycsb_properties
from tpcc_contract.ycsb.results import merge as merge_ycsb

from ..capacity import Unit, ycsb_records
from ..regression import OPS_PER_SECOND, Figures, p99_of
from ..results import ycsb_durability_status
from ..runspec import RunSpec
from ..runspec import Workload as WorkloadSpec
from ..runstatus import YcsbResults
from .base import DurabilityVerdict, Measured, Workload, client_shares

PHASES = ("load", "run", "verify")  # the `tpcc ycsb` commands of the load, runner and verifier Jobs


def spec_properties(spec: RunSpec, phase: str) -> dict[str, str]:
    """workload.ycsb as the `-p` properties of `tpcc ycsb <phase>` (the spec's own properties
    last, so they win). A run is bounded by its duration only."""
    y = spec.workload.ycsb_or_defaults
    props = {
        "recordcount": y.record_count,
        "batchsize": y.batch_size,
        "operationspertransaction": y.operations_per_transaction,
        **({"operationcount": 0} if phase == "run" else {}),
        **(y.properties or {}),
    }
    return {name: str(value) for name, value in props.items()}


def workload_options(spec: RunSpec, phase: str) -> YcsbWorkload:
    """workload.ycsb as `tpcc ycsb load|run|verify` is told it: the preset, then every property as `-p`."""
    return YcsbWorkload(spec.workload.ycsb_or_defaults.workload, tuple(sorted(spec_properties(spec, phase).items())))


def job_properties(spec: RunSpec, phase: str) -> dict[str, str]:
    """Every property the phase's Job gives `tpcc ycsb`: the `-p` ones, then those its flags
    set (--threads, --target, --duration: threadcount, target, maxexecutiontime), which the
    runner applies last."""
    w = spec.workload
    flags: dict[str, Any] = {}
    if phase == "load":
        flags = {"threadcount": w.load_workers}
    elif phase == "run":
        target = w.ycsb_or_defaults.target_ops_per_second
        flags = {
            "threadcount": client_shares(spec)[0],  # pod 0's: the most any pod runs
            "maxexecutiontime": w.warmup_seconds + w.duration_seconds,
            **({"target": target / spec.runners.parallelism} if target else {}),
        }
    return {**spec_properties(spec, phase), **{name: str(value) for name, value in flags.items()}}


def timeseries_thread_problems(spec: RunSpec) -> list[str]:
    """TimeSeriesWorkload gives each client thread of every runner pod its own series keys, by the
    pod's number times its thread count: the runner pods would fail at the barrier with more
    threads than keys, and refuse threads that are not shared out equally."""
    props = ycsb_properties.resolve(spec.workload.ycsb_or_defaults.workload, job_properties(spec, "run"))
    threads, pods = spec.workload.clients, spec.runners.parallelism
    if props.timeseries and threads % pods:
        return [
            f"workload.clients ({threads}) must be a multiple of runners.parallelism ({pods}) for "
            "TimeSeriesWorkload: every runner pod takes the same number of series keys per thread"
        ]
    if props.timeseries and threads > props.fieldcount:
        return [
            f"spec.workload.ycsb: property fieldcount ({props.fieldcount}: the series keys) must be >= "
            f"workload.clients ({threads} client threads over the runner pods): each writes its own keys"
        ]
    return []


def records_held(spec: RunSpec) -> tuple[str, int, Unit]:
    """The records a YCSB run's database holds at most: recordCount, plus the inserts an
    operationcount bounds (each runner pod runs operationcount operations, insertproportion of
    them inserts; a run bounded by its duration alone has no such bound, and the headroom the
    capacity keeps free is what its inserts have)."""
    props = ycsb_properties.resolve(spec.workload.ycsb_or_defaults.workload, job_properties(spec, "run"))
    if props.timeseries:  # one record per series key: tags, timestamp and value (timeseries.py)
        field = "spec.workload.ycsb.properties.fieldcount (TimeSeries: one record per series key)"
        return field, props.fieldcount, ycsb_records(props.tagcount + 2, max(props.tagvaluelength, 8))
    field = "spec.workload.ycsb.recordCount"
    inserts = int(spec.runners.parallelism * props.operationcount * props.insertproportion)
    if inserts:
        field += (
            f" ({props.recordcount}) + inserts ({spec.runners.parallelism} pods x operationcount "
            f"{props.operationcount} x insertproportion {props.insertproportion:g})"
        )
    return field, props.recordcount + inserts, ycsb_records(props.fieldcount, props.fieldlength)


class YCSB(Workload):
    kind = "ycsb"
    throughput = "opsPerSecond"
    consistency_conditions = False

    def loaded(self, workload: WorkloadSpec) -> str:
        return f"{workload.ycsb_or_defaults.record_count:,} YCSB records"

    def largest_load(self, spec: RunSpec) -> tuple[str, int, Unit]:
        return records_held(spec)

    def input_problems(self, spec: RunSpec) -> list[str]:
        """What the runner would refuse in the properties its load, run or verify Job is given,
        found with its own parser (tpcc_contract.ycsb.properties): the property named, as the
        CRD's rules cannot check every value (a count that is no number, minscanlength above
        maxscanlength, ...)."""
        for phase in PHASES:
            try:
                ycsb_properties.resolve(spec.workload.ycsb_or_defaults.workload, job_properties(spec, phase))
            except ycsb_properties.PropertyError as refused:
                return [f"spec.workload.ycsb: {refused} (the {phase} Job's `tpcc ycsb {phase}` would refuse it)"]
        return timeseries_thread_problems(spec)

    def load_command(
        self, spec: RunSpec, seed: int, connection: Connection, reset: bool, results_configmap: str
    ) -> YcsbLoad:
        """Existing data is never refused: its records live in their own table or collection."""
        return YcsbLoad(
            workload_options(spec, "load"),
            connection,
            threads=spec.workload.load_workers,
            seed=seed,
            results_configmap=results_configmap,
            reset=reset,
        )

    def run_command(self, spec: RunSpec, seed: int, connection: Connection, pod: RunnerPod) -> YcsbRun:
        """Pod I inserts into its own slice of the key space (its shard), the target is shared out
        among the pods."""
        w, n = spec.workload, spec.runners.parallelism
        target = w.ycsb_or_defaults.target_ops_per_second
        return YcsbRun(
            workload_options(spec, "run"),
            connection,
            total_threads=w.clients,
            seed=seed,
            duration=w.warmup_seconds + w.duration_seconds,
            pod=pod,
            target=target / n if target else None,
        )

    def verify_command(
        self, spec: RunSpec, connection: Connection, ledgers: tuple[str, ...], results_configmap: str
    ) -> YcsbVerify:
        return YcsbVerify(workload_options(spec, "verify"), connection, ledgers, results_configmap)

    def merge(self, docs: list[dict]) -> dict:
        return merge_ycsb(docs)

    def measured(self, docs: list[dict]) -> Measured:
        merged = merge_ycsb(docs)  # already status.ycsb's shape (the CRD schema)
        completed = f"{merged['opsPerSecond']:.1f} operations/s from {len(docs)} pods"
        return Measured(
            "ycsb", merged, completed, f"YCSB workload {merged['workload']}, {completed}; verifying durability"
        )

    def figures(self, status: dict) -> Figures:
        ycsb = YcsbResults.in_status(status, "ycsb")
        if ycsb is None:
            return Figures(None, OPS_PER_SECOND)
        ran = {name: op.latency_ms for name, op in ycsb.operations.items() if op.count > 0}
        return Figures(ycsb.ops_per_second, OPS_PER_SECOND, p99_of(ran))

    def durability(self, report: dict) -> DurabilityVerdict:
        d = ycsb_durability_status(report)
        counted = f"{d.records} records, {d.expected_records} expected"
        return DurabilityVerdict(
            d,
            "YCSB",
            lost=(
                f"{d.lost} of {d.acknowledged} acknowledged YCSB writes lost ({counted})"
                if d.lost
                # every acknowledged write is there, yet records vanished or appeared that no write explains
                else f"the record count is off: {counted}, all {d.acknowledged} acknowledged YCSB writes found"
            ),
            reason="AcknowledgedWritesLost",
            held=(
                f"all {d.acknowledged} acknowledged YCSB writes found in {d.ledgers} "
                f"ledgers ({counted}); {d.unknown_outcome} of unknown outcome"
            ),
        )

    def held(self, spec: RunSpec) -> list[str]:
        return ["no acknowledged write lost"]


YCSB_WORKLOAD = YCSB()
