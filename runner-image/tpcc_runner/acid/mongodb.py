"""The ACID tests' database part for MongoDB: transactions held open part-way in a session
(start_transaction with the driver's read and write concerns, as its own transactions run),
the driver's own transaction bodies run in them, another transaction let run meanwhile on a
second connection, and the rows the judges compare read before and after on a third. It
decides nothing: acid/clause3.py judges what it returns.

MongoDB transactions are snapshot-isolated whatever the read concern: a transaction never
waits for another; the second writer of a document is rolled back at once (WriteConflict,
labelled TransientTransactionError), which the clause accepts as one of the two being rolled
back; a reader completes and sees the snapshot it started with.

`weaken=` (tests only: it shows each test can fail, never for a real database):
  no-transaction             the driver's transactions=false: every statement commits on its
                             own and a rollback undoes nothing (a real configuration: the
                             FoundationDB study's "mongo3")
  reads-outside-transaction  reads (find, aggregate) leave the session out, so they read the
                             latest committed data instead of the transaction's snapshot; writes
                             stay in the transaction (a driver that forgets session= on its reads)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

from bson.int64 import Int64
from pymongo import errors
from pymongo.read_concern import ReadConcern
from pymongo.read_preferences import ReadPreference

from ..consistency import Cents
from ..drivers.base import ConnectionOptions, DriverError, NotLoaded, UserAbort
from ..drivers.mongodb import MongoDBDriver, _InvalidItem, _stored_cents
from ..drivers.mongodb.documents import embedded_rows
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

WEAKENINGS = ("no-transaction", "reads-outside-transaction")
R = TypeVar("R")


class _ReadsOutsideTransaction:
    """A collection whose reads drop their session (weaken=reads-outside-transaction)."""

    READS = frozenset({"find", "find_one", "aggregate", "count_documents"})

    def __init__(self, collection):
        self._collection = collection

    def __getattr__(self, name: str):
        attr = getattr(self._collection, name)
        if name not in self.READS:
            return attr

        def outside(*args, session=None, **kwargs):
            return attr(*args, **kwargs)

        return outside


def _conflict(e: errors.PyMongoError) -> bool:
    return e.has_error_label("TransientTransactionError")


def _reading_outside_transactions(coll: Callable[[str], Any]) -> Callable[[str], Any]:
    return lambda name: _ReadsOutsideTransaction(coll(name))


class _Held:
    """A transaction of `driver` left open between the statements the test runs in it (the
    driver's _run starts and commits in one go, which is what the tests must not do)."""

    def __init__(self, driver: MongoDBDriver, read_concern: str | None = None):
        self.session = driver.client.start_session(causal_consistency=driver.causal)
        if driver.transactions:  # weaken=no-transaction: each statement commits on its own
            self.session.start_transaction(
                read_concern=ReadConcern(read_concern or driver.read_concern),
                write_concern=driver._commit_write_concern(),
                read_preference=ReadPreference.PRIMARY,
            )

    def commit(self) -> bool:
        """True once committed; False when the database rolled it back (a write conflict)."""
        try:
            if self.session.in_transaction:
                self.session.commit_transaction()
            return True
        except errors.PyMongoError as e:
            if _conflict(e):
                return False
            raise
        finally:
            self.session.end_session()

    def abort(self) -> None:
        try:
            if self.session.in_transaction:
                self.session.abort_transaction()
        finally:
            self.session.end_session()

    def finish(self, body: Callable[[Any], R]) -> tuple[R | None, bool]:
        """Run the rest of the transaction, then commit: (body's value, committed)."""
        try:
            value = body(self.session)
        except errors.PyMongoError as e:
            self.abort()
            if _conflict(e):
                return None, False
            raise
        return value, self.commit()


class MongoDBAcid:
    name = "mongodb"
    not_applicable: dict[str, str] = {}
    needs = "read and write the TPC-C collections in transactions (the readWrite role on its database)"
    notes: dict[str, str] = {}
    # the driver's transaction bodies, run here outside its _run, raise pymongo's own errors
    database_errors = (errors.PyMongoError,)

    def __init__(self, options: ConnectionOptions, weaken: str | None = None):
        if weaken is not None and weaken not in WEAKENINGS:
            raise ValueError(f"mongodb: unknown weakening {weaken!r} (tests only: {', '.join(WEAKENINGS)})")
        extra = dict(options.extra, **({"transactions": "false"} if weaken == "no-transaction" else {}))
        weakened = dataclasses.replace(options, extra=extra)
        self.weaken = weaken
        self.held = MongoDBDriver(weakened)  # T1: the transaction held open
        self.other = MongoDBDriver(weakened)  # T2 (and T3): run meanwhile
        self.reader = MongoDBDriver(options)  # the judges' reads, never weakened

    def connect(self) -> None:
        for driver in (self.held, self.other, self.reader):
            driver.connect()
        meta = self.reader.read_meta()
        self.held._districts = meta.districts if meta else 10  # _delivery's district count
        if self.weaken == "reads-outside-transaction":
            for driver in (self.held, self.other):
                # the weakening: every collection the driver opens reads outside its transaction
                driver._coll = _reading_outside_transactions(driver._coll)  # type: ignore[method-assign,assignment]

    def close(self) -> None:
        for driver in (self.held, self.other, self.reader):
            driver.close()

    def describe(self) -> dict[str, Any]:
        return {**self.reader.describe(), **({"weakened": self.weaken} if self.weaken else {})}

    def observe(self, test: str, p: Pick):
        return getattr(self, test)(p)

    # -- reads for the judges (committed data, no session) ----------------------------------
    def _one(self, table: str, key: dict, fields: list[str]) -> dict:
        doc = self.reader._coll(table).find_one(key, {"_id": 0, **{f: 1 for f in fields}})
        if doc is None:
            raise NotLoaded(f"mongodb: no {table} {key}")
        return doc

    def _rows(self, table: str, query: dict) -> list[dict]:
        """ORDERS or HISTORY rows matching query, flat, wherever the schema keeps them (the
        embedded schema: in the customer documents)."""
        if self.reader.schema == "embedded":
            return list(self.reader._coll("customer").aggregate(embedded_rows(table, query)))
        return list(self.reader._coll(table).find(query))

    def _payment_rows(self, p: Pick) -> PaymentRows:
        w = self._one("warehouse", {"w_id": p.w_id}, ["w_ytd"])
        d = self._one("district", {"d_w_id": p.w_id, "d_id": p.d_id}, ["d_ytd"])
        c = self._one(
            "customer",
            {"c_w_id": p.w_id, "c_d_id": p.d_id, "c_id": p.c_id},
            ["c_balance", "c_ytd_payment", "c_payment_cnt"],
        )
        history = [
            h["h_amount"]
            for h in self._rows(
                "history",
                {"h_c_w_id": p.w_id, "h_c_d_id": p.d_id, "h_c_id": p.c_id, "h_w_id": p.w_id, "h_d_id": p.d_id},
            )
        ]
        return PaymentRows(
            _stored_cents(w["w_ytd"]),
            _stored_cents(d["d_ytd"]),
            _stored_cents(c["c_balance"]),
            _stored_cents(c["c_ytd_payment"]),
            c["c_payment_cnt"],
            len(history),
            sum(_stored_cents(h) for h in history),
        )

    def _next_o_id(self, p: Pick) -> int:
        return self._one("district", {"d_w_id": p.w_id, "d_id": p.d_id}, ["d_next_o_id"])["d_next_o_id"]

    def _new_order_rows(self, p: Pick) -> NewOrderRows:
        orders = len(self._rows("orders", {"o_w_id": p.w_id, "o_d_id": p.d_id, "o_c_id": p.c_id}))
        new = self.reader._coll("new_order").count_documents({"no_w_id": p.w_id, "no_d_id": p.d_id})
        return NewOrderRows(self._next_o_id(p), orders, new)

    def _balance(self, w: int, d: int, c: int) -> Cents:
        return _stored_cents(self._one("customer", {"c_w_id": w, "c_d_id": d, "c_id": c}, ["c_balance"])["c_balance"])

    def _oldest_new_order(self, p: Pick) -> tuple[int, int, Cents]:
        """(O_ID, its customer, sum(OL_AMOUNT)) of the order the next Delivery delivers in p's district."""
        oldest = list(
            self.reader._coll("new_order")
            .find({"no_w_id": p.w_id, "no_d_id": p.d_id}, {"no_o_id": 1})
            .sort("no_o_id", 1)
            .limit(1)
        )
        if not oldest:
            raise NotLoaded(f"mongodb: district ({p.w_id}, {p.d_id}) has no undelivered order to deliver")
        o_id = oldest[0]["no_o_id"]
        found = self._rows("orders", {"o_w_id": p.w_id, "o_d_id": p.d_id, "o_id": o_id})
        if not found:
            raise NotLoaded(f"mongodb: no order ({p.w_id}, {p.d_id}, {o_id})")
        order = found[0]
        lines = (
            order.get("order_line")
            if self.reader.schema != "normalized"
            else list(self.reader._coll("order_line").find({"ol_w_id": p.w_id, "ol_d_id": p.d_id, "ol_o_id": o_id}))
        )
        return o_id, order["o_c_id"], sum(_stored_cents(ol["ol_amount"]) for ol in lines or [])

    def _prices(self, x: int, y: int) -> tuple[Cents, Cents]:
        price_x, price_y = (_stored_cents(self._one("item", {"i_id": i}, ["i_price"])["i_price"]) for i in (x, y))
        return price_x, price_y

    # -- the tests ------------------------------------------------------------------------
    def atomicity(self, p: Pick) -> AtomicityObservation:
        before = self._payment_rows(p)
        self.held.payment(p.payment())
        committed = (before, self._payment_rows(p))
        held = _Held(self.held)
        self.held._payment(held.session, p.payment())  # every write done, then ROLLBACK for COMMIT
        held.abort()
        rolled_back = (committed[1], self._payment_rows(p))
        before_order = self._new_order_rows(p)
        try:
            self.held.new_order(p.new_order(unused=True))
            raise DriverError("mongodb: a NewOrder with an unused item was not rolled back")
        except UserAbort:
            pass
        return AtomicityObservation(p.amount, committed, rolled_back, (before_order, self._new_order_rows(p)))

    def _order_status_test(self, p: Pick, commit: bool) -> OrderStatusObservation:
        before = self.reader.order_status(p.order_status()).o_id  # T0
        held = _Held(self.held)
        order = self.held._new_order(held.session, p.new_order()).o_id
        during, _ = interleave(
            lambda: self.other.order_status(p.order_status()).o_id, held.commit if commit else held.abort
        )
        return OrderStatusObservation(before, order, during, self.reader.order_status(p.order_status()).o_id)

    def isolation1(self, p: Pick) -> OrderStatusObservation:
        return self._order_status_test(p, commit=True)

    def isolation2(self, p: Pick) -> OrderStatusObservation:
        # Clause 2.4.2.2's profile has written ORDER when it meets the unused item; the driver
        # checks the items before writing, so T1 is a complete NewOrder rolled back instead.
        return self._order_status_test(p, commit=False)

    def isolation3(self, p: Pick) -> NewOrderPairObservation:
        next_before = self._next_o_id(p)
        held = _Held(self.held)
        order = self.held._new_order(held.session, p.new_order()).o_id
        during, _ = interleave(lambda: self.other.new_order(p.new_order()).o_id, held.commit)
        return NewOrderPairObservation(next_before, order, during, self._next_o_id(p))

    def isolation4(self, p: Pick) -> NewOrderPairObservation:
        next_before = self._next_o_id(p)
        held = _Held(self.held)
        try:
            self.held._new_order(held.session, p.new_order(unused=True))
            raise DriverError("mongodb: a NewOrder with an unused item did not stop at its rollback")
        except _InvalidItem:
            pass  # T1 stands at its ROLLBACK, D_NEXT_O_ID taken
        during, _ = interleave(lambda: self.other.new_order(p.new_order()).o_id, held.abort)
        return NewOrderPairObservation(next_before, next_before, during, self._next_o_id(p))

    def _delivery_test(self, p: Pick, commit: bool) -> DeliveryPaymentObservation:
        o_id, c_id, amount = self._oldest_new_order(p)
        balance_before = self._balance(p.w_id, p.d_id, c_id)
        held = _Held(self.held)
        delivered = self.held._delivery(held.session, p.delivery()).delivered
        if (p.d_id, o_id) not in delivered:
            held.abort()
            raise DriverError(
                f"mongodb: the Delivery did not deliver order {o_id} of district {p.d_id} "
                "(is another client delivering?)"
            )
        payment = dataclasses.replace(p, c_id=c_id).payment()
        during, _ = interleave(lambda: self.other.payment(payment), held.commit if commit else held.abort)
        return DeliveryPaymentObservation(balance_before, amount, p.amount, during, self._balance(p.w_id, p.d_id, c_id))

    def isolation5(self, p: Pick) -> DeliveryPaymentObservation:
        return self._delivery_test(p, commit=True)

    def isolation6(self, p: Pick) -> DeliveryPaymentObservation:
        return self._delivery_test(p, commit=False)

    def isolation7(self, p: Pick) -> ItemPriceObservation:
        x, y = p.items[:2]
        initial = self._prices(x, y)  # T1
        raised = (raised_price(initial[0]), raised_price(initial[1]))

        def price(session, i: int) -> Cents:
            item = self.held._coll("item").find_one({"i_id": i}, {"i_price": 1}, session=session)
            return _stored_cents(item["i_price"])

        def raise_prices(session) -> tuple[Cents, Cents]:  # T3
            for i, new in zip((x, y), raised):
                self.other._coll("item").update_one({"i_id": i}, {"$set": {"i_price": Int64(new)}}, session=session)
            return raised

        def rest_of_new_order(session) -> tuple[Cents, Cents]:  # T2 after its first read of x
            second = (price(session, x), price(session, y))
            self.held._new_order(session, p.new_order(items=(x, x, y)))
            return second

        held = _Held(self.held)  # T2
        first_x = price(held.session, x)
        try:
            raise_, (second, committed) = interleave(
                lambda: self.other._run(raise_prices), lambda: held.finish(rest_of_new_order), retry=False
            )
            final = self._prices(x, y)  # T4
        finally:  # the benchmark's prices back
            for i, old in zip((x, y), initial):
                self.reader._coll("item").update_one({"i_id": i}, {"$set": {"i_price": Int64(old)}})
        return ItemPriceObservation(initial, first_x, raise_, second or (None, None), committed, final)

    def _phantom_test(
        self, p: Pick, read: Callable[[Any], list[int]], then: Callable[[Any], Any]
    ) -> PhantomObservation:
        held = _Held(self.held)
        first = read(held.session)

        def rest(session) -> list[int]:
            second = read(session)
            then(session)
            return second

        insert, (second, committed) = interleave(
            lambda: self.other.new_order(p.new_order()).o_id, lambda: held.finish(rest), retry=False
        )
        return PhantomObservation(first, insert, second or [], committed)

    def isolation8(self, p: Pick) -> PhantomObservation:
        # The clause empties the district's NEW-ORDER rows first, which would break consistency
        # condition 5 of a benchmark database: T1 reads all of them (Delivery's search condition)
        # instead, and a phantom is a row its re-read finds that the first read did not.
        def new_orders(session) -> list[int]:
            return sorted(
                n["no_o_id"]
                for n in self.held._coll("new_order").find(
                    {"no_w_id": p.w_id, "no_d_id": p.d_id}, {"no_o_id": 1}, session=session
                )
            )

        return self._phantom_test(p, new_orders, lambda s: self.held._delivery(s, p.delivery()))

    def isolation9(self, p: Pick) -> PhantomObservation:
        def last_order(session) -> list[int]:
            o_id = self.held._order_status(session, p.order_status()).o_id
            return [] if o_id is None else [o_id]  # the customer's last order, if any

        return self._phantom_test(p, last_order, lambda s: None)

    def consistency(self, p: Pick) -> ConsistencyObservation:
        """The driver's own snapshot check (one snapshot transaction per warehouse) while another
        client commits, and one more Payment of the warehouse it reads first right after it read
        WAREHOUSE. A driver without transactions reads statement by statement."""
        meta = self.reader.read_meta()
        if meta is None:
            raise NotLoaded("the database holds no TPC-C load: run `tpcc load` first")
        paid_between: list[int] = []
        first_warehouse = dataclasses.replace(p, w_id=1)  # check_consistency reads warehouse 1 first
        plain = self.held._coll

        def coll(name: str):
            if name == "district" and not paid_between:  # WAREHOUSE is read, DISTRICT not yet
                paid_between.append(
                    retried(lambda: self.other.payment(first_warehouse.payment()), CONTENDED_RETRIES).c_id
                )
            return plain(name)

        self.held._coll = coll  # type: ignore[method-assign]  # the Payment between two reads
        try:
            with transactions_meanwhile(lambda: MongoDBDriver(self.other.options), meta) as committed:
                results = self.held.check_consistency(range(1, meta.warehouses + 1), snapshot=self.held.transactions)
        finally:
            self.held._coll = plain  # type: ignore[method-assign]
        return ConsistencyObservation([r.to_dict() for r in results], committed[0] + len(paid_between))
