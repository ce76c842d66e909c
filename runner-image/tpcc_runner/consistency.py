"""The twelve consistency conditions of TPC-C clause 3.3.2: the one judge of every database.

A driver only fetches: for one warehouse at a time it fills a `WarehouseData` (the rows the
conditions need, aggregated per order and per customer where a sum is exact) and hands it to
an `Evaluator`, which decides. So every database is judged by the same code, memory is bounded
by one warehouse, and a test can fool the judge without a database.

Money is integer cents (or, where a database stored a sub-cent fraction, a Decimal number of
cents): sums and comparisons are exact, a 0.01 drift is a violation. Rows that reference a
missing parent (a NEW-ORDER or ORDER-LINE without its ORDER, rows of a district without a
DISTRICT row, payments of a missing customer) are violations reported by row."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from tpcc_contract.deliveries import RunDeliveries

Cents = int | Decimal

CONDITIONS: dict[int, str] = {
    1: "W_YTD = sum(D_YTD) for each warehouse",
    2: "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) for each district "
    "(the NEW-ORDER part only where the district has NEW-ORDER rows)",
    3: "max(NO_O_ID) - min(NO_O_ID) + 1 = count(NEW-ORDER rows) for each district with NEW-ORDER rows",
    4: "sum(O_OL_CNT) = count(ORDER-LINE rows) for each district",
    5: "O_CARRIER_ID is null iff a NEW-ORDER row exists, for each order (and no NEW-ORDER row without its ORDER)",
    6: "O_OL_CNT = count(ORDER-LINE rows) of the order, for each order (and no ORDER-LINE row without its ORDER)",
    7: "OL_DELIVERY_D is null iff the order's O_CARRIER_ID is null, for each order line",
    8: "W_YTD = sum(H_AMOUNT) for each warehouse",
    9: "D_YTD = sum(H_AMOUNT) for each district",
    10: "C_BALANCE = sum(OL_AMOUNT of delivered lines) - sum(H_AMOUNT), for each customer",
    # The clause's "= 2100" holds for the initial database only: each Delivery moves one order
    # out of NEW-ORDER. The delivered count comes from the runners' acknowledged Deliveries
    # (--deliveries), which ORDERS cannot vouch for itself (see docs/results.md).
    11: "count(ORDER) - count(NEW-ORDER) = initially delivered orders (2100 per spec) + orders "
    "delivered since the load, for each district",
    12: "C_BALANCE + C_YTD_PAYMENT = sum(OL_AMOUNT of delivered lines), for each customer",
}

# What each condition counts in `checked`: a condition that checked none of them fails.
SUBJECTS: dict[int, str] = {
    1: "WAREHOUSE rows",
    2: "districts",
    3: "districts with NEW-ORDER rows",
    4: "districts",
    5: "ORDER and NEW-ORDER rows",
    6: "ORDER rows",
    7: "ORDER-LINE rows",
    8: "WAREHOUSE rows",
    9: "districts",
    10: "CUSTOMER rows",
    11: "districts",
    12: "CUSTOMER rows",
}

NOTE_11_FROM_ORDERS = (
    "no --deliveries given: orders delivered since the load counted from "
    "ORDERS (O_ID beyond the initial ones with O_CARRIER_ID set), which a lost "
    "delivered order cannot fail"
)
NOTE_11_FROM_RUNS = "orders delivered since the load from the runners' acknowledged Deliveries"


def dollars(amount: Cents) -> str:
    """Cents as an exact dollar string (sub-cent digits shown, never rounded away)."""
    return str(Decimal(amount).scaleb(-2))


def cents_of(value: Decimal | int | None) -> Cents:
    """A database's exact decimal dollars as cents: an int, or a Decimal when the stored value
    has a sub-cent fraction (which a comparison then shows)."""
    if value is None:
        return 0
    c = Decimal(value).scaleb(2)
    return int(c) if c == c.to_integral_value() else c.normalize()


@dataclass
class ConditionResult:
    number: int  # 1..12 (clause 3.3.2.<number>)
    passed: bool
    checked: int = 0  # rows/groups examined
    violations: int = 0
    example: str | None = None  # one violating row, human readable
    note: str | None = None  # how the condition was evaluated, where that varies

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


# -- what a driver fetches -----------------------------------------------------------------


@dataclass
class OrderRow:
    customer: int  # O_C_ID
    carrier: int | None  # O_CARRIER_ID
    ol_cnt: int  # O_OL_CNT


@dataclass
class OrderLines:
    """The ORDER-LINE rows of one (W, D, O_ID), aggregated."""

    count: int = 0
    undelivered: int = 0  # OL_DELIVERY_D is null
    delivered_amount: Cents = 0  # sum(OL_AMOUNT) where OL_DELIVERY_D is not null

    def add(self, count: int, undelivered: int, delivered_amount: Cents) -> None:
        self.count += count
        self.undelivered += undelivered
        self.delivered_amount += delivered_amount


@dataclass
class CustomerRow:
    balance: Cents  # C_BALANCE
    ytd_payment: Cents  # C_YTD_PAYMENT


@dataclass
class DistrictRow:
    ytd: Cents  # D_YTD
    next_o_id: int  # D_NEXT_O_ID


@dataclass
class DistrictData:
    """Everything of one (W_ID, D_ID); `row` is None when there is no DISTRICT row."""

    row: DistrictRow | None = None
    paid_here: Cents = 0  # sum(H_AMOUNT) of HISTORY rows with (H_W_ID, H_D_ID) = this
    orders: dict[int, OrderRow] = field(default_factory=dict)  # by O_ID
    new_orders: set[int] = field(default_factory=set)  # NO_O_ID
    lines: dict[int, OrderLines] = field(default_factory=dict)  # by OL_O_ID
    customers: dict[int, CustomerRow] = field(default_factory=dict)  # by C_ID
    # sum(H_AMOUNT) by H_C_ID of HISTORY rows with (H_C_W_ID, H_C_D_ID) = this district
    paid_by_customer: dict[int, Cents] = field(default_factory=dict)

    def order_lines(self, o_id: int) -> OrderLines:
        return self.lines.setdefault(o_id, OrderLines())

    def pay(self, c_id: int, amount: Cents) -> None:
        self.paid_by_customer[c_id] = self.paid_by_customer.get(c_id, 0) + amount


@dataclass
class WarehouseData:
    w_id: int
    ytd: Cents | None = None  # W_YTD; None when there is no WAREHOUSE row
    districts: dict[int, DistrictData] = field(default_factory=dict)

    def district(self, d_id: int) -> DistrictData:
        return self.districts.setdefault(d_id, DistrictData())


# -- condition 11's independent count ------------------------------------------------------


def read_deliveries(paths: Iterable[str]) -> RunDeliveries:
    """The deliveries of several runners (one file each), summed."""
    total = RunDeliveries()
    for path in paths:
        try:
            with open(path) as f:
                doc = json.load(f)
        except OSError as e:
            raise ValueError(f"--deliveries {path}: {e.strerror}") from None
        except json.JSONDecodeError as e:
            raise ValueError(f"--deliveries {path}: not JSON ({e.msg} at line {e.lineno})") from None
        total.merge(RunDeliveries.from_json(doc, f"--deliveries {path}"))
    return total


# -- the judge ------------------------------------------------------------------------------


class Evaluator:
    """Clause 3.3.2.1-12 over the warehouses added one at a time."""

    def __init__(self, districts: int, initially_delivered: int, deliveries: RunDeliveries | None = None):
        self.districts = districts
        self.initially_delivered = initially_delivered
        self.deliveries = deliveries
        self.checked = [0] * 13
        self.violations = [0] * 13
        self.examples: list[str | None] = [None] * 13
        self.warehouses = 0
        self.new_order_rows = 0

    def _check(self, n: int, ok: bool, example: str) -> None:
        self.checked[n] += 1
        if not ok:
            self._violate(n, example)

    def _violate(self, n: int, example: str, count: int = 1) -> None:
        self.violations[n] += count
        if self.examples[n] is None:
            self.examples[n] = example

    def results(self) -> list[ConditionResult]:
        out = []
        for n in range(1, 13):
            r = ConditionResult(n, self.violations[n] == 0, self.checked[n], self.violations[n], self.examples[n])
            vacuous = n == 3 and self.new_order_rows == 0  # no NEW-ORDER rows: nothing to span
            if r.checked == 0 and r.passed and not vacuous:
                r.passed = False
                r.example = (
                    f"checked nothing: no {SUBJECTS[n]} found in "
                    f"{self.warehouses} warehouse(s) (the driver read nothing?)"
                )
            if n == 11:
                r.note = NOTE_11_FROM_RUNS if self.deliveries else NOTE_11_FROM_ORDERS
            out.append(r)
        return out

    def add(self, wh: WarehouseData) -> None:
        w = wh.w_id
        self.warehouses += 1
        for d in range(1, self.districts + 1):
            wh.district(d)  # every district the load made is checked, present or not

        # 1, 8
        sum_d_ytd = sum(dd.row.ytd for dd in wh.districts.values() if dd.row is not None)
        paid = sum(dd.paid_here for dd in wh.districts.values())
        if wh.ytd is None:
            for n in (1, 8):
                self._check(n, False, f"warehouse {w}: no WAREHOUSE row")
        else:
            self._check(
                1, wh.ytd == sum_d_ytd, f"warehouse {w}: W_YTD={dollars(wh.ytd)}, sum(D_YTD)={dollars(sum_d_ytd)}"
            )
            self._check(8, wh.ytd == paid, f"warehouse {w}: W_YTD={dollars(wh.ytd)}, sum(H_AMOUNT)={dollars(paid)}")
        for d in sorted(wh.districts):
            self._district(w, d, wh.districts[d])

    def _district(self, w: int, d: int, dd: DistrictData) -> None:
        where = f"warehouse {w} district {d}"
        self.new_order_rows += len(dd.new_orders)
        self._district_row(where, dd)
        self._new_order_span(where, dd)
        self._line_count(where, dd)
        self._delivered_count(w, d, where, dd)
        delivered_to = self._orders(w, d, dd)
        self._customers(w, d, dd, delivered_to)

    def _district_row(self, where: str, dd: DistrictData) -> None:
        """Conditions 2 and 9, which need the DISTRICT row."""
        no_ids = dd.new_orders
        if dd.row is None:
            held = (
                f"{len(dd.orders)} ORDER, {len(no_ids)} NEW-ORDER, "
                f"{sum(x.count for x in dd.lines.values())} ORDER-LINE, {len(dd.customers)} "
                f"CUSTOMER rows"
            )
            for n in (2, 9):
                self._check(n, False, f"{where}: no DISTRICT row ({held})")
            return
        top = dd.row.next_o_id - 1
        max_o = max(dd.orders, default=0)
        max_no = max(no_ids, default=None)
        self._check(
            2,
            top == max_o and (max_no is None or max_no == top),
            f"{where}: D_NEXT_O_ID-1={top}, max(O_ID)={max_o}, max(NO_O_ID)={max_no}",
        )
        self._check(
            9,
            dd.row.ytd == dd.paid_here,
            f"{where}: D_YTD={dollars(dd.row.ytd)}, sum(H_AMOUNT)={dollars(dd.paid_here)}",
        )

    def _new_order_span(self, where: str, dd: DistrictData) -> None:
        """Condition 3."""
        no_ids = dd.new_orders
        if no_ids:
            span = max(no_ids) - min(no_ids) + 1
            self._check(
                3, span == len(no_ids), f"{where}: max(NO_O_ID)-min(NO_O_ID)+1={span}, count(NEW-ORDER)={len(no_ids)}"
            )

    def _line_count(self, where: str, dd: DistrictData) -> None:
        """Condition 4 (order lines of missing orders count: they are rows of the district's
        ORDER-LINE)."""
        ol_cnt = sum(o.ol_cnt for o in dd.orders.values())
        lines = sum(x.count for x in dd.lines.values())
        self._check(4, ol_cnt == lines, f"{where}: sum(O_OL_CNT)={ol_cnt}, count(ORDER-LINE)={lines}")

    def _delivered_count(self, w: int, d: int, where: str, dd: DistrictData) -> None:
        """Condition 11: the orders delivered, from the runners' acknowledged Deliveries when
        given, else from ORDERS."""
        if self.deliveries is not None:
            low, high = self.deliveries.expected(w, d)
            source = "acknowledged Deliveries"
        else:
            low = high = sum(
                1 for o_id, o in dd.orders.items() if o_id > self.initially_delivered and o.carrier is not None
            )
            source = "delivered per ORDERS"
        lhs = len(dd.orders) - len(dd.new_orders)
        span = (
            f"{self.initially_delivered + low}"
            if low == high
            else f"{self.initially_delivered + low}..{self.initially_delivered + high}"
        )
        self._check(
            11,
            self.initially_delivered + low <= lhs <= self.initially_delivered + high,
            f"{where}: count(ORDER)-count(NEW-ORDER)={lhs}, expected {span} "
            f"({self.initially_delivered} initially + {low}"
            f"{'' if low == high else f'..{high}'} {source})",
        )

    def _orders(self, w: int, d: int, dd: DistrictData) -> dict[int, Cents]:
        """Conditions 5, 6 and 7 per order (and per orphan NEW-ORDER or ORDER-LINE); returns
        the delivered amount per customer, for 10 and 12."""
        no_ids = dd.new_orders
        delivered_to: dict[int, Cents] = {}
        for o_id in sorted(dd.orders):
            o = dd.orders[o_id]
            at = f"order ({w}, {d}, {o_id})"
            in_no = o_id in no_ids
            self._check(
                5,
                (o.carrier is None) == in_no,
                f"{at}: O_CARRIER_ID={o.carrier}, NEW-ORDER row {'exists' if in_no else 'missing'}",
            )
            ls = dd.lines.get(o_id, OrderLines())
            self._check(6, o.ol_cnt == ls.count, f"{at}: O_OL_CNT={o.ol_cnt}, count(ORDER-LINE)={ls.count}")
            self.checked[7] += ls.count
            wrong = ls.count - ls.undelivered if o.carrier is None else ls.undelivered
            if wrong:
                self._violate(
                    7,
                    f"{at}: O_CARRIER_ID={o.carrier}, {ls.undelivered} of {ls.count} lines without OL_DELIVERY_D",
                    wrong,
                )
            delivered_to[o.customer] = delivered_to.get(o.customer, 0) + ls.delivered_amount
        for o_id in sorted(no_ids - dd.orders.keys()):
            self._check(5, False, f"NEW-ORDER ({w}, {d}, {o_id}) without an ORDER row")
        for o_id in sorted(dd.lines.keys() - dd.orders.keys()):
            ls = dd.lines[o_id]
            self._check(6, False, f"{ls.count} ORDER-LINE rows of missing order ({w}, {d}, {o_id})")
            self.checked[7] += ls.count
            self._violate(7, f"{ls.count} ORDER-LINE rows of missing order ({w}, {d}, {o_id})", ls.count)
        return delivered_to

    def _customers(self, w: int, d: int, dd: DistrictData, delivered_to: dict[int, Cents]) -> None:
        """Conditions 10 and 12 per customer (and per customer only HISTORY or ORDERS name)."""
        for c_id in sorted(dd.customers):
            c = dd.customers[c_id]
            at = f"customer ({w}, {d}, {c_id})"
            delivered = delivered_to.get(c_id, 0)
            h = dd.paid_by_customer.get(c_id, 0)
            self._check(
                10,
                c.balance == delivered - h,
                f"{at}: C_BALANCE={dollars(c.balance)}, delivered OL_AMOUNT {dollars(delivered)} "
                f"- H_AMOUNT {dollars(h)} = {dollars(delivered - h)}",
            )
            self._check(
                12,
                c.balance + c.ytd_payment == delivered,
                f"{at}: C_BALANCE+C_YTD_PAYMENT={dollars(c.balance + c.ytd_payment)}, "
                f"delivered OL_AMOUNT={dollars(delivered)}",
            )
        for c_id in sorted(dd.paid_by_customer.keys() - dd.customers.keys()):
            self._check(
                10,
                False,
                f"HISTORY rows paying {dollars(dd.paid_by_customer[c_id])} for missing customer ({w}, {d}, {c_id})",
            )
        for c_id in sorted(delivered_to.keys() - dd.customers.keys()):
            example = f"orders of missing customer ({w}, {d}, {c_id})"
            self._check(10, False, example)
            self._check(12, False, example)


def evaluate(
    warehouses: Iterable[WarehouseData],
    districts: int,
    initially_delivered: int,
    deliveries: RunDeliveries | None = None,
) -> list[ConditionResult]:
    """The 12 results over warehouses fetched lazily (one in memory at a time)."""
    ev = Evaluator(districts, initially_delivered, deliveries)
    for wh in warehouses:
        ev.add(wh)
    return ev.results()


def failed(results: list[ConditionResult]) -> list[ConditionResult]:
    return [r for r in results if not r.passed]


def report(results: list[ConditionResult]) -> str:
    lines = []
    for r in results:
        mark = "ok  " if r.passed else "FAIL"
        line = f"{mark} 3.3.2.{r.number:<2} {CONDITIONS[r.number]} ({r.checked} checked"
        line += f", {r.violations} violated)" if not r.passed else ")"
        if r.example:
            line += f"\n       e.g. {r.example}"
        if r.note:
            line += f"\n       note: {r.note}"
        lines.append(line)
    return "\n".join(lines)
