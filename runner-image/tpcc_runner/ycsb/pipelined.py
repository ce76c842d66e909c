"""A process's client threads as YCSB counts them, without a thread each: every client has one
operation in flight at a time, as a ClientThread has, and all of them share the store's Pipeline
(VoltDB's: one connection to each node), driven from one thread, which sends what the clients ask
together and takes their answers as they come. Each operation is timed from when its client asks to when its answer
is read, throttled (target) from its client's schedule and judged, measured and written to the
ledger as a ClientThread's (outcome.py): the same results, but one send and one receive carry
many operations, so the runner's CPU per operation falls, and with it what the runner takes from
a database on the same machine. VoltDB's Java client, which YCSB's VoltDB binding shares among its
threads, multiplexes them alike.

A run's single operations only: a load's batches and N operations per transaction keep their
threads (executor.py).
"""

from __future__ import annotations

import heapq
import random
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from tpcc_contract.ycsb.measurements import ERROR, Measurements

from ..drivers.base import UnknownOutcome
from .outcome import MEASUREMENT, ThreadWorkload, Timed, judge, written
from .store import Pipeline
from .workload import INSERT, READ, READMODIFYWRITE, UPDATE, Operation


class Client(Protocol):
    """What a client thread (executor.ClientThread) is to the pipeline: its draws, its count,
    its schedule and its measurements."""

    workload: ThreadWorkload
    rng: random.Random
    limit: int  # operations to do, 0: no limit
    done: int
    tick: float
    measurements: Measurements

    def more(self) -> bool: ...
    def first_start(self, now: float) -> float: ...
    def measure(self, timed: list[Timed]) -> None: ...


class Shared(Protocol):
    """What the clients of a process report to (executor._Shared)."""

    stop: threading.Event

    def failed(self, what: str, e: BaseException, operations: int = 1) -> None: ...
    def wrote(self, lines: list[str]) -> None: ...
    def abort(self, where: str, e: BaseException) -> None: ...


@dataclass
class _InFlight:
    op: Operation
    step: str  # the call in flight: the operation's kind, or a READMODIFYWRITE's READ then UPDATE
    asked: float  # when its client asked for the operation
    read_answered: float = 0.0  # a READMODIFYWRITE's: when its read was answered, and what it returned
    record: Any = None


class PipelinedClients:
    def __init__(self, clients: Sequence[Client], pipe: Pipeline, shared: Shared):
        self.clients, self.pipe, self.shared = clients, pipe, shared
        self.starts = [0.0] * len(clients)  # each client's schedule (its throttle's start)
        self.in_flight: dict[int, _InFlight] = {}  # by client number, the pipeline's tag
        self.due: list[tuple[float, int]] = []  # throttled clients: when each may ask again

    def run(self) -> None:
        try:
            now = time.perf_counter()
            for n, client in enumerate(self.clients):
                self.starts[n] = client.first_start(now)
                self._ask(n, now)
            while self.in_flight or self.due:
                if self.shared.stop.is_set():
                    self.due.clear()  # what is in flight is answered; nothing more is asked
                wait = max(0.0, self.due[0][0] - time.perf_counter()) if self.due else None
                if self.in_flight:
                    for tag, result in self.pipe.exchange(wait):
                        self._answered(tag, result)
                elif wait:
                    self.shared.stop.wait(wait)  # every client throttled: until the first may ask
                self._release_due()
        except Exception as e:
            self.shared.abort("pipelined clients", e)

    def _ask(self, n: int, now: float) -> None:
        """Client n's next operation, unless it is done or its schedule says later."""
        client = self.clients[n]
        if not client.more():
            return
        if client.tick and (due := self.starts[n] + client.done * client.tick) > now:
            heapq.heappush(self.due, (due, n))
            return
        op = client.workload.next_operation(client.rng)
        flight = _InFlight(op, READ if op.kind == READMODIFYWRITE else op.kind, time.perf_counter())
        self.in_flight[n] = flight
        self.pipe.send(n, flight.step, op)

    def _release_due(self) -> None:
        now = time.perf_counter()
        while self.due and self.due[0][0] <= now:
            self._ask(heapq.heappop(self.due)[1], now)

    def _answered(self, n: int, result: Any) -> None:
        flight, client = self.in_flight.pop(n), self.clients[n]
        now, op = time.perf_counter(), flight.op
        if isinstance(result, Exception):  # YCSB's Return=ERROR
            self.shared.failed(op.kind, result)
            client.measure([Timed(MEASUREMENT[op.kind], ERROR, now - flight.asked)])
            self.shared.wrote(written(op, ERROR, known=False) if isinstance(result, UnknownOutcome) else [])
        elif op.kind == READMODIFYWRITE and flight.step == READ:
            flight.step, flight.read_answered, flight.record = UPDATE, now, result
            self.in_flight[n] = flight
            self.pipe.send(n, UPDATE, op)
            return
        else:
            if op.kind == READMODIFYWRITE:
                parts = (flight.read_answered - flight.asked, now - flight.read_answered)
                status, timed = judge(client.workload, op, (flight.record, result), now - flight.asked, parts)
            else:
                status, timed = judge(client.workload, op, result, now - flight.asked)
            client.measure(timed)
            self.shared.wrote(written(op, status))
        if op.kind == INSERT:
            client.workload.acknowledge_insert(op)
        client.done += 1
        self._ask(n, now)
