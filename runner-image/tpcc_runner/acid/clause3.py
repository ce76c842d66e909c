"""The ACID tests of TPC-C clause 3 as data and judges, with no database: what each test does
step by step, which outcomes the specification accepts, and the verdict from the values a
database adapter observed. Adapters (acid/mongodb.py, acid/voltdb.py) only act and fetch.

The isolation tests (clause 3.4.2) are written for locking schemes, where the second
transaction waits for the first; the clause lets other schemes show the same isolation their
own way. So every test accepts each way a correct database may behave while the first
transaction is held open: the other transaction waits for it (locking; VoltDB's serial
execution), completes without seeing it (a snapshot), or is rolled back by the database (a
write conflict). What fails is what the clause rules out: reading uncommitted data (P1),
overwriting it (P0: the other transaction commits a write of a row the held one has written
and not committed), a re-read that differs (P2) or finds new rows (P3), a lost update.

Money is integer cents, as the consistency check has it."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from ..consistency import Cents
from ..drivers.base import utcnow
from ..transactions import DeliveryInput, NewOrderInput, OrderLineInput, OrderStatusInput, PaymentInput

PASSED, FAILED, NOT_APPLICABLE, ERROR = "passed", "failed", "not-applicable", "error"
# How the other transaction behaved while the first was held open.
COMPLETED = "completed-while-held"  # it finished (committed) before the held one ended
WAITED = "waited"  # it finished only after the held one ended
ROLLED_BACK = "rolled-back"  # the database rolled it back (write conflict)


@dataclass(frozen=True)
class Verdict:
    test: str
    status: str  # PASSED, FAILED, NOT_APPLICABLE or ERROR
    reason: str  # the case followed, the evidence of failure, or why not applicable
    observed: dict[str, Any] = field(default_factory=dict)  # the observation (JSON: Decimals as strings)

    def to_dict(self) -> dict[str, Any]:
        return {
            "test": self.test,
            "clause": TESTS[self.test].clause,
            "status": self.status,
            "reason": self.reason,
            "observed": self.observed,
        }


@dataclass
class Overlap:
    """The other transaction, run while the first was held open."""

    outcome: str  # COMPLETED, WAITED or ROLLED_BACK
    result: Any = None  # what it returned (after a ROLLED_BACK: its retry's, if retried)
    conflict: str | None = None  # the database's message when it was rolled back


# -- what the adapters observe ---------------------------------------------------------------


@dataclass
class PaymentRows:
    """The rows a Payment of customer c of district (w, d) changes (clause 3.2.2.1)."""

    w_ytd: Cents
    d_ytd: Cents
    c_balance: Cents
    c_ytd_payment: Cents
    c_payment_cnt: int
    history_rows: int  # HISTORY rows of this customer paid to (w, d)
    history_amount: Cents  # their sum(H_AMOUNT)


@dataclass
class NewOrderRows:
    """The rows a NewOrder of customer c of district (w, d) changes."""

    d_next_o_id: int
    customer_orders: int  # ORDER rows of the customer
    district_new_orders: int  # NEW-ORDER rows of the district


@dataclass
class AtomicityObservation:
    amount: Cents  # each Payment's H_AMOUNT
    committed: tuple[PaymentRows, PaymentRows]  # before and after a committed Payment
    rolled_back: tuple[PaymentRows, PaymentRows]  # before and after a Payment rolled back
    new_order: tuple[NewOrderRows, NewOrderRows]  # before and after a NewOrder rolled back (unused item)


@dataclass
class OrderStatusObservation:
    """Isolation tests 1 and 2: T1 a NewOrder held open, T2 an Order-Status of its customer."""

    before: int | None  # T0: the customer's last order before T1
    held_order: int  # T1's O_ID
    during: Overlap  # T2: the last order it returned
    after: int | None  # an Order-Status after T1 ended


@dataclass
class NewOrderPairObservation:
    """Isolation tests 3 and 4: T1 and T2 NewOrders of one district."""

    next_before: int  # D_NEXT_O_ID before T1
    held_order: int  # T1's O_ID (test 4: the one it took before rolling back)
    during: Overlap  # T2: its O_ID
    next_after: int  # D_NEXT_O_ID after both


@dataclass
class DeliveryPaymentObservation:
    """Isolation tests 5 and 6: T1 a Delivery held open, T2 a Payment of a customer it delivers to."""

    balance_before: Cents
    delivered_amount: Cents  # what T1's delivery adds to C_BALANCE
    payment: Cents  # T2's H_AMOUNT
    during: Overlap
    balance_after: Cents


@dataclass
class ItemPriceObservation:
    """Isolation test 7: T2 a NewOrder reading I_PRICE of x, then x again and y; T3 raising both."""

    initial: tuple[Cents, Cents]  # T1: prices of x and y
    first_x: Cents  # T2's first read of x
    raise_: Overlap  # T3: result = the prices it set
    second: tuple[Cents | None, Cents | None]  # T2's second read of x, and y (None: T2 rolled back)
    t2_committed: bool  # False: the database rolled T2 back (case B)
    final: tuple[Cents, Cents]  # T4: prices after all


@dataclass
class PhantomObservation:
    """Isolation tests 8 and 9: T1 reads the rows of a search condition, T2 a NewOrder that would
    add one, T1 reads them again."""

    first: list[int]  # T1's first read (NO_O_IDs of the district / the last O_ID)
    insert: Overlap  # T2: its O_ID
    second: list[int]  # T1's re-read
    t1_committed: bool


@dataclass
class ConsistencyObservation:
    """The 12 conditions of clause 3.3.2 read in one snapshot while other clients committed
    transactions, one of them between the check's read of WAREHOUSE and of DISTRICT."""

    conditions: list[dict[str, Any]]  # consistency.ConditionResult.to_dict() of 1..12
    concurrent: int  # transactions committed while the check read


