"""The YCSB write ledger and its verification (`tpcc ycsb verify`).

During `tpcc ycsb load|run --ledger FILE` every acknowledged write is appended (and fsynced per
batch, tpcc_runner.ledger.LedgerWriter), one line each:
    I <key>                  an insert the database acknowledged
    U <key> <field>,...      an update (or read-modify-write) of these fields, acknowledged
    ?I <key>, ?U <key> ...   a write whose outcome is unknown (the commit's answer was lost)
The verifier reads the ledgers of a load and its runs and checks that every acknowledged insert
is there with all its fields, every acknowledged update's record has the fields it set, and
that the record count is that of the load's keys and the keys inserted since together (or up to
the unknown-outcome inserts more). It checks presence, not values: concurrent updates of a key
from several threads leave any one of their values, which the ledger's order cannot tell.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .store import KeyValueStore

MAX_EXAMPLES = 10


def ledger_line(kind: str, key: str, fields: Iterable[str] = (), known: bool = True) -> str:
    """kind: "I" or "U"."""
    line = ("" if known else "?") + f"{kind} {key}"
    return line + (" " + ",".join(sorted(fields)) if kind == "U" else "")


@dataclass
class Writes:
    inserted: set[str] = field(default_factory=set)
    updated: dict[str, set[str]] = field(default_factory=dict)
    unknown_inserts: set[str] = field(default_factory=set)
    unknown_updates: int = 0


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
            elif known:
                writes.updated.setdefault(key, set()).update(fields.split(","))
            else:
                writes.unknown_updates += 1
    writes.unknown_inserts -= writes.inserted
    return writes


def verify(store: KeyValueStore, writes: Writes, loaded: set[str], fieldcount: int) -> dict[str, Any]:
    """The verdict as JSON: durable is false if an acknowledged write is missing or the count is off.
    loaded: the keys the load inserts (whether or not its ledger is among the sources). A store
    without its table (the database came back empty) has lost every acknowledged write."""
    if not store.has_table():
        return _verdict(
            writes,
            loaded,
            0,
            [f"insert of {key}: no table" for key in sorted(writes.inserted)]
            + [f"update of {key}: no table" for key in sorted(writes.updated)],
        )
    lost: list[str] = []
    for key in sorted(writes.inserted):
        record = store.read(key, None)
        if record is None or len(record) != fieldcount:
            lost.append(f"insert of {key}: " + ("no record" if record is None else f"{len(record)} fields"))
    for key, fields in sorted(writes.updated.items()):
        record = store.read(key, tuple(sorted(fields)))
        missing = sorted(fields - set(record or {}))
        if record is None or missing:
            lost.append(f"update of {key}: " + ("no record" if record is None else f"no {','.join(missing)}"))
    return _verdict(writes, loaded, store.count_records(), lost)


def _verdict(writes: Writes, loaded: set[str], count: int, lost: list[str]) -> dict[str, Any]:
    low = len(loaded | writes.inserted)
    high = low + len(writes.unknown_inserts - loaded)
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
