"""spec.sweep.saturation: raise the clients step by step until throughput stops growing, as the
studies did by hand ("raise clients until throughput stops growing"; "not more than 3 % per 100
clients"). Pure.

The client counts are a ladder known at apply (startClients, then + step or x factor, up to
maxClients), so the sweep's cells are planned as for any sweep; one search runs per warehouse
count and sweep.matrix combination (a `Key`: the sharded study raised the clients to saturation
per configuration). After the last repetition of each client count, `decide` says whether the
next count runs or that search stops, and the cells it leaves are Skipped. A step whose
90th-percentile response time breaks a limit (TPC-C clause 5.2.5.4: 5 s, Stock-Level 20 s) ends
the search and does not count: the saturation point is the highest throughput that met the limits.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from . import sweep, sweep_layout, workloads
from .runspec import RunSpec

# why a search stopped (status.sweep.saturation[].stopped)
GAIN_BELOW_THRESHOLD = "GainBelowThreshold"
LIMIT_BROKEN = "LimitBroken"  # the count broke a p90 limit
MAX_CLIENTS = "MaxClients"
CELL_FAILED = "CellFailed"  # the sweep failed in the search's cell


# One search: a warehouse count (None: a workload without them) and the sweep.matrix values,
# (field, value) in the matrix's order.
Key = tuple[int | None, tuple[tuple[str, str], ...]]


def key_of(cell: sweep_layout.Cell | sweep.Cell | sweep.SaturationSearch) -> Key:
    """The search a cell (planned, or its row in status.sweep.cells) belongs to, or an entry of
    status.sweep.saturation is of."""
    if isinstance(cell, sweep_layout.Cell):
        return cell.warehouses, cell.matrix
    return cell.warehouses, tuple((cell.matrix or {}).items())


def label(key: Key) -> str:
    """A search in words: "4 warehouses" or "4 warehouses, cpu=8, memory=32Gi"."""
    warehouses, matrix = key
    return sweep.search_text(warehouses, dict(matrix))


@dataclass(frozen=True)
class Search:
    """What a sweep.saturation search needs once its cells run (each cell's own spec has no
    sweep): the client counts, the gain threshold, the p90 limits and the throughput's name."""

    counts: tuple[int, ...]
    min_gain_percent: float
    limits_ms: dict[str, float]  # transaction type -> p90 limit; none for YCSB
    metric: str  # status.sweep.cells[]'s tpmC, or opsPerSecond for YCSB

    @classmethod
    def of(cls, spec: RunSpec) -> Search | None:
        """The run's search (None without one). The p90 limits are TPC-C's with
        p90LimitsMs's over them; YCSB has no such clause: its search is judged on ops/s alone."""
        search = spec.sweep.saturation if spec.sweep else None
        if search is None:
            return None
        workload = workloads.of(spec)
        limits = workload.p90_limits(search.p90_limits_ms)
        return cls(sweep_layout.saturation_ladder(search), search.min_gain_percent, limits, workload.throughput)


@dataclass(frozen=True)
class Figure:
    """One client count of the search: the median throughput over its succeeded repetitions and
    the p90 limits broken in any of them."""

    clients: int
    throughput: float
    broken: tuple[str, ...] = ()  # e.g. "NEW_ORDER p90 6100 ms > 5000 ms"

    def to_status(self, gain: float | None) -> sweep.SaturationStep:
        return sweep.SaturationStep(
            clients=self.clients,
            throughput=round(self.throughput, 2),
            gain_percent=round(gain, 2) if gain is not None else None,
            limits_broken=self.broken or None,
        )


@dataclass(frozen=True)
class Decision:
    next_clients: int | None  # the next count to run; None: the search is over
    stopped: str | None  # why it is over (one of the constants above)
    reason: str  # in words, for status and events
    saturation: Figure | None  # the highest throughput that met the limits so far


def decide(counts: tuple[int, ...], figures: list[Figure], min_gain_percent: float) -> Decision:
    """After the figure of `figures[-1]` (the counts measured so far, in ladder order): go on
    with the next count of `counts`, or stop because the last count broke a p90 limit (it does
    not count), its throughput grew less than min_gain_percent over the count before, or it was
    the last count the search may run."""
    last, best = figures[-1], saturation_point(figures)
    if last.broken:
        return Decision(
            None, LIMIT_BROKEN, f"{last.clients} clients broke the p90 limits (" + ", ".join(last.broken) + ")", best
        )
    gain = gain_percent(figures, len(figures) - 1)
    if gain is not None and gain < min_gain_percent:
        return Decision(
            None,
            GAIN_BELOW_THRESHOLD,
            f"{figures[-2].clients} -> {last.clients} clients gained "
            f"{gain:.1f} %, under minGainPercent {min_gain_percent:g}",
            best,
        )
    position = counts.index(last.clients)
    if position == len(counts) - 1:
        return Decision(None, MAX_CLIENTS, f"{last.clients} clients is maxClients and throughput still grew", best)
    return Decision(counts[position + 1], None, f"{last.clients} clients: throughput still grows", best)