# -- the judges ------------------------------------------------------------------------------


def _diff(expected, got) -> list[str]:
    return [
        f"{k} {getattr(expected, k)} expected, found {getattr(got, k)}"
        for k in expected.__dataclass_fields__
        if getattr(expected, k) != getattr(got, k)
    ]


def paid(before: PaymentRows, amount: Cents) -> PaymentRows:
    """The rows after a committed Payment of `amount` (clause 2.5.2.2)."""
    return PaymentRows(
        before.w_ytd + amount,
        before.d_ytd + amount,
        before.c_balance - amount,
        before.c_ytd_payment + amount,
        before.c_payment_cnt + 1,
        before.history_rows + 1,
        before.history_amount + amount,
    )


def judge_atomicity(o: AtomicityObservation) -> Verdict:
    problems = [f"committed Payment: {d}" for d in _diff(paid(o.committed[0], o.amount), o.committed[1])]
    problems += [f"rolled-back Payment changed {d}" for d in _diff(*o.rolled_back)]
    problems += [f"rolled-back NewOrder changed {d}" for d in _diff(*o.new_order)]
    observed = asdict(o)
    if problems:
        return Verdict("atomicity", FAILED, "; ".join(problems), observed)
    return Verdict(
        "atomicity",
        PASSED,
        "the committed Payment changed WAREHOUSE, DISTRICT, CUSTOMER and "
        "HISTORY exactly by its amount; the Payment and the NewOrder rolled back changed nothing",
        observed,
    )


def _dirty_write(during: Overlap, what: str) -> str | None:
    """Two transactions that write one row cannot both commit while overlapping: under locking
    the second waits, under snapshot isolation it is rolled back."""
    if during.outcome == COMPLETED:
        return f"T2 committed while T1 held an uncommitted write of {what} (dirty write, P0)"
    return None


def _how(during: Overlap) -> str:
    return {
        COMPLETED: "T2 completed without waiting for T1",
        WAITED: "T2 waited for T1",
        ROLLED_BACK: f"T2 was rolled back by the database ({_first_sentence(during.conflict)})",
    }[during.outcome]


def _first_sentence(text: str | None) -> str:
    return (text or "no message").split(". ")[0]


def _verdict(test: str, problems: list[str], passed: str, o) -> Verdict:
    if problems:
        return Verdict(test, FAILED, "; ".join(problems), asdict(o))
    return Verdict(test, PASSED, passed, asdict(o))


def judge_isolation1(o: OrderStatusObservation) -> Verdict:
    seen, problems = o.during.result, []
    if o.during.outcome == COMPLETED and seen != o.before:
        problems.append(
            f"T2 read order {seen} of T1 before T1 committed (dirty read, P1); the committed last order was {o.before}"
        )
    if o.during.outcome != COMPLETED and seen != o.held_order:
        problems.append(f"T2 returned order {seen} after T1 committed order {o.held_order}")
    if o.after != o.held_order:
        problems.append(f"after T1 committed the last order is {o.after}, not T1's {o.held_order}")
    return _verdict(
        "isolation1",
        problems,
        f"{_how(o.during)}; it returned order {seen}, T1's {o.held_order} was its last order once T1 committed",
        o,
    )


