"""Do the clients and the server agree on the work done? (the VLDB 2019 paper's 4.6.6: the
transactions the benchmark counted against the counters the database keeps). A pure judge over
ServerCounters fetched before the runner's terminals started and after they all stopped, and
what the clients counted in between (every attempt of the whole run: warmup, measured window
and the transactions that finished after it), so the load and the checks are not counted.

Tolerance: the counts should be equal; TOLERANCE_FRACTION of the clients' count (at least
TOLERANCE_MIN transactions) is allowed for a server that publishes its counters a moment after
it answers, plus every transaction of unknown outcome (the client cannot say whether it
committed). More than that is work the clients did not do (another client of the database) or
work they counted that the server did not (a lost commit)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from .server_stats import ClientCounts, CounterGroup, ServerCounters

TOLERANCE_FRACTION = 0.005
TOLERANCE_MIN = 2
TOLERANCE = (
    f"{TOLERANCE_FRACTION:.1%} of the clients' count (at least {TOLERANCE_MIN}) "
    f"plus the transactions of unknown outcome"
)
AGREE, DISAGREE, NOT_AVAILABLE = "agree", "disagree", "not-available"


@dataclass(frozen=True)
class Comparison:
    """One server counter against what the clients counted of the same transactions."""

    counter: str  # the server's counter group
    transactions: tuple[str, ...]  # the client transaction types it counts
    what: str  # "committed" or "aborted"
    client: int
    server: int
    allowed: int  # |client - server| may be up to this

    @property
    def difference(self) -> int:
        return self.server - self.client

    @property
    def agrees(self) -> bool:
        return abs(self.difference) <= self.allowed

    def to_dict(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "transactions": list(self.transactions),
            "difference": self.difference,
            "agrees": self.agrees,
        }

    def describe(self) -> str:
        return (
            f"{self.counter} {self.what}: server {self.server}, clients {self.client} "
            f"({self.difference:+d}, allowed ±{self.allowed})"
        )


@dataclass(frozen=True)
class Agreement:
    verdict: str  # AGREE, DISAGREE or NOT_AVAILABLE
    comparisons: tuple[Comparison, ...] = ()
    reason: str | None = None  # why not available, or the differences when they disagree

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "tolerance": TOLERANCE,
            "reason": self.reason,
            "comparisons": [c.to_dict() for c in self.comparisons],
        }


def allowed_difference(client: int, unknown: int) -> int:
    return max(TOLERANCE_MIN, math.ceil(TOLERANCE_FRACTION * client)) + unknown


def judge(clients: dict[str, ClientCounts], before: ServerCounters, after: ServerCounters) -> Agreement:
    """The verdict over the counters both snapshots have; not-available (with the reason) when the
    server keeps no transaction counters, or they went backwards (a restart in between)."""
    reason = before.unavailable or after.unavailable
    if reason:
        return Agreement(NOT_AVAILABLE, reason=reason)
    if [g.name for g in before.groups] != [g.name for g in after.groups] or not after.groups:
        return Agreement(
            NOT_AVAILABLE, reason="the server's counters before and after the run differ in kind (or there are none)"
        )
    comparisons: list[Comparison] = []
    for b, a in zip(before.groups, after.groups):
        if a.committed < b.committed or (a.aborted is not None and b.aborted is not None and a.aborted < b.aborted):
            return Agreement(
                NOT_AVAILABLE,
                reason=f"{a.name} went down during the run (the server restarted?): its counts cannot be compared",
            )
        comparisons.extend(_compare(clients, b, a))
    bad = [c for c in comparisons if not c.agrees]
    if bad:
        return Agreement(DISAGREE, tuple(comparisons), "; ".join(c.describe() for c in bad))
    return Agreement(AGREE, tuple(comparisons))


def _compare(clients: dict[str, ClientCounts], before: CounterGroup, after: CounterGroup) -> list[Comparison]:
    mine = [clients.get(t, ClientCounts()) for t in after.transactions]
    unknown = sum(c.unknown for c in mine)
    committed = sum(c.committed for c in mine)
    out = [
        Comparison(
            after.name,
            after.transactions,
            "committed",
            committed,
            after.committed - before.committed,
            allowed_difference(committed, unknown),
        )
    ]
    if after.aborted is not None and before.aborted is not None:
        rollbacks = sum(c.rollbacks for c in mine)
        out.append(
            Comparison(
                after.name,
                after.transactions,
                "aborted",
                rollbacks,
                after.aborted - before.aborted,
                allowed_difference(rollbacks, unknown),
            )
        )
    return out