def saturation_point(figures: list[Figure]) -> Figure | None:
    """The count with the highest throughput that met the limits (None: none did)."""
    return max((f for f in figures if not f.broken), key=lambda f: f.throughput, default=None)


def gain_percent(figures: list[Figure], index: int) -> float | None:
    """Throughput of figures[index] over the one before, in percent (None for the first)."""
    if index == 0 or figures[index - 1].throughput <= 0:
        return None
    return (figures[index].throughput / figures[index - 1].throughput - 1) * 100


def figures(cells: Sequence[sweep.Cell], key: Key, limits: dict[str, float], metric: str) -> list[Figure]:
    """The figure of every client count of search `key` whose repetitions all finished and some
    succeeded, in the order they ran."""
    by_clients: dict[int, list[sweep.Cell]] = {}
    for c in cells:
        if key_of(c) == key and c.state != sweep.SKIPPED:
            by_clients.setdefault(c.clients, []).append(c)
    out = []
    for clients, rows in by_clients.items():
        # the succeeded repetitions, each with its throughput
        measured = [(r, t) for r in rows if r.state == sweep.SUCCEEDED and (t := r.throughput(metric)) is not None]
        if not measured or any(r.state in (sweep.PENDING, sweep.RUNNING) for r in rows):
            break
        broken = {_broken(t, r.p90_ms or {}, limit) for r, _ in measured for t, limit in limits.items()}
        median = statistics.median(float(t) for _, t in measured)
        out.append(Figure(clients, median, tuple(sorted(b for b in broken if b))))
    return out


def _broken(transaction: str, p90_ms: Mapping[str, float], limit: float) -> str:
    p90 = p90_ms.get(transaction)
    return f"{transaction} p90 {p90:g} ms > {limit:g} ms" if p90 is not None and p90 > limit else ""


FAILED_CELL = Decision(None, CELL_FAILED, "a cell failed: the search ended with it", None)


def search_status(key: Key, found: list[Figure], decision: Decision, metric: str) -> sweep.SaturationSearch:
    """One search's entry of status.sweep.saturation: every step's figure, the saturation point
    so far and, once over, why the search stopped."""
    warehouses, matrix = key
    over, best = decision.next_clients is None, saturation_point(found)
    return sweep.SaturationSearch(
        warehouses=warehouses,
        matrix=dict(matrix) if matrix else None,
        metric=metric,
        steps=tuple(f.to_status(gain_percent(found, i)) for i, f in enumerate(found)),
        stopped=decision.stopped if over else None,
        reason=decision.reason if over else None,
        saturation_clients=best.clients if best is not None else None,
        throughput=round(best.throughput, 2) if best is not None else None,
    )


def advance(
    table: sweep.Table, cells: list[sweep_layout.Cell], search: Search | None
) -> tuple[int | None, sweep.Table]:
    """After the current cell was judged: the index of the cell to run next (None: the sweep is
    over) and the table, with the search's figures and the cells it skips. Without a saturation
    search, simply the next cell."""
    current = cells[table.current]
    key = key_of(current)
    following = current.index + 1
    same_count = (
        following < len(cells) and key_of(cells[following]) == key and cells[following].clients == current.clients
    )
    if search is None or same_count:  # repetitions of a count run before it is judged
        return (following if following < len(cells) else None), table
    found = figures(table.cells, key, search.limits_ms, search.metric)
    if not found or found[-1].clients != current.clients:  # no repetition measured: nothing to judge
        table = with_search(table, search_status(key, found, FAILED_CELL, search.metric))
        over = True
    else:
        decision = decide(search.counts, found, search.min_gain_percent)
        table = with_search(table, search_status(key, found, decision, search.metric))
        over = decision.next_clients is None
    if over:
        while following < len(cells) and key_of(cells[following]) == key:
            table = sweep.with_cell(table, following, state=sweep.SKIPPED)
            following += 1
    return (following if following < len(cells) else None), table


def after_failure(table: sweep.Table, cells: list[sweep_layout.Cell], search: Search | None) -> sweep.Table:
    """A sweep that failed in its current cell: the search of that cell ends there (what it
    measured before stays in status)."""
    if search is None:
        return table
    key = key_of(cells[table.current])
    found = figures(table.cells, key, search.limits_ms, search.metric)
    return with_search(table, search_status(key, found, FAILED_CELL, search.metric))


def with_search(table: sweep.Table, entry: sweep.SaturationSearch) -> sweep.Table:
    """status.sweep.saturation with the entry of entry's search replaced."""
    others = tuple(e for e in table.saturation or () if key_of(e) != key_of(entry))
    return replace(table, saturation=(*others, entry))