def judge_isolation2(o: OrderStatusObservation) -> Verdict:
    problems = []
    if o.during.result != o.before:
        problems.append(
            f"T2 returned order {o.during.result} of T1, which was rolled back (dirty read, P1); "
            f"the committed last order was {o.before}"
        )
    if o.after != o.before:
        problems.append(f"after T1 rolled back the last order is {o.after}, not {o.before}")
    return _verdict(
        "isolation2",
        problems,
        f"{_how(o.during)}; it returned the committed order {o.before}, never T1's rolled-back {o.held_order}",
        o,
    )


def judge_isolation3(o: NewOrderPairObservation) -> Verdict:
    problems = [p for p in [_dirty_write(o.during, "D_NEXT_O_ID")] if p]
    if o.during.result != o.held_order + 1:
        problems.append(f"T2 took order {o.during.result}, expected {o.held_order + 1} after T1's {o.held_order}")
    if o.next_after != o.next_before + 2:
        problems.append(f"D_NEXT_O_ID went from {o.next_before} to {o.next_after}, expected +2 (lost update)")
    return _verdict(
        "isolation3",
        problems,
        f"{_how(o.during)}; T1 took order {o.held_order}, T2 {o.during.result}, D_NEXT_O_ID rose by 2",
        o,
    )


def judge_isolation4(o: NewOrderPairObservation) -> Verdict:
    problems = [p for p in [_dirty_write(o.during, "D_NEXT_O_ID")] if p]
    if o.during.result != o.held_order:
        problems.append(
            f"T2 took order {o.during.result}, expected {o.held_order}: the number T1 had taken and rolled back"
        )
    if o.next_after != o.next_before + 1:
        problems.append(f"D_NEXT_O_ID went from {o.next_before} to {o.next_after}, expected +1 (T2 only)")
    return _verdict(
        "isolation4",
        problems,
        f"{_how(o.during)}; T2 took order {o.during.result}, the one T1 rolled back, and D_NEXT_O_ID rose by 1",
        o,
    )


def _balance(o: DeliveryPaymentObservation, test: str, delivered: bool) -> Verdict:
    expected = o.balance_before - o.payment + (o.delivered_amount if delivered else 0)
    problems = [p for p in [_dirty_write(o.during, "the customer's C_BALANCE")] if p]
    if o.balance_after != expected:
        problems.append(
            f"C_BALANCE {o.balance_after}, expected {expected} ({o.balance_before} - payment "
            f"{o.payment}" + (f" + delivered {o.delivered_amount})" if delivered else ")")
        )
    what = "both T1's delivery and T2's payment" if delivered else "T2's payment only (T1 rolled back)"
    return _verdict(test, problems, f"{_how(o.during)}; C_BALANCE reflects {what}", o)


def judge_isolation5(o: DeliveryPaymentObservation) -> Verdict:
    return _balance(o, "isolation5", delivered=True)


def judge_isolation6(o: DeliveryPaymentObservation) -> Verdict:
    return _balance(o, "isolation6", delivered=False)


def judge_isolation7(o: ItemPriceObservation) -> Verdict:
    raised = o.raise_.result
    problems = []
    if o.first_x != o.initial[0]:
        problems.append(f"T2's first read of x is {o.first_x}, T1 read {o.initial[0]}")
    if o.t2_committed and tuple(o.second) != tuple(o.initial):
        problems.append(
            f"T2 read prices {tuple(o.second)} the second time, {tuple(o.initial)} before: "
            "T3's update became visible inside T2 (non-repeatable read, P2)"
        )
    expected = tuple(o.initial) if o.raise_.outcome == ROLLED_BACK else tuple(raised)
    if tuple(o.final) != expected:
        problems.append(f"T4 read prices {tuple(o.final)}, expected {expected}")
    case = {WAITED: "A (T3 waited for T2)", ROLLED_BACK: "C (T3 rolled back)"}.get(
        o.raise_.outcome, "D (T3 did not wait, no rollback)"
    )
    if not o.t2_committed:
        case = "B (T2 rolled back)"
    return _verdict("isolation7", problems, f"case {case}: T2 read the same prices twice and T4 read {expected}", o)


