"""The MongoDB driver against a real SecantusDB server (MongoDB wire protocol, transactions):
schema, idempotent load, the five transactions' effects, error classification and the twelve
consistency conditions, for the three schema variants (embedded: orders, their lines and the
history inside the customer document; the helpers below read and corrupt them where they are)."""

from __future__ import annotations

import contextlib
import datetime as dt
import random
import time

import pymongo
import pytest
from bson.int64 import Int64
from pymongo import monitoring
from secantus_server import own_secantus, secantus  # noqa: F401  (pytest fixtures)
from tpcc_contract.deliveries import RunDeliveries
from tpcc_runner.drivers.base import (
    ConnectionLost,
    ConnectionOptions,
    LoadMeta,
    NotLoaded,
    RetryableError,
    UnknownOutcome,
    Unreachable,
    UserAbort,
)
from tpcc_runner.drivers.mongodb import INDEXES, OPTIONS, SHARD_KEYS, MongoDBDriver, topology_of
from tpcc_runner.drivers.mongodb.documents import CUSTOMER_ORDER_INDEX, EMBEDDED_TABLES, OWNER_FIELDS, embedded_rows
from tpcc_runner.durability import StoredOrder, epoch_ms
from tpcc_runner.loader import require_loaded
from tpcc_runner.schema import TABLES
from tpcc_runner.transactions import (
    DeliveryInput,
    DeliveryOutput,
    NewOrderInput,
    OrderLineInput,
    OrderStatusInput,
    OrderStatusOutput,
    PaymentInput,
    StockLevelInput,
    StockLevelOutput,
    TransactionInput,
)

WAREHOUSES, DISTRICTS, CUSTOMERS, ORDERS, NEW_ORDERS, ITEMS = 2, 2, 6, 6, 3, 20
T0 = dt.datetime(2024, 1, 2, 3, 4, 5)
SAME_LAST = {
    (1, 1): ("BARBARBAR", {1: "CCC", 2: "AAA", 3: "BBB"}),  # n=3 -> BBB (c 3)
    (1, 2): ("ANTIPRESESE", {1: "DDD", 2: "BBB", 3: "AAA", 4: "CCC"}),
}  # n=4 -> BBB (c 2)


def row(table: str, **values) -> tuple:
    return tuple(values[c] for c in TABLES[table])


def lines_of(o_id: int) -> int:
    return 2 + o_id % 3


def line_item(o_id: int, n: int) -> int:
    return (o_id * 3 + n) % ITEMS + 1


def stock_quantity(i: int) -> int:
    return 5 + i if i <= 5 else 50 + i


def dataset() -> dict[str, dict[str, list[tuple]]]:
    """A few rows per table, consistent per clause 3.3.2, grouped into the loader's units."""
    units: dict[str, dict[str, list[tuple]]] = {
        "item:0": {
            "item": [
                row(
                    "item",
                    i_id=i,
                    i_im_id=i,
                    i_name=f"item-{i}",
                    i_price=1.0 + i,
                    i_data="xxORIGINALxx" if i % 4 == 0 else "plain",
                )
                for i in range(1, ITEMS + 1)
            ]
        }
    }
    for w in range(1, WAREHOUSES + 1):
        units[f"warehouse:{w}"] = {
            "warehouse": [
                row(
                    "warehouse",
                    w_id=w,
                    w_name=f"W{w}",
                    w_street_1="s1",
                    w_street_2="s2",
                    w_city="c",
                    w_state="ST",
                    w_zip="123411111",
                    w_tax=0.1,
                    w_ytd=10.0 * CUSTOMERS * DISTRICTS,
                )
            ],
            "district": [
                row(
                    "district",
                    d_id=d,
                    d_w_id=w,
                    d_name=f"D{w}.{d}",
                    d_street_1="s1",
                    d_street_2="s2",
                    d_city="c",
                    d_state="ST",
                    d_zip="123411111",
                    d_tax=0.05,
                    d_ytd=10.0 * CUSTOMERS,
                    d_next_o_id=ORDERS + 1,
                )
                for d in range(1, DISTRICTS + 1)
            ],
        }
        units[f"stock:{w}:0"] = {
            "stock": [
                row(
                    "stock",
                    s_i_id=i,
                    s_w_id=w,
                    s_quantity=stock_quantity(i),
                    **{f"s_dist_{x:02d}": f"dist{x:02d}-{w}-{i}" for x in range(1, 11)},
                    s_ytd=0,
                    s_order_cnt=0,
                    s_remote_cnt=0,
                    s_data="ORIGINAL stock" if i % 2 == 0 else "stock",
                )
                for i in range(1, ITEMS + 1)
            ]
        }
        for d in range(1, DISTRICTS + 1):
            last, firsts = SAME_LAST.get((w, d), ("", {}))
            t: dict[str, list[tuple]] = {k: [] for k in ("customer", "history", "orders", "order_line", "new_order")}
            for c in range(1, CUSTOMERS + 1):
                t["customer"].append(
                    row(
                        "customer",
                        c_id=c,
                        c_d_id=d,
                        c_w_id=w,
                        c_first=firsts.get(c, f"F{c}"),
                        c_middle="OE",
                        c_last=last if c in firsts else f"LAST{c}",
                        c_street_1="s1",
                        c_street_2="s2",
                        c_city="c",
                        c_state="ST",
                        c_zip="123411111",
                        c_phone="0123456789012345",
                        c_since=T0,
                        c_credit="BC" if c == 1 else "GC",
                        c_credit_lim=50000.0,
                        c_discount=0.1,
                        c_balance=-10.0,
                        c_ytd_payment=10.0,
                        c_payment_cnt=1,
                        c_delivery_cnt=0,
                        c_data="original data",
                    )
                )
                t["history"].append(
                    row(
                        "history",
                        h_c_id=c,
                        h_c_d_id=d,
                        h_c_w_id=w,
                        h_d_id=d,
                        h_w_id=w,
                        h_date=T0,
                        h_amount=10.0,
                        h_data="W    D",
                    )
                )
            for o in range(1, ORDERS + 1):
                delivered = o <= ORDERS - NEW_ORDERS
                t["orders"].append(
                    row(
                        "orders",
                        o_id=o,
                        o_d_id=d,
                        o_w_id=w,
                        o_c_id=CUSTOMERS + 1 - o,
                        o_entry_d=T0,
                        o_carrier_id=o % 10 + 1 if delivered else None,
                        o_ol_cnt=lines_of(o),
                        o_all_local=1,
                    )
                )
                for n in range(1, lines_of(o) + 1):
                    t["order_line"].append(
                        row(
                            "order_line",
                            ol_o_id=o,
                            ol_d_id=d,
                            ol_w_id=w,
                            ol_number=n,
                            ol_i_id=line_item(o, n),
                            ol_supply_w_id=w,
                            ol_delivery_d=T0 if delivered else None,
                            ol_quantity=5,
                            ol_amount=0.0 if delivered else round(n * 1.5 + o, 2),
                            ol_dist_info=f"dist{d:02d}",
                        )
                    )
                if not delivered:
                    t["new_order"].append(row("new_order", no_o_id=o, no_d_id=d, no_w_id=w))
            units[f"district:{w}:{d}"] = t
    return units


