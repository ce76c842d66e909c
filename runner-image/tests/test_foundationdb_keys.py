"""The FoundationDB driver's key/value encoding and its failure without libfdb_c.

No FoundationDB server or libfdb_c exists on these machines: these tests use only the
binding's pure-Python tuple layer (the same code that runs against a real cluster) and
check the orders the transactions rely on. Everything that reads or writes a database is
untested here (docs/foundationdb.md)."""

import ctypes.util
import datetime as dt
import importlib.util
import os
import random
import time

import pytest
from tpcc_runner.drivers.base import ConnectionOptions, DriverError, Unreachable
from tpcc_runner.drivers.foundationdb import (
    LIBFDB_C_MISSING,
    FoundationDBDriver,
    Keyspace,
    cluster_file_contents,
    counter_bytes,
    counter_cents,
    load_batches,
    unit_clear_ranges,
)
from tpcc_runner.schema import TABLES

HAS_BINDING = importlib.util.find_spec("fdb") is not None
needs_binding = pytest.mark.skipif(not HAS_BINDING, reason="pip install foundationdb (binding)")

TS = dt.datetime(2024, 5, 6, 7, 8, 9, 123000)
PREFIX = b"\x15\x2a"  # what the directory layer hands out: a short tuple-encoded integer


def rows(w=1, d=1):
    """One realistic row per table, in schema column order."""
    return {
        "warehouse": (w, "W-name", "street 1", "street 2", "city", "ST", "123411111", 0.1234, 300000.0),
        "district": (d, w, "D-name", "s1", "s2", "city", "ST", "123411111", 0.0567, 30000.0, 3001),
        "customer": (
            7,
            d,
            w,
            "Ärger",
            "OE",
            "BARBARBAR",
            "s1",
            "s2",
            "city",
            "ST",
            "123411111",
            "0123456789012345",
            TS,
            "BC",
            50000.0,
            0.4321,
            -10.0,
            10.0,
            1,
            0,
            "x" * 500,
        ),
        "history": (7, d, w, d, w, TS, 10.0, "W-name    D-name"),
        "new_order": (2101, d, w),
        "orders": (2101, d, w, 7, TS, None, 11, 1),
        "order_line": (2101, d, w, 3, 9999, w, None, 5, 123.45, "dist-info-24-characters!"),
        "item": (9999, 42, "item name", 99.99, "data ORIGINAL data"),
        "stock": (9999, w, 55, *(f"dist{i:02d}-" + "x" * 17 for i in range(1, 11)), 0, 0, 0, "stock data"),
    }


@pytest.fixture
def ks():
    pytest.importorskip("fdb.tuple")
    return Keyspace(PREFIX)


@needs_binding
def test_every_table_row_round_trips(ks):
    for table, row in rows().items():
        assert len(row) == len(TABLES[table]), table
        kvs = ks.load_kvs(table, row)
        key, value = kvs[0]
        assert key.startswith(PREFIX)
        ytd = counter_cents(kvs[-1][1]) if table in ("warehouse", "district") else None
        assert ks.decode(table, key, value, ytd) == row, table


@needs_binding
def test_delivered_order_line_keeps_its_timestamp(ks):
    line = rows()["order_line"][:6] + (TS,) + rows()["order_line"][7:]
    assert ks.decode("order_line", *ks.row_kv("order_line", line)) == line


@needs_binding
def test_ytd_lives_in_a_counter_not_in_the_row(ks):
    (key, value), (counter_key, counter) = ks.load_kvs("warehouse", rows()["warehouse"])
    assert counter_key == ks.key("warehouse_ytd", 1)
    assert counter_cents(counter) == 30_000_000
    assert ks.record("warehouse", key, value)["w_ytd"] is None  # no counter given
    # a Payment's atomic add: little-endian int64 addition
    paid = int.from_bytes(counter, "little", signed=True) + int.from_bytes(counter_bytes(-1234), "little", signed=True)
    assert counter_cents(paid.to_bytes(8, "little", signed=True)) == 30_000_000 - 1234


@needs_binding
def test_indexes_written_with_customer_and_order(ks):
    r = rows(w=3, d=4)
    assert ks.load_kvs("customer", r["customer"])[1] == (ks.key("customer_by_name", 3, 4, "BARBARBAR", "Ärger", 7), b"")
    assert ks.load_kvs("orders", r["orders"])[1] == (ks.key("orders_by_customer", 3, 4, 7, 2101), b"")
    h1, h2 = (ks.load_kvs("history", r["history"])[0][0] for _ in range(2))
    assert h1 != h2, "history rows have no primary key: each gets its own uuid"
    assert ks.unpack("history", h1)[:2] == (3, 4)


