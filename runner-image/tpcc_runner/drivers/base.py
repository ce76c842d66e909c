"""The contract between the database-agnostic runner and one database driver.

The executor, loader and workload rules know no database; a driver knows nothing of the
mix, the random generators or the clock. One module per database implements `Driver`.

Errors a driver raises during a transaction (anything else is a bug and is counted as an
error, never allowed to kill the runner):
- `UserAbort`: the expected TPC-C rollback (NewOrder with an unused item id). The
  transaction must have left no trace.
- `RetryableError`: the transaction did not commit and may be retried as is (transient
  transaction error, deadlock, write conflict, a primary step-down before commit).
- `UnknownOutcome`: the commit was sent but its outcome is unknown (VoltDB status -7,
  MongoDB UnknownTransactionCommitResult after retries, connection lost after commit).
- `ConnectionLost`: the connection is gone and the transaction did not commit; the driver
  has tried to reconnect (or will on the next call).
- `Unreachable`: `connect()` could not reach the database within its timeout.
- `NotPermitted`: the database refused the call for the connection's user.
- `NotLoaded`: the database has no (or a partial) TPC-C load for what was asked, or a row a
  transaction reads is not there (every driver says so with this one error).
"""

from __future__ import annotations

import abc
import contextlib
import datetime as dt
import signal
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tpcc_contract.deliveries import RunDeliveries
from tpcc_contract.server_stats import DatabaseSize, ServerCounters

from ..consistency import ConditionResult, WarehouseData, evaluate
from ..durability import from_epoch_ms
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
from .options import Option
from .options import parse as parse_options

if TYPE_CHECKING:
    from ..durability import StoredOrder

__all__ = ["ConditionResult"]  # drivers import it from here


class DriverError(Exception):
    """Base of every error a driver raises on purpose."""


class UserAbort(DriverError):
    """The TPC-C specified rollback (clause 2.4.2.3): rolled back, no trace left."""


class RetryableError(DriverError):
    """Did not commit; retrying the same transaction is safe."""


class UnknownOutcome(DriverError):
    """The commit may or may not have happened."""


class ConnectionLost(DriverError):
    """The connection dropped before commit; the transaction did not happen."""


class Unreachable(DriverError):
    """The database could not be reached within the connect timeout."""


class NotPermitted(DriverError):
    """The database refused the call for the connection's user (its roles or privileges)."""


class SnapshotUnavailable(DriverError):
    """The database (or its driver) cannot read what the consistency check needs in one
    snapshot, so a check while transactions run could report violations that are not there."""


class NotLoaded(DriverError):
    """The database is not loaded (or only partly) for the requested warehouses, or a row a
    transaction needs is missing."""


@dataclass
class ConnectionOptions:
    """What every driver accepts from the command line (`tpcc ... --db X`)."""

    # host:port pairs; the driver's default port applies when the port is missing
    endpoints: list[str] = field(default_factory=list)
    username: str | None = None
    password: str | None = None
    connect_timeout: float = 30.0
    # driver-specific options, "key=value" strings from repeated `--driver-opt`
    extra: dict[str, str] = field(default_factory=dict)


@dataclass
class LoadMeta:
    """Recorded in the database at load; the run reads it back."""

    warehouses: int  # warehouses the load was asked for
    items: int  # ITEM rows (100,000 per spec)
    districts: int  # per warehouse (10)
    customers_per_district: int  # 3,000 per spec
    orders_per_district: int  # 3,000 per spec (== customers_per_district)
    new_orders_per_district: int  # 900 per spec: the last orders are undelivered
    c_last: int  # C constants used at load (clause 2.1.6)
    c_id: int
    ol_i_id: int
    schema_variant: str  # e.g. "stored-procedures", "normalized", "denormalized"
    loaded_at: str  # ISO-8601 UTC
    complete: bool  # False until every load unit is done

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> LoadMeta:
        return cls(**{k: d[k] for k in cls.__dataclass_fields__})


