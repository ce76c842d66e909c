"""The consistency judge (consistency.Evaluator) on hand-made warehouses: no database, so every
way a driver's fetch could look is tried, including the ones no database here produces."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from cli_helpers import tpcc
from tpcc_contract.deliveries import RunDeliveries
from tpcc_runner.consistency import (
    CustomerRow,
    DistrictRow,
    OrderRow,
    WarehouseData,
    cents_of,
    dollars,
    evaluate,
    read_deliveries,
    report,
)

DISTRICTS, ORDERS, NEW_ORDERS = 2, 4, 2
INITIALLY_DELIVERED = ORDERS - NEW_ORDERS


def warehouse(w: int = 1) -> WarehouseData:
    """A consistent warehouse: customer c placed order c; orders 1-2 delivered (lines worth
    0.00, as loaded), 3-4 undelivered; every customer paid 10.00 once."""
    wh = WarehouseData(w, ytd=DISTRICTS * ORDERS * 1000)
    for d in range(1, DISTRICTS + 1):
        dd = wh.district(d)
        dd.row = DistrictRow(ORDERS * 1000, ORDERS + 1)
        dd.paid_here = ORDERS * 1000
        for o in range(1, ORDERS + 1):
            delivered = o <= INITIALLY_DELIVERED
            dd.orders[o] = OrderRow(customer=o, carrier=5 if delivered else None, ol_cnt=3)
            dd.order_lines(o).add(3, 0 if delivered else 3, 0)
            if not delivered:
                dd.new_orders.add(o)
            dd.customers[o] = CustomerRow(balance=-1000, ytd_payment=1000)
            dd.pay(o, 1000)
    return wh


def judge(*whs: WarehouseData, deliveries: RunDeliveries | None = None) -> dict[int, object]:
    return {r.number: r for r in evaluate(whs, DISTRICTS, INITIALLY_DELIVERED, deliveries)}


def failing(*whs: WarehouseData, deliveries: RunDeliveries | None = None) -> set[int]:
    return {n for n, r in judge(*whs, deliveries=deliveries).items() if not r.passed}


def deliver(wh: WarehouseData, d: int, o: int, amount: int) -> None:
    """What a Delivery does to the rows."""
    dd = wh.districts[d]
    dd.new_orders.discard(o)
    dd.orders[o].carrier = 7
    lines = dd.lines[o]
    lines.undelivered, lines.delivered_amount = 0, amount
    dd.customers[dd.orders[o].customer].balance += amount


def test_a_consistent_warehouse_passes_every_condition_with_what_was_checked():
    results = judge(warehouse(1), warehouse(2))
    assert failing(warehouse(1), warehouse(2)) == set()
    assert {n: r.checked for n, r in results.items()} == {
        1: 2,
        2: 4,
        3: 4,
        4: 4,
        5: 16,
        6: 16,
        7: 48,
        8: 2,
        9: 4,
        10: 16,
        11: 4,
        12: 16,
    }


@pytest.mark.parametrize(
    "drift, expected",
    [
        (lambda wh: setattr(wh, "ytd", wh.ytd + 1), {1, 8}),
        (lambda wh: setattr(wh.districts[2].row, "ytd", wh.districts[2].row.ytd - 1), {1, 9}),
        (lambda wh: setattr(wh.districts[1], "paid_here", wh.districts[1].paid_here + 1), {8, 9}),
        (lambda wh: wh.districts[1].pay(3, 1), {10}),
        (lambda wh: setattr(wh.districts[1].customers[2], "balance", -999), {10, 12}),
        (lambda wh: setattr(wh.districts[1].customers[2], "ytd_payment", 1001), {12}),
        (lambda wh: setattr(wh.districts[2].lines[1], "delivered_amount", 1), {10, 12}),
        # a sub-cent fraction a database stored is not rounded away
        (lambda wh: setattr(wh.districts[1].customers[2], "balance", Decimal("-999.6")), {10, 12}),
    ],
)
def test_a_one_cent_drift_in_any_money_is_a_violation(drift, expected):
    wh = warehouse()
    drift(wh)
    assert failing(wh) == expected


def test_examples_show_exact_dollars():
    wh = warehouse()
    wh.districts[1].row.ytd = Decimal("4000.4")
    assert judge(wh)[9].example == "warehouse 1 district 1: D_YTD=40.004, sum(H_AMOUNT)=40.00"
    assert (dollars(-1000), dollars(8208779152), cents_of(Decimal("82087791.520000000000"))) == (
        "-10.00",
        "82087791.52",
        8208779152,
    )
    assert cents_of(Decimal("0.004000000000")) == Decimal("0.4")


def test_orphan_rows_are_reported_by_row():
    wh = warehouse()
    wh.districts[1].new_orders.add(9)  # NEW-ORDER without ORDER
    wh.districts[2].order_lines(9).add(4, 4, 0)  # ORDER-LINE rows without ORDER
    r = judge(wh)
    assert {n for n, x in r.items() if not x.passed} == {2, 3, 4, 5, 6, 7, 11}
    assert r[5].example == "NEW-ORDER (1, 1, 9) without an ORDER row"
    assert r[6].example == "4 ORDER-LINE rows of missing order (1, 2, 9)"
    assert (r[7].violations, r[7].example) == (4, "4 ORDER-LINE rows of missing order (1, 2, 9)")


def test_rows_of_a_district_without_its_district_row_are_still_judged():
    wh = warehouse()
    wh.district(3).new_orders.add(1)  # a district the load never made
    wh.districts[2].row = None  # a DISTRICT row lost
    r = judge(wh)
    assert {n for n, x in r.items() if not x.passed} == {1, 2, 5, 9, 11}
    assert (
        r[2].example == "warehouse 1 district 2: no DISTRICT row (4 ORDER, 2 NEW-ORDER, 12 ORDER-LINE, 4 CUSTOMER rows)"
    )
    # 3, 4 and 11 are still evaluated for the district without its row
    assert (r[3].checked, r[4].checked, r[11].checked) == (3, 3, 3)
    assert r[11].example.startswith("warehouse 1 district 3: count(ORDER)-count(NEW-ORDER)=-1, expected 2")


def test_a_missing_warehouse_row_and_customers_of_missing_rows():
    wh = warehouse()
    wh.ytd = None
    del wh.districts[2].customers[4]  # paid, and placed order 4
    r = judge(wh)
    assert {n for n, x in r.items() if not x.passed} == {1, 8, 10, 12}
    assert r[1].example == "warehouse 1: no WAREHOUSE row"
    assert r[10].example == "HISTORY rows paying 10.00 for missing customer (1, 2, 4)"
    assert r[12].example == "orders of missing customer (1, 2, 4)"


def test_a_condition_that_checked_nothing_fails():
    wh = warehouse()
    for dd in wh.districts.values():
        dd.lines.clear()  # e.g. a driver reading the wrong schema
        dd.customers.clear()
        dd.paid_by_customer.clear()
    r = judge(wh)
    assert not r[7].passed and r[7].checked == 0
    assert r[7].example == "checked nothing: no ORDER-LINE rows found in 1 warehouse(s) (the driver read nothing?)"
    assert not r[10].passed and not r[12].passed
    # no NEW-ORDER rows at all is a legitimate state (everything delivered): 3 is vacuous
    wh = warehouse()
    for d in (1, 2):
        for o in (3, 4):
            deliver(wh, d, o, 0)
    r = judge(wh)
    assert r[3].passed and r[3].checked == 0


def test_condition_11_from_orders_cannot_see_a_lost_delivered_order_but_the_runners_count_can():
    wh = warehouse()
    deliver(wh, 1, 3, 1234)
    deliveries = RunDeliveries(delivered={(1, 1): 1})
    assert failing(wh) == set() and failing(wh, deliveries=deliveries) == set()
    del wh.districts[1].orders[3]  # the delivered order is lost with its lines
    del wh.districts[1].lines[3]
    assert failing(wh) == {10, 12}  # only through the customer's balance
    r = judge(wh, deliveries=deliveries)
    assert {n for n, x in r.items() if not x.passed} == {10, 11, 12}
    assert r[11].example == (
        "warehouse 1 district 1: count(ORDER)-count(NEW-ORDER)=2, expected 3 (2 initially + 1 acknowledged Deliveries)"
    )
    assert "runners' acknowledged Deliveries" in r[11].note
    assert "no --deliveries" in judge(wh)[11].note and "note: no --deliveries" in report(list(judge(wh).values()))


def test_deliveries_of_unknown_outcome_make_condition_11_a_range():
    wh = warehouse()
    deliver(wh, 1, 3, 0)
    deliver(wh, 2, 3, 0)
    unsure = RunDeliveries(delivered={(1, 1): 0, (1, 2): 1}, unknown_outcome={1: 1})
    assert failing(wh, deliveries=unsure) == set()
    assert failing(wh, deliveries=RunDeliveries(delivered={(1, 2): 1})) == {11}
    too_many = RunDeliveries(delivered={(1, 1): 2, (1, 2): 2}, unknown_outcome={1: 5})
    r = judge(wh, deliveries=too_many)[11]
    assert not r.passed and r.example == (
        "warehouse 1 district 1: count(ORDER)-count(NEW-ORDER)=3, "
        "expected 4..9 (2 initially + 2..7 acknowledged Deliveries)"
    )


def test_deliveries_files_are_summed_and_bad_ones_are_one_line_errors(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps({"deliveries": {"1:1": 2, "1:2": 1}, "deliveries_unknown_outcome": {"1": 1}}))
    b.write_text(json.dumps({"deliveries": {"1:1": 3}, "other": "ignored"}))
    got = read_deliveries([str(a), str(b)])
    assert (got.delivered, got.unknown_outcome) == ({(1, 1): 5, (1, 2): 1}, {1: 1})
    for doc, message in (
        ({"deliveries": {"1": 2}}, "bad key '1'"),
        ({"deliveries": {"1:1": -1}}, "must be a count"),
        ({"deliveries": {"1:1": 1}, "deliveries_unknown_outcome": {"x": 1}}, "bad key 'x'"),
        ([], "want a JSON object"),
    ):
        a.write_text(json.dumps(doc))
        with pytest.raises(ValueError, match=message):
            read_deliveries([str(a)])
    a.write_text("{")
    with pytest.raises(ValueError, match="not JSON"):
        read_deliveries([str(a)])


def test_check_with_a_bad_deliveries_file_is_a_usage_error(tmp_path):
    bad = tmp_path / "d.json"
    bad.write_text('{"deliveries": {"one": 1}}')
    done = tpcc("check", "--db", "voltdb", "--endpoints", "127.0.0.1:1", "--deliveries", str(bad))
    assert done.code == 2
    assert done.stderr.strip().splitlines()[-1].endswith("bad key 'one' (want W:D with ids >= 1)")
