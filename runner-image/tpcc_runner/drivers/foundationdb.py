"""FoundationDB driver: TPC-C on FoundationDB's ordered key-value store.

Data model (docs/foundationdb.md has the full picture):
- Everything lives under one directory-layer directory (default ("tpcc",)); inside it each
  table is a subspace keyed by its primary key as a tuple, warehouse id first, so one
  warehouse's rows (and one district's) are contiguous and read with one range scan.
- A row's value is the fdb.tuple packing of its non-key columns in schema order;
  timestamps are packed as integer microseconds since the epoch (the tuple layer has no
  datetime type).
- W_YTD and D_YTD are not in the row: they are counters in integer cents, updated by
  Payment with FDB's atomic add, so concurrent Payments of one warehouse do not conflict
  with each other nor with NewOrder (which writes D_NEXT_O_ID in the district row).
- Secondary indexes are key-only subspaces: customer_by_name (w, d, c_last, c_first, c_id)
  and orders_by_customer (w, d, c_id, o_id); new_order itself is keyed (w, d, o_id), so the
  oldest undelivered order of a district is the first key of its range.
- HISTORY has no primary key: it is keyed (h_w_id, h_d_id, uuid4).

Each TPC-C transaction is one FDB transaction, attempted once: the executor retries what
this driver reports as RetryableError. The binding (PyPI `foundationdb`) is imported only
in connect(); the key encoding needs just its pure-Python tuple layer.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import re
import struct
import tempfile
import uuid
from collections.abc import Iterable, Iterator
from typing import Any

from tpcc_contract.server_stats import DatabaseSize, ServerCounters

from ..consistency import CustomerRow, DistrictRow, OrderRow, WarehouseData
from ..durability import StoredOrder
from ..schema import TABLES
from ..transactions import (
    DeliveryInput,
    DeliveryOutput,
    NewOrderInput,
    NewOrderOutput,
    OrderLineInput,
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
    RetryableError,
    UnknownOutcome,
    Unreachable,
    UserAbort,
)

DEFAULT_PORT = 4500
DEFAULT_API_VERSION = 710
DEFAULT_DIRECTORY = "tpcc"
DEFAULT_TXN_TIMEOUT = 10.0  # seconds; FDB itself aborts a transaction older than 5 s
STATUS_KEY = b"\xff\xff/status/json"  # the cluster's status document, readable by any client
OPTIONS = (
    options.Option("api_version", DEFAULT_API_VERSION, options.integer, "the binding's API version"),
    options.Option("directory", DEFAULT_DIRECTORY, options.text, "the directory layer path, '/'-separated"),
    options.Option(
        "txn_timeout",
        DEFAULT_TXN_TIMEOUT,
        options.seconds,
        "client-side bound on a transaction (database option transaction_timeout)",
    ),
    options.Option("cluster_file", None, options.text, "an existing cluster file (else one made from the endpoints)"),
    options.Option("cluster_id", None, options.text, "description:ID of the cluster file made from the endpoints"),
)
LOAD_BATCH_BYTES = 1_000_000  # FDB's limit is 10 MB per transaction; < 1 MB is its advice
SCAN_CHUNK = 10_000  # rows per transaction of a consistency-check scan
LOOKUP_CHUNK = 1_000  # point reads per transaction of existing_orders

TRANSACTION_TIMED_OUT = 1031
LIBFDB_C_MISSING = "FoundationDB client library libfdb_c not found: install foundationdb-clients"

PRIMARY_KEYS: dict[str, tuple[str, ...]] = {
    "warehouse": ("w_id",),
    "district": ("d_w_id", "d_id"),
    "customer": ("c_w_id", "c_d_id", "c_id"),
    "history": ("h_w_id", "h_d_id"),  # + a uuid4: HISTORY has no primary key
    "new_order": ("no_w_id", "no_d_id", "no_o_id"),
    "orders": ("o_w_id", "o_d_id", "o_id"),
    "order_line": ("ol_w_id", "ol_d_id", "ol_o_id", "ol_number"),
    "item": ("i_id",),
    "stock": ("s_w_id", "s_i_id"),
}
# Kept as atomic-add counters in cents, outside the row (see the module docstring).
COUNTERS = {"warehouse": "w_ytd", "district": "d_ytd"}
TIMESTAMPS = frozenset({"c_since", "h_date", "o_entry_d", "ol_delivery_d"})
_EPOCH = dt.datetime(1970, 1, 1)
_MICROSECOND = dt.timedelta(microseconds=1)


def cents(amount: float) -> int:
    return round(amount * 100)


def counter_bytes(amount_cents: int) -> bytes:
    """The 8-byte little-endian integer FDB's atomic add works on."""
    return struct.pack("<q", amount_cents)


def counter_cents(raw: bytes | None) -> int | None:
    return None if raw is None else struct.unpack("<q", raw)[0]


