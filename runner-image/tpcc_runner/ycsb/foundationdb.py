"""YCSB on FoundationDB, in its native key-value layout: under a directory-layer directory
(default "ycsb"), subspace `table`, one key per field of a record, (ycsb_key, field) packed with
the tuple layer, whose value is the field's bytes. A record's fields are contiguous and read with
one range read; records sort by key, so a scan is one range read of count * fields_per_record keys
from the start key on. An update of a missing record is NOT_FOUND and an insert of a present one
an error, as on the other databases (both read the record's first key first).

Every operation is one FDB transaction, retried on FDB's retryable errors (as YCSB's FoundationDB
binding does with db.run); operationspertransaction N runs N operations in one, and each load
batch is one (a load upserts). FDB limits a transaction to 5 seconds and 10 MB.

NOT RUN against a FoundationDB server: none, nor libfdb_c, exists where this was written. The
connection, its options and the mapping of FDB errors are the TPC-C driver's
(drivers/foundationdb.py: cluster_file or endpoints with cluster_id, api_version, txn_timeout,
directory); the key layout (YcsbKeyspace) is tested with the binding's pure-Python tuple layer.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from ..drivers import options
from ..drivers.base import DriverError, RetryableError
from ..drivers.foundationdb import FoundationDBDriver
from .store import KeyValueStore, Record
from .workload import INSERT, READ, SCAN, UPDATE, Operation

DEFAULT_DIRECTORY = "ycsb"
RETRIES = 10  # re-runs of a transaction after a retryable FDB error


class YcsbKeyspace:
    """Where a record's fields live under the directory's prefix. Pure: only the tuple layer."""

    def __init__(self, prefix: bytes, table: str):
        from fdb.subspace_impl import Subspace  # what fdb.Subspace names once an API version is set

        self.table = Subspace(rawPrefix=prefix)[table]

    def field_key(self, key: str, field: str) -> bytes:
        return self.table.pack((key, field))

    def record_range(self, key: str) -> slice:
        """Exactly the keys of the record's fields (not those of a key it is a prefix of)."""
        r = self.table.range((key,))
        return slice(r.start, r.stop)

    def from_key(self, key: str) -> bytes:
        """The first key of the record key, or of the first record after it."""
        return self.table.pack((key,))

    def table_range(self) -> slice:
        r = self.table.range()
        return slice(r.start, r.stop)

    def records(self, kvs: Iterable[tuple[bytes, bytes]], fields: tuple[str, ...] | None) -> list[tuple[str, Record]]:
        """(key, record) pairs in key order from a range read's key-values."""
        out: list[tuple[str, Record]] = []
        for raw_key, value in kvs:
            key, field = self.table.unpack(raw_key)
            if not out or out[-1][0] != key:
                out.append((key, {}))
            if fields is None or field in fields:
                out[-1][1][field] = bytes(value)
        return out


class FoundationDBStore(KeyValueStore):
    name = "foundationdb"
    option_table = options.with_defaults(FoundationDBDriver.option_table, directory=DEFAULT_DIRECTORY)

    def __init__(self, connection, props):
        super().__init__(connection, props)
        extra = {"directory": DEFAULT_DIRECTORY, **connection.extra}
        self.driver = FoundationDBDriver(dataclasses.replace(connection, extra=extra))
        self._keys: YcsbKeyspace | None = None

    def connect(self) -> None:
        self.driver.connect()  # opens (creates) the directory; its prefix is the driver's keyspace's
        self._keys = YcsbKeyspace(self.driver._keys().prefix, self.props.table)

    @property
    def keys(self) -> YcsbKeyspace:
        if self._keys is None:
            raise DriverError("FoundationDB YCSB store is not connected")
        return self._keys

    def close(self) -> None:
        self.driver.close()

    def describe(self) -> dict[str, Any]:
        return {
            **self.driver.describe(),
            "table": self.props.table,
            "layout": "one key per field: (ycsb_key, field) in the tuple layer",
        }

    def _run(self, body):
        """body(tr) as one FDB transaction, re-run on a retryable error (the TPC-C driver's
        _attempt commits it and maps FDB's errors onto the runner's)."""
        for attempt in range(RETRIES + 1):
            try:
                return self.driver._attempt(body)
            except RetryableError:
                if attempt == RETRIES:
                    raise
        raise AssertionError("unreachable: the last attempt returns or raises")

    def create_schema(self, reset: bool) -> None:
        if reset:  # subspaces need no creation; reset empties the table's
            r = self.keys.table_range()
            self.driver._transact(lambda tr: tr.clear_range(r.start, r.stop))

    def load(self, records: list[tuple[str, Record]]) -> None:
        def body(tr):
            for key, values in records:
                self._set(tr, key, values)

        self._run(body)

    def _set(self, tr, key: str, values: Record) -> None:
        for field, value in values.items():
            tr[self.keys.field_key(key, field)] = value

    def _exists(self, tr, key: str) -> bool:
        r = self.keys.record_range(key)
        return bool(list(tr.get_range(r.start, r.stop, limit=1)))

    def _read(self, tr, key: str, fields: tuple[str, ...] | None) -> Record | None:
        r = self.keys.record_range(key)
        found = self.keys.records(((kv.key, kv.value) for kv in tr.get_range(r.start, r.stop)), fields)
        return found[0][1] if found else None

    def _scan(self, tr, start_key: str, count: int, fields: tuple[str, ...] | None) -> list[tuple[str, Record]]:
        # every record has all its fields: count records are count * fields_per_record keys
        kvs = tr.get_range(
            self.keys.from_key(start_key), self.keys.table_range().stop, limit=count * self.props.fields_per_record
        )
        return self.keys.records(((kv.key, kv.value) for kv in kvs), fields)

    def _update(self, tr, key: str, values: Record) -> bool:
        if not self._exists(tr, key):
            return False
        self._set(tr, key, values)
        return True

    def _insert(self, tr, key: str, values: Record) -> None:
        if self._exists(tr, key):
            raise DriverError(f"foundationdb: insert of {key}: the record exists")
        self._set(tr, key, values)

    def _apply_in(self, tr, op: Operation) -> Any:
        """KeyValueStore.apply inside the transaction tr."""
        if op.kind == READ:
            return self._read(tr, op.key, op.fields)
        if op.kind == UPDATE:
            return self._update(tr, op.key, op.written)
        if op.kind == INSERT:
            return self._insert(tr, op.key, op.written)
        if op.kind == SCAN:
            return self._scan(tr, op.key, op.scan_length, op.fields)
        return self._read(tr, op.key, op.fields), self._update(tr, op.key, op.written)

    def read(self, key: str, fields: tuple[str, ...] | None) -> Record | None:
        return self._run(lambda tr: self._read(tr, key, fields))

    def scan(self, start_key: str, count: int, fields: tuple[str, ...] | None) -> list[tuple[str, Record]]:
        return self._run(lambda tr: self._scan(tr, start_key, count, fields))

    def update(self, key: str, values: Record) -> bool:
        return self._run(lambda tr: self._update(tr, key, values))

    def insert(self, key: str, values: Record) -> None:
        self._run(lambda tr: self._insert(tr, key, values))

    def transaction(self, ops: list[Operation]) -> list[Any]:
        return self._run(lambda tr: [self._apply_in(tr, op) for op in ops])

    def count_records(self) -> int:
        # chunked, one transaction per chunk (FDB's 5 s limit): exact when nothing else writes
        keys = {self.keys.table.unpack(k)[0] for k, _ in self.driver._scan(self.keys.table_range())}
        return len(keys)
