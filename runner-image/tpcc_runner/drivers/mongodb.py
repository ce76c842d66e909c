"""MongoDB driver (pure pymongo) after Kamsky, "Adapting TPC-C Benchmark to Measure Performance
of Multi-Document Transactions in MongoDB" (VLDB 2019) and py-tpcc's mongodb driver.

Money is stored as int64 cents (the driver converts the runner's dollars at its boundary), so
sums are exact. Every TPC-C transaction runs as one multi-document transaction. Unlike pymongo's
`with_transaction`, the retry policy is the executor's: this module only classifies what
happened (RetryableError, UnknownOutcome, ConnectionLost, UserAbort) and never loops on a
transient error itself, except for re-sending a commit whose result is unknown.

The VLDB paper's configuration (its appendix D) is transactions with read_concern=snapshot,
write_concern=majority, causal=true, retry_writes=false, and StockLevel outside a transaction
(stock_level_in_transaction=false: read concern majority, in the causal session), the only
transaction that may read from a secondary; crds/samples/papers/ holds it as a manifest.

Options (`--driver-opt key=value`, defaults first):
  schema=denormalized|normalized  denormalized embeds the order lines in their ORDERS document
                                  (the paper's schema); normalized keeps nine collections
  find_and_modify=true|false      NewOrder's d_next_o_id increment, Payment's YTD increments and
                                  Delivery's new_order removal / order update in one round trip
  batch_writes=true|false         one bulk write per collection instead of one write per row
  read_concern=majority|local|snapshot   for transactions (snapshot is used as majority outside)
  write_concern=majority|<n>      commit write concern (and the loader's)
  journal=false|true              j:true in that write concern (acknowledged once journaled)
  transactions=true|false         false: no multi-document transactions, every statement
                                  on its own (the FoundationDB study's "mongo3", py-tpcc's
                                  notransactions; atomicity is then not TPC-C's)
  stock_level_in_transaction=true|false   false: StockLevel reads outside a transaction
                                  (clause 3.4 lets it see committed data of others)
  read_preference=primary|primaryPreferred|secondary|secondaryPreferred|nearest
                                  where StockLevel reads when it runs outside a transaction
                                  (a non-primary preference takes it out); every other
                                  transaction reads the primary
  causal=false|true               causally consistent session
  retry_writes=true|false         retryable writes (MongoDB drivers' retryWrites): the driver
                                  re-sends a write or commit once after a network error or
                                  failover; false leaves every such error to the executor
  database=tpcc  uri=mongodb://... (instead of endpoints)  replica_set=NAME  auth_source=DB
  txn_timeout=60                  seconds, client-side bound on one transaction and on each
                                  commit attempt (pymongo.timeout: covers server selection too)
  commit_retries=3                re-sends of a commit whose result is unknown
Username and password come from ConnectionOptions and are never put in a URI or a message.

Behind a mongos (`hello` answers msg: "isdbgrid") create_schema shards every TPC-C collection
that has a warehouse id on that field, hashed (SHARD_KEYS): the collections are created empty,
and a hashed key is split over every shard at once, so the warehouses spread over the shards
from the first insert without a balancer pass or knowing the warehouse count; all documents of
a warehouse hash alike, so a transaction on its home warehouse stays on one shard (remote
stock lines and remote-customer Payments cross shards); and the shard key stays a prefix of
every unique index, which a sharded collection needs to enforce them. ITEM has no warehouse
id and stays unsharded on the database's primary shard.

On SecantusDB (the test server) findAndModify costs a scan of the collection; use
find_and_modify=false there for anything but small data.
"""
from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pymongo
from bson.decimal128 import Decimal128
from bson.int64 import Int64
from pymongo import DeleteOne, InsertOne, MongoClient, ReturnDocument, UpdateMany, UpdateOne, errors
from pymongo.read_concern import ReadConcern
from pymongo.read_preferences import ReadPreference
from pymongo.write_concern import WriteConcern

from ..consistency import Cents, CustomerRow, DistrictRow, OrderRow, WarehouseData
from ..durability import StoredOrder, from_epoch_ms
from ..redact import redact
from ..schema import MONEY_COLUMNS, TABLES
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
    utcnow,
)

DEFAULT_PORT = 27017
UNAUTHORIZED = 13  # the server's error code for an operation the user's roles do not allow
META = "tpcc_meta"
SCHEMAS = ("denormalized", "normalized")
READ_PREFERENCES = {
    "primary": ReadPreference.PRIMARY,
    "primaryPreferred": ReadPreference.PRIMARY_PREFERRED,
    "secondary": ReadPreference.SECONDARY,
    "secondaryPreferred": ReadPreference.SECONDARY_PREFERRED,
    "nearest": ReadPreference.NEAREST,
}


def _write_concern(value: str) -> str | int:
    if value == "majority":
        return value
    if not (value.isdigit() and int(value) >= 1):
        raise options.Want("majority or a number of members >= 1")
    return int(value)


