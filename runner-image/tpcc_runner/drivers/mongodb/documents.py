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
    "customer": [([("c_w_id", 1), ("c_d_id", 1), ("c_id", 1)], True),
                 ([("c_w_id", 1), ("c_d_id", 1), ("c_last", 1), ("c_first", 1)], False)],
    "stock": [([("s_w_id", 1), ("s_i_id", 1)], True)],
    "orders": [([("o_w_id", 1), ("o_d_id", 1), ("o_id", 1)], True),
               ([("o_w_id", 1), ("o_d_id", 1), ("o_c_id", 1), ("o_id", -1),
                 ("o_carrier_id", 1), ("o_entry_d", 1)], False)],
    "new_order": [([("no_w_id", 1), ("no_d_id", 1), ("no_o_id", 1)], True)],
    "order_line": [([("ol_w_id", 1), ("ol_d_id", 1), ("ol_o_id", 1), ("ol_number", 1)], True),
                   ([("ol_w_id", 1), ("ol_d_id", 1), ("ol_o_id", 1), ("ol_i_id", 1),
                     ("ol_amount", 1)], False)],
    "history": [],
}
# The shard key of each collection behind a mongos: its warehouse id, hashed (see the package docstring).
SHARD_KEYS = {"warehouse": "w_id", "district": "d_w_id", "customer": "c_w_id", "history": "h_w_id",
              "stock": "s_w_id", "orders": "o_w_id", "new_order": "no_w_id", "order_line": "ol_w_id"}
# Fields of an order line kept inside the ORDERS document (its key is the order's).
EMBEDDED_LINE_FIELDS = TABLES["order_line"][3:]


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
