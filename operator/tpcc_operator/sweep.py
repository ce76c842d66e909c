"""status.sweep: the table of a sweep's cells, and the sweep's one verdict. Pure.

Each cell is judged like a run of its own (regression.judge against the same cell of earlier
runs); the sweep's verdict is the worst of its cells': Failed, then Regressed, Inconclusive,
Improved, Pass. The table is typed (Table and what it holds), written with `to_json` and read
with `Table.in_status`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from . import regression, sweep_layout, sweep_stats
from .jsonmodel import JsonModel, named

PENDING, RUNNING, SUCCEEDED, FAILED = "Pending", "Running", "Succeeded", "Failed"
SKIPPED = "Skipped"  # left out by a saturation search that stopped before it
FINISHED = (SUCCEEDED, FAILED)
# a cell's throughput: tpmC, or a YCSB cell's operations per second
THROUGHPUTS = (regression.TPMC, regression.OPS_PER_SECOND)
# worst first
SEVERITY = (regression.FAILED, regression.REGRESSED, regression.INCONCLUSIVE, regression.IMPROVED, regression.PASS)


@dataclass(frozen=True, kw_only=True)
class Cell(JsonModel):
    """status.sweep.cells[]: one cell as planned, then as measured and judged."""

    warehouses: int | None = None  # none for a workload without warehouses (YCSB)
    clients: int
    repetition: int
    matrix: Mapping[str, str] | None = None  # its sweep.matrix values
    deployment: int | None = None  # with more than one deployment
    state: str
    start_time: str | None = None
    tpm_c: float | None = None
    ops_per_second: float | None = None  # a YCSB cell's throughput
    p90_ms: Mapping[str, float] | None = None
    p99_new_order_ms: float | None = None
    verdict: str | None = None
    reason: str | None = None  # why it failed
    result: str | None = None  # its BenchmarkResult

    def throughput(self, metric: str) -> float | None:
        """Its tpmC, or its operations per second (`metric`)."""
        return self.ops_per_second if metric == regression.OPS_PER_SECOND else self.tpm_c

    def measured(self, metric: str, throughput: float | None) -> Cell:
        """The cell with its throughput, of the workload's `metric`."""
        if metric == regression.OPS_PER_SECOND:
            return replace(self, ops_per_second=throughput)
        return replace(self, tpm_c=throughput)


@dataclass(frozen=True, kw_only=True)
class SaturationStep(JsonModel):
    """One client count of a saturation search: the median throughput of its repetitions."""

    clients: int
    throughput: float
    gain_percent: float | None = None  # over the count before (none for the first)
    limits_broken: tuple[str, ...] | None = None  # e.g. "NEW_ORDER p90 6100 ms > 5000 ms"


@dataclass(frozen=True, kw_only=True)
class SaturationSearch(JsonModel):
    """status.sweep.saturation[]: the search of one warehouse count and matrix combination."""

    warehouses: int | None = None
    matrix: Mapping[str, str] | None = None
    metric: str  # what throughput is: tpmC | opsPerSecond
    steps: tuple[SaturationStep, ...]
    stopped: str | None = None  # why it is over (saturation's constants); None while it goes on
    reason: str | None = None
    saturation_clients: int | None = None  # the highest throughput that met the limits so far
    throughput: float | None = None


@dataclass(frozen=True, kw_only=True)
class ThroughputStats(JsonModel):
    """A configuration's throughput over its succeeded repetitions (rounded to 3 places)."""

    n: int
    median: float
    minimum: float = field(metadata=named("min"))
    maximum: float = field(metadata=named("max"))
    best: float  # the VLDB paper's appendix A.1 reports the best result of each configuration
    mean: float
    ci95: tuple[float, ...] | None = None  # None with one value: no spread to estimate

    @classmethod
    def of(cls, values: list[float]) -> ThroughputStats:
        s = sweep_stats.summary(values)
        return cls(
            n=s.n,
            median=_round(s.median),
            minimum=_round(s.minimum),
            maximum=_round(s.maximum),
            best=_round(s.maximum),
            mean=_round(s.mean),
            ci95=(_round(s.ci95[0]), _round(s.ci95[1])) if s.ci95 is not None else None,
        )


