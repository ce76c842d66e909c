"""The MongoDB driver's connection: its options, the client and database handles, what the
run records of them, and the mapping of errors outside transactions."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pymongo
from pymongo import MongoClient, errors
from pymongo.read_concern import ReadConcern
from pymongo.read_preferences import ReadPreference
from pymongo.write_concern import WriteConcern
from tpcc_contract.server_stats import CounterGroup, DatabaseSize, ServerCounters

from ...redact import redact
from ..base import ConnectionLost, ConnectionOptions, Driver, DriverError, NotPermitted, RetryableError, Unreachable
from .config import DEFAULT_PORT, OPTIONS, UNAUTHORIZED

# The client transaction types; StockLevel runs in a transaction only when configured so.
TRANSACTION_TYPES = ("NEW_ORDER", "PAYMENT", "ORDER_STATUS", "DELIVERY", "STOCK_LEVEL")


def _one_line(e: BaseException, limit: int = 300) -> str:
    text = str(e).split(", full error:")[0].split(", Timeout:")[0]
    return " ".join(text.split())[:limit] or type(e).__name__


def topology_of(hello: dict) -> str:
    """What a `hello` reply says the driver is connected to: a mongos answers msg "isdbgrid",
    a replica-set member names its set."""
    if hello.get("msg") == "isdbgrid":
        return "sharded"
    return "replica_set" if hello.get("setName") else "standalone"


@contextmanager
def admin_errors(doing: str) -> Iterator[None]:
    """Maps pymongo errors of schema, load and check operations to one-line driver errors."""
    try:
        yield
    except errors.PyMongoError as e:
        msg = f"mongodb: {doing}: {_one_line(e)}"
        if isinstance(e, errors.OperationFailure) and e.code == UNAUTHORIZED:
            raise NotPermitted(msg) from None
        if isinstance(e, errors.NotPrimaryError):
            raise RetryableError(msg) from None
        if isinstance(e, errors.ConnectionFailure):
            raise ConnectionLost(msg) from None
        raise DriverError(msg) from None


class Connection(Driver):
    """Options, connect/close and collection access: what every other part of the driver
    builds on."""

    name = "mongodb"
    option_table = OPTIONS

    def __init__(self, connection: ConnectionOptions):
        super().__init__(connection)
        opt = self.parse_options()
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
        # consistency_snapshot's, while consistency_data reads in it
        self._snapshot_session: pymongo.client_session.ClientSession | None = None
        if not self.uri and not connection.endpoints:
            raise ValueError("mongodb: give endpoints (host[:port]) or driver option uri=")
        self._client: MongoClient | None = None  # set by connect(), read through .client
        self._db: pymongo.database.Database | None = None
        # each collection made once a connection: a pymongo Collection takes about 14 us to
        # make, and a NewOrder names eight
        self._collections: dict[str, pymongo.collection.Collection] = {}
        self._server_version = "unknown"
        self.topology = "unknown"  # then standalone, replica_set or sharded (topology_of)
        self._districts: int | None = None  # per warehouse, from the load metadata

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
            self._client = client = MongoClient(uri, **kwargs)
            with pymongo.timeout(self.options.connect_timeout):
                client.admin.command("ping")
                self._server_version = client.admin.command("buildInfo").get("version", "unknown")
                self.topology = topology_of(client.admin.command("hello"))
        except errors.ConfigurationError as e:
            self.close()
            raise ValueError(f"mongodb: bad connection settings for {where}: {_one_line(e)}") from None
        except errors.OperationFailure as e:
            self.close()
            raise Unreachable(f"mongodb: {where} refused the connection: {_one_line(e)}") from None
        except errors.PyMongoError as e:
            self.close()
            raise Unreachable(
                f"mongodb: no server reachable at {where} within {self.options.connect_timeout:g}s: {_one_line(e)}"
            ) from None
        outside_rc = "majority" if self.read_concern == "snapshot" else self.read_concern
        # load, metadata, checks and every transaction read the primary; only StockLevel
        # outside a transaction uses the configured read preference (see _stock_reader)
        self._db = client.get_database(
            self.database_name,
            read_concern=ReadConcern(outside_rc),
            write_concern=self._commit_write_concern(),
            read_preference=ReadPreference.PRIMARY,
        )
        self._collections = {}

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
        self._client = None
        self._db = None
        self._collections = {}

    @property
    def connected(self) -> bool:
        return self._client is not None

    @property
    def client(self) -> MongoClient:
        if self._client is None:
            raise ConnectionLost("mongodb: not connected (call connect() first)")
        return self._client

    @property
    def db(self) -> pymongo.database.Database:
        if self._db is None:
            raise ConnectionLost("mongodb: not connected (call connect() first)")
        return self._db

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
        coll = self._collections.get(name)
        if coll is None:
            coll = self._collections[name] = self.db[name]
        return coll

    def _commit_write_concern(self) -> WriteConcern:
        return WriteConcern(w=self.write_concern, j=True if self.journal else None)


class ServerStatistics(Connection):
    """What the server counts about itself: serverStatus and dbStats, fetched, never judged."""

    def server_counters(self) -> ServerCounters:
        """serverStatus opcounters and, where the server keeps them, its transactions section:
        totalCommitted counts the types that run in a multi-document transaction. Its
        totalAborted also counts transactions aborted on a write conflict and retried, so it
        is reported, not compared with the clients' rollbacks."""
        try:
            status = self.client.admin.command("serverStatus")
        except errors.PyMongoError as e:
            return ServerCounters.not_available(f"mongodb: serverStatus: {_one_line(e)}")
        counters = {
            f"opcounters.{k}": int(v)
            for k, v in (status.get("opcounters") or {}).items()
            if isinstance(v, (int, float))
        }
        txns = status.get("transactions")
        if isinstance(txns, dict):
            counters.update(
                {
                    f"transactions.{k}": int(v)
                    for k, v in txns.items()
                    if k.startswith("total") and isinstance(v, (int, float))
                }
            )
        if not self.transactions:
            return ServerCounters.not_available(
                "mongodb: transactions=false: no multi-document transaction for the server to count", counters
            )
        if "transactions.totalCommitted" not in counters:
            return ServerCounters.not_available(
                f"mongodb: serverStatus has no transactions.totalCommitted (server {self._server_version}"
                f"{', SecantusDB' if 'secantus' in status else ''} does not count transactions)",
                counters,
            )
        types = tuple(t for t in TRANSACTION_TYPES if t != "STOCK_LEVEL" or self.stock_level_in_transaction)
        group = CounterGroup(
            "serverStatus transactions.totalCommitted",
            types,
            committed=counters["transactions.totalCommitted"],
            aborted=None,
        )
        return ServerCounters(time.time(), (group,), counters)

    def database_size(self) -> DatabaseSize:
        """dbStats of the TPC-C database (bytes, uncompressed data; storage on disk)."""
        try:
            stats = self.db.command("dbStats")
        except errors.PyMongoError as e:
            return DatabaseSize(unavailable=f"mongodb: dbStats: {_one_line(e)}")
        figures = {
            k: int(stats[k])
            for k in ("dataSize", "indexSize", "storageSize", "totalSize", "objects", "collections")
            if isinstance(stats.get(k), (int, float))
        }
        return DatabaseSize(
            data_bytes=figures.get("dataSize"),
            index_bytes=figures.get("indexSize"),
            storage_bytes=figures.get("storageSize"),
            details=figures,
        )
