"""Runs TPC-C terminals against a driver: several client processes (so the runner is not
the bottleneck of a GIL-bound client library), each with client threads that own one
connection. The executor knows no database and no workload rule; it times, counts,
retries and reports."""

from __future__ import annotations

import importlib
import logging
import math
import multiprocessing as mp
import multiprocessing.connection
import multiprocessing.process
import queue
import random
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tpcc_contract.deliveries import RunDeliveries
from tpcc_contract.histograms import record_latency
from tpcc_contract.results import OUTCOMES, TIMELINE_STEP_SECONDS, TypeStats
from tpcc_contract.tpcc import NEW_ORDER, TRANSACTIONS

from .drivers import make_driver
from .drivers.base import ConnectionLost, ConnectionOptions, DriverError, RetryableError, UnknownOutcome, UserAbort
from .durability import LedgerRecord, identity_of_new_order
from .processes import end_with_runner
from .results import LATENCY_BUCKETS, bucket_index
from .transactions import (
    DeliveryInput,
    DeliveryOutput,
    NewOrderInput,
    NewOrderOutput,
    TransactionInput,
    TransactionOutput,
)
from .workload import CConstants, RemotePercents, Scale, Terminal

log = logging.getLogger("tpcc.executor")
REPORT_INTERVAL = 1.0
# Back-off before retrying a transaction (the README's retry policy): see retry_backoff.
RETRY_BACKOFF_FLOOR = 0.005
RETRY_BACKOFF_CAP = 1.0
# py-tpcc's wait before retry n: n times this (see pytpcc_retry_wait)
PYTPCC_RETRY_STEP = 0.1
# A terminal's pause after transactions that ended in errors one after another: see error_backoff.
ERROR_BACKOFF_FLOOR = 0.01
ERROR_BACKOFF_CAP = 1.0


@dataclass
class RunPlan:
    db: str
    connection: ConnectionOptions
    warehouses: int
    scale: Scale
    constants: CConstants
    mix: tuple[int, ...]
    clients: int
    processes: int
    shard: int = 0
    shards: int = 1
    total_clients: int = 0  # of all shards together (0: clients on each)
    warmup: float = 0.0
    duration: float = 60.0
    think_time: bool = False
    max_retries: int = 10
    retry_wait: str = "backoff"  # a key of RETRY_WAITS
    seed: int = 0
    ledger: bool = False
    remote: RemotePercents = RemotePercents()
    target_tps: float | None = None  # transactions a second over every shard's terminals; None: no limit

    @property
    def all_clients(self) -> int:
        """The terminals of every shard together."""
        return self.total_clients or self.clients * self.shards

    @property
    def terminal_interval(self) -> float | None:
        """Seconds between one terminal's transaction starts under target_tps (each terminal an
        equal share of it, whichever pod it is in); None: back to back."""
        return self.all_clients / self.target_tps if self.target_tps else None

    def client_ids(self) -> list[list[int]]:
        """Global terminal numbers of this runner, dealt over its processes. Terminals of
        pod `shard` of `shards` interleave with the other pods' so all warehouses are used."""
        ids = [k * self.shards + self.shard for k in range(self.clients)]
        return [ids[p :: self.processes] for p in range(self.processes) if ids[p :: self.processes]]


@dataclass
class Window:
    start: float  # epoch seconds: terminals start
    measure: float  # end of warmup
    end: float  # end of the measured window

    @classmethod
    def of(cls, start: float, plan: RunPlan) -> Window:
        return cls(start, start + plan.warmup, start + plan.warmup + plan.duration)


@dataclass
class Measurement:
    """What the client processes measured, added up."""

    stats: dict[str, TypeStats]
    new_orders_per_second: list[int]  # committed NewOrders in each second from window.measure
    terminals_started: float  # epoch s when the last terminal began
    terminals_stopped: float  # epoch s when the first terminal stopped


def _empty_counts() -> dict[str, dict[str, int]]:
    return {t: dict.fromkeys(OUTCOMES, 0) for t in TRANSACTIONS}


