"""The ACID tests' judges (acid/clause3.py) on hand-made observations, and the interleaving of
two transactions (acid/interleave.py) on stand-ins: no database, so every accepted case and
every phenomenon the clause rules out is tried, including those no database here shows."""

from __future__ import annotations

import json
import random
import threading
import time

import pytest
from cli_helpers import tpcc
from tpcc_runner.acid.clause3 import (
    COMPLETED,
    ERROR,
    FAILED,
    NOT_APPLICABLE,
    PASSED,
    ROLLED_BACK,
    TESTS,
    WAITED,
    AtomicityObservation,
    ConsistencyObservation,
    DeliveryPaymentObservation,
    ItemPriceObservation,
    NewOrderPairObservation,
    NewOrderRows,
    OrderStatusObservation,
    Overlap,
    PaymentRows,
    PhantomObservation,
    judge_atomicity,
    judge_consistency,
    judge_isolation1,
    judge_isolation2,
    judge_isolation3,
    judge_isolation4,
    judge_isolation5,
    judge_isolation6,
    judge_isolation7,
    judge_isolation8,
    judge_isolation9,
    paid,
    pick,
    raised_price,
)
from tpcc_runner.acid.command import document, run_tests
from tpcc_runner.acid.interleave import StillWaiting, interleave
from tpcc_runner.drivers.base import LoadMeta, RetryableError
from tpcc_runner.generate import unit_keys
from tpcc_runner.loader import scale_of

ROWS = PaymentRows(
    w_ytd=30000000,
    d_ytd=3000000,
    c_balance=-1000,
    c_ytd_payment=1000,
    c_payment_cnt=1,
    history_rows=1,
    history_amount=1000,
)
ORDER_ROWS = NewOrderRows(d_next_o_id=3001, customer_orders=1, district_new_orders=900)


def atomicity(**changes) -> AtomicityObservation:
    o = AtomicityObservation(1234, (ROWS, paid(ROWS, 1234)), (ROWS, ROWS), (ORDER_ROWS, ORDER_ROWS))
    for name, value in changes.items():
        setattr(o, name, value)
    return o


def test_atomicity_passes_exact_changes_and_names_every_wrong_row():
    assert judge_atomicity(atomicity()).status == PASSED
    no_history = paid(ROWS, 1234)
    no_history.history_rows -= 1
    v = judge_atomicity(atomicity(committed=(ROWS, no_history)))
    assert v.status == FAILED and v.reason == "committed Payment: history_rows 2 expected, found 1"
    half_undone = PaymentRows(**{**ROWS.__dict__, "w_ytd": ROWS.w_ytd + 1234})
    v = judge_atomicity(atomicity(rolled_back=(ROWS, half_undone)))
    assert v.reason == "rolled-back Payment changed w_ytd 30000000 expected, found 30001234"
    kept = NewOrderRows(3002, 1, 900)
    v = judge_atomicity(atomicity(new_order=(ORDER_ROWS, kept)))
    assert v.reason == "rolled-back NewOrder changed d_next_o_id 3001 expected, found 3002"
    assert v.observed["amount"] == 1234 and v.to_dict()["clause"] == "3.2.2"


@pytest.mark.parametrize(
    "during, after, status",
    [
        (Overlap(COMPLETED, 7), 9, PASSED),  # a snapshot: T0's order
        (Overlap(WAITED, 9), 9, PASSED),  # locking: T1's order once committed
        (Overlap(COMPLETED, 9), 9, FAILED),  # T1's order before its commit: dirty read
        (Overlap(WAITED, 7), 9, FAILED),  # waited, yet missed the commit
        (Overlap(COMPLETED, 7), 7, FAILED),  # the commit is lost
    ],
)
def test_isolation1_accepts_waiting_or_the_snapshot_and_rejects_a_dirty_read(during, after, status):
    assert judge_isolation1(OrderStatusObservation(7, 9, during, after)).status == status


