"""`tpcc report`'s YCSB section: what the FoundationDB-vs-MongoDB study draws (throughput per
workload A-F, one bar per database configuration: MongoDB default, w=majority&j=true, transactions
of N operations) and, per run, the table YCSB prints (Operations, AverageLatency, Min, Max, 95th
and 99th percentile, Return counts).

Inputs: `tpcc ycsb run --results` documents and BenchmarkRuns of workload.kind ycsb (their
status.ycsb, merged over the runner pods, has no mean or minimum: those cells say so). Reading
(`split`) is pure; drawing is string building, with tpcc_runner.report's page and palette.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any

from tpcc_contract.ycsb.measurements import ORDER

from ..report_svg import BOTTOM, LEFT, PALETTE, RIGHT, TOP, H, W, axis_ticks, num

PRESETS = "abcdef"


@dataclass
class OperationRow:
    """One measurement as YCSB prints it; None where the document does not hold the number."""

    name: str
    operations: int
    average_us: float | None
    min_us: float | None
    max_us: float | None
    p95_us: float | None
    p99_us: float | None
    returns: dict[str, int] = field(default_factory=dict)


@dataclass
class YcsbRun:
    name: str
    database: str
    workload: str  # the preset (a..f), "" for CoreWorkload's defaults or a property file
    configuration: str  # "default", "w=majority, j=true", "transactions of 1000 ops", ...
    ops_per_second: float
    runtime_ms: int | None
    operations: list[OperationRow]
    start: str = ""

    @property
    def series(self) -> str:
        return f"{self.database} {self.configuration}"


def configuration(driver_options: dict[str, Any], operations_per_transaction: int) -> str:
    """The study's name for a database setting: its write and read concern and journal, and the
    transactions of N operations; "default" when none is set."""
    parts = []
    if driver_options.get("write_concern"):
        parts.append(f"w={driver_options['write_concern']}")
    if str(driver_options.get("journal", "")).lower() in ("true", "1", "yes"):
        parts.append("j=true")
    if driver_options.get("read_concern"):
        parts.append(f"readConcern={driver_options['read_concern']}")
    if operations_per_transaction > 1:
        parts.append(f"transactions of {operations_per_transaction} ops")
    return ", ".join(parts) or "default"


def _us(value: Any) -> float | None:
    return float(value) if value is not None else None


def _from_runner(doc: dict, name: str) -> YcsbRun:
    props = doc.get("properties") or {}
    rows = [
        OperationRow(
            op,
            int(s["Operations"]),
            _us(s.get("AverageLatency(us)")),
            _us(s.get("MinLatency(us)")),
            _us(s.get("MaxLatency(us)")),
            _us(s.get("95thPercentileLatency(us)")),
            _us(s.get("99thPercentileLatency(us)")),
            {k: int(v) for k, v in s.get("Return", {}).items()},
        )
        for op, s in doc["operations"].items()
    ]
    return YcsbRun(
        name,
        str(doc.get("db", "?")),
        str(doc.get("workload") or ""),
        configuration(doc.get("driver_options") or {}, int(props.get("operationspertransaction", 1))),
        float(doc["OVERALL"]["Throughput(ops/sec)"]),
        int(doc["OVERALL"]["RunTime(ms)"]),
        rows,
    )


def _from_benchmarkrun(obj: dict) -> YcsbRun:
    """status.ycsb: counts, errors and percentiles in ms of the merged histograms."""
    spec, merged = obj.get("spec") or {}, (obj.get("status") or {}).get("ycsb") or {}
    workload = spec.get("workload") or {}
    rows = []
    for op, s in (merged.get("operations") or {}).items():
        latency = s.get("latencyMs") or {}

        def us(key: str) -> float | None:
            return latency[key] * 1000 if key in latency else None

        count, errors = int(s.get("count", 0)), int(s.get("errors", 0))
        rows.append(
            OperationRow(
                op, count, None, None, us("max"), us("p95"), us("p99"), {"succeeded": count - errors, "failed": errors}
            )
        )
    return YcsbRun(
        obj["metadata"]["name"],
        str((spec.get("database") or {}).get("type", "?")),
        str(merged.get("workload") or (workload.get("ycsb") or {}).get("workload") or ""),
        configuration(
            workload.get("driverOptions") or {}, int((workload.get("ycsb") or {}).get("operationsPerTransaction", 1))
        ),
        float(merged.get("opsPerSecond", 0.0)),
        None,
        rows,
        str(merged.get("start", "")),
    )


def is_ycsb(doc: Any) -> bool:
    if not isinstance(doc, dict):
        return False
    if doc.get("kind") == "BenchmarkRun":
        return ((doc.get("spec") or {}).get("workload") or {}).get("kind") == "ycsb"
    return str(doc.get("command", "")).startswith("ycsb ")


def split(doc: Any, source: str, name: str) -> tuple[list[YcsbRun], Any]:
    """The YCSB runs in a document and what is left for the TPC-C report (None: nothing). A
    `tpcc ycsb load` document is refused: the report draws runs. A YCSB BenchmarkRun without
    status.ycsb (not finished) is left out, as a TPC-C run without results is drawn empty."""
    if isinstance(doc, dict) and isinstance(doc.get("items"), list):
        runs: list[YcsbRun] = []
        rest = []
        for item in doc["items"]:
            found, left = split(item, source, name)
            runs += found
            rest += [left] if left is not None else []
        return runs, ({**doc, "items": rest} if rest else None)
    if not is_ycsb(doc):
        return [], doc
    if doc.get("kind") == "BenchmarkRun":
        return ([_from_benchmarkrun(doc)] if (doc.get("status") or {}).get("ycsb") else []), None
    if doc.get("command") != "ycsb run":
        raise ValueError(
            f"{source}: a `tpcc {doc.get('command')}` document; the report draws `tpcc ycsb run --results` documents"
        )
    return [_from_runner(doc, name)], None


def _workload_key(workload: str) -> tuple[int, str]:
    return (PRESETS.index(workload) if workload in PRESETS else len(PRESETS), workload)


def throughput_table(runs: list[YcsbRun]) -> dict[str, dict[str, tuple[float, int]]]:
    """series -> workload -> (mean ops/s, runs): the study's figures as numbers."""
    cells: dict[str, dict[str, list[float]]] = {}
    for r in runs:
        cells.setdefault(r.series, {}).setdefault(r.workload, []).append(r.ops_per_second)
    return {
        s: {w: (sum(v) / len(v), len(v)) for w, v in sorted(by.items(), key=lambda kv: _workload_key(kv[0]))}
        for s, by in sorted(cells.items())
    }


