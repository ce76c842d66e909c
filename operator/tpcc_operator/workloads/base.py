"""The one interface every workload implements on the operator's side: what its load writes, what
its Jobs are told, how its runner pods' results merge into the status, how its durability report
is judged and what a sweep's search measures it by. A workload's module (tpcc.py, ycsb.py) is the
only place that knows these things of it; the runner (tpcc_runner) does the work, and what both
sides must agree on (documents, their merge, command lines) is tpcc_contract's. The registry
(`workloads.of`) is the only place that maps workload.kind to a module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from tpcc_contract.commands import Connection, RunnerCommand, RunnerPod

from ..capacity import Unit
from ..regression import Figures
from ..runspec import RunSpec
from ..runspec import Workload as WorkloadSpec
from ..runstatus import Durability


def client_shares(spec: RunSpec) -> list[int]:
    """The client threads (TPC-C terminals) each runner pod runs, as the runner shares out
    --total-clients / --total-threads: clients // parallelism, one more for the first
    clients % parallelism pods."""
    clients, pods = spec.workload.clients, spec.runners.parallelism
    return [clients // pods + (pod < clients % pods) for pod in range(pods)]


@dataclass(frozen=True)
class Measured:
    """The runner pods' results merged, as the status records them."""

    field: str  # the status field they go into
    value: dict
    completed: str  # what was measured, for RunCompleted and the move to Verifying
    moving: str  # the move's message
    deliveries: dict | None = None  # for the consistency check's independent count (TPC-C)
    late: str | None = None  # why the pods' windows did not all start on time


@dataclass(frozen=True)
class DurabilityVerdict:
    """The verifier's report as status.durability, and the words of its verdict."""

    status: Durability
    load: str  # whose load a database that came back empty lost
    lost: str  # what was lost (when status.durable is false)
    reason: str  # the Durable condition's reason for a loss
    held: str  # what held (when durable)


class Workload:
    kind: ClassVar[str]  # workload.kind
    throughput: ClassVar[str]  # the status field a sweep's search and comparisons measure it by
    consistency_conditions: ClassVar[bool]  # whether it has TPC-C's 12 (verify.enabled checks them)

    def loaded(self, workload: WorkloadSpec) -> str:
        """What the load Job writes, as the stage messages name it."""
        raise NotImplementedError

    def largest_load(self, spec: RunSpec) -> tuple[str, int, Unit]:
        """The most the run puts into its database, the field that asks for it, and its unit."""
        raise NotImplementedError

    def sweep_warehouses(self, spec: RunSpec) -> list[int | None]:
        """The warehouse counts a sweep's cells run, in order; [None] for a workload without
        warehouses (a sweep then varies the clients and the matrix only)."""
        return [None]

    def input_problems(self, spec: RunSpec) -> list[str]:
        """What the runner would refuse in what its Jobs are told, found before anything is deployed."""
        return []

    def load_command(
        self, spec: RunSpec, seed: int, connection: Connection, reset: bool, results_configmap: str
    ) -> RunnerCommand:
        """The load Job's `tpcc` command: `reset` drops what the database holds first, load.json goes
        into `results_configmap`."""
        raise NotImplementedError

    def run_command(self, spec: RunSpec, seed: int, connection: Connection, pod: RunnerPod) -> RunnerCommand:
        """The runner Job's command, each pod told its shard, barrier and ledger (`pod`)."""
        raise NotImplementedError

    def verify_command(
        self, spec: RunSpec, connection: Connection, ledgers: tuple[str, ...], results_configmap: str
    ) -> RunnerCommand:
        """The verifier's command, which reads every runner pod's ledger; durability.json goes into
        `results_configmap`."""
        raise NotImplementedError

    def merge(self, docs: list[dict]) -> dict:
        """The runner pods' results.json merged as the runner merges them (the BenchmarkResult's
        full results). Raises ValueError for pods that disagree on what they ran."""
        raise NotImplementedError

    def measured(self, docs: list[dict]) -> Measured:
        """The pods' results as the status records them. Raises ValueError as merge does."""
        raise NotImplementedError

    def figures(self, status: dict) -> Figures:
        """The run's throughput and each type's p99 from its status (what regression, cost and
        the BenchmarkResult compare), none before it measured."""
        raise NotImplementedError

    def durability(self, report: dict) -> DurabilityVerdict:
        """The verifier's durability.json judged."""
        raise NotImplementedError

    def held(self, spec: RunSpec) -> list[str]:
        """What a succeeded run's message says held."""
        raise NotImplementedError

    def p90_limits(self, written: Mapping[str, float] | None) -> dict[str, float]:
        """The 90th-percentile response-time limits a saturation search holds each count to."""
        return {}
