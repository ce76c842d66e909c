"""A KeyValueStore in memory for the YCSB executor's tests: one dict shared by the client
threads' stores (like one database), keys in order for scans, transactions serial (one lock)
and undone when one of their operations fails, so a test sees exactly what committed. For
client processes, JournalStores: a database per process and a journal file they all append to."""

from __future__ import annotations

import bisect
import copy
import os
import random
import threading
import time
from dataclasses import dataclass

from tpcc_contract.ycsb.properties import Properties
from tpcc_runner.drivers.base import ConnectionOptions, DriverError
from tpcc_runner.ycsb.store import KeyValueStore, Record
from tpcc_runner.ycsb.workload import CoreWorkload, Operation


class MemoryDatabase:
    def __init__(self):
        self.records: dict[str, Record] = {}
        self.keys: list[str] = []  # sorted, for scans
        self.lock = threading.RLock()  # held by a transaction from its start to its end
        self.transactions = 0

    def store(self, props: Properties) -> MemoryStore:
        return MemoryStore(self, props)


class MemoryStore(KeyValueStore):
    name = "memory"

    def __init__(self, database: MemoryDatabase, props: Properties):
        super().__init__(ConnectionOptions(), props)
        self.db = database

    def connect(self) -> None:
        pass

    def close(self) -> None:
        pass

    def create_schema(self, reset: bool) -> None:
        if reset:
            with self.db.lock:
                self.db.records.clear()
                self.db.keys.clear()

    def _put(self, key: str, values: Record) -> None:
        if key not in self.db.records:
            bisect.insort(self.db.keys, key)
        self.db.records[key] = dict(values)

    def load(self, records: list[tuple[str, Record]]) -> None:
        with self.db.lock:
            for key, values in records:
                self._put(key, values)

    def read(self, key: str, fields: tuple[str, ...] | None) -> Record | None:
        with self.db.lock:
            record = self.db.records.get(key)
            if record is None:
                return None
            return dict(record) if fields is None else {f: record[f] for f in fields if f in record}

    def scan(self, start_key: str, count: int, fields: tuple[str, ...] | None) -> list[tuple[str, Record]]:
        with self.db.lock:
            first = bisect.bisect_left(self.db.keys, start_key)
            return [(k, self.read(k, fields)) for k in self.db.keys[first : first + count]]

    def update(self, key: str, values: Record) -> bool:
        with self.db.lock:
            if key not in self.db.records:
                return False
            self.db.records[key].update(values)
            return True

    def insert(self, key: str, values: Record) -> None:
        with self.db.lock:
            if key in self.db.records:
                raise DriverError(f"memory: duplicate key {key}")
            self._put(key, values)

    def transaction(self, ops: list[Operation]) -> list:
        with self.db.lock:
            before = copy.deepcopy(self.db.records), list(self.db.keys)
            try:
                result = [self.apply(op) for op in ops]
            except BaseException:
                self.db.records, self.db.keys = before
                raise
            self.db.transactions += 1
            return result

    def count_records(self) -> int:
        with self.db.lock:
            return len(self.db.records)


_PROCESS_DATABASE: dict[str, MemoryDatabase] = {}  # a client process's own database, per journal


def _journal(path: str, lines: list[str]) -> None:
    """Append lines to the journal with one write (O_APPEND: the processes' lines never mix)."""
    if lines:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            os.write(fd, "".join(f"{os.getpid()} {line}\n" for line in lines).encode())
        finally:
            os.close(fd)


def journal_lines(path: str) -> list[tuple[int, str, str]]:
    """(pid, operation, key) of every operation the JournalStores of a run performed."""
    with open(path) as f:
        return [(int(pid), kind, key) for pid, kind, key in (line.split() for line in f)]


class JournalStore(MemoryStore):
    """A MemoryStore for client processes: each process has a database of its own (it cannot
    see another's), holding the load's records when `loaded`; every load record and every
    operation is journalled to a file shared by the processes (pid, operation, key), for a test
    to see what each process did."""

    def __init__(self, database: MemoryDatabase, props: Properties, path: str):
        super().__init__(database, props)
        self.path = path

    def load(self, records: list[tuple[str, Record]]) -> None:
        super().load(records)
        _journal(self.path, [f"LOAD {key}" for key, _ in records])

    def apply(self, op: Operation):
        result = super().apply(op)
        _journal(self.path, [f"{op.kind} {op.key}"])
        return result


@dataclass(frozen=True)
class JournalStores:
    """A picklable store factory (Plan.new_store) for client processes: JournalStores on the
    process's own database. fail_once: a file whose creator's store fails to connect (one store
    of one process); exit_once: a file whose creator's store ends its process on its first
    operation, as a crash would."""

    props: Properties
    path: str
    loaded: bool = False
    fail_once: str | None = None
    exit_once: str | None = None
    read_delay: float = 0.0

    def __call__(self) -> MemoryStore:
        if self.fail_once and _first_to_create(self.fail_once):
            raise DriverError("connection refused")
        if self.path not in _PROCESS_DATABASE:
            _PROCESS_DATABASE[self.path] = self._database()
        store = JournalStore(_PROCESS_DATABASE[self.path], self.props, self.path)
        if self.exit_once and _first_to_create(self.exit_once):
            store.apply = lambda op: os._exit(3)  # type: ignore[method-assign]
        if self.read_delay:
            store.read = _slowed(store.read, self.read_delay)  # type: ignore[method-assign]
        return store

    def _database(self) -> MemoryDatabase:
        db = MemoryDatabase()
        if self.loaded:
            workload = CoreWorkload(self.props)
            rng = random.Random(0)
            db.store(self.props).load(
                [(op.key, op.written) for op in (workload.next_load_insert(rng) for _ in range(self.props.recordcount))]
            )
        return db


def _first_to_create(path: str) -> bool:
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        return False
    return True


def _slowed(read, seconds: float):
    def slow(key, fields):
        time.sleep(seconds)
        return read(key, fields)

    return slow