def _round(x: float) -> float:
    return round(x, 3)


@dataclass(frozen=True, kw_only=True)
class ConfigurationStats(JsonModel):
    """status.sweep.configurations[]: what the repetitions of one configuration measured."""

    warehouses: int | None = None
    clients: int
    matrix: Mapping[str, str] | None = None
    tpm_c: ThroughputStats | None = None
    ops_per_second: ThroughputStats | None = None
    # the median throughput per unit of price per hour (spec.cost, or the matrix's
    # cost.pricePerHour): VLDB Fig. 4's instance types compared by what they cost
    throughput_per_price_per_hour: float | None = None


@dataclass(frozen=True, kw_only=True)
class Comparison(JsonModel):
    """status.sweep.comparisons[]: one configuration against another where both were repeated:
    the next client count, or (axis, values) another value of one matrix axis."""

    warehouses: int | None = None
    clients: tuple[int, ...]  # (this, the other)
    matrix: Mapping[str, str] | None = None  # the matrix values they share
    axis: str | None = None
    values: tuple[str, ...] | None = None  # the axis's (first, other)
    median_change_percent: float
    p_value: float


@dataclass(frozen=True, kw_only=True)
class Table(JsonModel):
    """status.sweep: the cells, which one is under way, the counts, and once over the saturation
    searches', configurations' and comparisons' figures."""

    current: int
    plan: sweep_layout.SweepPlan | None = None  # what it will do, known before it starts
    cells: tuple[Cell, ...]
    total: int
    progress: str  # finished/total
    skipped: int | None = None
    succeeded: int
    failed: int
    regressed: int
    saturation: tuple[SaturationSearch, ...] | None = None
    configurations: tuple[ConfigurationStats, ...] | None = None
    comparisons: tuple[Comparison, ...] | None = None

    @property
    def current_cell(self) -> Cell:
        return self.cells[self.current]


def initial(cells: list[sweep_layout.Cell], sweep_plan: sweep_layout.SweepPlan) -> Table:
    """The table before anything starts: every cell Pending, and the plan."""
    rows = tuple(
        Cell(
            warehouses=c.warehouses,
            clients=c.clients,
            repetition=c.repetition,
            matrix=dict(c.matrix) if c.matrix else None,
            deployment=c.deployment if sweep_plan.deployments > 1 else None,
            state=PENDING,
        )
        for c in cells
    )
    return _counted(rows, current=0, plan=sweep_plan)


def with_cell(table: Table, index: int, **changes: Any) -> Table:
    """The table with cell `index` changed (None removes a field) and the counts redone."""
    return with_row(table, index, replace(table.cells[index], **changes))


def with_row(table: Table, index: int, cell: Cell) -> Table:
    """The table with cell `index` replaced and the counts redone."""
    cells = list(table.cells)
    cells[index] = cell
    return _counted(tuple(cells), table)


def _counted(cells: tuple[Cell, ...], table: Table | None = None, **first: Any) -> Table:
    finished = sum(c.state in (*FINISHED, SKIPPED) for c in cells)
    skipped = sum(c.state == SKIPPED for c in cells)
    counts: dict[str, Any] = dict(
        cells=cells,
        total=len(cells),
        progress=f"{finished}/{len(cells)}",
        skipped=skipped or None,
        succeeded=sum(c.state == SUCCEEDED for c in cells),
        failed=sum(c.state == FAILED for c in cells),
        regressed=sum(c.verdict == regression.REGRESSED for c in cells),
    )
    return replace(table, **counts) if table is not None else Table(**first, **counts)


def awaiting_judgement(table: Table | None) -> bool:
    """The current cell finished measuring and has no verdict yet (its BenchmarkResult is due)."""
    if table is None:
        return False
    cell = table.current_cell
    return cell.state in FINISHED and cell.verdict is None


def matrix_text(matrix: Mapping[str, str] | None) -> str:
    """sweep.matrix values as a label's tail: ", replicas=3, read_concern=majority"."""
    return "".join(f", {field.rpartition('.')[2]}={value}" for field, value in (matrix or {}).items())


