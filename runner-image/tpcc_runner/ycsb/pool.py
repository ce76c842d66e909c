"""A runner pod's YCSB client threads split over client processes (Plan.processes), made by the
runner's fork server (processes.worker_context; TPC-C's ClientPool forks the runner itself): one
process's threads pass the interpreter lock around every send and receive, and the runner's CPU
then outgrows the database's.

Each process runs executor.ClientThread on its share of the threads with a CoreWorkload of its
own; nothing is shared between the processes but what the parent gathers from their reports:
- keys: a load's records are split into insertstart/insertcount ranges, one per process, as
  YCSB's parallel clients are given theirs, so each record is loaded once; a run's process takes
  its own slice of the pod's insert keys (Part.shard, CoreWorkload's docstring says how);
- the barrier: every process connects and says so; the parent calls on_connected (startAt),
  then sets start_at, from which each process counts maxexecutiontime;
- the ledger lines, as they come; the measurements, every LIVE_SECONDS for /metrics while the
  run goes, and exactly at the end (HdrHistograms encoded, merged with add).
A process that cannot connect or ends without its results fails the run with one line; the
parent never waits on a process that is gone.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import queue
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tpcc_contract.ycsb.measurements import Measurements

from ..drivers.base import DriverError
from ..processes import end_with_runner, worker_context
from ..redact import setup_logging
from .executor import (
    MAX_ERRORS_KEPT,
    PROGRESS_SECONDS,
    ClientThread,
    Outcome,
    Plan,
    _Shared,
    connect_stores,
    execute,
    log_progress,
    merged,
    run_threads,
    runners,
    shares,
    thread_store,
)
from .measurements import live_total
from .store import Pipeline
from .timeseries import workload_for

log = logging.getLogger("tpcc.ycsb")
LIVE_SECONDS = 1.0  # how often a process sends its measurements so far (for /metrics)
READY_TIMEOUT = 300.0  # seconds for every process to connect its stores (each is bounded too)
POLL_SECONDS = 0.5  # how often the parent looks for a process that is gone


@dataclass(frozen=True)
class Part:
    """Client process `number`'s share of the pod's threads: their numbers (their seeds, as in
    one process), each one's share of operationcount (of the records to load), and the plan
    with this process's own keys: a load's insertstart/insertcount range, the run's insert shard."""

    number: int
    threads: tuple[int, ...]
    limits: tuple[int, ...]
    plan: Plan


def parts(plan: Plan) -> list[Part]:
    """The pod's threads dealt round over P = min(processes, threadcount) processes (on load no
    more than the records: each process has some); each thread keeps the share of the count it
    has in one process. A load's process loads its threads' shares, the processes' ranges in
    turn from insertstart. A run's process j of P in pod I of N inserts as shard (I + j*N, N*P):
    its keys stay in the pod's slice (I mod N) whatever P the other pods have (os.cpu_count()
    may differ between nodes), and j's are j mod P within it."""
    props = plan.props
    total = props.records_to_load if plan.phase == "load" else props.operationcount
    limits = shares(total, props.threadcount)
    count = min(plan.processes, props.threadcount, *([total] if plan.phase == "load" and total else []))
    pod, pods = plan.shard
    out, insertstart = [], props.insertstart
    for number in range(count):
        threads = tuple(range(number, props.threadcount, count))
        mine = tuple(limits[t] for t in threads)
        own = props
        if plan.phase == "load" and not props.timeseries:
            own = dataclasses.replace(props, insertstart=insertstart, insertcount=sum(mine))
            insertstart += sum(mine)
        # a time series thread takes its keys by its number in the pod and the pod's shard
        shard = plan.shard if props.timeseries else (pod + number * pods, pods * count)
        out.append(Part(number, threads, mine, dataclasses.replace(plan, props=own, shard=shard, processes=1)))
    return out


class _Reporter:
    """A client process's poll (run_threads'): its ledger lines to the parent as they come, its
    measurements so far every LIVE_SECONDS; the parent's stop (another process failed) to its
    threads."""

    def __init__(self, part: Part, clients: list[ClientThread], shared: _Shared, stop: Any, reports: Any):
        self.part, self.clients, self.shared, self.stop, self.reports = part, clients, shared, stop, reports
        self.last_live = 0.0

    def poll(self, now: float) -> None:
        if self.stop.is_set():
            self.shared.stop.set()
        if lines := self.shared.take_ledger():
            self.reports.put(("ledger", self.part.number, lines))
        if now - self.last_live >= LIVE_SECONDS:
            self.last_live = now
            measurements = live_total(c.measurements for c in self.clients)
            live = {"measurements": measurements.to_wire(), "done": sum(c.done for c in self.clients)}
            self.reports.put(("live", self.part.number, live))


