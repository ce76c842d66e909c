"""The VoltDB driver against a real VoltDB 10.1.1 server (hack/voltdb.sh), on a tiny
hand-made TPC-C database: 2 warehouses, 2 districts each, 5 customers and 5 orders per
district (orders 1-3 delivered, 4-5 in NEW-ORDER), 20 items."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import signal
import socket
import time
from array import array
from decimal import Decimal

import pytest
from tpcc_contract.deliveries import RunDeliveries
from tpcc_runner.drivers import voltdb as volt
from tpcc_runner.drivers.base import (
    ConnectionLost,
    ConnectionOptions,
    DriverError,
    LoadMeta,
    NotLoaded,
    RetryableError,
    UnknownOutcome,
    Unreachable,
    UserAbort,
)
from tpcc_runner.drivers.voltdb import VoltDBDriver, ddl_columns
from tpcc_runner.durability import StoredOrder, epoch_ms
from tpcc_runner.executor import execute_once
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
)
from voltdb_server import voltdb, voltdb_cluster  # noqa: F401  (fixtures)

WAREHOUSES, DISTRICTS, CUSTOMERS, ORDERS, NEW_ORDERS, ITEMS = 2, 2, 5, 5, 2, 20
DELIVERED = ORDERS - NEW_ORDERS
T0 = dt.datetime(2024, 1, 2, 3, 4, 5, 678000)
# District (1, 1): three customers share a last name; sorted by c_first they are 2, 3, 1.
LAST_NAMES = {1: "BARBARBAR", 2: "BARBARBAR", 3: "BARBARBAR", 4: "OUGHTABLE", 5: "ESEPRIPRES"}
FIRST_NAMES = {1: "Cecilia", 2: "Anna", 3: "Berta", 4: "Dora", 5: "Emil"}
# Stock quantities that exercise clause 2.4.2.2's "+91" rule (item: s_quantity).
STOCK_QUANTITY = {1: 50, 2: 12, 3: 15}
INVALID_ITEM = ITEMS + 1000


def ol_cnt(w, d, o):
    return 2 + (w + d + o) % 3


def ol_i_id(w, d, o, n):
    return (w * 7 + d * 5 + o * 3 + n) % ITEMS + 1


def meta() -> LoadMeta:
    return LoadMeta(
        warehouses=WAREHOUSES,
        items=ITEMS,
        districts=DISTRICTS,
        customers_per_district=CUSTOMERS,
        orders_per_district=ORDERS,
        new_orders_per_district=NEW_ORDERS,
        c_last=1,
        c_id=2,
        ol_i_id=3,
        schema_variant="stored-procedures",
        loaded_at="2024-01-02T03:04:05",
        complete=True,
    )


def units() -> dict[str, dict[str, list[tuple]]]:
    """The load units of the tiny database, rows in schema.TABLES order (initial state of
    clause 4.3.3.1, scaled down)."""
    u = {
        "item:0": {
            "item": [
                (i, i * 10, f"item-{i}", round(1 + i * 0.37, 2), "xxORIGINALxx" if i % 2 else "generic data")
                for i in range(1, ITEMS + 1)
            ]
        }
    }
    for w in range(1, WAREHOUSES + 1):
        u[f"warehouse:{w}"] = {
            "warehouse": [
                (
                    w,
                    f"W{w}",
                    "street1",
                    "street2",
                    "city",
                    "ST",
                    "123411111",
                    0.1 + w / 100,
                    DISTRICTS * CUSTOMERS * 10.0,
                )
            ],
            "district": [
                (d, w, f"D{w}-{d}", "s1", "s2", "city", "ST", "123411111", 0.05 + d / 100, CUSTOMERS * 10.0, ORDERS + 1)
                for d in range(1, DISTRICTS + 1)
            ],
        }
        u[f"stock:{w}:0"] = {
            "stock": [
                (
                    i,
                    w,
                    STOCK_QUANTITY.get(i, 30 + i),
                    *(f"dist-{w}-{i}-{k:02d}" for k in range(1, 11)),
                    0,
                    0,
                    0,
                    "s ORIGINAL s" if i % 3 else "s data",
                )
                for i in range(1, ITEMS + 1)
            ]
        }
        for d in range(1, DISTRICTS + 1):
            customers, history, orders, lines, new_orders = [], [], [], [], []
            for c in range(1, CUSTOMERS + 1):
                customers.append(
                    (
                        c,
                        d,
                        w,
                        FIRST_NAMES[c],
                        "OE",
                        LAST_NAMES[c],
                        "s1",
                        "s2",
                        "city",
                        "ST",
                        "123411111",
                        "0123456789012345",
                        T0,
                        "BC" if c == 4 else "GC",
                        50000.0,
                        0.1,
                        -10.0,
                        10.0,
                        1,
                        0,
                        f"data of customer {c}",
                    )
                )
                history.append((c, d, w, d, w, T0, 10.0, "initial payment"))
            for o in range(1, ORDERS + 1):
                delivered = o <= DELIVERED
                orders.append((o, d, w, o, T0, 3 if delivered else None, ol_cnt(w, d, o), 1))
                for n in range(1, ol_cnt(w, d, o) + 1):
                    lines.append(
                        (
                            o,
                            d,
                            w,
                            n,
                            ol_i_id(w, d, o, n),
                            w,
                            T0 if delivered else None,
                            5,
                            0.0 if delivered else round(n * 3.33, 2),
                            f"info-{o}-{n}",
                        )
                    )
                if not delivered:
                    new_orders.append((o, d, w))
            u[f"district:{w}:{d}"] = {
                "customer": customers,
                "history": history,
                "orders": orders,
                "order_line": lines,
                "new_order": new_orders,
            }
    return u


def sql(driver: VoltDBDriver, text: str, *params):
    """Rows of a statement; money (DECIMAL) as float, to compare with the rows the tests load."""
    from tpcc_runner.drivers.voltdb import INTEGER

    rows = driver._sql(text, *((INTEGER, p) for p in params), writes=True)
    return [[float(v) if isinstance(v, Decimal) else v for v in row] for row in rows]


def one(driver: VoltDBDriver, text: str, *params):
    rows = sql(driver, text, *params)
    assert len(rows) == 1, rows
    return rows[0]


def count(driver: VoltDBDriver, table: str) -> int:
    return one(driver, f"SELECT COUNT(*) FROM {table};")[0]


@pytest.fixture
def driver(voltdb):
    d = VoltDBDriver(ConnectionOptions(endpoints=voltdb.endpoints, connect_timeout=10))
    d.connect()
    yield d
    d.close()


@pytest.fixture
def loaded(driver):
    """A freshly created schema holding the tiny database."""
    driver.create_schema(reset=True)
    for key, tables in units().items():
        driver.load_unit(key, tables)
    driver.write_meta(meta())
    return driver


@pytest.fixture
def by_district(voltdb):
    """The tiny database loaded partitioned by district (driver option partitioning=district)."""
    d = VoltDBDriver(
        ConnectionOptions(endpoints=voltdb.endpoints, connect_timeout=10, extra={"partitioning": "district"})
    )
    d.connect()
    d.create_schema(reset=True)
    for key, tables in units().items():
        d.load_unit(key, tables)
    d.write_meta(LoadMeta.from_dict({**meta().to_dict(), "schema_variant": d.describe()["schema_variant"]}))
    yield d
    d.close()


@pytest.fixture
def on_d_id(voltdb):
    """The tiny database loaded with the VoltDB study's District ID layout (partitioning=d_id)."""
    d = VoltDBDriver(ConnectionOptions(endpoints=voltdb.endpoints, connect_timeout=10, extra={"partitioning": "d_id"}))
    d.connect()
    d.create_schema(reset=True)
    for key, tables in units().items():
        d.load_unit(key, tables)
    d.write_meta(LoadMeta.from_dict({**meta().to_dict(), "schema_variant": d.describe()["schema_variant"]}))
    yield d
    d.close()


def consistency(driver):
    return {r.number: r for r in driver.check_consistency(range(1, WAREHOUSES + 1))}


# -- schema and load --------------------------------------------------------------------


def test_ddl_columns_follow_the_table_layout():
    """schema.TABLES' columns, then (district-keyed tables) the district key the driver adds."""
    columns = ddl_columns()
    for table, names in TABLES.items():
        key = (volt.DISTRICT_KEYS[table][0],) if table in volt.DISTRICT_KEYS else ()
        assert tuple(name for name, _ in columns[table]) == names + key


def partitioned_on(statements: list[str]) -> dict[str, str]:
    return dict(re.findall(r"PARTITION TABLE (\w+) ON COLUMN (\w+);", "\n".join(statements)))


def procedures(statements: list[str]) -> dict[str, str]:
    """Each procedure's partitioning: "table.column parameter" or "multi"."""
    out = {}
    for stmt in statements:
        m = re.match(
            r"CREATE PROCEDURE (?:PARTITION ON TABLE (\w+) COLUMN (\w+) PARAMETER (\d) )?"
            r"FROM CLASS [\w.]+\.(\w+);",
            stmt,
        )
        if m:
            out[m.group(4)] = f"{m.group(1)}.{m.group(2)} {m.group(3)}" if m.group(1) else "multi"
    return out


