"""bench/commands.py's counting: which command a transaction is charged with, and the documents
read and written that a reply says, without a server."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import commands  # noqa: E402


def test_documents_read_are_the_batches_and_a_find_and_modify_value():
    assert commands.documents_read("find", {"cursor": {"firstBatch": [{}, {}, {}], "id": 7}}) == 3
    assert commands.documents_read("getMore", {"cursor": {"nextBatch": [{}, {}], "id": 0}}) == 2
    assert commands.documents_read("aggregate", {"cursor": {"firstBatch": [{"low": 4}], "id": 0}}) == 1
    assert commands.documents_read("findAndModify", {"value": {"d_next_o_id": 9}}) == 1
    assert commands.documents_read("findAndModify", {"value": None}) == 0
    assert commands.documents_read("commitTransaction", {"ok": 1}) == 0


def test_documents_written_are_the_replies_n():
    assert commands.documents_written("insert", {"n": 2}) == 2
    assert commands.documents_written("update", {"n": 5, "nModified": 4}) == 5
    assert commands.documents_written("delete", {"n": 0}) == 0
    assert commands.documents_written("findAndModify", {"lastErrorObject": {"n": 1}, "value": {}}) == 1
    assert commands.documents_written("find", {"cursor": {"firstBatch": [{}]}}) == 0


def _started(name: str):
    return SimpleNamespace(command_name=name)


def _succeeded(name: str, reply: dict):
    return SimpleNamespace(command_name=name, reply=reply)


def test_only_commands_sent_during_a_transaction_are_charged_to_its_type():
    listener = commands.TransactionCommands()
    listener.started(_started("ping"))  # outside any transaction: not counted
    with listener.during("PAYMENT"):
        listener.started(_started("find"))
        listener.succeeded(_succeeded("find", {"cursor": {"firstBatch": [{}]}}))
        listener.started(_started("update"))
        listener.succeeded(_succeeded("update", {"n": 1}))
        listener.started(_started("commitTransaction"))
        listener.succeeded(_succeeded("commitTransaction", {"ok": 1}))
    listener.started(_started("endSessions"))
    payment = listener.counts["PAYMENT"]
    assert (payment.transactions, payment.commands, payment.docs_read, payment.docs_written) == (1, 3, 1, 1)
    assert payment.by_command == {"find": 1, "update": 1, "commitTransaction": 1}
    assert all(listener.counts[t].commands == 0 for t in commands.TYPES if t != "PAYMENT")


def test_each_option_set_is_the_same_knobs_in_both_tools():
    for options in commands.OPTION_SETS:
        ours, theirs = options.ours(), options.pytpcc()
        assert ours["schema"] == options.schema
        assert theirs["denormalize"] == str(options.schema == "denormalized")
        assert ours["find_and_modify"] == str(options.find_and_modify).lower()
        assert theirs["findandmodify"] == str(options.find_and_modify)
        assert ours["batch_writes"] == str(options.batch_writes).lower()
        # py-tpcc's StockLevel never runs in a transaction, nor has it the embedded schema: no
        # such set of its own, so its figures are those of a set it has, with the same schema's
        # knobs but that one (the embedded against its normalized: the study's referenced one)
        has_it = not options.stock_level_in_transaction and options.schema != "embedded"
        assert (options.pytpcc_as is None) == has_it
        if not has_it:
            like = commands.BY_NAME[options.pytpcc_as]
            assert like.pytpcc_as is None
            assert (like.find_and_modify, like.batch_writes) == (options.find_and_modify, options.batch_writes)
    assert len(commands.BY_NAME) == len(commands.OPTION_SETS)
