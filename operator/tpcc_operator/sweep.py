"""status.sweep: the table of a sweep's cells, and the sweep's one verdict. Pure.

Each cell is judged like a run of its own (regression.judge against the same cell of earlier
runs); the sweep's verdict is the worst of its cells': Failed, then Regressed, Inconclusive,
Improved, Pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import regression, sweep_layout, sweep_stats

PENDING, RUNNING, SUCCEEDED, FAILED = "Pending", "Running", "Succeeded", "Failed"
SKIPPED = "Skipped"  # left out by a saturation search that stopped before it
FINISHED = (SUCCEEDED, FAILED)
# a cell's throughput: tpmC, or a YCSB cell's operations per second
THROUGHPUTS = ("tpmC", "opsPerSecond")
# worst first
SEVERITY = (regression.FAILED, regression.REGRESSED, regression.INCONCLUSIVE, regression.IMPROVED, regression.PASS)


def initial(cells: list[sweep_layout.Cell], sweep_plan: sweep_layout.SweepPlan) -> dict[str, Any]:
    """The table before anything starts: every cell Pending, and the plan."""
    table = [
        {
            "warehouses": c.warehouses,
            "clients": c.clients,
            "repetition": c.repetition,
            **({"matrix": dict(c.matrix)} if c.matrix else {}),
            **({"deployment": c.deployment} if sweep_plan.deployments > 1 else {}),
            "state": PENDING,
        }
        for c in cells
    ]
    return _counted({"current": 0, "plan": sweep_plan.to_status(), "cells": table})


def with_cell(sweep: dict, index: int, **fields: Any) -> dict[str, Any]:
    """The table with cell `index` updated (None removes a field) and the counts redone."""
    cells = [dict(c) for c in sweep["cells"]]
    cells[index] = {k: v for k, v in {**cells[index], **fields}.items() if v is not None}
    return _counted({**sweep, "cells": cells})


def _counted(sweep: dict) -> dict[str, Any]:
    cells = sweep["cells"]
    finished = sum(c["state"] in (*FINISHED, SKIPPED) for c in cells)
    skipped = sum(c["state"] == SKIPPED for c in cells)
    return {
        **sweep,
        "total": len(cells),
        "progress": f"{finished}/{len(cells)}",
        **({"skipped": skipped} if skipped else {}),
        "succeeded": sum(c["state"] == SUCCEEDED for c in cells),
        "failed": sum(c["state"] == FAILED for c in cells),
        "regressed": sum(c.get("verdict") == regression.REGRESSED for c in cells),
    }


def awaiting_judgement(sweep: dict | None) -> bool:
    """The current cell finished measuring and has no verdict yet (its BenchmarkResult is due)."""
    if not sweep:
        return False
    cell = sweep["cells"][sweep["current"]]
    return cell["state"] in FINISHED and "verdict" not in cell


def matrix_text(matrix: dict[str, str] | None) -> str:
    """sweep.matrix values as a label's tail: ", replicas=3, read_concern=majority"."""
    return "".join(f", {field.rpartition('.')[2]}={value}" for field, value in (matrix or {}).items())


def label(cell: dict) -> str:
    values = matrix_text(cell.get("matrix"))
    return f"{cell['warehouses']} warehouses x {cell['clients']} clients{values} #{cell['repetition']}"


def verdict(sweep: dict) -> str:
    """The sweep's verdict from its judged cells (cells never run do not count)."""
    judged = {c["verdict"] for c in sweep["cells"] if "verdict" in c}
    return next((v for v in SEVERITY if v in judged), regression.INCONCLUSIVE)


@dataclass(frozen=True)
class Configuration:
    """What a sweep's repetitions repeat: the cell without its repetition number."""

    warehouses: int
    clients: int
    matrix: tuple[tuple[str, str], ...] = ()  # (field, value) in the matrix's order

    @classmethod
    def of(cls, cell: dict) -> Configuration:
        return cls(cell["warehouses"], cell["clients"], tuple((cell.get("matrix") or {}).items()))

    def to_status(self) -> dict[str, Any]:
        return {
            "warehouses": self.warehouses,
            "clients": self.clients,
            **({"matrix": dict(self.matrix)} if self.matrix else {}),
        }


def configurations(sweep: dict) -> list[dict[str, Any]]:
    """status.sweep.configurations: the throughput (tpmC, or YCSB's opsPerSecond) over each
    configuration's succeeded repetitions."""
    metric = throughput_of(sweep)
    return [
        {**configuration.to_status(), metric: sweep_stats.summary(values).to_status()}
        for configuration, values in _measured(sweep).items()
    ]


def throughput_of(sweep: dict) -> str:
    """Which throughput the sweep's cells report (every cell of a sweep runs the same kind)."""
    return next((m for c in sweep["cells"] for m in THROUGHPUTS if c.get(m) is not None), "tpmC")