def test_isolation1_evidence_names_the_dirty_read():
    v = judge_isolation1(OrderStatusObservation(None, 9, Overlap(COMPLETED, 9), 9))
    assert v.reason == "T2 read order 9 of T1 before T1 committed (dirty read, P1); the committed last order was None"


@pytest.mark.parametrize(
    "during, after, status",
    [
        (Overlap(COMPLETED, 7), 7, PASSED),
        (Overlap(WAITED, 7), 7, PASSED),
        (Overlap(COMPLETED, 9), 7, FAILED),  # read the order of a transaction that rolled back
        (Overlap(WAITED, 7), 9, FAILED),  # the rolled-back order is there afterwards
    ],
)
def test_isolation2_never_shows_the_rolled_back_order(during, after, status):
    assert judge_isolation2(OrderStatusObservation(7, 9, during, after)).status == status


@pytest.mark.parametrize(
    "during, next_after, status",
    [
        (Overlap(WAITED, 3002), 3003, PASSED),
        (Overlap(ROLLED_BACK, 3002, "WriteConflict"), 3003, PASSED),
        (Overlap(COMPLETED, 3002), 3003, FAILED),  # committed over T1's uncommitted increment
        (Overlap(WAITED, 3001), 3002, FAILED),  # lost update: both took 3001
    ],
)
def test_isolation3_two_new_orders_of_one_district(during, next_after, status):
    assert judge_isolation3(NewOrderPairObservation(3001, 3001, during, next_after)).status == status


@pytest.mark.parametrize(
    "during, next_after, status",
    [
        (Overlap(WAITED, 3001), 3002, PASSED),
        (Overlap(ROLLED_BACK, 3001, "WriteConflict"), 3002, PASSED),
        (Overlap(COMPLETED, 3002), 3003, FAILED),  # saw T1's increment, which then was not undone
        (Overlap(WAITED, 3002), 3002, FAILED),  # read T1's rolled-back increment
    ],
)
def test_isolation4_the_rolled_back_order_number_is_reused(during, next_after, status):
    assert judge_isolation4(NewOrderPairObservation(3001, 3001, during, next_after)).status == status


@pytest.mark.parametrize(
    "judge, during, after, status",
    [
        (judge_isolation5, Overlap(ROLLED_BACK, {}, "WriteConflict"), -1000 + 500 - 300, PASSED),
        (judge_isolation5, Overlap(WAITED, {}), -1000 + 500 - 300, PASSED),
        (judge_isolation5, Overlap(WAITED, {}), -1000 - 300, FAILED),  # the delivery's credit lost
        (judge_isolation5, Overlap(COMPLETED, {}), -1000 + 500 - 300, FAILED),  # dirty write, right sum
        (judge_isolation6, Overlap(ROLLED_BACK, {}, "WriteConflict"), -1000 - 300, PASSED),
        (judge_isolation6, Overlap(WAITED, {}), -1000 + 500 - 300, FAILED),  # rollback left its credit
    ],
)
def test_isolation5_and_6_balance_reflects_exactly_the_committed_work(judge, during, after, status):
    assert judge(DeliveryPaymentObservation(-1000, 500, 300, during, after)).status == status


def prices(raise_: Overlap, second=(100, 200), committed=True, final=(110, 220)) -> ItemPriceObservation:
    return ItemPriceObservation((100, 200), 100, raise_, second, committed, final)


@pytest.mark.parametrize(
    "observation, status, case",
    [
        (prices(Overlap(WAITED, (110, 220))), PASSED, "case A"),
        (prices(Overlap(COMPLETED, (110, 220)), second=(None, None), committed=False), PASSED, "case B"),
        (prices(Overlap(ROLLED_BACK, None, "x"), final=(100, 200)), PASSED, "case C"),
        (prices(Overlap(COMPLETED, (110, 220))), PASSED, "case D"),
        (prices(Overlap(COMPLETED, (110, 220)), second=(110, 220)), FAILED, "non-repeatable read"),
        (prices(Overlap(COMPLETED, (110, 220)), final=(100, 200)), FAILED, "T4 read prices (100, 200)"),
    ],
)
def test_isolation7_cases_a_to_d_pass_and_a_non_repeatable_read_fails(observation, status, case):
    v = judge_isolation7(observation)
    assert v.status == status and case in v.reason