OPTIONS = (
    options.Option("schema", "denormalized", options.choice(*SCHEMAS)),
    options.Option("find_and_modify", True, options.boolean),
    options.Option("batch_writes", True, options.boolean),
    options.Option("read_concern", "majority", options.choice("local", "majority", "snapshot")),
    options.Option("write_concern", "majority", _write_concern),
    options.Option("journal", False, options.boolean),
    options.Option("transactions", True, options.boolean),
    options.Option("stock_level_in_transaction", True, options.boolean),
    options.Option("read_preference", "primary", options.choice(*READ_PREFERENCES)),
    options.Option("causal", False, options.boolean),
    options.Option("retry_writes", True, options.boolean),
    options.Option("database", "tpcc", options.text),
    options.Option("uri", "", options.text),
    options.Option("replica_set", "", options.text),
    options.Option("auth_source", "", options.text),
    options.Option("txn_timeout", 60.0, options.seconds),
    options.Option("commit_retries", 3, options.count),
)
# The paper's index set (py-tpcc TABLE_INDEXES) with two changes: each table's primary key is
# its own unique index (py-tpcc made the first, wider index unique, which does not stop a
# duplicate key), and equality fields lead so that range scans (StockLevel's last 20 orders,
# Delivery's oldest new order) use the prefix. c_first is added so by-last-name lookups are
# sorted by the index. HISTORY has no key and, as in the paper, no index.
INDEXES: dict[str, list[tuple[list[tuple[str, int]], bool]]] = {
    "item": [([("i_id", 1)], True)],
    "warehouse": [([("w_id", 1)], True)],
    "district": [([("d_w_id", 1), ("d_id", 1)], True)],
    "customer": [([("c_w_id", 1), ("c_d_id", 1), ("c_id", 1)], True),
                 ([("c_w_id", 1), ("c_d_id", 1), ("c_last", 1), ("c_first", 1)], False)],
    "stock": [([("s_w_id", 1), ("s_i_id", 1)], True)],
    "orders": [([("o_w_id", 1), ("o_d_id", 1), ("o_id", 1)], True),
               ([("o_w_id", 1), ("o_d_id", 1), ("o_c_id", 1), ("o_id", -1),
                 ("o_carrier_id", 1), ("o_entry_d", 1)], False)],
    "new_order": [([("no_w_id", 1), ("no_d_id", 1), ("no_o_id", 1)], True)],
    "order_line": [([("ol_w_id", 1), ("ol_d_id", 1), ("ol_o_id", 1), ("ol_number", 1)], True),
                   ([("ol_w_id", 1), ("ol_d_id", 1), ("ol_o_id", 1), ("ol_i_id", 1),
                     ("ol_amount", 1)], False)],
    "history": [],
}
# The shard key of each collection behind a mongos: its warehouse id, hashed (see above).
SHARD_KEYS = {"warehouse": "w_id", "district": "d_w_id", "customer": "c_w_id", "history": "h_w_id",
              "stock": "s_w_id", "orders": "o_w_id", "new_order": "no_w_id", "order_line": "ol_w_id"}
TOPOLOGIES = ("standalone", "replica_set", "sharded")
# Fields of an order line kept inside the ORDERS document (its key is the order's).
EMBEDDED_LINE_FIELDS = TABLES["order_line"][3:]


class _InvalidItem(Exception):
    """NewOrder met an unused item id: abort the transaction (clause 2.4.2.3)."""


def _one_line(e: BaseException, limit: int = 300) -> str:
    text = str(e).split(", full error:")[0].split(", Timeout:")[0]
    return " ".join(text.split())[:limit] or type(e).__name__


def _cents(dollars: float) -> Int64:
    """Money is stored as int64 cents (exact sums; int64 so W_YTD never overflows int32)."""
    return Int64(round(dollars * 100))


def _stored_cents(value: Any) -> Cents:
    """A stored cents value, exactly: an int64 as is; a double (which the driver never writes)
    or a Decimal128 keeps its fraction, so a check compares what is really stored."""
    if value is None:
        return 0
    if isinstance(value, Decimal128):
        value = value.to_decimal()
    if isinstance(value, int):
        return int(value)
    exact = Decimal(value)
    return int(exact) if exact == exact.to_integral_value() else exact


def topology_of(hello: dict) -> str:
    """What a `hello` reply says the driver is connected to: a mongos answers msg "isdbgrid",
    a replica-set member names its set."""
    if hello.get("msg") == "isdbgrid":
        return "sharded"
    return "replica_set" if hello.get("setName") else "standalone"


def _null(expr: Any) -> dict:
    """Aggregation: true when expr is null or missing (a plain $eq treats missing != null)."""
    return {"$eq": [{"$ifNull": [expr, None]}, None]}


