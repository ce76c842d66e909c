"""Creating the MongoDB schema (collections, indexes, shards) and loading the initial
database unit by unit, with the load metadata that records it."""

from __future__ import annotations

import os
import time
from collections import defaultdict
from collections.abc import Iterable
from itertools import repeat
from operator import itemgetter
from typing import Any

from bson.objectid import ObjectId

from ...schema import MONEY_COLUMNS, TABLES
from ..base import LoadMeta, NotLoaded, utcnow
from .connection import Connection, admin_errors
from .documents import (
    CUSTOMER_ORDER_INDEX,
    EMBEDDED_FIELDS,
    EMBEDDED_LINE_FIELDS,
    EMBEDDED_TABLES,
    INDEXES,
    META,
    OWNER_FIELDS,
    SHARD_KEYS,
    _cents,
)

# an order line row's values kept in the ORDERS document: those after (ol_o_id, ol_d_id, ol_w_id)
_EMBEDDED_LINE_VALUES = slice(TABLES["order_line"].index(EMBEDDED_LINE_FIELDS[0]), None)
# an order line row's (ol_w_id, ol_d_id, ol_o_id): its order's (o_w_id, o_d_id, o_id)
_ORDER_OF_LINE = itemgetter(*(TABLES["order_line"].index(c) for c in ("ol_w_id", "ol_d_id", "ol_o_id")))
# the values of an ObjectId's three-byte counter
_COUNTER_VALUES = 1 << 24


def _documents(columns: tuple[str, ...] | list[str], rows: Iterable[tuple]) -> list[dict]:
    """Rows of these columns as documents, money in cents: dict(zip(...)) over every row at C
    speed (a comprehension per field was a quarter of a MongoDB load's client CPU), then one
    pass per money column."""
    docs = list(map(dict, map(zip, repeat(columns), rows)))
    for column in MONEY_COLUMNS.intersection(columns):
        for doc in docs:
            dollars = doc[column]
            if dollars is not None:
                doc[column] = _cents(dollars)
    return docs


def with_object_ids(docs: list[dict]) -> list[dict]:
    """The documents, each with an _id such as insert_many would mint (an ObjectId: the time
    in seconds, five random bytes, a three-byte counter), minted for the whole batch: one
    ObjectId() call a document was a tenth of a MongoDB load's client CPU. The random bytes
    are drawn for each batch of up to 2**24, so batches never share an _id."""
    for first in range(0, len(docs), _COUNTER_VALUES):
        batch = docs[first : first + _COUNTER_VALUES]
        prefix = int(time.time()).to_bytes(4, "big") + os.urandom(5)
        for doc, oid in zip(batch, map(ObjectId, [prefix + n.to_bytes(3, "big") for n in range(len(batch))])):
            doc["_id"] = oid
    return docs


