"""Statistics of repeated measurements, for a sweep's configurations. Pure; no numpy in the operator.

- `summary`: median, min, max, the best (the VLDB paper's appendix A.1 reports the best result of
  each configuration), the mean and its 95 % confidence interval (Student's t: few repetitions).
- `mann_whitney_u`: whether two configurations' results differ, as a two-sided p-value: exact
  (the distribution of U counted over all rankings) without ties up to 20 values a side, else the
  normal approximation with the tie and continuity corrections, as scipy.stats.mannwhitneyu does.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from functools import cache

# Student's t, two-sided 95 % (the 0.975 quantile), for 1..30 degrees of freedom; beyond, 1.96
# is within 2 % of it (3 % at 30).
T_975 = (
    12.706,
    4.303,
    3.182,
    2.776,
    2.571,
    2.447,
    2.365,
    2.306,
    2.262,
    2.228,
    2.201,
    2.179,
    2.160,
    2.145,
    2.131,
    2.120,
    2.110,
    2.101,
    2.093,
    2.086,
    2.080,
    2.074,
    2.069,
    2.064,
    2.060,
    2.056,
    2.052,
    2.048,
    2.045,
    2.042,
)
EXACT_MAX = 20


@dataclass(frozen=True)
class Summary:
    n: int
    median: float
    minimum: float
    maximum: float
    mean: float
    ci95: tuple[float, float] | None  # None with one value: no spread to estimate


def summary(values: list[float]) -> Summary:
    if not values:
        raise ValueError("no values to summarise")
    n, mean = len(values), statistics.fmean(values)
    ci = None
    if n > 1:
        t = T_975[n - 2] if n - 1 <= len(T_975) else 1.96
        half = t * statistics.stdev(values) / math.sqrt(n)
        ci = (mean - half, mean + half)
    return Summary(n, statistics.median(values), min(values), max(values), mean, ci)


def mann_whitney_u(a: list[float], b: list[float]) -> tuple[float, float]:
    """(U of `a`, two-sided p-value) of the hypothesis that a and b come from one distribution."""
    if not a or not b:
        raise ValueError("both samples need values")
    ranks = _ranks(a + b)
    n1, n2 = len(a), len(b)
    u1 = sum(ranks[:n1]) - n1 * (n1 + 1) / 2
    ties = len(set(a + b)) < n1 + n2
    if not ties and n1 <= EXACT_MAX and n2 <= EXACT_MAX:
        return u1, _exact_p(u1, n1, n2)
    return u1, _normal_p(u1, n1, n2, a + b)


def _ranks(values: list[float]) -> list[float]:
    """Ranks 1..n, ties given their average rank."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


@cache
def _u_counts(n1: int, n2: int) -> tuple[int, ...]:
    """How many of the C(n1+n2, n1) rankings give each U = 0 .. n1*n2 (no ties)."""
    if n1 == 0 or n2 == 0:
        return (1,)
    # the largest value is from sample 1 (adding n2 to U) or from sample 2
    with_1, with_2 = _u_counts(n1 - 1, n2), _u_counts(n1, n2 - 1)
    counts = [0] * (n1 * n2 + 1)
    for u, c in enumerate(with_1):
        counts[u + n2] += c
    for u, c in enumerate(with_2):
        counts[u] += c
    return tuple(counts)


def _exact_p(u1: float, n1: int, n2: int) -> float:
    counts = _u_counts(n1, n2)
    total = sum(counts)
    u = max(u1, n1 * n2 - u1)  # the larger tail, doubled (the distribution is symmetric)
    tail = sum(counts[math.ceil(u) :]) / total
    return min(1.0, 2 * tail)


def _normal_p(u1: float, n1: int, n2: int, values: list[float]) -> float:
    n = n1 + n2
    tie_term = sum(t**3 - t for t in (values.count(v) for v in set(values)))
    sigma = math.sqrt(n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1))))
    if sigma == 0:
        return 1.0
    z = (abs(u1 - n1 * n2 / 2) - 0.5) / sigma  # continuity correction
    return min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2)))
