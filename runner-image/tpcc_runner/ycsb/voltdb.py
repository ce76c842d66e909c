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
import select
import socket
import struct
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from importlib import resources
from typing import Any

from tpcc_contract.ycsb.properties import Properties

from ..drivers.base import ConnectionLost, DriverError
from ..drivers.voltdb import (
    INTEGER,
    STRING,
    TINYINT,
    UNREACHABLE,
    VARBINARY,
    VOLTTABLE,
    Response,
    Table,
    VoltDBDriver,
    checked,
    decode_response,
    encode_invocation,
    encode_table,
    response_handle,
)
from . import voltdb_compiled
from .store import KeyValueStore, Pipeline, Record
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
        self.links: list[VoltDBDriver] = []  # a pipeline's connections to the other nodes

    def connect(self) -> None:
        self.driver.connect()

    def close(self) -> None:
        for driver in [self.driver, *self.links]:
            driver.close()

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
            self._call(*_insert_call(key, values, upsert=True), writes=True, timeout=self.driver.load_timeout)

    def read(self, key: str, fields: tuple[str, ...] | None) -> Mapping[str, bytes] | None:
        return _read_result(self._call(*_read_call(key), writes=False), fields)

    def _scan_limit(self, count: int) -> int:
        return count * self.props.fields_per_record  # every record has all its fields: one row each

    def scan(self, start_key: str, count: int, fields: tuple[str, ...] | None) -> list[tuple[str, Record]]:
        return _scan_result(self._call(*self._scan_call(start_key, count), writes=False), fields)

    def _scan_call(self, start_key: str, count: int) -> tuple[str, list]:
        return "YcsbScan", [(STRING, start_key), (INTEGER, self._scan_limit(count))]

    def update(self, key: str, values: Record) -> bool:
        return _update_result(self._call(*_update_call(key, values), writes=True))

    def insert(self, key: str, values: Record) -> None:
        self._call(*_insert_call(key, values), writes=True)

    @classmethod
    def client_processes(cls, props: Properties, phase: str) -> int:
        """One where the compiled loop runs the threads: it drives VoltDB at 11-21 % of the
        machine from one process, and a second halves each connection's pipeline for more CPU
        per operation and fewer operations (README, measured here)."""
        return 1 if voltdb_compiled.refusal(props, phase) is None else super().client_processes(props, phase)

    def pipeline(self) -> VoltDBPipeline:
        """This connection and one to each other node (each to the next endpoint up if its own
        does not answer), closed with the store."""
        count = len(self.driver.endpoints)
        for k in range(1, count):
            driver = VoltDBDriver(self.connection)
            driver._next = (self.driver._next + k) % count
            self.links.append(driver)
            driver.connect()
        return VoltDBPipeline(self, [self.driver, *self.links])

    def request(self, step: str, op: Operation) -> tuple[str, list, bool]:
        """A pipelined step's call: (procedure, parameters, whether it writes)."""
        if step == READ:
            return (*_read_call(op.key), False)
        if step == UPDATE:
            return (*_update_call(op.key, op.written), True)
        if step == INSERT:
            return (*_insert_call(op.key, op.written, op.upsert), True)
        if step == SCAN:
            return (*self._scan_call(op.key, op.scan_length), False)
        raise ValueError(f"{step} is not one call")

    @staticmethod
    def result(step: str, op: Operation, response: Response) -> Any:
        """A pipelined step's result, as read, update, insert or scan returns it."""
        if step == READ:
            return _read_result(response, op.fields)
        if step == UPDATE:
            return _update_result(response)
        if step == SCAN:
            return _scan_result(response, op.fields)
        return None

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


def _read_call(key: str) -> tuple[str, list]:
    return "YcsbRead", [(STRING, key)]


def _update_call(key: str, values: Record) -> tuple[str, list]:
    return "YcsbUpdate", [(STRING, key), _fields_table(values)]


def _insert_call(key: str, values: Record, upsert: bool = False) -> tuple[str, list]:
    return "YcsbUpsert" if upsert else "YcsbInsert", [(STRING, key), _fields_table(values)]


def _read_result(response: Response, fields: tuple[str, ...] | None) -> Mapping[str, bytes] | None:
    table = response.tables[0]
    return _AnsweredRecord(table, fields) if table.row_count else None