def client_process(part: Part, log_level: int, start_at: Any, stop: Any, reports: Any) -> None:
    """Entry point of one client process: connect a store per thread, say ready (with the
    store's description), wait for start_at, run until done or maxexecutiontime from start_at,
    send what was measured. Anything that goes wrong is reported as one line, not a traceback;
    Ctrl-C is the parent's to handle (it stops the processes). Its threads log their operations'
    errors as the parent's would (time, redacted)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    end_with_runner()
    setup_logging(log_level)
    stores: list = []
    try:
        try:
            pipe = connect_stores(part.plan, len(part.limits), stores)
        except Exception as e:
            reports.put(("fatal", part.number, f"{type(e).__name__}: {e}"))
            return
        _run_part(part, stores, pipe, start_at, stop, reports)
    except Exception as e:  # a bug: the parent fails the run with it
        reports.put(("failed", part.number, f"{type(e).__name__}: {e}"))
    finally:
        for store in stores:
            with contextlib.suppress(Exception):  # the results are sent: a close's error changes nothing
                store.close()


def _run_part(part: Part, stores: list, pipe: Pipeline | None, start_at: Any, stop: Any, reports: Any) -> None:
    plan, shared = part.plan, _Shared()
    workload = workload_for(plan.props, plan.shard)
    clients = [
        ClientThread(plan, workload, thread_store(stores, pipe, i), thread, limit, shared)
        for i, (thread, limit) in enumerate(zip(part.threads, part.limits))
    ]
    runs, client_loop = runners(clients, pipe, shared)
    reports.put(("ready", part.number, {**stores[0].describe(), "client_loop": client_loop}))
    while start_at.value == 0.0 and not stop.is_set():
        time.sleep(0.01)
    if stop.is_set():
        return
    limit = plan.props.maxexecutiontime
    seconds = max(0.0, limit - (time.time() - start_at.value)) if limit else None
    run_threads(runs, shared, seconds, _Reporter(part, clients, shared, stop, reports).poll)
    done = {
        "measurements": merged(c.measurements for c in clients).to_wire(),
        "operations": sum(c.done for c in clients),
        "errors": shared.errors,
        "error_count": shared.error_count,
        "aborted": shared.aborted,
        "ended": time.time(),
    }
    reports.put(("done", part.number, done))


class _Gathered:
    """What the parent has heard from the processes."""

    def __init__(self, on_ledger: Callable[[list[str]], None]):
        self.on_ledger = on_ledger
        self.ready: dict[int, dict] = {}  # number -> the store's description
        self.live: dict[int, Measurements] = {}  # latest measurements of each process
        self.done_counts: dict[int, int] = {}
        self.results: dict[int, dict] = {}  # number -> its "done" report
        self.fatal: str | None = None  # why the run cannot go on (a process's one line)

    def take(self, message: tuple[str, int, Any]) -> None:
        kind, number, body = message
        if kind == "ledger":
            self.on_ledger(body)
        elif kind == "live":
            self.live[number] = Measurements.from_json(body["measurements"])
            self.done_counts[number] = body["done"]
        elif kind == "ready":
            self.ready[number] = body
        elif kind == "fatal":
            self.fatal = self.fatal or f"ycsb: a client process could not connect: {body}"
        elif kind == "failed":
            self.fatal = self.fatal or f"ycsb client process {number} failed: {body}"
        else:
            self.live[number] = Measurements.from_json(body["measurements"])
            self.done_counts[number] = body["operations"]
            self.results[number] = body

    def measurements(self) -> list[Measurements]:
        return list(self.live.values())


class ProcessPool:
    """The client processes of one `tpcc ycsb` phase, driven by the parent."""

    def __init__(self, plan: Plan, on_ledger: Callable[[list[str]], None]):
        ctx = worker_context(__name__, *plan.preload)
        self.start_at = ctx.Value("d", 0.0)
        self.stop = ctx.Event()
        self.reports = ctx.Queue()
        self.parts = parts(plan)
        self.gathered = _Gathered(on_ledger)
        self.procs = [
            ctx.Process(
                target=client_process,
                args=(part, logging.getLogger().getEffectiveLevel(), self.start_at, self.stop, self.reports),
                daemon=True,
                name=f"ycsb-client-{part.number}",
            )
            for part in self.parts
        ]

    def _receive(self, timeout: float) -> None:
        """Take what the processes sent within timeout; fail the run, naming it, when one has
        ended without its results (what it sent before it ended is taken first)."""
        try:
            self.gathered.take(self.reports.get(timeout=timeout))
        except queue.Empty:
            gone = [(i, p.exitcode) for i, p in enumerate(self.procs) if p.exitcode is not None]
            if not gone:
                return
            self._drain()
            lost = [(i, code) for i, code in gone if i not in self.gathered.results]
            if lost and not self.gathered.fatal:
                i, code = lost[0]
                raise DriverError(f"ycsb client process {i} ended (exit code {code}) without its results")
        if self.gathered.fatal:
            raise DriverError(self.gathered.fatal)

    def _drain(self) -> None:
        while True:
            try:
                self.gathered.take(self.reports.get(timeout=0.05))
            except queue.Empty:
                return

    def start_and_wait_ready(self) -> None:
        for p in self.procs:
            p.start()
        deadline = time.monotonic() + READY_TIMEOUT
        while len(self.gathered.ready) < len(self.procs):
            if time.monotonic() > deadline:
                raise DriverError(f"ycsb client processes not connected after {READY_TIMEOUT:.0f} s")
            self._receive(POLL_SECONDS)

    def run(self) -> float:
        """Start the processes now, take their reports until every one is done; the seconds from
        the start to the last one's end."""
        self.start_at.value = start = time.time()
        last, last_done = start, 0
        while len(self.gathered.results) < len(self.procs):
            self._receive(POLL_SECONDS)
            if any(r["aborted"] for r in self.gathered.results.values()):
                self.stop.set()  # one process's thread stopped on a bug: the whole run stops, as in one
            if (now := time.time()) - last >= PROGRESS_SECONDS:
                done = sum(self.gathered.done_counts.values())
                log_progress(now - start, done, (done - last_done) / (now - last))
                last, last_done = now, done
        return max(r["ended"] for r in self.gathered.results.values()) - start

    def close(self) -> None:
        self.stop.set()
        for p in self.procs:
            p.join(timeout=5)
            if p.is_alive():
                p.terminate()
                p.join(timeout=5)

    def outcome(self, runtime: float) -> Outcome:
        results = [self.gathered.results[i] for i in sorted(self.gathered.results)]
        # a "done" report's measurements were decoded into gathered.live when it came
        measurements = merged(self.gathered.live[i] for i in sorted(self.gathered.results))
        errors = [e for r in results for e in r["errors"]][:MAX_ERRORS_KEPT]
        return Outcome(
            measurements,
            sum(r["operations"] for r in results),
            round(runtime * 1000),
            errors,
            sum(r["error_count"] for r in results),
            self.gathered.ready[0],
            next((r["aborted"] for r in results if r["aborted"]), None),
        )


def execute_plan(
    plan: Plan,
    on_ledger: Callable[[list[str]], None] | None = None,
    on_connected: Callable[[Callable[[], list[Measurements]]], None] | None = None,
) -> Outcome:
    """executor.execute's contract for any plan. With one process the threads run in this one:
    no fork server to start (about 0.4 CPU-s per process), and a store factory need not be
    picklable (the tests' in-memory stores)."""
    if plan.processes == 1:
        return execute(plan, on_ledger, on_connected)
    return execute_in_processes(plan, on_ledger or (lambda lines: None), on_connected)


def execute_in_processes(
    plan: Plan,
    on_ledger: Callable[[list[str]], None],
    on_connected: Callable[[Callable[[], list[Measurements]]], None] | None,
) -> Outcome:
    """executor.execute over client processes: the same contract."""
    pool = ProcessPool(plan, on_ledger)
    try:
        pool.start_and_wait_ready()
        if on_connected:
            on_connected(pool.gathered.measurements)
        runtime = pool.run()
    finally:
        pool.close()
    return pool.outcome(runtime)
