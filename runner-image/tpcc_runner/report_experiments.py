"""`tpcc report`'s experiment views, in the shapes the studies drew them, and its CSV:

- grouped bars per configuration (VLDB 2019 Fig. 3, the sharded study's Fig. 8): the runs of a
  sweep.matrix (or of separate runs) grouped by their matrix values, one bar per warehouse and
  client count, the bar the median over repetitions and a whisker from min to max;
- throughput against hosts, one line per k-safety (the VoltDB study's Figs 8 and 10), from runs
  that differ in database.deploy.replicas / kSafety;
- `--csv`: one row per run with everything the figures use, for a spreadsheet or a plotting tool.

Which runs go together is decided by pure functions over report.Run (tested without drawing);
drawing is string building like report.py's.
"""

from __future__ import annotations

import csv
import html
import io
import statistics
from collections.abc import Iterable

from .report_runs import Run, matrix_label
from .report_svg import BOTTOM, LEFT, PALETTE, RIGHT, TOP, H, Plot, W, axis_ticks, num

CSV_COLUMNS = (
    "name",
    "start",
    "database",
    "hosts",
    "k_safety",
    "warehouses",
    "clients",
    "matrix",
    "tpmC",
    "transactions_per_second",
    "new_order_p90_ms",
    "new_order_p99_ms",
    "phase",
    "verdict",
    "durable",
    "consistent",
)


def configuration_groups(runs: Iterable[Run]) -> dict[str, dict[tuple[int, int], list[float]]]:
    """configuration label -> (warehouses, clients) -> tpmC of each run (repetitions); only when
    the measured runs have at least two configurations (else there is nothing to compare)."""
    groups: dict[str, dict[tuple[int, int], list[float]]] = {}
    for r in runs:
        if r.tpmc is not None and r.matrix:
            groups.setdefault(matrix_label(r.matrix), {}).setdefault((r.warehouses, r.clients), []).append(r.tpmc)
    return groups if len(groups) >= 2 else {}


def hosts_series(runs: Iterable[Run]) -> dict[tuple[str, int, int], dict[int, list[float]]]:
    """(database, k-safety, warehouses) -> hosts -> tpmC of each run; only series of at least two
    host counts (a line needs two points)."""
    series: dict[tuple[str, int, int], dict[int, list[float]]] = {}
    for r in runs:
        if r.tpmc is not None and r.hosts:
            key = (r.database, r.k_safety, r.warehouses)
            series.setdefault(key, {}).setdefault(r.hosts, []).append(r.tpmc)
    return {k: v for k, v in series.items() if len(v) >= 2}