class _AnsweredRecord(Mapping[str, bytes]):
    """A read's record as VoltDB answered it (one row per field), decoded when first looked at.
    A run without dataintegrity asks only whether the record was there: decoding ten fields it
    never reads was a quarter of the runner's CPU per read (ycsb_bench, workload C: 26 -> 19 us
    per operation). Whoever reads the values (dataintegrity's check, the ledger's verification)
    gets what the answer holds, as the dict it stands for."""

    __slots__ = ("_table", "_fields", "_decoded")

    def __init__(self, table: Table, fields: tuple[str, ...] | None):
        self._table, self._fields = table, fields
        self._decoded: Record | None = None

    def _record(self) -> Record:
        if self._decoded is None:
            self._decoded = _record(self._table.tuples, self._fields)
        return self._decoded

    def __getitem__(self, field: str) -> bytes:
        return self._record()[field]

    def __iter__(self) -> Iterator[str]:
        return iter(self._record())

    def __len__(self) -> int:
        return len(self._record())

    def __repr__(self) -> str:
        return repr(self._record())


def _update_result(response: Response) -> bool:
    return response.tables[0].tuples[0][0] == 1


def _scan_result(response: Response, fields: tuple[str, ...] | None) -> list[tuple[str, Record]]:
    return _records(response.tables[0].tuples, fields)


class _Link:
    """One connection of a pipeline: the invocations queued on it, those in flight (by tag: step,
    procedure, writes, op), when each call sent is out of time (call_timeout from when it was sent,
    not queued: a reconnection may come between; the oldest first, as a dict keeps the order of
    insertion and an answered tag is popped) and the part of an answer received so far.

    Its socket blocks with kernel timeouts (SO_SNDTIMEO, SO_RCVTIMEO): a send and a receive are
    one system call each, where Python's own timeout adds an ioctl and a poll to each. A call
    unanswered for call_timeout fails when a receive comes back without its answer after its
    time, or finds nothing for call_timeout."""

    def __init__(self, store: VoltDBStore, driver: VoltDBDriver):
        self.store, self.driver = store, driver
        self.queued: list[bytes] = []
        self.queued_tags: list[int] = []
        self.in_flight: dict[int, tuple[str, str, bool, Operation]] = {}
        self.deadlines: dict[int, float] = {}
        self.received = b""

    def send(self, tag: int, step: str, op: Operation) -> None:
        procedure, params, writes = self.store.request(step, op)
        self.queued.append(encode_invocation(procedure, params, tag))
        self.queued_tags.append(tag)
        self.in_flight[tag] = (step, procedure, writes, op)

    def deadline(self) -> float:
        return next(iter(self.deadlines.values()))

    def socket(self) -> socket.socket:
        """The connection's socket (blocking, with the driver's kernel timeouts) while calls are
        in flight on it (a failed flush clears them)."""
        assert self.driver._conn is not None, "calls in flight on a connection"
        sock: socket.socket = self.driver._conn.socket
        return sock

    def flush(self) -> list[tuple[int, Any]]:
        """Send what is queued (reconnecting first if the connection was lost); the calls that
        failed with it."""
        if self.driver._conn is None and not self.driver._reconnect():
            return self._fail(lambda procedure, writes: ConnectionLost(f"{procedure}: {UNREACHABLE}"))  # none was sent
        message, self.queued = b"".join(self.queued), []
        try:
            self.socket().sendall(message)
        except OSError as e:
            return self.fail_all(e)
        self.deadlines.update(dict.fromkeys(self.queued_tags, time.monotonic() + self.driver.call_timeout))
        self.queued_tags = []
        return []

    def receive(self, wait: float | None) -> list[tuple[int, Any]]:
        """The answers that come within `wait` seconds (None: call_timeout): one recv, so one or
        more answers, or none."""
        sock = self.socket()
        timeout = self.driver.call_timeout if wait is None else max(0.0001, min(wait, self.driver.call_timeout))
        self.driver.set_timeouts(self.driver.call_timeout, timeout)  # only a throttled run's waits change it
        try:
            try:
                data = sock.recv(1 << 16)
            except BlockingIOError:  # SO_RCVTIMEO: nothing came
                data = None
            if data == b"":
                raise ConnectionError("connection closed by the server")
        except OSError as e:
            return self.fail_all(e)
        out = self._answers(data) if data else []
        return out + self.fail_if_out_of_time()

    def fail_if_out_of_time(self) -> list[tuple[int, Any]]:
        """fail_all, if the oldest call sent has had its call_timeout."""
        if self.deadlines and time.monotonic() >= self.deadline():
            return self.fail_all(TimeoutError(f"no answer within call_timeout {self.driver.call_timeout:g} s"))
        return []

    def _answers(self, data: bytes) -> list[tuple[int, Any]]:
        buffer, at, out = self.received + data, 0, []
        while len(buffer) - at >= 4:
            (length,) = struct.unpack_from(">i", buffer, at)
            if len(buffer) - at - 4 < length:
                break
            body = buffer[at + 4 : at + 4 + length]
            at += 4 + length
            tag = response_handle(body)
            step, procedure, writes, op = self.in_flight.pop(tag)
            del self.deadlines[tag]
            try:
                out.append((tag, self.store.result(step, op, checked(procedure, decode_response(body), writes))))
            except DriverError as e:
                out.append((tag, e))
        self.received = buffer[at:]
        return out

    def fail_all(self, e: BaseException) -> list[tuple[int, Any]]:
        """Every call in flight failed and may or may not have happened. The next flush
        reconnects."""
        return self._fail(lambda procedure, writes: self.driver.unanswered(procedure, writes, e))

    def _fail(self, error: Callable[[str, bool], DriverError]) -> list[tuple[int, Any]]:
        out = [(tag, error(procedure, writes)) for tag, (_, procedure, writes, _) in self.in_flight.items()]
        self.in_flight, self.deadlines, self.queued, self.queued_tags, self.received = {}, {}, [], [], b""
        self.driver.close()
        return out


