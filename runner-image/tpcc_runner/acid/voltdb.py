"""The ACID tests' database part for VoltDB. A VoltDB transaction is one stored-procedure call,
which a partition runs to its end before anything else: a client cannot hold one open. So the
first transaction is a test procedure (runner-image/voltdb/src/tpcc/acid/, in the procedures
jar) that runs the TPC-C procedure's own code (NewOrderBase, PaymentBase, DeliveryBase), sleeps
HOLD_MS inside its transaction and then commits or rolls back as asked; the second transaction,
the real procedure, is sent meanwhile on another connection. What that shows is VoltDB's
serial execution per partition (the second waits, in the clause's locking terms), with each
procedure atomic; it does not show locks, which VoltDB has none of. Re-reads (tests 7, 8, 9)
are test procedures reading twice inside one call around the sleep.

The adapter creates its procedures (sending the runner's jar with @UpdateClasses when they are
missing) and drops them when it closes, so a later `tpcc load --reset` drops the tables freely.

`weaken=` (tests only):
  separate-calls  each step is its own call and so its own transaction, as a client that splits
                  a TPC-C transaction over several calls (or ad-hoc statements) would have it:
                  the first transaction is the real procedure, committed at once, then "held" in
                  the client; its rollback has nothing left to undo; a re-read is a second call
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from ..consistency import Cents, cents_of
from ..drivers.base import ConnectionOptions, DriverError, NotLoaded, UserAbort
from ..drivers.voltdb import DECIMAL, INTEGER, STRING, TIMESTAMP, VARBINARY, VoltDBDriver, new_order_params
from ..transactions import DeliveryInput, PaymentInput
from .clause3 import (
    AtomicityObservation,
    ConsistencyObservation,
    DeliveryPaymentObservation,
    ItemPriceObservation,
    NewOrderPairObservation,
    NewOrderRows,
    OrderStatusObservation,
    PaymentRows,
    PhantomObservation,
    Pick,
    raised_price,
)
from .interleave import CONTENDED_RETRIES, interleave, retried, transactions_meanwhile

WEAKENINGS = ("separate-calls",)
HOLD_MS = 1500
# T1 is sent, then this long passes before T2 is: T1 is running (or queued first) by then.
START_SECONDS = 0.3
# T2 answering within this long after it was sent completed while T1 was held: T1 still sleeps
# then, and a procedure of a few rows takes milliseconds.
STALL_SECONDS = 0.6
ROLLED_BACK = "ACID test: rolled back as asked"  # tpcc.acid.Hold.ROLLED_BACK
# The test procedures and whether each is single-partition on its first parameter (w_id).
PROCEDURES = {
    "AcidHeldNewOrder": True,
    "AcidHeldPayment": True,
    "AcidHeldDelivery": True,
    "AcidRereadItemPrices": True,
    "AcidRereadNewOrders": True,
    "AcidRereadLastOrder": True,
    "AcidSetItemPrices": False,
}
SERIAL = (
    "VoltDB runs one procedure at a time per partition: T1 is the {what} procedure's own code in a test "
    "procedure that sleeps {hold} ms inside its transaction before it {ends} (a client cannot hold a "
    "VoltDB transaction open), T2 the real procedure sent meanwhile; this shows serial execution, "
    "not locks{more}"
)
REREAD = (
    "{reader} is a test procedure reading {what} twice inside one call around a {hold} ms sleep, {other} "
    "sent meanwhile; {more}"
)
WHOLE_NEW_ORDER = (
    "; T1 is a whole NewOrder rolled back, as the procedure checks the items before it writes "
    "(clause 2.4.2.2's profile has written ORDER when it meets the unused item)"
)


def _serial(what: str, ends: str, more: str = "") -> str:
    return SERIAL.format(what=what, hold=HOLD_MS, ends=ends, more=more)


NOTES = {
    "atomicity": "the rolled-back Payment is PaymentBase's code in a test procedure that aborts after its "
    "writes; the NewOrder is the real procedure's unused-item rollback",
    "isolation1": _serial("NewOrder", "commits"),
    "isolation2": _serial("NewOrder", "rolls back", WHOLE_NEW_ORDER),
    "isolation3": _serial("NewOrder", "commits"),
    "isolation4": _serial("NewOrder", "rolls back", WHOLE_NEW_ORDER),
    "isolation5": _serial("Delivery", "commits"),
    "isolation6": _serial("Delivery", "rolls back"),
    "isolation7": REREAD.format(
        reader="T2",
        what="I_PRICE of x, then x and y,",
        hold=HOLD_MS,
        other="T3",
        more="T3, the price update, is multi-partition (ITEM is replicated) and waits "
        "for every partition; T2 is only the New-Order's price reads",
    ),
    "consistency": "the check reads each warehouse with one multi-partition procedure call (ConsistencyRead), one "
    "transaction; the weakened check reads WAREHOUSE in one call and the rest in another",
    "isolation8": REREAD.format(
        reader="T1",
        what="the district's NEW-ORDER rows (Delivery's query)",
        hold=HOLD_MS,
        other="T2",
        more="not a whole Delivery",
    ),
    "isolation9": REREAD.format(
        reader="T1",
        what="the customer's last order (Order-Status's query)",
        hold=HOLD_MS,
        other="T2",
        more="not a whole Order-Status",
    ),
}
WEAKENED_NOTE = "weakened adapter, tests only: every step its own call, so its own transaction"


def _payment_params(p: PaymentInput) -> list:
    return [
        (INTEGER, p.w_id),
        (INTEGER, p.d_id),
        (INTEGER, p.c_w_id),
        (INTEGER, p.c_d_id),
        (INTEGER, p.c_id),
        (STRING, None),
        (DECIMAL, p.h_amount),
        (TIMESTAMP, p.h_date),
    ]


def _delivery_params(p: DeliveryInput) -> list:
    return [(INTEGER, p.w_id), (INTEGER, p.o_carrier_id), (TIMESTAMP, p.ol_delivery_d)]


def _money(cents: Cents) -> Decimal:
    return Decimal(cents).scaleb(-2)


def _ids(table) -> list[int]:
    return [row[0] for row in table.tuples]


class VoltDBAcid:
    name = "voltdb"
    not_applicable: dict[str, str] = {}
    needs = "add the test procedures (@UpdateClasses and CREATE PROCEDURE: the administrator role)"

    database_errors: tuple[type[Exception], ...] = ()  # the driver maps every failure onto DriverError

    def __init__(self, options: ConnectionOptions, weaken: str | None = None):
        if weaken is not None and weaken not in WEAKENINGS:
            raise ValueError(f"voltdb: unknown weakening {weaken!r} (tests only: {', '.join(WEAKENINGS)})")
        self.weaken = weaken
        self.notes = {test: WEAKENED_NOTE for test in NOTES} if weaken else NOTES
        self.held = VoltDBDriver(options)  # T1
        self.other = VoltDBDriver(options)  # T2, T3
        self.reader = VoltDBDriver(options)  # the judges' reads, and the test procedures' DDL

    def connect(self) -> None:
        for driver in (self.held, self.other, self.reader):
            driver.connect()
        present = self.reader._catalog("PROCEDURES", 2)
        missing = [name for name in PROCEDURES if name.lower() not in present]
        # Only the warehouse layout keeps a home warehouse's rows in its w_id partition: under
        # district (W_ID*10+D_ID) and d_id (WAREHOUSE replicated) a procedure single-partition on
        # w_id would see only the rows that happen to live there, so the test procedures are
        # multi-partition, as the driver's NewOrder is under those layouts
        by_warehouse = self.reader.partitioning == "warehouse"
        partition = "PARTITION ON TABLE warehouse COLUMN w_id PARAMETER 0 " if by_warehouse else ""
        if missing:
            self.reader._call(
                "@UpdateClasses",
                [(VARBINARY, self.reader._jar()), (STRING, "")],
                writes=True,
                timeout=self.reader.load_timeout,
            )
            self.reader._sql(
                "\n".join(
                    f"CREATE PROCEDURE {partition if single else ''}FROM CLASS tpcc.acid.{name};"
                    for name, single in PROCEDURES.items()
                    if name in missing
                ),
                writes=True,
                timeout=self.reader.load_timeout,
            )

    def close(self) -> None:
        try:
            present = self.reader._catalog("PROCEDURES", 2)
            drops = [f"DROP PROCEDURE {name};" for name in PROCEDURES if name.lower() in present]
            if drops:
                self.reader._sql("\n".join(drops), writes=True, timeout=self.reader.load_timeout)
        finally:
            for driver in (self.held, self.other, self.reader):
                driver.close()

    def describe(self) -> dict[str, Any]:
        return {**self.reader.describe(), **({"weakened": self.weaken} if self.weaken else {})}

    def observe(self, test: str, p: Pick):
        return getattr(self, test)(p)

    # -- T1 held, and re-reads --------------------------------------------------------------
    def _held(self, procedure: str, params: list, rollback: bool) -> Callable[[], Any]:
        """Send T1 on its own connection; returns what ends it: waiting for its answer (its
        tables, or None when it rolled back as asked)."""
        box: dict[str, Any] = {}

        def call() -> None:
            try:
                if self.weaken:  # the real procedure, committed at once; nothing is held
                    box["tables"] = self.held._call(procedure.removeprefix("AcidHeld"), params, writes=True).tables
                    time.sleep(HOLD_MS / 1000)
                else:
                    box["tables"] = self.held._call(
                        procedure, [*params, (INTEGER, HOLD_MS), (INTEGER, int(rollback))], writes=True
                    ).tables
            except DriverError as e:
                if ROLLED_BACK not in str(e):
                    box["error"] = e

        return self._started(call, box, "tables")

    def _reread(self, procedure: str, params: list, parse: Callable[[list], tuple]) -> Callable[[], tuple]:
        """Send T1's two reads; returns what waits for them: (first read, second read)."""
        box: dict[str, Any] = {}

        def call() -> None:
            try:
                if self.weaken:  # two calls: two transactions
                    first = parse(self.held._call(procedure, [*params, (INTEGER, 0)], writes=False).tables)[0]
                    time.sleep(HOLD_MS / 1000)
                    box["reads"] = (
                        first,
                        parse(self.held._call(procedure, [*params, (INTEGER, 0)], writes=False).tables)[1],
                    )
                else:
                    box["reads"] = parse(self.held._call(procedure, [*params, (INTEGER, HOLD_MS)], writes=False).tables)
            except DriverError as e:
                box["error"] = e

        return self._started(call, box, "reads")

    @staticmethod
    def _started(call: Callable[[], None], box: dict[str, Any], key: str) -> Callable[[], Any]:
        thread = threading.Thread(target=call, name="acid-held", daemon=True)
        thread.start()
        time.sleep(START_SECONDS)

        def end() -> Any:
            thread.join()
            if "error" in box:
                raise box["error"]
            return box.get(key)

        return end

    @staticmethod
    def _interleave(other: Callable[[], Any], end_held: Callable[[], Any], retry: bool = True):
        return interleave(other, end_held, retry, STALL_SECONDS)

    # -- reads for the judges -----------------------------------------------------------------
    def _one(self, sql: str, *params: int) -> list:
        rows = self.reader._sql(sql, *((INTEGER, v) for v in params))
        if not rows:
            raise NotLoaded(f"voltdb: no row for {sql} {params}")
        return rows[0]

    def _payment_rows(self, p: Pick) -> PaymentRows:
        (w_ytd,) = self._one("SELECT w_ytd FROM warehouse WHERE w_id = ?;", p.w_id)
        (d_ytd,) = self._one("SELECT d_ytd FROM district WHERE d_w_id = ? AND d_id = ?;", p.w_id, p.d_id)
        balance, ytd, count = self._one(
            "SELECT c_balance, c_ytd_payment, c_payment_cnt FROM customer "
            "WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?;",
            p.w_id,
            p.d_id,
            p.c_id,
        )
        rows, amount = self._one(
            "SELECT COUNT(*), SUM(h_amount) FROM history WHERE h_c_w_id = ? AND h_c_d_id = ? "
            "AND h_c_id = ? AND h_w_id = ? AND h_d_id = ?;",
            p.w_id,
            p.d_id,
            p.c_id,
            p.w_id,
            p.d_id,
        )
        return PaymentRows(
            cents_of(w_ytd), cents_of(d_ytd), cents_of(balance), cents_of(ytd), count, rows, cents_of(amount)
        )

    def _next_o_id(self, p: Pick) -> int:
        return self._one("SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?;", p.w_id, p.d_id)[0]

    def _new_order_rows(self, p: Pick) -> NewOrderRows:
        (orders,) = self._one(
            "SELECT COUNT(*) FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ?;", p.w_id, p.d_id, p.c_id
        )
        (new,) = self._one("SELECT COUNT(*) FROM new_order WHERE no_w_id = ? AND no_d_id = ?;", p.w_id, p.d_id)
        return NewOrderRows(self._next_o_id(p), orders, new)

    def _balance(self, p: Pick) -> Cents:
        return cents_of(
            self._one(
                "SELECT c_balance FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?;", p.w_id, p.d_id, p.c_id
            )[0]
        )

    def _oldest_new_order(self, p: Pick) -> tuple[int, int, Cents]:
        """(O_ID, its customer, sum(OL_AMOUNT)) of the order the next Delivery delivers in p's district."""
        oldest = self.reader._sql(
            "SELECT MIN(no_o_id) FROM new_order WHERE no_w_id = ? AND no_d_id = ?;",
            (INTEGER, p.w_id),
            (INTEGER, p.d_id),
        )
        if not oldest or oldest[0][0] is None:
            raise NotLoaded(f"voltdb: district ({p.w_id}, {p.d_id}) has no undelivered order to deliver")
        o_id = oldest[0][0]
        (c_id,) = self._one(
            "SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?;", p.w_id, p.d_id, o_id
        )
        (amount,) = self._one(
            "SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?;",
            p.w_id,
            p.d_id,
            o_id,
        )
        return o_id, c_id, cents_of(amount)

    def _prices(self, x: int, y: int) -> tuple[Cents, Cents]:
        price_x, price_y = (cents_of(self._one("SELECT i_price FROM item WHERE i_id = ?;", i)[0]) for i in (x, y))
        return price_x, price_y

    def _set_prices(self, driver: VoltDBDriver, x: int, y: int, prices: tuple[Cents, Cents]) -> tuple[Cents, Cents]:
        driver._call(
            "AcidSetItemPrices",
            [(INTEGER, x), (DECIMAL, _money(prices[0])), (INTEGER, y), (DECIMAL, _money(prices[1]))],
            writes=True,
        )
        return prices

    # -- the tests ------------------------------------------------------------------------
    def atomicity(self, p: Pick) -> AtomicityObservation:
        before = self._payment_rows(p)
        self.held.payment(p.payment())
        committed = (before, self._payment_rows(p))
        self._held("AcidHeldPayment", _payment_params(p.payment()), rollback=True)()
        rolled_back = (committed[1], self._payment_rows(p))
        before_order = self._new_order_rows(p)
        try:
            self.held.new_order(p.new_order(unused=True))
            raise DriverError("voltdb: a NewOrder with an unused item was not rolled back")
        except UserAbort:
            pass
        return AtomicityObservation(p.amount, committed, rolled_back, (before_order, self._new_order_rows(p)))

    def _order_status_test(self, p: Pick, commit: bool) -> OrderStatusObservation:
        before = self.reader.order_status(p.order_status()).o_id  # T0
        order = self._next_o_id(p)  # the number T1 takes
        end = self._held("AcidHeldNewOrder", new_order_params(p.new_order()), rollback=not commit)
        during, _ = self._interleave(lambda: self.other.order_status(p.order_status()).o_id, end)
        return OrderStatusObservation(before, order, during, self.reader.order_status(p.order_status()).o_id)

    def isolation1(self, p: Pick) -> OrderStatusObservation:
        return self._order_status_test(p, commit=True)

    def isolation2(self, p: Pick) -> OrderStatusObservation:
        return self._order_status_test(p, commit=False)

    def _new_order_pair(self, p: Pick, commit: bool) -> NewOrderPairObservation:
        next_before = self._next_o_id(p)
        end = self._held("AcidHeldNewOrder", new_order_params(p.new_order()), rollback=not commit)
        during, _ = self._interleave(lambda: self.other.new_order(p.new_order()).o_id, end)
        return NewOrderPairObservation(next_before, next_before, during, self._next_o_id(p))

    def isolation3(self, p: Pick) -> NewOrderPairObservation:
        return self._new_order_pair(p, commit=True)

    def isolation4(self, p: Pick) -> NewOrderPairObservation:
        return self._new_order_pair(p, commit=False)

    def _delivery_test(self, p: Pick, commit: bool) -> DeliveryPaymentObservation:
        o_id, c_id, amount = self._oldest_new_order(p)
        customer = dataclasses.replace(p, c_id=c_id)
        balance_before = self._balance(customer)
        end = self._held("AcidHeldDelivery", _delivery_params(p.delivery()), rollback=not commit)
        during, tables = self._interleave(lambda: self.other.payment(customer.payment()), end)
        if tables is not None and (p.d_id, o_id) not in {tuple(row) for row in tables[0].tuples}:
            raise DriverError(
                f"voltdb: the Delivery did not deliver order {o_id} of district {p.d_id} "
                "(is another client delivering?)"
            )
        return DeliveryPaymentObservation(balance_before, amount, p.amount, during, self._balance(customer))

    def isolation5(self, p: Pick) -> DeliveryPaymentObservation:
        return self._delivery_test(p, commit=True)

    def isolation6(self, p: Pick) -> DeliveryPaymentObservation:
        return self._delivery_test(p, commit=False)

    def isolation7(self, p: Pick) -> ItemPriceObservation:
        x, y = p.items[:2]
        initial = self._prices(x, y)  # T1
        raised = (raised_price(initial[0]), raised_price(initial[1]))

        def parse(tables: list) -> tuple:
            first_x, second_x, price_y = tables[0].tuples[0]
            return cents_of(first_x), (cents_of(second_x), cents_of(price_y))

        end = self._reread("AcidRereadItemPrices", [(INTEGER, p.w_id), (INTEGER, x), (INTEGER, y)], parse)
        try:
            raise_, (first_x, second) = self._interleave(
                lambda: self._set_prices(self.other, x, y, raised), end, retry=False
            )
            final = self._prices(x, y)  # T4
        finally:  # the benchmark's prices back
            self._set_prices(self.reader, x, y, initial)
        return ItemPriceObservation(initial, first_x, raise_, second, True, final)

    def _phantom_test(self, p: Pick, procedure: str, params: list) -> PhantomObservation:
        end = self._reread(procedure, params, lambda tables: (_ids(tables[0]), _ids(tables[1])))
        insert, (first, second) = self._interleave(lambda: self.other.new_order(p.new_order()).o_id, end, retry=False)
        return PhantomObservation(first, insert, second, True)

    def isolation8(self, p: Pick) -> PhantomObservation:
        return self._phantom_test(p, "AcidRereadNewOrders", [(INTEGER, p.w_id), (INTEGER, p.d_id)])

    def isolation9(self, p: Pick) -> PhantomObservation:
        return self._phantom_test(p, "AcidRereadLastOrder", [(INTEGER, p.w_id), (INTEGER, p.d_id), (INTEGER, p.c_id)])

    def consistency(self, p: Pick) -> ConsistencyObservation:
        """The check while another client commits; one more Payment of the warehouse it reads first
        commits right after the ConsistencyRead call that read WAREHOUSE. Weakened, that call reads
        WAREHOUSE alone and the rest is a second call: the Payment falls between them."""
        meta = self.reader.read_meta()
        if meta is None:
            raise NotLoaded("the database holds no TPC-C load: run `tpcc load` first")
        paid_between: list[int] = []
        first_warehouse = dataclasses.replace(p, w_id=1)  # check_consistency reads warehouse 1 first
        read = self.held.consistency_read

        def read_with_a_payment(w: int, first: int, last: int) -> list[list[list]]:
            split = 1 if self.weaken else last  # after WAREHOUSE, or after the whole read
            tables = read(w, first, split)
            if not paid_between:
                paid_between.append(
                    retried(lambda: self.other.payment(first_warehouse.payment()), CONTENDED_RETRIES).c_id
                )
            return tables + (read(w, split, last) if split < last else [])

        self.held.consistency_read = read_with_a_payment  # type: ignore[method-assign]
        try:
            with transactions_meanwhile(lambda: VoltDBDriver(self.other.options), meta) as committed:
                results = self.held.check_consistency(range(1, meta.warehouses + 1))
        finally:
            del self.held.consistency_read  # the class's method again
        return ConsistencyObservation([r.to_dict() for r in results], committed[0] + len(paid_between))