class Loading(Connection):
    def _tables(self) -> list[str]:
        """The collections of this schema (the others' rows are embedded in documents)."""
        return [t for t in TABLES if t not in EMBEDDED_TABLES[self.schema]]

    def _indexes(self, table: str) -> list[tuple[list[tuple[str, int]], bool]]:
        extra = [CUSTOMER_ORDER_INDEX] if self.schema == "embedded" and table == "customer" else []
        return INDEXES[table] + extra

    def create_schema(self, reset: bool) -> None:
        with admin_errors("creating the schema"):
            if reset:
                for name in list(TABLES) + [META]:
                    self._coll(name).drop()
            else:
                meta = self.read_meta()
                if meta is not None and meta.schema_variant != self.schema:
                    raise NotLoaded(
                        f"mongodb: database {self.database_name!r} holds a "
                        f"{meta.schema_variant} load; use schema={meta.schema_variant} "
                        f"or reset"
                    )
            existing = set(self.db.list_collection_names())
            # explicit creation: a transaction may not create a collection (MongoDB < 4.4)
            for name in self._tables() + [META]:
                if name not in existing:
                    self.db.create_collection(name)
            if self.topology == "sharded":
                self._shard_collections()
            for table in self._tables():
                for keys, unique in self._indexes(table):
                    self._coll(table).create_index(keys, unique=unique)

    def _shard_collections(self) -> None:
        """shardCollection on the warehouse id, hashed, before the unique indexes exist (they
        must have the shard key as prefix); repeating it with the same key is a no-op."""
        admin = self.client.admin
        admin.command("enableSharding", self.database_name)
        for table in self._tables():
            if table in SHARD_KEYS:
                admin.command("shardCollection", f"{self.database_name}.{table}", key={SHARD_KEYS[table]: "hashed"})

    def read_meta(self) -> LoadMeta | None:
        with admin_errors("reading the load metadata"):
            doc = self._coll(META).find_one({"_id": "meta"})
        if doc is None:
            return None
        try:
            return LoadMeta.from_dict(doc)
        except KeyError as e:
            raise NotLoaded(f"mongodb: load metadata in {self.database_name}.{META} lacks {e}") from None

    def write_meta(self, meta: LoadMeta) -> None:
        with admin_errors("writing the load metadata"):
            self._coll(META).replace_one({"_id": "meta"}, {"_id": "meta", **meta.to_dict()}, upsert=True)
        self._districts = meta.districts

    def done_units(self) -> set[str]:
        with admin_errors("reading the loaded units"):
            return {d["unit"] for d in self._coll(META).find({"kind": "unit"}, {"unit": 1})}

    def load_unit(self, key: str, tables: dict[str, list[tuple]]) -> None:
        unknown = set(tables) - set(TABLES)
        if unknown:
            raise ValueError(f"mongodb: unit {key}: unknown table(s) {', '.join(sorted(unknown))}")
        for t, rows in tables.items():
            widths = set(map(len, rows)) - {len(TABLES[t])}
            if widths:
                raise ValueError(
                    f"mongodb: unit {key}: a {t} row has {min(widths)} values, "
                    f"expected {len(TABLES[t])} ({', '.join(TABLES[t])})"
                )
        embed_lines = self.schema != "normalized"
        docs = {
            t: _documents(TABLES[t], rows)
            for t, rows in tables.items()
            if rows and not (embed_lines and t == "order_line")
        }
        if embed_lines and tables.get("order_line"):
            self._embed_lines(key, docs, tables["order_line"])
        if self.schema == "embedded":
            self._embed_in_customers(key, docs)
        with admin_errors(f"loading unit {key}"):
            # a crash may have left part of this unit: remove it, then insert it whole
            for table, filt in self._unit_filters(key, docs):
                self._coll(table).delete_many(filt)
            for table, documents in docs.items():
                self._coll(table).insert_many(with_object_ids(documents), ordered=False)
            self._coll(META).replace_one(
                {"_id": "unit:" + key},
                {"_id": "unit:" + key, "kind": "unit", "unit": key, "loaded_at": utcnow()},
                upsert=True,
            )

    def _embed_lines(self, key: str, docs: dict[str, list[dict]], line_rows: list[tuple]) -> None:
        """Each order's lines into its ORDERS document, made from the rows (the fields after
        the order's key, which the order holds) without a whole line's document first."""
        by_order: dict[tuple, list[dict]] = defaultdict(list)
        lines = _documents(EMBEDDED_LINE_FIELDS, map(itemgetter(_EMBEDDED_LINE_VALUES), line_rows))
        for row, line in zip(line_rows, lines):
            by_order[_ORDER_OF_LINE(row)].append(line)
        for o in docs.get("orders", []):
            o["order_line"] = sorted(
                by_order.pop((o["o_w_id"], o["o_d_id"], o["o_id"]), []), key=lambda ol: ol["ol_number"]
            )
        if by_order:
            raise ValueError(
                f"mongodb: unit {key}: order lines without their order, e.g. (w, d, o) = {next(iter(by_order))}"
            )

    @staticmethod
    def _embed_in_customers(key: str, docs: dict[str, list[dict]]) -> None:
        """The embedded schema: each ORDERS (lines embedded already) and HISTORY row moved into
        its customer's document, in O_ID / load order. A district unit carries its customers
        with their orders and history, so every row finds its customer in the same unit."""
        customers = {(c["c_w_id"], c["c_d_id"], c["c_id"]): c for c in docs.get("customer", [])}
        for customer in customers.values():
            customer["orders"], customer["history"] = [], []
        for table in ("orders", "history"):
            owner = list(OWNER_FIELDS[table])
            for row in sorted(docs.pop(table, []), key=lambda r: r.get("o_id", 0)):
                c = customers.get(tuple(row[f] for f in owner))
                if c is None:
                    raise ValueError(
                        f"mongodb: unit {key}: a {table} row of customer {tuple(row[f] for f in owner)} not in the unit"
                    )
                c[table].append({f: row[f] for f in EMBEDDED_FIELDS[table] if f in row})

    def _unit_filters(self, key: str, docs: dict[str, list[dict]]) -> list[tuple[str, dict]]:
        """Which documents belong to a unit: by the unit key where it names a warehouse or
        district, else by the keys of the rows it carries."""
        return [
            (table, filt) for table, filt in self._unit_filters_of_all_schemas(key, docs) if table in self._tables()
        ]

    def _unit_filters_of_all_schemas(self, key: str, docs: dict[str, list[dict]]) -> list[tuple[str, dict]]:
        parts = key.split(":")
        try:
            if parts[0] == "warehouse" and len(parts) == 2:
                w = int(parts[1])
                return [("warehouse", {"w_id": w}), ("district", {"d_w_id": w})]
            if parts[0] == "district" and len(parts) == 3:
                w, d = int(parts[1]), int(parts[2])
                filters: list[tuple[str, dict[str, Any]]] = [
                    ("customer", {"c_w_id": w, "c_d_id": d}),
                    ("history", {"h_c_w_id": w, "h_c_d_id": d}),
                    ("orders", {"o_w_id": w, "o_d_id": d}),
                    ("new_order", {"no_w_id": w, "no_d_id": d}),
                    ("order_line", {"ol_w_id": w, "ol_d_id": d}),
                ]
                return filters
        except ValueError:
            pass
        if parts[0] == "item":
            return [("item", {"i_id": self._ids_filter([r["i_id"] for r in docs.get("item", [])])})]
        if parts[0] == "stock" and len(parts) == 3:
            filters = []
            by_w: dict[int, list[int]] = defaultdict(list)
            for r in docs.get("stock", []):
                by_w[r["s_w_id"]].append(r["s_i_id"])
            for w, ids in by_w.items():
                filters.append(("stock", {"s_w_id": w, "s_i_id": self._ids_filter(ids)}))
            return filters
        raise ValueError(
            f"mongodb: unknown load unit key {key!r} (item:<n>, warehouse:<w>, stock:<w>:<n>, district:<w>:<d>)"
        )

    @staticmethod
    def _ids_filter(ids: list[int]) -> dict:
        lo, hi = min(ids, default=0), max(ids, default=-1)
        if len(set(ids)) == hi - lo + 1:  # contiguous: a range is exact and cheaper than $in
            return {"$gte": lo, "$lt": hi + 1}
        return {"$in": sorted(set(ids))}
