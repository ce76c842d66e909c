"""What the growth benches (load_growth.py, ycsb_growth.py, operator/bench/*_growth.py) print
beside their curves: the machine, the commit measured, and whether a curve meets its goal
(flat, or at most linear). Pure but for reading the machine and git."""

from __future__ import annotations

import math
import os
import platform
import statistics
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def machine() -> str:
    """The CPU, its count, the Python, the hour and the load average now (other work may share
    the machine: the load average says how much)."""
    cpuinfo = Path("/proc/cpuinfo").read_text().splitlines()
    cpu = next((ln.split(":", 1)[1].strip() for ln in cpuinfo if ln.startswith("model name")), platform.machine())
    return (
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {cpu}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, {load_average()}"
    )


def load_average() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def commit(*paths: str) -> str:
    """HEAD's short hash, marked when the measured paths have uncommitted changes."""

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()

    changed = git("status", "--porcelain", "--", *paths)
    return git("rev-parse", "--short", "HEAD") + (" (with uncommitted changes)" if changed else "")


def spread(values: Sequence[float]) -> float:
    """(largest - smallest) / median, as a fraction: 0 for a flat curve."""
    middle = statistics.median(values)
    return (max(values) - min(values)) / middle if middle else float("inf")


def flat(name: str, values: Sequence[float], tolerance: float) -> str:
    """One goal line: whether `values` (one per size) stay within `tolerance` (a fraction) of
    their median, largest to smallest."""
    s = spread(values)
    verdict = "met" if s <= tolerance else "NOT met"
    return f"{name}: spread {s:.0%} of the median (goal: within {tolerance:.0%}): {verdict}"


def growth_exponent(sizes: Sequence[float], costs: Sequence[float]) -> float:
    """The slope of log(cost) against log(size), least squares: 1 is linear, 0 constant, 2
    quadratic. Sizes and costs must be positive, at least two distinct sizes."""
    xs, ys = [math.log(s) for s in sizes], [math.log(c) for c in costs]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)


def at_most_linear(name: str, sizes: Sequence[float], costs: Sequence[float], slack: float = 0.2) -> str:
    """One goal line: the cost's growth exponent between the two largest sizes (where fixed costs
    weigh least) against at most 1 (+ slack for noise); over all sizes beside it."""
    k_all, k_top = growth_exponent(sizes, costs), growth_exponent(sizes[-2:], costs[-2:])
    verdict = "met" if k_top <= 1 + slack else "NOT met"
    return (
        f"{name}: grows as size^{k_top:.2f} from {sizes[-2]:g} to {sizes[-1]:g} (size^{k_all:.2f} over all sizes; "
        f"goal: at most linear, exponent <= {1 + slack:.1f}): {verdict}"
    )


def not_worse(name: str, values: Sequence[float], tolerance: float, higher_is_better: bool) -> str:
    """One goal line: the value at the largest size (`values` in size order) within `tolerance`
    (a fraction) of the best at any size: a curve may improve as fixed costs spread, not fall off."""
    last, best = values[-1], (max(values) if higher_is_better else min(values))
    worse = (best - last) / best if higher_is_better else (last - best) / best
    verdict = "met" if worse <= tolerance else "NOT met"
    return (
        f"{name}: {last:g} at the largest size, {worse:.0%} worse than the best ({best:g}) "
        f"(goal: within {tolerance:.0%}): {verdict}"
    )


def linear_fit(sizes: Sequence[float], costs: Sequence[float]) -> tuple[float, float]:
    """(fixed, per unit of size) of the least-squares line through the points."""
    slope, intercept = statistics.linear_regression(sizes, costs)
    return intercept, slope