def meta(schema: str) -> LoadMeta:
    return LoadMeta(
        warehouses=WAREHOUSES,
        items=ITEMS,
        districts=DISTRICTS,
        customers_per_district=CUSTOMERS,
        orders_per_district=ORDERS,
        new_orders_per_district=NEW_ORDERS,
        c_last=0,
        c_id=0,
        ol_i_id=0,
        schema_variant=schema,
        loaded_at="2024-01-02T03:04:05Z",
        complete=True,
    )


def make_driver(server, schema="normalized", fam=True, batch=True, **extra) -> MongoDBDriver:
    opts = {
        "schema": schema,
        "find_and_modify": str(fam).lower(),
        "batch_writes": str(batch).lower(),
        "database": f"tpcc_{schema}_{int(fam)}{int(batch)}",
        "replica_set": "secantus",
        "txn_timeout": "10",
        **extra,
    }
    drv = MongoDBDriver(ConnectionOptions(endpoints=[server.endpoint], connect_timeout=10, extra=opts))
    drv.connect()
    return drv


def load(drv: MongoDBDriver) -> None:
    drv.create_schema(reset=True)
    for key, tables in dataset().items():
        drv.load_unit(key, tables)
    drv.write_meta(meta(drv.schema))


CONFIGS = [
    ("normalized", True, True),
    ("normalized", False, False),
    ("denormalized", True, True),
    ("denormalized", False, False),
    ("embedded", True, True),
]


@pytest.fixture(params=CONFIGS, ids=lambda c: f"{c[0]}-fam{int(c[1])}-batch{int(c[2])}")
def drv(request, secantus):
    schema, fam, batch = request.param
    d = make_driver(secantus, schema, fam, batch)
    load(d)
    yield d
    d.close()


@pytest.fixture(params=["normalized", "denormalized", "embedded"])
def schema_drv(request, secantus):
    d = make_driver(secantus, request.param)
    load(d)
    yield d
    d.close()


@pytest.fixture(scope="module")
def mongo(secantus):
    client = pymongo.MongoClient(secantus.endpoint, directConnection=True)
    yield client
    client.close()


def db_of(mongo, drv):
    return mongo[drv.database_name]


def find_order(db, schema: str, w: int, d: int, o: int) -> dict | None:
    """An ORDERS row as stored, flat (embedded: its element of the customer's orders, with the
    customer's key as O_W_ID, O_D_ID, O_C_ID)."""
    if schema == "embedded":
        c = db.customer.find_one({"c_w_id": w, "c_d_id": d, "orders.o_id": o})
        if c is None:
            return None
        return {"o_w_id": w, "o_d_id": d, "o_c_id": c["c_id"], **next(x for x in c["orders"] if x["o_id"] == o)}
    return db.orders.find_one({"o_w_id": w, "o_d_id": d, "o_id": o})


def update_order(db, schema: str, w: int, d: int, o: int, update: dict):
    """update_one on an ORDERS row (embedded: on its element of the customer's orders)."""
    if schema == "embedded":
        return db.customer.update_one(
            {"c_w_id": w, "c_d_id": d, "orders.o_id": o},
            {op: {f"orders.$[o].{k}": v for k, v in fields.items()} for op, fields in update.items()},
            array_filters=[{"o.o_id": o}],
        )
    return db.orders.update_one({"o_w_id": w, "o_d_id": d, "o_id": o}, update)


def delete_order(db, schema: str, w: int, d: int, o: int) -> None:
    """An ORDERS row and its lines gone."""
    if schema == "embedded":
        res = db.customer.update_one({"c_w_id": w, "c_d_id": d, "orders.o_id": o}, {"$pull": {"orders": {"o_id": o}}})
        assert res.modified_count == 1
        return
    db.orders.delete_one({"o_w_id": w, "o_d_id": d, "o_id": o})
    db.order_line.delete_many({"ol_w_id": w, "ol_d_id": d, "ol_o_id": o})


def history_rows(db, schema: str, query: dict) -> list[dict]:
    if schema == "embedded":
        return list(db.customer.aggregate(embedded_rows("history", query)))
    return list(db.history.find(query))


def update_history(db, schema: str, query: dict, update: dict):
    """update_one on a HISTORY row (embedded: on the first matching element of a customer's history)."""
    if schema != "embedded":
        return db.history.update_one(query, update)
    owner = OWNER_FIELDS["history"]
    own = {k: v for k, v in query.items() if k not in owner}
    c = db.customer.find_one({**{owner[k]: v for k, v in query.items() if k in owner}, "history": {"$elemMatch": own}})
    assert c is not None, query
    at = next(i for i, h in enumerate(c["history"]) if all(h.get(k) == v for k, v in own.items()))
    return db.customer.update_one(
        {"_id": c["_id"]}, {op: {f"history.{at}.{k}": v for k, v in fields.items()} for op, fields in update.items()}
    )


def order_lines(mongo, drv, w, d, o) -> list[dict]:
    db = db_of(mongo, drv)
    if drv.schema != "normalized":
        return find_order(db, drv.schema, w, d, o)["order_line"]
    return list(db.order_line.find({"ol_w_id": w, "ol_d_id": d, "ol_o_id": o}).sort("ol_number", 1))


def counts(mongo, drv) -> dict[str, int]:
    db = db_of(mongo, drv)
    out = {t: db[t].count_documents({}) for t in TABLES if t not in EMBEDDED_TABLES[drv.schema]}
    if drv.schema == "embedded":
        customers = list(db.customer.find())
        out["orders"] = sum(len(c["orders"]) for c in customers)
        out["history"] = sum(len(c["history"]) for c in customers)
        out["order_line"] = sum(len(o["order_line"]) for c in customers for o in c["orders"])
    elif drv.schema == "denormalized":
        out["order_line"] = sum(len(o["order_line"]) for o in db.orders.find())
    return out


def snapshot(mongo, drv) -> dict[str, list]:
    db = db_of(mongo, drv)
    return {
        t: sorted(repr(sorted((k, v) for k, v in doc.items() if k != "_id")) for doc in db[t].find())
        for t in db.list_collection_names()
    }


def expected_counts() -> dict[str, int]:
    out = {t: 0 for t in TABLES}
    for tables in dataset().values():
        for t, rows in tables.items():
            out[t] += len(rows)
    return out


