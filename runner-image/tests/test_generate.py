"""The initial population of clause 4.3.3.1, on a scaled-down and a full-size district."""

import collections
import datetime as dt

from tpcc_runner import generate as g
from tpcc_runner.schema import TABLES
from tpcc_runner.workload import CConstants, Scale, last_name

NOW = dt.datetime(2026, 1, 1)
C = CConstants(157, 300, 4000)


def test_unit_keys_cover_the_database_once():
    keys = list(g.unit_keys(2, Scale()))
    assert len(keys) == g.unit_count(2, Scale())
    assert len(keys) == len(set(keys))
    assert keys.count("warehouse:1") == 1
    assert sum(k.startswith("item:") for k in keys) == 10
    assert sum(k.startswith("stock:2:") for k in keys) == 10
    assert sum(k.startswith("district:2:") for k in keys) == 10


def test_unit_keys_stream_whatever_the_warehouse_count():
    """A billion warehouses: the first units come at once and nothing proportional is held."""
    import itertools
    import tracemalloc

    tracemalloc.start()
    keys = g.unit_keys(10**9, Scale())
    first = list(itertools.islice(keys, 50))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert first[10:13] == ["warehouse:1", "warehouse:2", "warehouse:3"]
    assert peak < 1_000_000
    assert g.unit_count(10**9, Scale()) == 10 + 10**9 * 21


def test_consecutive_units_are_of_different_warehouses():
    keys = list(g.unit_keys(3, Scale(items=20_000)))
    assert keys[:5] == ["item:0", "item:1", "warehouse:1", "warehouse:2", "warehouse:3"]
    assert keys[5:11] == ["stock:1:0", "stock:2:0", "stock:3:0", "stock:1:1", "stock:2:1", "stock:3:1"]
    assert keys[11:14] == ["district:1:1", "district:2:1", "district:3:1"]


def test_rows_have_the_columns_of_their_table():
    scale = Scale(items=50, customers_per_district=30)
    for key in g.unit_keys(1, scale):
        for table, rows in g.generate_unit(key, scale, C, 7, NOW).items():
            assert rows and all(len(r) == len(TABLES[table]) for r in rows), (key, table)


def test_full_size_district_follows_the_spec():
    t = g.generate_unit("district:1:3", Scale(), C, 42, NOW)
    assert len(t["customer"]) == 3000 and len(t["history"]) == 3000
    assert len(t["orders"]) == 3000 and len(t["new_order"]) == 900
    assert [r[0] for r in t["new_order"]] == list(range(2101, 3001))
    cols = {name: i for i, name in enumerate(TABLES["customer"])}
    names = [r[cols["c_last"]] for r in t["customer"]]
    assert names[:1000] == [last_name(n) for n in range(1000)]
    credit = collections.Counter(r[cols["c_credit"]] for r in t["customer"])
    assert 200 < credit["BC"] < 400
    o_cols = {name: i for i, name in enumerate(TABLES["orders"])}
    assert sorted(r[o_cols["o_c_id"]] for r in t["orders"]) == list(range(1, 3001))
    delivered = [r for r in t["orders"] if r[o_cols["o_carrier_id"]] is not None]
    assert len(delivered) == 2100 and max(r[0] for r in delivered) == 2100
    ol = {name: i for i, name in enumerate(TABLES["order_line"])}
    per_order = collections.Counter(r[ol["ol_o_id"]] for r in t["order_line"])
    assert all(per_order[r[0]] == r[o_cols["o_ol_cnt"]] for r in t["orders"])
    for r in t["order_line"]:
        undelivered = r[ol["ol_o_id"]] > 2100
        assert (r[ol["ol_delivery_d"]] is None) == undelivered
        assert (r[ol["ol_amount"]] == 0.0) != undelivered


def test_year_to_date_totals_match_the_initial_history():
    spec = g.generate_unit("warehouse:1", Scale(), C, 1, NOW)
    assert spec["warehouse"][0][-1] == 300_000.0
    assert {d[9] for d in spec["district"]} == {30_000.0}
    small = g.generate_unit("warehouse:1", Scale(customers_per_district=30), C, 1, NOW)
    assert small["warehouse"][0][-1] == 3_000.0 and small["district"][0][9] == 300.0


def test_original_in_about_ten_percent_of_item_data():
    t = g.generate_unit("item:0", Scale(), C, 1, NOW)["item"]
    share = sum("ORIGINAL" in r[4] for r in t) / len(t)
    assert len(t) == 10_000 and 0.08 < share < 0.12
    assert all(1.00 <= r[3] <= 100.00 and 26 <= len(r[4]) <= 50 for r in t)