def _to_stored(column: str, value: Any) -> Any:
    if column in TIMESTAMPS and value is not None:
        return (value - _EPOCH) // _MICROSECOND
    return value


def _from_stored(column: str, value: Any) -> Any:
    if column in TIMESTAMPS and value is not None:
        return _EPOCH + value * _MICROSECOND
    return value


class Keyspace:
    """Where each TPC-C row lives under the driver's directory prefix and how it is encoded.
    Pure: uses only the binding's tuple layer, which needs no libfdb_c."""

    # secondary indexes, the YTD counters, the load's metadata and done units
    AUXILIARY = ("customer_by_name", "orders_by_customer", "warehouse_ytd", "district_ytd", "meta")

    def __init__(self, prefix: bytes = b""):
        import fdb.tuple
        from fdb.subspace_impl import Subspace  # what fdb.Subspace names once an API version is set

        self._tuple = fdb.tuple
        root = Subspace(rawPrefix=prefix)
        self.prefix = prefix
        self.sub = {name: root[name] for name in (*TABLES, *self.AUXILIARY)}
        self._key_idx = {t: [TABLES[t].index(c) for c in PRIMARY_KEYS[t]] for t in TABLES}
        self._value_cols = {
            t: [c for c in TABLES[t] if c not in PRIMARY_KEYS[t] and c != COUNTERS.get(t)] for t in TABLES
        }

    # -- keys ----------------------------------------------------------------------------
    def key(self, space: str, *parts: Any) -> bytes:
        return self.sub[space].pack(parts)

    def unpack(self, space: str, key: bytes) -> tuple:
        return self.sub[space].unpack(key)

    def range(self, space: str, *prefix: Any) -> slice:
        """Every key of `space` whose tuple starts with `prefix` (the key `prefix` itself
        included). A prefix of tuple-encoded values is never a prefix of a longer value:
        ("BAR",) does not cover ("BARBAR",)."""
        start = self.sub[space].pack(prefix)
        return slice(start, start + b"\xff")

    def between(self, space: str, first: tuple, last: tuple) -> slice:
        """Keys from tuple `first` up to everything starting with tuple `last`."""
        return slice(self.sub[space].pack(first), self.sub[space].pack(last) + b"\xff")

    def everything(self) -> slice:
        return slice(self.prefix, self.prefix + b"\xff")

    # -- rows ----------------------------------------------------------------------------
    def row_key(self, table: str, row: tuple, suffix: tuple = ()) -> bytes:
        return self.key(table, *(row[i] for i in self._key_idx[table]), *suffix)

    def row_kv(self, table: str, row: tuple, suffix: tuple = ()) -> tuple[bytes, bytes]:
        """The row's own key and value (no index entries, no counter)."""
        cols = TABLES[table]
        value = tuple(_to_stored(c, row[cols.index(c)]) for c in self._value_cols[table])
        return self.row_key(table, row, suffix), self._tuple.pack(value)

    def load_kvs(self, table: str, row: tuple) -> list[tuple[bytes, bytes]]:
        """Everything a loaded row writes: its key-value, index entries, YTD counter."""
        r = dict(zip(TABLES[table], row))
        suffix = (uuid.uuid4(),) if table == "history" else ()
        kvs = [self.row_kv(table, row, suffix)]
        if table == "customer":
            kvs.append(
                (self.key("customer_by_name", r["c_w_id"], r["c_d_id"], r["c_last"], r["c_first"], r["c_id"]), b"")
            )
        elif table == "orders":
            kvs.append((self.key("orders_by_customer", r["o_w_id"], r["o_d_id"], r["o_c_id"], r["o_id"]), b""))
        elif table == "warehouse":
            kvs.append((self.key("warehouse_ytd", r["w_id"]), counter_bytes(cents(r["w_ytd"]))))
        elif table == "district":
            kvs.append((self.key("district_ytd", r["d_w_id"], r["d_id"]), counter_bytes(cents(r["d_ytd"]))))
        return kvs

    def decode(self, table: str, key: bytes, value: bytes, ytd_cents: int | None = None) -> tuple:
        """The row as a tuple in schema order. W_YTD/D_YTD come from their counter
        (`ytd_cents`) and are None when it is not given."""
        row = dict(zip(PRIMARY_KEYS[table], self.unpack(table, key)))
        row.update((c, _from_stored(c, v)) for c, v in zip(self._value_cols[table], self._tuple.unpack(value)))
        if table in COUNTERS:
            row[COUNTERS[table]] = None if ytd_cents is None else ytd_cents / 100
        return tuple(row[c] for c in TABLES[table])

    def record(self, table: str, key: bytes, value: bytes, ytd_cents: int | None = None) -> dict:
        return dict(zip(TABLES[table], self.decode(table, key, value, ytd_cents)))

    def put(self, tr, table: str, rec: dict, suffix: tuple = ()) -> None:
        tr.set(*self.row_kv(table, tuple(rec[c] for c in TABLES[table]), suffix))


