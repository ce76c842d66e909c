"""status.sweep: the table of a sweep's cells, and the sweep's one verdict. Pure.

Each cell is judged like a run of its own (regression.judge against the same cell of earlier
runs); the sweep's verdict is the worst of its cells': Failed, then Regressed, Inconclusive,
Improved, Pass.
"""
from __future__ import annotations

from typing import Any

from . import plan, regression

PENDING, RUNNING, SUCCEEDED, FAILED = "Pending", "Running", "Succeeded", "Failed"
FINISHED = (SUCCEEDED, FAILED)
# worst first
SEVERITY = (regression.FAILED, regression.REGRESSED, regression.INCONCLUSIVE, regression.IMPROVED,
             regression.PASS)


def initial(cells: list[plan.Cell]) -> dict[str, Any]:
    table = [{"warehouses": c.warehouses, "clients": c.clients, "repetition": c.repetition, "state": PENDING}
             for c in cells]
    return _counted({"current": 0, "cells": table})


def with_cell(sweep: dict, index: int, **fields: Any) -> dict[str, Any]:
    """The table with cell `index` updated (None removes a field) and the counts redone."""
    cells = [dict(c) for c in sweep["cells"]]
    cells[index] = {k: v for k, v in {**cells[index], **fields}.items() if v is not None}
    return _counted({**sweep, "cells": cells})


def _counted(sweep: dict) -> dict[str, Any]:
    cells = sweep["cells"]
    finished = sum(c["state"] in FINISHED for c in cells)
    return {**sweep, "total": len(cells), "progress": f"{finished}/{len(cells)}",
            "succeeded": sum(c["state"] == SUCCEEDED for c in cells),
            "failed": sum(c["state"] == FAILED for c in cells),
            "regressed": sum(c.get("verdict") == regression.REGRESSED for c in cells)}


def awaiting_judgement(sweep: dict | None) -> bool:
    """The current cell finished measuring and has no verdict yet (its BenchmarkResult is due)."""
    if not sweep:
        return False
    cell = sweep["cells"][sweep["current"]]
    return cell["state"] in FINISHED and "verdict" not in cell


def label(cell: dict) -> str:
    return f"{cell['warehouses']} warehouses x {cell['clients']} clients #{cell['repetition']}"


def verdict(sweep: dict) -> str:
    """The sweep's verdict from its judged cells (cells never run do not count)."""
    judged = {c["verdict"] for c in sweep["cells"] if "verdict" in c}
    return next((v for v in SEVERITY if v in judged), regression.INCONCLUSIVE)


def message(sweep: dict) -> str:
    """One line: how many cells got which verdict, naming the cells that did worst."""
    outcome = verdict(sweep)
    counts = {v: sum(c.get("verdict") == v for c in sweep["cells"]) for v in SEVERITY}
    text = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
    worst = [f"{label(c)} ({c.get('reason') or c.get('result', '')})" for c in sweep["cells"]
             if c.get("verdict") == outcome and outcome != regression.PASS]
    unrun = sum(c["state"] == PENDING for c in sweep["cells"])
    return (f"sweep of {sweep['total']} cells: {text or 'none judged'}"
            + (f"; {unrun} not run" if unrun else "")
            + (f"; {outcome}: " + ", ".join(worst[:3]) + (" ..." if len(worst) > 3 else "") if worst else ""))