class Driver(abc.ABC):
    """One connection to one database. The executor makes one Driver per client (in its
    own process), so a Driver need not be thread-safe."""

    #: name used on the command line and in results ("voltdb", "mongodb", ...)
    name: str = ""
    #: its `--driver-opt` keys (drivers/options.py): what it parses and what --help lists
    option_table: tuple[Option, ...] = ()

    def __init__(self, options: ConnectionOptions):
        self.options = options

    def parse_options(self) -> dict[str, Any]:
        """Every option of option_table, given or default; ValueError for an unknown key or a bad value."""
        return parse_options(self.name, self.option_table, self.options.extra)

    # -- lifecycle ---------------------------------------------------------------------
    @abc.abstractmethod
    def connect(self) -> None:
        """Open the connection; raise Unreachable (one-line message) after
        options.connect_timeout seconds."""

    @abc.abstractmethod
    def close(self) -> None: ...

    def describe(self) -> dict[str, Any]:
        """Options that shaped the run, for the results document: server version,
        schema variant, concerns... (JSON-serialisable)."""
        return {"db": self.name}

    # -- schema and load ---------------------------------------------------------------
    @abc.abstractmethod
    def create_schema(self, reset: bool) -> None:
        """Create tables/collections, indexes, procedures. With reset, drop all TPC-C data
        first. Without reset, an existing schema is kept (a resumed load)."""

    @abc.abstractmethod
    def read_meta(self) -> LoadMeta | None:
        """The LoadMeta written by write_meta, or None if there is none."""

    @abc.abstractmethod
    def write_meta(self, meta: LoadMeta) -> None: ...

    @abc.abstractmethod
    def done_units(self) -> set[str]:
        """Keys of load units already loaded completely (see load_unit)."""

    @abc.abstractmethod
    def load_unit(self, key: str, tables: dict[str, list[tuple]]) -> None:
        """Load one unit of the initial database and then record `key` as done, so a
        resumed load skips it. Rows are tuples in schema.TABLES column order. A unit is
        one of: "item:<chunk>" (item), "warehouse:<w>" (warehouse + its districts),
        "stock:<w>:<chunk>" (stock), "district:<w>:<d>" (customer, history, orders,
        order_line, new_order of one district: a driver that embeds order lines in
        orders has them together). Loading a unit that was partly loaded before (a crash
        mid-unit) must not leave duplicates: upsert, or delete the unit's key range first."""

    # -- the five transactions (clause 2); inputs are drawn by workload.py -------------
    @abc.abstractmethod
    def new_order(self, p: NewOrderInput) -> NewOrderOutput:
        """An i_id not in ITEM means: roll back and raise UserAbort."""

    @abc.abstractmethod
    def payment(self, p: PaymentInput) -> PaymentOutput:
        """By last name: the customer at position ceil(n/2) of those matching, sorted by
        c_first."""

    @abc.abstractmethod
    def order_status(self, p: OrderStatusInput) -> OrderStatusOutput:
        """The customer (chosen as by payment) and its order with the highest O_ID."""

    @abc.abstractmethod
    def delivery(self, p: DeliveryInput) -> DeliveryOutput:
        """Delivers the oldest undelivered order of each district."""

    @abc.abstractmethod
    def stock_level(self, p: StockLevelInput) -> StockLevelOutput:
        """Counts the items of the district's last 20 orders whose stock is below threshold."""

    # -- verification ------------------------------------------------------------------
    def check_consistency(
        self, warehouses: Iterable[int], deliveries: RunDeliveries | None = None, snapshot: bool = False
    ) -> list[ConditionResult]:
        """All 12 consistency conditions of clause 3.3.2.1-12, exact (every row), for the
        given warehouses, judged by consistency.Evaluator from what consistency_data fetches
        (one warehouse in memory at a time). Returns one ConditionResult per condition, 1..12.
        deliveries: the runners' acknowledged Deliveries for condition 11 (None: counted from
        ORDERS). snapshot: each warehouse read as one committed state (consistency_snapshot),
        for a check while transactions run."""
        meta = self.read_meta()
        if meta is None:
            raise NotLoaded(f"{self.name}: no TPC-C load recorded in this database: nothing to check")
        ws = sorted(set(int(w) for w in warehouses))
        if not ws:
            raise ValueError("no warehouse to check")
        beyond = [w for w in ws if not 1 <= w <= meta.warehouses]
        if beyond:
            raise NotLoaded(
                f"{self.name}: warehouse {beyond[0]} is not loaded (the load has warehouses 1-{meta.warehouses})"
            )
        read = self.consistency_snapshot if snapshot else self.consistency_data
        return evaluate(
            (read(w, meta) for w in ws),
            meta.districts,
            meta.orders_per_district - meta.new_orders_per_district,
            deliveries,
        )

    @abc.abstractmethod
    def consistency_data(self, w: int, meta: LoadMeta) -> WarehouseData:
        """Fetch (never judge) what the conditions need of warehouse w: its WAREHOUSE and
        DISTRICT rows, HISTORY sums per district and per customer, ORDERS, NEW-ORDER ids,
        ORDER-LINE aggregates per order (orphans included) and CUSTOMER money, all money in
        exact cents. Rows of districts beyond meta.districts are included too."""

    def consistency_snapshot(self, w: int, meta: LoadMeta) -> WarehouseData:
        """consistency_data as one committed state while other clients commit: a driver whose
        consistency_data reads in one transaction returns it; one that cannot, says why."""
        raise SnapshotUnavailable(
            f"{self.name}: the consistency check cannot read a warehouse in one "
            f"snapshot here: run it while no transactions run"
        )

    # -- what the server counts about itself (tpcc_contract.server_agreement judges; these only fetch) --
    def server_counters(self) -> ServerCounters:
        """The server's cumulative transaction counters now, grouped by the client transaction
        types whose work they count; ServerCounters.not_available(reason) where it keeps none.
        Must not raise for a server that refuses or lacks the command: say so instead."""
        return ServerCounters.not_available(f"{self.name}: the driver fetches no server counters")

    def database_size(self) -> DatabaseSize:
        """Data, index and storage bytes and the server's memory, as the server reports them."""
        return DatabaseSize(unavailable=f"{self.name}: the driver fetches no database size")

    # -- the durability ledger (durability.py judges; these only fetch) -------------------
    @abc.abstractmethod
    def stored_orders(self, keys: list[tuple[int, int, int]]) -> dict[tuple[int, int, int], StoredOrder]:
        """The order stored under each (w_id, d_id, o_id) that exists, with its lines."""

    @abc.abstractmethod
    def orders_entered_at(self, w_id: int, d_id: int, c_id: int, entry_ms: int) -> list[StoredOrder]:
        """The orders of customer (w_id, d_id, c_id) whose O_ENTRY_D is entry_ms (epoch
        milliseconds, UTC): where a NewOrder of unknown outcome is if it committed."""


def utcnow() -> dt.datetime:
    """Timezone-naive UTC with millisecond precision (what both databases store). Made from
    the epoch's milliseconds: datetime.now(timezone.utc) and its two replaces took 4 us, and
    a run makes one per NewOrder, Payment and Delivery."""
    return from_epoch_ms(time.time_ns() // 1_000_000)


@contextlib.contextmanager
def bounded(seconds: float, what: str):
    """A last line of defence against a driver call that ignores its timeout."""

    def expire(*_):
        raise TimeoutError(f"{what} did not finish within {seconds:.0f} s")

    old = signal.signal(signal.SIGALRM, expire)
    signal.alarm(max(1, int(seconds)))
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
