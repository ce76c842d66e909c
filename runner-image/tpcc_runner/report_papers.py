"""`tpcc report`'s side-by-side with a study: for a BenchmarkRun that reproduces a figure of one
of the four studies (its bench.tpcc.dev/paper-values annotation, tpcc_runner.paper_values), the
study's printed values beside ours:

- a figure in the study's shape: throughput against clients where the study prints a value per
  client count (VLDB Figs 1 and 4), ours one solid line per configuration and the study's a dashed
  line with square markers in the same colour; else paired bars, the study's and ours, per value;
- a table: each printed value (as printed, with where), ours at its point, ours over the paper's.
  A run shrunk by hack/papers.sh --scaled (bench.tpcc.dev/scaled) is said to be not comparable.

Which values go together is decided by pure functions (tested without drawing); drawing is
string building like report.py's.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import replace

from .paper_values import THROUGHPUTS, Comparison, Measured, PaperValue, Point, compare
from .report_runs import Run
from .report_svg import BOTTOM, LEFT, PALETTE, RIGHT, TOP, H, Plot, W, axis_ticks, num

PAPER_COLOR = "#6b7280"  # the study's bar: grey beside ours
DRAWN = (*THROUGHPUTS, "loadOpsPerSecond")  # what a figure draws (counts stay in the table)


Line = list[tuple[int, float]]  # (clients, throughput)


def paper_lines(values: Sequence[PaperValue]) -> dict[Point, Line]:
    """The study's absolute throughputs per client count, one line per warehouses and matrix
    values (the point without its clients); {} unless some line has two client counts."""
    lines: dict[Point, Line] = {}
    for v in values:
        if v.relative_to is None and v.metric in DRAWN and v.point.clients is not None:
            lines.setdefault(replace(v.point, clients=None), []).append((v.point.clients, v.number))
    return {k: sorted(p) for k, p in lines.items()} if any(len(p) >= 2 for p in lines.values()) else {}


def our_lines(ours: Sequence[Measured], metric: str) -> dict[Point, Line]:
    """Our configurations with `metric`, one line per warehouses and matrix values, by clients."""
    lines: dict[Point, Line] = {}
    for m in ours:
        if metric in m.values:
            key = Point(m.warehouses, None, tuple(m.matrix.items()))
            lines.setdefault(key, []).append((m.clients, m.values[metric]))
    return {k: sorted(p) for k, p in lines.items()}


def _line_chart(run: Run, values: Sequence[PaperValue], lines: dict[Point, Line]) -> str:
    metric = next(v.metric for v in values if v.relative_to is None and v.metric in DRAWN)
    ours = sorted(our_lines(run.configurations, metric).items(), key=lambda kv: kv[0].label())
    everything = [p for line in (*lines.values(), *(line for _, line in ours)) for p in line]
    p = Plot([c for c, _ in everything], [y for _, y in everything], "clients", metric, integer_x=True)
    legend = []
    for i, (key, points) in enumerate(ours):
        p.line(points, PALETTE[i % len(PALETTE)], f"ours: {key.label()}")
        legend.append((f"ours: {key.label()}", PALETTE[i % len(PALETTE)]))
    caption = run.paper.short_caption() if run.paper else ""
    for j, (key, points) in enumerate(sorted(lines.items(), key=lambda kv: kv[0].label())):
        # the colour of our line at the same warehouses and matrix values, so the two read together
        same = (k for k, (o, _) in enumerate(ours) if key.matches(o.warehouses or 0, 0, dict(o.matrix)))
        color = PALETTE[next(same, len(ours) + j) % len(PALETTE)]
        name = f"{caption} (dashed, squares): {key.label()}"
        p.line(points, color, name, dashed=True)
        legend.append((name, color))
    return p.svg("paper-sweep", legend)


def bar_pairs(comparisons: Sequence[Comparison]) -> list[tuple[str, float, float | None]]:
    """(label, the paper's, ours) of each absolute throughput, one per value and configuration."""
    return [
        (f"{c.configuration or c.value.label()}: {c.value.metric}", c.value.number, c.ours)
        for c in comparisons
        if c.value.relative_to is None and c.value.metric in DRAWN
    ]


def _bar_chart(pairs: list[tuple[str, float, float | None]], caption: str) -> str:
    ticks = axis_ticks(0, max(max(paper, ours or 0) for _, paper, ours in pairs) * 1.05 or 1)

    def y(v: float) -> float:
        return H - BOTTOM - v / ticks[-1] * (H - TOP - BOTTOM)

    group = (W - LEFT - RIGHT) / len(pairs)
    parts = [
        f'<line class="axis" x1="{LEFT}" y1="{H - BOTTOM}" x2="{W - RIGHT}" y2="{H - BOTTOM}"/>',
        *(
            f'<line class="grid" x1="{LEFT}" y1="{y(t):.1f}" x2="{W - RIGHT}" y2="{y(t):.1f}"/>'
            f'<text class="tick" x="{LEFT - 6}" y="{y(t) + 4:.1f}" text-anchor="end">{num(t)}</text>'
            for t in ticks
        ),
    ]
    for g, (label, paper, ours) in enumerate(pairs):
        x0 = LEFT + g * group + group * 0.1
        if len(pairs) <= 8:
            parts.append(
                f'<text class="tick" x="{x0 + group * 0.4:.1f}" y="{H - BOTTOM + 16}" text-anchor="middle">'
                f"{html.escape(label)}</text>"
            )
        for b, (who, v, color) in enumerate((("paper", paper, PAPER_COLOR), ("ours", ours, PALETTE[0]))):
            if v is None:
                continue
            parts.append(
                f'<rect class="bar {who}" x="{x0 + b * group * 0.4:.1f}" y="{y(v):.1f}" '
                f'width="{group * 0.38:.1f}" height="{y(0) - y(v):.1f}" fill="{color}">'
                f"<title>{html.escape(f'{label}, {who}: {num(v)}')}</title></rect>"
            )
    legend = "".join(
        f'<span class="key"><i style="background:{c}"></i>{html.escape(n)}</span>'
        for n, c in ((f"paper: {caption}", PAPER_COLOR), ("ours", PALETTE[0]))
    )
    return (
        f'<figure><svg class="chart" data-chart="paper-bars" viewBox="0 0 {W} {H}" width="{W}" height="{H}" '
        f'role="img">{"".join(parts)}</svg><figcaption>{legend}</figcaption></figure>'
    )


def _table(comparisons: Sequence[Comparison], scaled: str) -> str:
    ratio_head = "ours ÷ paper" + (" (scaled run: not comparable)" if scaled else "")
    rows = "".join(
        f"<tr><td>{html.escape(c.value.label())}</td><td>{html.escape(c.value.metric)}</td>"
        f"<td>{html.escape(c.value.printed)} <small>({html.escape(c.value.where)})</small></td>"
        f"<td>{html.escape(c.ours_text())}"
        + (f" <small>({html.escape(c.configuration)})</small>" if c.configuration else "")
        + f"</td><td>{f'{c.ratio:.3g}' if c.ratio is not None else '—'}</td></tr>"
        for c in comparisons
    )
    return (
        '<table data-chart="paper-table"><tr><th>point</th><th>metric</th><th>paper, as printed</th>'
        f"<th>ours</th><th>{html.escape(ratio_head)}</th></tr>{rows}</table>"
    )


def run_section(run: Run) -> str:
    """One run's side-by-side with its study; "" for a run without paper values."""
    if run.paper is None:
        return ""
    comparisons = compare(run.paper.values, run.configurations)
    lines, pairs = paper_lines(run.paper.values), bar_pairs(comparisons)
    if lines:
        chart = _line_chart(run, run.paper.values, lines)
    else:
        chart = _bar_chart(pairs, run.paper.short_caption()) if pairs else ""
    scaled = (
        f'<p class="missing">scaled to this machine ({html.escape(run.paper.scaled)}): ours is not the study\'s scale, '
        "the ratios compare nothing</p>"
        if run.paper.scaled
        else ""
    )
    return (
        f"<h3>{html.escape(run.name)}: {html.escape(run.paper.caption())}</h3>{scaled}{chart}"
        f"{_table(comparisons, run.paper.scaled)}"
    )


def section(runs: Sequence[Run]) -> str:
    """The page's part for the runs that reproduce a study's figure; "" when none does."""
    parts = [run_section(r) for r in runs if r.paper is not None]
    return f"<h2>Beside the paper</h2>{''.join(parts)}" if parts else ""