class VoltDBPipeline(Pipeline):
    """The client threads' operations in flight together, each invocation tagged with its client
    handle, on one connection to each node (client n's on connection n mod nodes, the first the
    store's own): as VoltDB's Java client, which YCSB's VoltDB binding shares among its threads,
    connects to every node and multiplexes them. One send and one receive carry many operations:
    measured on one node, a client's CPU per read fell from 15 us with one in flight to 7 us with
    16, the server's from 42 to 17 us."""

    def __init__(self, store: VoltDBStore, drivers: list[VoltDBDriver]):
        self.props = store.props
        self.links = [_Link(store, driver) for driver in drivers]

    def send(self, tag: int, step: str, op: Operation) -> None:
        self.links[tag % len(self.links)].send(tag, step, op)

    def compiled_clients(self, clients: Sequence[Any], shared: Any) -> tuple[Callable[[], None] | None, str]:
        refusal = voltdb_compiled.refusal(self.props, "run")
        if refusal is not None:
            return None, refusal
        return voltdb_compiled.CompiledClients(clients, [link.driver for link in self.links], shared).run, ""

    def exchange(self, wait: float | None) -> list[tuple[int, Any]]:
        out = [answer for link in self.links if link.queued for answer in link.flush()]
        busy = [link for link in self.links if link.in_flight]
        if len(busy) > 1:  # wait on all of them, until the first call is out of time at the latest
            timeout = min(link.deadline() for link in busy) - time.monotonic()
            sockets = {link.socket(): link for link in busy}
            if wait is not None:  # a throttled client is due (0.0: now)
                timeout = min(timeout, wait)
            ready, _, _ = select.select(list(sockets), [], [], max(0.0, timeout))
            for link in (sockets[sock] for sock in ready):
                out += link.receive(None)  # something is there: the recv does not wait
            for link in busy:
                out += link.fail_if_out_of_time()
            return out
        for link in busy:
            out += link.receive(wait)
        return out


def _records(rows: list[list], fields: tuple[str, ...] | None) -> list[tuple[str, Record]]:
    out: list[tuple[str, Record]] = []
    for key, field, value in rows:
        if not out or out[-1][0] != key:
            out.append((key, {}))
        if fields is None or field in fields:
            out[-1][1][field] = bytes(value)
    return out
