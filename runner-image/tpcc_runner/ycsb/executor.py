"""YCSB's client (site.ycsb.Client and ClientThread) for the runner: threadcount client threads,
each with its own store connection and its own random.Random (seeded from the run's seed and its
thread number), the threads of one process sharing one CoreWorkload (with TimeSeriesWorkload each
its own SeriesThread: its series keys and timestamps). A thread does its share of
operationcount (or of the records to load), YCSB's way of splitting it, until maxexecutiontime
stops it; with a target it paces itself to target / threadcount operations per second from its
start, as ClientThread.throttleNanos does. Throughput counts every operation attempted, as YCSB's.

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
from typing import Any, NamedTuple

from ..drivers.base import UnknownOutcome
from .ledger import ledger_line
from .measurements import BATCHED_OK, ERROR, NOT_FOUND, OK, UNEXPECTED_STATE, Measurements
from .properties import Properties
from .store import KeyValueStore
from .timeseries import SeriesThread, TimeSeriesWorkload, workload_for
from .workload import INSERT, READ, READMODIFYWRITE, SCAN, UPDATE, CoreWorkload, Operation

# what a client thread draws its operations from: CoreWorkload (shared) or its own time series
ThreadWorkload = CoreWorkload | SeriesThread

log = logging.getLogger("tpcc.ycsb")
PROGRESS_SECONDS = 10.0
MAX_ERRORS_KEPT = 10
# YCSB's measurement name of each operation
MEASUREMENT = {READ: "READ", UPDATE: "UPDATE", INSERT: "INSERT", SCAN: "SCAN", READMODIFYWRITE: "READ-MODIFY-WRITE"}


class Timed(NamedTuple):
    name: str
    status: str
    seconds: float
    report_status: bool = True


def _intact(workload: ThreadWorkload, key: str, fields: tuple[str, ...] | None, record: dict[str, bytes]) -> bool:
    """dataintegrity's check (CoreWorkload's only: TimeSeriesWorkload refuses dataintegrity)."""
    return (
        not isinstance(workload, CoreWorkload)
        or not workload.props.dataintegrity
        or workload.intact(key, fields, record)
    )


def _read_status(
    workload: ThreadWorkload, key: str, fields: tuple[str, ...] | None, record: dict[str, bytes] | None
) -> str:
    if record is None:
        return NOT_FOUND
    if not _intact(workload, key, fields, record):
        return UNEXPECTED_STATE
    return OK


def _scan_status(workload: ThreadWorkload, op: Operation, records: list) -> str:
    if not records:
        return NOT_FOUND
    if not all(_intact(workload, k, op.fields, r) for k, r in records):
        return UNEXPECTED_STATE
    return OK


def judge(
    workload: ThreadWorkload, op: Operation, result: Any, seconds: float, parts: tuple[float, float] | None = None
) -> tuple[str, list[Timed]]:
    """An operation's status and what to measure, from its result (KeyValueStore.apply's) and how
    long it took; a read-modify-write's read and update are measured each (parts: their seconds)
    and the whole. With dataintegrity a read whose values are not those derived from key and field
    is UNEXPECTED_STATE."""
    if op.kind == READ:
        status = _read_status(workload, op.key, op.fields, result)
    elif op.kind == UPDATE:
        status = OK if result else NOT_FOUND
    elif op.kind == INSERT:
        status = OK
    elif op.kind == SCAN:
        status = _scan_status(workload, op, result)
    else:
        record, found = result
        read = _read_status(workload, op.key, op.fields, record)
        update = OK if found else NOT_FOUND
        status = update if read == OK else read
        read_seconds, update_seconds = parts or (seconds, seconds)
        return status, [
            Timed("READ", read, read_seconds),
            Timed("UPDATE", update, update_seconds),
            Timed("READ-MODIFY-WRITE", status, seconds, report_status=False),
        ]
    return status, [Timed(MEASUREMENT[op.kind], status, seconds)]


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


def written(op: Operation, status: str, known: bool = True) -> list[str]:
    """The ledger lines of an operation's write that happened (or may have). A read-modify-write
    whose read failed its integrity check may still have updated the record: its write is one of
    unknown outcome, so the verifier accepts its values without counting it as acknowledged.
    An upsert INSERT (a time series' data point) replaces the record's fields as an update does."""
    if op.kind == INSERT and (status == OK or not known):
        return [
            ledger_line("U", op.key, op.written, known=known) if op.upsert else ledger_line("I", op.key, known=known)
        ]
    if op.kind in (UPDATE, READMODIFYWRITE) and (status == OK or not known):
        return [ledger_line("U", op.key, op.written, known=known)]
    if op.kind == READMODIFYWRITE and status == UNEXPECTED_STATE:
        return [ledger_line("U", op.key, op.written, known=False)]
    return []


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

    def _more(self) -> bool:
        # a load always has its count: a thread (a process) whose share is 0 has nothing to load
        unlimited = self.limit == 0 and self.plan.phase != "load"
        return not self.shared.stop.is_set() and (unlimited or self.done < self.limit)

    def _throttle(self, start: float) -> None:
        while (left := throttle_delay(start, self.done, self.tick, time.perf_counter())) > 0:
            time.sleep(left)

    def _measure(self, timed: list[Timed]) -> None:
        for t in timed:
            self.measurements.measure(t.name, t.status, t.seconds, t.report_status)

    def run(self) -> None:
        try:
            if self.tick and self.tick >= 0.001:  # ClientThread spreads slow threads' first operations
                time.sleep(self.rng.random() * self.tick)
            start = time.perf_counter()
            step = self._load_batch if self.plan.phase == "load" else self._operations
            while self._more():
                step()
                self._throttle(start)
        except Exception as e:  # a bug outside an operation: stop the run, report it as one line
            self.shared.failed("client thread", e)
            self.shared.aborted = f"client thread: {type(e).__name__}: {e}"
            self.shared.stop.set()

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
            self._measure([Timed(MEASUREMENT[op.kind], ERROR, time.perf_counter() - t0)])
            self.shared.wrote(written(op, ERROR, known=False) if isinstance(e, UnknownOutcome) else [])
            return
        self._measure(timed)
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
            self._measure([Timed(MEASUREMENT[op.kind], ERROR, seconds) for op in ops])
            self._measure([Timed("TRANSACTION", ERROR, seconds)])
            if isinstance(e, UnknownOutcome):
                self.shared.wrote([line for op in ops for line in written(op, ERROR, known=False)])
            return
        seconds = time.perf_counter() - t0
        for op, result in zip(ops, results):
            status, timed = judge(self.workload, op, result, seconds)
            self._measure(timed)
            self.shared.wrote(written(op, status))
        self._measure([Timed("TRANSACTION", OK, seconds)])

    def _load_batch(self) -> None:
        """doInsert, batchsize records to one store.load: as with YCSB's MongoDB binding the
        records before the last return BATCHED_OK at once (latency 0: nothing was sent), and the
        last carries the write's latency and status."""
        batch: list[Operation] = []
        while len(batch) < self.plan.props.batchsize and self._more():
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
    stores = []
    try:
        for _ in range(props.threadcount):
            stores.append(plan.new_store())
        described = stores[0].describe()
        clients = [
            ClientThread(plan, workload, store, i, limit, shared)
            for i, (store, limit) in enumerate(zip(stores, shares(total, props.threadcount)))
        ]
        if on_connected:
            on_connected(lambda: [c.measurements for c in clients])
        progress = _Progress(clients, shared, on_ledger or (lambda lines: None))
        runtime = run_threads(clients, shared, props.maxexecutiontime or None, progress.poll)
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


def run_threads(
    clients: list[ClientThread], shared: _Shared, seconds: float | None, poll: Callable[[float], None]
) -> float:
    """Run the client threads until they are done or `seconds` (maxexecutiontime; None: no
    limit) have passed, calling poll(now) about 5 times a second and once at the end; the
    seconds they ran."""
    threads = [threading.Thread(target=c.run, daemon=True, name=f"ycsb-{i}") for i, c in enumerate(clients)]
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