def test_the_two_partitioning_layouts_partition_and_declare_what_the_readme_says():
    by_warehouse, by_district = volt.ddl_statements("warehouse"), volt.ddl_statements("district")
    assert partitioned_on(by_warehouse) == {
        "warehouse": "w_id",
        "district": "d_w_id",
        "customer": "c_w_id",
        "history": "h_w_id",
        "new_order": "no_w_id",
        "orders": "o_w_id",
        "order_line": "ol_w_id",
        "stock": "s_w_id",
        "tpcc_load_unit": "w_id",
    }
    assert partitioned_on(by_district) == {
        **partitioned_on(by_warehouse),
        **{t: key for t, (key, _, _) in volt.DISTRICT_KEYS.items()},
    }
    assert procedures(by_warehouse) == {
        "NewOrder": "warehouse.w_id 0",
        "NewOrderMP": "multi",
        "Payment": "warehouse.w_id 0",
        "PaymentMP": "multi",
        "OrderStatus": "warehouse.w_id 0",
        "Delivery": "warehouse.w_id 0",
        "DeliveryDistrict": "warehouse.w_id 0",
        "StockLevel": "warehouse.w_id 0",
        "ConsistencyRead": "multi",
        "LoadWarehouse": "warehouse.w_id 0",
        "LoadStock": "warehouse.w_id 0",
        "LoadDistrict": "warehouse.w_id 0",
    }
    assert procedures(by_district) == {
        "NewOrderMP": "multi",
        "PaymentMP": "multi",
        "OrderStatus": "customer.c_wd 0",
        "Delivery": "multi",
        "DeliveryDistrict": "new_order.no_wd 0",
        "StockLevel": "multi",
        "ConsistencyRead": "multi",
        "LoadWarehouse": "multi",
        "LoadStock": "warehouse.w_id 0",
        "LoadDistrict": "multi",
    }
    # the tables themselves (columns, keys, indexes) are the same in both
    assert [s for s in by_warehouse if not s.startswith(("PARTITION", "CREATE PROCEDURE"))] == [
        s for s in by_district if not s.startswith(("PARTITION", "CREATE PROCEDURE"))
    ]
    with pytest.raises(ValueError, match="unknown VoltDB partitioning layout 'item'"):
        volt.ddl_statements("item")


def test_the_d_id_layout_is_the_studys_district_id_strategy():
    """partitioning=d_id, the VoltDB study's section 5.1: "For the District ID partition key, the
    Warehouse table and the District table are replicated across all partitions. If a table has a
    column associated with the District ID in the table, it is partitioned on that column. If a
    table does not have a column associated with the District ID, it is partitioned on a column
    associated with the Item ID." """
    by_d_id = volt.ddl_statements("d_id")
    assert partitioned_on(by_d_id) == {  # WAREHOUSE and DISTRICT: no PARTITION line, so replicated
        "customer": "c_d_id",
        "history": "h_d_id",  # the home (paying) district, where Payment writes it
        "new_order": "no_d_id",
        "orders": "o_d_id",
        "order_line": "ol_d_id",
        "item": "i_id",  # "Both the Item table and the Stock table are partitioned on ... the Item ID"
        "stock": "s_i_id",
        "tpcc_load_unit": "w_id",  # the runner's bookkeeping
    }
    # single-partition: OrderStatus ("guaranteed to be a one shot transaction") and the per-district
    # Delivery ("guaranteed to be a single partition transaction"), on D_ID; the rest multi-partition
    assert procedures(by_d_id) == {
        "NewOrderMP": "multi",
        "PaymentMP": "multi",
        "OrderStatus": "customer.c_d_id 0",
        "Delivery": "multi",
        "DeliveryDistrict": "new_order.no_d_id 0",
        "StockLevel": "multi",
        "ConsistencyRead": "multi",
        "LoadWarehouse": "multi",
        "LoadStock": "multi",
        "LoadDistrict": "multi",
        "LoadItemRows": "multi",
    }
    # the tables (columns, keys, indexes) are the other layouts'; every partition column is NOT NULL
    tables = [s for s in by_d_id if not s.startswith(("PARTITION", "CREATE PROCEDURE"))]
    assert tables == [
        s for s in volt.ddl_statements("warehouse") if not s.startswith(("PARTITION", "CREATE PROCEDURE"))
    ]
    for table, column in partitioned_on(by_d_id).items():
        create = next(s for s in tables if s.startswith(f"CREATE TABLE {table} "))
        assert re.search(rf"\b{column} INTEGER NOT NULL\b", create), (table, column)
    assert set(procedures(by_d_id)) <= set(volt.PROCEDURES)
    assert volt.SCHEMA_VARIANTS["d_id"] == "stored-procedures, partitioned on D_ID"
    assert len(set(volt.SCHEMA_VARIANTS.values())) == len(volt.LAYOUTS)


