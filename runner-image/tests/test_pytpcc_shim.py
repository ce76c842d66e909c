"""bench/pytpcc_shim.py, the shim between py-tpcc and SecantusDB: what py-tpcc asks reaches the
server in the shapes SecantusDB serves from an index, with the same answers."""

from __future__ import annotations

import sys
from pathlib import Path

import pymongo
import pytest
from pymongo import monitoring
from pymongo.collection import Collection
from secantus_server import secantus  # noqa: F401  (pytest fixture)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import pytpcc_shim  # noqa: E402

STOCK_LEVEL = {"S_W_ID": 1, "S_I_ID": {"$in": [3, 5, 8, 13]}, "S_QUANTITY": {"$lt": 15}}


def test_comment_leaves_the_filter_and_the_callers_dict_is_untouched():
    spec = {"D_ID": 3, "$comment": "NEW_ORDER"}
    assert pytpcc_shim.split_comment(spec) == ({"D_ID": 3}, "NEW_ORDER")
    assert spec == {"D_ID": 3, "$comment": "NEW_ORDER"}
    assert pytpcc_shim.split_comment({"D_ID": 3}) == ({"D_ID": 3}, None)


def test_in_beside_a_range_is_split_and_nothing_else_is():
    assert pytpcc_shim.split_in_and_range(STOCK_LEVEL) == (
        {"S_W_ID": 1, "S_I_ID": {"$in": [3, 5, 8, 13]}},
        {"S_QUANTITY": {"$lt": 15}},
    )
    assert pytpcc_shim.split_in_and_range({"S_W_ID": 1, "S_I_ID": {"$in": [3]}}) is None
    assert pytpcc_shim.split_in_and_range({"S_W_ID": 1, "S_QUANTITY": {"$lt": 15}}) is None
    assert pytpcc_shim.split_in_and_range({"$or": [{"a": 1}], "S_I_ID": {"$in": [3]}, "q": {"$lt": 1}}) is None


class _Commands(monitoring.CommandListener):
    def __init__(self):
        self.sent = []

    def started(self, event):
        self.sent.append(event.command)

    def succeeded(self, event):
        pass

    def failed(self, event):
        pass


@pytest.mark.db
def test_with_the_shim_the_server_gets_comments_as_fields_and_two_match_stages(secantus, monkeypatch):  # noqa: F811
    listener = _Commands()
    client = pymongo.MongoClient(secantus.endpoint, directConnection=True, event_listeners=[listener])
    stock = client.pytpcc_shim_test.STOCK
    stock.drop()
    stock.create_index([("S_W_ID", 1), ("S_I_ID", 1)], unique=True)
    stock.insert_many([{"S_W_ID": 1, "S_I_ID": i, "S_QUANTITY": 10 + i % 20} for i in range(1, 40)])
    plain = stock.count_documents(STOCK_LEVEL)
    for name in pytpcc_shim.PATCHED:  # restored after the test
        monkeypatch.setattr(Collection, name, getattr(Collection, name))
    pytpcc_shim.install()
    listener.sent.clear()

    # quantities of items 3, 5, 8, 13: 13, 15, 18, 23; one under 15
    assert stock.count_documents({**STOCK_LEVEL, "$comment": "STOCK_LEVEL"}) == plain == 1
    assert stock.find_one({"S_W_ID": 1, "S_I_ID": 5, "$comment": "NEW_ORDER"})["S_QUANTITY"] == 15
    stock.bulk_write(
        [pymongo.UpdateOne({"S_W_ID": 1, "S_I_ID": 5, "$comment": "NEW_ORDER"}, {"$inc": {"S_QUANTITY": 1}})]
    )
    assert stock.find_one({"S_I_ID": 5})["S_QUANTITY"] == 16

    count, find, bulk = [c for c in listener.sent if {"aggregate", "find", "update"} & set(c)][:3]
    assert count["pipeline"][:2] == [
        {"$match": {"S_W_ID": 1, "S_I_ID": {"$in": [3, 5, 8, 13]}}},
        {"$match": {"S_QUANTITY": {"$lt": 15}}},
    ]
    assert (count["comment"], find["comment"], bulk["comment"]) == ("STOCK_LEVEL", "NEW_ORDER", "NEW_ORDER")
    assert "$comment" not in find["filter"] and "$comment" not in bulk["updates"][0]["q"]
    client.drop_database("pytpcc_shim_test")
    client.close()
