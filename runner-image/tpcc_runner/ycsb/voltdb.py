"""YCSB on VoltDB: table USERTABLE with one row per field of a record (ycsb_key, field,
field_value), partitioned on ycsb_key (tpcc_runner/voltdb/ycsb.sql), and stored procedures
(runner-image/voltdb/src/tpcc/ycsb/, in the same jar as TPC-C's): a read (YcsbRead), an update
(YcsbUpdate) and an insert (YcsbInsert) are single-partition procedures on the record's key; a scan
(YcsbScan) is multi-partition. N operations per transaction are one YcsbTransaction: a
multi-partition procedure that runs them in order and aborts them all if one fails. The load
upserts each record (YcsbUpsert, single-partition), so a re-run load does not fail on keys
already there, as on MongoDB.

The connection, its timeouts and the mapping of VoltDB's statuses onto the runner's errors are
the TPC-C driver's (drivers/voltdb.py; options call_timeout, load_timeout, procs_jar). The
procedures are compiled for the table name usertable (YCSB's default `table`).
"""

from __future__ import annotations

import re
from importlib import resources
from typing import Any

from ..drivers.voltdb import INTEGER, STRING, TINYINT, VARBINARY, VOLTTABLE, VoltDBDriver, encode_table
from .store import KeyValueStore, Record
from .workload import INSERT, READ, READMODIFYWRITE, SCAN, UPDATE, Operation

TABLE = "usertable"
MAX_FIELD_LENGTH = 65536  # field_value VARBINARY(65536)
PROCEDURES = ("YcsbRead", "YcsbScan", "YcsbInsert", "YcsbUpdate", "YcsbUpsert", "YcsbTransaction")
FIELDS = [("field", STRING), ("field_value", VARBINARY)]
OPS = [
    ("op", INTEGER),
    ("kind", TINYINT),
    ("ycsb_key", STRING),
    ("field", STRING),
    ("field_value", VARBINARY),
    ("scan_length", INTEGER),
]
# YcsbTransaction's operation kinds
TXN_READ, TXN_UPDATE, TXN_INSERT, TXN_SCAN = range(4)
TXN_KIND = {READ: TXN_READ, UPDATE: TXN_UPDATE, INSERT: TXN_INSERT, SCAN: TXN_SCAN}


def ddl_statements() -> list[str]:
    text = resources.files("tpcc_runner").joinpath("voltdb/ycsb.sql").read_text()
    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--"))
    return [s.strip() + ";" for s in text.split(";") if s.strip()]


def procedure_of(stmt: str) -> str:
    """The procedure a CREATE PROCEDURE of ycsb.sql creates: named (AS a statement) or its class."""
    m = re.search(r"FROM CLASS [\w.]+\.(\w+);$", stmt) or re.match(r"CREATE PROCEDURE (\w+) ", stmt)
    if not m or m.group(1) not in PROCEDURES:
        raise ValueError(f"unexpected statement in ycsb.sql: {stmt[:60]}")
    return m.group(1)


def _fields_table(values: Record) -> tuple[int, bytes]:
    return VOLTTABLE, encode_table(FIELDS, sorted(values.items()))


def _record(rows: list[list], fields: tuple[str, ...] | None) -> Record:
    return {field: bytes(value) for field, value in rows if fields is None or field in fields}