class Answers:
    """A stand-in for VoltDBDriver._call: records (procedure, first parameter's value) and answers
    with result tables of the shape each transaction procedure returns."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, object]] = []

    def __call__(self, procedure, params, *, writes, timeout=None):
        from types import SimpleNamespace

        self.calls.append((procedure, params[0][1]))
        tables = {
            "NewOrder": [[[7, 1.0]]],
            "Payment": [[[3, *[None] * 10, "GC", None, None, 1.5]]],
            "OrderStatus": [[[3, "f", "OE", "BAR", 1.5]], [], []],
            "Delivery": [[[1, 5], [2, 5]]],
            "DeliveryDistrict": [[[params[2][1], 5]]],
            "StockLevel": [[[4]]],
        }[procedure.removesuffix("MP")]
        return SimpleNamespace(tables=[SimpleNamespace(tuples=t) for t in tables])


def routed(layout: str) -> list[tuple[str, object]]:
    """Which procedure each transaction calls in a layout, with its first parameter: a local and a
    remote NewOrder and Payment, OrderStatus, both Deliveries, StockLevel, all of warehouse 3,
    district 7."""
    driver = VoltDBDriver(ConnectionOptions(endpoints=["127.0.0.1:1"], extra={"partitioning": layout}))
    driver._call = answers = Answers()  # type: ignore[method-assign]
    local, remote = (OrderLineInput(1, 3, 1),), (OrderLineInput(1, 3, 1), OrderLineInput(2, 4, 1))
    for items in (local, remote):
        driver.new_order(NewOrderInput(w_id=3, d_id=7, c_id=1, o_entry_d=T0, items=items))
    for c_w_id in (3, 4):
        driver.payment(
            PaymentInput(w_id=3, d_id=7, c_w_id=c_w_id, c_d_id=7, c_id=1, c_last=None, h_amount=1.0, h_date=T0)
        )
    driver.order_status(OrderStatusInput(w_id=3, d_id=7, c_id=1, c_last=None))
    driver.delivery(DeliveryInput(w_id=3, o_carrier_id=1, ol_delivery_d=T0))
    driver.deliver_district(3, 7, 1, T0)
    driver.stock_level(StockLevelInput(w_id=3, d_id=7, threshold=15))
    return answers.calls


def test_each_layout_routes_the_transactions_to_its_single_and_multi_partition_procedures():
    """warehouse: single-partition on W_ID unless a remote warehouse is touched; district: NewOrder
    and Payment always multi-partition, OrderStatus and DeliveryDistrict on W_ID*10+D_ID; d_id: the
    same procedures as district, OrderStatus and DeliveryDistrict on D_ID itself."""
    assert routed("warehouse") == [
        ("NewOrder", 3),
        ("NewOrderMP", 3),
        ("Payment", 3),
        ("PaymentMP", 3),
        ("OrderStatus", 3),
        ("Delivery", 3),
        ("DeliveryDistrict", 3),
        ("StockLevel", 3),
    ]
    multi = [("NewOrderMP", 3), ("NewOrderMP", 3), ("PaymentMP", 3), ("PaymentMP", 3)]
    assert routed("district") == [
        *multi,
        ("OrderStatus", 37),
        ("Delivery", 3),
        ("DeliveryDistrict", 37),
        ("StockLevel", 3),
    ]
    assert routed("d_id") == [*multi, ("OrderStatus", 7), ("Delivery", 3), ("DeliveryDistrict", 7), ("StockLevel", 3)]


def test_a_layout_tag_naming_no_known_layout_is_an_error(monkeypatch):
    text = "CREATE TABLE t (a INTEGER NOT NULL);\n-- layout: warehouse dist\nPARTITION TABLE t ON COLUMN a;\n"

    class Sql:
        def joinpath(self, _):
            return self

        def read_text(self):
            return text

    monkeypatch.setattr(volt.resources, "files", lambda _: Sql())
    with pytest.raises(ValueError, match=r"unknown layout\(s\) \['dist'\]"):
        volt.ddl_statements("warehouse")


def test_rows_of_district_keyed_tables_get_their_district_key():
    rows = units()["district:2:1"]
    assert volt.with_district_keys("orders", rows["orders"])[0][-1] == 21
    assert {r[-1] for r in volt.with_district_keys("history", rows["history"])} == {21}
    assert volt.with_district_keys("district", units()["warehouse:2"]["district"])[1][-1] == 22


def test_a_table_encodes_the_same_by_column_as_row_by_row():
    """The load's bulk encoding and the transactions' one row at a time agree byte for
    byte, on the load's tables and on what only the general path meets (NULLs, Decimal
    and out-of-int64 money, aware timestamps, non-ASCII text, bytes)."""
    from tpcc_runner.generate import generate_unit
    from tpcc_runner.workload import CConstants, Scale

    columns = ddl_columns()
    scale = Scale(items=300, customers_per_district=100)
    for key in ("item:0", "stock:1:0", "district:1:1"):
        for table, rows in generate_unit(key, scale, CConstants(1, 2, 3), 9, dt.datetime(2026, 1, 1)).items():
            assert volt._rows_by_column(columns[table], rows) == volt._rows_one_by_one(columns[table], rows)
    odd_columns = [
        ("i", volt.INTEGER),
        ("f", volt.FLOAT),
        ("s", volt.STRING),
        ("e", volt.STRING),
        ("d", volt.DECIMAL),
        ("t", volt.TIMESTAMP),
        ("b", volt.TINYINT),
        ("v", volt.VARBINARY),
        ("m", volt.DECIMAL),
    ]
    odd = [
        (1, None, "héllo", None, Decimal("1.5"), dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc), -5, b"\x00\x01", 2.5),
        (None, 2.5, "", "x", -12345678901.25, None, None, b"", None),
        (7, 0.0, "same", "same", 1e15, dt.datetime(1960, 5, 5), 3, b"ab", 0.005),
    ] * volt.BULK_ROWS
    assert volt._rows_by_column(odd_columns, odd) == volt._rows_one_by_one(odd_columns, odd)
    assert volt.encode_table(odd_columns, odd[:3]) != volt.encode_table(odd_columns, odd)


def test_create_schema_creates_tables_and_procedures_and_keeps_them(driver):
    driver.create_schema(reset=True)
    tables = driver._catalog("TABLES", 2)
    assert set(TABLES) | {"tpcc_meta", "tpcc_load_unit"} <= tables
    procedures = driver._catalog("PROCEDURES", 2)
    assert {
        "neworder",
        "newordermp",
        "payment",
        "paymentmp",
        "orderstatus",
        "delivery",
        "stocklevel",
        "loaddistrict",
    } <= procedures
    assert driver.read_meta() is None and driver.done_units() == set()

    driver.load_unit("warehouse:1", units()["warehouse:1"])
    driver.create_schema(reset=False)  # a resumed load keeps what is there
    assert count(driver, "district") == DISTRICTS
    assert driver.done_units() == {"warehouse:1"}
    driver.create_schema(reset=True)  # reset drops it
    assert count(driver, "district") == 0 and driver.done_units() == set()


def test_reset_drops_the_item_procedure_an_older_runner_created(driver):
    """Runners before ITEM's @LoadMultipartitionTable load had a LoadItems procedure writing ITEM:
    left behind, it would hold the table a reset drops."""
    driver.create_schema(reset=True)
    driver._sql("CREATE PROCEDURE LoadItems AS SELECT COUNT(*) FROM item;", writes=True)
    driver.create_schema(reset=True)
    assert "loaditems" not in driver._catalog("PROCEDURES", 2)
    assert count(driver, "item") == 0


def test_load_writes_every_row_and_marks_units_done(loaded):
    expected = units()
    for table in TABLES:
        rows = sum(len(u.get(table, [])) for u in expected.values())
        assert count(loaded, table) == rows, table
    assert loaded.done_units() == set(expected)
    assert loaded.read_meta() == meta()
    # values round-trip, timestamps as naive UTC; the district key (W_ID*10+D_ID) last
    row = one(loaded, "SELECT * FROM customer WHERE c_w_id = 2 AND c_d_id = 1 AND c_id = 4;")
    assert tuple(row) == (*expected["district:2:1"]["customer"][3], 21)
    line = one(loaded, "SELECT * FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 2 AND ol_o_id = 5 AND ol_number = 1;")
    assert tuple(line) == (*expected["district:1:2"]["order_line"][-ol_cnt(1, 2, 5)], 12)


def test_reloading_units_leaves_no_duplicates(loaded):
    before = {t: count(loaded, t) for t in TABLES}
    for key, tables in units().items():
        loaded.load_unit(key, tables)
    assert {t: count(loaded, t) for t in TABLES} == before
    # a changed unit replaces the old rows instead of adding to them
    unit = units()["district:1:1"]
    unit["history"] = unit["history"][:2]
    loaded.load_unit("district:1:1", unit)
    assert one(loaded, "SELECT COUNT(*) FROM history WHERE h_w_id = 1 AND h_d_id = 1;")[0] == 2


def test_a_unit_whose_marker_fails_leaves_none_of_its_rows(driver):
    """The single-partition load procedures hand their tables to the execution engine whole:
    those rows are still undone with the transaction when its marker cannot be written (a
    unit key longer than tpcc_load_unit's 64 characters)."""
    driver.create_schema(reset=True)
    long = "0" * 64  # the same ids, a key too long to record
    for key, tables in units().items():
        kind, *ids = key.split(":")
        if kind != "item":
            with pytest.raises(DriverError, match="exceeds the size of the VARCHAR\\(64\\) column 'UNIT_KEY'"):
                driver.load_unit(":".join([kind, *(long + i for i in ids)]), tables)
    assert {t: count(driver, t) for t in TABLES if t != "item"} == {t: 0 for t in TABLES if t != "item"}
    assert driver.done_units() == set()


def test_an_item_unit_loaded_but_not_marked_is_loaded_again_without_duplicates(loaded):
    """ITEM units are three transactions (delete the range, load, mark): a load interrupted
    before the marker leaves rows that the unit's next load replaces."""
    loaded._sql("DELETE FROM tpcc_load_unit WHERE unit_key = 'item:0';", writes=True)
    assert "item:0" not in loaded.done_units()
    loaded.load_unit("item:0", units()["item:0"])
    assert count(loaded, "item") == ITEMS and "item:0" in loaded.done_units()


def test_load_rejects_bad_unit_keys_and_rows(loaded):
    with pytest.raises(ValueError, match="bad load unit key"):
        loaded.load_unit("district:x", {})
    with pytest.raises(ValueError, match="expected 5"):
        loaded.load_unit("item:1", {"item": [(1, 2, "short row")]})


# -- the five transactions --------------------------------------------------------------


def stock_row(driver, w, i):
    return one(
        driver, "SELECT s_quantity, s_ytd, s_order_cnt, s_remote_cnt FROM stock WHERE s_w_id = ? AND s_i_id = ?;", w, i
    )


def test_new_order_follows_clause_2_4_2_2(loaded):
    items = (OrderLineInput(1, 1, 5), OrderLineInput(2, 1, 5), OrderLineInput(3, 1, 5))  # 15 >= 5+10: 10
    entry = dt.datetime(2024, 5, 6, 7, 8, 9, 123000)
    r = loaded.new_order(NewOrderInput(w_id=1, d_id=2, c_id=3, o_entry_d=entry, items=items))
    assert r.o_id == ORDERS + 1
    assert one(loaded, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 2;")[0] == ORDERS + 2
    order = one(
        loaded,
        "SELECT o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local FROM orders "
        "WHERE o_w_id = 1 AND o_d_id = 2 AND o_id = ?;",
        r.o_id,
    )
    assert tuple(order) == (3, entry, None, 3, 1)
    one(loaded, "SELECT * FROM new_order WHERE no_w_id = 1 AND no_d_id = 2 AND no_o_id = ?;", r.o_id)
    lines = sql(
        loaded,
        "SELECT ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, "
        "ol_dist_info FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 2 AND ol_o_id = ? "
        "ORDER BY ol_number;",
        r.o_id,
    )
    prices = {i: round(1 + i * 0.37, 2) for i in (1, 2, 3)}
    assert [tuple(line) for line in lines] == [
        (n, i, 1, None, 5, round(5 * prices[i], 2), f"dist-1-{i}-02") for n, i in ((1, 1), (2, 2), (3, 3))
    ]
    assert tuple(stock_row(loaded, 1, 1)) == (45, 5, 1, 0)
    assert tuple(stock_row(loaded, 1, 2)) == (98, 5, 1, 0)
    assert tuple(stock_row(loaded, 1, 3)) == (10, 5, 1, 0)
    # total = sum(OL_AMOUNT) * (1 - C_DISCOUNT) * (1 + W_TAX + D_TAX)
    amount = sum(round(5 * p, 2) for p in prices.values())
    assert r.total == pytest.approx(amount * (1 - 0.1) * (1 + 0.11 + 0.07), abs=0.006)


def test_new_order_with_a_remote_supply_warehouse_updates_its_stock(loaded):
    items = (OrderLineInput(4, 1, 3), OrderLineInput(5, 2, 7), OrderLineInput(5, 2, 2))  # the same remote item twice
    r = loaded.new_order(NewOrderInput(w_id=1, d_id=1, c_id=1, o_entry_d=T0, items=items))
    assert one(loaded, "SELECT o_all_local FROM orders WHERE o_w_id = 1 AND o_d_id = 1 AND o_id = ?;", r.o_id)[0] == 0
    assert tuple(stock_row(loaded, 2, 5)) == (35 - 7 - 2, 9, 2, 2)
    assert tuple(stock_row(loaded, 1, 5)) == (35, 0, 0, 0)
    assert tuple(stock_row(loaded, 1, 4)) == (31, 3, 1, 0)
    assert one(loaded, "SELECT COUNT(*) FROM order_line WHERE ol_w_id = 1 AND ol_supply_w_id = 2;")[0] == 2


def test_new_order_with_an_unused_item_rolls_back_without_trace(loaded):
    tables = ("orders", "new_order", "order_line")
    before = {t: count(loaded, t) for t in tables}
    stock_before = [tuple(stock_row(loaded, w, 1)) for w in (1, 2)]
    for supply in (1, 2):  # single-partition and multi-partition
        items = (OrderLineInput(1, 1, 5), OrderLineInput(1, supply, 5), OrderLineInput(INVALID_ITEM, 1, 1))
        with pytest.raises(UserAbort, match=f"item {INVALID_ITEM}"):
            loaded.new_order(NewOrderInput(w_id=1, d_id=1, c_id=1, o_entry_d=T0, items=items))
    assert {t: count(loaded, t) for t in tables} == before
    assert [tuple(stock_row(loaded, w, 1)) for w in (1, 2)] == stock_before
    assert one(loaded, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 1;")[0] == ORDERS + 1


def customer_row(driver, w, d, c):
    return one(
        driver,
        "SELECT c_balance, c_ytd_payment, c_payment_cnt, c_data FROM customer "
        "WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?;",
        w,
        d,
        c,
    )


def test_payment_by_id_updates_warehouse_district_customer_and_history(loaded):
    r = loaded.payment(
        PaymentInput(w_id=1, d_id=2, c_w_id=1, c_d_id=2, c_id=5, c_last=None, h_amount=123.45, h_date=T0)
    )
    assert r.c_id == 5 and r.c_balance == pytest.approx(-10 - 123.45)
    assert one(loaded, "SELECT w_ytd FROM warehouse WHERE w_id = 1;")[0] == pytest.approx(100 + 123.45)
    assert one(loaded, "SELECT d_ytd FROM district WHERE d_w_id = 1 AND d_id = 2;")[0] == pytest.approx(50 + 123.45)
    balance, ytd, cnt, data = customer_row(loaded, 1, 2, 5)
    assert (balance, ytd, cnt, data) == (pytest.approx(-133.45), pytest.approx(133.45), 2, "data of customer 5")
    h = one(
        loaded,
        "SELECT h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data FROM history "
        "WHERE h_amount > 100;",
    )
    assert tuple(h) == (5, 2, 1, 2, 1, T0, 123.45, "W1    D1-2")


def test_payment_by_last_name_takes_the_middle_customer_sorted_by_first_name(loaded):
    # BARBARBAR: Anna (2), Berta (3), Cecilia (1): n=3, position ceil(3/2)=2 -> customer 3
    r = loaded.payment(
        PaymentInput(w_id=1, d_id=1, c_w_id=1, c_d_id=1, c_id=None, c_last="BARBARBAR", h_amount=10.0, h_date=T0)
    )
    assert r.c_id == 3
    assert customer_row(loaded, 1, 1, 3)[2] == 2
    # two of them left with that name: ceil(2/2)=1 -> Anna (2)
    sql(loaded, "UPDATE customer SET c_last = 'OTHER' WHERE c_w_id = 1 AND c_d_id = 1 AND c_id = 3;")
    r = loaded.payment(
        PaymentInput(w_id=1, d_id=1, c_w_id=1, c_d_id=1, c_id=None, c_last="BARBARBAR", h_amount=10.0, h_date=T0)
    )
    assert r.c_id == 2


def test_payment_of_a_bad_credit_remote_customer(loaded):
    r = loaded.payment(PaymentInput(w_id=1, d_id=1, c_w_id=2, c_d_id=2, c_id=4, c_last=None, h_amount=20.5, h_date=T0))
    assert r.c_credit == "BC" and r.c_balance == pytest.approx(-30.5)
    balance, _, _, data = customer_row(loaded, 2, 2, 4)
    assert balance == pytest.approx(-30.5)
    assert data == "4 2 2 1 1 20.50 | data of customer 4"
    assert one(loaded, "SELECT w_ytd FROM warehouse WHERE w_id = 1;")[0] == pytest.approx(120.5)
    assert one(loaded, "SELECT w_ytd FROM warehouse WHERE w_id = 2;")[0] == pytest.approx(100)
    assert tuple(one(loaded, "SELECT h_w_id, h_c_w_id FROM history WHERE h_amount > 20;")) == (1, 2)


def test_order_status_returns_the_customers_last_order(loaded):
    r = loaded.order_status(OrderStatusInput(w_id=2, d_id=1, c_id=4, c_last=None))
    assert r == OrderStatusOutput(4, -10.0, 4, None, ol_cnt(2, 1, 4))  # order 4 not delivered
    placed = loaded.new_order(NewOrderInput(w_id=2, d_id=1, c_id=4, o_entry_d=T0, items=(OrderLineInput(9, 2, 1),) * 2))
    r = loaded.order_status(OrderStatusInput(w_id=2, d_id=1, c_id=None, c_last="BARBARBAR"))
    assert r == OrderStatusOutput(3, -10.0, 3, 3, ol_cnt(2, 1, 3))  # order 3 delivered by carrier 3
    assert loaded.order_status(OrderStatusInput(w_id=2, d_id=1, c_id=4, c_last=None)).o_id == placed.o_id


def test_delivery_delivers_the_oldest_new_order_of_each_district(loaded):
    when = dt.datetime(2024, 6, 1, 12, 0, 0)
    r = loaded.delivery(DeliveryInput(w_id=1, o_carrier_id=7, ol_delivery_d=when))
    assert r == DeliveryOutput(((1, DELIVERED + 1), (2, DELIVERED + 1)), 8)
    for d in (1, 2):
        o = DELIVERED + 1
        assert (
            one(loaded, "SELECT o_carrier_id FROM orders WHERE o_w_id = 1 AND o_d_id = ? AND o_id = ?;", d, o)[0] == 7
        )
        assert sql(loaded, "SELECT * FROM new_order WHERE no_w_id = 1 AND no_d_id = ? AND no_o_id = ?;", d, o) == []
        dates = sql(
            loaded,
            "SELECT DISTINCT ol_delivery_d FROM order_line WHERE ol_w_id = 1 AND ol_d_id = ? AND ol_o_id = ?;",
            d,
            o,
        )
        assert dates == [[when]]
        amount = sum(round(n * 3.33, 2) for n in range(1, ol_cnt(1, d, o) + 1))
        balance = one(
            loaded, "SELECT c_balance, c_delivery_cnt FROM customer WHERE c_w_id = 1 AND c_d_id = ? AND c_id = ?;", d, o
        )
        assert tuple(balance) == (pytest.approx(-10 + amount), 1)
    assert loaded.delivery(DeliveryInput(w_id=1, o_carrier_id=1, ol_delivery_d=when)).skipped == 8
    assert loaded.delivery(DeliveryInput(w_id=1, o_carrier_id=1, ol_delivery_d=when)) == DeliveryOutput((), 10)
    assert count(loaded, "new_order") == DISTRICTS * NEW_ORDERS  # warehouse 2 untouched


def per_district(driver: VoltDBDriver) -> VoltDBDriver:
    """A second driver on the same server and layout, set to deliver district by district."""
    d = VoltDBDriver(
        ConnectionOptions(
            endpoints=[f"{h}:{p}" for h, p in driver.endpoints],
            connect_timeout=10,
            extra={"delivery": "per-district", "partitioning": driver.partitioning},
        )
    )
    d.connect()
    return d


def delivery_state(driver: VoltDBDriver, w: int) -> dict[str, list]:
    """What a Delivery of warehouse w changes: NEW-ORDER, carriers, delivery dates, customers."""
    return {
        "new_order": sql(
            driver, "SELECT no_d_id, no_o_id FROM new_order WHERE no_w_id = ? ORDER BY no_d_id, no_o_id;", w
        ),
        "carriers": sql(
            driver, "SELECT o_d_id, o_id, o_carrier_id FROM orders WHERE o_w_id = ? ORDER BY o_d_id, o_id;", w
        ),
        "dated_lines": sql(
            driver,
            "SELECT ol_d_id, ol_o_id, ol_number, ol_delivery_d FROM order_line "
            "WHERE ol_w_id = ? ORDER BY ol_d_id, ol_o_id, ol_number;",
            w,
        ),
        "customers": sql(
            driver,
            "SELECT c_d_id, c_id, c_balance, c_delivery_cnt FROM customer WHERE c_w_id = ? ORDER BY c_d_id, c_id;",
            w,
        ),
    }


def test_per_district_delivery_delivers_what_one_delivery_transaction_would(loaded):
    """The same database, delivered once per district (ten transactions) and once as one
    transaction: the same oldest new orders go, with the same carriers, dates and balances."""
    when = dt.datetime(2024, 6, 1, 12, 0, 0)
    split = per_district(loaded)
    try:
        before = delivery_state(loaded, 1)
        by_district = [split.delivery(DeliveryInput(w_id=1, o_carrier_id=7, ol_delivery_d=when)) for _ in range(3)]
        after_split = delivery_state(loaded, 1)
    finally:
        split.close()
    assert by_district[0] == DeliveryOutput(((1, DELIVERED + 1), (2, DELIVERED + 1)), 8)
    assert by_district[1].delivered == ((1, DELIVERED + 2), (2, DELIVERED + 2))
    assert by_district[2] == DeliveryOutput((), 10)
    assert after_split != before and after_split["new_order"] == []
    loaded.create_schema(reset=True)
    for key, tables in units().items():
        loaded.load_unit(key, tables)
    assert delivery_state(loaded, 1) == before
    whole = [loaded.delivery(DeliveryInput(w_id=1, o_carrier_id=7, ol_delivery_d=when)) for _ in range(3)]
    assert whole == by_district
    assert delivery_state(loaded, 1) == after_split


def test_a_per_district_delivery_retried_after_a_failed_district_goes_on_from_it(loaded, monkeypatch):
    """A retryable failure of district 2's transaction (district 1's committed): the executor's
    retry delivers district 2 onwards, so district 1 is not delivered twice."""
    split = per_district(loaded)
    real, calls = split.deliver_district, []

    def flaky(w_id, d_id, *rest):
        calls.append(d_id)
        if calls.count(2) == 1 and d_id == 2:
            raise RetryableError("DeliveryDistrict: restarted (status -8)")
        return real(w_id, d_id, *rest)

    monkeypatch.setattr(split, "deliver_district", flaky)
    params = DeliveryInput(w_id=2, o_carrier_id=3, ol_delivery_d=T0)
    try:
        outcome, result, retries, _, error = execute_once(split, "DELIVERY", params, 5, time.time() + 60)
    finally:
        split.close()
    assert (outcome, retries, error) == ("committed", 1, None)
    assert calls == [1, 2, *range(2, 11)]
    assert isinstance(result, DeliveryOutput)
    assert result.delivered == ((1, DELIVERED + 1), (2, DELIVERED + 1))
    assert sql(loaded, "SELECT no_d_id, no_o_id FROM new_order WHERE no_w_id = 2 ORDER BY no_d_id;") == [
        [1, DELIVERED + 2],
        [2, DELIVERED + 2],
    ]
    deliveries = RunDeliveries(delivered={(2, d): 1 for d, _ in result.delivered})
    assert all(r.passed for r in loaded.check_consistency([1, 2], deliveries))


def test_a_per_district_delivery_that_skips_a_districts_carrier_and_balance_fails_the_check(loaded, monkeypatch):
    """A broken per-district Delivery: district 2's transaction removes the NEW-ORDER row and
    dates the lines but sets no carrier and pays the customer nothing. Conditions 5 (carrier null
    iff a NEW-ORDER row), 7 (delivery date null iff carrier null), 10 and 12 (balances) catch it,
    given the runner's acknowledged Deliveries (without them, 11 fails as well)."""
    split = per_district(loaded)
    real = split.deliver_district

    def skips_carrier_and_balance(w_id, d_id, o_carrier_id, when):
        if d_id != 2:
            return real(w_id, d_id, o_carrier_id, when)
        (o,) = one(split, "SELECT MIN(no_o_id) FROM new_order WHERE no_w_id = ? AND no_d_id = ?;", w_id, d_id)
        sql(split, "DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?;", w_id, d_id, o)
        split._sql(
            "UPDATE order_line SET ol_delivery_d = ? WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?;",
            (volt.TIMESTAMP, when),
            (volt.INTEGER, w_id),
            (volt.INTEGER, d_id),
            (volt.INTEGER, o),
            writes=True,
        )
        return [(d_id, o)]

    try:
        healthy = split.delivery(DeliveryInput(w_id=1, o_carrier_id=5, ol_delivery_d=T0))
        assert all(r.passed for r in consistency(loaded).values())
        monkeypatch.setattr(split, "deliver_district", skips_carrier_and_balance)
        broken = split.delivery(DeliveryInput(w_id=2, o_carrier_id=5, ol_delivery_d=T0))
    finally:
        split.close()
    assert healthy.delivered == broken.delivered == ((1, DELIVERED + 1), (2, DELIVERED + 1))
    acknowledged = RunDeliveries()
    acknowledged.record(1, [d for d, _ in healthy.delivered])
    acknowledged.record(2, [d for d, _ in broken.delivered])
    results = {r.number: r for r in loaded.check_consistency([1, 2], acknowledged)}
    # condition 11 holds: the NEW-ORDER row did go, as the runner was told
    assert {n for n, r in results.items() if not r.passed} == {5, 7, 10, 12}
    assert results[5].example == f"order (2, 2, {DELIVERED + 1}): O_CARRIER_ID=None, NEW-ORDER row missing"


def test_a_row_a_transaction_needs_and_does_not_find_is_not_loaded(loaded):
    """One error for every missing row (base.NotLoaded, app status MISSING_ROW), a NEW-ORDER
    without its ORDER too; the transaction leaves no trace."""
    sql(loaded, "DELETE FROM orders WHERE o_w_id = 1 AND o_d_id = 2 AND o_id = ?;", DELIVERED + 1)
    tables = ("orders", "new_order", "order_line", "history")
    before = {t: count(loaded, t) for t in tables}
    with pytest.raises(NotLoaded, match="has no order row"):
        loaded.delivery(DeliveryInput(w_id=1, o_carrier_id=7, ol_delivery_d=T0))
    with pytest.raises(NotLoaded, match="no district"):
        loaded.stock_level(StockLevelInput(w_id=1, d_id=DISTRICTS + 1, threshold=10))
    with pytest.raises(NotLoaded, match="no customer"):
        loaded.order_status(OrderStatusInput(w_id=1, d_id=1, c_id=CUSTOMERS + 1, c_last=None))
    with pytest.raises(NotLoaded, match="no warehouse"):
        loaded.payment(
            PaymentInput(w_id=1, d_id=DISTRICTS + 1, c_w_id=1, c_d_id=1, c_id=1, c_last=None, h_amount=1.0, h_date=T0)
        )
    with pytest.raises(NotLoaded, match="or customer"):
        loaded.new_order(
            NewOrderInput(w_id=1, d_id=1, c_id=CUSTOMERS + 1, o_entry_d=T0, items=(OrderLineInput(1, 1, 1),))
        )
    assert {t: count(loaded, t) for t in tables} == before


def test_stock_level_counts_distinct_low_items_of_the_last_20_orders(loaded):
    def expected(w, d, threshold):
        items = {ol_i_id(w, d, o, n) for o in range(1, ORDERS + 1) for n in range(1, ol_cnt(w, d, o) + 1)}
        return len({i for i in items if STOCK_QUANTITY.get(i, 30 + i) < threshold})

    for threshold in (10, 14, 36, 45, 51):
        assert loaded.stock_level(StockLevelInput(w_id=1, d_id=2, threshold=threshold)).low_stock == expected(
            1, 2, threshold
        )
    assert expected(1, 2, 45) not in (0, expected(1, 2, 10))  # the thresholds discriminate


# -- consistency and the ledger ---------------------------------------------------------


def run_some_transactions(driver):
    for k in range(12):
        w, d = 1 + k % 2, 1 + k % 3 % 2
        driver.new_order(
            NewOrderInput(
                w_id=w,
                d_id=d,
                c_id=1 + k % 5,
                o_entry_d=T0,
                items=tuple(
                    OrderLineInput(1 + (k + j) % ITEMS, 1 + (k + j) % 7 % 2 if j == 0 else w, 1 + j) for j in range(5)
                ),
            )
        )
        driver.payment(
            PaymentInput(
                w_id=w,
                d_id=d,
                c_w_id=1 + k % 3 % 2,
                c_d_id=2 - k % 2,
                c_id=None if k % 2 else 1 + k % 5,
                c_last="BARBARBAR" if k % 2 else None,
                h_amount=1.5 + k,
                h_date=T0,
            )
        )
        if k % 4 == 3:
            driver.delivery(DeliveryInput(w_id=w, o_carrier_id=1 + k % 10, ol_delivery_d=T0))
        driver.order_status(OrderStatusInput(w_id=w, d_id=d, c_id=2, c_last=None))
        driver.stock_level(StockLevelInput(w_id=w, d_id=d, threshold=20))


def test_all_twelve_conditions_hold_on_a_consistent_database(loaded):
    results = consistency(loaded)
    assert [r.number for r in results.values()] == list(range(1, 13))
    assert all(r.passed for r in results.values()), [r for r in results.values() if not r.passed]
    run_some_transactions(loaded)
    results = consistency(loaded)
    assert all(r.passed for r in results.values()), [r for r in results.values() if not r.passed]
    assert results[5].checked == WAREHOUSES * DISTRICTS * ORDERS + 12
    assert results[12].checked == WAREHOUSES * DISTRICTS * CUSTOMERS


@pytest.mark.parametrize(
    "corruption, failing",
    [
        ("UPDATE district SET d_ytd = d_ytd + 1 WHERE d_w_id = 2 AND d_id = 1;", {1, 9}),
        ("UPDATE warehouse SET w_ytd = w_ytd - 0.01 WHERE w_id = 1;", {1, 8}),
        ("UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = 1 AND d_id = 2;", {2}),
        ("DELETE FROM new_order WHERE no_w_id = 1 AND no_d_id = 1 AND no_o_id = 5;", {2, 5, 11}),
        ("INSERT INTO new_order VALUES (2, 2, 2, 22);", {3, 5, 11}),
        ("UPDATE orders SET o_ol_cnt = o_ol_cnt + 1 WHERE o_w_id = 2 AND o_d_id = 1 AND o_id = 2;", {4, 6}),
        (
            "UPDATE order_line SET ol_delivery_d = NULL WHERE ol_w_id = 1 AND ol_d_id = 1 AND ol_o_id = 1 "
            "AND ol_number = 1;",
            {7},
        ),
        ("UPDATE customer SET c_balance = c_balance + 5 WHERE c_w_id = 2 AND c_d_id = 2 AND c_id = 3;", {10, 12}),
        ("UPDATE customer SET c_ytd_payment = 0 WHERE c_w_id = 1 AND c_d_id = 2 AND c_id = 1;", {12}),
    ],
)
def test_a_corrupted_row_fails_the_right_conditions(loaded, corruption, failing):
    sql(loaded, corruption)
    results = consistency(loaded)
    assert {n for n, r in results.items() if not r.passed} == failing
    for n in failing:
        assert results[n].violations >= 1 and results[n].example


@pytest.mark.parametrize(
    "corruption, failing",
    [
        # a 0.01 drift in each money column (DECIMAL: exact, no tolerance)
        ("UPDATE warehouse SET w_ytd = w_ytd + 0.01 WHERE w_id = 2;", {1, 8}),
        ("UPDATE district SET d_ytd = d_ytd + 0.01 WHERE d_w_id = 2 AND d_id = 1;", {1, 9}),
        ("UPDATE customer SET c_balance = c_balance + 0.01 WHERE c_w_id = 1 AND c_d_id = 1 AND c_id = 2;", {10, 12}),
        (
            "UPDATE customer SET c_ytd_payment = c_ytd_payment - 0.01 WHERE c_w_id = 2 AND c_d_id = 1 AND c_id = 1;",
            {12},
        ),
        ("UPDATE history SET h_amount = h_amount + 0.01 WHERE h_w_id = 2 AND h_d_id = 2 AND h_c_id = 3;", {8, 9, 10}),
        # a delivered line of customer 1's order 1
        (
            "UPDATE order_line SET ol_amount = ol_amount + 0.01 WHERE ol_w_id = 1 AND ol_d_id = 2 AND ol_o_id = 1 "
            "AND ol_number = 1;",
            {10, 12},
        ),
        # less than a cent is still not equal
        ("UPDATE customer SET c_balance = c_balance + 0.004 WHERE c_w_id = 1 AND c_d_id = 2 AND c_id = 5;", {10, 12}),
        # orphans, each reported by row
        ("INSERT INTO new_order VALUES (1, 3, 1, 13);", {2, 5, 9, 11}),  # in a district with no DISTRICT row
        ("INSERT INTO order_line VALUES (99, 1, 1, 1, 1, 1, NULL, 5, 1.00, 'orphan', 11);", {4, 6, 7}),
        ("DELETE FROM district WHERE d_w_id = 1 AND d_id = 2;", {1, 2, 9}),
        ("DELETE FROM warehouse WHERE w_id = 2;", {1, 8}),
        ("DELETE FROM customer WHERE c_w_id = 2 AND c_d_id = 2 AND c_id = 5;", {10, 12}),
    ],
)
def test_money_drifts_and_orphan_rows_fail_the_right_conditions(loaded, corruption, failing):
    run_some_transactions(loaded)
    assert {n for n, r in consistency(loaded).items() if not r.passed} == set()
    sql(loaded, corruption)
    results = consistency(loaded)
    assert {n for n, r in results.items() if not r.passed} == failing
    # a district without its DISTRICT row is still judged by 3, 4 and 11
    assert all(results[n].checked >= WAREHOUSES * DISTRICTS for n in (4, 11))


def test_orphans_are_named_by_row(loaded):
    sql(loaded, "INSERT INTO new_order VALUES (1, 3, 1, 13);")
    sql(loaded, "INSERT INTO order_line VALUES (99, 1, 1, 1, 1, 1, NULL, 5, 1.00, 'orphan', 11);")
    results = consistency(loaded)
    assert results[5].example == "NEW-ORDER (1, 3, 1) without an ORDER row"
    assert results[2].example.startswith("warehouse 1 district 3: no DISTRICT row")
    assert results[6].example == "1 ORDER-LINE rows of missing order (1, 1, 99)"


def test_a_lost_order_delivered_during_the_run_fails_condition_11_given_the_runners_deliveries(loaded):
    delivered = loaded.delivery(DeliveryInput(w_id=1, o_carrier_id=4, ol_delivery_d=T0)).delivered
    deliveries = RunDeliveries(delivered={(1, d): 1 for d, _ in delivered})
    assert not [r for r in loaded.check_consistency([1, 2], deliveries) if not r.passed]
    d, o = delivered[0]
    sql(loaded, "DELETE FROM order_line WHERE ol_w_id = 1 AND ol_d_id = ? AND ol_o_id = ?;", d, o)
    sql(loaded, "DELETE FROM orders WHERE o_w_id = 1 AND o_d_id = ? AND o_id = ?;", d, o)
    # counted from ORDERS, condition 11 cannot see it: only the customer's balance does
    assert {r.number for r in loaded.check_consistency([1, 2]) if not r.passed} == {10, 12}
    results = loaded.check_consistency([1, 2], deliveries)
    assert {r.number for r in results if not r.passed} == {10, 11, 12}
    assert results[10].example == (
        f"warehouse 1 district {d}: count(ORDER)-count(NEW-ORDER)={DELIVERED}, "
        f"expected {DELIVERED + 1} ({DELIVERED} initially + 1 acknowledged Deliveries)"
    )


def test_a_sweeps_later_cell_counts_the_deliveries_of_every_cell_on_its_load(loaded):
    """Two sweep cells measured on one load: the second cell's check (as the operator's checker
    sums the check ConfigMaps of both) holds only with the first cell's Deliveries counted too,
    and then sees an order the first cell delivered that the database lost."""

    def cell() -> tuple[RunDeliveries, tuple[tuple[int, int], ...]]:
        delivered = loaded.delivery(DeliveryInput(w_id=1, o_carrier_id=4, ol_delivery_d=T0)).delivered
        return RunDeliveries(delivered={(1, d): 1 for d, _ in delivered}), delivered

    (first, first_orders), (second, _) = cell(), cell()
    assert 11 in {r.number for r in loaded.check_consistency([1, 2], second) if not r.passed}
    both = RunDeliveries()
    both.merge(first)
    both.merge(second)
    assert not [r for r in loaded.check_consistency([1, 2], both) if not r.passed]
    d, o = first_orders[0]  # delivered by the first cell, then lost
    sql(loaded, "DELETE FROM order_line WHERE ol_w_id = 1 AND ol_d_id = ? AND ol_o_id = ?;", d, o)
    sql(loaded, "DELETE FROM orders WHERE o_w_id = 1 AND o_d_id = ? AND o_id = ?;", d, o)
    assert 11 in {r.number for r in loaded.check_consistency([1, 2], both) if not r.passed}


def test_checking_what_was_not_loaded_is_an_error(loaded):
    with pytest.raises(NotLoaded, match="warehouse 3"):
        loaded.check_consistency([1, 3])
    loaded.create_schema(reset=True)
    with pytest.raises(NotLoaded):
        loaded.check_consistency([1])


def test_corrupted_row_is_named_in_the_example(loaded):
    sql(loaded, "UPDATE district SET d_ytd = 61.25 WHERE d_w_id = 2 AND d_id = 1;")
    r = consistency(loaded)[9]
    assert (r.checked, r.violations) == (WAREHOUSES * DISTRICTS, 1)
    assert r.example == "warehouse 2 district 1: D_YTD=61.25, sum(H_AMOUNT)=50.00"


def test_stored_orders_and_orders_entered_at_read_the_order_with_its_lines(loaded):
    entry = T0 + dt.timedelta(days=1)
    items = (OrderLineInput(3, 2, 4), OrderLineInput(1, 1, 1))
    o = loaded.new_order(NewOrderInput(w_id=2, d_id=2, c_id=1, o_entry_d=entry, items=items)).o_id
    keys = [(2, 2, o), (2, 2, o + 1), (1, 1, 1), (1, 2, 99), (2, 1, ORDERS)]
    stored = loaded.stored_orders(keys)
    assert sorted(stored) == [(1, 1, 1), (2, 1, ORDERS), (2, 2, o)]
    assert stored[(2, 2, o)] == StoredOrder(1, entry, 2, ((3, 2, 4), (1, 1, 1)))
    assert stored[(1, 1, 1)].identity().ol_cnt == ol_cnt(1, 1, 1)
    ms = epoch_ms(entry)
    assert loaded.orders_entered_at(2, 2, 1, ms) == [stored[(2, 2, o)]]
    assert loaded.orders_entered_at(2, 2, 1, ms + 1) == []
    assert loaded.orders_entered_at(2, 2, 2, ms) == []


def test_describe_names_version_topology_and_schema(driver):
    info = driver.describe()
    assert info["server_version"] == "10.1.1"
    assert (info["hosts"], info["k_factor"], info["sites_per_host"]) == (1, 0, 2)
    assert info["schema_variant"] == "stored-procedures"


# -- connection failures ----------------------------------------------------------------


def test_connect_to_a_closed_port_is_unreachable_within_the_timeout():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    d = VoltDBDriver(ConnectionOptions(endpoints=[f"127.0.0.1:{port}"], connect_timeout=2))
    started = time.monotonic()
    with pytest.raises(Unreachable, match=f"127.0.0.1:{port}") as e:
        d.connect()
    assert time.monotonic() - started < 2 + 1
    assert "\n" not in str(e.value)


def test_a_call_a_stopped_server_does_not_answer_ends_within_call_timeout(voltdb, loaded):
    """The connection's socket blocks with kernel timeouts (VoltDBDriver.set_timeouts), not
    Python's: a server stopped mid-run (SIGSTOP, a hung JVM) answers nothing, and a NewOrder
    then ends within its call_timeout as of unknown outcome (it may have committed), a read as a
    lost connection; once the server runs again the next call is answered on a new connection."""
    d = VoltDBDriver(ConnectionOptions(endpoints=voltdb.endpoints, connect_timeout=1, extra={"call_timeout": "1"}))
    d.connect()
    pid = int((voltdb.directory / "node0" / "pid").read_text())
    order = NewOrderInput(w_id=1, d_id=1, c_id=1, o_entry_d=T0, items=(OrderLineInput(1, 1, 5),))
    os.kill(pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        with pytest.raises(UnknownOutcome, match=r"NewOrder: no answer from 127\.0\.0\.1:\d+: none within 1 s"):
            d.new_order(order)
        assert 0.9 < time.monotonic() - started < 3.5  # the call_timeout, then a reconnect's connect_timeout
        started = time.monotonic()
        with pytest.raises(ConnectionLost) as lost:  # not connected again: a read, so no unknown outcome
            d.stock_level(StockLevelInput(w_id=1, d_id=1, threshold=15))
        assert not isinstance(lost.value, UnknownOutcome)
        assert time.monotonic() - started < 2.5
    finally:
        os.kill(pid, signal.SIGCONT)
    deadline = time.monotonic() + 30
    while True:
        try:
            assert d.stock_level(StockLevelInput(w_id=1, d_id=1, threshold=15)).low_stock >= 0
            break
        except (ConnectionLost, UnknownOutcome):
            assert time.monotonic() < deadline, "the driver did not come back after the server did"
            time.sleep(0.5)
    d.close()


def test_bad_options_are_clear_errors():
    with pytest.raises(ValueError, match="bad VoltDB endpoint"):
        VoltDBDriver(ConnectionOptions(endpoints=["host:notaport"]))
    with pytest.raises(ValueError, match="voltdb: driver option call_timeout must be seconds > 0, got 'soon'"):
        VoltDBDriver(ConnectionOptions(extra={"call_timeout": "soon"}))


def test_losing_a_node_raises_and_reconnects_to_a_live_one(voltdb_cluster):
    d = VoltDBDriver(ConnectionOptions(endpoints=voltdb_cluster.endpoints, connect_timeout=10))
    d.connect()
    d.create_schema(reset=True)
    for key, tables in units().items():
        d.load_unit(key, tables)
    d.write_meta(meta())
    assert d.describe()["k_factor"] == 1
    victim = voltdb_cluster.endpoints.index("{}:{}".format(*d._endpoint))
    voltdb_cluster.kill_node(victim)
    outcomes = []
    for k in range(20):
        try:
            d.payment(PaymentInput(w_id=1, d_id=1, c_w_id=1, c_d_id=1, c_id=1, c_last=None, h_amount=1.0, h_date=T0))
            outcomes.append("ok")
        except (ConnectionLost, UnknownOutcome) as e:
            outcomes.append(type(e).__name__)
    assert outcomes[0] in ("ConnectionLost", "UnknownOutcome") and outcomes[-1] == "ok", outcomes
    assert "{}:{}".format(*d._endpoint) != voltdb_cluster.endpoints[victim]
    assert all(r.passed for r in d.check_consistency([1, 2]))
    voltdb_cluster.restart_node(victim)
    assert d.describe()["hosts"] == 3
    d.close()


# -- partitioned by district -----------------------------------------------------------------


def server_partition_columns(driver: VoltDBDriver) -> dict[str, str]:
    """Each partitioned table's partition column, as the server's catalog has it."""
    response = driver._call("@SystemCatalog", [(volt.STRING, "COLUMNS")], writes=False)
    table = response.tables[0]
    names = [c.name.upper() for c in table.columns]
    t, c, remarks = names.index("TABLE_NAME"), names.index("COLUMN_NAME"), names.index("REMARKS")
    return {
        row[t].lower(): row[c].lower()
        for row in table.tuples
        if row[remarks] and "PARTITION_COLUMN" in row[remarks].upper()
    }


def test_partitioned_by_district_the_server_holds_the_district_tables_on_their_district_key(by_district):
    partition = server_partition_columns(by_district)
    assert {t: partition[t] for t in volt.DISTRICT_KEYS} == {t: k for t, (k, _, _) in volt.DISTRICT_KEYS.items()}
    assert (partition["warehouse"], partition["stock"]) == ("w_id", "s_w_id")
    assert sql(by_district, "SELECT DISTINCT o_w_id * 10 + o_d_id - o_wd FROM orders;") == [[0]]
    assert by_district.describe()["schema_variant"] == "stored-procedures, partitioned by district"


def test_partitioned_by_district_the_transactions_keep_all_twelve_conditions(by_district):
    placed = by_district.new_order(
        NewOrderInput(w_id=2, d_id=1, c_id=4, o_entry_d=T0, items=(OrderLineInput(1, 2, 3), OrderLineInput(2, 1, 1)))
    )
    assert placed.o_id == ORDERS + 1
    status = by_district.order_status(OrderStatusInput(w_id=2, d_id=1, c_id=4, c_last=None))
    assert (status.o_id, status.lines) == (placed.o_id, 2)
    paid = by_district.payment(
        PaymentInput(w_id=1, d_id=2, c_w_id=1, c_d_id=2, c_id=None, c_last="BARBARBAR", h_amount=12.5, h_date=T0)
    )
    assert paid.c_id == 3  # the middle of three by c_first, as partitioned by warehouse
    run_some_transactions(by_district)
    split = per_district(by_district)
    try:
        assert split.delivery(DeliveryInput(w_id=1, o_carrier_id=2, ol_delivery_d=T0)).skipped < 10
    finally:
        split.close()
    results = consistency(by_district)
    assert all(r.passed for r in results.values()), [r for r in results.values() if not r.passed]
    assert results[5].checked == WAREHOUSES * DISTRICTS * ORDERS + 13


# -- partitioned on D_ID (the VoltDB study's District ID strategy) ---------------------------


def test_on_d_id_the_server_replicates_warehouse_and_district_and_partitions_the_rest_as_the_study(on_d_id):
    partition = server_partition_columns(on_d_id)
    assert {t: partition.get(t) for t in TABLES} == {
        "warehouse": None,
        "district": None,
        "customer": "c_d_id",
        "history": "h_d_id",
        "new_order": "no_d_id",
        "orders": "o_d_id",
        "order_line": "ol_d_id",
        "item": "i_id",
        "stock": "s_i_id",
    }
    assert {"WAREHOUSE", "DISTRICT"} <= on_d_id._replicated_tables()
    # every unit loaded whole, ITEM by LoadItemRows (@LoadMultipartitionTable refuses a partitioned table)
    for table in TABLES:
        assert count(on_d_id, table) == sum(len(u.get(table, [])) for u in units().values()), table
    assert on_d_id.done_units() == set(units())
    assert on_d_id.describe()["schema_variant"] == "stored-procedures, partitioned on D_ID"


def test_on_d_id_the_transactions_keep_all_twelve_conditions(on_d_id):
    placed = on_d_id.new_order(
        NewOrderInput(w_id=2, d_id=1, c_id=4, o_entry_d=T0, items=(OrderLineInput(1, 2, 3), OrderLineInput(2, 1, 1)))
    )
    assert placed.o_id == ORDERS + 1
    assert one(on_d_id, "SELECT d_next_o_id FROM district WHERE d_w_id = 2 AND d_id = 1;") == [ORDERS + 2]
    status = on_d_id.order_status(OrderStatusInput(w_id=2, d_id=1, c_id=4, c_last=None))
    assert (status.o_id, status.lines) == (placed.o_id, 2)
    paid = on_d_id.payment(
        PaymentInput(w_id=1, d_id=2, c_w_id=1, c_d_id=2, c_id=None, c_last="BARBARBAR", h_amount=12.5, h_date=T0)
    )
    assert paid.c_id == 3  # the middle of three by c_first, as in the other layouts
    remote = on_d_id.payment(
        PaymentInput(w_id=1, d_id=1, c_w_id=2, c_d_id=2, c_id=5, c_last=None, h_amount=2.0, h_date=T0)
    )
    assert remote.c_id == 5
    # STOCK on the item id, ORDER-LINE on D_ID: the multi-partition StockLevel reads both
    items = {ol_i_id(1, 2, o, n) for o in range(1, ORDERS + 1) for n in range(1, ol_cnt(1, 2, o) + 1)}
    low = len({i for i in items if STOCK_QUANTITY.get(i, 30 + i) < 45})
    assert on_d_id.stock_level(StockLevelInput(w_id=1, d_id=2, threshold=45)).low_stock == low > 0
    run_some_transactions(on_d_id)
    split = per_district(on_d_id)
    try:
        assert split.delivery(DeliveryInput(w_id=1, o_carrier_id=2, ol_delivery_d=T0)).skipped < 10
    finally:
        split.close()
    results = consistency(on_d_id)
    assert all(r.passed for r in results.values()), [r for r in results.values() if not r.passed]


def test_on_d_id_load_run_and_check_from_the_command_line_and_refuse_another_layout(voltdb, tmp_path):
    """`tpcc load`, `tpcc run --check` and `tpcc check` with partitioning=d_id: 2 warehouses (scaled
    down), 4 clients for 15 s; the 12 conditions hold; NewOrder, Payment and StockLevel ran only
    multi-partition, OrderStatus and the per-district Delivery single-partition on D_ID; a run or a
    load naming another layout is refused (the load's schema_variant)."""
    from cli_helpers import tpcc

    base = ["--db", "voltdb", "--endpoints", voltdb.endpoints[0], "--metrics-port", "0"]
    d_id = [*base, "--driver-opt", "partitioning=d_id", "--driver-opt", "delivery=per-district"]
    scale = ["--items", "1000", "--customers-per-district", "30"]
    done = tpcc("load", *d_id, "--warehouses", "2", "--workers", "1", "--reset", *scale)
    assert done.code == 0, done.stderr
    before = _invocations(voltdb)  # the module's server: earlier tests called procedures too
    results = tmp_path / "results.json"
    args = ["--warehouses", "2", "--clients", "4", "--duration", "15", "--warmup", "1", "--results", str(results)]
    done = tpcc("run", *d_id, *args, "--check", timeout=300)
    assert done.code == 0, done.stderr
    doc = json.loads(results.read_text())
    assert doc["options"]["driver"]["partitioning"] == "d_id", doc["options"]
    assert doc["options"]["driver"]["schema_variant"] == "stored-procedures, partitioned on D_ID"
    assert doc["consistency"]["passed"], doc["consistency"]
    assert doc["server_agreement"]["verdict"] == "agree", doc["server_agreement"]
    tx = doc["transactions"]
    assert all(t["committed"] > 0 and t["errors"] == 0 for t in tx.values()), tx
    after = _invocations(voltdb)
    calls = {p: n - before.get(p, 0) for p, n in after.items()}
    assert calls.get("NewOrder", 0) == calls.get("Payment", 0) == 0, calls
    assert calls["NewOrderMP"] >= tx["NEW_ORDER"]["executed"] and calls["PaymentMP"] >= tx["PAYMENT"]["executed"]
    assert calls["DeliveryDistrict"] >= 10 * tx["DELIVERY"]["committed"] and calls.get("Delivery", 0) == 0
    checked = tpcc("check", *d_id, "--warehouses", "2", "--deliveries", str(results))
    assert checked.code == 0, checked.stdout + checked.stderr
    assert all(c["passed"] for c in checked.json()["conditions"]), checked.stdout
    for other in ("warehouse", "district"):
        one_client = ["--warehouses", "2", "--clients", "1", "--duration", "2"]
        refused = tpcc("run", *base, "--driver-opt", f"partitioning={other}", *one_client)
        assert refused.code != 0, refused.stdout
        assert "the database was loaded with schema 'stored-procedures, partitioned on D_ID'" in refused.stderr
    refused = tpcc("load", *base, "--warehouses", "2", "--workers", "1", *scale)  # the default layout, no --reset
    assert refused.code != 0 and "partitioned on D_ID" in refused.stderr, refused.stderr


def _invocations(server) -> dict[str, int]:
    """@Statistics PROCEDUREPROFILE: each procedure's invocations since the server started."""
    driver = VoltDBDriver(ConnectionOptions(endpoints=server.endpoints, connect_timeout=10))
    driver.connect()
    try:
        rows = driver._statistics("PROCEDUREPROFILE")
    finally:
        driver.close()
    out: dict[str, int] = {}
    for row in rows:
        name = str(row["PROCEDURE"]).rsplit(".", 1)[-1]
        out[name] = out.get(name, 0) + int(row["INVOCATIONS"])
    return out


# -- decoding ---------------------------------------------------------------------------


def test_responses_decode_as_voltdbclient_decodes_them(loaded, monkeypatch):
    """decode_response against voltdbclient's decoder on real answers: every column type
    with values and NULLs, the transactions' result tables, a user abort, a SQL error."""
    bodies: list[bytes] = []
    recv = volt._recv_message

    def keep(sock):
        bodies.append(recv(sock))
        return bodies[-1]

    monkeypatch.setattr(volt, "_recv_message", keep)
    loaded._sql(
        "CREATE TABLE decode_probe (t TINYINT, s SMALLINT, i INTEGER, b BIGINT, f FLOAT, d DECIMAL, "
        "ts TIMESTAMP, v VARCHAR(20), vb VARBINARY(4));",
        writes=True,
    )
    try:
        values = "-5, -300, 70000, 5000000000, -2.5, -123.456789012345, '2024-01-02 03:04:05.678', 'zoë', x'00ff'"
        loaded._sql(f"INSERT INTO decode_probe VALUES ({values});", writes=True)
        loaded._sql(
            "INSERT INTO decode_probe VALUES (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);", writes=True
        )
        loaded._sql("INSERT INTO decode_probe VALUES (0, 0, 0, 0, 0, 0, '1970-01-01', '', x'');", writes=True)
        rows = loaded._sql("SELECT * FROM decode_probe ORDER BY i;")
    finally:
        loaded._sql("DROP TABLE decode_probe;", writes=True)
    assert rows[0] == [None] * 9
    assert rows[2][5] == Decimal("-123.456789012345") and rows[2][7] == "zoë"
    ints = (volt.INTEGER,)
    loaded._call(
        "NewOrder",
        [(volt.INTEGER, 1), (volt.INTEGER, 1), (volt.INTEGER, 1), (volt.TIMESTAMP, T0)]
        + [(ints, [1, 2]), (ints, [1, 1]), (ints, [3, 4])],
        writes=True,
    )
    with pytest.raises(UserAbort):
        loaded._call(
            "NewOrder",
            [(volt.INTEGER, 1), (volt.INTEGER, 1), (volt.INTEGER, 1), (volt.TIMESTAMP, T0)]
            + [(ints, [INVALID_ITEM]), (ints, [1]), (ints, [3])],
            writes=True,
        )
    with pytest.raises(DriverError):
        loaded._sql("INSERT INTO item (i_id) VALUES ('not a number');", writes=True)
    loaded._call("OrderStatus", [(volt.INTEGER, 1)] * 3 + [(volt.INTEGER, 0), (volt.STRING, "BARBARBAR")], writes=False)
    loaded._call("StockLevel", [(volt.INTEGER, 1), (volt.INTEGER, 1), (volt.INTEGER, 20)], writes=False)
    assert len(bodies) >= 9
    for body in bodies:
        ours = volt.decode_response(body)
        theirs = volt.voltdbclient.VoltResponse._from_body(volt._Serializer(), body)
        assert (ours.status, ours.statusString, ours.appStatus) == (
            theirs.status,
            theirs.statusString,
            theirs.appStatus,
        )
        assert [[(c.name, c.type) for c in t.columns] for t in ours.tables] == [
            [(c.name, c.type) for c in t.columns] for t in theirs.tables
        ]
        # VARBINARY: bytes here, array('B') there
        theirs_rows = [
            [[bytes(v) if isinstance(v, array) else v for v in row] for row in t.tuples] for t in theirs.tables
        ]
        assert [t.tuples for t in ours.tables] == theirs_rows
    # the error answers were among them, with their status strings
    assert {volt.USER_ABORT, volt.GRACEFUL_FAILURE} <= {volt.decode_response(b).status for b in bodies}
