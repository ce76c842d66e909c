"""YCSB's client (site.ycsb.Client and ClientThread) for the runner: threadcount client threads,
each with its own store connection and its own random.Random (seeded from the run's seed and its
thread number), the threads of one process sharing one CoreWorkload (with TimeSeriesWorkload each
its own SeriesThread: its series keys and timestamps). A thread does its share of
operationcount (or of the records to load), YCSB's way of splitting it, until maxexecutiontime
stops it; with a target it paces itself to target / threadcount operations per second from its
start, as ClientThread.throttleNanos does. Throughput counts every operation attempted, as YCSB's.
On a store that pipelines (VoltDB) a run's single operations are the threads' without a thread
and a connection each: pipelined.py drives them all over the store's connections, one thread.

With Plan.processes > 1 the threads are split over client processes (pool.py): one process's
threads pass the interpreter lock around every send and receive, and a runner that needs more
CPU than the database it measures measures itself. Each process has its own key counters, so
each gets its own keys (pool.Part): a load's range, a run's slice of the insert keys.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from tpcc_contract.ycsb.measurements import BATCHED_OK, ERROR, OK, Measurements
from tpcc_contract.ycsb.properties import Properties

from ..drivers.base import UnknownOutcome
from .outcome import MEASUREMENT, ThreadWorkload, Timed, judge, written
from .pipelined import PipelinedClients
from .store import KeyValueStore, Pipeline
from .timeseries import TimeSeriesWorkload, workload_for
from .workload import INSERT, READMODIFYWRITE, CoreWorkload, Operation

log = logging.getLogger("tpcc.ycsb")
PROGRESS_SECONDS = 10.0
MAX_ERRORS_KEPT = 10


def perform(store: KeyValueStore, workload: ThreadWorkload, op: Operation) -> tuple[str, list[Timed]]:
    """Run one operation as CoreWorkload's doTransaction* does: (its status, what to measure).
    Errors propagate."""
    t0 = time.perf_counter()
    if op.kind != READMODIFYWRITE:
        result = store.apply(op)
        return judge(workload, op, result, time.perf_counter() - t0)
    record = store.read(op.key, op.fields)
    t1 = time.perf_counter()
    found = store.update(op.key, op.written)
    t2 = time.perf_counter()
    return judge(workload, op, (record, found), t2 - t0, (t1 - t0, t2 - t1))


def throttle_delay(start: float, done: int, tick: float, now: float) -> float:
    """ClientThread.throttleNanos: seconds to wait so that operation done + 1 starts no earlier
    than start + done * tick (tick = threadcount / target seconds; 0: unthrottled). A thread that
    fell behind does not wait until it is back on schedule, so it catches up in a burst, as YCSB's."""
    return max(0.0, start + done * tick - now) if tick else 0.0


