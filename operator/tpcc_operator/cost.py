"""status.cost: a run's throughput per unit of what its machines cost per hour (spec.cost), the
figure by which the studies compared instance sizes. Pure: the spec and status in, the figure out."""

from __future__ import annotations

from typing import Any

from .regression import Figures
from .runspec import Cost


def cost_status(cost: Cost | None, figures: Figures) -> dict[str, Any] | None:
    """The price and, once the run has a throughput, throughput / price per hour; None without
    spec.cost. The throughput is the workload's (tpmC; a YCSB run's operations per second)."""
    if cost is None:
        return None
    out: dict[str, Any] = {"pricePerHour": cost.price_per_hour, "currency": cost.currency}
    if figures.throughput is not None:
        per_hour = round(figures.throughput / cost.price_per_hour, 3)
        out.update(throughputMetric=figures.metric, throughputPerPricePerHour=per_hour)
    return out
