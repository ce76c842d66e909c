"""How the TPC-C rows are stored as MongoDB documents: collections, indexes, shard keys and
money (int64 cents)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from bson.decimal128 import Decimal128
from bson.int64 import Int64

from ...consistency import Cents
from ...schema import TABLES

# the load metadata and the record of loaded units
META = "tpcc_meta"
# The paper's index set (py-tpcc TABLE_INDEXES) with two changes: each table's primary key is
# its own unique index (py-tpcc made the first, wider index unique, which does not stop a
# duplicate key), and equality fields lead so that range scans (StockLevel's last 20 orders,
# Delivery's oldest new order) use the prefix. c_first is added so by-last-name lookups are
# sorted by the index. HISTORY has no key and, as in the paper, no index.
INDEXES: dict[str, list[tuple[list[tuple[str, int]], bool]]] = {
    "item": [([("i_id", 1)], True)],
    "warehouse": [([("w_id", 1)], True)],
    "district": [([("d_w_id", 1), ("d_id", 1)], True)],
    "customer": [
        ([("c_w_id", 1), ("c_d_id", 1), ("c_id", 1)], True),
        ([("c_w_id", 1), ("c_d_id", 1), ("c_last", 1), ("c_first", 1)], False),
    ],
    "stock": [([("s_w_id", 1), ("s_i_id", 1)], True)],
    "orders": [
        ([("o_w_id", 1), ("o_d_id", 1), ("o_id", 1)], True),
        ([("o_w_id", 1), ("o_d_id", 1), ("o_c_id", 1), ("o_id", -1), ("o_carrier_id", 1), ("o_entry_d", 1)], False),
    ],
    "new_order": [([("no_w_id", 1), ("no_d_id", 1), ("no_o_id", 1)], True)],
    "order_line": [
        ([("ol_w_id", 1), ("ol_d_id", 1), ("ol_o_id", 1), ("ol_number", 1)], True),
        ([("ol_w_id", 1), ("ol_d_id", 1), ("ol_o_id", 1), ("ol_i_id", 1), ("ol_amount", 1)], False),
    ],
    "history": [],
}
# The shard key of each collection behind a mongos: its warehouse id, hashed (see the package docstring).
SHARD_KEYS = {
    "warehouse": "w_id",
    "district": "d_w_id",
    "customer": "c_w_id",
    "history": "h_w_id",
    "stock": "s_w_id",
    "orders": "o_w_id",
    "new_order": "no_w_id",
    "order_line": "ol_w_id",
}
# Fields of an order line kept inside the ORDERS document (its key is the order's).
EMBEDDED_LINE_FIELDS = TABLES["order_line"][3:]

# The embedded schema (the sharded study's): a customer's ORDERS (each with its lines) and its
# HISTORY rows are arrays of its CUSTOMER document, named after the table. The fields that name
# the customer are the customer's own; the others are kept in each array element.
OWNER_FIELDS = {
    "orders": {"o_w_id": "c_w_id", "o_d_id": "c_d_id", "o_c_id": "c_id"},
    "history": {"h_c_w_id": "c_w_id", "h_c_d_id": "c_d_id", "h_c_id": "c_id"},
}
EMBEDDED_FIELDS = {
    "orders": [f for f in TABLES["orders"] if f not in OWNER_FIELDS["orders"]] + ["order_line"],
    "history": [f for f in TABLES["history"] if f not in OWNER_FIELDS["history"]],
}
# The collections each schema does not have: their rows live inside other documents.
EMBEDDED_TABLES = {"normalized": (), "denormalized": ("order_line",), "embedded": ("orders", "order_line", "history")}
# Finds a customer by one of its orders (Delivery, StockLevel, the durability ledger); multikey,
# not unique (a unique index on an array field constrains across documents only).
CUSTOMER_ORDER_INDEX = ([("c_w_id", 1), ("c_d_id", 1), ("orders.o_id", 1)], False)


def embedded_rows(table: str, match: dict[str, Any]) -> list[dict[str, Any]]:
    """An aggregation pipeline over CUSTOMER that yields the flat rows of an embedded table
    ("orders", with their order_line array, or "history") matching `match`, a query on the
    table's own field names: the customers are selected by it first (so the index on
    c_w_id, c_d_id and orders.o_id serves it), then their array is unwound and matched exactly."""
    owner = OWNER_FIELDS[table]

    def path(field: str) -> str:
        return owner.get(field, f"{table}.{field}")

    fields = list(owner) + EMBEDDED_FIELDS[table]
    return [
        {"$match": {path(k): v for k, v in match.items()}},
        {"$unwind": f"${table}"},
        {"$project": {"_id": 0, **{f: f"${path(f)}" for f in fields}}},
        {"$match": match},
    ]


def _cents(dollars: float) -> Int64:
    """Money is stored as int64 cents (exact sums; int64 so W_YTD never overflows int32)."""
    return Int64(round(dollars * 100))


def _stored_cents(value: Any) -> Cents:
    """A stored cents value, exactly: an int64 as is; a double (which the driver never writes)
    or a Decimal128 keeps its fraction, so a check compares what is really stored."""
    if value is None:
        return 0
    if isinstance(value, Decimal128):
        value = value.to_decimal()
    if isinstance(value, int):
        return int(value)
    exact = Decimal(value)
    return int(exact) if exact == exact.to_integral_value() else exact
