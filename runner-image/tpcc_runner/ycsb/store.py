"""The contract between the YCSB executor and one database: YCSB's DB interface (read, scan,
update, insert) plus a batched load, N operations in one transaction, and the record count the
verifier needs. One store per client thread, like YCSB's DB instances.

A store returns what YCSB's bindings return as Status.OK or NOT_FOUND (None / False) and raises
the runner's driver errors (drivers/base.py) for everything else; the executor reports those as
Return=ERROR. A transaction is given its operations at once (a VoltDB transaction is one procedure call, so its
body cannot run on the client); an error aborts the whole.
"""

from __future__ import annotations

import abc
import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tpcc_contract.ycsb.properties import Properties

from ..drivers.base import ConnectionOptions
from ..drivers.options import Option
from ..processes import usable_cpus
from .workload import INSERT, READ, SCAN, UPDATE, Operation

Record = dict[str, bytes]

STORES = {
    "mongodb": "tpcc_runner.ycsb.mongodb:MongoDBStore",
    "voltdb": "tpcc_runner.ycsb.voltdb:VoltDBStore",
    "foundationdb": "tpcc_runner.ycsb.foundationdb:FoundationDBStore",
}


class KeyValueStore(abc.ABC):
    name = ""
    option_table: tuple[Option, ...] = ()  # its `--driver-opt` keys (drivers/options.py)

    def __init__(self, connection: ConnectionOptions, props: Properties):
        self.connection = connection
        self.props = props

    @classmethod
    def client_processes(cls, props: Properties, phase: str) -> int:
        """The client processes a command's threads are split over unless --processes says: as
        many as the CPUs this process may use (one process's threads pass the interpreter lock
        around every call)."""
        return usable_cpus()

    @abc.abstractmethod
    def connect(self) -> None:
        """Open the connection; raise Unreachable after connection.connect_timeout seconds."""

    @abc.abstractmethod
    def close(self) -> None: ...

    def describe(self) -> dict[str, Any]:
        return {"db": self.name}

    @abc.abstractmethod
    def create_schema(self, reset: bool) -> None:
        """Create the table (and procedures); with reset, drop its records first."""

    @abc.abstractmethod
    def load(self, records: list[tuple[str, Record]]) -> None:
        """Insert one batch of the load (batchsize records) at once; raise if it did not happen."""

    @abc.abstractmethod
    def read(self, key: str, fields: tuple[str, ...] | None) -> Mapping[str, bytes] | None:
        """The record's fields (all of them for None); None if there is no such record."""

    @abc.abstractmethod
    def scan(self, start_key: str, count: int, fields: tuple[str, ...] | None) -> list[tuple[str, Record]]:
        """Up to count (key, record) pairs in key order from start_key on."""

    @abc.abstractmethod
    def update(self, key: str, values: Record) -> bool:
        """Set these fields of the record; False if there is no such record."""

    @abc.abstractmethod
    def insert(self, key: str, values: Record) -> None:
        """Insert a new record; raise (DriverError) if the key is there already."""

    def apply(self, op: Operation) -> Any:
        """One operation's result: READ the record or None, UPDATE whether the record was there,
        INSERT None, SCAN the (key, record) pairs, READMODIFYWRITE (the record or None, found).
        An upsert INSERT is the load's write of one record (every store's load upserts)."""
        if op.kind == READ:
            return self.read(op.key, op.fields)
        if op.kind == UPDATE:
            return self.update(op.key, op.written)
        if op.kind == INSERT:
            return self.load([(op.key, op.written)]) if op.upsert else self.insert(op.key, op.written)
        if op.kind == SCAN:
            return self.scan(op.key, op.scan_length, op.fields)
        return self.read(op.key, op.fields), self.update(op.key, op.written)

    @abc.abstractmethod
    def transaction(self, ops: list[Operation]) -> list[Any]:
        """apply every operation, in order, as one database transaction, retried whole on a
        transient conflict; their results. If one fails none of them is written."""

    @abc.abstractmethod
    def count_records(self) -> int:
        """How many records the table holds (tpcc ycsb verify)."""

    def pipeline(self) -> Pipeline | None:
        """This store's connection as one on which several client threads' operations are in
        flight at once (pipelined.py drives them; the store is used through it only), for a
        store whose protocol tags its answers; None: one operation at a time per store."""
        return None

    def has_table(self) -> bool:
        """Whether the table is there (a database that came back empty after a fault may have
        lost it with its records). MongoDB and FoundationDB read a missing collection or
        directory as empty: only a store whose reads fail without their table overrides this."""
        return True


class Pipeline(abc.ABC):
    """Several operations in flight on one connection, each with its caller's tag. A step is one
    call: an operation's kind, or READ or UPDATE of a READMODIFYWRITE (its two calls in turn)."""

    @abc.abstractmethod
    def send(self, tag: int, step: str, op: Operation) -> None:
        """Queue the step's request (sent by the next exchange)."""

    @abc.abstractmethod
    def exchange(self, wait: float | None) -> list[tuple[int, Any]]:
        """Send what is queued, then wait up to `wait` seconds (None: as long as a call may take)
        for answers; the steps answered: (tag, the step's result as the store's read, update,
        insert or scan returns it, or the driver error it raised). When the connection fails or
        a call's time is up, every step in flight is answered with its error (UnknownOutcome for
        a write, ConnectionLost for a read) and the next exchange is on a new connection."""

    def compiled_clients(self, clients: Sequence[Any], shared: Any) -> tuple[Callable[[], None] | None, str]:
        """A compiled loop that runs these clients (pipelined.py's Client and Shared) on this
        pipeline, or None and why not ("": the store has none)."""
        return None, ""


def store_class(db: str) -> type[KeyValueStore]:
    try:
        module, cls = STORES[db].split(":")
    except KeyError:
        raise ValueError(f"unknown database {db!r} (choose from {', '.join(STORES)})") from None
    return getattr(importlib.import_module(module), cls)


def store_module(db: str) -> str:
    """The module of a database's store, for a process to import before it is needed."""
    return STORES[db].split(":")[0]


def make_store(db: str, connection: ConnectionOptions, props: Properties) -> KeyValueStore:
    return store_class(db)(connection, props)
