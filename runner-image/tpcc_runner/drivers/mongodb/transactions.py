"""The five TPC-C transactions (clause 2) as MongoDB statements, each body run in one
transaction by Sessions._run. The bodies (_new_order, _payment, ...) take the session, so
the ACID tests (acid/mongodb.py) can run them in a transaction they hold open."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from bson.int64 import Int64
from pymongo import DeleteOne, InsertOne, ReturnDocument, UpdateMany, UpdateOne

from ...transactions import (
    DeliveryInput,
    DeliveryOutput,
    NewOrderInput,
    NewOrderOutput,
    OrderLineInput,
    OrderStatusInput,
    OrderStatusOutput,
    PaymentInput,
    PaymentOutput,
    StockLevelInput,
    StockLevelOutput,
)
from ..base import NotLoaded
from .config import READ_PREFERENCES
from .documents import EMBEDDED_FIELDS, _cents, embedded_rows
from .sessions import Sessions, _InvalidItem

# The most order lines StockLevel's last 20 orders can have (5 to 15 lines an order, clause
# 2.4.1.3): the batch size of its reads of them, so that one reply holds them all (a cursor's
# first batch is otherwise 101 documents, and the rest costs a getMore, another round trip).
LAST_20_ORDERS_LINES = 20 * 15


class Transactions(Sessions):
    def _customer(
        self, s, w_id: int, d_id: int, c_id: int | None, c_last: str | None, projection: dict[str, int]
    ) -> dict:
        cust = self._coll("customer")
        if c_id is not None:
            c = cust.find_one({"c_w_id": w_id, "c_d_id": d_id, "c_id": c_id}, projection, session=s)
            if c is None:
                raise NotLoaded(f"mongodb: no customer w_id={w_id} d_id={d_id} c_id={c_id}")
            return c
        found = list(
            cust.find({"c_w_id": w_id, "c_d_id": d_id, "c_last": c_last}, projection, session=s).sort("c_first", 1)
        )
        if not found:
            raise NotLoaded(f"mongodb: no customer w_id={w_id} d_id={d_id} c_last={c_last!r}")
        # clause 2.5.2.2: the customer at position ceil(n/2) of those sorted by c_first
        return found[(len(found) - 1) // 2]

    def _write(self, coll, ops: list, s) -> None:
        """One bulk write, or one command per operation without batch_writes."""
        if not ops:
            return
        if self.batch_writes:
            coll.bulk_write(ops, ordered=False, session=s)
        else:
            for op in ops:
                coll.bulk_write([op], session=s)

    # -- NewOrder (clause 2.4) ----------------------------------------------------------
    def new_order(self, p: NewOrderInput) -> NewOrderOutput:
        return self._run(lambda s: self._new_order(s, p))

    def _new_order(self, s, p: NewOrderInput) -> NewOrderOutput:
        w_id, d_id, c_id, lines = p.w_id, p.d_id, p.c_id, p.items
        # The warehouse and customer reads before the district's d_next_o_id write (ten
        # districts a warehouse, every NewOrder takes one): a write is held until the commit,
        # and a transaction writing the same document meanwhile fails with a write conflict and
        # is retried. The items stay after it: an unused item rolls back a NewOrder that has
        # taken its order number (clause 2.4.2.3, and isolation test 4 of clause 3.4.2.4).
        w = self._coll("warehouse").find_one({"w_id": w_id}, {"_id": 0, "w_tax": 1}, session=s)
        if w is None:
            raise NotLoaded(f"mongodb: no warehouse w_id={w_id}")
        c = self._customer(s, w_id, d_id, c_id, None, {"_id": 0, "c_discount": 1, "c_last": 1, "c_credit": 1})
        d = self._take_order_id(s, w_id, d_id)
        o_id = d["d_next_o_id"]
        items = self._ordered_items(s, w_id, d_id, lines)
        dist_col = f"s_dist_{d_id:02d}"
        stock = self._stock_of(s, lines, dist_col)
        order_lines, stock_updates = self._take_stock(w_id, lines, items, stock, dist_col)
        self._write_stock(s, stock, stock_updates)
        self._insert_order(s, p, o_id, order_lines)
        total = sum(ol["ol_amount"] for ol in order_lines)  # cents
        total_cents = round(total * (1 - c["c_discount"]) * (1 + w["w_tax"] + d["d_tax"]))
        return NewOrderOutput(o_id, total_cents / 100)

    def _take_order_id(self, s, w_id: int, d_id: int) -> dict:
        """The district's d_tax and d_next_o_id (the new order's id), d_next_o_id incremented."""
        district = self._coll("district")
        dkey = {"d_w_id": w_id, "d_id": d_id}
        if self.find_and_modify:
            d = district.find_one_and_update(
                dkey,
                {"$inc": {"d_next_o_id": 1}},
                projection={"_id": 0, "d_tax": 1, "d_next_o_id": 1},
                return_document=ReturnDocument.BEFORE,
                session=s,
            )
        else:
            d = district.find_one(dkey, {"_id": 0, "d_tax": 1, "d_next_o_id": 1}, session=s)
            if d is not None:
                district.update_one(dkey, {"$inc": {"d_next_o_id": 1}}, session=s)
        if d is None:
            raise NotLoaded(f"mongodb: no district w_id={w_id} d_id={d_id}")
        return d

    def _ordered_items(self, s, w_id: int, d_id: int, lines: tuple[OrderLineInput, ...]) -> dict[int, dict]:
        """The ITEM rows of the order by id; an unused id rolls the order back."""
        i_ids = sorted({ln.i_id for ln in lines})
        items = {
            i["i_id"]: i
            for i in self._coll("item").find(
                {"i_id": {"$in": i_ids}}, {"_id": 0, "i_id": 1, "i_price": 1, "i_name": 1, "i_data": 1}, session=s
            )
        }
        missing = [i for i in i_ids if i not in items]
        if missing:
            raise _InvalidItem(f"item {missing[0]} not found (NewOrder w_id={w_id} d_id={d_id} rolled back)")
        return items

    def _stock_of(self, s, lines: tuple[OrderLineInput, ...], dist_col: str) -> dict[tuple[int, int], dict]:
        """The STOCK rows of the order's lines by (s_w_id, s_i_id)."""
        wanted: dict[int, list[int]] = defaultdict(list)
        for ln in lines:
            wanted[ln.supply_w_id].append(ln.i_id)
        # one {eq, $in} query per supply warehouse (one in 99% of orders): an $or of them
        # costs SecantusDB a collection scan
        return {
            (st["s_w_id"], st["s_i_id"]): st
            for sw, ids in sorted(wanted.items())
            for st in self._coll("stock").find(
                {"s_w_id": sw, "s_i_id": {"$in": sorted(set(ids))}},
                {"_id": 0, "s_w_id": 1, "s_i_id": 1, "s_quantity": 1, "s_data": 1, dist_col: 1},
                session=s,
            )
        }

    @staticmethod
    def _take_stock(
        w_id: int,
        lines: tuple[OrderLineInput, ...],
        items: dict[int, dict],
        stock: dict[tuple[int, int], dict],
        dist_col: str,
    ) -> tuple[list[dict], dict[tuple[int, int], dict]]:
        """The order's ORDER-LINE documents and, per stock row, what the order takes from it;
        s_quantity is updated in `stock` itself."""
        stock_updates: dict[tuple[int, int], dict] = {}
        order_lines = []
        for number, (i_id, supply_w_id, qty) in enumerate(lines, start=1):
            key = (supply_w_id, i_id)
            st = stock.get(key)
            if st is None:
                raise NotLoaded(f"mongodb: no stock s_w_id={supply_w_id} s_i_id={i_id}")
            # clause 2.4.2.2: take qty, restocking by 91 when fewer than 10 would remain
            if st["s_quantity"] >= qty + 10:
                st["s_quantity"] -= qty
            else:
                st["s_quantity"] = st["s_quantity"] - qty + 91
            upd = stock_updates.setdefault(key, {"ytd": 0, "orders": 0, "remote": 0})
            upd["ytd"] += qty
            upd["orders"] += 1
            upd["remote"] += int(supply_w_id != w_id)
            amount = Int64(qty * items[i_id]["i_price"])
            order_lines.append(
                {
                    "ol_number": number,
                    "ol_i_id": i_id,
                    "ol_supply_w_id": supply_w_id,
                    "ol_delivery_d": None,
                    "ol_quantity": qty,
                    "ol_amount": amount,
                    "ol_dist_info": st.get(dist_col, ""),
                }
            )
        return order_lines, stock_updates

    def _write_stock(self, s, stock: dict[tuple[int, int], dict], stock_updates: dict[tuple[int, int], dict]) -> None:
        self._write(
            self._coll("stock"),
            [
                UpdateOne(
                    {"s_w_id": sw, "s_i_id": si},
                    {
                        "$set": {"s_quantity": stock[(sw, si)]["s_quantity"]},
                        "$inc": {"s_ytd": u["ytd"], "s_order_cnt": u["orders"], "s_remote_cnt": u["remote"]},
                    },
                )
                for (sw, si), u in stock_updates.items()
            ],
            s,
        )

    def _insert_order(self, s, p: NewOrderInput, o_id: int, order_lines: list[dict]) -> None:
        """The ORDERS document (with its lines when denormalized; pushed onto its customer's
        orders when embedded), its ORDER-LINEs and its NEW-ORDER."""
        w_id, d_id = p.w_id, p.d_id
        order = {
            "o_id": o_id,
            "o_d_id": d_id,
            "o_w_id": w_id,
            "o_c_id": p.c_id,
            "o_entry_d": p.o_entry_d,
            "o_carrier_id": None,
            "o_ol_cnt": len(p.items),
            "o_all_local": int(not p.remote),
        }
        if self.schema == "embedded":
            order["order_line"] = order_lines
            self._coll("customer").update_one(
                {"c_w_id": w_id, "c_d_id": d_id, "c_id": p.c_id},
                {"$push": {"orders": {f: order[f] for f in EMBEDDED_FIELDS["orders"]}}},
                session=s,
            )
        elif self.schema == "denormalized":
            order["order_line"] = order_lines
        else:
            self._write(
                self._coll("order_line"),
                [InsertOne({"ol_o_id": o_id, "ol_d_id": d_id, "ol_w_id": w_id, **ol}) for ol in order_lines],
                s,
            )
        if self.schema != "embedded":
            self._coll("orders").insert_one(order, session=s)
        self._coll("new_order").insert_one({"no_o_id": o_id, "no_d_id": d_id, "no_w_id": w_id}, session=s)

    # -- Payment (clause 2.5) -----------------------------------------------------------
    def payment(self, p: PaymentInput) -> PaymentOutput:
        return self._run(lambda s: self._payment(s, p))

    def _payment(self, s, p: PaymentInput) -> PaymentOutput:
        w_id, d_id, c_w_id, c_d_id, amount = p.w_id, p.d_id, p.c_w_id, p.c_d_id, _cents(p.h_amount)
        # The customer first, the district and then the warehouse (every Payment of the
        # warehouse writes it) last but the history: their writes are held until the commit,
        # so as late as they can be (see _new_order). Payment cannot roll back, so the order
        # changes no outcome.
        c = self._customer(
            s,
            c_w_id,
            c_d_id,
            p.c_id,
            p.c_last,
            {"_id": 0, "c_id": 1, "c_credit": 1, "c_data": 1, "c_balance": 1},
        )
        c_id = c["c_id"]
        update: dict[str, Any] = {"$inc": {"c_balance": Int64(-amount), "c_ytd_payment": amount, "c_payment_cnt": 1}}
        if c["c_credit"] == "BC":  # clause 2.5.2.2: history prepended to C_DATA, 500 chars max
            entry = f"{c_id} {c_d_id} {c_w_id} {d_id} {w_id} {amount / 100:.2f} "
            update["$set"] = {"c_data": (entry + c["c_data"])[:500]}
        customer_key = {"c_w_id": c_w_id, "c_d_id": c_d_id, "c_id": c_id}
        if self.schema != "embedded":
            self._coll("customer").update_one(customer_key, update, session=s)
        d = self._inc_and_read("district", {"d_w_id": w_id, "d_id": d_id}, "d_ytd", amount, ["d_name"], s)
        w = self._inc_and_read("warehouse", {"w_id": w_id}, "w_ytd", amount, ["w_name"], s)
        history = {
            "h_d_id": d_id,
            "h_w_id": w_id,
            "h_date": p.h_date,
            "h_amount": amount,
            "h_data": f"{w['w_name']}    {d['d_name']}",
        }
        if self.schema == "embedded":  # the history goes inside the customer's document
            update["$push"] = {"history": history}
            self._coll("customer").update_one(customer_key, update, session=s)
        else:
            self._coll("history").insert_one(
                {"h_c_id": c_id, "h_c_d_id": c_d_id, "h_c_w_id": c_w_id, **history}, session=s
            )
        return PaymentOutput(c_id, (c["c_balance"] - amount) / 100, c["c_credit"])

    def _inc_and_read(self, table: str, key: dict, field: str, amount: Int64, read: list[str], s) -> dict:
        coll, projection = self._coll(table), {"_id": 0, **{f: 1 for f in read}}
        if self.find_and_modify:
            doc = coll.find_one_and_update(key, {"$inc": {field: amount}}, projection=projection, session=s)
        else:
            doc = coll.find_one(key, projection, session=s)
            if doc is not None:
                coll.update_one(key, {"$inc": {field: amount}}, session=s)
        if doc is None:
            raise NotLoaded(f"mongodb: no {table} {key}")
        return doc

    # -- OrderStatus (clause 2.6) -------------------------------------------------------
    def order_status(self, p: OrderStatusInput) -> OrderStatusOutput:
        return self._run(lambda s: self._order_status(s, p))

    def _order_status(self, s, p: OrderStatusInput) -> OrderStatusOutput:
        w_id, d_id = p.w_id, p.d_id
        c = self._customer(
            s,
            w_id,
            d_id,
            p.c_id,
            p.c_last,
            {"_id": 0, "c_id": 1, "c_first": 1, "c_middle": 1, "c_last": 1, "c_balance": 1},
        )
        o = self._last_order(s, w_id, d_id, c["c_id"])
        if o is None:
            return OrderStatusOutput(c["c_id"], c["c_balance"] / 100, None, None, 0)
        if self.schema != "normalized":
            lines = o.get("order_line", [])
        else:
            lines = list(
                self._coll("order_line").find(
                    {"ol_w_id": w_id, "ol_d_id": d_id, "ol_o_id": o["o_id"]},
                    {"_id": 0, "ol_i_id": 1, "ol_supply_w_id": 1, "ol_quantity": 1, "ol_amount": 1, "ol_delivery_d": 1},
                    session=s,
                )
            )
        return OrderStatusOutput(c["c_id"], c["c_balance"] / 100, o["o_id"], o.get("o_carrier_id"), len(lines))

    def _last_order(self, s, w_id: int, d_id: int, c_id: int) -> dict | None:
        """The customer's order with the highest O_ID (with its lines unless normalized). When
        embedded it is read from the customer's document: its whole orders array, as a push
        order cannot be relied on without transactions (two NewOrders of one customer may
        commit out of O_ID order)."""
        if self.schema == "embedded":
            doc = self._coll("customer").find_one(
                {"c_w_id": w_id, "c_d_id": d_id, "c_id": c_id}, {"_id": 0, "orders": 1}, session=s
            )
            orders = (doc or {}).get("orders") or []
            return max(orders, key=lambda o: o["o_id"]) if orders else None
        projection = {"_id": 0, "o_id": 1, "o_entry_d": 1, "o_carrier_id": 1}
        if self.schema == "denormalized":
            projection["order_line"] = 1
        last = list(
            self._coll("orders")
            .find({"o_w_id": w_id, "o_d_id": d_id, "o_c_id": c_id}, projection, session=s)
            .sort("o_id", -1)
            .limit(1)
        )
        return last[0] if last else None

    # -- Delivery (clause 2.7), all districts in one transaction as in the paper --------
    def delivery(self, p: DeliveryInput) -> DeliveryOutput:
        if self._districts is None:
            meta = self.read_meta()
            self._districts = meta.districts if meta else 10
        return self._run(lambda s: self._delivery(s, p))

    def _delivery(self, s, p: DeliveryInput) -> DeliveryOutput:
        assert self._districts is not None, "read from the load by delivery() (and by the ACID tests)"
        w_id = p.w_id
        delivered, skipped = [], 0
        # the writes of every district, one bulk write per collection at the end
        writes: dict[str, list] = {"new_order": [], "orders": [], "order_line": [], "customer": []}
        for d_id in range(1, self._districts + 1):
            o_id = self._take_new_order(s, w_id, d_id, writes)
            if o_id is None:
                skipped += 1  # clause 2.7.4.2: no undelivered order in this district
                continue
            if self.schema == "embedded":
                self._deliver_embedded(s, w_id, d_id, o_id, p, writes)
            else:
                self._deliver_order(s, w_id, d_id, o_id, p, writes)
            delivered.append((d_id, o_id))
        for table, ops in writes.items():
            self._write(self._coll(table), ops, s)
        return DeliveryOutput(tuple(delivered), skipped)

    def _take_new_order(self, s, w_id: int, d_id: int, writes: dict[str, list]) -> int | None:
        """The district's oldest NEW-ORDER's O_ID, that row deleted (or its delete queued)."""
        new_order, no_key = self._coll("new_order"), {"no_w_id": w_id, "no_d_id": d_id}
        if self.find_and_modify:
            no = new_order.find_one_and_delete(
                no_key, projection={"_id": 0, "no_o_id": 1}, sort=[("no_o_id", 1)], session=s
            )
        else:
            found = list(new_order.find(no_key, {"_id": 0, "no_o_id": 1}, session=s).sort("no_o_id", 1).limit(1))
            no = found[0] if found else None
            if no is not None:
                writes["new_order"].append(DeleteOne({**no_key, "no_o_id": no["no_o_id"]}))
        return None if no is None else no["no_o_id"]

    def _deliver_order(self, s, w_id: int, d_id: int, o_id: int, p: DeliveryInput, writes: dict[str, list]) -> None:
        """Normalized or denormalized: the ORDERS document's carrier (and embedded lines'
        delivery date), the ORDER-LINEs' dates and the customer's balance."""
        when, denorm = p.ol_delivery_d, self.schema == "denormalized"
        o_key = {"o_w_id": w_id, "o_d_id": d_id, "o_id": o_id}
        o_set: dict[str, Any] = {"o_carrier_id": p.o_carrier_id}
        projection = {"_id": 0, "o_c_id": 1}
        if denorm:
            o_set["order_line.$[].ol_delivery_d"] = when
            projection["order_line"] = 1
        orders = self._coll("orders")
        if self.find_and_modify:
            o = orders.find_one_and_update(o_key, {"$set": o_set}, projection=projection, session=s)
        else:
            o = orders.find_one(o_key, projection, session=s)
            writes["orders"].append(UpdateOne(o_key, {"$set": o_set}))
        if o is None:
            raise NotLoaded(f"mongodb: new order without order w_id={w_id} d_id={d_id} o_id={o_id}")
        if denorm:
            amounts = [ol["ol_amount"] for ol in o.get("order_line", [])]
        else:
            ol_key = {"ol_w_id": w_id, "ol_d_id": d_id, "ol_o_id": o_id}
            amounts = [
                ol["ol_amount"] for ol in self._coll("order_line").find(ol_key, {"_id": 0, "ol_amount": 1}, session=s)
            ]
            writes["order_line"].append(UpdateMany(ol_key, {"$set": {"ol_delivery_d": when}}))
        writes["customer"].append(
            UpdateOne(
                {"c_w_id": w_id, "c_d_id": d_id, "c_id": o["o_c_id"]},
                {"$inc": {"c_balance": Int64(sum(amounts)), "c_delivery_cnt": 1}},
            )
        )

    def _deliver_embedded(self, s, w_id: int, d_id: int, o_id: int, p: DeliveryInput, writes: dict[str, list]) -> None:
        """Embedded: the customer holding order o_id is found by it (index on c_w_id, c_d_id,
        orders.o_id), and one update of that document sets the order's carrier and its lines'
        delivery date (arrayFilters) and adds their amounts to the balance. The amounts are
        read first, so find_and_modify does not apply here."""
        c_key = {"c_w_id": w_id, "c_d_id": d_id}
        c = self._coll("customer").find_one(
            {**c_key, "orders.o_id": o_id}, {"_id": 0, "c_id": 1, "orders": {"$elemMatch": {"o_id": o_id}}}, session=s
        )
        if c is None or not c.get("orders"):
            raise NotLoaded(f"mongodb: new order without order w_id={w_id} d_id={d_id} o_id={o_id}")
        amounts = [ol["ol_amount"] for ol in c["orders"][0].get("order_line") or []]
        writes["customer"].append(
            UpdateOne(
                {**c_key, "c_id": c["c_id"]},
                {
                    "$set": {
                        "orders.$[o].o_carrier_id": p.o_carrier_id,
                        "orders.$[o].order_line.$[].ol_delivery_d": p.ol_delivery_d,
                    },
                    "$inc": {"c_balance": Int64(sum(amounts)), "c_delivery_cnt": 1},
                },
                array_filters=[{"o.o_id": o_id}],
            )
        )

    # -- StockLevel (clause 2.8) --------------------------------------------------------
    def stock_level(self, p: StockLevelInput) -> StockLevelOutput:
        return self._run(lambda s: self._stock_level(s, p), in_transaction=self.stock_level_in_transaction)

    def _stock_reader(self, name: str):
        """A collection for StockLevel (inside a transaction pymongo reads the primary
        whatever this says)."""
        coll = self._coll(name)
        if self.read_preference == "primary":
            return coll  # the database's own read preference
        return coll.with_options(read_preference=READ_PREFERENCES[self.read_preference])

    def _stock_level(self, s, p: StockLevelInput) -> StockLevelOutput:
        w_id, d_id = p.w_id, p.d_id
        d = self._stock_reader("district").find_one(
            {"d_w_id": w_id, "d_id": d_id}, {"_id": 0, "d_next_o_id": 1}, session=s
        )
        if d is None:
            raise NotLoaded(f"mongodb: no district w_id={w_id} d_id={d_id}")
        nxt = d["d_next_o_id"]
        last20 = {"$gte": nxt - 20, "$lt": nxt}
        if self.schema == "embedded":
            i_ids = self._recent_items_embedded(s, w_id, d_id, last20)
        elif self.schema == "denormalized":
            i_ids = {
                ol["ol_i_id"]
                for o in self._stock_reader("orders").find(
                    {"o_w_id": w_id, "o_d_id": d_id, "o_id": last20}, {"_id": 0, "order_line.ol_i_id": 1}, session=s
                )
                for ol in o.get("order_line", [])
            }
        else:
            i_ids = {
                ol["ol_i_id"]
                for ol in self._stock_reader("order_line").find(
                    {"ol_w_id": w_id, "ol_d_id": d_id, "ol_o_id": last20},
                    {"_id": 0, "ol_i_id": 1},
                    batch_size=LAST_20_ORDERS_LINES,
                    session=s,
                )
            }
        if not i_ids:
            return StockLevelOutput(0)
        # Counted by the server, one document back (as py-tpcc's count), not the ~200 stock
        # documents a find returned, the last of them in a second round trip (getMore). The
        # threshold is a $match of its own after the key's: in one $match with the $in,
        # SecantusDB's planner drops the (s_w_id, s_i_id) index; MongoDB merges the two.
        pipeline = [
            {"$match": {"s_w_id": w_id, "s_i_id": {"$in": sorted(i_ids)}}},
            {"$match": {"s_quantity": {"$lt": p.threshold}}},
            {"$group": {"_id": None, "low": {"$sum": 1}}},
        ]
        counted = list(self._stock_reader("stock").aggregate(pipeline, session=s))
        return StockLevelOutput(counted[0]["low"] if counted else 0)

    def _recent_items_embedded(self, s, w_id: int, d_id: int, last20: dict) -> set[int]:
        """The item ids of the district's last 20 orders when orders live in their customers:
        an aggregation that selects the customers holding one of them (the c_w_id, c_d_id,
        orders.o_id index), unwinds their orders and lines and groups by item. This is the
        embedded schema's known cost: a district's recent orders are spread over up to 20
        customer documents, each read whole by the server, where the other schemas read one
        range of an orders/order_line index."""
        pipeline = embedded_rows("orders", {"o_w_id": w_id, "o_d_id": d_id, "o_id": last20}) + [
            {"$unwind": "$order_line"},
            {"$group": {"_id": "$order_line.ol_i_id"}},
        ]
        customers = self._stock_reader("customer")
        return {r["_id"] for r in customers.aggregate(pipeline, batchSize=LAST_20_ORDERS_LINES, session=s)}

    # -- verification ------------------------------------------------------------------