def warehouses_text(warehouses: int | None) -> str:
    """A warehouse count in words (4 warehouses), or nothing for a workload without them."""
    return f"{warehouses} warehouses" if warehouses is not None else ""


def search_text(warehouses: int | None, matrix: Mapping[str, str] | None) -> str:
    """A saturation search in words: "4 warehouses", "4 warehouses, cpu=8", "cpu=8", or "the
    clients" (a YCSB sweep's one search)."""
    return (warehouses_text(warehouses) + matrix_text(matrix)).removeprefix(", ") or "the clients"


def label(cell: Cell) -> str:
    shape = " x ".join(filter(None, (warehouses_text(cell.warehouses), f"{cell.clients} clients")))
    return f"{shape}{matrix_text(cell.matrix)} #{cell.repetition}"


def verdict(table: Table) -> str:
    """The sweep's verdict from its judged cells (cells never run do not count)."""
    judged = {c.verdict for c in table.cells if c.verdict is not None}
    return next((v for v in SEVERITY if v in judged), regression.INCONCLUSIVE)


@dataclass(frozen=True)
class Configuration:
    """What a sweep's repetitions repeat: the cell without its repetition number."""

    warehouses: int | None
    clients: int
    matrix: tuple[tuple[str, str], ...] = ()  # (field, value) in the matrix's order

    @classmethod
    def of(cls, cell: Cell) -> Configuration:
        return cls(cell.warehouses, cell.clients, tuple((cell.matrix or {}).items()))

    @property
    def matrix_values(self) -> dict[str, str] | None:
        return dict(self.matrix) if self.matrix else None


# the sweep.matrix field that prices each configuration (instead of spec.cost.pricePerHour)
PRICE_AXIS = "cost.pricePerHour"


def configurations(table: Table, price_per_hour: float | None = None) -> tuple[ConfigurationStats, ...]:
    """status.sweep.configurations: the throughput (tpmC, or YCSB's opsPerSecond) over each
    configuration's succeeded repetitions; with a price (spec.cost's, or the configuration's
    cost.pricePerHour axis value), the median per unit of price per hour."""
    metric = throughput_of(table)
    out = []
    for configuration, values in _measured(table).items():
        stats = ThroughputStats.of(values)
        price = float(dict(configuration.matrix).get(PRICE_AXIS, price_per_hour or 0))
        out.append(
            ConfigurationStats(
                warehouses=configuration.warehouses,
                clients=configuration.clients,
                matrix=configuration.matrix_values,
                tpm_c=stats if metric == regression.TPMC else None,
                ops_per_second=stats if metric == regression.OPS_PER_SECOND else None,
                throughput_per_price_per_hour=_round(stats.median / price) if price > 0 else None,
            )
        )
    return tuple(out)


def throughput_of(table: Table) -> str:
    """Which throughput the sweep's cells report (every cell of a sweep runs the same kind)."""
    return next((m for c in table.cells for m in THROUGHPUTS if c.throughput(m) is not None), regression.TPMC)


def comparisons(table: Table) -> tuple[Comparison, ...]:
    """status.sweep.comparisons, where both sides were repeated (one value each says nothing
    about spread): each configuration against the next client count at the same warehouses and
    matrix values; and, per matrix axis, each configuration against the same one with the axis
    at its first value ("snapshot against majority", the rest alike)."""
    measured = _measured(table)
    return (*_by_clients(measured), *_by_axis(table, measured))


def _by_clients(measured: dict[Configuration, list[float]]) -> list[Comparison]:
    """Each configuration against the next client count at the same warehouses and matrix values."""
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
            median_change, p_value = test
            out.append(
                Comparison(
                    warehouses=this.warehouses,
                    clients=(this.clients, following),
                    matrix=this.matrix_values,
                    median_change_percent=median_change,
                    p_value=p_value,
                )
            )
    return out