def comparisons(sweep: dict) -> list[dict[str, Any]]:
    """status.sweep.comparisons, where both sides were repeated (one value each says nothing
    about spread): each configuration against the next client count at the same warehouses and
    matrix values; and, per matrix axis, each configuration against the same one with the axis
    at its first value ("snapshot against majority", the rest alike). Axes paired with it change
    with it (and are not compared on their own)."""
    measured = _measured(sweep)
    out = []
    for this, values in measured.items():
        following = min(
            (
                c.clients
                for c in measured
                if c.warehouses == this.warehouses and c.matrix == this.matrix and c.clients > this.clients
            ),
            default=None,
        )
        if following is None:
            continue
        other = measured.get(Configuration(this.warehouses, following, this.matrix))
        if other is not None and (test := _compared(values, other)):
            out.append({**this.to_status(), "clients": [this.clients, following], **test})
    fields = dict.fromkeys(f for c in measured for f, _ in c.matrix)
    orders = {f: _axis_values(sweep, f) for f in fields}
    partners_of = {f: _partners(sweep, f) for f in fields}
    for base, values in measured.items():
        paired: set[str] = set()
        for field, first in base.matrix:
            if field in paired:
                continue  # changed with the axis it is paired with
            order, partners = orders[field], partners_of[field]
            paired |= set(partners)
            if first != order[0]:
                continue  # compared from the configuration with the axis's first value
            for value in order[1:]:
                now = {field: value, **{f: taken[value] for f, taken in partners.items()}}
                changed = tuple((f, now.get(f, v)) for f, v in base.matrix)
                other = measured.get(Configuration(base.warehouses, base.clients, changed))
                if other is not None and (test := _compared(values, other)):
                    rest = {f: v for f, v in base.matrix if f != field and f not in partners}
                    out.append(
                        {
                            "warehouses": base.warehouses,
                            "clients": [base.clients, base.clients],
                            **({"matrix": rest} if rest else {}),
                            "axis": field,
                            "values": [first, value],
                            **test,
                        }
                    )
    return out


def _compared(values: list[float], other: list[float]) -> dict[str, float] | None:
    """`other` against `values`: the median change in percent and Mann-Whitney U's p-value."""
    if len(values) < 2 or len(other) < 2:
        return None
    _, p = sweep_stats.mann_whitney_u(values, other)
    change = (sweep_stats.summary(other).median / sweep_stats.summary(values).median - 1) * 100
    return {"medianChangePercent": round(change, 2), "pValue": round(p, 6)}


def _partners(sweep: dict, field: str) -> dict[str, dict[str, str]]:
    """The axes paired with `field` (sweep.matrix pairedWith), each as field's value -> its own:
    those whose value every cell takes one for one with field's."""
    matrices = [c.get("matrix") or {} for c in sweep["cells"] if field in (c.get("matrix") or {})]
    out = {}
    for other in dict.fromkeys(f for m in matrices for f in m if f != field):
        taken: dict[str, set[str]] = {}
        for m in matrices:
            taken.setdefault(m[field], set()).add(m.get(other, ""))
        values = [next(iter(v)) for v in taken.values() if len(v) == 1]
        if len(taken) > 1 and len(values) == len(taken) == len(set(values)):
            out[other] = {mine: next(iter(theirs)) for mine, theirs in taken.items()}
    return out


def _axis_values(sweep: dict, field: str) -> list[str]:
    """An axis's values in the order its cells ran (the matrix's order)."""
    return list(dict.fromkeys(c["matrix"][field] for c in sweep["cells"] if field in (c.get("matrix") or {})))


def _measured(sweep: dict) -> dict[Configuration, list[float]]:
    metric = throughput_of(sweep)
    by_configuration: dict[Configuration, list[float]] = {}
    for c in sweep["cells"]:
        if c["state"] == SUCCEEDED and c.get(metric) is not None:
            by_configuration.setdefault(Configuration.of(c), []).append(float(c[metric]))
    return by_configuration


def message(sweep: dict) -> str:
    """One line: how many cells got which verdict, naming the cells that did worst."""
    outcome = verdict(sweep)
    counts = {v: sum(c.get("verdict") == v for c in sweep["cells"]) for v in SEVERITY}
    text = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
    worst = [
        f"{label(c)} ({c.get('reason') or c.get('result', '')})"
        for c in sweep["cells"]
        if c.get("verdict") == outcome and outcome != regression.PASS
    ]
    unrun = sum(c["state"] == PENDING for c in sweep["cells"])
    skipped = sum(c["state"] == SKIPPED for c in sweep["cells"])
    searches = "".join(
        f"; {s['warehouses']} warehouses{matrix_text(s.get('matrix'))} saturate at {s['saturationClients']} clients "
        f"({s['throughput']:g} {s['metric']}; {s.get('reason', 'search not over')})"
        for s in sweep.get("saturation") or []
        if "saturationClients" in s
    )
    return (
        f"sweep of {sweep['total']} cells: {text or 'none judged'}"
        + (f"; {unrun} not run" if unrun else "")
        + (f"; {skipped} skipped" if skipped else "")
        + searches
        + (f"; {outcome}: " + ", ".join(worst[:3]) + (" ..." if len(worst) > 3 else "") if worst else "")
    )