# ---- drawing ------------------------------------------------------------------------------------


def throughput_chart(runs: list[YcsbRun]) -> str:
    """Grouped bars: one group per workload, one bar per database configuration (the study's
    throughput figures); a bar's title gives the mean and how many runs it holds."""
    table = throughput_table(runs)
    workloads = sorted({w for by in table.values() for w in by}, key=_workload_key)
    ticks = axis_ticks(0, max((v for by in table.values() for v, _ in by.values()), default=1) * 1.05 or 1)

    def y(v: float) -> float:
        return H - BOTTOM - v / ticks[-1] * (H - TOP - BOTTOM)

    parts = [
        f'<line class="axis" x1="{LEFT}" y1="{H - BOTTOM}" x2="{W - RIGHT}" y2="{H - BOTTOM}"/>',
        f'<text class="label" transform="translate(14 {(TOP + H - BOTTOM) / 2}) rotate(-90)" '
        f'text-anchor="middle">operations per second</text>',
    ]
    parts += [
        f'<line class="grid" x1="{LEFT}" y1="{y(t):.1f}" x2="{W - RIGHT}" y2="{y(t):.1f}"/>'
        f'<text class="tick" x="{LEFT - 6}" y="{y(t) + 4:.1f}" text-anchor="end">{num(t)}</text>'
        for t in ticks
    ]
    group = (W - LEFT - RIGHT) / max(1, len(workloads))
    bar = group * 0.8 / max(1, len(table))
    for i, w in enumerate(workloads):
        gx = LEFT + i * group + group * 0.1
        parts.append(
            f'<text class="tick" x="{gx + group * 0.4:.1f}" y="{H - BOTTOM + 16}" '
            f'text-anchor="middle">{html.escape(w.upper() or "custom")}</text>'
        )
        for j, (series, by) in enumerate(table.items()):
            if w not in by:
                continue
            value, n = by[w]
            parts.append(
                f'<rect class="bar" x="{gx + j * bar:.1f}" y="{y(value):.1f}" width="{bar - 1:.1f}" '
                f'height="{H - BOTTOM - y(value):.1f}" fill="{PALETTE[j % len(PALETTE)]}">'
                f"<title>{html.escape(series)}, workload {html.escape(w.upper())}: {num(value)} ops/s "
                f"({n} run{'s' if n > 1 else ''})</title></rect>"
            )
    legend = "".join(
        f'<span class="key"><i style="background:{PALETTE[j % len(PALETTE)]}"></i>{html.escape(s)}</span>'
        for j, s in enumerate(table)
    )
    return (
        f'<figure><svg class="chart" data-chart="ycsb-throughput" viewBox="0 0 {W} {H}" width="{W}" '
        f'height="{H}" role="img">{"".join(parts)}</svg><figcaption>{legend}</figcaption></figure>'
    )


