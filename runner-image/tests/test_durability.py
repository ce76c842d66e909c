"""The durability judge on its own: the ways a lost NewOrder hides, and the ledger format."""

from __future__ import annotations

import datetime as dt
import random

import pytest
from tpcc_runner.durability import (
    LedgerRecord,
    OrderIdentity,
    StoredOrder,
    acknowledged_keys,
    epoch_ms,
    from_epoch_ms,
    identity_of_new_order,
    judge,
    lines_digest,
    parse_record,
    unknown_lookups,
)
from tpcc_runner.transactions import NewOrderInput, OrderLineInput

T0 = dt.datetime(2026, 11, 23, 12, 0, 0, 123000)


def new_order(c_id: int, ms_after: int, lines: list[tuple[int, int, int]]) -> NewOrderInput:
    return NewOrderInput(
        w_id=1,
        d_id=3,
        c_id=c_id,
        o_entry_d=T0 + dt.timedelta(milliseconds=ms_after),
        items=tuple(OrderLineInput(i, s, q) for i, s, q in lines),
    )


def ack(o_id: int, params: NewOrderInput, ledger: str = "pod-0") -> LedgerRecord:
    return LedgerRecord(True, params.w_id, params.d_id, o_id, identity_of_new_order(params), ledger)


def stored_as(params: NewOrderInput) -> OrderIdentity:
    """What the database holds after committing params (as a driver would read it back)."""
    lines = tuple((it.i_id, it.supply_w_id, it.quantity) for it in params.items)
    return StoredOrder(params.c_id, params.o_entry_d, len(lines), lines).identity()


A = new_order(17, 0, [(5, 1, 3), (9, 1, 1)])
B = new_order(17, 1, [(5, 1, 3), (9, 1, 1)])  # same customer and lines, 1 ms later
C = new_order(2001, 4, [(77, 1, 10), (12, 2, 4), (3, 1, 1)])


def test_identity_is_what_the_database_stores():
    assert identity_of_new_order(A) == stored_as(A)
    assert identity_of_new_order(A) != identity_of_new_order(B)
    assert lines_digest([(5, 1, 3), (9, 1, 1)]) != lines_digest([(9, 1, 1), (5, 1, 3)])
    assert from_epoch_ms(epoch_ms(T0)) == T0
    assert epoch_ms(T0.replace(tzinfo=dt.timezone.utc)) == epoch_ms(T0)


def test_epoch_ms_of_a_naive_datetime_is_its_utc_timestamps():
    """epoch_ms reads a naive datetime as UTC without a timezone object (one per acknowledged
    NewOrder and per order read back): the same milliseconds as the UTC timestamp, so a ledger
    written by an earlier runner matches what this one reads back."""
    rng = random.Random(7)
    for _ in range(2000):
        t = dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=rng.randrange(-(10**15), 4 * 10**15))
        assert epoch_ms(t) == round(t.replace(tzinfo=dt.timezone.utc).timestamp() * 1000)


def test_every_acknowledged_order_found():
    records = [ack(3001, A), ack(3002, C)]
    v = judge(records, {(1, 3, 3001): stored_as(A), (1, 3, 3002): stored_as(C)}, {})
    assert (v.acknowledged, v.found, v.lost, v.durable) == (2, 2, 0, True)


def test_a_lost_order_whose_o_id_was_reused_is_lost_not_found():
    """The failover case: order A (o_id 3001) is rolled back with its D_NEXT_O_ID increment,
    the next NewOrder C gets o_id 3001 too and is acknowledged."""
    records = [ack(3001, A, "pod-0"), ack(3002, B, "pod-0"), ack(3001, C, "pod-0")]
    stored = {(1, 3, 3001): stored_as(C), (1, 3, 3002): stored_as(B)}
    v = judge(records, stored, {})
    assert (v.acknowledged, v.found, v.lost, v.replaced, v.missing) == (3, 2, 1, 1, 0)
    assert not v.durable
    assert v.lost_examples == [
        f"order (w=1, d=3, o_id=3001) of customer 17 entered at "
        f"{epoch_ms(A.o_entry_d)} ms (pod-0): replaced by the order of "
        f"customer 2001 entered at {epoch_ms(C.o_entry_d)} ms"
    ]


def test_a_key_acknowledged_by_two_runner_pods_is_one_lost_order():
    records = [ack(3001, A, "pod-0"), ack(3001, C, "pod-1")]
    v = judge(records, {(1, 3, 3001): stored_as(A)}, {}, ledgers=2)
    assert (v.acknowledged, v.found, v.lost, v.replaced) == (2, 1, 1, 1)
    assert "(pod-1): replaced" in v.lost_examples[0]


def test_the_same_order_acknowledged_twice_counts_once():
    records = [ack(3001, A, "pod-0"), ack(3001, A, "pod-1")]
    v = judge(records, {(1, 3, 3001): stored_as(A)}, {}, ledgers=2)
    assert (v.found, v.duplicates, v.lost) == (1, 1, 1)


def test_a_missing_order_is_lost():
    v = judge([ack(3001, A)], {}, {})
    assert (v.missing, v.lost) == (1, 1)
    assert v.lost_examples[0].endswith(": missing")


def test_unknown_outcomes_are_resolved_by_identity():
    committed = LedgerRecord(False, 1, 3, None, identity_of_new_order(A))
    not_committed = LedgerRecord(False, 1, 3, None, identity_of_new_order(C))
    # B was entered by the same customer 1 ms later: it must not make A's unknown "committed"
    entered = {
        (1, 3, 17, epoch_ms(A.o_entry_d)): [stored_as(A)],
        (1, 3, 2001, epoch_ms(C.o_entry_d)): [stored_as(new_order(2001, 4, [(77, 1, 10)]))],
    }
    assert unknown_lookups([committed, not_committed]) == sorted(entered)
    v = judge([committed, not_committed], {}, entered)
    assert (v.unknown_outcome, v.unknown_committed, v.unknown_not_committed, v.lost) == (2, 1, 1, 0)


def test_ledger_lines_round_trip_and_bad_lines_are_refused():
    records = [ack(3001, A, "f"), LedgerRecord(False, 1, 3, None, identity_of_new_order(C), "f")]
    assert [parse_record(r.line(), "f") for r in records] == records
    assert acknowledged_keys(records + records) == [(1, 3, 3001)]
    for bad in ["ack 1 3 - 17 1 2 abcd0123", "unknown 1 3 7 17 1 2 abcd0123", "ack 1 3 7", "lost 1 3 7 1 1 1 a"]:
        with pytest.raises(ValueError):
            parse_record(bad)