def _by_axis(table: Table, measured: dict[Configuration, list[float]]) -> list[Comparison]:
    """Per matrix axis, each configuration against the same one with the axis at its first
    value. Axes paired with it change with it (and are not compared on their own)."""
    fields = dict.fromkeys(f for c in measured for f, _ in c.matrix)
    orders = {f: _axis_values(table, f) for f in fields}
    partners_of = {f: _partners(table, f) for f in fields}
    out = []
    for base, values in measured.items():
        paired: set[str] = set()
        for field_, first in base.matrix:
            if field_ in paired:
                continue  # changed with the axis it is paired with
            order, partners = orders[field_], partners_of[field_]
            paired |= set(partners)
            if first != order[0]:
                continue  # compared from the configuration with the axis's first value
            for value in order[1:]:
                now = {field_: value, **{f: taken[value] for f, taken in partners.items()}}
                changed = tuple((f, now.get(f, v)) for f, v in base.matrix)
                other = measured.get(Configuration(base.warehouses, base.clients, changed))
                if other is not None and (test := _compared(values, other)):
                    rest = {f: v for f, v in base.matrix if f != field_ and f not in partners}
                    out.append(
                        Comparison(
                            warehouses=base.warehouses,
                            clients=(base.clients, base.clients),
                            matrix=rest or None,
                            axis=field_,
                            values=(first, value),
                            median_change_percent=test[0],
                            p_value=test[1],
                        )
                    )
    return out


def _compared(values: list[float], other: list[float]) -> tuple[float, float] | None:
    """`other` against `values`: the median change in percent and Mann-Whitney U's p-value."""
    if len(values) < 2 or len(other) < 2:
        return None
    _, p = sweep_stats.mann_whitney_u(values, other)
    change = (sweep_stats.summary(other).median / sweep_stats.summary(values).median - 1) * 100
    return round(change, 2), round(p, 6)


def _partners(table: Table, field_: str) -> dict[str, dict[str, str]]:
    """The axes paired with `field_` (sweep.matrix pairedWith), each as field_'s value -> its own:
    those whose value every cell takes one for one with field_'s."""
    matrices = [c.matrix for c in table.cells if c.matrix and field_ in c.matrix]
    out = {}
    for other in dict.fromkeys(f for m in matrices for f in m if f != field_):
        taken: dict[str, set[str]] = {}
        for m in matrices:
            taken.setdefault(m[field_], set()).add(m.get(other, ""))
        values = [next(iter(v)) for v in taken.values() if len(v) == 1]
        if len(taken) > 1 and len(values) == len(taken) == len(set(values)):
            out[other] = {mine: next(iter(theirs)) for mine, theirs in taken.items()}
    return out


def _axis_values(table: Table, field_: str) -> list[str]:
    """An axis's values in the order its cells ran (the matrix's order)."""
    return list(dict.fromkeys(c.matrix[field_] for c in table.cells if c.matrix and field_ in c.matrix))


def _measured(table: Table) -> dict[Configuration, list[float]]:
    metric = throughput_of(table)
    by_configuration: dict[Configuration, list[float]] = {}
    for c in table.cells:
        throughput = c.throughput(metric)
        if c.state == SUCCEEDED and throughput is not None:
            by_configuration.setdefault(Configuration.of(c), []).append(float(throughput))
    return by_configuration


def message(table: Table) -> str:
    """One line: how many cells got which verdict, naming the cells that did worst."""
    outcome = verdict(table)
    counts = {v: sum(c.verdict == v for c in table.cells) for v in SEVERITY}
    text = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
    worst = [
        f"{label(c)} ({c.reason or c.result or ''})"
        for c in table.cells
        if c.verdict == outcome and outcome != regression.PASS
    ]
    unrun = sum(c.state == PENDING for c in table.cells)
    skipped = sum(c.state == SKIPPED for c in table.cells)
    searches = "".join(
        f"; {search_text(s.warehouses, s.matrix)} saturate at {s.saturation_clients} clients "
        f"({s.throughput:g} {s.metric}; {s.reason or 'search not over'})"
        for s in table.saturation or ()
        if s.saturation_clients is not None and s.throughput is not None
    )
    return (
        f"sweep of {table.total} cells: {text or 'none judged'}"
        + (f"; {unrun} not run" if unrun else "")
        + (f"; {skipped} skipped" if skipped else "")
        + searches
        + (f"; {outcome}: " + ", ".join(worst[:3]) + (" ..." if len(worst) > 3 else "") if worst else "")
    )