def test_isolation7_raises_prices_by_ten_percent_to_the_cent():
    assert [raised_price(p) for p in (100, 4546, 4969, 5)] == [110, 5001, 5466, 6]


@pytest.mark.parametrize("judge", [judge_isolation8, judge_isolation9])
def test_a_row_appearing_in_the_re_read_is_a_phantom(judge):
    assert judge(PhantomObservation([3, 4], Overlap(COMPLETED, 5), [3, 4], True)).status == PASSED
    assert judge(PhantomObservation([3, 4], Overlap(WAITED, 5), [3, 4], True)).status == PASSED
    v = judge(PhantomObservation([3, 4], Overlap(COMPLETED, 5), [3, 4, 5], True))
    assert v.status == FAILED and "found [5] that its first read did not (phantom, P3" in v.reason
    # a T1 the database rolled back saw nothing it committed
    assert judge(PhantomObservation([3, 4], Overlap(COMPLETED, 5), [], False)).status == PASSED


def test_consistency_read_during_transactions_fails_on_any_violated_condition():
    conditions = [{"number": n, "passed": True, "example": None} for n in range(1, 13)]
    v = judge_consistency(ConsistencyObservation(conditions, 4))
    assert v.status == PASSED and "while 4 transactions committed" in v.reason
    conditions[0] = {"number": 1, "passed": False, "example": "warehouse 1: W_YTD=10.00, sum(D_YTD)=12.00"}
    v = judge_consistency(ConsistencyObservation(conditions, 4))
    assert v.status == FAILED and v.reason == "condition 1 violated: warehouse 1: W_YTD=10.00, sum(D_YTD)=12.00"
    assert v.observed == {"violated": [1], "concurrent": 4}


def test_every_test_names_its_clause_steps_and_judge():
    assert list(TESTS) == ["atomicity"] + [f"isolation{i}" for i in range(1, 10)] + ["consistency"]
    assert [t.clause for t in TESTS.values()][1:-1] == [f"3.4.2.{i}" for i in range(1, 10)]
    assert all(t.steps and callable(t.judge) for t in TESTS.values())


def test_pick_chooses_within_the_load_and_an_unused_item():
    p = pick(random.Random(1), 2, 10, 30, 100)
    assert 1 <= p.w_id <= 2 and 1 <= p.d_id <= 10 and 1 <= p.c_id <= 30 and p.unused_item == 101
    assert len(set(p.items)) == 5 and all(1 <= i <= 100 for i in p.items) and 100 <= p.amount <= 500_000
    assert p.payment().h_amount * 100 == pytest.approx(p.amount)
    assert [line.i_id for line in p.new_order(unused=True).items] == [*p.items, 101]


# -- interleaving, on stand-ins for the two transactions -----------------------------------------


def test_a_transaction_that_finishes_while_the_other_is_held_completed():
    overlap, ended = interleave(lambda: 5, lambda: "committed", stall=1)
    assert (overlap, ended) == (Overlap(COMPLETED, 5), "committed")


def test_a_transaction_blocked_until_the_held_one_ends_waited():
    released = threading.Event()
    t0 = time.monotonic()
    overlap, _ = interleave(lambda: released.wait(5) and "after", released.set, stall=0.2)
    assert overlap == Overlap(WAITED, "after") and time.monotonic() - t0 < 3


def test_a_rolled_back_transaction_is_retried_after_the_held_one_unless_told_not_to():
    calls = []

    def conflicting():
        calls.append(1)
        if len(calls) == 1:
            raise RetryableError("WriteConflict")
        return len(calls)

    overlap, _ = interleave(conflicting, lambda: None, stall=1)
    assert overlap == Overlap(ROLLED_BACK, 2, "WriteConflict")
    calls.clear()
    overlap, _ = interleave(conflicting, lambda: None, retry=False, stall=1)
    assert overlap == Overlap(ROLLED_BACK, None, "WriteConflict") and len(calls) == 1