# -- schema and load -----------------------------------------------------------------------
def test_schema_creates_collections_and_unique_indexes(drv, mongo):
    db = db_of(mongo, drv)
    names = set(db.list_collection_names())
    assert names == set(TABLES) - set(EMBEDDED_TABLES[drv.schema]) | {"tpcc_meta"}
    unique = {
        name: [tuple(k for k, _ in ix["key"]) for ix in db[name].index_information().values() if ix.get("unique")]
        for name in names
    }
    assert ("d_w_id", "d_id") in unique["district"]
    if "orders" in names:
        assert ("o_w_id", "o_d_id", "o_id") in unique["orders"]
    else:  # embedded: a customer is found by its orders' ids
        assert ("c_w_id", "c_d_id", "orders.o_id") in [
            tuple(k for k, _ in ix["key"]) for ix in db.customer.index_information().values()
        ]
    assert ("no_w_id", "no_d_id", "no_o_id") in unique["new_order"]
    assert ("s_w_id", "s_i_id") in unique["stock"]
    with pytest.raises(pymongo.errors.DuplicateKeyError):
        db.district.insert_one({"d_w_id": 1, "d_id": 1})


def test_load_counts_meta_and_units(drv, mongo):
    assert counts(mongo, drv) == expected_counts()
    assert drv.read_meta() == meta(drv.schema)
    assert drv.done_units() == set(dataset())
    lines = order_lines(mongo, drv, 1, 1, 5)
    assert [ol["ol_number"] for ol in lines] == [1, 2, 3, 4]
    assert all(ol["ol_delivery_d"] is None for ol in lines)


def test_reloading_units_leaves_no_duplicates(drv, mongo):
    before = snapshot(mongo, drv)
    units = dataset()
    for key in ("item:0", "warehouse:1", "stock:2:0", "district:1:2"):
        drv.load_unit(key, units[key])
    db = db_of(mongo, drv)
    # a crash mid-unit: part of the district's rows are there, part missing
    db.customer.delete_many({"c_w_id": 2, "c_d_id": 1, "c_id": {"$gt": 3}})
    for o in range(3, ORDERS + 1):
        if find_order(db, drv.schema, 2, 1, o) is not None:  # embedded: gone with its customer
            delete_order(db, drv.schema, 2, 1, o)
    drv.load_unit("district:2:1", units["district:2:1"])
    after = snapshot(mongo, drv)
    after.pop("tpcc_meta"), before.pop("tpcc_meta")
    assert after == before
    assert counts(mongo, drv) == expected_counts()


def test_schema_variant_mismatch_is_refused(schema_drv, secantus):
    other = "normalized" if schema_drv.schema == "denormalized" else "denormalized"
    d = make_driver(secantus, other, database=schema_drv.database_name)
    try:
        with pytest.raises(Exception, match=f"holds a {schema_drv.schema} load"):
            d.create_schema(reset=False)
    finally:
        d.close()


# -- the five transactions -----------------------------------------------------------------
def test_new_order_effects(drv, mongo):
    db = db_of(mongo, drv)
    items = (OrderLineInput(1, 1, 5), OrderLineInput(2, 2, 3), OrderLineInput(7, 1, 9))  # 57 >= 19: 57-9
    entry = dt.datetime(2024, 5, 6, 7, 8, 9)
    out = drv.new_order(NewOrderInput(w_id=1, d_id=1, c_id=3, o_entry_d=entry, items=items))
    assert out.o_id == ORDERS + 1
    assert db.district.find_one({"d_w_id": 1, "d_id": 1})["d_next_o_id"] == ORDERS + 2
    o = find_order(db, drv.schema, 1, 1, ORDERS + 1)
    assert (o["o_c_id"], o["o_ol_cnt"], o["o_all_local"], o["o_carrier_id"], o["o_entry_d"]) == (3, 3, 0, None, entry)
    assert db.new_order.count_documents({"no_w_id": 1, "no_d_id": 1, "no_o_id": ORDERS + 1}) == 1
    lines = order_lines(mongo, drv, 1, 1, ORDERS + 1)
    assert [
        (
            ol["ol_number"],
            ol["ol_i_id"],
            ol["ol_supply_w_id"],
            ol["ol_quantity"],
            ol["ol_amount"],
            ol["ol_delivery_d"],
            ol["ol_dist_info"],
        )
        for ol in lines
    ] == [
        (1, 1, 1, 5, 1000, None, "dist01-1-1"),  # money is stored as integer cents
        (2, 2, 2, 3, 900, None, "dist01-2-2"),
        (3, 7, 1, 9, 7200, None, "dist01-1-7"),
    ]
    assert out.total == round((10.0 + 9.0 + 72.0) * (1 - 0.1) * (1 + 0.1 + 0.05), 2)

    def stock(w, i):
        s = db.stock.find_one({"s_w_id": w, "s_i_id": i})
        return s["s_quantity"], s["s_ytd"], s["s_order_cnt"], s["s_remote_cnt"]

    assert stock(1, 1) == (6 - 5 + 91, 5, 1, 0)
    assert stock(2, 2) == (7 - 3 + 91, 3, 1, 1)
    assert stock(1, 7) == (57 - 9, 9, 1, 0)
    assert stock(1, 2) == (7, 0, 0, 0)  # untouched


def test_new_order_with_unused_item_leaves_no_trace(drv, mongo):
    before = snapshot(mongo, drv)
    items = (OrderLineInput(3, 1, 2), OrderLineInput(ITEMS + 1000, 1, 1))
    with pytest.raises(UserAbort):
        drv.new_order(NewOrderInput(w_id=1, d_id=2, c_id=1, o_entry_d=T0, items=items))
    assert snapshot(mongo, drv) == before
    # the session is usable afterwards and the order id was not consumed
    out = drv.new_order(NewOrderInput(w_id=1, d_id=2, c_id=1, o_entry_d=T0, items=items[:1]))
    assert out.o_id == ORDERS + 1


@pytest.mark.parametrize("d_id, c_last, expected", [(1, "BARBARBAR", 3), (2, "ANTIPRESESE", 2)])
def test_payment_by_last_name_picks_middle_by_first_name(drv, mongo, d_id, c_last, expected):
    db = db_of(mongo, drv)
    when = dt.datetime(2024, 6, 1, 12, 0, 0)
    out = drv.payment(
        PaymentInput(w_id=2, d_id=1, c_w_id=1, c_d_id=d_id, c_id=None, c_last=c_last, h_amount=123.45, h_date=when)
    )
    assert out.c_id == expected
    c = db.customer.find_one({"c_w_id": 1, "c_d_id": d_id, "c_id": expected})
    assert (c["c_balance"], c["c_ytd_payment"], c["c_payment_cnt"]) == (-13345, 13345, 2)
    assert db.warehouse.find_one({"w_id": 2})["w_ytd"] == 12000 + 12345
    assert db.district.find_one({"d_w_id": 2, "d_id": 1})["d_ytd"] == 6000 + 12345
    assert db.warehouse.find_one({"w_id": 1})["w_ytd"] == 12000
    [h] = history_rows(db, drv.schema, {"h_date": when})
    assert (h["h_c_id"], h["h_c_d_id"], h["h_c_w_id"], h["h_d_id"], h["h_w_id"], h["h_amount"], h["h_data"]) == (
        expected,
        d_id,
        1,
        1,
        2,
        12345,
        "W2    D2.1",
    )