def _throughput_rows(runs: list[YcsbRun]) -> str:
    table = throughput_table(runs)
    workloads = sorted({w for by in table.values() for w in by}, key=_workload_key)
    head = "".join(f"<th>{html.escape(w.upper() or 'custom')}</th>" for w in workloads)
    rows = "".join(
        f"<tr><td>{html.escape(s)}</td>"
        + "".join(
            f"<td>{num(by[w][0])}{f' ({by[w][1]} runs)' if by[w][1] > 1 else ''}</td>" if w in by else "<td>—</td>"
            for w in workloads
        )
        + "</tr>"
        for s, by in table.items()
    )
    return f'<table class="ycsb-throughput"><tr><th>ops/s</th>{head}</tr>{rows}</table>'


def _cell(value: float | None) -> str:
    """Microseconds as YCSB prints them: whole (HdrHistogram values), a mean to 0.1 below 100."""
    if value is None:
        return "—"
    return f"{value:,.0f}" if value >= 100 or float(value).is_integer() else f"{value:,.1f}"


def operations_table(run: YcsbRun) -> str:
    """YCSB's per-operation lines as a table, in YCSB's order (READ, UPDATE, ... , NAME-FAILED)."""

    def rank(row: OperationRow) -> tuple[int, str]:
        base = row.name.removesuffix("-FAILED")
        return (ORDER.index(base) if base in ORDER else len(ORDER), row.name)

    rows = "".join(
        f"<tr{' class=bad' if row.name.endswith('-FAILED') else ''}><td>{html.escape(row.name)}</td>"
        f"<td>{row.operations:,}</td>"
        + "".join(f"<td>{_cell(v)}</td>" for v in (row.average_us, row.min_us, row.max_us, row.p95_us, row.p99_us))
        + f"<td>{html.escape(', '.join(f'{k}={v:,}' for k, v in row.returns.items()))}</td></tr>"
        for row in sorted(run.operations, key=rank)
    )
    return (
        '<table class="ycsb-operations"><tr><th>operation</th><th>Operations</th><th>Average (us)</th>'
        "<th>Min (us)</th><th>Max (us)</th><th>95th (us)</th><th>99th (us)</th><th>Return</th></tr>"
        f"{rows}</table>"
    )


def section(runs: list[YcsbRun]) -> str:
    """The YCSB part of the page: the throughput figure and table, then each run's operations."""
    out = ["<h2>YCSB throughput per workload and configuration</h2>", throughput_chart(runs), _throughput_rows(runs)]
    for r in sorted(runs, key=lambda r: (_workload_key(r.workload), r.series, r.start, r.name)):
        runtime = f", {r.runtime_ms / 1000:g} s" if r.runtime_ms is not None else ""
        out.append(
            f"<h3>{html.escape(r.name)}: workload {html.escape(r.workload.upper() or 'custom')}, "
            f"{html.escape(r.series)} — {num(r.ops_per_second)} ops/s{runtime}</h3>{operations_table(r)}"
        )
    if any(r.runtime_ms is None for r in runs):
        out.append(
            '<p class="missing">BenchmarkRuns hold the merged percentiles and counts only (no mean '
            "or minimum); the runner pods' results documents have every column.</p>"
        )
    return "".join(out)