def unit_clear_ranges(ks: Keyspace, unit: str, tables: dict[str, list[tuple]]) -> list[slice]:
    """The key ranges a load unit owns: cleared before the unit is (re)written, so a unit
    loaded partly before a crash leaves no stale rows."""
    kind, *ids = unit.split(":")
    if kind == "item":
        i_ids = [row[0] for row in tables["item"]]
        return [ks.between("item", (min(i_ids),), (max(i_ids),))] if i_ids else []
    if kind == "stock":
        w = int(ids[0])
        i_ids = [row[0] for row in tables["stock"]]
        return [ks.between("stock", (w, min(i_ids)), (w, max(i_ids)))] if i_ids else []
    if kind == "warehouse":
        w = int(ids[0])
        return [ks.range(s, w) for s in ("warehouse", "warehouse_ytd", "district", "district_ytd")]
    if kind == "district":
        w, d = int(ids[0]), int(ids[1])
        return [
            ks.range(s, w, d)
            for s in (
                "customer",
                "customer_by_name",
                "history",
                "orders",
                "orders_by_customer",
                "order_line",
                "new_order",
            )
        ]
    raise ValueError(f"unknown load unit {unit!r}")


def load_batches(
    kvs: Iterable[tuple[bytes, bytes]], max_bytes: int = LOAD_BATCH_BYTES
) -> Iterator[list[tuple[bytes, bytes]]]:
    """Split writes into transactions of at most max_bytes of keys+values. Always yields at
    least one (possibly empty) batch: the last one also records the unit as done."""
    batch: list[tuple[bytes, bytes]] = []
    size = 0
    for k, v in kvs:
        if batch and size + len(k) + len(v) > max_bytes:
            yield batch
            batch, size = [], 0
        batch.append((k, v))
        size += len(k) + len(v)
    yield batch


_CLUSTER_ID = re.compile(r"^[A-Za-z0-9_]+:[A-Za-z0-9]+$")


def cluster_file_contents(cluster_id: str | None, endpoints: list[str]) -> str:
    """A cluster file's one line, `description:ID@host:port,...`, from the coordinators'
    addresses. The ID must be the cluster's own (clients of a wrong ID never connect)."""
    if not cluster_id or not _CLUSTER_ID.match(cluster_id):
        raise DriverError(
            f"FoundationDB endpoints need --driver-opt cluster_id=DESCRIPTION:ID "
            f"(the part before '@' in the cluster's fdb.cluster), got {cluster_id!r}"
        )
    coordinators = [ep if ":" in ep else f"{ep}:{DEFAULT_PORT}" for ep in endpoints]
    return f"{cluster_id}@{','.join(coordinators)}\n"


def _load_client(api_version: int):
    """The `fdb` module with its API version selected; raises Unreachable with one line
    when the binding or libfdb_c is missing."""
    try:
        import fdb
    except ImportError:
        raise Unreachable(
            "FoundationDB Python binding not installed: pip install foundationdb "
            "(the version of the installed foundationdb-clients)"
        ) from None
    try:
        fdb.api_version(api_version)
    except OSError as e:  # libfdb_c found but not loadable
        raise Unreachable(f"FoundationDB client library libfdb_c unusable: {e}") from None
    except RuntimeError as e:  # binding newer than libfdb_c, API version already set...
        raise Unreachable(f"FoundationDB client library: {e}") from None
    except Exception as e:  # the binding raises bare Exception when libfdb_c is absent
        if "Unable to locate" in str(e):
            raise Unreachable(LIBFDB_C_MISSING) from None
        raise
    return fdb