def test_payment_by_id_bad_credit_prepends_c_data(drv, mongo):
    out = drv.payment(PaymentInput(w_id=1, d_id=1, c_w_id=1, c_d_id=1, c_id=1, c_last=None, h_amount=5.5, h_date=T0))
    assert out.c_id == 1
    c = db_of(mongo, drv).customer.find_one({"c_w_id": 1, "c_d_id": 1, "c_id": 1})
    assert c["c_data"] == "1 1 1 1 1 5.50 original data"
    assert c["c_balance"] == -1550


def test_order_status(drv):
    # customer c has order ORDERS+1-c; by last name n=3 in (1,1) picks c_id 3
    out = drv.order_status(OrderStatusInput(w_id=1, d_id=1, c_id=2, c_last=None))
    assert out == OrderStatusOutput(2, out.c_balance, ORDERS - 1, None, lines_of(ORDERS - 1))
    out = drv.order_status(OrderStatusInput(w_id=1, d_id=1, c_id=None, c_last="BARBARBAR"))
    assert (out.c_id, out.o_id, out.lines) == (3, ORDERS - 2, lines_of(ORDERS - 2))
    drv.new_order(NewOrderInput(w_id=1, d_id=1, c_id=3, o_entry_d=T0, items=(OrderLineInput(9, 1, 1),)))
    out = drv.order_status(OrderStatusInput(w_id=1, d_id=1, c_id=3, c_last=None))
    assert (out.o_id, out.lines) == (ORDERS + 1, 1)


def test_delivery_oldest_new_order_per_district(drv, mongo):
    db = db_of(mongo, drv)
    when = dt.datetime(2024, 7, 1, 0, 0, 0)
    first = ORDERS - NEW_ORDERS + 1
    out = drv.delivery(DeliveryInput(w_id=1, o_carrier_id=7, ol_delivery_d=when))
    assert out == DeliveryOutput(((1, first), (2, first)), 0)
    for d in (1, 2):
        o = find_order(db, drv.schema, 1, d, first)
        assert o["o_carrier_id"] == 7
        lines = order_lines(mongo, drv, 1, d, first)
        assert all(ol["ol_delivery_d"] == when for ol in lines)
        assert db.new_order.count_documents({"no_w_id": 1, "no_d_id": d, "no_o_id": first}) == 0
        c = db.customer.find_one({"c_w_id": 1, "c_d_id": d, "c_id": o["o_c_id"]})
        assert c["c_balance"] == -1000 + sum(ol["ol_amount"] for ol in lines)
        assert c["c_delivery_cnt"] == 1
        later = order_lines(mongo, drv, 1, d, first + 1)
        assert all(ol["ol_delivery_d"] is None for ol in later)
    assert find_order(db, drv.schema, 2, 1, first)["o_carrier_id"] is None
    for o_id in range(first + 1, ORDERS + 1):
        delivered = drv.delivery(DeliveryInput(w_id=1, o_carrier_id=8, ol_delivery_d=when)).delivered
        assert delivered == ((1, o_id), (2, o_id))
    assert drv.delivery(DeliveryInput(w_id=1, o_carrier_id=9, ol_delivery_d=when)) == DeliveryOutput((), DISTRICTS)


def test_a_row_a_transaction_needs_and_does_not_find_is_not_loaded(drv, mongo):
    """One error for every missing row (base.NotLoaded), a NEW-ORDER without its ORDER too;
    the transaction leaves no trace."""
    db = db_of(mongo, drv)
    first = ORDERS - NEW_ORDERS + 1
    delete_order(db, drv.schema, 1, 2, first)
    before = snapshot(mongo, drv)
    with pytest.raises(NotLoaded, match=f"new order without order w_id=1 d_id=2 o_id={first}"):
        drv.delivery(DeliveryInput(w_id=1, o_carrier_id=7, ol_delivery_d=T0))
    with pytest.raises(NotLoaded, match="no district"):
        drv.stock_level(StockLevelInput(w_id=1, d_id=DISTRICTS + 1, threshold=10))
    with pytest.raises(NotLoaded, match="no customer"):
        drv.order_status(OrderStatusInput(w_id=1, d_id=1, c_id=CUSTOMERS + 1, c_last=None))
    assert snapshot(mongo, drv) == before


def test_stock_level_counts_distinct_low_items_of_last_20_orders(drv):
    for threshold in (8, 11, 60):
        low_items = {
            line_item(o, n)
            for o in range(1, ORDERS + 1)
            for n in range(1, lines_of(o) + 1)
            if stock_quantity(line_item(o, n)) < threshold
        }
        assert drv.stock_level(StockLevelInput(w_id=1, d_id=1, threshold=threshold)) == StockLevelOutput(len(low_items))
    # 25 new orders of item 20 only: the last 20 orders hold item 20 alone
    for _ in range(25):
        drv.new_order(NewOrderInput(w_id=1, d_id=1, c_id=1, o_entry_d=T0, items=(OrderLineInput(20, 1, 1),)))
    assert drv.stock_level(StockLevelInput(w_id=1, d_id=1, threshold=100)) == StockLevelOutput(1)
    assert drv.stock_level(StockLevelInput(w_id=1, d_id=1, threshold=10)) == StockLevelOutput(0)


def test_stored_orders_and_orders_entered_at_read_the_order_with_its_lines(schema_drv):
    entry = T0 + dt.timedelta(days=1, milliseconds=7)  # no loaded order was entered then
    items = (OrderLineInput(3, 1, 4), OrderLineInput(2, 1, 1))
    o = schema_drv.new_order(NewOrderInput(w_id=1, d_id=2, c_id=3, o_entry_d=entry, items=items)).o_id
    keys = [(1, 1, 1), (1, 2, o), (2, 2, ORDERS + 1), (3, 1, 1)]
    stored = schema_drv.stored_orders(keys)
    assert sorted(stored) == [(1, 1, 1), (1, 2, o)]
    assert stored[(1, 2, o)] == StoredOrder(3, entry, 2, ((3, 1, 4), (2, 1, 1)))
    ms = epoch_ms(entry)
    assert schema_drv.orders_entered_at(1, 2, 3, ms) == [stored[(1, 2, o)]]
    assert schema_drv.orders_entered_at(1, 2, 3, ms + 1) == []
    assert schema_drv.orders_entered_at(1, 2, 4, ms) == []


class _CommandLog(monitoring.CommandListener):
    """The commands pymongo sends while recording (registered once, for every later client)."""

    def __init__(self):
        self.recording: list[dict] | None = None

    def started(self, event):
        if self.recording is not None and event.command_name not in ("hello", "isMaster", "endSessions"):
            self.recording.append(dict(event.command))

    def succeeded(self, event):
        pass

    def failed(self, event):
        pass