def _phantom(o: PhantomObservation, test: str, rows: str) -> Verdict:
    problems = []
    if o.t1_committed and sorted(o.second) != sorted(o.first):
        new = sorted(set(o.second) - set(o.first))
        problems.append(
            f"T1's re-read of {rows} found {new or sorted(o.second)} that its first read did not "
            f"(phantom, P3; T2's order was {o.insert.result})"
        )
    return _verdict(
        test,
        problems,
        f"{_how(o.insert)}; T1 read the same {rows} twice (T2's order {o.insert.result} did not appear)",
        o,
    )


def judge_isolation8(o: PhantomObservation) -> Verdict:
    return _phantom(o, "isolation8", "NEW-ORDER rows of the district")


def judge_isolation9(o: PhantomObservation) -> Verdict:
    return _phantom(o, "isolation9", "customer's last order")


def judge_consistency(o: ConsistencyObservation) -> Verdict:
    violated = [c for c in o.conditions if not c["passed"]]
    observed = {"violated": [c["number"] for c in violated], "concurrent": o.concurrent}
    if violated:
        return Verdict(
            "consistency",
            FAILED,
            "; ".join(f"condition {c['number']} violated: {c['example']}" for c in violated),
            observed,
        )
    return Verdict(
        "consistency",
        PASSED,
        f"the 12 conditions held in one read while {o.concurrent} "
        "transactions committed, one of them between the reads of WAREHOUSE and DISTRICT",
        observed,
    )


def raised_price(price: Cents) -> Cents:
    """T3 of isolation test 7: a price raised by 10 percent, to the cent."""
    return int((Decimal(price) * Decimal("1.1")).quantize(Decimal(1), ROUND_HALF_UP))


# -- the tests -------------------------------------------------------------------------------


@dataclass(frozen=True)
class AcidTest:
    name: str
    clause: str
    title: str
    steps: tuple[str, ...]
    judge: Callable[[Any], Verdict]


TESTS: dict[str, AcidTest] = {
    t.name: t
    for t in (
        AcidTest(
            "atomicity",
            "3.2.2",
            "Payment committed changes exactly its rows; rolled back, nothing",
            (
                "a Payment by customer number is committed: W_YTD, D_YTD rise by H_AMOUNT, C_BALANCE falls by it, "
                "C_YTD_PAYMENT rises by it, C_PAYMENT_CNT by 1, one HISTORY row of H_AMOUNT is added",
                "a Payment is rolled back after its writes instead of committed: none of those rows changed",
                "a NewOrder with an unused item is rolled back (clause 2.4.2.3): D_NEXT_O_ID, ORDER and "
                "NEW-ORDER unchanged",
            ),
            judge_atomicity,
        ),
        AcidTest(
            "isolation1",
            "3.4.2.1",
            "Order-Status and a committed New-Order: no dirty read",
            (
                "T0: Order-Status of a customer; its last order is noted",
                "T1: New-Order of that customer, held open before COMMIT",
                "T2: Order-Status of the customer while T1 is open: it waits, or returns T0's order",
                "T1 commits; T2 (if it waited) returns T1's order; afterwards the last order is T1's",
            ),
            judge_isolation1,
        ),
        AcidTest(
            "isolation2",
            "3.4.2.2",
            "Order-Status and a rolled-back New-Order: no dirty read",
            (
                "T0: Order-Status of a customer; its last order is noted",
                "T1: New-Order of that customer with its ORDER row written, held open before ROLLBACK",
                "T2: Order-Status of the customer while T1 is open",
                "T1 rolls back; T2 and an Order-Status afterwards return T0's order, never T1's",
            ),
            judge_isolation2,
        ),
        AcidTest(
            "isolation3",
            "3.4.2.3",
            "two New-Orders of one district, the first committed: no lost update",
            (
                "T1: New-Order of a district, held open before COMMIT",
                "T2: New-Order of the same district: it waits, or the database rolls it back (then it is "
                "retried after T1)",
                "T1 commits; T2's order number is T1's + 1 and D_NEXT_O_ID rose by 2",
            ),
            judge_isolation3,
        ),
        AcidTest(
            "isolation4",
            "3.4.2.4",
            "two New-Orders of one district, the first rolled back",
            (
                "T1: New-Order of a district with an unused item, held open before ROLLBACK",
                "T2: New-Order of the same district: it waits, or is rolled back and retried after T1",
                "T1 rolls back; T2's order number is the one T1 had taken and D_NEXT_O_ID rose by 1",
            ),
            judge_isolation4,
        ),
        AcidTest(
            "isolation5",
            "3.4.2.5",
            "Delivery committed and Payment of a customer it delivers to",
            (
                "T1: Delivery of a warehouse, held open before COMMIT",
                "T2: Payment of the customer of an order T1 delivers: it waits, or is rolled back and retried",
                "T1 commits; C_BALANCE reflects both the delivery and the payment",
            ),
            judge_isolation5,
        ),
        AcidTest(
            "isolation6",
            "3.4.2.6",
            "Delivery rolled back and Payment of a customer it delivered to",
            (
                "T1: Delivery of a warehouse, held open before ROLLBACK",
                "T2: Payment of the customer of an order T1 delivered: it waits, or is rolled back and retried",
                "T1 rolls back; C_BALANCE reflects the payment only",
            ),
            judge_isolation6,
        ),
        AcidTest(
            "isolation7",
            "3.4.2.7",
            "repeatable read of I_PRICE in a New-Order while prices change",
            (
                "T1: read I_PRICE of items x and y, commit",
                "T2: New-Order of x, x and y, held after reading the price of x once",
                "T3: raise the prices of x and y by 10 percent, commit",
                "T2 reads x again and y: both as T1 read them, unless T2 was rolled back (case B); T2 commits",
                "T4: the prices are T3's (cases A, B, D) or T1's if T3 was rolled back (case C)",
            ),
            judge_isolation7,
        ),
        AcidTest(
            "isolation8",
            "3.4.2.8",
            "no phantom between Delivery and New-Order",
            (
                "T1: Delivery of a warehouse, held after reading a district's NEW-ORDER rows",
                "T2: New-Order of that district (adds a NEW-ORDER row): it waits, completes, or is rolled back",
                "T1 reads the district's NEW-ORDER rows again: the same rows; T1 completes and commits",
            ),
            judge_isolation8,
        ),
        AcidTest(
            "isolation9",
            "3.4.2.9",
            "no phantom between Order-Status and New-Order",
            (
                "T1: Order-Status of a customer, held after reading the customer's last order",
                "T2: New-Order of that customer: it waits, completes, or is rolled back",
                "T1 reads the customer's last order again: the same order; T1 commits",
            ),
            judge_isolation9,
        ),
        AcidTest(
            "consistency",
            "3.3.2",
            "the 12 consistency conditions read in one snapshot during transactions",
            (
                "other clients commit Payments and NewOrders throughout",
                "the check reads each warehouse's rows for every condition in one snapshot transaction; one more "
                "Payment commits "
                "right after it has read WAREHOUSE",
                "all 12 conditions hold (a check reading statement by statement sees W_YTD before the Payment and "
                "D_YTD after it)",
            ),
            judge_consistency,
        ),
    )
}


