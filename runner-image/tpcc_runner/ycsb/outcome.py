"""What an operation's result means, whichever way it was run (a client thread's call, or a
pipelined answer): its YCSB status and measurements (judge) and the ledger lines of its write
(written). Pure: no store, no clock."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from tpcc_contract.ycsb.measurements import NOT_FOUND, OK, UNEXPECTED_STATE

from .ledger import ledger_line
from .timeseries import SeriesThread
from .workload import INSERT, READ, READMODIFYWRITE, SCAN, UPDATE, CoreWorkload, Operation

# what a client thread draws its operations from: CoreWorkload (shared) or its own time series
ThreadWorkload = CoreWorkload | SeriesThread

# YCSB's measurement name of each operation
MEASUREMENT = {READ: "READ", UPDATE: "UPDATE", INSERT: "INSERT", SCAN: "SCAN", READMODIFYWRITE: "READ-MODIFY-WRITE"}


class Timed(NamedTuple):
    name: str
    status: str
    seconds: float
    report_status: bool = True


def _intact(workload: ThreadWorkload, key: str, fields: tuple[str, ...] | None, record: Mapping[str, bytes]) -> bool:
    """dataintegrity's check (CoreWorkload's only: TimeSeriesWorkload refuses dataintegrity)."""
    return (
        not isinstance(workload, CoreWorkload)
        or not workload.props.dataintegrity
        or workload.intact(key, fields, record)
    )


def _read_status(
    workload: ThreadWorkload, key: str, fields: tuple[str, ...] | None, record: Mapping[str, bytes] | None
) -> str:
    if record is None:
        return NOT_FOUND
    if not _intact(workload, key, fields, record):
        return UNEXPECTED_STATE
    return OK


def _scan_status(workload: ThreadWorkload, op: Operation, records: list) -> str:
    if not records:
        return NOT_FOUND
    if not all(_intact(workload, k, op.fields, r) for k, r in records):
        return UNEXPECTED_STATE
    return OK


def judge(
    workload: ThreadWorkload, op: Operation, result: Any, seconds: float, parts: tuple[float, float] | None = None
) -> tuple[str, list[Timed]]:
    """An operation's status and what to measure, from its result (KeyValueStore.apply's) and how
    long it took; a read-modify-write's read and update are measured each (parts: their seconds)
    and the whole. With dataintegrity a read whose values are not those derived from key and field
    is UNEXPECTED_STATE."""
    if op.kind == READ:
        status = _read_status(workload, op.key, op.fields, result)
    elif op.kind == UPDATE:
        status = OK if result else NOT_FOUND
    elif op.kind == INSERT:
        status = OK
    elif op.kind == SCAN:
        status = _scan_status(workload, op, result)
    else:
        record, found = result
        read = _read_status(workload, op.key, op.fields, record)
        update = OK if found else NOT_FOUND
        status = update if read == OK else read
        read_seconds, update_seconds = parts or (seconds, seconds)
        return status, [
            Timed("READ", read, read_seconds),
            Timed("UPDATE", update, update_seconds),
            Timed("READ-MODIFY-WRITE", status, seconds, report_status=False),
        ]
    return status, [Timed(MEASUREMENT[op.kind], status, seconds)]


def written(op: Operation, status: str, known: bool = True) -> list[str]:
    """The ledger lines of an operation's write that happened (or may have). A read-modify-write
    whose read failed its integrity check may still have updated the record: its write is one of
    unknown outcome, so the verifier accepts its values without counting it as acknowledged.
    An upsert INSERT (a time series' data point) replaces the record's fields as an update does."""
    if op.kind == INSERT and (status == OK or not known):
        return [
            ledger_line("U", op.key, op.written, known=known) if op.upsert else ledger_line("I", op.key, known=known)
        ]
    if op.kind in (UPDATE, READMODIFYWRITE) and (status == OK or not known):
        return [ledger_line("U", op.key, op.written, known=known)]
    if op.kind == READMODIFYWRITE and status == UNEXPECTED_STATE:
        return [ledger_line("U", op.key, op.written, known=False)]
    return []