COMMAND_LOG = _CommandLog()
monitoring.register(COMMAND_LOG)


@contextlib.contextmanager
def commands_sent():
    COMMAND_LOG.recording = sent = []
    try:
        yield sent
    finally:
        COMMAND_LOG.recording = None


def test_only_stock_level_leaves_the_transaction_for_a_read_preference(schema_drv, secantus):
    """The VLDB paper's reads: StockLevel outside a transaction (on the read preference, in a
    causal session); OrderStatus stays a transaction on the primary."""
    d = make_driver(
        secantus,
        schema_drv.schema,
        database=schema_drv.database_name,
        read_preference="secondaryPreferred",
        causal="true",
    )
    try:
        assert d.describe()["stock_level_in_transaction"] is False
        assert d.stock_level(StockLevelInput(w_id=1, d_id=1, threshold=60)) == schema_drv.stock_level(
            StockLevelInput(w_id=1, d_id=1, threshold=60)
        )
        o_id = d.new_order(NewOrderInput(w_id=1, d_id=1, c_id=2, o_entry_d=T0, items=(OrderLineInput(3, 1, 1),))).o_id
        with commands_sent() as sent:
            assert d.order_status(OrderStatusInput(w_id=1, d_id=1, c_id=2, c_last=None)).o_id == o_id
        assert sent[0].get("startTransaction") is True and "commitTransaction" in sent[-1]
        assert all(c.get("$readPreference", {}).get("mode", "primary") == "primary" for c in sent)
        with commands_sent() as sent:
            d.stock_level(StockLevelInput(w_id=1, d_id=1, threshold=60))
        assert sent and not any("startTransaction" in c or "commitTransaction" in c for c in sent)
        assert all(c["$readPreference"]["mode"] == "secondaryPreferred" for c in sent)
        assert all(
            c["readConcern"]["level"] == "majority" and "afterClusterTime" in c["readConcern"] for c in sent[1:]
        )  # causal: each read after the session's last operation
    finally:
        d.close()


def test_without_transactions_a_rolled_back_new_order_leaves_its_first_write(schema_drv, secantus, mongo):
    """transactions=false (the FoundationDB study's mongo3): statements commit one by one, so a
    NewOrder that rolls back on its unused item has already taken an order id. The same
    NewOrder in a transaction leaves no trace (test_new_order_with_unused_item_leaves_no_trace)."""
    d = make_driver(secantus, schema_drv.schema, database=schema_drv.database_name, transactions="false")
    try:
        assert d.describe()["transactions"] is False
        district = db_of(mongo, d).district
        before = district.find_one({"d_w_id": 1, "d_id": 2})["d_next_o_id"]
        items = (OrderLineInput(3, 1, 2), OrderLineInput(ITEMS + 1000, 1, 1))
        with pytest.raises(UserAbort):
            d.new_order(NewOrderInput(w_id=1, d_id=2, c_id=1, o_entry_d=T0, items=items))
        assert district.find_one({"d_w_id": 1, "d_id": 2})["d_next_o_id"] == before + 1
    finally:
        d.close()


def test_journal_asks_for_j_in_every_write_concern(secantus):
    d = make_driver(secantus, journal="true")
    try:
        assert d.db.write_concern.document == {"w": "majority", "j": True}
        assert d.describe()["journal"] is True
    finally:
        d.close()


def test_every_transaction_runs_with_the_options_read_and_write_concern(secantus):
    """The concerns are made once a driver (not per transaction): each transaction gets them."""
    d = make_driver(secantus, journal="true", read_concern="snapshot")
    try:
        for _ in range(2):
            opts = d._run(lambda s: s._transaction.opts)
            assert opts.write_concern.document == {"w": "majority", "j": True}
            assert opts.read_concern.level == "snapshot"
    finally:
        d.close()


def test_endpoints_make_a_replica_set_uri_without_credentials():
    d = MongoDBDriver(
        ConnectionOptions(
            endpoints=["a", "b:27018", "[::1]"], username="u", password="pw", extra={"replica_set": "rs0"}
        )
    )
    assert d.describe()["uri"] == "mongodb://a:27017,b:27018,[::1]:27017/?replicaSet=rs0"


# -- error classification ------------------------------------------------------------------
def test_write_conflict_is_retryable(schema_drv, mongo):
    db = db_of(mongo, schema_drv)
    items = (OrderLineInput(4, 1, 1),)
    with mongo.start_session() as other:
        other.start_transaction()
        db.district.update_one({"d_w_id": 1, "d_id": 1}, {"$inc": {"d_ytd": 1}}, session=other)
        with pytest.raises(RetryableError):
            schema_drv.new_order(NewOrderInput(w_id=1, d_id=1, c_id=1, o_entry_d=T0, items=items))
        other.abort_transaction()
    assert find_order(db, schema_drv.schema, 1, 1, ORDERS + 1) is None
    assert find_order(db, schema_drv.schema, 1, 1, ORDERS) is not None
    assert schema_drv.new_order(NewOrderInput(w_id=1, d_id=1, c_id=1, o_entry_d=T0, items=items)).o_id == ORDERS + 1


def test_connect_to_closed_port_is_unreachable_within_timeout():
    from secantus_server import free_port

    drv = MongoDBDriver(
        ConnectionOptions(endpoints=[f"127.0.0.1:{free_port()}"], connect_timeout=2, username="u", password="s3cret")
    )
    t0 = time.monotonic()
    with pytest.raises(Unreachable) as e:
        drv.connect()
    assert time.monotonic() - t0 < 6
    assert "\n" not in str(e.value) and "s3cret" not in str(e.value)


def test_server_loss_is_unknown_outcome_or_connection_lost_then_reconnects(own_secantus):
    drv = make_driver(own_secantus, txn_timeout="2", commit_retries="1")
    try:
        drv.create_schema(reset=True)
        drv.load_unit("warehouse:1", dataset()["warehouse:1"])
        assert drv.stock_level(StockLevelInput(w_id=1, d_id=1, threshold=10)) == StockLevelOutput(0)

        def write_then_lose_server(s):  # the server goes away between the writes and the commit
            drv.db.district.update_one({"d_w_id": 1, "d_id": 1}, {"$inc": {"d_ytd": 1}}, session=s)
            own_secantus.stop()
            return {}

        t0 = time.monotonic()
        with pytest.raises(UnknownOutcome):
            drv._run(write_then_lose_server)
        assert time.monotonic() - t0 < 12

        t0 = time.monotonic()
        with pytest.raises(ConnectionLost):
            drv.payment(PaymentInput(w_id=1, d_id=1, c_w_id=1, c_d_id=1, c_id=1, c_last=None, h_amount=1.0, h_date=T0))
        assert time.monotonic() - t0 < 8
        own_secantus.start()
        assert drv.stock_level(StockLevelInput(w_id=1, d_id=1, threshold=10)) == StockLevelOutput(0)
        # the commit never reached the server: the write is not there
        assert drv.db.district.find_one({"d_w_id": 1, "d_id": 1})["d_ytd"] == 1000 * CUSTOMERS
    finally:
        drv.close()


