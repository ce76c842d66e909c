"""status.cost: a run's throughput per unit of what its machines cost per hour (spec.cost), the
figure by which the studies compared instance sizes. Pure: the spec and status in, the figure out."""

from __future__ import annotations

from typing import Any

from .runspec import Cost


def cost_status(cost: Cost | None, status: dict[str, Any]) -> dict[str, Any] | None:
    """The price and, once the run has a throughput, throughput / price per hour; None without
    spec.cost. A YCSB run divides its operations per second, a TPC-C run its tpmC."""
    if cost is None:
        return None
    out: dict[str, Any] = {"pricePerHour": cost.price_per_hour, "currency": cost.currency}
    ops = (status.get("ycsb") or {}).get("opsPerSecond")
    tpmc = (status.get("results") or {}).get("tpmC")
    metric, value = ("opsPerSecond", ops) if ops is not None else ("tpmC", tpmc)
    if value is not None:
        out.update(throughputMetric=metric, throughputPerPricePerHour=round(value / cost.price_per_hour, 3))
    return out
