"""A KeyValueStore in memory for the YCSB executor's tests: one dict shared by the client
threads' stores (like one database), keys in order for scans, transactions serial (one lock)
and undone when one of their operations fails, so a test sees exactly what committed."""

from __future__ import annotations

import bisect
import copy
import threading

from tpcc_runner.drivers.base import ConnectionOptions, DriverError
from tpcc_runner.ycsb.properties import Properties
from tpcc_runner.ycsb.store import KeyValueStore, Record
from tpcc_runner.ycsb.workload import Operation


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