@dataclass(frozen=True)
class Pick:
    """A test's random choices (clause 3.2.2 and 3.4.2 say "randomly selected")."""

    w_id: int
    d_id: int
    c_id: int
    items: tuple[int, ...]  # five distinct used item ids (x and y are the first two)
    unused_item: int  # an item id no ITEM row has (clause 2.4.1.5)
    amount: Cents  # a Payment's H_AMOUNT, 1.00 to 5,000.00 (clause 2.5.1.3)

    # The transactions' inputs (transactions.py), all of the home warehouse.
    def new_order(self, unused: bool = False, items: tuple[int, ...] | None = None) -> NewOrderInput:
        ids = list(items or self.items) + ([self.unused_item] if unused else [])
        return NewOrderInput(
            w_id=self.w_id,
            d_id=self.d_id,
            c_id=self.c_id,
            o_entry_d=utcnow(),
            items=tuple(OrderLineInput(i, self.w_id, 5) for i in ids),
        )

    def payment(self) -> PaymentInput:
        return PaymentInput(
            w_id=self.w_id,
            d_id=self.d_id,
            c_w_id=self.w_id,
            c_d_id=self.d_id,
            c_id=self.c_id,
            c_last=None,
            h_amount=float(self.amount / 100),
            h_date=utcnow(),
        )

    def order_status(self) -> OrderStatusInput:
        return OrderStatusInput(w_id=self.w_id, d_id=self.d_id, c_id=self.c_id, c_last=None)

    def delivery(self) -> DeliveryInput:
        return DeliveryInput(w_id=self.w_id, o_carrier_id=1, ol_delivery_d=utcnow())


def pick(rng: random.Random, warehouses: int, districts: int, customers: int, items: int) -> Pick:
    return Pick(
        rng.randint(1, warehouses),
        rng.randint(1, districts),
        rng.randint(1, customers),
        tuple(rng.sample(range(1, items + 1), min(5, items))),
        items + 1,
        rng.randint(100, 500_000),
    )
