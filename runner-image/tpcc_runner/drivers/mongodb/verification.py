"""What the checks read back (never judge): a warehouse's rows for the consistency
conditions (consistency.Evaluator) and stored orders for the durability ledger
(durability.py), in every schema variant (embedded: flat rows unwound from the customer
documents by documents.embedded_rows)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from pymongo.read_concern import ReadConcern
from pymongo.read_preferences import ReadPreference

from ...consistency import CustomerRow, DistrictRow, OrderRow, WarehouseData
from ...durability import StoredOrder, from_epoch_ms
from ..base import LoadMeta, NotLoaded
from .config import SCHEMAS
from .connection import Connection, admin_errors
from .documents import _stored_cents, embedded_rows


def _null(expr: Any) -> dict:
    """Aggregation: true when expr is null or missing (a plain $eq treats missing != null)."""
    return {"$eq": [{"$ifNull": [expr, None]}, None]}


class Verification(Connection):
    def stored_orders(self, keys: list[tuple[int, int, int]]) -> dict[tuple[int, int, int], StoredOrder]:
        by_district: dict[tuple[int, int], list[int]] = defaultdict(list)
        for w, d, o in keys:
            by_district[(w, d)].append(o)
        found = {}
        for (w, d), o_ids in by_district.items():
            for i in range(0, len(o_ids), 5000):
                found.update(self._orders({"o_w_id": w, "o_d_id": d, "o_id": {"$in": o_ids[i : i + 5000]}}))
        return found

    def orders_entered_at(self, w_id: int, d_id: int, c_id: int, entry_ms: int) -> list[StoredOrder]:
        return list(
            self._orders(
                {"o_w_id": w_id, "o_d_id": d_id, "o_c_id": c_id, "o_entry_d": from_epoch_ms(entry_ms)}
            ).values()
        )

    def _orders(self, query: dict) -> dict[tuple[int, int, int], StoredOrder]:
        """The orders of one district matching `query`, with their lines (embedded or not)."""
        fields = {"_id": 0, "o_w_id": 1, "o_d_id": 1, "o_id": 1, "o_c_id": 1, "o_entry_d": 1, "o_ol_cnt": 1}
        if self.schema != "normalized":
            fields["order_line"] = 1
        with admin_errors("reading orders"):
            if self.schema == "embedded":
                orders = self._aggregate("customer", embedded_rows("orders", query) + [{"$project": fields}])
            else:
                orders = list(self._coll("orders").find(query, fields))
            if self.schema != "normalized":
                lines = {o["o_id"]: o.get("order_line") or [] for o in orders}
            else:
                lines = defaultdict(list)
                if orders:
                    w, d = orders[0]["o_w_id"], orders[0]["o_d_id"]
                    for ol in self._coll("order_line").find(
                        {"ol_w_id": w, "ol_d_id": d, "ol_o_id": {"$in": [o["o_id"] for o in orders]}},
                        {"_id": 0, "ol_o_id": 1, "ol_number": 1, "ol_i_id": 1, "ol_supply_w_id": 1, "ol_quantity": 1},
                    ):
                        lines[ol["ol_o_id"]].append(ol)
        return {
            (o["o_w_id"], o["o_d_id"], o["o_id"]): StoredOrder(
                o["o_c_id"],
                o["o_entry_d"],
                o["o_ol_cnt"],
                tuple(
                    (ol["ol_i_id"], ol["ol_supply_w_id"], ol["ol_quantity"])
                    for ol in sorted(lines[o["o_id"]], key=lambda ol: ol["ol_number"])
                ),
            )
            for o in orders
        }

    def consistency_snapshot(self, w: int, meta: LoadMeta) -> WarehouseData:
        """consistency_data in one transaction with read concern "snapshot": what it reads is one
        committed state however many clients commit meanwhile. One warehouse per transaction
        keeps it within MongoDB's transaction lifetime (transactionLifetimeLimitSeconds, 60 s by
        default) for warehouses of the specified size."""
        with admin_errors(f"reading warehouse {w} in one snapshot"), self.client.start_session() as session:
            with session.start_transaction(
                read_concern=ReadConcern("snapshot"), read_preference=ReadPreference.PRIMARY
            ):
                self._snapshot_session = session
                try:
                    return self.consistency_data(w, meta)
                finally:
                    self._snapshot_session = None

    def consistency_data(self, w: int, meta: LoadMeta) -> WarehouseData:
        """Fetch warehouse w for consistency.Evaluator, in the schema variant the load stored
        (whatever the schema option says). ORDER-LINE documents in the order_line collection
        are read in every variant: in the others any there are rows outside an order. The
        embedded variant's HISTORY of payments made at warehouse w lies in the customers of
        every warehouse (remote payments), so reading it scans all customer documents: the
        check's cost in that schema, not the transactions'."""
        if meta.schema_variant not in SCHEMAS:
            raise NotLoaded(
                f"mongodb: the load metadata names schema {meta.schema_variant!r}, not one of {'|'.join(SCHEMAS)}"
            )
        wh = WarehouseData(w)
        with admin_errors(f"reading warehouse {w} for the consistency check"):
            self._read_payments(wh, meta.schema_variant)
            self._read_orders(wh, meta.schema_variant)
            self._read_order_lines_and_customers(wh)
        return wh

    def _read_payments(self, wh: WarehouseData, schema: str) -> None:
        """The YTDs of the warehouse and its districts, D_NEXT_O_ID, and the HISTORY sums."""
        w, session = wh.w_id, self._snapshot_session  # no session: plain reads, each on its own
        doc = self._coll("warehouse").find_one({"w_id": w}, {"_id": 0, "w_ytd": 1}, session=session)
        if doc is not None:
            wh.ytd = _stored_cents(doc.get("w_ytd"))
        for r in self._coll("district").find(
            {"d_w_id": w}, {"_id": 0, "d_id": 1, "d_ytd": 1, "d_next_o_id": 1}, session=session
        ):
            wh.district(r["d_id"]).row = DistrictRow(_stored_cents(r.get("d_ytd")), r.get("d_next_o_id") or 0)
        for r in self._history(schema, {"h_w_id": w}, {"$group": {"_id": "$h_d_id", "sum": {"$sum": "$h_amount"}}}):
            wh.district(r["_id"]).paid_here = _stored_cents(r["sum"])
        for r in self._history(
            schema,
            {"h_c_w_id": w},
            {"$group": {"_id": {"d": "$h_c_d_id", "c": "$h_c_id"}, "sum": {"$sum": "$h_amount"}}},
        ):
            wh.district(r["_id"]["d"]).pay(r["_id"]["c"], _stored_cents(r["sum"]))

    def _history(self, schema: str, match: dict, group: dict) -> list[dict]:
        """HISTORY rows matching `match`, grouped: from the history collection, or unwound from
        the customers' history arrays when embedded."""
        if schema == "embedded":
            return self._aggregate("customer", embedded_rows("history", match) + [group])
        return self._aggregate("history", [{"$match": match}, group])

    def _read_orders(self, wh: WarehouseData, schema: str) -> None:
        """ORDERS (with their embedded lines' counts and delivered amount unless normalized)
        and NEW-ORDER."""
        w, session = wh.w_id, self._snapshot_session
        order_fields = {"_id": 0, "o_d_id": 1, "o_id": 1, "o_c_id": 1, "o_carrier_id": 1, "o_ol_cnt": 1}
        if schema != "normalized":
            lines = {"$ifNull": ["$order_line", []]}
            delivered = {"$filter": {"input": lines, "as": "l", "cond": {"$not": [_null("$$l.ol_delivery_d")]}}}
            source = embedded_rows("orders", {"o_w_id": w}) if schema == "embedded" else [{"$match": {"o_w_id": w}}]
            orders = self._aggregate(
                "customer" if schema == "embedded" else "orders",
                source
                + [
                    {
                        "$project": {
                            **order_fields,
                            "lines": {"$size": lines},
                            "delivered_lines": {"$size": delivered},
                            "delivered_amount": {
                                "$sum": {"$map": {"input": delivered, "as": "l", "in": "$$l.ol_amount"}}
                            },
                        }
                    }
                ],
            )
        else:
            orders = self._coll("orders").find({"o_w_id": w}, order_fields, session=session)
        for o in orders:
            dd = wh.district(o["o_d_id"])
            # an order without O_C_ID (no customer is 0) counts for no customer in condition 10
            dd.orders[o["o_id"]] = OrderRow(o.get("o_c_id", 0), o.get("o_carrier_id"), o.get("o_ol_cnt") or 0)
            if "lines" in o:
                dd.order_lines(o["o_id"]).add(
                    o["lines"], o["lines"] - o["delivered_lines"], _stored_cents(o["delivered_amount"])
                )
        for r in self._coll("new_order").find({"no_w_id": w}, {"_id": 0, "no_d_id": 1, "no_o_id": 1}, session=session):
            wh.district(r["no_d_id"]).new_orders.add(r["no_o_id"])

    def _read_order_lines_and_customers(self, wh: WarehouseData) -> None:
        """ORDER-LINE documents of the order_line collection, and the customers' balances."""
        w, session = wh.w_id, self._snapshot_session
        undated = _null("$ol_delivery_d")
        for r in self._aggregate(
            "order_line",
            [
                {"$match": {"ol_w_id": w}},
                {
                    "$group": {
                        "_id": {"d": "$ol_d_id", "o": "$ol_o_id"},
                        "n": {"$sum": 1},
                        "undelivered": {"$sum": {"$cond": [undated, 1, 0]}},
                        "amount": {"$sum": {"$cond": [undated, 0, "$ol_amount"]}},
                    }
                },
            ],
        ):
            wh.district(r["_id"]["d"]).order_lines(r["_id"]["o"]).add(
                r["n"], r["undelivered"], _stored_cents(r["amount"])
            )
        for c in self._coll("customer").find(
            {"c_w_id": w}, {"_id": 0, "c_d_id": 1, "c_id": 1, "c_balance": 1, "c_ytd_payment": 1}, session=session
        ):
            wh.district(c["c_d_id"]).customers[c["c_id"]] = CustomerRow(
                _stored_cents(c.get("c_balance")), _stored_cents(c.get("c_ytd_payment"))
            )

    def _aggregate(self, table: str, pipeline: list[dict]) -> list[dict]:
        return list(self._coll(table).aggregate(pipeline, allowDiskUse=True, session=self._snapshot_session))
