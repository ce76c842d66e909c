"""The YCSB write ledger and its verification (`tpcc ycsb verify`).

During `tpcc ycsb load|run --ledger FILE` every acknowledged write is appended (and fsynced per
batch, tpcc_runner.ledger.LedgerWriter), one line each:
    I <key>                          an insert the database acknowledged
    U <key> <field>=<digest>,...     an update (or read-modify-write) of these fields, acknowledged,
                                     with a digest of each value written (value_digest)
    ?I <key>, ?U <key> ...           a write that may have happened: its commit's answer was lost,
                                     or a read-modify-write whose read failed its integrity check
The verifier reads the ledgers of a load and its runs and checks that every acknowledged insert
is there with all its fields, that the record count is that of the load's keys and the keys
inserted since together (or up to the unknown-outcome inserts more), and that every field an
acknowledged update set holds a value some update of that field wrote (acknowledged or maybe).
Concurrent updates of a key from several threads leave any one of their values, which the
ledger's order cannot tell, so the check is membership, not the last value; but an update lost
while its record survives (the field back at the load's value, or at an older one no update
wrote) fails it. With dataintegrity every write of a field writes the same value (YCSB's
buildDeterministicValue), so there the check is presence only.

TimeSeriesWorkload's data points are upserts of their series key's record (timeseries.py says
why), so a ledger has U lines only: each series key written must be there holding the tags,
timestamp and value of one data point written to it (a data point lost while the record survives
is found only if the record falls back to one no write left there: the check is membership).
The record count is then between the keys the ledgers acknowledge and the fieldcount keys.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .store import KeyValueStore, Record

MAX_EXAMPLES = 10


def value_digest(value: bytes) -> str:
    """48 bits of a field value: two different values of one field collide once in 2^48."""
    return hashlib.blake2b(value, digest_size=6).hexdigest()


def ledger_line(kind: str, key: str, values: Record | None = None, known: bool = True) -> str:
    """kind: "I" or "U" (with the values it wrote)."""
    line = ("" if known else "?") + f"{kind} {key}"
    if kind != "U":
        return line
    return line + " " + ",".join(f"{name}={value_digest(value)}" for name, value in sorted((values or {}).items()))


@dataclass
class Writes:
    inserted: set[str] = field(default_factory=set)
    # key -> field -> digests of the values acknowledged updates wrote
    updated: dict[str, dict[str, set[str]]] = field(default_factory=dict)
    # key -> field -> digests of the values every update wrote or may have written
    possible: dict[str, dict[str, set[str]]] = field(default_factory=dict)
    unknown_inserts: set[str] = field(default_factory=set)
    unknown_updates: int = 0

    def add_update(self, key: str, fields: str, known: bool) -> None:
        """fields: the line's `name=digest,...` (a ledger written before digests: `name,...`)."""
        for written in fields.split(","):
            name, _, digest = written.partition("=")
            if known:
                self.updated.setdefault(key, {}).setdefault(name, set())
            if digest:
                self.possible.setdefault(key, {}).setdefault(name, set()).add(digest)


def parse_ledgers(sources: Mapping[str, Iterable[str]]) -> Writes:
    """sources: ledger name -> its lines."""
    writes = Writes()
    for source, lines in sources.items():
        for n, raw in enumerate(lines, 1):
            line = raw.strip()
            if not line:
                continue
            known = not line.startswith("?")
            kind, _, rest = line.lstrip("?").partition(" ")
            key, _, fields = rest.partition(" ")
            if kind not in ("I", "U") or not key or (kind == "U") != bool(fields):
                raise ValueError(f"{source}:{n}: not a YCSB ledger line: {line[:80]!r}")
            if kind == "I":
                (writes.inserted if known else writes.unknown_inserts).add(key)
            else:
                writes.add_update(key, fields, known)
                writes.unknown_updates += not known
    writes.unknown_inserts -= writes.inserted
    return writes


def verify(
    store: KeyValueStore, writes: Writes, loaded: set[str], fieldcount: int, series_keys: int | None = None
) -> dict[str, Any]:
    """The verdict as JSON: durable is false if an acknowledged write is missing or the count is off.
    loaded: the keys the load inserts (whether or not its ledger is among the sources). A store
    without its table (the database came back empty) has lost every acknowledged write.
    series_keys: TimeSeriesWorkload's fieldcount (its records are its series keys)."""
    if not store.has_table():
        return _verdict(
            writes,
            loaded,
            0,
            [f"insert of {key}: no table" for key in sorted(writes.inserted)]
            + [f"update of {key}: no table" for key in sorted(writes.updated)],
            series_keys,
        )
    lost: list[str] = []
    for key in sorted(writes.inserted):
        record = store.read(key, None)
        if record is None or len(record) != fieldcount:
            lost.append(f"insert of {key}: " + ("no record" if record is None else f"{len(record)} fields"))
    for key, fields in sorted(writes.updated.items()):
        record = store.read(key, tuple(sorted(fields)))
        if record is None:
            lost.append(f"update of {key}: no record")
        elif problems := _update_problems(record, fields, writes.possible.get(key, {})):
            lost.append(f"update of {key}: {'; '.join(problems)}")
    return _verdict(writes, loaded, store.count_records(), lost, series_keys)


def _update_problems(record: Mapping[str, bytes], fields: Iterable[str], possible: Mapping[str, set[str]]) -> list[str]:
    """What is wrong with the fields acknowledged updates set: missing, or holding a value no
    update of the field wrote (digests known: ledgers written since digests were added)."""
    problems = []
    for name in sorted(fields):
        if name not in record:
            problems.append(f"no {name}")
        elif possible.get(name) and value_digest(record[name]) not in possible[name]:
            problems.append(f"{name} holds a value no update wrote")
    return problems


def _verdict(writes: Writes, loaded: set[str], count: int, lost: list[str], series_keys: int | None) -> dict[str, Any]:
    low = len(loaded | writes.inserted)
    high = low + len(writes.unknown_inserts - loaded)
    if series_keys is not None:
        low, high = len(writes.updated), series_keys
    return {
        "durable": not lost and low <= count <= high,
        "records": count,
        "expected_records": low if low == high else [low, high],
        "acknowledged_inserts": len(writes.inserted),
        "acknowledged_updates": len(writes.updated),
        "unknown_outcome": {"inserts": len(writes.unknown_inserts), "updates": writes.unknown_updates},
        "lost": len(lost),
        "lost_examples": lost[:MAX_EXAMPLES],
    }