def configuration_bars(runs: list[Run]) -> str:
    """Grouped bars: one group per configuration, one bar per (warehouses, clients)."""
    groups = configuration_groups(runs)
    if not groups:
        return ""
    bars = sorted({wc for g in groups.values() for wc in g})
    top = max(v for g in groups.values() for values in g.values() for v in values)
    ticks = axis_ticks(0, top * 1.05 if top > 0 else 1)
    y1 = ticks[-1]

    def y(v: float) -> float:
        return H - BOTTOM - v / y1 * (H - TOP - BOTTOM)

    group_width = (W - LEFT - RIGHT) / len(groups)
    bar_width = group_width * 0.8 / len(bars)
    parts = [
        f'<line class="axis" x1="{LEFT}" y1="{H - BOTTOM}" x2="{W - RIGHT}" y2="{H - BOTTOM}"/>',
        f'<line class="axis" x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{H - BOTTOM}"/>',
        f'<text class="label" transform="translate(14 {(TOP + H - BOTTOM) / 2}) rotate(-90)" '
        'text-anchor="middle">tpmC (median; whisker min–max)</text>',
    ]
    parts += [
        f'<line class="grid" x1="{LEFT}" y1="{y(t):.1f}" x2="{W - RIGHT}" y2="{y(t):.1f}"/>'
        f'<text class="tick" x="{LEFT - 6}" y="{y(t) + 4:.1f}" text-anchor="end">{num(t)}</text>'
        for t in ticks
    ]
    for g, (label, by_cell) in enumerate(groups.items()):
        x0 = LEFT + g * group_width + group_width * 0.1
        parts.append(
            f'<text class="tick" x="{LEFT + (g + 0.5) * group_width:.1f}" y="{H - BOTTOM + 16}" '
            f'text-anchor="middle">{html.escape(label)}</text>'
        )
        for b, cell in enumerate(bars):
            values = by_cell.get(cell)
            if not values:
                continue
            median, x = statistics.median(values), x0 + b * bar_width
            what = f"{label}; {cell[0]} warehouses, {cell[1]} clients: median {num(median)} tpmC of {len(values)}"
            parts.append(
                f'<rect class="bar" x="{x:.1f}" y="{y(median):.1f}" width="{bar_width * 0.9:.1f}" '
                f'height="{y(0) - y(median):.1f}" fill="{PALETTE[b % len(PALETTE)]}">'
                f"<title>{html.escape(what)}</title></rect>"
            )
            if len(values) > 1:
                mid = x + bar_width * 0.45
                parts.append(
                    f'<line class="whisker" x1="{mid:.1f}" y1="{y(min(values)):.1f}" x2="{mid:.1f}" '
                    f'y2="{y(max(values)):.1f}" stroke="#111"/>'
                )
    legend = "".join(
        f'<span class="key"><i style="background:{PALETTE[b % len(PALETTE)]}"></i>{w} warehouses, {c} clients</span>'
        for b, (w, c) in enumerate(bars)
    )
    return (
        f'<figure><svg class="chart" data-chart="configurations" viewBox="0 0 {W} {H}" width="{W}" '
        f'height="{H}" role="img">{"".join(parts)}</svg><figcaption>{legend}</figcaption></figure>'
    )


def hosts_chart(runs: list[Run]) -> str:
    """tpmC (median over runs) against hosts, one line per database, k-safety and warehouses."""
    series = hosts_series(runs)
    if not series:
        return ""
    points = {k: [(h, statistics.median(v)) for h, v in sorted(s.items())] for k, s in series.items()}
    p = Plot(
        [h for s in points.values() for h, _ in s],
        [t for s in points.values() for _, t in s],
        "hosts (database.deploy.replicas)",
        "tpmC (median of runs)",
        integer_x=True,
    )
    legend = []
    for i, ((db, k, wh), line) in enumerate(sorted(points.items())):
        name = f"{db}, k={k}, {wh} warehouses"
        p.line(line, PALETTE[i % len(PALETTE)], name)
        legend.append((name, PALETTE[i % len(PALETTE)]))
    return p.svg("hosts", legend)


def section(runs: list[Run]) -> str:
    """The experiments' part of the page; "" when the runs hold no such comparison."""
    bars, hosts = configuration_bars(runs), hosts_chart(runs)
    if not bars and not hosts:
        return ""
    return (
        "<h2>Experiments</h2>"
        + (f"<h3>tpmC per configuration</h3>{bars}" if bars else "")
        + (f"<h3>tpmC against hosts</h3>{hosts}" if hosts else "")
    )


def to_csv(runs: list[Run]) -> str:
    """One row per run (CSV_COLUMNS); empty cells where a run has no figure."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for r in runs:
        new_order = r.latency_ms.get("NEW_ORDER", {})
        writer.writerow(
            [
                r.name,
                r.start,
                r.database,
                r.hosts or "",
                r.k_safety if r.hosts else "",
                r.warehouses,
                r.clients,
                matrix_label(r.matrix),
                _cell(r.tpmc),
                _cell(r.transactions_per_second),
                _cell(new_order.get("p90")),
                _cell(new_order.get("p99")),
                r.phase,
                r.verdict,
                _cell(r.durability.durable if r.durability else None),
                _cell(r.consistency.passed if r.consistency else None),
            ]
        )
    return out.getvalue()


def _cell(value: float | bool | None) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return f"{value:.6g}" if isinstance(value, float) else str(value)