@dataclass
class _Interval:
    """What a client process saw since its last report (for metrics and the timeline)."""

    counts: dict[str, dict[str, int]] = field(default_factory=_empty_counts)
    retries: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TRANSACTIONS, 0))
    buckets: dict[str, list[int]] = field(
        default_factory=lambda: {t: [0] * (len(LATENCY_BUCKETS) + 1) for t in TRANSACTIONS}
    )
    sums: dict[str, float] = field(default_factory=lambda: dict.fromkeys(TRANSACTIONS, 0.0))
    new_orders: dict[int, int] = field(default_factory=dict)
    ledger: list[str] = field(default_factory=list)  # LedgerRecord lines
    deliveries: RunDeliveries = field(default_factory=RunDeliveries)  # for consistency condition 11
    reconnects: int = 0
    errors: list[str] = field(default_factory=list)

    def report(self) -> dict[str, Any]:
        return {
            "kind": "interval",
            "counts": self.counts,
            "retries": self.retries,
            "buckets": self.buckets,
            "sums": self.sums,
            "new_orders": self.new_orders,
            "ledger": self.ledger,
            "deliveries": self.deliveries,
            "reconnects": self.reconnects,
            "errors": self.errors,
        }


class Accumulator:
    def __init__(self, window: Window):
        self.window = window
        self.lock = threading.Lock()
        self.interval = _Interval()
        self.measured = {t: TypeStats() for t in TRANSACTIONS}
        self.new_orders_per_second = [0] * math.ceil(window.end - window.measure)
        self.started: list[float] = []
        self.stopped: list[float] = []

    def terminal_started(self) -> None:
        with self.lock:
            self.started.append(time.time())

    def terminal_stopped(self) -> None:
        with self.lock:
            self.stopped.append(time.time())

    def record(
        self,
        txn: str,
        outcome: str,
        retries: int,
        reconnects: int,
        seconds: float,
        completed: float,
        ledger_entry: LedgerRecord | None,
        error: str | None,
        delivery: tuple[int, list[int] | None] | None = None,
    ) -> None:
        measured = self.window.measure <= completed < self.window.end
        with self.lock:
            iv = self.interval
            iv.counts[txn][outcome] += 1
            iv.retries[txn] += retries
            iv.reconnects += reconnects
            executed = outcome in ("committed", "rollbacks")
            if executed:
                iv.buckets[txn][bucket_index(seconds)] += 1
                iv.sums[txn] += seconds
            if txn == NEW_ORDER and outcome == "committed":
                b = int((completed - self.window.measure) // TIMELINE_STEP_SECONDS)
                iv.new_orders[b] = iv.new_orders.get(b, 0) + 1
            if ledger_entry is not None:
                iv.ledger.append(ledger_entry.line())
            if delivery is not None:
                iv.deliveries.record(*delivery)
            if error and len(iv.errors) < 5:
                iv.errors.append(error)
            if measured:
                if txn == NEW_ORDER and outcome == "committed":
                    self.new_orders_per_second[int(completed - self.window.measure)] += 1
                st = self.measured[txn]
                st.counts[outcome] += 1
                st.retries += retries
                if executed:
                    record_latency(st.histogram, seconds)

    def take(self) -> dict[str, Any]:
        with self.lock:
            iv, self.interval = self.interval, _Interval()
        return iv.report()


def execute_once(
    driver,
    txn: str,
    params: TransactionInput,
    max_retries: int,
    deadline: float,
    retry_wait: Callable[[int, float, float], float] | None = None,
) -> tuple[str, TransactionOutput | None, int, int, str | None]:
    """Run one transaction with retries: (outcome, result, retries, reconnects, error).
    retry_wait (one of RETRY_WAITS; retry_backoff when None) gives the pause before each retry."""
    wait = retry_wait or retry_backoff
    retries = reconnects = 0
    while True:
        attempt_start = time.monotonic()
        try:
            return "committed", params.run_on(driver), retries, reconnects, None
        except UserAbort:
            return "rollbacks", None, retries, reconnects, None
        except UnknownOutcome as e:
            return "unknown", None, retries, reconnects, f"{txn}: unknown outcome: {e}"
        except (RetryableError, ConnectionLost) as e:
            if isinstance(e, ConnectionLost):
                reconnects += 1
            if retries >= max_retries or time.time() >= deadline:
                return "errors", None, retries, reconnects, f"{txn}: gave up after {retries} retries: {e}"
            retries += 1
            time.sleep(wait(retries, time.monotonic() - attempt_start, random.random()))
        except DriverError as e:
            return "errors", None, retries, reconnects, f"{txn}: {type(e).__name__}: {e}"
        except Exception as e:  # a driver bug must not kill the terminal: count and go on
            return "errors", None, retries, reconnects, f"{txn}: {type(e).__name__}: {e}"


def retry_backoff(retry: int, attempt_seconds: float, draw: float) -> float:
    """Seconds to wait before retry number `retry` (1, 2, ...) of a transaction whose failed
    attempt took attempt_seconds; draw is uniform in [0, 1).

    A TransientTransactionError (write conflict, lock timeout) asks for the whole transaction
    again, but the transaction it lost to still holds its writes until it commits, which takes
    about as long as an attempt: retrying at once mostly conflicts again and wastes the work.
    So the ceiling starts at the longer of 5 ms and the failed attempt's duration and doubles
    with each retry, capped at 1 s; the wait is half the ceiling plus a uniform share of the
    other half ("equal jitter"), so terminals that lost to the same writer do not all come back
    at once (MongoDB's with_transaction also backs off with jitter, from 5 ms)."""
    ceiling = min(RETRY_BACKOFF_CAP, max(RETRY_BACKOFF_FLOOR, attempt_seconds) * 2 ** (retry - 1))
    return ceiling * (0.5 + 0.5 * draw)


def pytpcc_retry_wait(retry: int, attempt_seconds: float, draw: float) -> float:
    """py-tpcc's wait before retry number `retry`: 0.1 s times it, whatever the attempt took and
    without jitter (`run_transaction_with_retries` in its MongoDB driver, which the VLDB 2019
    paper measured with). Against a fast server it waits longer than retry_backoff, whose first
    wait is about the failed attempt's milliseconds, so a run's retries compare with the paper's
    tool like for like."""
    return PYTPCC_RETRY_STEP * retry


# `tpcc run --retry-wait`: the pause before each retry of a transaction
RETRY_WAITS: dict[str, Callable[[int, float, float], float]] = {
    "backoff": retry_backoff,
    "pytpcc": pytpcc_retry_wait,
}


def error_backoff(in_a_row: int, draw: float) -> float:
    """Seconds a terminal waits before its next transaction after `in_a_row` transactions in a
    row ended in errors (0: none; draw uniform in [0, 1)): 10 ms doubling to 1 s, with equal
    jitter. A database that answers every call at once with an error (a VoltDB restarted
    without its procedures answered "Procedure NewOrder was not found" in about 0.1 ms) had
    every terminal spin: on the local cluster two runner pods made 2 million errors in 2
    minutes and starved the database's restart, the operator and the kubelet's probes of the
    CPU. A transaction that succeeds (or rolls back, or is of unknown outcome) resets it, so
    a recovered database is used again within a second."""
    if in_a_row <= 0:
        return 0.0
    ceiling = min(ERROR_BACKOFF_CAP, ERROR_BACKOFF_FLOOR * 2 ** (in_a_row - 1))
    return ceiling * (0.5 + 0.5 * draw)


def _terminal(plan: RunPlan, global_client: int, driver, acc: Accumulator, window: Window) -> None:
    terminal = Terminal(
        plan.seed,
        global_client,
        plan.constants,
        plan.scale,
        plan.warehouses,
        plan.all_clients,
        plan.mix,
        plan.think_time,
        plan.remote,
    )
    _sleep_until(window.start)
    acc.terminal_started()
    try:
        _terminal_loop(plan, terminal, driver, acc, window, global_client)
    finally:
        acc.terminal_stopped()


def _terminal_loop(
    plan: RunPlan, terminal: Terminal, driver, acc: Accumulator, window: Window, global_client: int
) -> None:
    errors_in_a_row = 0
    interval = plan.terminal_interval
    if interval is None:
        while time.time() < window.end:
            errors_in_a_row = terminal_step(plan, terminal, driver, acc, window, errors_in_a_row)
        return
    # the terminals' first starts spread evenly over one interval: the run's rate is even from
    # its first second, not a burst of every terminal at once each interval
    scheduled = window.start + interval * global_client / plan.all_clients
    while True:
        _sleep_until(min(scheduled, window.end))
        if time.time() >= window.end:
            return
        errors_in_a_row = terminal_step(plan, terminal, driver, acc, window, errors_in_a_row)
        scheduled = next_paced_start(scheduled, interval, time.time())


def next_paced_start(scheduled: float, interval: float, now: float) -> float:
    """When a terminal paced to one transaction every `interval` s starts its next one, the last
    scheduled at `scheduled`: on schedule, or at once when late, without making up the starts a
    slow or stalled database made it miss (a recovered database gets the target rate, not a
    burst of the backlog; YCSB's -target does make them up)."""
    return max(scheduled + interval, now)


def terminal_step(
    plan: RunPlan, terminal: Terminal, driver, acc: Accumulator, window: Window, errors_in_a_row: int
) -> int:
    """One transaction of a terminal, from its keying time to its think time, recorded in acc;
    returns the transactions in a row that ended in errors (a bench profiles this step)."""
    call = terminal.next_call()
    txn = call.txn
    _sleep_until(min(time.time() + call.keying_seconds, window.end))
    params = terminal.inputs(txn)
    t0 = time.perf_counter()
    outcome, result, retries, reconnects, error = execute_once(
        driver, txn, params, plan.max_retries, window.end + 30, RETRY_WAITS[plan.retry_wait]
    )
    seconds = time.perf_counter() - t0
    completed = time.time()
    entry = None
    if plan.ledger and isinstance(params, NewOrderInput) and outcome in ("committed", "unknown"):
        entry = LedgerRecord(
            outcome == "committed",
            params.w_id,
            params.d_id,
            result.o_id if isinstance(result, NewOrderOutput) else None,
            identity_of_new_order(params),
        )
    delivery = None
    # A Delivery that ended in an error may still have delivered some districts (a driver
    # that commits district by district, as VoltDB's delivery=per-district): for condition
    # 11 its districts count as of unknown outcome, as a Delivery whose commit was unanswered.
    if isinstance(params, DeliveryInput) and outcome in ("committed", "unknown", "errors"):
        delivery = (params.w_id, [d for d, _ in result.delivered] if isinstance(result, DeliveryOutput) else None)
    acc.record(txn, outcome, retries, reconnects, seconds, completed, entry, error, delivery)
    errors_in_a_row = errors_in_a_row + 1 if outcome == "errors" else 0
    pause = call.think_seconds + error_backoff(errors_in_a_row, random.random())
    _sleep_until(min(time.time() + pause, window.end))
    return errors_in_a_row


def _sleep_until(t: float) -> None:
    while (left := t - time.time()) > 0:
        time.sleep(min(left, 0.5))


def _client_when_planned(
    plans: multiprocessing.connection.Connection,
    runners_ends: list[multiprocessing.connection.Connection],
    start_at,
    reports,
) -> None:
    """A client process, forked as the runner starts (ClientPool): its plan, then its run."""
    # the runner's ends of every plan pipe so far came with the fork: closed, so that the
    # runner's closing its own is an end of file here
    for end in runners_ends:
        end.close()
    end_with_runner()
    # the runner's SIGTERM handler (processes.terminated_by_sigterm) came with the fork too; a
    # client ends on SIGTERM (ClientPool.stop), so the default, then the signals the runner
    # blocked across the fork (ClientPool.__init__)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    try:
        plan, client_ids = plans.recv()
    except EOFError:  # the runner ended before it had a plan (a database not loaded, say)
        return
    plans.close()
    client_process(plan, client_ids, start_at, reports)


def client_process(plan: RunPlan, client_ids: list[int], start_at, reports) -> None:
    """One client process's run: connect every terminal, say ready, wait for the shared start
    time, run, report every second, send the measured statistics at the end."""
    drivers = []
    try:
        for _ in client_ids:
            d = make_driver(plan.db, plan.connection)
            d.connect()
            drivers.append(d)
    except Exception as e:
        reports.put({"kind": "fatal", "error": f"{type(e).__name__}: {e}"})
        return
    reports.put({"kind": "ready"})
    while start_at.value == 0.0:
        time.sleep(0.05)
    window = Window.of(start_at.value, plan)
    acc = Accumulator(window)
    threads = [
        threading.Thread(target=_terminal, args=(plan, cid, d, acc, window), daemon=True)
        for cid, d in zip(client_ids, drivers)
    ]
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        for t in threads:
            t.join(timeout=REPORT_INTERVAL / len(threads))
        reports.put(acc.take())
    reports.put(acc.take())
    for d in drivers:
        try:
            d.close()
        except Exception:
            pass
    reports.put(
        {
            "kind": "done",
            "measured": {t: s.to_wire() for t, s in acc.measured.items()},
            "new_orders_per_second": acc.new_orders_per_second,
            "terminals_started": max(acc.started),
            "terminals_stopped": min(acc.stopped),
        }
    )


class ClientPool:
    """The client processes of one run, driven by the parent.

    They are forked from the runner as it starts (cli.main, before the metrics server's thread
    and before any connection: a fork copies threads' locks in whatever state they are), with
    what it has imported (the CLI, this module, the database's driver), and wait there for the
    plan, which needs the load's metadata read from the database (`plan_and_wait_ready`). A
    fork server (processes.worker_context, as the loader's workers start) runs a new interpreter
    that imports all of it again: about a third of a run's start-up (`tpcc run` on MongoDB,
    0.55-0.67 CPU-s with one; pymongo's import alone is 0.15 s)."""

    def __init__(self, processes: int, driver: str):
        importlib.import_module(driver)  # once, here: the clients are forked with it
        ctx = mp.get_context("fork")
        self.start_at = ctx.Value("d", 0.0)
        self.reports = ctx.Queue()
        self.procs: list[multiprocessing.process.BaseProcess] = []
        self._plans: list[multiprocessing.connection.Connection] = []
        # a SIGTERM between a fork and the child's own handler would run the runner's in the
        # child (raising in the middle of threading's after-fork hooks): held until then
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
        try:
            for _ in range(processes):
                receive, send = ctx.Pipe(duplex=False)
                self._plans.append(send)
                p = ctx.Process(
                    target=_client_when_planned,
                    args=(receive, list(self._plans), self.start_at, self.reports),
                    daemon=True,
                )
                p.start()
                receive.close()
                self.procs.append(p)
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})

    def plan_and_wait_ready(self, plan: RunPlan, timeout: float) -> None:
        """Each process its share of the plan's terminals, then wait until all are connected."""
        shares = plan.client_ids()
        if len(shares) != len(self.procs):
            self.stop()
            raise ValueError(f"{len(shares)} shares of terminals for {len(self.procs)} client processes")
        self.plan = plan
        for send, ids in zip(self._plans, shares):
            send.send((plan, ids))
            send.close()
        ready, deadline = 0, time.time() + timeout
        while ready < len(self.procs):
            try:
                msg = self.reports.get(timeout=max(0.1, deadline - time.time()))
            except queue.Empty:
                self.stop()
                raise DriverError(f"client processes not connected after {timeout:.0f} s") from None
            if msg["kind"] == "fatal":
                self.stop()
                raise DriverError(f"a client could not connect: {msg['error']}")
            ready += msg["kind"] == "ready"

    def go(self, start: float) -> Window:
        self.start_at.value = start
        return Window.of(start, self.plan)

    def collect(self, on_report, window: Window) -> Measurement:
        """Feed interval reports to on_report until every process is done; return what
        they measured, added up."""
        measured = Measurement(
            {t: TypeStats() for t in TRANSACTIONS}, [0] * math.ceil(window.end - window.measure), 0.0, math.inf
        )
        done, hard_deadline = 0, window.end + 120
        while done < len(self.procs):
            try:
                msg = self.reports.get(timeout=1.0)
            except queue.Empty:
                if time.time() > hard_deadline or not any(p.is_alive() for p in self.procs):
                    raise DriverError(f"{len(self.procs) - done} client process(es) did not finish")
                continue
            if msg["kind"] == "interval":
                on_report(msg)
            elif msg["kind"] == "done":
                done += 1
                for t, d in msg["measured"].items():
                    measured.stats[t].add(TypeStats.from_dict(d))
                for k, n in enumerate(msg["new_orders_per_second"]):
                    measured.new_orders_per_second[k] += n
                measured.terminals_started = max(measured.terminals_started, msg["terminals_started"])
                measured.terminals_stopped = min(measured.terminals_stopped, msg["terminals_stopped"])
        for p in self.procs:
            p.join(timeout=5)
        return measured

    def stop(self) -> None:
        """End every client process, planned or not, and reap it."""
        for send in self._plans:
            send.close()  # an unplanned one's end of file
        for p in self.procs:
            if p.is_alive():
                p.terminate()
        for p in self.procs:
            p.join(timeout=5)
            if p.is_alive():
                p.kill()
                p.join()