def shares(total: int, threads: int) -> list[int]:
    """Client's split of a count over the threads (0: no limit for each)."""
    return [total // threads + (1 if i < total % threads else 0) for i in range(threads)]


@dataclass
class Plan:
    new_store: Callable[[], KeyValueStore]  # a connected store, one per client thread
    props: Properties
    phase: str  # "load" or "run"
    seed: int
    shard: tuple[int, int] = (0, 1)  # runner pod I of N: its own slice of the run's insert keys
    processes: int = 1  # client processes the threads are split over (1: in this process)
    preload: tuple[str, ...] = ()  # modules the processes' fork server imports once (the store's)


@dataclass
class _Shared:
    """What the client threads hand to the main thread while they run."""

    stop: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    ledger: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    error_count: int = 0
    aborted: str | None = None  # why a client thread stopped the run (a bug, not an operation's error)

    def wrote(self, lines: list[str]) -> None:
        if lines:
            with self.lock:
                self.ledger.extend(lines)

    def failed(self, what: str, e: BaseException, operations: int = 1) -> None:
        """operations: how many failed with it (a transaction's, a load batch's records)."""
        with self.lock:
            self.error_count += operations
            if len(self.errors) < MAX_ERRORS_KEPT:
                self.errors.append(f"{what}: {type(e).__name__}: {e}")
                log.warning("ycsb: %s", self.errors[-1])

    def abort(self, where: str, e: BaseException) -> None:
        """A bug outside an operation: stop the run, report it as one line."""
        self.failed(where, e)
        self.aborted = f"{where}: {type(e).__name__}: {e}"
        self.stop.set()

    def take_ledger(self) -> list[str]:
        with self.lock:
            lines, self.ledger = self.ledger, []
        return lines


class ClientThread:
    def __init__(
        self,
        plan: Plan,
        workload: CoreWorkload | TimeSeriesWorkload,
        store: KeyValueStore,
        index: int,
        limit: int,
        shared: _Shared,
    ):
        self.plan, self.store, self.shared = plan, store, shared
        self.workload = workload.for_thread(index, plan.props.threadcount)
        self.rng = random.Random(f"{plan.seed}:{index}")
        self.limit = limit  # operations (records on load) to do, 0: no limit on a run
        self.done = 0
        self.measurements = Measurements()
        per_thread = plan.props.target / plan.props.threadcount
        self.tick = 1.0 / per_thread if per_thread > 0 else 0.0

    def more(self) -> bool:
        # a load always has its count: a thread (a process) whose share is 0 has nothing to load
        unlimited = self.limit == 0 and self.plan.phase != "load"
        return not self.shared.stop.is_set() and (unlimited or self.done < self.limit)

    def first_start(self, now: float) -> float:
        """When the thread's schedule starts: ClientThread spreads slow threads' first operations."""
        return now + self.rng.random() * self.tick if self.tick >= 0.001 else now

    def measure(self, timed: list[Timed]) -> None:
        for t in timed:
            self.measurements.measure(t.name, t.status, t.seconds, t.report_status)

    def run(self) -> None:
        try:
            now = time.perf_counter()
            start = self.first_start(now)
            time.sleep(start - now)
            step = self._load_batch if self.plan.phase == "load" else self._operations
            while self.more():
                step()
                while (left := throttle_delay(start, self.done, self.tick, time.perf_counter())) > 0:
                    time.sleep(left)
        except Exception as e:  # a bug outside an operation: stop the run, report it as one line
            self.shared.abort("client thread", e)

    def _operations(self) -> None:
        group = self.plan.props.operationspertransaction
        n = group if self.limit == 0 else min(group, self.limit - self.done)
        ops = [self.workload.next_operation(self.rng) for _ in range(n)]
        try:
            if group == 1:
                self._one(ops[0])
            else:
                self._transaction(ops)
        finally:
            for op in ops:
                if op.kind == INSERT:
                    self.workload.acknowledge_insert(op)
        self.done += n

    def _one(self, op: Operation) -> None:
        t0 = time.perf_counter()
        try:
            status, timed = perform(self.store, self.workload, op)
        except Exception as e:  # a store's bug must not end the thread: YCSB's Return=ERROR
            self.shared.failed(op.kind, e)
            self.measure([Timed(MEASUREMENT[op.kind], ERROR, time.perf_counter() - t0)])
            self.shared.wrote(written(op, ERROR, known=False) if isinstance(e, UnknownOutcome) else [])
            return
        self.measure(timed)
        self.shared.wrote(written(op, status))

    def _transaction(self, ops: list[Operation]) -> None:
        """The operations as one database transaction. Each is measured with the transaction's
        latency, commit included: its result counts only once the transaction has committed."""
        t0 = time.perf_counter()
        try:
            results = self.store.transaction(ops)
        except Exception as e:
            seconds = time.perf_counter() - t0
            self.shared.failed(f"transaction of {len(ops)}", e, len(ops))
            self.measure([Timed(MEASUREMENT[op.kind], ERROR, seconds) for op in ops])
            self.measure([Timed("TRANSACTION", ERROR, seconds)])
            if isinstance(e, UnknownOutcome):
                self.shared.wrote([line for op in ops for line in written(op, ERROR, known=False)])
            return
        seconds = time.perf_counter() - t0
        for op, result in zip(ops, results):
            status, timed = judge(self.workload, op, result, seconds)
            self.measure(timed)
            self.shared.wrote(written(op, status))
        self.measure([Timed("TRANSACTION", OK, seconds)])

    def _load_batch(self) -> None:
        """doInsert, batchsize records to one store.load: as with YCSB's MongoDB binding the
        records before the last return BATCHED_OK at once (latency 0: nothing was sent), and the
        last carries the write's latency and status."""
        batch: list[Operation] = []
        while len(batch) < self.plan.props.batchsize and self.more():
            batch.append(self.workload.next_load_insert(self.rng))
            self.done += 1
        for _ in batch[:-1]:
            self.measurements.measure("INSERT", BATCHED_OK, 0.0)
        t0 = time.perf_counter()
        try:
            self.store.load([(op.key, op.written) for op in batch])
        except Exception as e:
            self.shared.failed(f"load of {len(batch)} records", e, len(batch))
            self.measurements.measure("INSERT", ERROR, time.perf_counter() - t0)
            if isinstance(e, UnknownOutcome):  # the batch may be in: the verifier allows for it
                self.shared.wrote([line for op in batch for line in written(op, ERROR, known=False)])
            return
        self.measurements.measure("INSERT", OK, time.perf_counter() - t0)
        self.shared.wrote([line for op in batch for line in written(op, OK)])


@dataclass
class Outcome:
    measurements: Measurements
    operations: int
    runtime_ms: int
    errors: list[str]
    error_count: int
    described: dict
    aborted: str | None = None


def execute(
    plan: Plan,
    on_ledger: Callable[[list[str]], None] | None = None,
    on_connected: Callable[[Callable[[], list[Measurements]]], None] | None = None,
) -> Outcome:
    """Connect every thread's store in this process, run them, return what they measured.
    on_ledger gets the ledger lines as they come; on_connected, once every store is connected and
    before the first operation, a function that gives the threads' measurements as they fill (to
    read, not to change: measurements.live_counts and live_buckets read them while the threads
    run). A plan over several processes is pool.execute_plan's."""
    if plan.processes > 1:
        raise ValueError(f"a plan over {plan.processes} client processes runs with pool.execute_plan")
    props = plan.props
    workload = workload_for(props, plan.shard)
    total = props.records_to_load if plan.phase == "load" else props.operationcount
    shared = _Shared()
    stores: list[KeyValueStore] = []
    try:
        pipe = connect_stores(plan, props.threadcount, stores)
        described = stores[0].describe()
        clients = [
            ClientThread(plan, workload, thread_store(stores, pipe, i), i, limit, shared)
            for i, limit in enumerate(shares(total, props.threadcount))
        ]
        if on_connected:
            on_connected(lambda: [c.measurements for c in clients])
        progress = _Progress(clients, shared, on_ledger or (lambda lines: None))
        runs, described["client_loop"] = runners(clients, pipe, shared)
        runtime = run_threads(runs, shared, props.maxexecutiontime or None, progress.poll)
    finally:
        for store in stores:
            store.close()
    return Outcome(
        merged(c.measurements for c in clients),
        sum(c.done for c in clients),
        round(runtime * 1000),
        shared.errors,
        shared.error_count,
        described,
        shared.aborted,
    )


def merged(parts: Iterable[Measurements]) -> Measurements:
    """The threads' (or the client processes') measurements added into one."""
    measurements = Measurements()
    for part in parts:
        measurements.add(part)
    return measurements


class _Progress:
    """The ledger lines to on_ledger as they come, and a progress line every PROGRESS_SECONDS."""

    def __init__(self, clients: list[ClientThread], shared: _Shared, on_ledger: Callable[[list[str]], None]):
        self.clients, self.shared, self.on_ledger = clients, shared, on_ledger
        self.start = self.last = time.perf_counter()
        self.last_done = 0

    def poll(self, now: float) -> None:
        self.on_ledger(self.shared.take_ledger())
        if now - self.last >= PROGRESS_SECONDS:
            done = sum(c.done for c in self.clients)
            log_progress(now - self.start, done, (done - self.last_done) / (now - self.last))
            self.last, self.last_done = now, done


def log_progress(seconds: float, done: int, rate: float) -> None:
    log.info("ycsb: %.0f s, %d operations, %.1f current ops/sec", seconds, done, rate)


def connect_stores(plan: Plan, threads: int, stores: list[KeyValueStore]) -> Pipeline | None:
    """Connect a store for each of the threads into `stores` (the caller closes them, also when
    one fails to connect); or one only, and its pipeline, which the threads share (pipelined.py),
    when the plan is a run of single operations on a store that pipelines."""
    stores.append(plan.new_store())
    pipe = stores[0].pipeline() if plan.phase == "run" and plan.props.operationspertransaction == 1 else None
    while pipe is None and len(stores) < threads:
        stores.append(plan.new_store())
    return pipe


def thread_store(stores: list[KeyValueStore], pipe: Pipeline | None, i: int) -> KeyValueStore:
    """Client thread i's store (connect_stores'): its own, or the one all share on a pipeline."""
    return stores[0] if pipe else stores[i]


def runners(
    clients: list[ClientThread], pipe: Pipeline | None, shared: _Shared
) -> tuple[list[Callable[[], None]], str]:
    """What the threads run: each client its own thread, or all of them on one pipeline (its
    compiled loop where the store has one that takes the workload); which of them, and why."""
    if pipe is None:
        return [c.run for c in clients], "a thread per client"
    compiled, refusal = pipe.compiled_clients(clients, shared)
    if compiled is not None:
        return [compiled], "pipelined, compiled"
    why = f" (not compiled: {refusal})" if refusal else ""
    return [PipelinedClients(clients, pipe, shared).run], "pipelined" + why


def run_threads(
    runs: list[Callable[[], None]], shared: _Shared, seconds: float | None, poll: Callable[[float], None]
) -> float:
    """Run the client threads until they are done or `seconds` (maxexecutiontime; None: no
    limit) have passed, calling poll(now) about 5 times a second and once at the end; the
    seconds they ran."""
    threads = [threading.Thread(target=run, daemon=True, name=f"ycsb-{i}") for i, run in enumerate(runs)]
    start = time.perf_counter()
    deadline = start + seconds if seconds is not None else None
    for t in threads:
        t.start()
    while alive := [t for t in threads if t.is_alive()]:
        # wake at the deadline, not up to a poll interval after it
        alive[0].join(timeout=0.2 if deadline is None else min(0.2, max(0.0, deadline - time.perf_counter())))
        now = time.perf_counter()
        if deadline is not None and now >= deadline:
            shared.stop.set()  # YCSB's TerminatorThread: threads finish the operation under way
        poll(now)
    runtime = time.perf_counter() - start
    poll(time.perf_counter())
    return runtime