class FoundationDBDriver(Driver):
    name = "foundationdb"
    option_table = OPTIONS

    def __init__(self, connection: ConnectionOptions):
        super().__init__(connection)
        opt = self.parse_options()
        self.api_version = opt["api_version"]
        self.directory = tuple(opt["directory"].split("/"))
        self.txn_timeout = opt["txn_timeout"]
        self.cluster_file_option, self.cluster_id = opt["cluster_file"], opt["cluster_id"]
        self.fdb: Any = None  # the fdb module (untyped), loaded by connect()
        self.db: Any = None  # fdb.Database, opened by connect()
        self.keys: Keyspace | None = None
        self.cluster_file: str | None = None
        self._temp_cluster_file: str | None = None
        self._meta: LoadMeta | None = None

    # -- lifecycle ---------------------------------------------------------------------
    def connect(self) -> None:
        contents = self._cluster_file_contents()  # bad options fail before anything else
        self.fdb = fdb = _load_client(self.api_version)
        self.cluster_file = self._cluster_file(contents)
        try:
            self.db = fdb.open(self.cluster_file)
            self.db.options.set_transaction_timeout(int(self.txn_timeout * 1000))
            # fdb.open does not contact the cluster; a read version does.
            tr = self.db.create_transaction()
            tr.options.set_timeout(int(self.options.connect_timeout * 1000))
            tr.get_read_version().wait()
        except fdb.FDBError as e:
            where = self._where()
            self.close()
            if e.code == TRANSACTION_TIMED_OUT:
                raise Unreachable(
                    f"FoundationDB cluster of {where} not reachable within {self.options.connect_timeout:g}s"
                ) from None
            raise Unreachable(f"FoundationDB cluster of {where}: {e}") from None
        directory = self._transact(lambda tr: fdb.directory.create_or_open(tr, self.directory))
        self.keys = Keyspace(directory.key())

    def _cluster_file_contents(self) -> str | None:
        """What to write into a temporary cluster file, or None to use an existing one."""
        if self.cluster_file_option is not None:
            if not os.path.isfile(self.cluster_file_option):
                raise Unreachable(f"FoundationDB cluster file {self.cluster_file_option} not found")
            return None
        if not self.options.endpoints:
            return None
        return cluster_file_contents(self.cluster_id, self.options.endpoints)

    def _cluster_file(self, contents: str | None) -> str | None:
        if contents is None:
            # None: the client's default, $FDB_CLUSTER_FILE or /etc/foundationdb/fdb.cluster
            return self.cluster_file_option
        # The client rewrites its cluster file when the coordinators change: a private copy.
        fd, path = tempfile.mkstemp(prefix="tpcc-fdb-", suffix=".cluster")
        with os.fdopen(fd, "w") as f:
            f.write(contents)
        self._temp_cluster_file = path
        return path

    def _where(self) -> str:
        return f"cluster file {self.cluster_file or 'default'}"

    def close(self) -> None:
        # The binding has no way to close a Database; its network thread ends with the process.
        self.db = None
        if self._temp_cluster_file:
            os.unlink(self._temp_cluster_file)
            self._temp_cluster_file = None

    def describe(self) -> dict[str, Any]:
        return {
            "db": self.name,
            "api_version": self.api_version,
            "binding_version": getattr(self.fdb, "__version__", None),
            "cluster_file": self.cluster_file,
            "directory": "/".join(self.directory),
            "txn_timeout_s": self.txn_timeout,
            "schema_variant": "tuple-keyed subspaces, YTD as atomic-add counters",
        }

    # -- transactions plumbing ---------------------------------------------------------
    def _transact(self, fn):
        """Run fn(tr) and commit, retrying as the binding's @fdb.transactional does; used for
        loading, metadata and checks, where retrying inside the driver is right."""
        fdb = self.fdb
        tr = self.db.create_transaction()
        while True:
            try:
                result = fn(tr)
                tr.commit().wait()
                return result
            except fdb.FDBError as e:
                try:
                    tr.on_error(e).wait()
                except fdb.FDBError as final:
                    if final.code == TRANSACTION_TIMED_OUT:
                        raise ConnectionLost(
                            f"FoundationDB did not answer within {self.txn_timeout:g}s ({self._where()})"
                        ) from None
                    raise

    def _attempt(self, body):
        """One attempt of a TPC-C transaction; FDB errors become the executor's classes."""
        fdb = self.fdb
        tr = self.db.create_transaction()
        committing = False
        try:
            result = body(tr)
            committing = True
            tr.commit().wait()
            return result
        except fdb.FDBError as e:
            if e.code == TRANSACTION_TIMED_OUT:
                if committing:
                    raise UnknownOutcome(f"commit timed out after {self.txn_timeout:g}s") from None
                raise ConnectionLost(f"FoundationDB did not answer within {self.txn_timeout:g}s") from None
            if fdb.predicates.is_maybe_committed(e):  # 1021 commit_unknown_result, ...
                raise UnknownOutcome(str(e)) from None
            if fdb.predicates.is_retryable_not_committed(e):  # 1020 not_committed, 1007 too old, ...
                raise RetryableError(str(e)) from None
            raise

    def _keys(self) -> Keyspace:
        if self.keys is None:
            raise DriverError("FoundationDB driver is not connected")
        return self.keys

    def _load_meta(self) -> LoadMeta:
        if self._meta is None:
            self._meta = self.read_meta()
            if self._meta is None:
                raise NotLoaded(f"no TPC-C load in FoundationDB directory {'/'.join(self.directory)}")
        return self._meta

    def _get(self, tr, table: str, *pk: Any) -> dict:
        ks = self._keys()
        key = ks.key(table, *pk)
        raw = tr.get(key).value
        if raw is None:
            raise NotLoaded(f"{table} {pk} missing")
        return ks.record(table, key, raw)

    @staticmethod
    def _open_range(tr, r: slice, **kw):
        """Start a range read (the binding sends it now) without waiting for it."""
        return tr.get_range(r.start, r.stop, **kw)

    def _range(self, tr, r: slice, **kw) -> list:
        return list(self._open_range(tr, r, streaming_mode=self.fdb.StreamingMode.want_all, **kw))

    def _scan(self, r: slice) -> Iterator[tuple[bytes, bytes]]:
        """Every key-value of r in chunks of one transaction each (FDB's 5 s limit): not one
        snapshot, so rows committed between chunks may or may not be seen."""
        begin = r.start
        while True:
            chunk = self._transact(
                lambda tr: [
                    (kv.key, kv.value)
                    for kv in tr.get_range(
                        begin, r.stop, limit=SCAN_CHUNK, streaming_mode=self.fdb.StreamingMode.want_all
                    )
                ]
            )
            yield from chunk
            if len(chunk) < SCAN_CHUNK:
                return
            begin = chunk[-1][0] + b"\x00"

    # -- schema and load ---------------------------------------------------------------
    def create_schema(self, reset: bool) -> None:
        # Subspaces need no creation; reset empties the directory but keeps its prefix,
        # so drivers already connected elsewhere keep pointing at the right keys.
        if reset:
            everything = self._keys().everything()
            self._transact(lambda tr: tr.clear_range(everything.start, everything.stop))
            self._meta = None

    def read_meta(self) -> LoadMeta | None:
        raw = self._transact(lambda tr: tr.get(self._keys().key("meta", "load")).value)
        return None if raw is None else LoadMeta.from_dict(json.loads(raw))

    def write_meta(self, meta: LoadMeta) -> None:
        data = json.dumps(meta.to_dict()).encode()
        self._transact(lambda tr: tr.set(self._keys().key("meta", "load"), data))
        self._meta = None

    def done_units(self) -> set[str]:
        ks = self._keys()
        return {ks.unpack("meta", k)[1] for k, _ in self._scan(ks.range("meta", "done"))}

    def load_unit(self, key: str, tables: dict[str, list[tuple]]) -> None:
        ks = self._keys()
        clears = unit_clear_ranges(ks, key, tables)
        kvs = (kv for table, rows in tables.items() for row in rows for kv in ks.load_kvs(table, row))
        batches = load_batches(kvs)
        batch = next(batches)
        for following in batches:
            self._transact(lambda tr: self._write(tr, clears, batch))
            clears, batch = [], following
        done = (ks.key("meta", "done", key), b"")
        self._transact(lambda tr: self._write(tr, clears, batch + [done]))

    @staticmethod
    def _write(tr, clears: list[slice], kvs: list[tuple[bytes, bytes]]) -> None:
        for r in clears:
            tr.clear_range(r.start, r.stop)
        for k, v in kvs:
            tr.set(k, v)

    # -- the five transactions ---------------------------------------------------------
    def _customer_by_name(self, tr, w: int, d: int, c_last: str) -> int:
        """Clause 2.5.2.2: the customer at position ceil(n/2) of those named c_last,
        ordered by c_first (the index key order)."""
        ks = self._keys()
        matches = self._range(tr, ks.range("customer_by_name", w, d, c_last))
        if not matches:
            raise NotLoaded(f"no customer with C_LAST {c_last!r} in warehouse {w} district {d}")
        return ks.unpack("customer_by_name", matches[(len(matches) - 1) // 2].key)[4]

    def new_order(self, p: NewOrderInput) -> NewOrderOutput:
        ks = self._keys()
        w, d, c = p.w_id, p.d_id, p.c_id
        lines = p.items

        def body(tr):
            # Issue every read before waiting on any: FDB reads are futures.
            wh_f = tr.get(ks.key("warehouse", w))
            di_key = ks.key("district", w, d)
            di_f = tr.get(di_key)
            cu_key = ks.key("customer", w, d, c)
            cu_f = tr.get(cu_key)
            # ITEM is never written: snapshot reads add no conflict ranges.
            item_fs = [tr.snapshot.get(ks.key("item", ln.i_id)) for ln in lines]
            stock_keys = [ks.key("stock", ln.supply_w_id, ln.i_id) for ln in lines]
            stock_fs = [tr.get(k) for k in stock_keys]
            for ln, f in zip(lines, item_fs):
                if f.value is None:
                    raise UserAbort(f"item {ln.i_id} not found")
            if wh_f.value is None or di_f.value is None or cu_f.value is None:
                raise NotLoaded(f"warehouse {w}, district {d} or customer {c} missing")
            wh = ks.record("warehouse", ks.key("warehouse", w), wh_f.value)
            di = ks.record("district", di_key, di_f.value)
            cu = ks.record("customer", cu_key, cu_f.value)
            o_id = di["d_next_o_id"]
            di["d_next_o_id"] = o_id + 1
            ks.put(tr, "district", di)
            all_local = int(not p.remote)
            ks.put(
                tr,
                "orders",
                {
                    "o_id": o_id,
                    "o_d_id": d,
                    "o_w_id": w,
                    "o_c_id": c,
                    "o_entry_d": p.o_entry_d,
                    "o_carrier_id": None,
                    "o_ol_cnt": len(lines),
                    "o_all_local": all_local,
                },
            )
            tr.set(ks.key("new_order", w, d, o_id), b"")
            tr.set(ks.key("orders_by_customer", w, d, c, o_id), b"")
            amounts = self._write_order_lines(tr, ks, w, d, o_id, lines, item_fs, stock_keys, stock_fs)
            total = math.fsum(amounts) * (1 - cu["c_discount"]) * (1 + wh["w_tax"] + di["d_tax"])
            return NewOrderOutput(o_id, round(total, 2))

        return self._attempt(body)

    @staticmethod
    def _write_order_lines(
        tr,
        ks,
        w: int,
        d: int,
        o_id: int,
        lines: tuple[OrderLineInput, ...],
        item_fs: list,
        stock_keys: list[bytes],
        stock_fs: list,
    ) -> list[float]:
        """NewOrder's ORDER-LINE rows and the STOCK each takes from (clause 2.4.2.2); the
        line amounts."""
        stocks: dict[bytes, dict] = {}  # an item ordered twice sees its first update
        amounts = []
        for number, (ln, item_f, s_key, s_f) in enumerate(zip(lines, item_fs, stock_keys, stock_fs), start=1):
            item = ks.record("item", ks.key("item", ln.i_id), item_f.value)
            if s_key not in stocks:
                if s_f.value is None:
                    raise NotLoaded(f"stock ({ln.supply_w_id}, {ln.i_id}) missing")
                stocks[s_key] = ks.record("stock", s_key, s_f.value)
            st = stocks[s_key]
            qty = ln.quantity
            st["s_quantity"] = st["s_quantity"] - qty if st["s_quantity"] >= qty + 10 else st["s_quantity"] - qty + 91
            st["s_ytd"] += qty
            st["s_order_cnt"] += 1
            st["s_remote_cnt"] += int(ln.supply_w_id != w)
            ks.put(tr, "stock", st)
            amount = round(qty * item["i_price"], 2)
            amounts.append(amount)
            ks.put(
                tr,
                "order_line",
                {
                    "ol_o_id": o_id,
                    "ol_d_id": d,
                    "ol_w_id": w,
                    "ol_number": number,
                    "ol_i_id": ln.i_id,
                    "ol_supply_w_id": ln.supply_w_id,
                    "ol_delivery_d": None,
                    "ol_quantity": qty,
                    "ol_amount": amount,
                    "ol_dist_info": st[f"s_dist_{d:02d}"],
                },
            )
        return amounts

    def payment(self, p: PaymentInput) -> PaymentOutput:
        ks = self._keys()
        w, d, c_w, c_d = p.w_id, p.d_id, p.c_w_id, p.c_d_id
        amount = p.h_amount

        def body(tr):
            wh = self._get(tr, "warehouse", w)
            di = self._get(tr, "district", w, d)
            c = p.c_id if p.c_id is not None else self._customer_by_name(tr, c_w, c_d, p.c_last)
            cu = self._get(tr, "customer", c_w, c_d, c)
            tr.add(ks.key("warehouse_ytd", w), counter_bytes(cents(amount)))
            tr.add(ks.key("district_ytd", w, d), counter_bytes(cents(amount)))
            cu["c_balance"] = round(cu["c_balance"] - amount, 2)
            cu["c_ytd_payment"] = round(cu["c_ytd_payment"] + amount, 2)
            cu["c_payment_cnt"] += 1
            if cu["c_credit"] == "BC":
                cu["c_data"] = f"{c} {c_d} {c_w} {d} {w} {amount:.2f} {cu['c_data']}"[:500]
            ks.put(tr, "customer", cu)
            ks.put(
                tr,
                "history",
                {
                    "h_c_id": c,
                    "h_c_d_id": c_d,
                    "h_c_w_id": c_w,
                    "h_d_id": d,
                    "h_w_id": w,
                    "h_date": p.h_date,
                    "h_amount": amount,
                    "h_data": f"{wh['w_name']}    {di['d_name']}",
                },
                suffix=(uuid.uuid4(),),
            )
            return PaymentOutput(c, cu["c_balance"], cu["c_credit"])

        return self._attempt(body)

    def order_status(self, p: OrderStatusInput) -> OrderStatusOutput:
        ks = self._keys()
        w, d = p.w_id, p.d_id

        def body(tr):
            c = p.c_id if p.c_id is not None else self._customer_by_name(tr, w, d, p.c_last)
            cu = self._get(tr, "customer", w, d, c)
            last = self._range(tr, ks.range("orders_by_customer", w, d, c), limit=1, reverse=True)
            if not last:
                return OrderStatusOutput(c, cu["c_balance"], None, None, 0)
            o_id = ks.unpack("orders_by_customer", last[0].key)[3]
            order = self._get(tr, "orders", w, d, o_id)
            lines = self._range(tr, ks.range("order_line", w, d, o_id))
            return OrderStatusOutput(c, cu["c_balance"], o_id, order["o_carrier_id"], len(lines))

        return self._attempt(body)

    def delivery(self, p: DeliveryInput) -> DeliveryOutput:
        ks = self._keys()
        w = p.w_id
        districts = range(1, self._load_meta().districts + 1)

        def body(tr):
            # All ten oldest-new-order reads in flight at once. A limit-1 read conflicts only
            # up to the key it returned, so NewOrders appending to the district do not abort us.
            heads = [self._open_range(tr, ks.range("new_order", w, d), limit=1) for d in districts]
            delivered, skipped = [], 0
            for d, head in zip(districts, heads):
                first = list(head)
                if not first:
                    skipped += 1
                    continue
                o_id = ks.unpack("new_order", first[0].key)[2]
                tr.clear(first[0].key)
                order = self._get(tr, "orders", w, d, o_id)
                order["o_carrier_id"] = p.o_carrier_id
                ks.put(tr, "orders", order)
                total = []
                for kv in self._range(tr, ks.range("order_line", w, d, o_id)):
                    line = ks.record("order_line", kv.key, kv.value)
                    line["ol_delivery_d"] = p.ol_delivery_d
                    ks.put(tr, "order_line", line)
                    total.append(line["ol_amount"])
                cu = self._get(tr, "customer", w, d, order["o_c_id"])
                cu["c_balance"] = round(cu["c_balance"] + math.fsum(total), 2)
                cu["c_delivery_cnt"] += 1
                ks.put(tr, "customer", cu)
                delivered.append((d, o_id))
            return DeliveryOutput(tuple(delivered), skipped)

        return self._attempt(body)

    def stock_level(self, p: StockLevelInput) -> StockLevelOutput:
        ks = self._keys()
        w, d = p.w_id, p.d_id

        def body(tr):
            next_o_id = self._get(tr, "district", w, d)["d_next_o_id"]
            # Lines of orders next_o_id-20 .. next_o_id-1: keys from (w, d, next-20) up to,
            # not including, (w, d, next).
            start = ks.key("order_line", w, d, next_o_id - 20)
            stop = ks.key("order_line", w, d, next_o_id)
            i_ids = sorted(
                {ks.record("order_line", kv.key, kv.value)["ol_i_id"] for kv in self._range(tr, slice(start, stop))}
            )
            stock_keys = [ks.key("stock", w, i) for i in i_ids]
            futures = [tr.get(k) for k in stock_keys]
            low = sum(
                1
                for k, f in zip(stock_keys, futures)
                if f.value is not None and ks.record("stock", k, f.value)["s_quantity"] < p.threshold
            )
            return StockLevelOutput(low)

        return self._attempt(body)

    # -- what the server counts ----------------------------------------------------------
    def _status(self) -> dict[str, Any]:
        """The cluster's status document (the special key every client can read)."""
        return json.loads(self._transact(lambda tr: tr.get(STATUS_KEY).value))

    def server_counters(self) -> ServerCounters:
        """status json's cluster.workload.transactions counters (started, committed, conflicted),
        reported, not judged: committed counts the whole cluster's write transactions and never
        the read-only ones (OrderStatus, StockLevel, a Delivery with nothing to deliver), and no
        FoundationDB server here has shown how it lines up with the clients' counts."""
        try:
            workload = self._status().get("cluster", {}).get("workload", {}).get("transactions", {})
        except (DriverError, ValueError, self.fdb.FDBError) as e:
            return ServerCounters.not_available(f"foundationdb: status json: {e}")
        counters = {
            f"workload.transactions.{k}": int(v["counter"])
            for k, v in workload.items()
            if isinstance(v, dict) and isinstance(v.get("counter"), (int, float))
        }
        return ServerCounters.not_available(
            "foundationdb: status json counts the cluster's committed write transactions, not the "
            "read-only ones; not judged against the clients (not validated against a server here)",
            counters,
        )

    def database_size(self) -> DatabaseSize:
        """status json's cluster.data (the whole cluster's key-value bytes, logical and on disk)
        and the memory its processes use; FoundationDB keeps no separate index size."""
        try:
            cluster = self._status().get("cluster", {})
        except (DriverError, ValueError, self.fdb.FDBError) as e:
            return DatabaseSize(unavailable=f"foundationdb: status json: {e}")
        data = cluster.get("data", {})
        used = [p.get("memory", {}).get("used_bytes") for p in cluster.get("processes", {}).values()]
        memory = sum(int(u) for u in used if isinstance(u, (int, float))) if used else None
        figures = {
            k: int(data[k])
            for k in ("total_kv_size_bytes", "total_disk_used_bytes")
            if isinstance(data.get(k), (int, float))
        }
        return DatabaseSize(
            data_bytes=figures.get("total_kv_size_bytes"),
            storage_bytes=figures.get("total_disk_used_bytes"),
            memory_bytes=memory,
            details=figures,
        )

    # -- verification ------------------------------------------------------------------
    def stored_orders(self, keys: list[tuple[int, int, int]]) -> dict[tuple[int, int, int], StoredOrder]:
        ks = self._keys()
        found: dict[tuple[int, int, int], StoredOrder] = {}
        for i in range(0, len(keys), LOOKUP_CHUNK):
            chunk = keys[i : i + LOOKUP_CHUNK]

            def lookup(tr):
                futures = [tr.get(ks.key("orders", *k)) for k in chunk]
                return {
                    k: self._stored_order(tr, k, ks.record("orders", ks.key("orders", *k), f.value))
                    for k, f in zip(chunk, futures)
                    if f.value is not None
                }

            found.update(self._transact(lookup))
        return found

    def orders_entered_at(self, w_id: int, d_id: int, c_id: int, entry_ms: int) -> list[StoredOrder]:
        ks = self._keys()

        def lookup(tr):
            out = []
            for kv in self._range(tr, ks.range("orders_by_customer", w_id, d_id, c_id)):
                o_id = ks.unpack("orders_by_customer", kv.key)[3]
                order = self._get(tr, "orders", w_id, d_id, o_id)
                stored = self._stored_order(tr, (w_id, d_id, o_id), order)
                if stored.identity().entry_ms == entry_ms:
                    out.append(stored)
            return out

        return self._transact(lookup)

    def _stored_order(self, tr, key: tuple[int, int, int], order: dict) -> StoredOrder:
        ks = self._keys()
        lines = [ks.record("order_line", kv.key, kv.value) for kv in self._range(tr, ks.range("order_line", *key))]
        return StoredOrder(
            order["o_c_id"],
            order["o_entry_d"],
            order["o_ol_cnt"],
            tuple(
                (ol["ol_i_id"], ol["ol_supply_w_id"], ol["ol_quantity"])
                for ol in sorted(lines, key=lambda ol: ol["ol_number"])
            ),
        )

    def consistency_data(self, w: int, meta: LoadMeta) -> WarehouseData:
        """Warehouse w for consistency.Evaluator, by range scans in chunks of separate
        transactions: exact only while no transactions run (see docs/foundationdb.md). The
        YTDs are integer-cent counters; other money is read from the rows and taken as cents."""
        ks = self._keys()
        wh = WarehouseData(w)
        wh.ytd = counter_cents(self._transact(lambda tr: tr.get(ks.key("warehouse_ytd", w)).value))
        d_ytd = {ks.unpack("district_ytd", k)[1]: counter_cents(v) for k, v in self._scan(ks.range("district_ytd", w))}
        for k, v in self._scan(ks.range("district", w)):
            di = ks.record("district", k, v)
            wh.district(di["d_id"]).row = DistrictRow(d_ytd.get(di["d_id"]) or 0, di["d_next_o_id"])
        # Payments for this warehouse's customers may have been made at any warehouse: HISTORY
        # is keyed by the paying warehouse, so all of it is scanned (once per warehouse).
        for k, v in self._scan(ks.range("history")):
            h = ks.record("history", k, v)
            if h["h_w_id"] == w:
                wh.district(h["h_d_id"]).paid_here += cents(h["h_amount"])
            if h["h_c_w_id"] == w:
                wh.district(h["h_c_d_id"]).pay(h["h_c_id"], cents(h["h_amount"]))
        for k, v in self._scan(ks.range("orders", w)):
            o = ks.record("orders", k, v)
            wh.district(o["o_d_id"]).orders[o["o_id"]] = OrderRow(o["o_c_id"], o["o_carrier_id"], o["o_ol_cnt"])
        for k, _ in self._scan(ks.range("new_order", w)):
            _, d, o_id = ks.unpack("new_order", k)
            wh.district(d).new_orders.add(o_id)
        for k, v in self._scan(ks.range("order_line", w)):
            ol = ks.record("order_line", k, v)
            undelivered = ol["ol_delivery_d"] is None
            wh.district(ol["ol_d_id"]).order_lines(ol["ol_o_id"]).add(
                1, int(undelivered), 0 if undelivered else cents(ol["ol_amount"])
            )
        for k, v in self._scan(ks.range("customer", w)):
            cu = ks.record("customer", k, v)
            wh.district(cu["c_d_id"]).customers[cu["c_id"]] = CustomerRow(
                cents(cu["c_balance"]), cents(cu["c_ytd_payment"])
            )
        return wh
