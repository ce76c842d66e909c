"""What a database counts about itself, as the drivers fetch it (Driver.server_counters,
Driver.database_size), and what the clients counted over the same stretch of time. Models
only: drivers fetch them, server_agreement.judge decides whether the two agree."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

CLIENT_OUTCOMES = ("committed", "rollbacks", "errors", "unknown")


@dataclass(frozen=True)
class CounterGroup:
    """A server counter of transactions and the client transaction types whose work it counts
    (VoltDB: the procedures implementing one type; MongoDB: serverStatus.transactions, every
    type that runs in a multi-document transaction)."""

    name: str
    transactions: tuple[str, ...]
    committed: int
    # Transactions the server rolled back on the application's request, comparable with the
    # clients' rollbacks; None where the server's count mixes in other aborts (write conflicts).
    aborted: int | None

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CounterGroup:
        return cls(
            str(d["name"]),
            tuple(d["transactions"]),
            int(d["committed"]),
            None if d.get("aborted") is None else int(d["aborted"]),
        )


@dataclass(frozen=True)
class ServerCounters:
    """The database's cumulative counters at one instant (taken_at, epoch seconds)."""

    taken_at: float
    groups: tuple[CounterGroup, ...] = ()
    counters: dict[str, int] = field(default_factory=dict)  # every counter fetched, by the server's names
    unavailable: str | None = None  # why the server's transaction counts cannot be had

    @classmethod
    def not_available(cls, reason: str, counters: dict[str, int] | None = None) -> ServerCounters:
        return cls(time.time(), (), dict(counters or {}), reason)

    def to_dict(self) -> dict[str, Any]:
        return {
            "taken_at": round(self.taken_at, 3),
            "groups": [asdict(g) for g in self.groups],
            "counters": dict(self.counters),
            "unavailable": self.unavailable,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ServerCounters:
        return cls(
            float(d["taken_at"]),
            tuple(CounterGroup.from_dict(g) for g in d["groups"]),
            {k: int(v) for k, v in d["counters"].items()},
            d.get("unavailable"),
        )


def counter_deltas(before: ServerCounters, after: ServerCounters) -> dict[str, int]:
    """What the server counted between the two instants. A counter the server did not list
    before was zero then (VoltDB lists a procedure once it has been invoked); with no counters
    at all before, there is nothing to subtract from."""
    if not before.counters:
        return {}
    return {k: v - before.counters.get(k, 0) for k, v in sorted(after.counters.items())}


def earliest(snapshots: list[ServerCounters]) -> ServerCounters:
    """Runner pods each took counters before their terminals started: cumulative counters only
    grow, so the least of each is the value at the earliest instant (all pods' work after it)."""
    return _combine(snapshots, min)


def latest(snapshots: list[ServerCounters]) -> ServerCounters:
    """The greatest of each counter: its value at the latest instant, after every pod stopped."""
    return _combine(snapshots, max)


def _combine(snapshots: list[ServerCounters], pick) -> ServerCounters:
    missing = next((s.unavailable for s in snapshots if s.unavailable), None)
    if missing:
        return ServerCounters.not_available(missing)
    first = snapshots[0]
    names = [g.name for g in first.groups]
    if any([g.name for g in s.groups] != names for s in snapshots):
        return ServerCounters.not_available("the runner pods fetched different server counters")
    groups = tuple(
        CounterGroup(
            g.name,
            g.transactions,
            pick(s.groups[i].committed for s in snapshots),
            None
            if any(s.groups[i].aborted is None for s in snapshots)
            else pick(s.groups[i].aborted for s in snapshots),
        )
        for i, g in enumerate(first.groups)
    )
    keys = set.union(*(set(s.counters) for s in snapshots))  # a counter not listed yet was zero
    return ServerCounters(
        pick(s.taken_at for s in snapshots),
        groups,
        {k: pick(s.counters.get(k, 0) for s in snapshots) for k in sorted(keys)},
    )


@dataclass(frozen=True)
class DatabaseSize:
    """How big the database is and how much memory it uses, in bytes, as the server reports
    (None: the server does not say; `unavailable` says why when nothing could be had)."""

    data_bytes: int | None = None  # row/document data
    index_bytes: int | None = None
    storage_bytes: int | None = None  # on disk (MongoDB storageSize)
    memory_bytes: int | None = None  # resident memory of the server processes (VoltDB RSS)
    details: dict[str, int] = field(default_factory=dict)  # the server's own figures, by its names
    unavailable: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> DatabaseSize:
        return cls(
            **{k: d.get(k) for k in ("data_bytes", "index_bytes", "storage_bytes", "memory_bytes", "unavailable")},
            details=dict(d.get("details") or {}),
        )


@dataclass
class ClientCounts:
    """What the clients counted of one transaction type over the whole run (warmup, measured
    window and the transactions that finished after it), every attempt included."""

    committed: int = 0
    rollbacks: int = 0
    errors: int = 0
    unknown: int = 0
    retries: int = 0

    def add_report(self, counts: dict[str, int], retries: int) -> None:
        for k in CLIENT_OUTCOMES:
            setattr(self, k, getattr(self, k) + int(counts[k]))
        self.retries += int(retries)

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


def client_counts_from(d: dict[str, Any]) -> dict[str, ClientCounts]:
    return {t: ClientCounts(**{k: int(v) for k, v in counts.items()}) for t, counts in d.items()}


def summed_client_counts(many: list[dict[str, ClientCounts]]) -> dict[str, ClientCounts]:
    total: dict[str, ClientCounts] = {}
    for counts in many:
        for t, c in counts.items():
            total.setdefault(t, ClientCounts()).add_report(c.to_dict(), c.retries)
    return total
