"""The twelve consistency conditions of TPC-C clause 3.3.2 (what each driver checks,
exactly and over every row) and the report `tpcc check` prints."""
from __future__ import annotations

from .drivers.base import ConditionResult

CONDITIONS: dict[int, str] = {
    1: "W_YTD = sum(D_YTD) for each warehouse",
    2: "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) for each district "
       "(NEW-ORDER part skipped for a district with no new orders)",
    3: "max(NO_O_ID) - min(NO_O_ID) + 1 = count(NEW-ORDER rows) for each district",
    4: "sum(O_OL_CNT) = count(ORDER-LINE rows) for each district",
    5: "O_CARRIER_ID is null iff a NEW-ORDER row exists, for each order",
    6: "O_OL_CNT = count(ORDER-LINE rows) of the order, for each order",
    7: "OL_DELIVERY_D is null iff the order's O_CARRIER_ID is null, for each order line",
    8: "W_YTD = sum(H_AMOUNT) for each warehouse",
    9: "D_YTD = sum(H_AMOUNT) for each district",
    10: "C_BALANCE = sum(OL_AMOUNT of delivered lines) - sum(H_AMOUNT), for each customer",
    # As written the clause holds for the initial database only (each Delivery moves one
    # order out of NEW-ORDER); we check its run-invariant form, which reduces to the
    # clause's "= 2100" before any Delivery.
    11: "count(ORDER) - count(NEW-ORDER) = initial (orders - new orders, 2100 per spec) + "
        "orders delivered since load (O_ID beyond the initial ones with O_CARRIER_ID set), "
        "for each district",
    12: "C_BALANCE + C_YTD_PAYMENT = sum(OL_AMOUNT of delivered lines), for each customer",
}

# Money is compared with this tolerance: drivers store cents in binary floating point.
MONEY_EPSILON = 0.005


def failed(results: list[ConditionResult]) -> list[ConditionResult]:
    return [r for r in results if not r.passed]


def report(results: list[ConditionResult]) -> str:
    lines = []
    for r in results:
        mark = "ok  " if r.passed else "FAIL"
        line = f"{mark} 3.3.2.{r.number:<2} {CONDITIONS[r.number]} ({r.checked} checked"
        line += f", {r.violations} violated)" if not r.passed else ")"
        if r.example:
            line += f"\n       e.g. {r.example}"
        lines.append(line)
    return "\n".join(lines)
