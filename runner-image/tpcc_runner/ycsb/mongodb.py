"""YCSB on MongoDB (pure pymongo), as YCSB's MongoDB binding stores it: one document per record,
`_id` the key, fields field0..fieldN-1 as binary; read is a find by _id with the fields
projected, scan a find of _id >= start sorted by _id with a limit, update a $set of the fields
(no document matched: NOT_FOUND), insert an insert_one.

The load inserts batchsize records per bulk write (insert_many, unordered), as the binding does
with its batchsize; with upsert=true (the default here, the study's choice: a re-run load does
not fail on keys already there) each record is a replace_one with upsert, batched as one
bulk_write. Unlike the binding, a last partial batch is written too.

operationspertransaction N > 1 runs N operations in one session transaction (the FoundationDB-
vs-MongoDB study's "mongo4" runner), retried whole on TransientTransactionError (a write conflict)
up to txn_retries times, the commit re-sent on UnknownTransactionCommitResult.

Options (`--driver-opt key=value`): OPTIONS below, each with its default and what it does
(`tpcc ycsb run --help` lists them).
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

import pymongo
from pymongo import InsertOne, MongoClient, ReplaceOne, errors
from pymongo.read_concern import ReadConcern
from pymongo.write_concern import WriteConcern

from ..drivers import options
from ..drivers.base import ConnectionLost, DriverError, RetryableError, UnknownOutcome, Unreachable
from ..drivers.mongodb import DEFAULT_PORT, READ_PREFERENCES, _one_line, _write_concern
from ..redact import redact
from .store import KeyValueStore, Record
from .workload import Operation

OPTIONS = (
    options.Option(
        "write_concern", 1, _write_concern, "every write's (and the commit's) write concern; 1 is YCSB's default"
    ),
    options.Option("journal", False, options.boolean, "j:true in that write concern"),
    options.Option(
        "read_concern",
        "local",
        options.choice("local", "majority", "snapshot"),
        "reads' read concern (snapshot only inside transactions)",
    ),
    options.Option(
        "read_preference", "primary", options.choice(*READ_PREFERENCES), "where reads outside transactions go"
    ),
    options.Option("upsert", True, options.boolean, "load with upserts instead of inserts"),
    options.Option("database", "ycsb", options.text, "the database holding the table"),
    options.Option("uri", "", options.text, "a mongodb:// URI instead of the endpoints (no credentials)"),
    options.Option("replica_set", "", options.text, "the replica set name, added to the URI"),
    options.Option("auth_source", "", options.text, "the database the credentials are checked against"),
    options.Option("txn_timeout", 60.0, options.seconds, "client-side bound on one operation or transaction"),
    options.Option("txn_retries", 10, options.count, "re-runs of a transaction after a transient error"),
)


class MongoDBStore(KeyValueStore):
    name = "mongodb"
    option_table = OPTIONS

    def __init__(self, connection, props):
        super().__init__(connection, props)
        self.opt = options.parse(self.name, self.option_table, connection.extra)
        if not self.opt["uri"] and not connection.endpoints:
            raise ValueError("mongodb: give endpoints (host[:port]) or driver option uri=")
        self.client: MongoClient | None = None
        self.collection = None
        self._session = None  # the session of the transaction under way, else None
        self._server_version = "unknown"

    def _uri(self) -> str:
        if self.opt["uri"]:
            return self.opt["uri"]
        hosts = [h if ":" in h.rsplit("]", 1)[-1] else f"{h}:{DEFAULT_PORT}" for h in self.connection.endpoints]
        uri = "mongodb://" + ",".join(hosts) + "/"
        return uri + (f"?replicaSet={self.opt['replica_set']}" if self.opt["replica_set"] else "")

    def _write_concern(self) -> WriteConcern:
        return WriteConcern(w=self.opt["write_concern"], j=True if self.opt["journal"] else None)

    def connect(self) -> None:
        timeout_ms = max(1, int(self.connection.connect_timeout * 1000))
        kwargs: dict[str, Any] = dict(
            serverSelectionTimeoutMS=timeout_ms, connectTimeoutMS=min(timeout_ms, 10_000), appname="tpcc-runner-ycsb"
        )
        if self.connection.username:
            kwargs.update(username=self.connection.username, password=self.connection.password or "")
        if self.opt["auth_source"]:
            kwargs["authSource"] = self.opt["auth_source"]
        where = redact(self._uri())
        try:
            self.client = MongoClient(self._uri(), **kwargs)
            with pymongo.timeout(self.connection.connect_timeout):
                self._server_version = self.client.admin.command("buildInfo").get("version", "unknown")
        except errors.ConfigurationError as e:
            self.close()
            raise ValueError(f"mongodb: bad connection settings for {where}: {_one_line(e)}") from None
        except errors.PyMongoError as e:
            self.close()
            raise Unreachable(
                f"mongodb: no server reachable at {where} within {self.connection.connect_timeout:g}s: {_one_line(e)}"
            ) from None
        outside = "majority" if self.opt["read_concern"] == "snapshot" else self.opt["read_concern"]
        self.collection = self.client.get_database(
            self.opt["database"],
            read_concern=ReadConcern(outside),
            write_concern=self._write_concern(),
            read_preference=READ_PREFERENCES[self.opt["read_preference"]],
        )[self.props.table]

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
        self.client = self.collection = None

    def describe(self) -> dict[str, Any]:
        return {
            "db": self.name,
            "server_version": self._server_version,
            "uri": redact(self._uri()),
            "collection": f"{self.opt['database']}.{self.props.table}",
            **{k: v for k, v in self.opt.items() if k != "uri"},
        }

    def create_schema(self, reset: bool) -> None:
        with _MongoErrors("creating the collection"):
            db = self.collection.database
            if reset:
                self.collection.drop()
            if self.props.table not in db.list_collection_names():
                db.create_collection(self.props.table)  # a transaction may not create it (MongoDB < 4.4)

    def load(self, records: list[tuple[str, Record]]) -> None:
        if self.opt["upsert"]:
            writes: list[ReplaceOne | InsertOne] = [
                ReplaceOne({"_id": key}, {"_id": key, **values}, upsert=True) for key, values in records
            ]
        else:
            writes = [InsertOne({"_id": key, **values}) for key, values in records]
        with _MongoErrors("loading"):
            self.collection.bulk_write(writes, ordered=False)

    @staticmethod
    def _projection(fields: tuple[str, ...] | None) -> dict[str, int] | None:
        return None if fields is None else dict.fromkeys(fields, 1)

    @staticmethod
    def _record(doc: dict) -> Record:
        return {k: bytes(v) for k, v in doc.items() if k != "_id"}

    def read(self, key: str, fields: tuple[str, ...] | None) -> Record | None:
        with _MongoErrors("read"):
            doc = self.collection.find_one({"_id": key}, self._projection(fields), session=self._session)
        return None if doc is None else self._record(doc)

    def scan(self, start_key: str, count: int, fields: tuple[str, ...] | None) -> list[tuple[str, Record]]:
        with _MongoErrors("scan"):
            cursor = (
                self.collection.find({"_id": {"$gte": start_key}}, self._projection(fields), session=self._session)
                .sort("_id", 1)
                .limit(count)
            )
            return [(doc["_id"], self._record(doc)) for doc in cursor]

    def update(self, key: str, values: Record) -> bool:
        with _MongoErrors("update"):
            return self.collection.update_one({"_id": key}, {"$set": values}, session=self._session).matched_count > 0

    def insert(self, key: str, values: Record) -> None:
        with _MongoErrors("insert"):
            self.collection.insert_one({"_id": key, **values}, session=self._session)

    def transaction(self, ops: list[Operation]) -> list[Any]:
        if self.client is None:
            raise ConnectionLost("mongodb: not connected")
        for attempt in range(self.opt["txn_retries"] + 1):
            try:
                return self._attempt(ops)
            except RetryableError:
                if attempt == self.opt["txn_retries"]:
                    raise
                time.sleep(min(0.005 * 2**attempt, 0.5))
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _attempt(self, ops: list[Operation]) -> list[Any]:
        assert self.client is not None, "transaction() checked the connection"
        with self.client.start_session() as session, pymongo.timeout(self.opt["txn_timeout"]):
            session.start_transaction(
                read_concern=ReadConcern(self.opt["read_concern"]), write_concern=self._write_concern()
            )
            self._session = session  # read/update/insert/scan pass it while it is set
            try:
                results = [self.apply(op) for op in ops]
            except BaseException:
                with contextlib.suppress(errors.PyMongoError):  # the error being raised says more
                    session.abort_transaction()
                raise
            finally:
                self._session = None
            self._commit(session)
            return results

    def _commit(self, session) -> None:
        for attempt in range(3):
            try:
                session.commit_transaction()
                return
            except errors.PyMongoError as e:
                if e.has_error_label("TransientTransactionError"):
                    raise RetryableError(f"mongodb: commit: {_one_line(e)}") from None
                if not e.has_error_label("UnknownTransactionCommitResult") or attempt == 2:
                    raise UnknownOutcome(f"mongodb: commit: {_one_line(e)}") from None

    def count_records(self) -> int:
        with _MongoErrors("counting records"):
            return self.collection.count_documents({})


class _MongoErrors:
    """pymongo's errors as the runner's: a transient transaction error may be retried."""

    def __init__(self, doing: str):
        self.doing = doing

    def __enter__(self):
        return self

    def __exit__(self, kind, e, tb):
        if e is None or not isinstance(e, errors.PyMongoError):
            return False
        msg = f"mongodb: {self.doing}: {_one_line(e)}"
        if e.has_error_label("TransientTransactionError") or isinstance(e, errors.NotPrimaryError):
            raise RetryableError(msg) from None
        if isinstance(e, errors.ConnectionFailure):
            raise ConnectionLost(msg) from None
        raise DriverError(msg) from None