@needs_binding
def test_new_order_keys_sort_by_o_id_so_the_oldest_is_first(ks):
    o_ids = [1, 2, 9, 10, 11, 99, 100, 900, 2101, 3000, 10_000, 123_456]
    shuffled = random.Random(1).sample(o_ids, len(o_ids))
    keys = sorted(ks.key("new_order", 1, 1, o) for o in shuffled)
    assert [ks.unpack("new_order", k)[2] for k in keys] == o_ids
    r = ks.range("new_order", 1, 1)
    assert all(r.start <= k < r.stop for k in keys)


@needs_binding
def test_customer_by_name_sorts_by_c_first_and_range_is_exact(ks):
    names = [
        ("BAR", "Zed", 5),
        ("BAR", "Amy", 9),
        ("BAR", "Kim", 1),
        ("BARBAR", "Aaa", 2),
        ("BA", "Bob", 3),
        ("BARABLE", "Cat", 4),
        ("BAR", "Kim", 0),
    ]
    keys = sorted(ks.key("customer_by_name", 1, 2, last, first, c) for last, first, c in names)
    r = ks.range("customer_by_name", 1, 2, "BAR")
    hits = [ks.unpack("customer_by_name", k)[3:] for k in keys if r.start <= k < r.stop]
    assert hits == [("Amy", 9), ("Kim", 0), ("Kim", 1), ("Zed", 5)]
    # clause 2.5.2.2: position ceil(n/2) of the sorted matches; the driver takes (n-1)//2
    assert hits[(len(hits) - 1) // 2] == ("Kim", 0)


@needs_binding
def test_a_warehouse_and_a_district_are_contiguous(ks):
    keys = {
        (w, d, o, n): ks.key("order_line", w, d, o, n)
        for w in (1, 2, 10)
        for d in (1, 2, 10)
        for o in (1, 3000)
        for n in (1, 15)
    }
    for w in (1, 2, 10):
        r = ks.range("order_line", w)
        assert {k for k in keys if r.start <= keys[k] < r.stop} == {k for k in keys if k[0] == w}
        for d in (1, 2, 10):
            r = ks.range("order_line", w, d)
            assert {k for k in keys if r.start <= keys[k] < r.stop} == {k for k in keys if k[:2] == (w, d)}
    # and no other table's keys fall into a table's range
    r = ks.range("order_line")
    assert not r.start <= ks.key("orders", 1, 1, 1) < r.stop


@needs_binding
def test_stock_level_range_covers_exactly_the_last_20_orders(ks):
    next_o_id = 3021
    keys = [(o, n, ks.key("order_line", 1, 1, o, n)) for o in range(2990, 3025) for n in (1, 5, 15)]
    start, stop = ks.key("order_line", 1, 1, next_o_id - 20), ks.key("order_line", 1, 1, next_o_id)
    assert sorted({o for o, _, k in keys if start <= k < stop}) == list(range(3001, 3021))


@needs_binding
def test_last_order_of_customer_is_last_index_key(ks):
    keys = sorted(ks.key("orders_by_customer", 1, 1, 7, o) for o in (3, 12, 2500, 3002))
    keys.append(ks.key("orders_by_customer", 1, 1, 8, 1))  # the next customer's order
    r = ks.range("orders_by_customer", 1, 1, 7)
    inside = [k for k in keys if r.start <= k < r.stop]
    assert ks.unpack("orders_by_customer", inside[-1])[3] == 3002


def _covered(kvs, ranges):
    return [any(r.start <= k < r.stop for r in ranges) for k, _ in kvs]


@needs_binding
def test_unit_clear_ranges_cover_the_unit_and_nothing_else(ks):
    def unit_kvs(tables):
        return [kv for t, rs in tables.items() for row in rs for kv in ks.load_kvs(t, row)]

    def district_unit(w, d):
        r = rows(w, d)
        return {t: [r[t]] for t in ("customer", "history", "orders", "order_line", "new_order")}

    mine = district_unit(1, 1)
    ranges = unit_clear_ranges(ks, "district:1:1", mine)
    assert all(_covered(unit_kvs(mine), ranges))
    for w, d in ((1, 2), (1, 10), (10, 1), (2, 1)):
        assert not any(_covered(unit_kvs(district_unit(w, d)), ranges)), (w, d)

    def warehouse_unit(w):
        r = rows(w)
        return {
            "warehouse": [r["warehouse"]],
            "district": [r["district"][:0] + (d,) + r["district"][1:] for d in range(1, 11)],
        }

    ranges = unit_clear_ranges(ks, "warehouse:1", warehouse_unit(1))
    assert all(_covered(unit_kvs(warehouse_unit(1)), ranges))
    assert not any(_covered(unit_kvs(warehouse_unit(10)), ranges))
    assert not any(_covered(unit_kvs(district_unit(1, 1)), ranges))

    def item_unit(ids):
        return {"item": [(i,) + rows()["item"][1:] for i in ids]}

    ranges = unit_clear_ranges(ks, "item:0", item_unit(range(1, 1001)))
    assert all(_covered(unit_kvs(item_unit(range(1, 1001))), ranges))
    assert not any(_covered(unit_kvs(item_unit([1001, 10_000])), ranges))

    def stock_unit(w, ids):
        return {"stock": [(i, w) + rows()["stock"][2:] for i in ids]}

    ranges = unit_clear_ranges(ks, "stock:2:1", stock_unit(2, range(1001, 2001)))
    assert all(_covered(unit_kvs(stock_unit(2, range(1001, 2001))), ranges))
    assert not any(_covered(unit_kvs(stock_unit(2, [1000, 2001])), ranges))
    assert not any(_covered(unit_kvs(stock_unit(1, [1500])), ranges))


@needs_binding
def test_done_marker_key_round_trips(ks):
    key = ks.key("meta", "done", "stock:3:7")
    r = ks.range("meta", "done")
    assert r.start <= key < r.stop and ks.unpack("meta", key)[1] == "stock:3:7"
    assert not r.start <= ks.key("meta", "load") < r.stop


def test_load_batches_respect_the_size_and_keep_everything():
    kvs = [(b"k%05d" % i, b"v" * (i % 700)) for i in range(5000)]
    batches = list(load_batches(kvs, max_bytes=50_000))
    assert [kv for b in batches for kv in b] == kvs
    assert len(batches) > 1
    assert all(sum(len(k) + len(v) for k, v in b) <= 50_000 for b in batches)
    assert list(load_batches([])) == [[]], "an empty unit still gets a batch for its done marker"
    big = (b"k", b"v" * 100)
    assert list(load_batches([big, big], max_bytes=10)) == [[big], [big]], "no empty batch first"


def test_cluster_file_line_from_endpoints():
    assert (
        cluster_file_contents("tpcc_fdb:a1B2c3", ["10.0.0.1", "fdb-1.fdb:4501", "10.0.0.3:4500:tls"])
        == "tpcc_fdb:a1B2c3@10.0.0.1:4500,fdb-1.fdb:4501,10.0.0.3:4500:tls\n"
    )
    for bad in (None, "", "noid", "a:b@c", "has space:x"):
        with pytest.raises(DriverError, match="cluster_id=DESCRIPTION:ID") as e:
            cluster_file_contents(bad, ["10.0.0.1"])
        assert "\n" not in str(e.value)


def test_endpoints_without_cluster_id_fail_before_touching_the_client():
    driver = FoundationDBDriver(ConnectionOptions(endpoints=["10.0.0.1"]))
    with pytest.raises(DriverError, match="cluster_id"):
        driver.connect()


def _libfdb_c_present():
    if ctypes.util.find_library("fdb_c"):
        return True
    spec = importlib.util.find_spec("fdb")
    return spec is not None and os.path.exists(os.path.join(os.path.dirname(spec.origin), "libfdb_c.so"))


@pytest.mark.skipif(_libfdb_c_present(), reason="libfdb_c is installed here")
def test_connect_without_libfdb_c_is_unreachable_within_a_second():
    driver = FoundationDBDriver(
        ConnectionOptions(endpoints=["10.0.0.1"], connect_timeout=30, extra={"cluster_id": "tpcc:abc123"})
    )
    start = time.monotonic()
    with pytest.raises(Unreachable) as e:
        driver.connect()
    assert time.monotonic() - start < 1.0
    expected = LIBFDB_C_MISSING if HAS_BINDING else "FoundationDB Python binding not installed"
    assert str(e.value).startswith(expected)
    assert "\n" not in str(e.value)


@needs_binding
def test_the_options_the_driver_sets_exist_in_this_binding():
    """The binding generates tr.options.set_<name>, db.options.set_<name>, tr.<mutation> and
    fdb.predicates.is_<name> from this table; a misspelt name fails only on a live cluster."""
    from fdb import fdboptions

    assert "transaction_timeout" in fdboptions.DatabaseOption
    assert "timeout" in fdboptions.TransactionOption
    assert "add" in fdboptions.MutationType
    assert "want_all" in fdboptions.StreamingMode
    assert {"maybe_committed", "retryable_not_committed"} <= set(fdboptions.ErrorPredicate)
