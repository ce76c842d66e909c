"""The pipelined clients (ycsb/pipelined.py) with no database: a Pipeline over the in-memory store
that answers what is in flight a random few at a time and in a random order, as a database's
partitions answer a multiplexed connection. The same results as client threads (every preset
reads back what it wrote, the ledger verifies), one operation in flight per client, a
read-modify-write's update sent only once its read is answered, a lost connection's operations
counted as errors and its writes as of unknown outcome, target and maxexecutiontime kept; a load
and N operations per transaction keep their threads. VoltDB's own pipeline runs in the db tests
(test_ycsb_databases.py, test_ycsb_failover_voltdb.py)."""

from __future__ import annotations

import random
import time
from typing import Any

from test_ycsb_executor import loaded, props_of, returns, run
from tpcc_runner.drivers.base import ConnectionLost, UnknownOutcome
from tpcc_runner.ycsb.executor import Plan, execute
from tpcc_runner.ycsb.ledger import parse_ledgers, verify
from tpcc_runner.ycsb.store import Pipeline
from tpcc_runner.ycsb.workload import INSERT, READ, SCAN, UPDATE, CoreWorkload, Operation
from ycsb_memory_store import MemoryDatabase, MemoryStore


class MemoryPipeline(Pipeline):
    """Answers 1 to 3 of the steps in flight per exchange, picked at random. lose_at: the exchange
    at which the connection is lost (every step in flight answered with its error)."""

    def __init__(self, store: MemoryStore, lose_at: int | None = None):
        self.store, self.lose_at = store, lose_at
        self.rng = random.Random(5)
        self.in_flight: dict[int, tuple[str, Operation]] = {}
        self.exchanges = 0
        self.most_in_flight = 0
        self.log: list[tuple[str, int, str, str]] = []  # ("sent" | "answered", tag, step, key)
        self.lost: list[str] = []  # the steps in flight when the connection was lost

    def send(self, tag: int, step: str, op: Operation) -> None:
        assert tag not in self.in_flight, f"client {tag} asked twice at once"
        self.in_flight[tag] = (step, op)
        self.most_in_flight = max(self.most_in_flight, len(self.in_flight))
        self.log.append(("sent", tag, step, op.key))

    def exchange(self, wait: float | None) -> list[tuple[int, Any]]:
        self.exchanges += 1
        if self.exchanges == self.lose_at:
            self.lost = [step for step, _ in self.in_flight.values()]
            lost = [
                (tag, (UnknownOutcome if step != READ else ConnectionLost)("connection lost"))
                for tag, (step, _) in self.in_flight.items()
            ]
            self.in_flight.clear()
            return lost
        tags = self.rng.sample(sorted(self.in_flight), min(len(self.in_flight), self.rng.randint(1, 3)))
        out = []
        for tag in tags:
            step, op = self.in_flight.pop(tag)
            self.log.append(("answered", tag, step, op.key))
            out.append((tag, self._result(step, op)))
        return out

    def _result(self, step: str, op: Operation) -> Any:
        if step == READ:
            return self.store.read(op.key, op.fields)
        if step == UPDATE:
            return self.store.update(op.key, op.written)
        if step == INSERT:
            return self.store.insert(op.key, op.written)
        assert step == SCAN, step
        return self.store.scan(op.key, op.scan_length, op.fields)


class PipelinedStore(MemoryStore):
    pipes: list[MemoryPipeline] = []

    def __init__(self, db: MemoryDatabase, props, lose_at: int | None = None):
        super().__init__(db, props)
        self.lose_at = lose_at

    def pipeline(self) -> MemoryPipeline:
        pipe = MemoryPipeline(self, self.lose_at)
        PipelinedStore.pipes.append(pipe)
        return pipe


def pipelined_run(db: MemoryDatabase, props, ledger: list | None = None, lose_at: int | None = None):
    PipelinedStore.pipes = []
    plan = Plan(lambda: PipelinedStore(db, props, lose_at), props, "run", 7)
    outcome = execute(plan, ledger.extend if ledger is not None else None)
    return outcome, PipelinedStore.pipes