def test_bad_options_are_one_line_errors():
    for extra, msg in (
        ({"schema": "flat"}, "schema must be"),
        ({"causal": "maybe"}, "causal must be"),
        ({"nope": "1"}, "unknown driver option"),
        ({"read_preference": "any"}, "read_preference must be"),
        ({"retry_writes": "sometimes"}, "retry_writes must be"),
        ({"write_concern": "0"}, "write_concern must be"),
        ({"write_concern": "all"}, "write_concern must be"),
    ):
        with pytest.raises(ValueError, match=msg):
            MongoDBDriver(ConnectionOptions(endpoints=["h"], extra=extra))


def test_describe(schema_drv):
    d = schema_drv.describe()
    assert d["db"] == "mongodb" and d["schema_variant"] == schema_drv.schema
    assert d["server_version"] not in ("", "unknown")
    assert (d["read_concern"], d["write_concern"], d["read_preference"]) == ("majority", "majority", "primary")
    assert d["find_and_modify"] is True and d["batch_writes"] is True


# Where each driver option shows its effective value in describe() (the results' options.driver).
DESCRIBED_AS = {"schema": "schema_variant", "causal": "causal_consistency", "txn_timeout": "txn_timeout_s"}


def test_every_option_the_studies_compared_appears_in_describe(secantus):
    """Non-default values of every option reach describe() (what the results record), the
    client really gets retryWrites, and the topology comes from the server's hello."""
    studied = {
        "schema": "denormalized",
        "find_and_modify": "false",
        "batch_writes": "false",
        "read_concern": "snapshot",
        "write_concern": "1",
        "read_preference": "secondaryPreferred",
        "causal": "true",
        "retry_writes": "false",
        "commit_retries": "5",
        "auth_source": "admin",
        "journal": "true",
        "transactions": "false",
        "stock_level_in_transaction": "false",
    }
    d = make_driver(secantus, **studied)
    try:
        described = d.describe()
        assert [o.name for o in OPTIONS if DESCRIBED_AS.get(o.name, o.name) not in described] == []
        assert {k: described[DESCRIBED_AS.get(k, k)] for k in studied} == {
            "schema": "denormalized",
            "find_and_modify": False,
            "batch_writes": False,
            "read_concern": "snapshot",
            "write_concern": 1,
            "read_preference": "secondaryPreferred",
            "causal": True,
            "retry_writes": False,
            "commit_retries": 5,
            "auth_source": "admin",
            "journal": True,
            "transactions": False,
            "stock_level_in_transaction": False,
        }
        assert d.client.options.retry_writes is False
        assert described["topology"] == "replica_set"  # SecantusDB answers as a set's primary
    finally:
        d.close()
    d = make_driver(secantus)
    try:
        assert d.describe()["retry_writes"] is True and d.client.options.retry_writes is True
    finally:
        d.close()


def test_topology_of_hello():
    assert topology_of({"msg": "isdbgrid", "isWritablePrimary": True}) == "sharded"
    assert topology_of({"setName": "rs0", "isWritablePrimary": True}) == "replica_set"
    assert topology_of({"isWritablePrimary": True}) == "standalone"


def test_load_documents_get_distinct_object_ids_of_now(monkeypatch):
    """The load mints its documents' _ids for a batch at once (pymongo would mint one at a
    time): ObjectIds of the load's time, distinct within a batch, across the 2**24 counter
    values of one, and across batches."""
    from bson.objectid import ObjectId
    from tpcc_runner.drivers.mongodb import loading

    monkeypatch.setattr(loading, "_COUNTER_VALUES", 16)
    batch = loading.with_object_ids([{"n": n} for n in range(40)])
    again = loading.with_object_ids([{"n": n} for n in range(40)])
    ids = [d["_id"] for d in batch + again]
    assert all(type(i) is ObjectId for i in ids) and len(set(ids)) == 80
    assert [d["n"] for d in batch] == list(range(40))
    now = dt.datetime.now(dt.timezone.utc)
    assert all(abs(i.generation_time - now) < dt.timedelta(seconds=5) for i in ids)


@pytest.mark.parametrize("schema", ["normalized", "denormalized"])
def test_a_load_row_of_the_wrong_width_is_refused_before_anything_is_written(schema):
    """The row width is checked for the whole unit at once (set(map(len, rows))): a short
    row anywhere, here the last order line, names its table and columns; nothing is sent
    (the driver never connected)."""
    drv = MongoDBDriver(ConnectionOptions(endpoints=["127.0.0.1:1"], extra={"schema": schema}))
    line = (1, 1, 1, 1, 7, 1, None, 5, 0.0, "x" * 24)
    with pytest.raises(ValueError, match=r"a order_line row has 9 values, expected 10 \(ol_o_id, "):
        drv.load_unit("district:1:1", {"order_line": [line, line[:-1]]})


def test_shard_keys_are_the_warehouse_id_and_prefix_every_unique_index():
    """Every collection with a warehouse id is sharded on it; a sharded collection enforces a
    unique index only when the shard key is its first field, so each primary key must be."""
    with_warehouse = {t for t, columns in TABLES.items() if any(c.endswith("w_id") for c in columns)}
    assert set(SHARD_KEYS) == with_warehouse == set(TABLES) - {"item"}
    # embedded: CUSTOMER (sharded on c_w_id) holds the orders and history, found by an index
    # that the shard key prefixes too; the collections it replaces are neither created nor sharded
    assert CUSTOMER_ORDER_INDEX[0][0][0] == SHARD_KEYS["customer"]
    embedded = MongoDBDriver(ConnectionOptions(endpoints=["h"], extra={"schema": "embedded"}))
    assert set(TABLES) - set(embedded._tables()) == {"orders", "order_line", "history"}
    for table, field in SHARD_KEYS.items():
        assert field in TABLES[table], (table, field)
        for keys, unique in INDEXES[table]:
            if unique:
                assert keys[0][0] == field, (table, keys)


