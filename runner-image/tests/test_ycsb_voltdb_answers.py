"""A YCSB read's answer from VoltDB (ycsb/voltdb.py), without a server: the table a YcsbRead
returns (one row per field, as VoltDB serializes it) is the record it stands for, or None when no
row came; its rows are decoded only when someone looks at the values (dataintegrity's check, the
ledger's verification), never for a run that only asks whether the record was there."""

from __future__ import annotations

import pytest
from tpcc_contract.ycsb.properties import resolve
from tpcc_runner.drivers import voltdb as wire
from tpcc_runner.ycsb import voltdb as ycsb_voltdb
from tpcc_runner.ycsb.outcome import judge
from tpcc_runner.ycsb.workload import READ, CoreWorkload, Operation, deterministic_value

ROWS = [("field0", b"first value"), ("field1", b"second value"), ("field2", b"")]


def answer(rows: list[tuple[str, bytes]]) -> wire.Response:
    """A YcsbRead's response as decode_response leaves it: one undecoded result table."""
    table, _ = wire._read_table(wire.encode_table(ycsb_voltdb.FIELDS, rows), 0)
    return wire.Response(status=wire.SUCCESS, statusString=None, appStatus=None, tables=[table])


@pytest.fixture
def decodes(monkeypatch) -> list[int]:
    """How many tables were decoded (each call of the wire module's row decoder)."""
    calls: list[int] = []
    real = wire._decode_rows

    def counted(*args):
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(wire, "_decode_rows", counted)
    return calls


def test_a_read_answer_is_the_record_it_holds():
    record = ycsb_voltdb._read_result(answer(ROWS), None)
    assert record == dict(ROWS) and dict(ROWS) == record
    assert len(record) == 3 and sorted(record) == ["field0", "field1", "field2"]
    assert record["field1"] == b"second value" and record.get("field9") is None
    assert ycsb_voltdb._read_result(answer(ROWS), ("field1", "field9")) == {"field1": b"second value"}
    assert ycsb_voltdb._read_result(answer([]), None) is None
    assert ycsb_voltdb._read_result(answer([]), ("field0",)) is None


def test_only_the_values_asked_for_are_decoded(decodes):
    props = resolve("c", {"recordcount": "10", "fieldcount": "3"})
    op = Operation(READ, 1, "user1")
    status, _ = judge(CoreWorkload(props), op, ycsb_voltdb._read_result(answer(ROWS), None), 0.001)
    assert status == "OK" and decodes == []  # found, and nothing looked at its values

    record = ycsb_voltdb._read_result(answer(ROWS), None)
    assert record is not None and record["field0"] == b"first value" and list(record) == [f for f, _ in ROWS]
    assert decodes == [1]  # once, however often it is read


def test_dataintegrity_still_judges_the_values_that_came():
    props = resolve("c", {"recordcount": "10", "fieldcount": "2", "fieldlength": "12", "dataintegrity": "true"})
    workload, op = CoreWorkload(props), Operation(READ, 1, "user1")
    intact = [(f, deterministic_value("user1", f, 12)) for f in ("field0", "field1")]
    corrupt = [intact[0], ("field1", b"x" * 12)]
    assert judge(workload, op, ycsb_voltdb._read_result(answer(intact), None), 0.001)[0] == "OK"
    assert judge(workload, op, ycsb_voltdb._read_result(answer(corrupt), None), 0.001)[0] == "UNEXPECTED_STATE"
    assert judge(workload, op, ycsb_voltdb._read_result(answer(intact[:1]), None), 0.001)[0] == "UNEXPECTED_STATE"
    assert judge(workload, op, ycsb_voltdb._read_result(answer([]), None), 0.001)[0] == "NOT_FOUND"
