"""Initial database population (clause 4.3.3.1), split into load units.

A unit is the smallest piece a driver loads and records as done (see Driver.load_unit), so
a load can be split across workers and resumed. Every unit is generated from its own seed
(derived from the load seed and the unit key), so re-generating a unit after a crash yields
the same rows."""
from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Iterator

from .workload import CConstants, Scale, TpccRandom, last_name

ITEM_CHUNK = 10_000
STOCK_CHUNK = 10_000


def unit_keys(warehouses: int, scale: Scale) -> Iterator[str]:
    """All units of a load, in the order they are handed out: generated one at a time, so a
    loader's memory does not grow with the warehouse count."""
    yield from (f"item:{c}" for c in range(_chunks(scale.items, ITEM_CHUNK)))
    for w in range(1, warehouses + 1):
        yield f"warehouse:{w}"
        yield from (f"stock:{w}:{c}" for c in range(_chunks(scale.items, STOCK_CHUNK)))
        yield from (f"district:{w}:{d}" for d in range(1, scale.districts + 1))


def unit_count(warehouses: int, scale: Scale) -> int:
    """len(list(unit_keys(...))), without making the list."""
    return (_chunks(scale.items, ITEM_CHUNK)
            + warehouses * (1 + _chunks(scale.items, STOCK_CHUNK) + scale.districts))


def _chunks(n: int, size: int) -> int:
    return (n + size - 1) // size


def unit_seed(load_seed: int, key: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{load_seed}:{key}".encode()).digest()[:8], "big")


def generate_unit(key: str, scale: Scale, constants: CConstants, load_seed: int,
                  now: dt.datetime) -> dict[str, list[tuple]]:
    r = TpccRandom(unit_seed(load_seed, key), constants)
    kind, *ids = key.split(":")
    args = [int(i) for i in ids]
    if kind == "item":
        return {"item": list(_items(r, scale, *args))}
    if kind == "warehouse":
        return _warehouse(r, scale, *args)
    if kind == "stock":
        return {"stock": list(_stock(r, scale, *args))}
    if kind == "district":
        return _district(r, scale, *args, now=now)
    raise ValueError(f"unknown load unit {key!r}")


def unit_rows(tables: dict[str, list[tuple]]) -> int:
    return sum(len(rows) for rows in tables.values())


def _address(r: TpccRandom) -> tuple:
    return (r.a_string(10, 20), r.a_string(10, 20), r.a_string(10, 20), r.state(), r.zip_code())


def _items(r: TpccRandom, scale: Scale, chunk: int) -> Iterator[tuple]:
    first = chunk * ITEM_CHUNK + 1
    for i_id in range(first, min(first + ITEM_CHUNK, scale.items + 1)):
        yield (i_id, r.number(1, 10_000), r.a_string(14, 24), r.money(100, 10_000),
               r.data_with_original())


def _warehouse(r: TpccRandom, scale: Scale, w_id: int) -> dict[str, list[tuple]]:
    # YTD = the initial $10.00 history payment of every customer (300,000.00 and 30,000.00
    # at the spec's size), so clauses 3.3.2.8-9 hold for a scaled-down load too.
    d_ytd = 10.0 * scale.customers_per_district
    warehouse = (w_id, r.a_string(6, 10), *_address(r), r.fraction(0, 2000, 10_000),
                 d_ytd * scale.districts)
    districts = [(d_id, w_id, r.a_string(6, 10), *_address(r), r.fraction(0, 2000, 10_000),
                  d_ytd, scale.orders_per_district + 1)
                 for d_id in range(1, scale.districts + 1)]
    return {"warehouse": [warehouse], "district": districts}


def _stock(r: TpccRandom, scale: Scale, w_id: int, chunk: int) -> Iterator[tuple]:
    first = chunk * STOCK_CHUNK + 1
    for i_id in range(first, min(first + STOCK_CHUNK, scale.items + 1)):
        yield (i_id, w_id, r.number(10, 100), *(r.a_string(24, 24) for _ in range(10)),
               0, 0, 0, r.data_with_original())


def _customer_last_name(r: TpccRandom, scale: Scale, c_id: int) -> str:
    """Clause 4.3.2.3: the first 1,000 customers get every name once, the rest NURand."""
    if c_id <= 1000:
        return last_name(c_id - 1)
    return last_name(r.nurand(255, 0, 999, r.c.c_last))


def _district(r: TpccRandom, scale: Scale, w_id: int, d_id: int, now: dt.datetime
              ) -> dict[str, list[tuple]]:
    customers, history = [], []
    for c_id in range(1, scale.customers_per_district + 1):
        credit = "BC" if r.number(1, 10) == 1 else "GC"
        customers.append((c_id, d_id, w_id, r.a_string(8, 16), "OE",
                          _customer_last_name(r, scale, c_id), *_address(r),
                          r.n_string(16, 16), now, credit, 50_000.0,
                          r.fraction(0, 5000, 10_000), -10.0, 10.0, 1, 0, r.a_string(300, 500)))
        history.append((c_id, d_id, w_id, d_id, w_id, now, 10.0, r.a_string(12, 24)))
    # O_C_ID: a random permutation of the customer ids (clause 4.3.3.1)
    order_customers = list(range(1, scale.customers_per_district + 1))
    r.rng.shuffle(order_customers)
    orders, lines, new_orders = [], [], []
    undelivered_from = scale.first_undelivered_o_id
    for o_id in range(1, scale.orders_per_district + 1):
        delivered = o_id < undelivered_from
        ol_cnt = r.number(5, 15)
        orders.append((o_id, d_id, w_id, order_customers[o_id - 1], now,
                       r.number(1, 10) if delivered else None, ol_cnt, 1))
        for ol_number in range(1, ol_cnt + 1):
            lines.append((o_id, d_id, w_id, ol_number, r.number(1, scale.items), w_id,
                          now if delivered else None, 5,
                          0.0 if delivered else r.money(1, 999_999), r.a_string(24, 24)))
        if not delivered:
            new_orders.append((o_id, d_id, w_id))
    return {"customer": customers, "history": history, "orders": orders,
            "order_line": lines, "new_order": new_orders}