def test_every_preset_reads_back_what_was_written_over_one_pipeline():
    for preset in "abcdef":
        props = props_of(preset, threadcount=4)
        outcome, pipes = pipelined_run(loaded(props), props)
        assert len(pipes) == 1, preset  # one connection for the 4 clients
        assert outcome.error_count == 0 and outcome.operations == 400, preset
        for name in outcome.measurements.names():
            assert "UNEXPECTED_STATE" not in returns(outcome, name), (preset, name)
            assert "NOT_FOUND" not in returns(outcome, name) or preset in "e", (preset, name)
        assert pipes[0].most_in_flight == 4, preset  # every client had its operation in flight


def test_a_read_only_run_reads_what_threads_read():
    """Each client draws from its own random.Random as a thread does: the same reads, the same
    keys, whichever way they ran."""
    props = props_of("c", threadcount=3)
    db = loaded(props)
    threads, (pipelined, pipes) = run(db, props, "run"), pipelined_run(db, props)
    assert returns(threads, "READ") == returns(pipelined, "READ") == {"OK": 400}
    reads = sorted(key for what, _, _, key in pipes[0].log if what == "sent")
    workload = CoreWorkload(props)
    expected = []
    for client, limit in enumerate((134, 133, 133)):
        rng = random.Random(f"7:{client}")
        expected += [workload.next_operation(rng).key for _ in range(limit)]
    assert reads == sorted(expected)


def test_a_read_modify_write_sends_its_update_once_its_read_is_answered():
    props = props_of("f", threadcount=4)
    outcome, (pipe,) = pipelined_run(loaded(props), props)
    read_answered: dict[int, int] = {}
    for at, (what, tag, step, _) in enumerate(pipe.log):
        if what == "answered" and step == READ:
            read_answered[tag] = at
        if what == "sent" and step == UPDATE:
            assert read_answered.pop(tag) < at  # this client's read came back first
    rmw = outcome.measurements.summary("READ-MODIFY-WRITE")
    assert rmw["Operations"] == returns(outcome, "UPDATE")["OK"] > 100


def test_a_lost_connection_fails_what_was_in_flight_and_its_writes_are_of_unknown_outcome():
    props = props_of("a", threadcount=4, dataintegrity="false")
    db, ledger = MemoryDatabase(), []
    run(db, props, "load", ledger=ledger)
    outcome, (pipe,) = pipelined_run(db, props, ledger, lose_at=20)
    assert len(pipe.lost) == 4 and outcome.error_count == 4 and outcome.operations == 400  # then on
    for step in (READ, UPDATE):
        assert returns(outcome, step).get("ERROR", 0) == pipe.lost.count(step)
    writes = parse_ledgers({"ledger": ledger})
    assert writes.unknown_updates == pipe.lost.count(UPDATE)
    keys = {CoreWorkload(props).key_name(n) for n in range(200)}
    assert verify(db.store(props), writes, keys, 3)["durable"]


def test_target_paces_a_pipelined_run():
    props = props_of("c", target=400, threadcount=4, operationcount=200)
    outcome, _ = pipelined_run(loaded(props), props)
    assert 0.4 <= outcome.runtime_ms / 1000 <= 0.9  # 200 operations at 400/s: 0.5 s


def test_maxexecutiontime_ends_an_unbounded_pipelined_run():
    props = props_of("c", operationcount=0, maxexecutiontime=0.5, target=1000, threadcount=4)
    t0 = time.monotonic()
    outcome, _ = pipelined_run(loaded(props), props)
    assert 0.4 <= time.monotonic() - t0 <= 1.5
    assert 350 <= outcome.operations <= 1000 * outcome.runtime_ms / 1000 * 1.05 + 10


def test_a_load_and_transactions_keep_their_threads():
    props = props_of("a", threadcount=2, operationspertransaction=2)
    db = MemoryDatabase()
    PipelinedStore.pipes = []
    load = execute(Plan(lambda: PipelinedStore(db, props), props, "load", 1))
    grouped = execute(Plan(lambda: PipelinedStore(db, props), props, "run", 1))
    assert load.operations == 200 and grouped.operations == 400 and grouped.error_count == 0
    assert PipelinedStore.pipes == [] and db.transactions == 200