class VoltDBStore(KeyValueStore):
    name = "voltdb"
    option_table = VoltDBDriver.option_table

    def __init__(self, connection, props):
        super().__init__(connection, props)
        if props.table != TABLE:
            raise ValueError(f"voltdb: the YCSB procedures are compiled for table {TABLE}, not {props.table!r}")
        if props.fieldlength > MAX_FIELD_LENGTH:
            raise ValueError(
                f"voltdb: fieldlength {props.fieldlength} is beyond the table's VARBINARY({MAX_FIELD_LENGTH})"
            )
        self.driver = VoltDBDriver(connection)

    def connect(self) -> None:
        self.driver.connect()

    def close(self) -> None:
        self.driver.close()

    def describe(self) -> dict[str, Any]:
        return {**self.driver.describe(), "table": TABLE, "layout": "one row per field, partitioned on ycsb_key"}

    # The TPC-C driver's connection and calls: one wire protocol implementation for both workloads.
    def _call(self, procedure: str, params: list, writes: bool, timeout: float | None = None):
        return self.driver._call(procedure, params, writes=writes, timeout=timeout)

    def create_schema(self, reset: bool) -> None:
        procedures = self.driver._catalog("PROCEDURES", 2)
        tables = self.driver._catalog("TABLES", 2)
        if reset:
            drops = [f"DROP PROCEDURE {p};" for p in PROCEDURES if p.lower() in procedures]
            drops += [f"DROP TABLE {TABLE};"] if TABLE in tables else []
            if drops:
                self.driver._sql("\n".join(drops), writes=True, timeout=self.driver.load_timeout)
            procedures, tables = set(), set()
        self._call(
            "@UpdateClasses",
            [(VARBINARY, self.driver._jar()), (STRING, "")],
            writes=True,
            timeout=self.driver.load_timeout,
        )
        missing = [stmt for stmt in ddl_statements() if not self._exists(stmt, tables, procedures)]
        if missing:
            self.driver._sql("\n".join(missing), writes=True, timeout=self.driver.load_timeout)

    @staticmethod
    def _exists(stmt: str, tables: set[str], procedures: set[str]) -> bool:
        if stmt.startswith(("CREATE TABLE", "PARTITION TABLE")):
            return TABLE in tables
        return procedure_of(stmt).lower() in procedures

    def load(self, records: list[tuple[str, Record]]) -> None:
        """A batch as single-partition upserts, one call each: measured here at 0.6 ms a record,
        where one multi-partition YcsbTransaction of the batch took 1.2 ms a record and
        serializes the whole cluster, so load threads could not add up."""
        for key, values in records:
            self._call(
                "YcsbUpsert", [(STRING, key), _fields_table(values)], writes=True, timeout=self.driver.load_timeout
            )

    def read(self, key: str, fields: tuple[str, ...] | None) -> Record | None:
        rows = self._call("YcsbRead", [(STRING, key)], writes=False).tables[0].tuples
        return _record(rows, fields) if rows else None

    def _scan_limit(self, count: int) -> int:
        return count * self.props.fields_per_record  # every record has all its fields: one row each

    def scan(self, start_key: str, count: int, fields: tuple[str, ...] | None) -> list[tuple[str, Record]]:
        rows = (
            self._call("YcsbScan", [(STRING, start_key), (INTEGER, self._scan_limit(count))], writes=False)
            .tables[0]
            .tuples
        )
        return _records(rows, fields)

    def update(self, key: str, values: Record) -> bool:
        found = self._call("YcsbUpdate", [(STRING, key), _fields_table(values)], writes=True).tables[0].tuples
        return found[0][0] == 1

    def insert(self, key: str, values: Record) -> None:
        self._call("YcsbInsert", [(STRING, key), _fields_table(values)], writes=True)

    def transaction(self, ops: list[Operation]) -> list[Any]:
        """One YcsbTransaction; a read-modify-write is its read and its update."""
        steps: list[tuple[int, str, Record, int]] = []
        for op in ops:
            if op.kind == READMODIFYWRITE:
                steps += [(TXN_READ, op.key, {}, 0), (TXN_UPDATE, op.key, op.written, 0)]
            else:
                steps.append(
                    (
                        TXN_KIND[op.kind],
                        op.key,
                        op.values or {},
                        self._scan_limit(op.scan_length) if op.kind == SCAN else 0,
                    )
                )
        tables = iter(self._transact(steps))
        return [self._result(op, tables) for op in ops]

    def _result(self, op: Operation, tables) -> Any:
        rows = next(tables)
        if op.kind == READ:
            return _record(rows, op.fields) if rows else None
        if op.kind == SCAN:
            return _records(rows, op.fields)
        if op.kind == UPDATE:
            return rows[0][0] == 1
        if op.kind == INSERT:
            return None
        found = next(tables)[0][0] == 1
        return (_record(rows, op.fields) if rows else None), found

    def _transact(self, steps: list[tuple[int, str, Record, int]]) -> list[list]:
        rows = []
        for n, (kind, key, values, scan_length) in enumerate(steps):
            # a step has one row per field it writes, a read or scan one row with no field
            for field, value in sorted(values.items()) or [("", b"")]:
                rows.append((n, kind, key, field, value, scan_length))
        response = self._call("YcsbTransaction", [(VOLTTABLE, encode_table(OPS, rows))], writes=True)
        return [t.tuples for t in response.tables]

    def count_records(self) -> int:
        return self.driver._sql(f"SELECT COUNT(DISTINCT ycsb_key) FROM {TABLE};")[0][0]

    def has_table(self) -> bool:
        """VoltDB CE keeps no command log: a node restarted alone comes back without the schema."""
        return TABLE in self.driver._catalog("TABLES", 2) and "ycsbread" in self.driver._catalog("PROCEDURES", 2)


def _records(rows: list[list], fields: tuple[str, ...] | None) -> list[tuple[str, Record]]:
    out: list[tuple[str, Record]] = []
    for key, field, value in rows:
        if not out or out[-1][0] != key:
            out.append((key, {}))
        if fields is None or field in fields:
            out[-1][1][field] = bytes(value)
    return out
