"""status.cost: a run's throughput per unit of what its machines cost per hour (spec.cost), the
figure by which the studies compared instance sizes. Pure: the spec and status in, the figure out."""

from __future__ import annotations

from dataclasses import dataclass

from .jsonmodel import JsonModel
from .regression import Figures
from .runspec import Cost


@dataclass(frozen=True)
class CostFigure(JsonModel):
    """status.cost (and a BenchmarkResult's spec.cost): the price, and once the run has a
    throughput, which metric and that throughput per price per hour."""

    price_per_hour: float
    currency: str
    throughput_metric: str | None = None  # tpmC | opsPerSecond
    throughput_per_price_per_hour: float | None = None


def cost_status(cost: Cost | None, figures: Figures) -> CostFigure | None:
    """The price and, once the run has a throughput, throughput / price per hour; None without
    spec.cost. The throughput is the workload's (tpmC; a YCSB run's operations per second)."""
    if cost is None:
        return None
    if figures.throughput is None:
        return CostFigure(cost.price_per_hour, cost.currency)
    per_hour = round(figures.throughput / cost.price_per_hour, 3)
    return CostFigure(cost.price_per_hour, cost.currency, figures.metric, per_hour)
