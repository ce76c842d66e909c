"""The pipelined clients of a process on VoltDB as one compiled loop (_voltloop.c), where the
workload allows: the same operations, calls, judgement, measurements and ledger as
pipelined.py's PipelinedClients, which stays the reference and runs everything else.

Why: the runner's CPU per operation in Python (20-26 us at 8 client threads, of which the
interpreter's bookkeeping is most) was 0.7-0.8 of what VoltDB spends on the operation itself, so
on a machine the two share the runner took a third of it. In C the operation costs the runner
what its system calls cost.

What it runs: a run (not a load) of single operations (operationspertransaction 1) of CoreWorkload
(not TimeSeries), reads, updates, inserts and read-modify-writes in any mix, every request and
field length distribution, unthrottled, without dataintegrity. A scan, a target or dataintegrity
runs the Python loop (`refusal` says which); the results say which loop ran (`client_loop`).

The loop takes over each client's draws from its random.Random's state (Python's Mersenne Twister
in C) and the workload's shared state (the acknowledged insert counter, a sequential chooser's
count, a latest chooser's zeta sum) for the run, and keeps them: nothing draws from the workload
after its run. tests/test_ycsb_compiled.py checks that the same seed gives the same operations
and calls as workload.py and voltdb.py do. Every slice (SLICE_SECONDS) Python takes what it measured into the
clients' measurements, the ledger lines of its acknowledged writes, its failures (made into the
driver's errors as pipelined.py's would be) and any connection lost, which it reconnects.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

from tpcc_contract.ycsb.measurements import ERROR
from tpcc_contract.ycsb.properties import Properties

from ..drivers.base import ConnectionLost, DriverError, UnknownOutcome
from ..drivers.voltdb import UNREACHABLE, VoltDBDriver, checked, decode_response
from .generators import (
    ConstantIntegerGenerator,
    ExponentialGenerator,
    HotspotIntegerGenerator,
    ScrambledZipfianGenerator,
    SequentialGenerator,
    SkewedLatestGenerator,
    UniformLongGenerator,
    ZipfianGenerator,
)
from .ledger import ledger_line
from .outcome import written
from .pipelined import Client, Shared
from .workload import INSERT, READ, READMODIFYWRITE, UPDATE, CoreWorkload, Operation

SLICE_SECONDS = 0.05  # how often the loop hands Python what it measured (the progress polls 5 times a second)
KINDS = {READ: 0, UPDATE: 1, INSERT: 2, READMODIFYWRITE: 3}
# the generators' kinds in _voltloop.c
G_CONSTANT, G_UNIFORM, G_ZIPFIAN, G_SCRAMBLED, G_LATEST, G_HOTSPOT, G_SEQUENTIAL, G_EXPONENTIAL = range(8)
NO_ZIPF = (0, 0, 0, 0.0, 0.0, 0.0, 0.0, 0.0)
MAX_ZEROPADDING = 59  # _voltloop.c's MAX_KEY (64) less "user" and the final NUL


def extension() -> Any:
    """_voltloop, or None where it was not built (a machine without a C compiler)."""
    try:
        return importlib.import_module("tpcc_runner.ycsb._voltloop")
    except ImportError:
        return None


def refusal(props: Properties, phase: str) -> str | None:
    """Why a process's pipelined clients run the Python loop for these properties, or None: the
    compiled loop runs them. (A load and N operations per transaction are not pipelined at all.)"""
    if phase != "run" or props.operationspertransaction != 1:
        return "not a run of single operations"
    if extension() is None:
        return "the compiled loop (_voltloop) is not built here"
    if props.timeseries:
        return "a time series"
    if props.scanproportion > 0:
        return "scans"
    if props.target > 0:
        return "a target (throttled clients)"
    if props.dataintegrity:
        return "dataintegrity"
    if not 1 <= props.fieldcount <= 64:
        return f"{props.fieldcount} fields (it takes 1-64)"
    if props.zeropadding > MAX_ZEROPADDING:
        return f"zeropadding {props.zeropadding} (it takes keys of up to {MAX_ZEROPADDING} digits)"
    return None


def _zipf(z: ZipfianGenerator) -> tuple:
    return (z.items, z.base, z.countforzeta, z.theta, z.zeta2theta, z.alpha, z.zetan, z.eta)


def generator_spec(gen: Any) -> tuple:
    """A generator of generators.py as _voltloop.c takes it: (kind, lower, interval, cold
    interval, counter, fraction, zipfian state)."""
    if isinstance(gen, ConstantIntegerGenerator):
        return (G_CONSTANT, gen.value, 0, 0, 0, 0.0, NO_ZIPF)
    if isinstance(gen, UniformLongGenerator):
        return (G_UNIFORM, gen.lb, gen.interval, 0, 0, 0.0, NO_ZIPF)
    if isinstance(gen, ZipfianGenerator):
        return (G_ZIPFIAN, 0, 0, 0, 0, 0.0, _zipf(gen))
    if isinstance(gen, ScrambledZipfianGenerator):
        return (G_SCRAMBLED, gen.min, gen.itemcount, 0, 0, 0.0, _zipf(gen.gen))
    if isinstance(gen, SkewedLatestGenerator):
        return (G_LATEST, 0, 0, 0, 0, 0.0, _zipf(gen.zipfian))
    if isinstance(gen, HotspotIntegerGenerator):
        return (G_HOTSPOT, gen.lower, gen.hot_interval, gen.cold_interval, 0, gen.hot_opn_fraction, NO_ZIPF)
    if isinstance(gen, SequentialGenerator):
        return (G_SEQUENTIAL, gen.countstart, gen.interval, 0, gen.upcoming(), 0.0, NO_ZIPF)
    if isinstance(gen, ExponentialGenerator):
        return (G_EXPONENTIAL, 0, 0, 0, 0, gen.gamma, NO_ZIPF)
    raise ValueError(f"the compiled loop has no {type(gen).__name__}")


def new_loop(workload: CoreWorkload, clients: Sequence[Client], links: int, call_timeout: float) -> Any:
    """The compiled loop of these clients (client n on link n mod links, as VoltDBPipeline sends)."""
    props = workload.props
    index, pods = workload.shard
    operations = [(share, KINDS[kind]) for share, kind in workload.operations.shares]
    return extension().Loop(
        [(c.rng.getstate()[1], c.limit, n % links) for n, c in enumerate(clients)],
        links,
        operations,
        generator_spec(workload.key_chooser),
        generator_spec(workload.field_length),
        generator_spec(workload.field_chooser),
        tuple(workload.fields),
        (props.readallfields, props.writeallfields, workload.ordered, props.zeropadding),
        (
            props.recordcount,
            index,
            pods,
            props.fieldlength,
            workload.inserted.upcoming(),
            workload.inserted.last_value(),
        ),
        call_timeout,
    )


class CompiledClients:
    """PipelinedClients' job (pipelined.py) done by the compiled loop, a slice at a time."""

    def __init__(self, clients: Sequence[Client], drivers: list[VoltDBDriver], shared: Shared):
        """drivers: the pipeline's connections, one to each node (VoltDBPipeline's)."""
        self.clients, self.drivers, self.shared = clients, drivers, shared
        workload = clients[0].workload
        assert isinstance(workload, CoreWorkload), "refusal() lets no time series through"
        self.loop = new_loop(workload, clients, len(self.drivers), self.drivers[0].call_timeout)

    def run(self) -> None:
        try:
            while True:
                for n in range(len(self.drivers)):
                    self._connect(n)
                report = self.loop.run(SLICE_SECONDS, self.shared.stop.is_set())
                self._take(report)
                if report["finished"]:
                    return
        except Exception as e:
            self.shared.abort("compiled clients", e)

    def _connect(self, n: int) -> None:
        """Link n's socket to the loop: its connection, or a new one once it was lost (-1: none,
        the loop fails its calls at once, as pipelined.py's flush does)."""
        driver = self.drivers[n]
        if driver._conn is None and not driver._reconnect():
            self.loop.set_link(n, -1)
            return
        assert driver._conn is not None, "connected above"
        self.loop.set_link(n, driver._conn.socket.fileno())  # the same socket: nothing changes

    def _take(self, report: dict[str, Any]) -> None:
        for client, done in zip(self.clients, report["done"]):
            client.done = done
        measurements = self.clients[0].measurements
        for name, status, count in report["statuses"]:
            measurements.count_status(name, status, count)
        for name, latencies in report["latencies"]:
            measurements.record_latencies(name, latencies)
        lines = [ledger_line(kind, key, values) for _, kind, key, values in report["writes"]]
        for n, _ in report["lost"]:
            self.drivers[n].close()  # the next slice reconnects
        for failure in report["failures"]:
            lines += self._failed(*failure)
        self.shared.wrote(lines)

    def _failed(
        self,
        n: int,
        kind: str,
        keynum: int,
        writes: bool,
        key: str,
        values: dict[str, bytes] | None,
        procedure: str,
        body: bytes | None,
        message: str,
    ) -> list[str]:
        """A failed step's error, as pipelined.py's link makes it; its ledger lines."""
        error: DriverError
        if body is not None:
            try:
                checked(procedure, decode_response(body), writes)
                error = DriverError(f"{procedure}: an answer the compiled loop could not read")
            except DriverError as e:
                error = e
        elif message == UNREACHABLE:  # nothing was sent (_voltloop.c's words for a link with no connection)
            error = ConnectionLost(f"{procedure}: {message}")
        else:
            error = self.drivers[n % len(self.drivers)].unanswered(procedure, writes, message)
        self.shared.failed(kind, error)
        if not isinstance(error, UnknownOutcome):
            return []
        return written(Operation(kind, keynum, key, values=values), ERROR, known=False)