def test_other_errors_of_the_second_transaction_propagate_after_the_held_one_ended():
    ended = []
    with pytest.raises(ZeroDivisionError):
        interleave(lambda: 1 / 0, lambda: ended.append(True), stall=1)
    assert ended == [True]


# -- the command without a database --------------------------------------------------------------


def test_a_transaction_still_waiting_after_the_held_one_ended_is_reported():
    never = threading.Event()
    with pytest.raises(StillWaiting, match="still waited 0 s after the held one ended"):
        interleave(lambda: never.wait(30), lambda: None, stall=0.1, release=0.2)
    never.set()


def test_unknown_tests_are_a_usage_error():
    done = tpcc("acid", "--db", "mongodb", "--endpoints", "127.0.0.1:1", "--tests", "isolation1,isolation10")
    assert done.code == 2 and "unknown test(s) isolation10" in done.stderr


def test_foundationdb_has_every_test_not_applicable_with_the_reason(tmp_path):
    out = tmp_path / "acid.json"
    done = tpcc(
        "acid", "--db", "foundationdb", "--tests", "atomicity,isolation3", "--results", str(out), "--metrics-port", "0"
    )
    doc = json.loads(out.read_text())
    assert done.code == 0 and doc == done.json()
    assert doc["counts"] == {"passed": 0, "failed": 0, "not-applicable": 2, "error": 0} and doc["passed"]
    assert [(t["test"], t["status"]) for t in doc["tests"]] == [
        ("atomicity", "not-applicable"),
        ("isolation3", "not-applicable"),
    ]
    assert "no server here" in doc["tests"][0]["reason"]


class FakeReader:
    """A loaded database's metadata, all the command reads before the tests."""

    def read_meta(self) -> LoadMeta:
        return LoadMeta(
            warehouses=2,
            items=100,
            districts=10,
            customers_per_district=30,
            orders_per_district=30,
            new_orders_per_district=9,
            c_last=1,
            c_id=1,
            ol_i_id=1,
            schema_variant="fake",
            loaded_at="2026-01-01T00:00:00Z",
            complete=True,
        )

    def describe(self) -> dict:
        return {}

    def done_units(self) -> set[str]:
        return set(unit_keys(2, scale_of(self.read_meta())))


class FakeAdapter:
    """Isolation test 1 observed as a snapshot shows it, test 3 unable to run, test 9 not applicable."""

    reader = FakeReader()
    not_applicable = {"isolation9": "no such thing here"}
    notes = {"isolation1": "how it was held"}
    database_errors = (KeyError,)

    def observe(self, test: str, p):
        if test == "isolation3":
            raise KeyError("no undelivered order")
        return OrderStatusObservation(7, 9, Overlap(COMPLETED, 7), 9)


def test_run_tests_judges_notes_and_reports_what_could_not_run():
    verdicts = run_tests(FakeAdapter(), ["isolation1", "isolation3", "isolation9"], random.Random(3))
    assert [(v.test, v.status) for v in verdicts] == [
        ("isolation1", PASSED),
        ("isolation3", ERROR),
        ("isolation9", NOT_APPLICABLE),
    ]
    assert verdicts[0].reason.endswith("(how it was held)")
    assert verdicts[1].reason == "could not run: 'no undelivered order'" and "pick" in verdicts[1].observed
    doc = document("fake", 3, verdicts, {})
    assert doc["passed"] is False and doc["counts"] == {"passed": 1, "failed": 0, "not-applicable": 1, "error": 1}


class HangingAdapter(FakeAdapter):
    def observe(self, test: str, p):
        raise StillWaiting("the second transaction still waited 60 s after the held one ended")


def test_a_test_that_timed_out_fails_with_what_it_waited_for():
    (verdict,) = run_tests(HangingAdapter(), ["isolation3"], random.Random(3))
    assert verdict.status == FAILED and "still waited 60 s" in verdict.reason
