"""What both sides of a TPC-C run call things and judge them by: the five transaction types as a
results document names them, clause 5.2.5.3's response-time limits and clause 5.4.1's efficiency."""

from __future__ import annotations

from typing import Any

NEW_ORDER, PAYMENT, ORDER_STATUS, DELIVERY, STOCK_LEVEL = (
    "NEW_ORDER",
    "PAYMENT",
    "ORDER_STATUS",
    "DELIVERY",
    "STOCK_LEVEL",
)
TRANSACTIONS = (NEW_ORDER, PAYMENT, ORDER_STATUS, DELIVERY, STOCK_LEVEL)
MAX_TPMC_PER_WAREHOUSE = 12.86  # clause 5.4.1 with the specified keying and think times
# clause 5.2.5.3: at least 90% of each type must respond within (s). Delivery runs here
# synchronously, so the terminal waits for all of it: held to its 5 s interactive limit.
RESPONSE_TIME_LIMIT_SECONDS = {NEW_ORDER: 5.0, PAYMENT: 5.0, ORDER_STATUS: 5.0, DELIVERY: 5.0, STOCK_LEVEL: 20.0}


def efficiency(tpmc: float, warehouses: int) -> float:
    """Percent of the maximum 12.86 tpmC per warehouse (clause 5.4.1)."""
    return 100.0 * tpmc / (MAX_TPMC_PER_WAREHOUSE * warehouses) if warehouses else 0.0


UNPACED_EFFICIENCY_REASON = (
    "no keying/think times (pacing none): tpmC is not bounded by "
    f"{MAX_TPMC_PER_WAREHOUSE} per warehouse, so efficiency means nothing"
)


def reported_efficiency(tpmc: float, warehouses: int, paced: bool) -> tuple[float | None, str | None]:
    """(efficiency, why it is null): only a run with the clause 5.2.5 keying and think
    times is bounded by 12.86 tpmC per warehouse (clause 5.4.1)."""
    if not paced:
        return None, UNPACED_EFFICIENCY_REASON
    return round(efficiency(tpmc, warehouses), 2), None


def response_time_verdicts(p90_seconds: dict[str, float | None]) -> dict[str, dict[str, Any]]:
    """Clause 5.2.5.3 per transaction type: the 90th percentile against its limit
    (p90 None: the type was not executed, nothing to judge)."""
    out = {}
    for txn in TRANSACTIONS:
        p90, limit = p90_seconds.get(txn), RESPONSE_TIME_LIMIT_SECONDS[txn]
        out[txn] = {"limit_seconds": limit, "p90_seconds": p90, "passed": None if p90 is None else p90 <= limit}
    return out