# -- consistency ---------------------------------------------------------------------------
def test_consistency_holds_after_load_and_a_mix_of_transactions(drv):
    results = drv.check_consistency(range(1, WAREHOUSES + 1))
    assert [r.number for r in results] == list(range(1, 13))
    assert [r.number for r in results if not r.passed] == []
    checked = {r.number: r.checked for r in results}
    n_lines = sum(lines_of(o) for o in range(1, ORDERS + 1)) * WAREHOUSES * DISTRICTS
    assert checked == {1: 2, 2: 4, 3: 4, 4: 4, 5: 24, 6: 24, 7: n_lines, 8: 2, 9: 4, 10: 24, 11: 4, 12: 24}
    for k in range(6):
        w, d = k % 2 + 1, k % 3 % 2 + 1
        drv.new_order(
            NewOrderInput(
                w_id=w,
                d_id=d,
                c_id=k % CUSTOMERS + 1,
                o_entry_d=T0,
                items=(OrderLineInput(k + 1, w, 3), OrderLineInput(k + 5, 3 - w, 12)),
            )
        )
        drv.payment(
            PaymentInput(w_id=w, d_id=d, c_w_id=3 - w, c_d_id=d, c_id=k + 1, c_last=None, h_amount=10.5 + k, h_date=T0)
        )
        drv.payment(
            PaymentInput(
                w_id=1,
                d_id=1,
                c_w_id=1,
                c_d_id=1,
                c_id=None if k % 2 else k + 1,
                c_last="BARBARBAR" if k % 2 else None,
                h_amount=10.5 + k,
                h_date=T0,
            )
        )
        if k % 2:
            drv.delivery(DeliveryInput(w_id=w, o_carrier_id=k + 1, ol_delivery_d=T0))
    assert [(r.number, r.example) for r in drv.check_consistency([1, 2]) if not r.passed] == []


def _transactions(rng: random.Random, n: int) -> list[tuple[str, TransactionInput]]:
    """n TPC-C transactions over the test data: home and remote lines, unused items (rolled
    back), payments by id and by last name, local and remote."""
    out: list[tuple[str, TransactionInput]] = []
    for _ in range(n):
        w, d = rng.randint(1, WAREHOUSES), rng.randint(1, DISTRICTS)
        c_w = w if rng.random() < 0.7 else 3 - w
        by_name = (c_w, d) in SAME_LAST and rng.random() < 0.5
        kind = rng.choice(["new_order"] * 4 + ["payment"] * 3 + ["order_status", "delivery", "stock_level"])
        p: TransactionInput
        if kind == "new_order":
            items = tuple(
                OrderLineInput(rng.randint(1, ITEMS), w if rng.random() < 0.8 else 3 - w, rng.randint(1, 10))
                for _ in range(rng.randint(1, 5))
            )
            if rng.random() < 0.1:
                items = (*items[:-1], items[-1]._replace(i_id=ITEMS + 1))  # unused: the whole order rolls back
            p = NewOrderInput(w_id=w, d_id=d, c_id=rng.randint(1, CUSTOMERS), o_entry_d=T0, items=items)
        elif kind == "payment":
            p = PaymentInput(
                w_id=w,
                d_id=d,
                c_w_id=c_w,
                c_d_id=d,
                c_id=None if by_name else rng.randint(1, CUSTOMERS),
                c_last=SAME_LAST[(c_w, d)][0] if by_name else None,
                h_amount=rng.randint(100, 500000) / 100,
                h_date=T0,
            )
        elif kind == "order_status":
            p = OrderStatusInput(
                w_id=w,
                d_id=d,
                c_id=None if (w, d) in SAME_LAST else rng.randint(1, CUSTOMERS),
                c_last=SAME_LAST[(w, d)][0] if (w, d) in SAME_LAST else None,
            )
        elif kind == "delivery":
            p = DeliveryInput(w_id=w, o_carrier_id=rng.randint(1, 10), ol_delivery_d=T0)
        else:
            p = StockLevelInput(w_id=w, d_id=d, threshold=rng.randint(10, 60))
        out.append((kind, p))
    return out


def test_embedded_schema_answers_as_the_denormalized_one_does(secantus):
    """The same transactions on the same load give the same outputs, rollbacks included, with
    orders and history inside the customers as with orders in their own collection, and both
    pass the 12 conditions over the same rows: the embedded schema moves rows, not answers."""
    drivers = [make_driver(secantus, schema, database=f"tpcc_same_{schema}") for schema in ("denormalized", "embedded")]
    try:
        answers = []
        for d in drivers:
            load(d)
            answered: list[tuple[str, object]] = []
            for kind, p in _transactions(random.Random(21), 60):
                try:
                    answered.append((kind, p.run_on(d)))
                except UserAbort:
                    answered.append((kind, "rolled back"))
            answers.append(answered)
        assert answers[0] == answers[1]
        assert {kind for kind, _ in answers[1]} == {"new_order", "payment", "order_status", "delivery", "stock_level"}
        assert ("new_order", "rolled back") in answers[1]
        checks = [d.check_consistency(range(1, WAREHOUSES + 1)) for d in drivers]
        assert [(r.number, r.passed, r.checked) for r in checks[0]] == [
            (r.number, r.passed, r.checked) for r in checks[1]
        ]
        assert all(r.passed for r in checks[1])
    finally:
        for d in drivers:
            d.close()


CORRUPTIONS = {
    # name: (mutation of the raw database, conditions expected to fail)
    "w_ytd": (lambda db, s: db.warehouse.update_one({"w_id": 2}, {"$inc": {"w_ytd": 1.0}}), {1, 8}),
    "d_ytd": (lambda db, s: db.district.update_one({"d_w_id": 1, "d_id": 2}, {"$inc": {"d_ytd": 0.5}}), {1, 9}),
    "d_next_o_id": (lambda db, s: db.district.update_one({"d_w_id": 2, "d_id": 2}, {"$inc": {"d_next_o_id": 1}}), {2}),
    "lost_new_order": (
        lambda db, s: db.new_order.delete_one({"no_w_id": 1, "no_d_id": 1, "no_o_id": ORDERS - 1}),
        {3, 5, 11},
    ),
    "o_ol_cnt": (lambda db, s: update_order(db, s, 1, 1, 2, {"$inc": {"o_ol_cnt": 1}}), {4, 6}),
    # a delivered order's line (amount 0, so the customer sums stay right) loses its date
    "ol_delivery_d": (
        lambda db, s: (
            update_order(db, s, 2, 1, 2, {"$set": {"order_line.1.ol_delivery_d": None}})
            if s != "normalized"
            else db.order_line.update_one(
                {"ol_w_id": 2, "ol_d_id": 1, "ol_o_id": 2, "ol_number": 2}, {"$set": {"ol_delivery_d": None}}
            )
        ),
        {7},
    ),
    # a delivered line (amount 0) of an order lost: the counts of lines disagree with O_OL_CNT
    "lost_order_line": (
        lambda db, s: (
            update_order(db, s, 1, 2, 3, {"$pop": {"order_line": 1}})
            if s != "normalized"
            else db.order_line.delete_one({"ol_w_id": 1, "ol_d_id": 2, "ol_o_id": 3, "ol_number": 1})
        ),
        {4, 6},
    ),
    "c_balance": (
        lambda db, s: db.customer.update_one({"c_w_id": 1, "c_d_id": 2, "c_id": 4}, {"$inc": {"c_balance": 0.01}}),
        {10, 12},
    ),
    "h_amount": (
        lambda db, s: update_history(db, s, {"h_c_w_id": 2, "h_c_d_id": 2, "h_c_id": 5}, {"$inc": {"h_amount": 2.0}}),
        {8, 9, 10},
    ),
}