class MongoDBDriver(Driver):
    name = "mongodb"

    def __init__(self, connection: ConnectionOptions):
        super().__init__(connection)
        opt = options.parse("mongodb", OPTIONS, connection.extra)
        self.schema = opt["schema"]
        self.find_and_modify, self.batch_writes = opt["find_and_modify"], opt["batch_writes"]
        self.causal, self.retry_writes = opt["causal"], opt["retry_writes"]
        self.read_concern, self.write_concern = opt["read_concern"], opt["write_concern"]
        self.read_preference = opt["read_preference"]
        self.journal, self.transactions = opt["journal"], opt["transactions"]
        # a secondary can only serve reads outside a transaction
        self.stock_level_in_transaction = opt["stock_level_in_transaction"] and self.read_preference == "primary"
        self.database_name, self.uri = opt["database"], opt["uri"]
        self.replica_set, self.auth_source = opt["replica_set"], opt["auth_source"]
        self.txn_timeout, self.commit_retries = opt["txn_timeout"], opt["commit_retries"]
        self._snapshot_session = None  # consistency_snapshot's, while consistency_data reads in it
        if not self.uri and not connection.endpoints:
            raise ValueError("mongodb: give endpoints (host[:port]) or driver option uri=")
        self.client: MongoClient | None = None
        self.db: pymongo.database.Database | None = None
        self._session: pymongo.client_session.ClientSession | None = None
        self._server_version = "unknown"
        self.topology = "unknown"
        self._districts: int | None = None

    # -- lifecycle ---------------------------------------------------------------------
    def _build_uri(self) -> str:
        if self.uri:
            return self.uri
        def with_port(h: str) -> str:
            has_port = "]:" in h if h.startswith("[") else ":" in h  # [IPv6]:port
            return h if has_port else f"{h}:{DEFAULT_PORT}"
        hosts = [with_port(h) for h in self.options.endpoints]
        uri = "mongodb://" + ",".join(hosts) + "/"
        return uri + (f"?replicaSet={self.replica_set}" if self.replica_set else "")

    def connect(self) -> None:
        self.close()
        uri = self._build_uri()
        timeout_ms = max(1, int(self.options.connect_timeout * 1000))
        kwargs: dict[str, Any] = dict(
            serverSelectionTimeoutMS=timeout_ms,
            connectTimeoutMS=min(timeout_ms, 10_000),
            appname="tpcc-runner",
            retryWrites=self.retry_writes,
        )
        if self.options.username:
            kwargs.update(username=self.options.username, password=self.options.password or "")
        if self.auth_source:
            kwargs["authSource"] = self.auth_source
        where = redact(uri)
        try:
            self.client = MongoClient(uri, **kwargs)
            with pymongo.timeout(self.options.connect_timeout):
                self.client.admin.command("ping")
                self._server_version = self.client.admin.command("buildInfo").get("version", "unknown")
                self.topology = topology_of(self.client.admin.command("hello"))
        except errors.ConfigurationError as e:
            self.close()
            raise ValueError(f"mongodb: bad connection settings for {where}: {_one_line(e)}") from None
        except errors.OperationFailure as e:
            self.close()
            raise Unreachable(f"mongodb: {where} refused the connection: {_one_line(e)}") from None
        except errors.PyMongoError as e:
            self.close()
            raise Unreachable(f"mongodb: no server reachable at {where} within "
                              f"{self.options.connect_timeout:g}s: {_one_line(e)}") from None
        outside_rc = "majority" if self.read_concern == "snapshot" else self.read_concern
        # load, metadata, checks and every transaction read the primary; only StockLevel
        # outside a transaction uses the configured read preference (see _stock_reader)
        self.db = self.client.get_database(
            self.database_name,
            read_concern=ReadConcern(outside_rc),
            write_concern=self._commit_write_concern(),
            read_preference=ReadPreference.PRIMARY)

    def close(self) -> None:
        self._drop_session()
        if self.client is not None:
            self.client.close()
        self.client = None
        self.db = None

    def describe(self) -> dict[str, Any]:
        return {
            "db": self.name,
            "server_version": self._server_version,
            "uri": redact(self._build_uri()),
            "database": self.database_name,
            "schema_variant": self.schema,
            "read_concern": self.read_concern,
            "write_concern": self.write_concern,
            "journal": self.journal,
            "read_preference": self.read_preference,
            "transactions": self.transactions,
            "stock_level_in_transaction": self.transactions and self.stock_level_in_transaction,
            "causal_consistency": self.causal,
            "retry_writes": self.retry_writes,
            "topology": self.topology,
            "replica_set": self.replica_set,
            "auth_source": self.auth_source,
            "find_and_modify": self.find_and_modify,
            "batch_writes": self.batch_writes,
            "txn_timeout_s": self.txn_timeout,
            "commit_retries": self.commit_retries,
        }

    def _coll(self, name: str):
        if self.db is None:
            raise ConnectionLost("mongodb: not connected (call connect() first)")
        return self.db[name]

    def _commit_write_concern(self) -> WriteConcern:
        return WriteConcern(w=self.write_concern, j=True if self.journal else None)

    def _stock_reader(self, name: str):
        """A collection for StockLevel (inside a transaction pymongo reads the primary
        whatever this says)."""
        return self._coll(name).with_options(read_preference=READ_PREFERENCES[self.read_preference])

    def _tables(self) -> list[str]:
        return [t for t in TABLES if not (self.schema == "denormalized" and t == "order_line")]

    # -- schema and load ---------------------------------------------------------------
    def create_schema(self, reset: bool) -> None:
        with self._admin_errors("creating the schema"):
            if reset:
                for name in list(TABLES) + [META]:
                    self._coll(name).drop()
            else:
                meta = self.read_meta()
                if meta is not None and meta.schema_variant != self.schema:
                    raise NotLoaded(f"mongodb: database {self.database_name!r} holds a "
                                    f"{meta.schema_variant} load; use schema={meta.schema_variant} "
                                    f"or reset")
            existing = set(self.db.list_collection_names())
            # explicit creation: a transaction may not create a collection (MongoDB < 4.4)
            for name in self._tables() + [META]:
                if name not in existing:
                    self.db.create_collection(name)
            if self.topology == "sharded":
                self._shard_collections()
            for table in self._tables():
                for keys, unique in INDEXES[table]:
                    self._coll(table).create_index(keys, unique=unique)

    def _shard_collections(self) -> None:
        """shardCollection on the warehouse id, hashed, before the unique indexes exist (they
        must have the shard key as prefix); repeating it with the same key is a no-op."""
        admin = self.client.admin
        admin.command("enableSharding", self.database_name)
        for table in self._tables():
            if table in SHARD_KEYS:
                admin.command("shardCollection", f"{self.database_name}.{table}",
                              key={SHARD_KEYS[table]: "hashed"})

    def read_meta(self) -> LoadMeta | None:
        with self._admin_errors("reading the load metadata"):
            doc = self._coll(META).find_one({"_id": "meta"})
        if doc is None:
            return None
        try:
            return LoadMeta.from_dict(doc)
        except KeyError as e:
            raise NotLoaded(f"mongodb: load metadata in {self.database_name}.{META} lacks {e}") from None

    def write_meta(self, meta: LoadMeta) -> None:
        with self._admin_errors("writing the load metadata"):
            self._coll(META).replace_one({"_id": "meta"}, {"_id": "meta", **meta.to_dict()}, upsert=True)
        self._districts = meta.districts

    def done_units(self) -> set[str]:
        with self._admin_errors("reading the loaded units"):
            return {d["unit"] for d in self._coll(META).find({"kind": "unit"}, {"unit": 1})}

    def load_unit(self, key: str, tables: dict[str, list[tuple]]) -> None:
        unknown = set(tables) - set(TABLES)
        if unknown:
            raise ValueError(f"mongodb: unit {key}: unknown table(s) {', '.join(sorted(unknown))}")
        for t, rows in tables.items():
            bad = next((r for r in rows if len(r) != len(TABLES[t])), None)
            if bad is not None:
                raise ValueError(f"mongodb: unit {key}: a {t} row has {len(bad)} values, "
                                 f"expected {len(TABLES[t])} ({', '.join(TABLES[t])})")
        docs = {t: [{c: _cents(v) if c in MONEY_COLUMNS and v is not None else v
                     for c, v in zip(TABLES[t], row)} for row in rows]
                for t, rows in tables.items() if rows}
        if self.schema == "denormalized" and "order_line" in docs:
            self._embed_lines(key, docs)
        with self._admin_errors(f"loading unit {key}"):
            # a crash may have left part of this unit: remove it, then insert it whole
            for table, filt in self._unit_filters(key, docs):
                self._coll(table).delete_many(filt)
            for table, rows in docs.items():
                self._coll(table).insert_many(rows, ordered=False)
            self._coll(META).replace_one(
                {"_id": "unit:" + key}, {"_id": "unit:" + key, "kind": "unit", "unit": key,
                                         "loaded_at": utcnow()}, upsert=True)

    def _embed_lines(self, key: str, docs: dict[str, list[dict]]) -> None:
        by_order: dict[tuple, list[dict]] = defaultdict(list)
        for ol in docs.pop("order_line"):
            by_order[(ol["ol_w_id"], ol["ol_d_id"], ol["ol_o_id"])].append(
                {f: ol[f] for f in EMBEDDED_LINE_FIELDS})
        for o in docs.get("orders", []):
            o["order_line"] = sorted(by_order.pop((o["o_w_id"], o["o_d_id"], o["o_id"]), []),
                                     key=lambda ol: ol["ol_number"])
        if by_order:
            raise ValueError(f"mongodb: unit {key}: order lines without their order, e.g. "
                             f"(w, d, o) = {next(iter(by_order))}")

    def _unit_filters(self, key: str, docs: dict[str, list[dict]]) -> list[tuple[str, dict]]:
        """Which documents belong to a unit: by the unit key where it names a warehouse or
        district, else by the keys of the rows it carries."""
        parts = key.split(":")
        try:
            if parts[0] == "warehouse" and len(parts) == 2:
                w = int(parts[1])
                return [("warehouse", {"w_id": w}), ("district", {"d_w_id": w})]
            if parts[0] == "district" and len(parts) == 3:
                w, d = int(parts[1]), int(parts[2])
                filters = [("customer", {"c_w_id": w, "c_d_id": d}),
                           ("history", {"h_c_w_id": w, "h_c_d_id": d}),
                           ("orders", {"o_w_id": w, "o_d_id": d}),
                           ("new_order", {"no_w_id": w, "no_d_id": d})]
                if self.schema == "normalized":
                    filters.append(("order_line", {"ol_w_id": w, "ol_d_id": d}))
                return filters
        except ValueError:
            pass
        if parts[0] == "item":
            return [("item", {"i_id": self._ids_filter([r["i_id"] for r in docs.get("item", [])])})]
        if parts[0] == "stock" and len(parts) == 3:
            filters = []
            by_w: dict[int, list[int]] = defaultdict(list)
            for r in docs.get("stock", []):
                by_w[r["s_w_id"]].append(r["s_i_id"])
            for w, ids in by_w.items():
                filters.append(("stock", {"s_w_id": w, "s_i_id": self._ids_filter(ids)}))
            return filters
        raise ValueError(f"mongodb: unknown load unit key {key!r} (item:<n>, warehouse:<w>, "
                         f"stock:<w>:<n>, district:<w>:<d>)")

    @staticmethod
    def _ids_filter(ids: list[int]) -> dict:
        lo, hi = min(ids, default=0), max(ids, default=-1)
        if len(set(ids)) == hi - lo + 1:  # contiguous: a range is exact and cheaper than $in
            return {"$gte": lo, "$lt": hi + 1}
        return {"$in": sorted(set(ids))}

    # -- transactions: running and classifying errors -----------------------------------
    def _get_session(self):
        if self._session is None:
            if self.client is None:
                raise ConnectionLost("mongodb: not connected (call connect() first)")
            self._session = self.client.start_session(causal_consistency=self.causal)
        return self._session

    def _drop_session(self) -> None:
        if self._session is not None:
            try:
                self._session.end_session()
            except errors.PyMongoError:
                pass
            self._session = None

    def _run(self, body: Callable[[Any], dict[str, Any]], in_transaction: bool = True) -> dict[str, Any]:
        """Run body(session) in one transaction and commit it (or, with transactions=false or
        in_transaction=False, statement by statement in the session); errors become the
        contract's."""
        in_txn = self.transactions and in_transaction
        try:
            session = self._get_session()
            try:
                with pymongo.timeout(self.txn_timeout):
                    if in_txn:
                        session.start_transaction(
                            read_concern=ReadConcern(self.read_concern),
                            write_concern=self._commit_write_concern(),
                            read_preference=ReadPreference.PRIMARY)
                    result = body(session)
            except BaseException:
                if in_txn and session.in_transaction:
                    with pymongo.timeout(min(self.txn_timeout, 10)):
                        session.abort_transaction()  # best effort: pymongo swallows its errors
                raise
        except _InvalidItem as e:
            raise UserAbort(f"mongodb: {e}") from None
        except errors.PyMongoError as e:
            raise self._not_committed(e) from None
        if in_txn:
            self._commit(session)
        return result

    def _not_committed(self, e: errors.PyMongoError) -> BaseException:
        """Classify an error raised before the commit (the transaction did not happen)."""
        msg = f"mongodb: {_one_line(e)}"
        if isinstance(e, errors.NotPrimaryError):
            return RetryableError(msg)  # step-down: a primary will be elected
        if isinstance(e, errors.ConnectionFailure):  # socket gone, timeout, no server selectable
            self._drop_session()
            return ConnectionLost(msg)
        if e.has_error_label("TransientTransactionError"):
            return RetryableError(msg)  # write conflict, lock timeout, transaction aborted
        if isinstance(e, errors.ExecutionTimeout):
            return RetryableError(msg)  # our txn_timeout expired on the server; nothing committed
        if isinstance(e, errors.OperationFailure) and e.code == UNAUTHORIZED:
            return NotPermitted(msg)
        return e  # anything else is a bug or bad data: the executor counts it as an error

    def _commit(self, session) -> None:
        last: errors.PyMongoError | None = None
        attempts = 0
        for attempt in range(1 + self.commit_retries):
            attempts += 1
            try:
                with pymongo.timeout(self.txn_timeout):
                    session.commit_transaction()
                return
            except errors.PyMongoError as e:
                last = e
                if e.has_error_label("TransientTransactionError"):
                    raise RetryableError(f"mongodb: commit: {_one_line(e)}") from None
                if not e.has_error_label("UnknownTransactionCommitResult"):
                    break
                time.sleep(min(0.1 * 2 ** attempt, 2.0))
        self._drop_session()
        raise UnknownOutcome(f"mongodb: commit result unknown after {attempts} attempt(s): "
                             f"{_one_line(last)}") from None

    def _customer(self, s, w_id: int, d_id: int, c_id: int | None, c_last: str | None,
                  projection: dict[str, int]) -> dict:
        cust = self._coll("customer")
        if c_id is not None:
            c = cust.find_one({"c_w_id": w_id, "c_d_id": d_id, "c_id": c_id}, projection, session=s)
            if c is None:
                raise NotLoaded(f"mongodb: no customer w_id={w_id} d_id={d_id} c_id={c_id}")
            return c
        found = list(cust.find({"c_w_id": w_id, "c_d_id": d_id, "c_last": c_last}, projection,
                               session=s).sort("c_first", 1))
        if not found:
            raise NotLoaded(f"mongodb: no customer w_id={w_id} d_id={d_id} c_last={c_last!r}")
        # clause 2.5.2.2: the customer at position ceil(n/2) of those sorted by c_first
        return found[(len(found) - 1) // 2]

    # -- NewOrder (clause 2.4) ----------------------------------------------------------
    def new_order(self, p: dict[str, Any]) -> dict[str, Any]:
        return self._run(lambda s: self._new_order(s, p))

    def _new_order(self, s, p: dict[str, Any]) -> dict[str, Any]:
        w_id, d_id, c_id, lines = p["w_id"], p["d_id"], p["c_id"], p["items"]
        district = self._coll("district")
        dkey = {"d_w_id": w_id, "d_id": d_id}
        if self.find_and_modify:
            d = district.find_one_and_update(dkey, {"$inc": {"d_next_o_id": 1}},
                                             projection={"_id": 0, "d_tax": 1, "d_next_o_id": 1},
                                             return_document=ReturnDocument.BEFORE, session=s)
        else:
            d = district.find_one(dkey, {"_id": 0, "d_tax": 1, "d_next_o_id": 1}, session=s)
            if d is not None:
                district.update_one(dkey, {"$inc": {"d_next_o_id": 1}}, session=s)
        if d is None:
            raise NotLoaded(f"mongodb: no district w_id={w_id} d_id={d_id}")
        o_id = d["d_next_o_id"]
        w = self._coll("warehouse").find_one({"w_id": w_id}, {"_id": 0, "w_tax": 1}, session=s)
        if w is None:
            raise NotLoaded(f"mongodb: no warehouse w_id={w_id}")
        c = self._customer(s, w_id, d_id, c_id, None,
                           {"_id": 0, "c_discount": 1, "c_last": 1, "c_credit": 1})

        i_ids = sorted({ln["i_id"] for ln in lines})
        items = {i["i_id"]: i for i in self._coll("item").find(
            {"i_id": {"$in": i_ids}}, {"_id": 0, "i_id": 1, "i_price": 1, "i_name": 1, "i_data": 1},
            session=s)}
        missing = [i for i in i_ids if i not in items]
        if missing:
            raise _InvalidItem(f"item {missing[0]} not found (NewOrder w_id={w_id} d_id={d_id} "
                               f"rolled back)")

        dist_col = f"s_dist_{d_id:02d}"
        wanted: dict[int, list[int]] = defaultdict(list)
        for ln in lines:
            wanted[ln["supply_w_id"]].append(ln["i_id"])
        # one {eq, $in} query per supply warehouse (one in 99% of orders): an $or of them
        # costs SecantusDB a collection scan
        stock = {(st["s_w_id"], st["s_i_id"]): st
                 for sw, ids in sorted(wanted.items())
                 for st in self._coll("stock").find(
                     {"s_w_id": sw, "s_i_id": {"$in": sorted(set(ids))}},
                     {"_id": 0, "s_w_id": 1, "s_i_id": 1, "s_quantity": 1, "s_data": 1, dist_col: 1},
                     session=s)}

        stock_updates: dict[tuple[int, int], dict] = {}
        order_lines, total = [], 0  # cents
        for number, ln in enumerate(lines, start=1):
            key = (ln["supply_w_id"], ln["i_id"])
            st = stock.get(key)
            if st is None:
                raise NotLoaded(f"mongodb: no stock s_w_id={key[0]} s_i_id={key[1]}")
            qty = ln["quantity"]
            # clause 2.4.2.2: take qty, restocking by 91 when fewer than 10 would remain
            if st["s_quantity"] >= qty + 10:
                st["s_quantity"] -= qty
            else:
                st["s_quantity"] = st["s_quantity"] - qty + 91
            upd = stock_updates.setdefault(key, {"ytd": 0, "orders": 0, "remote": 0})
            upd["ytd"] += qty
            upd["orders"] += 1
            upd["remote"] += int(ln["supply_w_id"] != w_id)
            item = items[ln["i_id"]]
            amount = Int64(qty * item["i_price"])
            total += amount
            order_lines.append({"ol_number": number, "ol_i_id": ln["i_id"],
                                "ol_supply_w_id": ln["supply_w_id"], "ol_delivery_d": None,
                                "ol_quantity": qty, "ol_amount": amount,
                                "ol_dist_info": st.get(dist_col, "")})

        stock_writes = [UpdateOne({"s_w_id": sw, "s_i_id": si},
                                  {"$set": {"s_quantity": stock[(sw, si)]["s_quantity"]},
                                   "$inc": {"s_ytd": u["ytd"], "s_order_cnt": u["orders"],
                                            "s_remote_cnt": u["remote"]}})
                        for (sw, si), u in stock_updates.items()]
        self._write(self._coll("stock"), stock_writes, s)

        order = {"o_id": o_id, "o_d_id": d_id, "o_w_id": w_id, "o_c_id": c_id,
                 "o_entry_d": p["o_entry_d"], "o_carrier_id": None, "o_ol_cnt": len(lines),
                 "o_all_local": int(all(ln["supply_w_id"] == w_id for ln in lines))}
        if self.schema == "denormalized":
            order["order_line"] = order_lines
        else:
            self._write(self._coll("order_line"),
                        [InsertOne({"ol_o_id": o_id, "ol_d_id": d_id, "ol_w_id": w_id, **ol})
                         for ol in order_lines], s)
        self._coll("orders").insert_one(order, session=s)
        self._coll("new_order").insert_one({"no_o_id": o_id, "no_d_id": d_id, "no_w_id": w_id},
                                           session=s)
        total_cents = round(total * (1 - c["c_discount"]) * (1 + w["w_tax"] + d["d_tax"]))
        return {"o_id": o_id, "total": total_cents / 100, "ol_cnt": len(lines)}

    def _write(self, coll, ops: list, s) -> None:
        """One bulk write, or one command per operation without batch_writes."""
        if not ops:
            return
        if self.batch_writes:
            coll.bulk_write(ops, ordered=False, session=s)
        else:
            for op in ops:
                coll.bulk_write([op], session=s)

    # -- Payment (clause 2.5) -----------------------------------------------------------
    def payment(self, p: dict[str, Any]) -> dict[str, Any]:
        return self._run(lambda s: self._payment(s, p))

    def _payment(self, s, p: dict[str, Any]) -> dict[str, Any]:
        w_id, d_id, amount = p["w_id"], p["d_id"], _cents(p["h_amount"])
        w = self._inc_and_read("warehouse", {"w_id": w_id}, "w_ytd", amount, ["w_name"], s)
        d = self._inc_and_read("district", {"d_w_id": w_id, "d_id": d_id}, "d_ytd", amount,
                               ["d_name"], s)
        c = self._customer(s, p["c_w_id"], p["c_d_id"], p.get("c_id"), p.get("c_last"),
                           {"_id": 0, "c_id": 1, "c_credit": 1, "c_data": 1, "c_balance": 1})
        c_id = c["c_id"]
        update: dict[str, Any] = {"$inc": {"c_balance": Int64(-amount), "c_ytd_payment": amount,
                                           "c_payment_cnt": 1}}
        if c["c_credit"] == "BC":  # clause 2.5.2.2: history prepended to C_DATA, 500 chars max
            entry = f"{c_id} {p['c_d_id']} {p['c_w_id']} {d_id} {w_id} {amount / 100:.2f} "
            update["$set"] = {"c_data": (entry + c["c_data"])[:500]}
        self._coll("customer").update_one({"c_w_id": p["c_w_id"], "c_d_id": p["c_d_id"], "c_id": c_id},
                                          update, session=s)
        self._coll("history").insert_one(
            {"h_c_id": c_id, "h_c_d_id": p["c_d_id"], "h_c_w_id": p["c_w_id"], "h_d_id": d_id,
             "h_w_id": w_id, "h_date": p["h_date"], "h_amount": amount,
             "h_data": f"{w['w_name']}    {d['d_name']}"}, session=s)
        return {"c_id": c_id, "c_balance": (c["c_balance"] - amount) / 100}

    def _inc_and_read(self, table: str, key: dict, field: str, amount: Int64, read: list[str], s) -> dict:
        coll, projection = self._coll(table), {"_id": 0, **{f: 1 for f in read}}
        if self.find_and_modify:
            doc = coll.find_one_and_update(key, {"$inc": {field: amount}}, projection=projection,
                                           session=s)
        else:
            doc = coll.find_one(key, projection, session=s)
            if doc is not None:
                coll.update_one(key, {"$inc": {field: amount}}, session=s)
        if doc is None:
            raise NotLoaded(f"mongodb: no {table} {key}")
        return doc

    # -- OrderStatus (clause 2.6) -------------------------------------------------------
    def order_status(self, p: dict[str, Any]) -> dict[str, Any]:
        return self._run(lambda s: self._order_status(s, p))

    def _order_status(self, s, p: dict[str, Any]) -> dict[str, Any]:
        w_id, d_id = p["w_id"], p["d_id"]
        c = self._customer(s, w_id, d_id, p.get("c_id"), p.get("c_last"),
                           {"_id": 0, "c_id": 1, "c_first": 1, "c_middle": 1, "c_last": 1,
                            "c_balance": 1})
        projection = {"_id": 0, "o_id": 1, "o_entry_d": 1, "o_carrier_id": 1}
        if self.schema == "denormalized":
            projection["order_line"] = 1
        last = list(self._coll("orders").find(
            {"o_w_id": w_id, "o_d_id": d_id, "o_c_id": c["c_id"]}, projection,
            session=s).sort("o_id", -1).limit(1))
        if not last:
            return {"c_id": c["c_id"], "c_balance": c["c_balance"] / 100, "o_id": None, "lines": 0}
        o = last[0]
        if self.schema == "denormalized":
            lines = o.get("order_line", [])
        else:
            lines = list(self._coll("order_line").find(
                {"ol_w_id": w_id, "ol_d_id": d_id, "ol_o_id": o["o_id"]},
                {"_id": 0, "ol_i_id": 1, "ol_supply_w_id": 1, "ol_quantity": 1, "ol_amount": 1,
                 "ol_delivery_d": 1}, session=s))
        return {"c_id": c["c_id"], "c_balance": c["c_balance"] / 100, "o_id": o["o_id"],
                "o_carrier_id": o.get("o_carrier_id"), "lines": len(lines)}

    # -- Delivery (clause 2.7), all districts in one transaction as in the paper --------
    def delivery(self, p: dict[str, Any]) -> dict[str, Any]:
        if self._districts is None:
            meta = self.read_meta()
            self._districts = meta.districts if meta else 10
        return self._run(lambda s: self._delivery(s, p))

    def _delivery(self, s, p: dict[str, Any]) -> dict[str, Any]:
        w_id, carrier, when = p["w_id"], p["o_carrier_id"], p["ol_delivery_d"]
        new_order, orders, order_line = (self._coll("new_order"), self._coll("orders"),
                                         self._coll("order_line"))
        denorm = self.schema == "denormalized"
        delivered, skipped = [], 0
        no_deletes, order_updates, line_updates, customer_updates = [], [], [], []
        for d_id in range(1, self._districts + 1):
            no_key = {"no_w_id": w_id, "no_d_id": d_id}
            if self.find_and_modify:
                no = new_order.find_one_and_delete(no_key, projection={"_id": 0, "no_o_id": 1},
                                                   sort=[("no_o_id", 1)], session=s)
            else:
                found = list(new_order.find(no_key, {"_id": 0, "no_o_id": 1}, session=s)
                             .sort("no_o_id", 1).limit(1))
                no = found[0] if found else None
            if no is None:
                skipped += 1  # clause 2.7.4.2: no undelivered order in this district
                continue
            o_id = no["no_o_id"]
            o_key = {"o_w_id": w_id, "o_d_id": d_id, "o_id": o_id}
            o_set = {"o_carrier_id": carrier}
            if denorm:
                o_set["order_line.$[].ol_delivery_d"] = when
            projection = {"_id": 0, "o_c_id": 1}
            if denorm:
                projection["order_line"] = 1
            if self.find_and_modify:
                o = orders.find_one_and_update(o_key, {"$set": o_set}, projection=projection,
                                               session=s)
            else:
                o = orders.find_one(o_key, projection, session=s)
                no_deletes.append(DeleteOne({**no_key, "no_o_id": o_id}))
                order_updates.append(UpdateOne(o_key, {"$set": o_set}))
            if o is None:
                raise LookupError(f"mongodb: new order without order w_id={w_id} d_id={d_id} o_id={o_id}")
            if denorm:
                amounts = [ol["ol_amount"] for ol in o.get("order_line", [])]
            else:
                ol_key = {"ol_w_id": w_id, "ol_d_id": d_id, "ol_o_id": o_id}
                amounts = [ol["ol_amount"] for ol in order_line.find(ol_key, {"_id": 0, "ol_amount": 1},
                                                                     session=s)]
                line_updates.append(UpdateMany(ol_key, {"$set": {"ol_delivery_d": when}}))
            customer_updates.append(UpdateOne(
                {"c_w_id": w_id, "c_d_id": d_id, "c_id": o["o_c_id"]},
                {"$inc": {"c_balance": Int64(sum(amounts)), "c_delivery_cnt": 1}}))
            delivered.append((d_id, o_id))
        self._write(new_order, no_deletes, s)
        self._write(orders, order_updates, s)
        self._write(order_line, line_updates, s)
        self._write(self._coll("customer"), customer_updates, s)
        return {"delivered": delivered, "skipped": skipped}

    # -- StockLevel (clause 2.8) --------------------------------------------------------
    def stock_level(self, p: dict[str, Any]) -> dict[str, Any]:
        return self._run(lambda s: self._stock_level(s, p), in_transaction=self.stock_level_in_transaction)

    def _stock_level(self, s, p: dict[str, Any]) -> dict[str, Any]:
        w_id, d_id = p["w_id"], p["d_id"]
        d = self._stock_reader("district").find_one({"d_w_id": w_id, "d_id": d_id},
                                              {"_id": 0, "d_next_o_id": 1}, session=s)
        if d is None:
            raise NotLoaded(f"mongodb: no district w_id={w_id} d_id={d_id}")
        nxt = d["d_next_o_id"]
        last20 = {"$gte": nxt - 20, "$lt": nxt}
        if self.schema == "denormalized":
            i_ids = {ol["ol_i_id"] for o in self._stock_reader("orders").find(
                {"o_w_id": w_id, "o_d_id": d_id, "o_id": last20},
                {"_id": 0, "order_line.ol_i_id": 1}, session=s) for ol in o.get("order_line", [])}
        else:
            i_ids = {ol["ol_i_id"] for ol in self._stock_reader("order_line").find(
                {"ol_w_id": w_id, "ol_d_id": d_id, "ol_o_id": last20}, {"_id": 0, "ol_i_id": 1},
                session=s)}
        # the threshold is applied here, not in the query: with it SecantusDB's planner drops
        # the (s_w_id, s_i_id) index; at most ~300 small documents come back
        quantities = self._stock_reader("stock").find(
            {"s_w_id": w_id, "s_i_id": {"$in": sorted(i_ids)}}, {"_id": 0, "s_quantity": 1},
            session=s) if i_ids else []
        return {"low_stock": sum(1 for st in quantities if st["s_quantity"] < p["threshold"])}

    # -- verification ------------------------------------------------------------------
    def stored_orders(self, keys: list[tuple[int, int, int]]) -> dict[tuple[int, int, int], StoredOrder]:
        by_district: dict[tuple[int, int], list[int]] = defaultdict(list)
        for w, d, o in keys:
            by_district[(w, d)].append(o)
        found = {}
        for (w, d), o_ids in by_district.items():
            for i in range(0, len(o_ids), 5000):
                found.update(self._orders({"o_w_id": w, "o_d_id": d, "o_id": {"$in": o_ids[i:i + 5000]}}))
        return found

    def orders_entered_at(self, w_id: int, d_id: int, c_id: int, entry_ms: int) -> list[StoredOrder]:
        return list(self._orders({"o_w_id": w_id, "o_d_id": d_id, "o_c_id": c_id,
                                  "o_entry_d": from_epoch_ms(entry_ms)}).values())

    def _orders(self, query: dict) -> dict[tuple[int, int, int], StoredOrder]:
        """The orders of one district matching `query`, with their lines (embedded or not)."""
        fields = {"_id": 0, "o_w_id": 1, "o_d_id": 1, "o_id": 1, "o_c_id": 1, "o_entry_d": 1, "o_ol_cnt": 1}
        if self.schema == "denormalized":
            fields["order_line"] = 1
        with self._admin_errors("reading orders"):
            orders = list(self._coll("orders").find(query, fields))
            if self.schema == "denormalized":
                lines = {o["o_id"]: o.get("order_line") or [] for o in orders}
            else:
                lines = defaultdict(list)
                if orders:
                    w, d = orders[0]["o_w_id"], orders[0]["o_d_id"]
                    for ol in self._coll("order_line").find(
                            {"ol_w_id": w, "ol_d_id": d, "ol_o_id": {"$in": [o["o_id"] for o in orders]}},
                            {"_id": 0, "ol_o_id": 1, "ol_number": 1, "ol_i_id": 1, "ol_supply_w_id": 1,
                             "ol_quantity": 1}):
                        lines[ol["ol_o_id"]].append(ol)
        return {(o["o_w_id"], o["o_d_id"], o["o_id"]): StoredOrder(
                    o["o_c_id"], o["o_entry_d"], o["o_ol_cnt"],
                    tuple((ol["ol_i_id"], ol["ol_supply_w_id"], ol["ol_quantity"])
                          for ol in sorted(lines[o["o_id"]], key=lambda ol: ol["ol_number"])))
                for o in orders}

    def consistency_snapshot(self, w: int, meta: LoadMeta) -> WarehouseData:
        """consistency_data in one transaction with read concern "snapshot": what it reads is one
        committed state however many clients commit meanwhile. One warehouse per transaction
        keeps it within MongoDB's transaction lifetime (transactionLifetimeLimitSeconds, 60 s by
        default) for warehouses of the specified size."""
        with self._admin_errors(f"reading warehouse {w} in one snapshot"), self.client.start_session() as session:
            with session.start_transaction(read_concern=ReadConcern("snapshot"),
                                           read_preference=ReadPreference.PRIMARY):
                self._snapshot_session = session
                try:
                    return self.consistency_data(w, meta)
                finally:
                    self._snapshot_session = None

    def consistency_data(self, w: int, meta: LoadMeta) -> WarehouseData:
        """Fetch warehouse w for consistency.Evaluator, in the schema variant the load stored
        (whatever the schema option says). ORDER-LINE documents in the order_line collection
        are read in both variants: in the denormalized one any there are rows outside an order."""
        if meta.schema_variant not in SCHEMAS:
            raise NotLoaded(f"mongodb: the load metadata names schema {meta.schema_variant!r}, "
                            f"not one of {'|'.join(SCHEMAS)}")
        wh = WarehouseData(w)
        session = self._snapshot_session  # None: plain reads, each on its own
        with self._admin_errors(f"reading warehouse {w} for the consistency check"):
            doc = self._coll("warehouse").find_one({"w_id": w}, {"_id": 0, "w_ytd": 1}, session=session)
            if doc is not None:
                wh.ytd = _stored_cents(doc.get("w_ytd"))
            for r in self._coll("district").find({"d_w_id": w}, {"_id": 0, "d_id": 1, "d_ytd": 1,
                                                                 "d_next_o_id": 1}, session=session):
                wh.district(r["d_id"]).row = DistrictRow(_stored_cents(r.get("d_ytd")),
                                                         r.get("d_next_o_id") or 0)
            for r in self._aggregate("history", [
                    {"$match": {"h_w_id": w}},
                    {"$group": {"_id": "$h_d_id", "sum": {"$sum": "$h_amount"}}}]):
                wh.district(r["_id"]).paid_here = _stored_cents(r["sum"])
            for r in self._aggregate("history", [
                    {"$match": {"h_c_w_id": w}},
                    {"$group": {"_id": {"d": "$h_c_d_id", "c": "$h_c_id"}, "sum": {"$sum": "$h_amount"}}}]):
                wh.district(r["_id"]["d"]).pay(r["_id"]["c"], _stored_cents(r["sum"]))
            order_fields = {"_id": 0, "o_d_id": 1, "o_id": 1, "o_c_id": 1, "o_carrier_id": 1, "o_ol_cnt": 1}
            if meta.schema_variant == "denormalized":
                lines = {"$ifNull": ["$order_line", []]}
                delivered = {"$filter": {"input": lines, "as": "l",
                                         "cond": {"$not": [_null("$$l.ol_delivery_d")]}}}
                orders = self._aggregate("orders", [
                    {"$match": {"o_w_id": w}},
                    {"$project": {**order_fields, "lines": {"$size": lines},
                                  "delivered_lines": {"$size": delivered},
                                  "delivered_amount": {"$sum": {"$map": {
                                      "input": delivered, "as": "l", "in": "$$l.ol_amount"}}}}}])
            else:
                orders = self._coll("orders").find({"o_w_id": w}, order_fields, session=session)
            for o in orders:
                dd = wh.district(o["o_d_id"])
                dd.orders[o["o_id"]] = OrderRow(o.get("o_c_id"), o.get("o_carrier_id"), o.get("o_ol_cnt") or 0)
                if "lines" in o:
                    dd.order_lines(o["o_id"]).add(o["lines"], o["lines"] - o["delivered_lines"],
                                                  _stored_cents(o["delivered_amount"]))
            for r in self._coll("new_order").find({"no_w_id": w}, {"_id": 0, "no_d_id": 1, "no_o_id": 1},
                                                 session=session):
                wh.district(r["no_d_id"]).new_orders.add(r["no_o_id"])
            undated = _null("$ol_delivery_d")
            for r in self._aggregate("order_line", [
                    {"$match": {"ol_w_id": w}},
                    {"$group": {"_id": {"d": "$ol_d_id", "o": "$ol_o_id"}, "n": {"$sum": 1},
                                "undelivered": {"$sum": {"$cond": [undated, 1, 0]}},
                                "amount": {"$sum": {"$cond": [undated, 0, "$ol_amount"]}}}}]):
                wh.district(r["_id"]["d"]).order_lines(r["_id"]["o"]).add(
                    r["n"], r["undelivered"], _stored_cents(r["amount"]))
            for c in self._coll("customer").find({"c_w_id": w}, {"_id": 0, "c_d_id": 1, "c_id": 1,
                                                                 "c_balance": 1, "c_ytd_payment": 1},
                                                session=session):
                wh.district(c["c_d_id"]).customers[c["c_id"]] = CustomerRow(
                    _stored_cents(c.get("c_balance")), _stored_cents(c.get("c_ytd_payment")))
        return wh

    def _aggregate(self, table: str, pipeline: list[dict]) -> list[dict]:
        return list(self._coll(table).aggregate(pipeline, allowDiskUse=True, session=self._snapshot_session))

    # -- errors outside transactions ---------------------------------------------------
    def _admin_errors(self, doing: str):
        return _AdminErrors(self, doing)


class _AdminErrors:
    """Maps pymongo errors of schema, load and check operations to one-line driver errors."""

    def __init__(self, driver: MongoDBDriver, doing: str):
        self.driver, self.doing = driver, doing

    def __enter__(self):
        return self

    def __exit__(self, kind, e, tb):
        if e is None or not isinstance(e, errors.PyMongoError):
            return False
        msg = f"mongodb: {self.doing}: {_one_line(e)}"
        if isinstance(e, errors.OperationFailure) and e.code == UNAUTHORIZED:
            raise NotPermitted(msg) from None
        if isinstance(e, errors.NotPrimaryError):
            raise RetryableError(msg) from None
        if isinstance(e, errors.ConnectionFailure):
            raise ConnectionLost(msg) from None
        raise DriverError(msg) from None
