"""The durability judge: did the database keep every NewOrder it acknowledged?

Pure: the ledgers and what the database holds now go in, the verdict comes out.

Why an order's identity and not only its key: when a failover rolls back the tail of the
log, a lost NewOrder takes its D_NEXT_O_ID increment with it, so the next NewOrder of that
district gets the same O_ID within milliseconds. Looking up (w, d, o_id) would then find the
replacement and call the lost order found. So each ledger record carries what identifies the
order itself, from columns TPC-C stores anyway (no schema change on any database, and a
database loaded before this change can be verified):

- C_ID, the customer the runner chose;
- O_ENTRY_D in epoch milliseconds, the timestamp the runner wrote (both databases store it
  at millisecond precision or finer);
- O_OL_CNT and a 32-bit digest of the order lines (OL_I_ID, OL_SUPPLY_W_ID, OL_QUANTITY in
  OL_NUMBER order).

A replacement passes for the lost order only if it has the same customer, the same
millisecond and the same lines: with 3,000 customers and 5-15 random lines, never in
practice. A record is ~50 bytes of text.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .transactions import NewOrderInput

EXAMPLES = 10


@dataclass(frozen=True)
class OrderIdentity:
    c_id: int
    entry_ms: int  # O_ENTRY_D as epoch milliseconds (UTC)
    ol_cnt: int
    lines_digest: str  # 8 hex digits, see lines_digest()

    def text(self) -> str:
        return f"{self.c_id} {self.entry_ms} {self.ol_cnt} {self.lines_digest}"


def lines_digest(lines: Sequence[tuple[int, int, int]]) -> str:
    """(i_id, supply_w_id, quantity) of each line in OL_NUMBER order -> 8 hex digits."""
    text = ";".join(f"{i}:{s}:{q}" for i, s, q in lines)
    return hashlib.blake2b(text.encode("ascii"), digest_size=4).hexdigest()


_EPOCH = dt.datetime(1970, 1, 1)
_MILLISECOND = dt.timedelta(milliseconds=1)


def epoch_ms(t: dt.datetime) -> int:
    """A naive datetime is UTC (what the drivers write and read back): its distance from the
    epoch, without the timezone a timestamp() needs (one per acknowledged NewOrder)."""
    if t.tzinfo is None:
        return round((t - _EPOCH) / _MILLISECOND)
    return round(t.timestamp() * 1000)


def from_epoch_ms(ms: int) -> dt.datetime:
    """Naive UTC, as the drivers write O_ENTRY_D."""
    return _EPOCH + dt.timedelta(milliseconds=ms)


@dataclass(frozen=True)
class StoredOrder:
    """An order as the database holds it now (what a driver fetches)."""

    c_id: int
    entry_d: dt.datetime
    ol_cnt: int
    lines: tuple[tuple[int, int, int], ...]  # (i_id, supply_w_id, quantity) by OL_NUMBER

    def identity(self) -> OrderIdentity:
        return OrderIdentity(int(self.c_id), epoch_ms(self.entry_d), int(self.ol_cnt), lines_digest(self.lines))


def identity_of_new_order(p: NewOrderInput) -> OrderIdentity:
    """The identity of the order a NewOrder with these inputs writes (its lines are
    (i_id, supply_w_id, quantity) tuples already)."""
    return OrderIdentity(p.c_id, epoch_ms(p.o_entry_d), len(p.items), lines_digest(p.items))


@dataclass(frozen=True)
class LedgerRecord:
    acknowledged: bool  # False: the outcome is unknown (no o_id known)
    w_id: int
    d_id: int
    o_id: int | None
    identity: OrderIdentity
    ledger: str = ""  # which ledger (runner pod) it came from

    @property
    def key(self) -> tuple[int, int, int]:
        return (self.w_id, self.d_id, self.o_id if self.o_id is not None else -1)

    def line(self) -> str:
        kind = "ack" if self.acknowledged else "unknown"
        o = "-" if self.o_id is None else str(self.o_id)
        return f"{kind} {self.w_id} {self.d_id} {o} {self.identity.text()}"


def parse_record(line: str, ledger: str = "") -> LedgerRecord:
    parts = line.split()
    if len(parts) != 8 or parts[0] not in ("ack", "unknown"):
        raise ValueError(f"not a ledger line: {line.strip()!r}")
    kind, w, d, o, c, ms, cnt, digest = parts
    acknowledged = kind == "ack"
    if acknowledged == (o == "-"):
        raise ValueError(f"an acknowledged order has an o_id, an unknown one has none: {line.strip()!r}")
    return LedgerRecord(
        acknowledged,
        int(w),
        int(d),
        None if o == "-" else int(o),
        OrderIdentity(int(c), int(ms), int(cnt), digest),
        ledger,
    )


@dataclass
class DurabilityVerdict:
    acknowledged: int = 0
    found: int = 0
    missing: int = 0  # no order under the acknowledged key
    replaced: int = 0  # the key holds another order (its o_id was reused)
    duplicates: int = 0  # the same key acknowledged again for the same order
    unknown_outcome: int = 0
    unknown_committed: int = 0
    unknown_not_committed: int = 0
    ledgers: int = 0
    lost_examples: list[str] = field(default_factory=list)
    # the database held no TPC-C load when verified: it came back empty (VoltDB CE after every
    # node died: no command log), so nothing acknowledged is there
    database_empty: bool = False

    @property
    def lost(self) -> int:
        return self.missing + self.replaced + self.duplicates

    @property
    def durable(self) -> bool:
        return self.lost == 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "acknowledged": self.acknowledged,
            "found": self.found,
            "lost": self.lost,
            "missing": self.missing,
            "replaced": self.replaced,
            "duplicates": self.duplicates,
            "unknown_outcome": self.unknown_outcome,
            "unknown_committed": self.unknown_committed,
            "unknown_not_committed": self.unknown_not_committed,
            "ledgers": self.ledgers,
            "durable": self.durable,
            "lost_examples": self.lost_examples,
            "database_empty": self.database_empty,
        }


def acknowledged_keys(records: Iterable[LedgerRecord]) -> list[tuple[int, int, int]]:
    """The distinct keys whose stored order must be fetched."""
    return sorted({r.key for r in records if r.acknowledged})


def unknown_lookups(records: Iterable[LedgerRecord]) -> list[tuple[int, int, int, int]]:
    """(w, d, c_id, entry_ms) of each unknown-outcome order: where it would be if it committed."""
    return sorted({(r.w_id, r.d_id, r.identity.c_id, r.identity.entry_ms) for r in records if not r.acknowledged})


def judge(
    records: Sequence[LedgerRecord],
    stored: dict[tuple[int, int, int], OrderIdentity],
    entered: dict[tuple[int, int, int, int], list[OrderIdentity]],
    ledgers: int = 1,
) -> DurabilityVerdict:
    """records: every ledger of the run together. stored: the identity under each acknowledged
    key (absent: no order there). entered: the identities of the orders of (w, d, c_id,
    entry_ms) for the unknown-outcome records.

    Each acknowledged key may be claimed once: a key acknowledged twice, by one runner pod
    or by two, is at least one lost order whatever the database holds (two orders cannot
    both have committed under one key)."""
    v = DurabilityVerdict(ledgers=ledgers)
    claimed: dict[tuple[int, int, int], list[LedgerRecord]] = defaultdict(list)
    for r in records:
        if r.acknowledged:
            claimed[r.key].append(r)
        else:
            v.unknown_outcome += 1
            if r.identity in entered.get((r.w_id, r.d_id, r.identity.c_id, r.identity.entry_ms), []):
                v.unknown_committed += 1
            else:
                v.unknown_not_committed += 1
    for key in sorted(claimed):
        holder = stored.get(key)
        matched = False
        for r in claimed[key]:
            v.acknowledged += 1
            if holder is None:
                v.missing += 1
                why = "missing"
            elif r.identity != holder:
                v.replaced += 1
                why = f"replaced by the order of customer {holder.c_id} entered at {holder.entry_ms} ms"
            elif matched:
                v.duplicates += 1
                why = "acknowledged twice"
            else:
                matched = True
                v.found += 1
                continue
            if len(v.lost_examples) < EXAMPLES:
                where = f" ({r.ledger})" if r.ledger else ""
                v.lost_examples.append(
                    f"order (w={key[0]}, d={key[1]}, o_id={key[2]}) of customer "
                    f"{r.identity.c_id} entered at {r.identity.entry_ms} ms{where}: {why}"
                )
    return v
