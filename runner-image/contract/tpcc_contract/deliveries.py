"""Condition 11's independent count (TPC-C clause 3.3.2.11): the orders each runner pod saw
delivered since the load, as its results document carries them and a merge of several pods'
documents adds them up for the consistency check."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class RunDeliveries:
    """Orders delivered since the load, as the runners saw them: acknowledged deliveries per
    (W_ID, D_ID), and per warehouse the Delivery transactions whose outcome is unknown (each
    may have delivered one order in every district of its warehouse)."""

    delivered: dict[tuple[int, int], int] = field(default_factory=dict)
    unknown_outcome: dict[int, int] = field(default_factory=dict)

    def expected(self, w: int, d: int) -> tuple[int, int]:
        """(fewest, most) orders of the district delivered since the load."""
        low = self.delivered.get((w, d), 0)
        return low, low + self.unknown_outcome.get(w, 0)

    def record(self, w: int, districts: list[int] | None) -> None:
        """One Delivery of warehouse w: the districts it delivered, or None if its outcome is
        unknown."""
        if districts is None:
            self.unknown_outcome[w] = self.unknown_outcome.get(w, 0) + 1
        for d in districts or ():
            self.delivered[(w, d)] = self.delivered.get((w, d), 0) + 1

    def merge(self, other: RunDeliveries) -> None:
        for k, n in other.delivered.items():
            self.delivered[k] = self.delivered.get(k, 0) + n
        for w, n in other.unknown_outcome.items():
            self.unknown_outcome[w] = self.unknown_outcome.get(w, 0) + n

    def to_json(self) -> dict[str, dict[str, int]]:
        """The form from_json reads (and a results document carries)."""
        return {
            "deliveries": {f"{w}:{d}": n for (w, d), n in sorted(self.delivered.items())},
            "deliveries_unknown_outcome": {str(w): n for w, n in sorted(self.unknown_outcome.items())},
        }

    @classmethod
    def from_json(cls, doc: Any, source: str = "deliveries") -> RunDeliveries:
        """{"deliveries": {"W:D": n, ...}, "deliveries_unknown_outcome": {"W": n, ...}}, as in a
        runner's results document; ValueError (one line) on anything else."""

        def count(v: Any, where: str) -> int:
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"{source}: {where} must be a count >= 0, got {v!r}")
            return v

        def ids(key: str, parts: int) -> tuple[int, ...]:
            try:
                out = tuple(int(p) for p in str(key).split(":"))
            except ValueError:
                out = ()
            if len(out) != parts or min(out) < 1:
                want = "W:D" if parts == 2 else "W"
                raise ValueError(f"{source}: bad key {key!r} (want {want} with ids >= 1)")
            return out

        def district(key: str) -> tuple[int, int]:
            w_id, d_id = ids(key, 2)
            return w_id, d_id

        if not isinstance(doc, dict) or not isinstance(doc.get("deliveries"), dict):
            raise ValueError(f'{source}: want a JSON object with "deliveries": {{"W:D": count}}')
        unknown = doc.get("deliveries_unknown_outcome", {})
        if not isinstance(unknown, dict):
            raise ValueError(f'{source}: "deliveries_unknown_outcome" must map "W" to a count')
        return cls(
            delivered={district(k): count(v, f"deliveries[{k!r}]") for k, v in doc["deliveries"].items()},
            unknown_outcome={ids(k, 1)[0]: count(v, f"deliveries_unknown_outcome[{k!r}]") for k, v in unknown.items()},
        )