def test_a_unit_regenerates_identically():
    a = g.generate_unit("stock:1:0", Scale(items=100), C, 5, NOW)
    b = g.generate_unit("stock:1:0", Scale(items=100), C, 5, NOW)
    c = g.generate_unit("stock:1:0", Scale(items=100), C, 6, NOW)
    assert a == b and a != c


def test_rows_are_those_of_random_random(monkeypatch):
    """LoadRandom replays random.Random: a load is the same rows whichever made them."""
    from tpcc_runner.workload import TpccRandom

    scale = Scale(items=2_000, customers_per_district=300)
    keys = ["item:0", "warehouse:2", "stock:2:0", "district:2:7"]
    fast = {k: g.generate_unit(k, scale, C, 11, NOW) for k in keys}
    monkeypatch.setattr(g, "LoadRandom", TpccRandom)
    assert fast == {k: g.generate_unit(k, scale, C, 11, NOW) for k in keys}


def test_stock_strings_drawn_inline_are_those_of_random_random_across_block_ends(monkeypatch):
    """A stock row's ten S_DIST_xx are drawn inline from the block (same_length_alphanumerics);
    with tiny blocks and no room for rejections, runs of them meet the block's end, where
    they are drawn one at a time instead: the rows stay random.Random's."""
    from tpcc_runner.workload import TpccRandom

    monkeypatch.setattr(g._ReplayedStream, "BLOCK_WORDS", 700)
    monkeypatch.setattr(g._ReplayedStream, "REJECTION_ROOM", 0)
    scale = Scale(items=300)
    fast = g.generate_unit("stock:1:0", scale, C, 3, NOW)
    monkeypatch.setattr(g, "LoadRandom", TpccRandom)
    assert fast == g.generate_unit("stock:1:0", scale, C, 3, NOW)


def test_order_lines_drawn_inline_are_those_of_random_random_across_block_ends(monkeypatch):
    """An order's lines are drawn inline (order_line_draws); with tiny blocks and no room
    for rejections they meet the block's end and are drawn one call at a time instead."""
    from tpcc_runner.workload import TpccRandom

    monkeypatch.setattr(g._ReplayedStream, "BLOCK_WORDS", 700)
    monkeypatch.setattr(g._ReplayedStream, "REJECTION_ROOM", 0)
    scale = Scale(items=300, customers_per_district=60)
    fast = g.generate_unit("district:1:3", scale, C, 4, NOW)
    monkeypatch.setattr(g, "LoadRandom", TpccRandom)
    assert fast == g.generate_unit("district:1:3", scale, C, 4, NOW)


def test_alphanumeric_picks_next_to_a_boundary_are_those_of_the_float_formula():
    """The block's characters come from integer arithmetic on the first word of a pair; where
    that lands within 32 / 2**26 of the next character (about one pair in two million, so no
    load above meets one) the second word can tip the float formula of random.Random's
    choices over: those are taken from the formula itself. Words made to land there."""
    import math

    import numpy as np
    from tpcc_runner.workload import ALPHANUMERIC

    firsts = []
    for k in range(1, 62):  # 31 * s just under k * 2**26, s = a >> 5
        s = (k << 26) // 31
        firsts += [s << 5, (s << 5) | 31, (s - 1) << 5]
    seconds = [0, 1 << 6, 1 << 31, 0xFFFFFFFF]
    words = [w for a in firsts for b in seconds for w in (a, b)] + [0]
    stream = g._ReplayedStream(1)
    stream._block = np.array(words, dtype=np.uint32)
    halves = stream._alphanumerics()  # the even positions' characters, the odd positions'
    chars = "".join(halves[p & 1][p >> 1] for p in range(len(words) - 1))

    def choice(a: int, b: int) -> str:  # CPython: random() = (a * 2**26 + b) / 2**53, a = w >> 5, b = w >> 6
        return ALPHANUMERIC[math.floor(((a >> 5) * 67108864.0 + (b >> 6)) * (1.0 / 9007199254740992.0) * 62)]

    assert chars == "".join(choice(a, b) for a, b in zip(words, words[1:]))
    tipped = sum(choice(a, 0) != choice(a, 0xFFFFFFFF) for a in firsts)
    assert tipped > 30, "the words must reach the cases the second word decides"