@pytest.mark.parametrize("corruption", list(CORRUPTIONS))
def test_corrupted_document_fails_the_right_condition(schema_drv, mongo, corruption):
    mutate, expected = CORRUPTIONS[corruption]
    res = mutate(db_of(mongo, schema_drv), schema_drv.schema)
    assert (getattr(res, "modified_count", 0) or getattr(res, "deleted_count", 0)) == 1
    results = schema_drv.check_consistency([1, 2])
    failed = {r.number for r in results if not r.passed}
    assert failed == expected
    for r in results:
        if not r.passed:
            assert r.violations >= 1 and r.example, r


def _orphan_line(db, s):
    """An ORDER-LINE row of an order that does not exist; in the denormalized schema it can
    only be a document of the order_line collection, which the check reads too."""
    return db.order_line.insert_one(
        {
            "ol_w_id": 1,
            "ol_d_id": 1,
            "ol_o_id": 99,
            "ol_number": 1,
            "ol_i_id": 1,
            "ol_supply_w_id": 1,
            "ol_delivery_d": None,
            "ol_quantity": 5,
            "ol_amount": Int64(100),
            "ol_dist_info": "orphan",
        }
    )


EXACT_CORRUPTIONS = {
    # a 0.01 drift (one cent: money is int64 cents) in each money field
    "w_ytd+0.01": (lambda db, s: db.warehouse.update_one({"w_id": 2}, {"$inc": {"w_ytd": Int64(1)}}), {1, 8}),
    "d_ytd-0.01": (
        lambda db, s: db.district.update_one({"d_w_id": 2, "d_id": 1}, {"$inc": {"d_ytd": Int64(-1)}}),
        {1, 9},
    ),
    "c_balance+0.01": (
        lambda db, s: db.customer.update_one({"c_w_id": 2, "c_d_id": 1, "c_id": 2}, {"$inc": {"c_balance": Int64(1)}}),
        {10, 12},
    ),
    "c_ytd_payment+0.01": (
        lambda db, s: db.customer.update_one(
            {"c_w_id": 1, "c_d_id": 1, "c_id": 6}, {"$inc": {"c_ytd_payment": Int64(1)}}
        ),
        {12},
    ),
    "h_amount+0.01": (
        lambda db, s: update_history(db, s, {"h_w_id": 1, "h_d_id": 2, "h_c_id": 1}, {"$inc": {"h_amount": Int64(1)}}),
        {8, 9, 10},
    ),
    # a delivered line (of order 1, customer 6)
    "ol_amount+0.01": (
        lambda db, s: (
            update_order(db, s, 1, 2, 1, {"$inc": {"order_line.0.ol_amount": Int64(1)}})
            if s != "normalized"
            else db.order_line.update_one(
                {"ol_w_id": 1, "ol_d_id": 2, "ol_o_id": 1, "ol_number": 1}, {"$inc": {"ol_amount": Int64(1)}}
            )
        ),
        {10, 12},
    ),
    # orphans, each reported by row
    "new_order_without_district": (
        lambda db, s: db.new_order.insert_one({"no_w_id": 1, "no_d_id": 3, "no_o_id": 1}),
        {2, 5, 9, 11},
    ),
    "order_line_without_order": (_orphan_line, {4, 6, 7}),
    "district_lost": (lambda db, s: db.district.delete_one({"d_w_id": 1, "d_id": 2}), {1, 2, 9}),
    "warehouse_lost": (lambda db, s: db.warehouse.delete_one({"w_id": 2}), {1, 8}),
    "customer_lost": (lambda db, s: db.customer.delete_one({"c_w_id": 2, "c_d_id": 2, "c_id": 5}), {10, 12}),
}


# Embedded, a lost CUSTOMER document takes its orders and history with it: no balance is
# wrong, but the warehouse's and district's YTDs lose that history (8, 9) and the district
# an order (11).
EMBEDDED_EXPECTED = {"customer_lost": {8, 9, 11}}


@pytest.mark.parametrize("corruption", list(EXACT_CORRUPTIONS))
def test_money_drifts_and_orphan_documents_fail_the_right_conditions(schema_drv, mongo, corruption):
    mutate, expected = EXACT_CORRUPTIONS[corruption]
    if schema_drv.schema == "embedded":
        expected = EMBEDDED_EXPECTED.get(corruption, expected)
    mutate(db_of(mongo, schema_drv), schema_drv.schema)
    results = {r.number: r for r in schema_drv.check_consistency([1, 2])}
    assert {n for n, r in results.items() if not r.passed} == expected
    # a district without its DISTRICT document is still judged by 4 and 11
    assert all(results[n].checked >= WAREHOUSES * DISTRICTS for n in (4, 11))
    for n in expected:
        assert results[n].violations >= 1 and results[n].example, results[n]


def test_orphan_documents_are_named_by_row(schema_drv, mongo):
    db = db_of(mongo, schema_drv)
    db.new_order.insert_one({"no_w_id": 1, "no_d_id": 3, "no_o_id": 1})
    _orphan_line(db, schema_drv.schema)
    results = {r.number: r for r in schema_drv.check_consistency([1, 2])}
    assert results[5].example == "NEW-ORDER (1, 3, 1) without an ORDER row"
    assert results[6].example == "1 ORDER-LINE rows of missing order (1, 1, 99)"


def test_the_check_reads_the_schema_the_load_stored(schema_drv, secantus):
    other = "denormalized" if schema_drv.schema == "normalized" else "normalized"
    wrong = make_driver(secantus, other, database=schema_drv.database_name)
    try:
        results = wrong.check_consistency([1, 2])
        assert [r.number for r in results if not r.passed] == []
        n_lines = sum(lines_of(o) for o in range(1, ORDERS + 1)) * WAREHOUSES * DISTRICTS
        assert results[6].checked == n_lines
        with pytest.raises(NotLoaded, match=f"loaded with schema '{schema_drv.schema}'"):
            require_loaded(wrong, WAREHOUSES)
    finally:
        wrong.close()


def test_a_lost_order_delivered_during_the_run_fails_condition_11_given_the_runners_deliveries(schema_drv, mongo):
    delivered = schema_drv.delivery(DeliveryInput(w_id=2, o_carrier_id=4, ol_delivery_d=T0)).delivered
    deliveries = RunDeliveries(delivered={(2, d): 1 for d, _ in delivered})
    assert not [r for r in schema_drv.check_consistency([1, 2], deliveries) if not r.passed]
    d, o = delivered[0]
    db = db_of(mongo, schema_drv)
    delete_order(db, schema_drv.schema, 2, d, o)
    # counted from ORDERS, condition 11 cannot see it: only the customer's balance does
    assert {r.number for r in schema_drv.check_consistency([1, 2]) if not r.passed} == {10, 12}
    assert {r.number for r in schema_drv.check_consistency([1, 2], deliveries) if not r.passed} == {10, 11, 12}
