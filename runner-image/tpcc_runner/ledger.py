"""The durability ledger: every acknowledged NewOrder (and every NewOrder whose outcome is
unknown) written as it is acknowledged; `tpcc verify-ledger` checks them against the
database afterwards."""
from __future__ import annotations

import datetime as dt
import os
from typing import Iterable, TextIO

from .drivers.base import Driver

BATCH = 1000


class LedgerWriter:
    """Appends and fsyncs each batch: the ledger must survive what the database may not."""

    def __init__(self, path: str):
        self.f: TextIO = open(path, "a", encoding="ascii")

    def write(self, entries: Iterable[tuple]) -> None:
        n = 0
        for outcome, w, d, o_id, ts in entries:
            stamp = dt.datetime.fromtimestamp(ts, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            self.f.write(f"{'ack' if outcome == 'committed' else 'unknown'} {w} {d} "
                         f"{o_id if o_id is not None else '-'} {stamp}\n")
            n += 1
        if n:
            self.f.flush()
            os.fsync(self.f.fileno())

    def close(self) -> None:
        self.f.close()


def read_ledger(path: str) -> tuple[list[tuple[int, int, int]], int]:
    """(acknowledged order keys, number of unknown-outcome NewOrders)."""
    acked, unknown = [], 0
    with open(path, encoding="ascii") as f:
        for n, line in enumerate(f, 1):
            parts = line.split()
            if len(parts) != 5 or parts[0] not in ("ack", "unknown"):
                raise ValueError(f"{path}:{n}: not a ledger line: {line.strip()!r}")
            if parts[0] == "ack":
                acked.append((int(parts[1]), int(parts[2]), int(parts[3])))
            else:
                unknown += 1
    return acked, unknown


def verify(driver: Driver, acked: list[tuple[int, int, int]], unknown: int) -> dict:
    found: set[tuple[int, int, int]] = set()
    for i in range(0, len(acked), BATCH):
        found |= driver.existing_orders(acked[i:i + BATCH])
    lost = [k for k in acked if k not in found]
    return {"acknowledged": len(acked), "found": len(acked) - len(lost), "lost": len(lost),
            "unknown_outcome": unknown, "lost_examples": [list(k) for k in lost[:10]]}
