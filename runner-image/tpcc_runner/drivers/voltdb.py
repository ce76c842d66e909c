"""VoltDB driver: the five transactions are Java stored procedures (runner-image/voltdb/,
built into tpcc_runner/voltdb/tpcc-procs.jar by `hack/voltdb.sh procs`), every table but
ITEM is partitioned on its warehouse id, and a transaction touching a remote warehouse
(a remote supply warehouse in New-Order, a remote customer in Payment) runs the same code
as one multi-partition procedure (NewOrderMP, PaymentMP). With partitioning=district the
district-keyed tables are partitioned on W_ID * 10 + D_ID instead; partitioning=d_id is the VoltDB
study's District ID strategy (its section 5.1: "the Warehouse table and the District table are
replicated across all partitions. If a table has a column associated with the District ID in the
table, it is partitioned on that column. If a table does not have a column associated with the
District ID, it is partitioned on a column associated with the Item ID"). tpcc.sql says which
procedures are single- and which multi-partition in each layout. `create_schema` loads the jar
(@UpdateClasses) and the DDL (tpcc_runner/voltdb/tpcc.sql, @AdHoc), so the runner works
against any empty VoltDB.

Speaks the wire protocol through PyPI's `voltdbclient` for authentication (and for answers
with geography or date columns, which only system procedures return); invocations (arrays,
VoltTable parameters, UTC timestamps) are encoded and answers decoded here (decode_response).

--driver-opt keys: OPTIONS below, each with its default and what it does (`tpcc run --help` lists them). A run must
name the load's partitioning.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import random
import re
import socket
import struct
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from importlib import resources
from pathlib import Path
from typing import Any

import voltdbclient
from tpcc_contract.server_stats import CounterGroup, DatabaseSize, ServerCounters

from ..consistency import CustomerRow, DistrictRow, OrderRow, WarehouseData, cents_of
from ..durability import StoredOrder
from ..schema import TABLES
from ..transactions import (
    DeliveryInput,
    DeliveryOutput,
    NewOrderInput,
    NewOrderOutput,
    OrderStatusInput,
    OrderStatusOutput,
    PaymentInput,
    PaymentOutput,
    StockLevelInput,
    StockLevelOutput,
)
from . import options
from .base import (
    ConnectionLost,
    ConnectionOptions,
    Driver,
    DriverError,
    LoadMeta,
    NotLoaded,
    NotPermitted,
    RetryableError,
    UnknownOutcome,
    Unreachable,
    UserAbort,
)

# voltdbclient prints its errors to stdout unless told to log them.
voltdbclient.use_logging()

DEFAULT_PORT = 21212
SCHEMA_VARIANT = "stored-procedures"

# Wire types (org.voltdb.VoltType) and the NULL value each is sent as.
TINYINT, INTEGER, BIGINT, FLOAT, STRING, TIMESTAMP, VOLTTABLE, DECIMAL, VARBINARY = 3, 5, 6, 8, 9, 11, 21, 22, 25
ARRAY = -99
_I16, _I32, _I64, _F64 = (struct.Struct(f) for f in (">h", ">i", ">q", ">d"))
NULL_INTEGER, NULL_BIGINT, NULL_FLOAT, NULL_DECIMAL = -(2**31), -(2**63), -1.7e308, -(2**127)
DECIMAL_SCALE = 12  # VoltDB's fixed DECIMAL scale
EPOCH = dt.datetime(1970, 1, 1)

# org.voltdb.client.ClientResponse status codes.
SUCCESS, USER_ABORT, GRACEFUL_FAILURE, UNEXPECTED_FAILURE = 1, -1, -2, -3
CONNECTION_LOST, SERVER_UNAVAILABLE, CONNECTION_TIMEOUT, RESPONSE_UNKNOWN = -4, -5, -6, -7
TXN_RESTART, TXN_MISPARTITIONED, TXN_MISROUTED = -8, -10, -11
# Set by the procedures on the TPC-C rollback (NewOrderBase.INVALID_ITEM) and when a row the
# transaction needs is missing (MissingRow.MISSING_ROW).
APP_STATUS_INVALID_ITEM, APP_STATUS_MISSING_ROW = 1, 2
# How VoltDB (security enabled) refuses a call the user's roles do not allow: "User tester does not
# have admin permission" (status UNEXPECTED_FAILURE, so only its words tell it apart).
NOT_PERMITTED = re.compile(r"\bdoes not have \w+ permission\b")

PROCEDURES = (
    "NewOrder",
    "NewOrderMP",
    "Payment",
    "PaymentMP",
    "OrderStatus",
    "Delivery",
    "DeliveryDistrict",
    "StockLevel",
    "ConsistencyRead",
    "LoadWarehouse",
    "LoadStock",
    "LoadDistrict",
    "LoadItemRows",
)
# Procedures older runners created: a reset drops them too (LoadItems wrote ITEM, which a
# reset drops, and a procedure left reading a dropped table fails the DDL).
RETIRED_PROCEDURES = ("LoadItems",)
# The procedures that implement each client transaction type (server_counters groups them so).
TRANSACTION_PROCEDURES = {
    "NEW_ORDER": ("NewOrder", "NewOrderMP"),
    "PAYMENT": ("Payment", "PaymentMP"),
    "ORDER_STATUS": ("OrderStatus",),
    "DELIVERY": ("Delivery", "DeliveryDistrict"),
    "STOCK_LEVEL": ("StockLevel",),
}
UNREACHABLE = "no VoltDB endpoint reachable"  # a call's error when no endpoint takes a connection
KIB = 1024  # @Statistics reports memory in kilobytes
BOOKKEEPING_TABLES = ("tpcc_meta", "tpcc_load_unit")
DISTRICT_TABLES = ("customer", "history", "orders", "order_line", "new_order")
DISTRICTS = 10  # per warehouse (clause 1.2.1): a Delivery's districts
# delivery=per-district: one client Delivery is a DeliveryDistrict call per district
CALLS_PER_TRANSACTION = {"DeliveryDistrict": DISTRICTS}
# Where Payment's answer (the customer row, PaymentBase.CUSTOMER_COLUMNS) and OrderStatus's
# (its customer table) hold what the driver returns: read by position, not by column name, as a
# dict of the 18 columns per Payment cost the runner ~3 us a transaction (issue 23)
PAYMENT_C_ID, PAYMENT_C_CREDIT, PAYMENT_C_BALANCE = 0, 11, 14
ORDER_STATUS_C_ID, ORDER_STATUS_C_BALANCE = 0, 4  # OrderStatus.java: c_id, c_first, c_middle, c_last, c_balance
# The driver option partitioning: what tpcc.sql partitions on. warehouse: W_ID; district:
# W_ID * 10 + D_ID; d_id: the study's "partitioning on the District ID" (WAREHOUSE and DISTRICT
# replicated, the district tables on their D_ID column, ITEM and STOCK on the item id).
LAYOUTS = ("warehouse", "district", "d_id")
# The district key column (W_ID * 10 + D_ID) of each district-keyed table, last in its rows, and
# the warehouse and district columns it is made of (a HISTORY row's: its home district).
DISTRICT_KEYS = {
    "district": ("d_wd", "d_w_id", "d_id"),
    "customer": ("c_wd", "c_w_id", "c_d_id"),
    "history": ("h_wd", "h_w_id", "h_d_id"),
    "orders": ("o_wd", "o_w_id", "o_d_id"),
    "order_line": ("ol_wd", "ol_w_id", "ol_d_id"),
    "new_order": ("no_wd", "no_w_id", "no_d_id"),
}


# -- encoding --------------------------------------------------------------------------


def _micros(value: dt.datetime) -> int:
    if value.tzinfo is not None:
        value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
    delta = value - EPOCH
    return (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds


def _string(value: str | None) -> bytes:
    if value is None:
        return _I32.pack(-1)
    data = str(value).encode()
    return _I32.pack(len(data)) + data


def _decimal(value: Decimal | float | None) -> bytes:
    """A DECIMAL: 16-byte two's complement of the value scaled by 10^12. A float is money from
    the loader or the workload (dollars rounded to cents) and is taken as exact cents."""
    if value is None:
        unscaled = NULL_DECIMAL
    elif type(value) is float:  # cents * 10^10: the same integer as by Decimal, without it
        unscaled = round(value * 100) * 10 ** (DECIMAL_SCALE - 2)
    else:
        exact = Decimal(value)
        scaled = exact.scaleb(DECIMAL_SCALE)
        if scaled != scaled.to_integral_value():
            raise ValueError(f"{value!r} has more than {DECIMAL_SCALE} decimals (VoltDB DECIMAL)")
        unscaled = int(scaled)
    return unscaled.to_bytes(16, "big", signed=True)


ENCODE = {
    TINYINT: lambda v: struct.pack(">b", -128 if v is None else int(v)),
    INTEGER: lambda v: _I32.pack(NULL_INTEGER if v is None else int(v)),
    BIGINT: lambda v: _I64.pack(NULL_BIGINT if v is None else int(v)),
    FLOAT: lambda v: _F64.pack(NULL_FLOAT if v is None else float(v)),
    STRING: _string,
    DECIMAL: _decimal,
    TIMESTAMP: lambda v: _I64.pack(NULL_BIGINT if v is None else _micros(v)),
    VARBINARY: lambda v: _I32.pack(len(v)) + bytes(v),
}


# Tables of at least this many rows are encoded a column at a time (numpy): the load
# units' thousands of rows; a transaction's few rows are quicker one at a time.
BULK_ROWS = 64
_FIXED_WIDTH = {TINYINT: ">i1", INTEGER: ">i4", BIGINT: ">i8", FLOAT: ">f8", TIMESTAMP: ">i8"}
_NULL = {TINYINT: -128, INTEGER: NULL_INTEGER, BIGINT: NULL_BIGINT, FLOAT: NULL_FLOAT, TIMESTAMP: NULL_BIGINT}
# |unscaled| below this is an int64: money of the load (cents * 10^10) always is
_INT64_DECIMAL = 2**63 - 1


def encode_table(columns: Sequence[tuple[str, int]], rows: Iterable[tuple]) -> bytes:
    """A VoltTable parameter (org.voltdb.VoltTable's serialization)."""
    columns = tuple(columns)
    rows = rows if isinstance(rows, list) else list(rows)
    for row in rows:
        if len(row) != len(columns):
            raise ValueError(f"row has {len(row)} values, expected {len(columns)}: {row!r:.200}")
    data = _rows_by_column(columns, rows) if len(rows) >= BULK_ROWS else _rows_one_by_one(columns, rows)
    body = b"".join([_table_header(columns), _I32.pack(len(rows)), data])
    return _I32.pack(len(body)) + body


@functools.lru_cache(maxsize=256)
def _table_header(columns: tuple[tuple[str, int], ...]) -> bytes:
    """A table's header with its length: the same for every table of these columns (a YCSB
    update's fields table took half of its encoding to build it)."""
    header = bytearray(b"\x00") + _I16.pack(len(columns)) + bytes(t for _, t in columns)
    for name, _ in columns:
        header += _string(name)
    return _I32.pack(len(header)) + bytes(header)


@functools.lru_cache(maxsize=256)
def _encoders(columns: tuple[tuple[str, int], ...]) -> list[Callable[[Any], bytes]]:
    return [ENCODE[t] for _, t in columns]


def _rows_one_by_one(columns: Sequence[tuple[str, int]], rows: list[tuple]) -> bytes:
    encoders = _encoders(tuple(columns))  # the same tuple when encode_table calls
    parts = []
    for row in rows:
        data = b"".join([enc(v) for enc, v in zip(encoders, row)])
        parts.append(_I32.pack(len(data)))
        parts.append(data)
    return b"".join(parts)


def _rows_by_column(columns: Sequence[tuple[str, int]], rows: list[tuple]) -> bytes:
    """The same bytes as _rows_one_by_one: each column encoded whole into a (rows, width)
    array or, for strings, lengths and one blob, then scattered into the rows' places."""
    # numpy only here: the runner's client processes never encode a table this size
    import numpy as np

    n = len(rows)
    cells: list[tuple[Any, ...]] = []  # per column: ("fixed", (n, width) uint8 array) or ("var", lengths, blob)
    values: Any  # a column's values: the rows' tuple, then a list with NULLs replaced
    for (_, typ), values in zip(columns, zip(*rows)):
        if typ in _FIXED_WIDTH:
            null = _NULL[typ]
            if typ == TIMESTAMP:
                micros = {v: _micros(v) for v in set(values) if v is not None}
                values = [null if v is None else micros[v] for v in values]
            elif None in values:
                values = [null if v is None else v for v in values]
            array = np.array(values, dtype=_FIXED_WIDTH[typ])
            cells.append(("fixed", array.view(np.uint8).reshape(n, -1)))
        elif typ == DECIMAL:
            cells.append(("fixed", _decimals(np, values)))
        else:
            lengths, blob = _strings(np, typ, values)
            prefixes = lengths.astype(">i4").view(np.uint8).reshape(n, 4)
            if lengths.min() == lengths.max() >= 0:  # all of one length: fixed after all
                blob_array = np.frombuffer(blob, dtype=np.uint8).reshape(n, -1)
                cells.append(("fixed", np.concatenate([prefixes, blob_array], axis=1)))
            else:
                cells.append(("var", lengths, blob))
        # adjacent fixed-width cells are scattered into the rows together
        if len(cells) > 1 and cells[-1][0] == cells[-2][0] == "fixed":
            cells[-2:] = [("fixed", np.concatenate([cells[-2][1], cells[-1][1]], axis=1))]
    widths = [np.full(n, c[1].shape[1]) if c[0] == "fixed" else 4 + np.maximum(c[1], 0) for c in cells]
    row_sizes = np.sum(widths, axis=0)
    row_starts = np.cumsum(4 + row_sizes) - (4 + row_sizes)
    out = np.empty(int(np.sum(4 + row_sizes)), dtype=np.uint8)

    def put(at: np.ndarray, fixed: np.ndarray) -> None:
        out[at[:, None] + np.arange(fixed.shape[1])] = fixed

    put(row_starts, row_sizes.astype(">i4").view(np.uint8).reshape(n, 4))
    at = row_starts + 4
    for cell, width in zip(cells, widths):
        if cell[0] == "fixed":
            put(at, cell[1])
        else:
            _, lengths, blob = cell
            put(at, lengths.astype(">i4").view(np.uint8).reshape(n, 4))
            sizes = np.maximum(lengths, 0)
            # byte j of value i goes to at[i] + 4 + j
            blob_starts = np.cumsum(sizes) - sizes
            out[np.repeat(at + 4 - blob_starts, sizes) + np.arange(len(blob))] = np.frombuffer(blob, dtype=np.uint8)
        at = at + width
    return out.tobytes()


def _strings(np: Any, typ: int, values: tuple) -> tuple[Any, bytes]:
    """A STRING or VARBINARY column: each value's length (-1 for NULL) and their bytes."""
    if typ == STRING:
        try:
            text = "".join(values)
        except TypeError:  # a NULL, or a value that is not a str
            pass
        else:
            blob = text.encode()
            if len(blob) == len(text):  # ASCII: lengths in characters are lengths in bytes
                return np.fromiter(map(len, values), dtype=np.int64, count=len(values)), blob
    data = [None if v is None else (str(v).encode() if typ == STRING else bytes(v)) for v in values]
    lengths = np.array([-1 if d is None else len(d) for d in data], dtype=np.int64)
    return lengths, b"".join([d for d in data if d is not None])


def _decimals(np: Any, values: tuple) -> Any:
    """DECIMAL cells as a (rows, 16) array, as _decimal encodes them."""
    if all(type(v) is float for v in values):
        cents = np.rint(np.array(values, dtype=np.float64) * 100)
        if np.all(np.abs(cents) < _INT64_DECIMAL / 10**10):
            low = cents.astype(np.int64) * 10**10
            return np.concatenate(
                [
                    (low >> 63).astype(">i8").view(np.uint8).reshape(-1, 8),
                    low.astype(">i8").view(np.uint8).reshape(-1, 8),
                ],
                axis=1,
            )
    return np.frombuffer(b"".join([_decimal(v) for v in values]), dtype=np.uint8).reshape(-1, 16)


def encode_invocation(procedure: str, params: list[tuple[Any, Any]], handle: int = 1) -> bytes:
    """params: (type, value) pairs; type is a wire type, (wire type,) for an array of
    it, or VOLTTABLE with bytes from encode_table. handle: the client handle its answer carries
    (1: one call at a time on the connection)."""
    out = [_invocation_head(procedure), _I64.pack(handle), _I16.pack(len(params))]
    for typ, value in params:
        if typ == VOLTTABLE:
            out.append(bytes([VOLTTABLE]) + value)
        elif isinstance(typ, tuple):
            out.append(struct.pack(">bbh", ARRAY, typ[0], len(value)))
            if typ[0] == INTEGER and None not in value:  # NewOrder's item, warehouse and quantity arrays
                out.append(struct.pack(f">{len(value)}i", *value))
            else:
                out.extend(ENCODE[typ[0]](v) for v in value)
        elif typ == INTEGER and value is not None:
            out.append(_TYPED_I32.pack(INTEGER, value))
        else:
            out.append(bytes([typ]) + ENCODE[typ](value))
    body = b"".join(out)
    return _I32.pack(len(body)) + body


_TYPED_I32 = struct.Struct(">bi")


@functools.cache
def _invocation_head(procedure: str) -> bytes:
    """Version 0 and the procedure's name."""
    return b"\x00" + _string(procedure)


def response_handle(body: bytes) -> int:
    """The client handle of a response message (without its length prefix)."""
    return _RESPONSE_HEAD.unpack_from(body, 0)[1]


class _Serializer(voltdbclient.FastSerializer):
    """voltdbclient's connection state, used to authenticate; responses are decoded by
    decode_response. Reads TIMESTAMP as naive UTC (the stock one uses local time) for
    the responses decode_response hands back to it."""

    def readTimestamp(self):
        raw = self.readInt64()
        return None if raw is None else EPOCH + dt.timedelta(microseconds=raw)

    def readTimestampArray(self):
        return tuple(None if raw is None else EPOCH + dt.timedelta(microseconds=raw) for raw in self.readInt64Array())


# -- decoding ---------------------------------------------------------------------------
# voltdbclient decodes a DECIMAL byte by byte and every value through several calls: that was
# 40 % of a client's CPU in a VoltDB run (py-spy), more than encoding, the workload and the
# executor together. decode_response reads the same responses with one struct per row.

SMALLINT = 4
_RESPONSE_HEAD = struct.Struct(">bqBb")  # version, client handle, present fields, status
_ROW_CODES = {TINYINT: "b", SMALLINT: "h", INTEGER: "i", BIGINT: "q", FLOAT: "d", TIMESTAMP: "q", DECIMAL: "16s"}
_NULL_SENTINELS = {TINYINT: -128, SMALLINT: -(2**15), INTEGER: NULL_INTEGER, BIGINT: NULL_BIGINT}
_NULL_DECIMAL_BYTES = NULL_DECIMAL.to_bytes(16, "big", signed=True)


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    type: int


class Table:
    """A result table. Its rows are decoded when first read: a transaction's answer holds
    tables the driver never reads (NewOrder's order lines, clause 2.4.3.3's terminal output,
    which the runner does not display; py-tpcc does not either)."""

    __slots__ = ("columns", "_body", "_at", "_rows", "_tuples")

    def __init__(self, columns: tuple[Column, ...], tuples: list[list[Any]] | None = None) -> None:
        self.columns = columns
        self._tuples = tuples
        self._body, self._at, self._rows = b"", 0, 0

    @classmethod
    def undecoded(cls, columns: tuple[Column, ...], body: bytes, at: int, rows: int) -> Table:
        table = cls(columns)
        table._body, table._at, table._rows = body, at, rows
        return table

    @property
    def row_count(self) -> int:
        return self._rows if self._tuples is None else len(self._tuples)

    @property
    def tuples(self) -> list[list[Any]]:
        if self._tuples is None:
            self._tuples = _decode_rows(self._body, self._at, self._rows, tuple(c.type for c in self.columns))
            self._body = b""
        return self._tuples


@dataclass(frozen=True, slots=True)
class Response:
    """A procedure's answer (org.voltdb.ClientResponseImpl), the fields the driver reads."""

    status: int
    statusString: str | None  # noqa: N815 - voltdbclient's names, which callers read
    appStatus: int | None  # noqa: N815
    tables: list[Table]


class UndecodableColumn(ValueError):
    """A column type decode_response does not read (geography, date): voltdbclient does."""


def _decimal_value(raw: bytes) -> Decimal | None:
    if raw == _NULL_DECIMAL_BYTES:
        return None
    return Decimal(int.from_bytes(raw, "big", signed=True)).scaleb(-DECIMAL_SCALE)


def _timestamp_value(raw: int) -> dt.datetime | None:
    return None if raw == NULL_BIGINT else EPOCH + dt.timedelta(microseconds=raw)


def _float_value(raw: float) -> float | None:
    return None if abs(raw - NULL_FLOAT) < 1e307 else raw


def _string_at(body: bytes, off: int, typ: int) -> tuple[Any, int]:
    (length,) = _I32.unpack_from(body, off)
    off += 4
    if length < 0:
        return None, off
    raw = body[off : off + length]
    return (raw.decode() if typ == STRING else raw), off + length


def _read_table(body: bytes, off: int) -> tuple[Table, int]:
    size, header = struct.unpack_from(">ii", body, off)
    end = off + 4 + size
    columns_end = off + 8 + header
    (rows,) = _I32.unpack_from(body, columns_end)
    return Table.undecoded(_columns(body[off + 8 : columns_end]), body, columns_end + 4, rows), end


@functools.lru_cache(maxsize=256)
def _columns(header: bytes) -> tuple[Column, ...]:
    """A table header's columns (status byte, count, types, names); a procedure's tables
    have the same header on every call, so each is read once."""
    (count,) = _I16.unpack_from(header, 1)
    types = list(header[3 : 3 + count])
    if any(t not in _ROW_CODES and t not in (STRING, VARBINARY) for t in types):
        raise UndecodableColumn(f"column types {types}")
    off, columns = 3 + count, []
    for typ in types:
        name, off = _string_at(header, off, STRING)
        columns.append(Column(name, typ))
    return tuple(columns)


@functools.cache
def _row_layout(types: tuple[int, ...]) -> tuple[list[Any], list[tuple[int, Any]], list[tuple[int, int]]]:
    """How a row of these column types is read: its segments (a struct for each run of
    fixed-width columns, or a STRING/VARBINARY type), the columns whose value needs
    converting (DECIMAL, TIMESTAMP, FLOAT) and the integer columns with their NULL."""
    segments: list[Any] = []
    codes = ""
    for typ in types:
        if typ in _ROW_CODES:
            codes += _ROW_CODES[typ]
            continue
        if codes:
            segments.append(struct.Struct(">" + codes))
            codes = ""
        segments.append(typ)
    if codes:
        segments.append(struct.Struct(">" + codes))
    converted = {DECIMAL: _decimal_value, TIMESTAMP: _timestamp_value, FLOAT: _float_value}
    conversions = [(i, converted[t]) for i, t in enumerate(types) if t in converted]
    nulls = [(i, _NULL_SENTINELS[t]) for i, t in enumerate(types) if t in _NULL_SENTINELS]
    return segments, conversions, nulls


def _decode_rows(body: bytes, off: int, rows: int, types: tuple[int, ...]) -> list[list[Any]]:
    if _variable_only(types):
        return _decode_variable_rows(body, off, rows, types)
    segments, conversions, nulls = _row_layout(types)
    tuples = []
    for _ in range(rows):
        off += 4  # the row's size
        values: list[Any] = []
        for segment in segments:
            if type(segment) is int:
                value, off = _string_at(body, off, segment)
                values.append(value)
            else:
                values += segment.unpack_from(body, off)
                off += segment.size
        for i, convert in conversions:
            values[i] = convert(values[i])
        for i, null in nulls:
            if values[i] == null:
                values[i] = None
        tuples.append(values)
    return tuples


@functools.cache
def _variable_only(types: tuple[int, ...]) -> bool:
    return all(typ in (STRING, VARBINARY) for typ in types)


def _decode_variable_rows(body: bytes, off: int, rows: int, types: tuple[int, ...]) -> list[list[Any]]:
    """_decode_rows of rows of STRING and VARBINARY columns only (YCSB's fields and values): one
    loop, _string_at inlined (a YCSB read's ten rows: 7.8 instead of 10.9 us)."""
    unpack = _I32.unpack_from
    tuples = []
    for _ in range(rows):
        off += 4  # the row's size
        values: list[Any] = []
        for typ in types:
            (length,) = unpack(body, off)
            off += 4
            if length < 0:
                values.append(None)
                continue
            raw = body[off : off + length]
            off += length
            values.append(raw.decode() if typ == STRING else raw)
        tuples.append(values)
    return tuples


def decode_response(body: bytes) -> Response:
    """One response message (without its length prefix), as voltdbclient.VoltResponse
    reads it: status, status string, application status and the result tables."""
    _, _, present, status = _RESPONSE_HEAD.unpack_from(body, 0)
    off = _RESPONSE_HEAD.size
    status_string = None
    if present & 0x20:
        status_string, off = _string_at(body, off, STRING)
    app_status: int | None = struct.unpack_from(">b", body, off)[0]
    if app_status == -128:  # unset (voltdbclient reads the NULL TINYINT as None too)
        app_status = None
    off += 1
    if present & 0x80:  # the application status string
        _, off = _string_at(body, off, STRING)
    off += 4  # round-trip time
    if present & 0x40:  # a serialized exception (VoltDB 10 sends none to clients): its length, then itself
        off += 4 + _I32.unpack_from(body, off)[0]
    (count,) = _I16.unpack_from(body, off)
    off += 2
    tables = []
    for _ in range(count):
        table, off = _read_table(body, off)
        tables.append(table)
    return Response(status, status_string, app_status, tables)


def _decode(conn: _Serializer, body: bytes) -> Response:
    try:
        return decode_response(body)
    except UndecodableColumn:  # system procedures' geography or date columns
        stock = voltdbclient.VoltResponse._from_body(conn, body)
        tables = [Table(tuple(Column(c.name, c.type) for c in t.columns), t.tuples) for t in stock.tables or []]
        return Response(stock.status, stock.statusString, stock.appStatus, tables)


def _where(endpoint: tuple[str, int]) -> str:
    host, port = endpoint
    return f"{host}:{port}"


def _recv_message(sock: socket.socket) -> bytes:
    """One response message, without its length prefix. One client sends one invocation and
    waits for its answer, so nothing follows the message: a small answer takes one recv."""
    data = sock.recv(1 << 14)
    while len(data) < 4:
        data += _recv_some(sock, 4 - len(data))
    (length,) = _I32.unpack_from(data, 0)
    if len(data) - 4 > length:
        raise ConnectionError(f"{len(data) - 4 - length} bytes after a {length}-byte response")
    left = length + 4 - len(data)
    if not left:
        return data[4:]
    chunks = [data[4:]]
    while left:
        chunk = _recv_some(sock, min(left, 1 << 20))
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _kernel_timeout(sock: socket.socket, option: int, seconds: float) -> None:
    """SO_SNDTIMEO or SO_RCVTIMEO (a struct timeval; 0 would mean none)."""
    whole = int(seconds)
    sock.setsockopt(socket.SOL_SOCKET, option, struct.pack("ll", whole, max(1, int((seconds - whole) * 1e6))))


def _recv_some(sock: socket.socket, n: int) -> bytes:
    chunk = sock.recv(n)
    if not chunk:
        raise ConnectionError("connection closed by the server")
    return chunk


# -- the schema -------------------------------------------------------------------------


def ddl_statements(layout: str = "warehouse") -> list[str]:
    """tpcc.sql's statements of the partitioning layout (one of LAYOUTS), comments removed: a
    statement after a line "-- layout: X [Y ...]" belongs to the layouts named there only."""
    if layout not in LAYOUTS:
        raise ValueError(f"unknown VoltDB partitioning layout {layout!r} (known: {', '.join(LAYOUTS)})")
    text = resources.files("tpcc_runner").joinpath("voltdb/tpcc.sql").read_text()
    statements, lines = [], []
    only: list[str] | None = None
    for line in text.splitlines():
        tag = re.fullmatch(r"\s*-- layout: (\w+(?: \w+)*)\s*", line)
        if tag:
            only = tag.group(1).split()
            unknown = set(only) - set(LAYOUTS)
            if unknown:
                raise ValueError(f"tpcc.sql: unknown layout(s) {sorted(unknown)} in {line.strip()!r}")
        elif not line.lstrip().startswith("--"):
            lines.append(line)
            if line.rstrip().endswith(";"):
                if only is None or layout in only:
                    statements.append("\n".join(lines).strip())
                lines, only = [], None
    return statements


def ddl_columns() -> dict[str, list[tuple[str, int]]]:
    """Column names and wire types of each CREATE TABLE in tpcc.sql (the same in both layouts)."""
    types = {"INTEGER": INTEGER, "FLOAT": FLOAT, "DECIMAL": DECIMAL, "TIMESTAMP": TIMESTAMP, "VARCHAR": STRING}
    tables = {}
    for stmt in ddl_statements():
        m = re.match(r"CREATE TABLE (\w+) \((.*)\);$", stmt, re.S)
        if m:
            tables[m.group(1)] = [
                (c, types[t]) for c, t in re.findall(r"(\w+) (INTEGER|FLOAT|DECIMAL|TIMESTAMP|VARCHAR)\b", m.group(2))
            ]
    return tables


def district_key(w_id: int, d_id: int) -> int:
    """The district-keyed tables' *_wd value: one per district, as D_ID is 1..10."""
    return w_id * DISTRICTS + d_id


def with_district_keys(table: str, rows: list[tuple]) -> list[tuple]:
    """Rows of a district-keyed table (schema.TABLES columns) with their *_wd value appended."""
    _, w_column, d_column = DISTRICT_KEYS[table]
    w, d = TABLES[table].index(w_column), TABLES[table].index(d_column)
    return [(*row, district_key(row[w], row[d])) for row in rows]


def _object_of(stmt: str) -> tuple[str, str]:
    """("table"|"procedure", lower-case name) a DDL statement creates or belongs to."""
    m = (
        re.match(r"CREATE TABLE (\w+)", stmt)
        or re.match(r"PARTITION TABLE (\w+)", stmt)
        or re.match(r"CREATE INDEX \w+ ON (\w+)", stmt)
    )
    if m:
        return "table", m.group(1).lower()
    m = re.search(r"CREATE PROCEDURE .*FROM CLASS [\w.]+\.(\w+);$", stmt, re.S)
    if m:
        return "procedure", m.group(1).lower()
    raise ValueError(f"unexpected statement in tpcc.sql: {stmt[:60]}")


def _parse_endpoint(text: str) -> tuple[str, int]:
    m = re.fullmatch(r"\[([^\]]+)\](?::(\d+))?|([^:\[\]]+)(?::(\d+))?", text.strip())
    if not m:
        raise ValueError(f"bad VoltDB endpoint {text!r} (want host or host:port)")
    host = m.group(1) or m.group(3)
    port = int(m.group(2) or m.group(4) or DEFAULT_PORT)
    if not 0 < port < 65536:
        raise ValueError(f"bad VoltDB endpoint {text!r}: port out of range")
    return host, port


# ConsistencyRead.java's reads, in its order: what consistency_rows takes apart.
CONSISTENCY_READS = (
    "warehouse",
    "district",
    "paid_here",
    "paid_by_customer",
    "orders",
    "new_order",
    "order_line",
    "customer",
)


def consistency_rows(w: int, tables: list[list[list]]) -> WarehouseData:
    """ConsistencyRead's rows of warehouse w (every read of CONSISTENCY_READS) as WarehouseData."""
    rows = dict(zip(CONSISTENCY_READS, tables, strict=True))
    wh = WarehouseData(w)
    for (ytd,) in rows["warehouse"]:
        wh.ytd = cents_of(ytd)
    for d, ytd, next_o_id in rows["district"]:
        wh.district(d).row = DistrictRow(cents_of(ytd), next_o_id or 0)
    for d, paid in rows["paid_here"]:
        wh.district(d).paid_here = cents_of(paid)
    for d, c, paid in rows["paid_by_customer"]:
        wh.district(d).pay(c, cents_of(paid))
    for d, o, c, carrier, ol_cnt in rows["orders"]:
        wh.district(d).orders[o] = OrderRow(c, carrier, ol_cnt or 0)
    for d, o in rows["new_order"]:
        wh.district(d).new_orders.add(o)
    for d, o, n, undelivered, amount in rows["order_line"]:
        wh.district(d).order_lines(o).add(n, undelivered, cents_of(amount))
    for d, c, balance, ytd_payment in rows["customer"]:
        wh.district(d).customers[c] = CustomerRow(cents_of(balance), cents_of(ytd_payment))
    return wh


OPTIONS = (
    options.Option(
        "call_timeout", 60.0, options.seconds, "a call's outcome is unknown after this (the client stops waiting)"
    ),
    options.Option("load_timeout", 600.0, options.seconds, "bound on one load unit"),
    options.Option(
        "procs_jar", None, options.text, "the stored procedures jar to load (default: the one packaged with the runner)"
    ),
    options.Option(
        "delivery",
        "per-warehouse",
        options.choice("per-warehouse", "per-district"),
        "per-warehouse: a Delivery is one transaction for all ten districts; per-district: "
        "ten single-partition transactions (clause 2.7.4.1); one Delivery is counted either way",
    ),
    options.Option(
        "partitioning",
        "warehouse",
        options.choice(*LAYOUTS),
        "warehouse: every table but ITEM on its warehouse id; district: the district-keyed "
        "tables on W_ID*10+D_ID; d_id: the VoltDB study's District ID strategy, WAREHOUSE and "
        "DISTRICT replicated, the district tables on D_ID, ITEM and STOCK on the item id; "
        "fixed at load (schema_variant)",
    ),
)
# LoadMeta.schema_variant of each layout: a run whose partitioning differs from the load's is
# refused (loader.check_loaded), as a load onto the other layout without --reset.
SCHEMA_VARIANTS = {
    "warehouse": SCHEMA_VARIANT,
    "district": SCHEMA_VARIANT + ", partitioned by district",
    "d_id": SCHEMA_VARIANT + ", partitioned on D_ID",
}


@dataclass
class DeliveryProgress:
    """A per-district Delivery under way: the districts already delivered (each its own committed
    transaction). The executor retries a Delivery with the same params after a retryable error;
    the retry goes on from next_district, so no district's order is delivered twice."""

    params: DeliveryInput
    next_district: int = 1
    delivered: list[tuple[int, int]] = field(default_factory=list)


def _first_line(text: str | None) -> str:
    return (text or "").strip().splitlines()[0] if (text or "").strip() else "no message"


def new_order_params(p: NewOrderInput) -> list[tuple[Any, Any]]:
    """The parameters of NewOrder (and NewOrderMP, and the ACID tests' held NewOrder): the
    order, then its lines as three arrays (a NewOrder has 5 to 15 lines)."""
    i_ids, supply, quantities = zip(*p.items)
    return [
        (INTEGER, p.w_id),
        (INTEGER, p.d_id),
        (INTEGER, p.c_id),
        (TIMESTAMP, p.o_entry_d),
        ((INTEGER,), i_ids),
        ((INTEGER,), supply),
        ((INTEGER,), quantities),
    ]


def checked(procedure: str, response: Response, writes: bool) -> Response:
    """The response of a successful call; every other status raised as the driver error of
    base.py it means (writes: whether the call writes, so a lost answer is of unknown outcome)."""
    status = response.status
    if status == SUCCESS:
        return response
    text = f"{procedure}: {_first_line(response.statusString)} (status {status})"
    if status == USER_ABORT and response.appStatus == APP_STATUS_INVALID_ITEM:
        raise UserAbort(text)
    if status == USER_ABORT and response.appStatus == APP_STATUS_MISSING_ROW:
        raise NotLoaded(text)
    if status in (RESPONSE_UNKNOWN, CONNECTION_LOST, CONNECTION_TIMEOUT):
        raise (UnknownOutcome if writes else RetryableError)(text)
    if status in (SERVER_UNAVAILABLE, TXN_RESTART, TXN_MISPARTITIONED, TXN_MISROUTED):
        raise RetryableError(text)
    if status == UNEXPECTED_FAILURE and NOT_PERMITTED.search(text):
        raise NotPermitted(text)
    raise DriverError(text)


class VoltDBDriver(Driver):
    name = "voltdb"
    option_table = OPTIONS

    def __init__(self, connection: ConnectionOptions):
        super().__init__(connection)
        opt = self.parse_options()
        self.endpoints = [_parse_endpoint(e) for e in (connection.endpoints or ["127.0.0.1"])]
        self.call_timeout, self.load_timeout = opt["call_timeout"], opt["load_timeout"]
        self.procs_jar, self.delivery_mode = opt["procs_jar"], opt["delivery"]
        self.partitioning = opt["partitioning"]
        self._delivery_progress: DeliveryProgress | None = None
        self._conn: _Serializer | None = None
        self._endpoint: tuple[str, int] | None = None
        self._timeouts: tuple[float, float] | None = None  # the connection's (send, receive) kernel timeouts
        # Clients start on different nodes so a cluster's nodes share the work.
        self._next = random.randrange(len(self.endpoints))
        self._columns = ddl_columns()

    # -- connection ---------------------------------------------------------------------
    def connect(self) -> None:
        deadline = time.monotonic() + self.options.connect_timeout
        last = "no endpoint tried"
        while True:
            for _ in range(len(self.endpoints)):
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                try:
                    self._open(self.endpoints[self._next], min(left, 10.0))
                    return
                except (OSError, RuntimeError, struct.error) as e:
                    host, port = self.endpoints[self._next]
                    last = f"{host}:{port}: {e}"
                    self._next = (self._next + 1) % len(self.endpoints)
            if time.monotonic() + 0.5 >= deadline:
                raise Unreachable(
                    f"VoltDB not reachable within {self.options.connect_timeout:g} s "
                    f"({len(self.endpoints)} endpoint(s); last error {last})"
                )
            time.sleep(0.5)

    def _open(self, endpoint: tuple[str, int], timeout: float) -> None:
        sock = socket.create_connection(endpoint, timeout=timeout)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn = _Serializer()
            conn.socket = sock
            conn.authenticate(self.options.username or "", self.options.password or "")
            sock.settimeout(None)  # from here on it blocks, with kernel timeouts: set_timeouts
        except BaseException:
            sock.close()
            raise
        self._conn, self._endpoint, self._timeouts = conn, endpoint, None
        self.set_timeouts(self.call_timeout, self.call_timeout)

    def set_timeouts(self, send: float, receive: float) -> None:
        """The connection's socket blocks with kernel timeouts (SO_SNDTIMEO, SO_RCVTIMEO), set
        when they change. With a Python socket timeout every send and recv is a poll and then
        the call, each releasing and taking the interpreter lock: 3-4 us more CPU a call
        (measured with a TPC-C run's calls). A call that times out raises BlockingIOError."""
        assert self._conn is not None, "connected"
        sock, had = self._conn.socket, self._timeouts
        if had is None or had[0] != send:
            _kernel_timeout(sock, socket.SO_SNDTIMEO, send)
        if had is None or had[1] != receive:
            _kernel_timeout(sock, socket.SO_RCVTIMEO, receive)
        self._timeouts = (send, receive)

    def close(self) -> None:
        if self._conn is not None:
            try:
                self._conn.socket.close()
            finally:
                self._conn = None

    def _reconnect(self) -> bool:
        """After a lost connection: try every endpoint once, starting with the next one."""
        self.close()
        for _ in range(len(self.endpoints)):
            self._next = (self._next + 1) % len(self.endpoints)
            try:
                self._open(self.endpoints[self._next], min(self.options.connect_timeout, 5.0))
                return True
            except (OSError, RuntimeError, struct.error):
                continue
        return False

    def _call(
        self, procedure: str, params: list[tuple[Any, Any]], *, writes: bool, timeout: float | None = None
    ) -> Response:
        """Invoke a procedure; map every failure onto the driver errors of base.py."""
        message = encode_invocation(procedure, params)
        if self._conn is None and not self._reconnect():
            raise ConnectionLost(f"{procedure}: {UNREACHABLE}")
        conn, endpoint = self._conn, self._endpoint
        assert conn is not None and endpoint is not None, "connected above"
        sock = conn.socket
        receive = timeout or self.call_timeout
        try:
            self.set_timeouts(self.call_timeout, receive)
            sock.sendall(message)
        except OSError as e:
            self._reconnect()
            raise ConnectionLost(f"{procedure}: connection to {_where(endpoint)} lost before the call: {e}") from None
        try:
            response = _decode(conn, _recv_message(sock))
        except OSError as e:
            why = f"none within {receive:g} s" if isinstance(e, BlockingIOError) else e or type(e).__name__
            error = self.unanswered(procedure, writes, why)
            self._reconnect()
            raise error from None
        return checked(procedure, response, writes)

    def unanswered(self, procedure: str, writes: bool, why: object) -> DriverError:
        """The error of a call sent on this connection that got no answer (the node died, the
        connection broke, its time was up): it may have committed, so a write's outcome is
        unknown."""
        where = _where(self._endpoint) if self._endpoint else "VoltDB"
        return (UnknownOutcome if writes else ConnectionLost)(f"{procedure}: no answer from {where}: {why}")

    def _sql(
        self, sql: str, *params: tuple[int, Any], writes: bool = False, timeout: float | None = None
    ) -> list[list]:
        response = self._call("@AdHoc", [(STRING, sql), *params], writes=writes, timeout=timeout)
        return response.tables[0].tuples if response.tables else []

    def _catalog(self, selector: str, column: int) -> set[str]:
        response = self._call("@SystemCatalog", [(STRING, selector)], writes=False)
        return {row[column].lower() for row in response.tables[0].tuples}

    def describe(self) -> dict[str, Any]:
        info: dict[str, Any] = {
            "db": self.name,
            "schema_variant": SCHEMA_VARIANTS[self.partitioning],
            "delivery": self.delivery_mode,
            "partitioning": self.partitioning,
            "endpoints": [f"{h}:{p}" for h, p in self.endpoints],
        }
        overview = self._call("@SystemInformation", [(STRING, "OVERVIEW")], writes=False)
        rows = overview.tables[0].tuples
        info["server_version"] = next((v for _, k, v in rows if k == "VERSION"), None)
        info["hosts"] = len({host for host, _, _ in rows})
        deployment = self._call("@SystemInformation", [(STRING, "DEPLOYMENT")], writes=False)
        props = {k: v for k, v in deployment.tables[0].tuples}
        info["k_factor"] = int(props["kfactor"])
        info["sites_per_host"] = int(props["sitesperhost"])
        info["host_count"] = int(props["hostcount"])
        return info

    # -- what the server counts ----------------------------------------------------------
    def _rows(self, procedure: str, params: list[tuple[Any, Any]]) -> list[dict[str, Any]]:
        table = self._call(procedure, params, writes=False).tables[0]
        names = [c.name.upper() for c in table.columns]
        return [dict(zip(names, row)) for row in table.tuples]

    def _statistics(self, selector: str) -> list[dict[str, Any]]:
        """@Statistics SELECTOR 0 (cumulative since the server started), rows by column name."""
        return self._rows("@Statistics", [(STRING, selector), (INTEGER, 0)])

    def _replicated_tables(self) -> set[str]:
        """Tables without a partition column (@SystemCatalog TABLES names it in REMARKS)."""
        return {
            str(r["TABLE_NAME"]).upper()
            for r in self._rows("@SystemCatalog", [(STRING, "TABLES")])
            if "partitionColumn" not in str(r.get("REMARKS") or "")
        }

    def server_counters(self) -> ServerCounters:
        """@Statistics PROCEDUREPROFILE: invocations, aborts (VoltAbortException: the TPC-C
        rollback) and failures per procedure, summed over the partitions, each write counted
        once however many replicas ran it (k-safety)."""
        try:
            rows = self._statistics("PROCEDUREPROFILE")
        except DriverError as e:
            return ServerCounters.not_available(f"voltdb: @Statistics PROCEDUREPROFILE: {e}")
        taken_at = time.time()
        counters: dict[str, int] = defaultdict(int)
        for row in rows:
            name = str(row["PROCEDURE"]).rsplit(".", 1)[-1]
            for column in ("INVOCATIONS", "ABORTS", "FAILURES"):
                counters[f"procedure.{name}.{column.lower()}"] += int(row[column])
        groups = []
        for txn, procedures in TRANSACTION_PROCEDURES.items():
            invoked, aborts, failures = (
                [counters.get(f"procedure.{p}.{c}", 0) // CALLS_PER_TRANSACTION.get(p, 1) for p in procedures]
                for c in ("invocations", "aborts", "failures")
            )
            groups.append(
                CounterGroup(
                    f"@Statistics PROCEDUREPROFILE {'+'.join(procedures)}",
                    (txn,),
                    committed=sum(invoked) - sum(aborts) - sum(failures),
                    aborted=sum(aborts),
                )
            )
        return ServerCounters(taken_at, tuple(groups), dict(counters))

    def database_size(self) -> DatabaseSize:
        """@Statistics TABLE and INDEX (one copy of each partition's rows: replicas not counted
        again; a replicated table, which every partition reports, once) and MEMORY (resident
        memory of every host, replicas included)."""
        try:
            tables, indexes = self._statistics("TABLE"), self._statistics("INDEX")
            memory, replicated = self._statistics("MEMORY"), self._replicated_tables()
        except DriverError as e:
            return DatabaseSize(unavailable=f"voltdb: @Statistics: {e}")

        def copy(r: dict[str, Any]) -> Any:  # which copy of the rows a stats row describes
            return "replicated" if str(r["TABLE_NAME"]).upper() in replicated else r["PARTITION_ID"]

        per_partition = {(copy(r), r["TABLE_NAME"]): r for r in tables}
        per_index = {(copy(r), r["TABLE_NAME"], r["INDEX_NAME"]): r for r in indexes}
        data = sum(int(r["TUPLE_DATA_MEMORY"]) + int(r["STRING_DATA_MEMORY"]) for r in per_partition.values())
        details = {
            f"memory.{c.lower()}_bytes": KIB * sum(int(r[c]) for r in memory)
            for c in ("RSS", "JAVAUSED", "TUPLEDATA", "TUPLEALLOCATED", "INDEXMEMORY", "STRINGMEMORY")
        }
        details["table.tuple_allocated_memory_bytes"] = KIB * sum(
            int(r["TUPLE_ALLOCATED_MEMORY"]) for r in per_partition.values()
        )
        details["table.tuple_count"] = sum(int(r["TUPLE_COUNT"]) for r in per_partition.values())
        return DatabaseSize(
            data_bytes=KIB * data,
            index_bytes=KIB * sum(int(r["MEMORY_ESTIMATE"]) for r in per_index.values()),
            memory_bytes=details["memory.rss_bytes"],
            details=details,
        )

    # -- schema and load ----------------------------------------------------------------
    def _jar(self) -> bytes:
        path = (
            Path(self.procs_jar)
            if self.procs_jar
            else Path(str(resources.files("tpcc_runner").joinpath("voltdb/tpcc-procs.jar")))
        )
        if not path.is_file():
            raise DriverError(
                f"VoltDB stored procedures jar {path} is missing: "
                "build it with `hack/voltdb.sh procs` before `pip install "
                "./runner-image`, or give --driver-opt procs_jar=PATH"
            )
        return path.read_bytes()

    def create_schema(self, reset: bool) -> None:
        jar = self._jar()
        tables = self._catalog("TABLES", 2)
        procedures = self._catalog("PROCEDURES", 2)
        ours = [*TABLES, *BOOKKEEPING_TABLES]
        if not reset and "tpcc_meta" in tables:
            meta = self.read_meta()
            if meta is not None and meta.schema_variant != SCHEMA_VARIANTS[self.partitioning]:
                # loaded with another layout: its tables are partitioned otherwise, and this
                # layout's procedures may not even plan against them (a single-partition Payment
                # writing the replicated DISTRICT of the d_id layout): create nothing, the loader
                # refuses the load (its schema_variant differs) and names --reset
                return
        if reset:
            drops = [f"DROP PROCEDURE {p};" for p in (*PROCEDURES, *RETIRED_PROCEDURES) if p.lower() in procedures]
            drops += [f"DROP TABLE {t};" for t in ours if t in tables]
            if drops:
                self._sql("\n".join(drops), writes=True, timeout=self.load_timeout)
            tables, procedures = set(), set()
        self._call("@UpdateClasses", [(VARBINARY, jar), (STRING, "")], writes=True, timeout=self.load_timeout)
        missing = []
        for stmt in ddl_statements(self.partitioning):
            kind, name = _object_of(stmt)
            if name not in (tables if kind == "table" else procedures):
                missing.append(stmt)
        if missing:
            self._sql("\n".join(missing), writes=True, timeout=self.load_timeout)

    def read_meta(self) -> LoadMeta | None:
        if "tpcc_meta" not in self._catalog("TABLES", 2):
            return None
        rows = self._sql("SELECT meta_json FROM tpcc_meta WHERE meta_key = 'load';")
        return LoadMeta.from_dict(json.loads(rows[0][0])) if rows else None

    def write_meta(self, meta: LoadMeta) -> None:
        self._sql(
            "UPSERT INTO tpcc_meta (meta_key, meta_json) VALUES ('load', ?);",
            (STRING, json.dumps(meta.to_dict())),
            writes=True,
        )

    def done_units(self) -> set[str]:
        if "tpcc_load_unit" not in self._catalog("TABLES", 2):
            return set()
        return {row[0] for row in self._sql("SELECT unit_key FROM tpcc_load_unit;")}

    def _table(self, name: str, tables: dict[str, list[tuple]]) -> tuple[int, bytes]:
        rows = tables.get(name, [])
        if name in DISTRICT_KEYS:
            rows = with_district_keys(name, rows)
        return VOLTTABLE, encode_table(self._columns[name], rows)

    def load_unit(self, key: str, tables: dict[str, list[tuple]]) -> None:
        kind, *parts = key.split(":")
        try:
            ids = [int(i) for i in parts]
        except ValueError:
            raise ValueError(f"bad load unit key {key!r}") from None
        params: list[tuple[int, Any]]  # (VoltDB type, value) of each procedure parameter
        if kind == "item" and len(ids) == 1:
            self._load_items(key, tables.get("item", []))
            return
        if kind == "warehouse" and len(ids) == 1:
            proc, params = (
                "LoadWarehouse",
                [(INTEGER, ids[0]), (STRING, key), self._table("warehouse", tables), self._table("district", tables)],
            )
        elif kind == "stock" and len(ids) == 2:
            proc, params = "LoadStock", [(INTEGER, ids[0]), (STRING, key), self._table("stock", tables)]
        elif kind == "district" and len(ids) == 2:
            proc, params = (
                "LoadDistrict",
                [
                    (INTEGER, ids[0]),
                    (INTEGER, ids[1]),
                    (STRING, key),
                    *(self._table(t, tables) for t in DISTRICT_TABLES),
                ],
            )
        else:
            raise ValueError(f"bad load unit key {key!r}")
        self._call(proc, params, writes=True, timeout=self.load_timeout)

    def _load_items(self, key: str, rows: list[tuple]) -> None:
        """An ITEM unit (replicated: a procedure writing it runs multi-partition and inserts
        row by row, 100 times slower) in three transactions: delete the unit's item range (rows
        an attempt interrupted before its marker left), load the rows whole with
        @LoadMultipartitionTable (one transaction), mark the unit. The marker comes last, so a
        marked unit holds all its rows and an unmarked one is loaded again from the delete.
        Partitioned on D_ID, ITEM is partitioned on i_id, which @LoadMultipartitionTable refuses
        ("no longer supports loading partitioned tables"): LoadItemRows, one multi-partition
        transaction with the marker, row by row."""
        table = encode_table(self._columns["item"], rows)  # a bad row fails before any write
        if self.partitioning == "d_id":
            self._call("LoadItemRows", [(STRING, key), (VOLTTABLE, table)], writes=True, timeout=self.load_timeout)
            return
        if rows:
            ids = [row[0] for row in rows]
            first, last = (INTEGER, min(ids)), (INTEGER, max(ids))
            self._sql("DELETE FROM item WHERE i_id BETWEEN ? AND ?;", first, last, writes=True)
            self._call(
                "@LoadMultipartitionTable",
                [(STRING, "ITEM"), (TINYINT, 0), (VOLTTABLE, table)],
                writes=True,
                timeout=self.load_timeout,
            )
        self._sql("UPSERT INTO tpcc_load_unit (w_id, unit_key) VALUES (0, ?);", (STRING, key), writes=True)

    # -- the five transactions ----------------------------------------------------------
    def new_order(self, p: NewOrderInput) -> NewOrderOutput:
        # partitioned by district, WAREHOUSE and STOCK are never in the district's partition;
        # on D_ID, D_NEXT_O_ID is a row of the replicated DISTRICT (written only by a
        # multi-partition transaction) and STOCK and ITEM are partitioned on the item id
        multi = p.remote or self.partitioning != "warehouse"
        r = self._call("NewOrderMP" if multi else "NewOrder", new_order_params(p), writes=True)
        o_id, total = r.tables[0].tuples[0][:2]
        return NewOrderOutput(o_id, total)

    def payment(self, p: PaymentInput) -> PaymentOutput:
        # by district, W_YTD is in the warehouse's partition; on D_ID, W_YTD and D_YTD are rows of
        # the replicated WAREHOUSE and DISTRICT ("guaranteed to be a multi partitioned transaction")
        multi = p.remote or self.partitioning != "warehouse"
        r = self._call(
            "PaymentMP" if multi else "Payment",
            [
                (INTEGER, p.w_id),
                (INTEGER, p.d_id),
                (INTEGER, p.c_w_id),
                (INTEGER, p.c_d_id),
                (INTEGER, p.c_id or 0),
                (STRING, p.c_last),
                (DECIMAL, p.h_amount),
                (TIMESTAMP, p.h_date),
            ],
            writes=True,
        )
        c = r.tables[0].tuples[0]  # the customer after the payment, PaymentBase.CUSTOMER_COLUMNS
        return PaymentOutput(c[PAYMENT_C_ID], float(c[PAYMENT_C_BALANCE]), c[PAYMENT_C_CREDIT])

    def order_status(self, p: OrderStatusInput) -> OrderStatusOutput:
        r = self._call(
            "OrderStatus",
            [
                (INTEGER, self._partition_key(p.w_id, p.d_id)),
                (INTEGER, p.w_id),
                (INTEGER, p.d_id),
                (INTEGER, p.c_id or 0),
                (STRING, p.c_last),
            ],
            writes=False,
        )
        customer, order, lines = r.tables
        c = customer.tuples[0]
        c_id, c_balance = c[ORDER_STATUS_C_ID], float(c[ORDER_STATUS_C_BALANCE])
        if not order.tuples:
            return OrderStatusOutput(c_id, c_balance, None, None, 0)
        o_id, _, o_carrier_id = order.tuples[0]  # o_id, o_entry_d, o_carrier_id
        return OrderStatusOutput(c_id, c_balance, o_id, o_carrier_id, lines.row_count)  # counted, not decoded

    def delivery(self, p: DeliveryInput) -> DeliveryOutput:
        if self.delivery_mode == "per-district":
            delivered = self._deliver_per_district(p)
        else:
            r = self._call(
                "Delivery",
                [(INTEGER, p.w_id), (INTEGER, p.o_carrier_id), (TIMESTAMP, p.ol_delivery_d)],
                writes=True,
            )
            delivered = [(d, o) for d, o in r.tables[0].tuples]
        return DeliveryOutput(tuple(delivered), DISTRICTS - len(delivered))

    def _deliver_per_district(self, p: DeliveryInput) -> list[tuple[int, int]]:
        """The Delivery as ten transactions, districts 1 to 10 in order. A failing district
        raises with the earlier ones committed and kept in _delivery_progress: the executor's
        retry (the same input) resumes at the failed district."""
        progress = self._delivery_progress
        if progress is None or progress.params is not p:
            progress = self._delivery_progress = DeliveryProgress(p)
        while progress.next_district <= DISTRICTS:
            progress.delivered += self.deliver_district(p.w_id, progress.next_district, p.o_carrier_id, p.ol_delivery_d)
            progress.next_district += 1
        self._delivery_progress = None
        return progress.delivered

    def deliver_district(
        self, w_id: int, d_id: int, o_carrier_id: int, ol_delivery_d: dt.datetime
    ) -> list[tuple[int, int]]:
        """One district's part of a Delivery, one transaction: [(d_id, o_id)] or [] (skipped)."""
        r = self._call(
            "DeliveryDistrict",
            [
                (INTEGER, self._partition_key(w_id, d_id)),
                (INTEGER, w_id),
                (INTEGER, d_id),
                (INTEGER, o_carrier_id),
                (TIMESTAMP, ol_delivery_d),
            ],
            writes=True,
        )
        return [(d, o) for d, o in r.tables[0].tuples]

    def _partition_key(self, w_id: int, d_id: int) -> int:
        """The first parameter of OrderStatus and DeliveryDistrict, which tpcc.sql partitions
        them on: the warehouse id, the district key when partitioned by district, the district
        id when partitioned on D_ID (both single-partition in every layout)."""
        if self.partitioning == "district":
            return district_key(w_id, d_id)
        return d_id if self.partitioning == "d_id" else w_id

    def stock_level(self, p: StockLevelInput) -> StockLevelOutput:
        r = self._call("StockLevel", [(INTEGER, p.w_id), (INTEGER, p.d_id), (INTEGER, p.threshold)], writes=False)
        return StockLevelOutput(r.tables[0].tuples[0][0])

    # -- verification -------------------------------------------------------------------
    def stored_orders(self, keys: list[tuple[int, int, int]]) -> dict[tuple[int, int, int], StoredOrder]:
        by_district: dict[tuple[int, int], list[int]] = defaultdict(list)
        for w, d, o in keys:
            by_district[(int(w), int(d))].append(int(o))
        found = {}
        for (w, d), ids in by_district.items():
            for i in range(0, len(ids), 1000):
                found.update(self._orders(w, d, f"o_id IN ({','.join(map(str, ids[i : i + 1000]))})"))
        return found

    def orders_entered_at(self, w_id: int, d_id: int, c_id: int, entry_ms: int) -> list[StoredOrder]:
        return list(
            self._orders(
                w_id, d_id, f"o_c_id = {int(c_id)} AND o_entry_d = TO_TIMESTAMP(MILLIS, {int(entry_ms)})"
            ).values()
        )

    def _orders(self, w: int, d: int, where: str) -> dict[tuple[int, int, int], StoredOrder]:
        """Orders of district (w, d) matching `where` (a condition on ORDERS built from
        integers only), with their lines; both reads in the district's partition."""
        orders = self._sql(
            f"SELECT o_id, o_c_id, o_entry_d, o_ol_cnt FROM orders WHERE o_w_id = ? AND o_d_id = ? AND {where};",
            (INTEGER, w),
            (INTEGER, d),
        )
        if not orders:
            return {}
        ids = ",".join(str(o[0]) for o in orders)
        lines: dict[int, list[tuple[int, int, int]]] = defaultdict(list)
        for o, _, i, s, q in self._sql(
            f"SELECT ol_o_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity FROM order_line "
            f"WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id IN ({ids}) "
            f"ORDER BY ol_o_id, ol_number;",
            (INTEGER, w),
            (INTEGER, d),
        ):
            lines[o].append((i, s, q))
        return {(w, d, o): StoredOrder(c, entry, cnt, tuple(lines[o])) for o, c, entry, cnt in orders}

    def consistency_data(self, w: int, meta: LoadMeta) -> WarehouseData:
        """Warehouse w for consistency.Evaluator: its rows, aggregated per order or customer in
        SQL where that is exact (counts, DECIMAL sums), read by ConsistencyRead in one transaction,
        so the conditions hold in what it returns even while transactions commit."""
        return consistency_rows(w, self.consistency_read(w, 0, len(CONSISTENCY_READS)))

    def consistency_snapshot(self, w: int, meta: LoadMeta) -> WarehouseData:
        return self.consistency_data(w, meta)  # already one transaction

    def consistency_read(self, w: int, first: int, last: int) -> list[list[list]]:
        """ConsistencyRead's reads [first, last) of CONSISTENCY_READS for warehouse w, as rows."""
        response = self._call(
            "ConsistencyRead",
            [(INTEGER, w), (INTEGER, first), (INTEGER, last)],
            writes=False,
            timeout=self.load_timeout,
        )
        return [table.tuples for table in response.tables]
