"""`tpcc report`: one self-contained HTML page (inline CSS and SVG, nothing fetched when it is
viewed) from the results of a run or of a history of runs.

Inputs: what `tpcc run --results` writes, a BenchmarkRun as `kubectl get br X -o json` shows
it, or a list of them (`kubectl get br -o json`); or straight from the cluster through kubectl.
One run: tpmC over time with the warmup and every fault marked, latency percentiles per
transaction, the durability and consistency verdicts. Several: also the tpmC trend with the
baseline and the change points (tpcc_runner.changepoints), and, where runs differ only in
clients, the sweep curves. A BenchmarkRun that reproduces a study's figure (its
bench.tpcc.dev/paper-values) also gets the study's printed values beside ours (report_papers).
Reading the documents (`read_runs`) is pure; drawing is string building.
"""

from __future__ import annotations

import argparse
import datetime as dt
import html
import json
import math
import shutil
import subprocess
from pathlib import Path
from typing import Any

from tpcc_contract.tpcc import TRANSACTIONS

from . import changepoints, report_experiments, report_papers
from .changepoints import HistoryPoint
from .report_runs import PERCENTILES, Acid, Run, distinct, matrix_label, read_runs
from .report_svg import BOTTOM, LEFT, PALETTE, RIGHT, TOP, H, Plot, W, num
from .ycsb import report as ycsb_report


def timeline_chart(run: Run) -> str:
    if not run.timeline:
        return '<p class="missing">no timeline in the results</p>'
    xs = [t for t, _ in run.timeline] + [t + 10 for t, _ in run.timeline]
    xs += [f.injected for f in run.faults if f.injected is not None]
    p = Plot(xs, [v for _, v in run.timeline] or [0], "seconds from the start of the measured interval", "tpmC")
    if run.warmup_seconds or min(xs) < 0:
        p.band(min(-run.warmup_seconds, min(xs)), 0, "warmup", f"warmup ({run.warmup_seconds:g} s, not measured)")
    for f in run.faults:
        if f.injected is None:
            continue
        end = f.recovered if f.recovered is not None else f.injected
        p.band(f.injected, end, "fault", f"fault {f.number}: {f.action} {f.target}")
        p.vline(
            f.injected,
            "fault-line",
            f"fault {f.number}: {f.action} {f.target}, "
            + (f"recovered after {f.recovered - f.injected:.1f} s" if f.recovered is not None else f.state),
        )
    # each point is a 10 s step: drawn at its middle
    p.line([(t + 5, v) for t, v in run.timeline], PALETTE[0], "tpmC (10 s steps)")
    return p.svg("timeline")


def latency_chart(run: Run) -> str:
    """Grouped bars per transaction type, log scale (max is often 100x p50)."""
    types = [t for t in TRANSACTIONS if t in run.latency_ms] or sorted(run.latency_ms)
    if not types:
        return '<p class="missing">no latencies in the results</p>'
    values = [run.latency_ms[t].get(q, 0) for t in types for q in PERCENTILES]
    positive = [v for v in values if v > 0] or [1.0]
    lo, hi = 10 ** math.floor(math.log10(min(positive))), 10 ** math.ceil(math.log10(max(positive)))
    hi = max(hi, lo * 10)

    def y(v: float) -> float:
        v = max(v, lo)
        return H - BOTTOM - (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)) * (H - TOP - BOTTOM)

    parts = [
        f'<line class="axis" x1="{LEFT}" y1="{H - BOTTOM}" x2="{W - RIGHT}" y2="{H - BOTTOM}"/>',
        f'<text class="label" transform="translate(14 {(TOP + H - BOTTOM) / 2}) rotate(-90)" '
        f'text-anchor="middle">latency, ms (log scale)</text>',
    ]
    decade = lo
    while decade <= hi:
        parts.append(
            f'<line class="grid" x1="{LEFT}" y1="{y(decade):.1f}" x2="{W - RIGHT}" y2="{y(decade):.1f}"/>'
            f'<text class="tick" x="{LEFT - 6}" y="{y(decade) + 4:.1f}" text-anchor="end">'
            f"{num(decade)}</text>"
        )
        decade *= 10
    group = (W - LEFT - RIGHT) / max(1, len(types))
    bar = group * 0.8 / len(PERCENTILES)
    for i, t in enumerate(types):
        gx = LEFT + i * group + group * 0.1
        parts.append(
            f'<text class="tick" x="{gx + group * 0.4:.1f}" y="{H - BOTTOM + 16}" '
            f'text-anchor="middle">{html.escape(t)}</text>'
        )
        for j, q in enumerate(PERCENTILES):
            v = run.latency_ms[t].get(q, 0)
            top = y(v)
            parts.append(
                f'<rect class="bar" x="{gx + j * bar:.1f}" y="{top:.1f}" width="{bar - 1:.1f}" '
                f'height="{H - BOTTOM - top:.1f}" fill="{PALETTE[j]}">'
                f"<title>{t} {q}: {v:.2f} ms</title></rect>"
            )
    legend = "".join(
        f'<span class="key"><i style="background:{PALETTE[j]}"></i>{q}</span>' for j, q in enumerate(PERCENTILES)
    )
    return (
        f'<figure><svg class="chart" data-chart="latency" viewBox="0 0 {W} {H}" width="{W}" height="{H}" '
        f'role="img">{"".join(parts)}</svg><figcaption>{legend}</figcaption></figure>'
    )


def comparable(runs: list[Run], to: Run) -> list[Run]:
    """The runs of the same configuration as `to` (database, warehouses, clients): a trend."""
    return [r for r in runs if (r.database, r.warehouses, r.clients) == (to.database, to.warehouses, to.clients)]


def trend_chart(runs: list[Run], baseline: float | None) -> str:
    """tpmC per run with the baseline and the change points of tpmC (E-Divisive, as `tpcc
    changepoints` finds them), and every metric's change points listed below."""
    measured = [(r, r.tpmc) for r in runs if r.tpmc is not None]
    if len(measured) < 2:
        return '<p class="missing">fewer than two runs with results: no trend</p>'
    values = [tpmc for _, tpmc in measured]
    p = Plot(
        list(range(1, len(measured) + 1)),
        values + ([baseline] if baseline else []),
        "run (oldest first)",
        "tpmC",
        integer_x=True,
    )
    if baseline is not None:
        p.hline(baseline, "baseline", f"baseline {num(baseline)}")
    analysis = changepoints.analyze(
        [
            HistoryPoint(r.name, r.start, tpmc, {t: q["p99"] for t, q in r.latency_ms.items() if "p99" in q})
            for r, tpmc in measured
        ]
    )
    for c in analysis.change_points.get(changepoints.TPMC, []):
        p.vline(
            c.index + 0.5,
            "change",
            f"change point: {num(c.mean_before)} → {num(c.mean_after)} ({c.change_percent:+.1f}%) from {c.name}",
        )
    p.line([(i + 1, v) for i, v in enumerate(values)], PALETTE[0], "tpmC per run")
    listed = [c for m in sorted(analysis.change_points) for c in analysis.change_points[m]]
    items = "".join(
        f"<li>{html.escape(c.metric)}: mean {num(c.mean_before)} → {num(c.mean_after)} "
        f"({c.change_percent:+.1f}%, p {c.pvalue:.2g}) from run {c.index + 1}, {html.escape(c.name)}</li>"
        for c in listed
    )
    return p.svg("trend") + (
        f'<ul class="changes">{items}</ul>'
        if items
        else f'<p class="missing">no change point ({html.escape(analysis.library)}, p &le; {analysis.max_pvalue:g})</p>'
    )


def sweep_charts(runs: list[Run]) -> str:
    """tpmC and NewOrder p90 against clients, one curve per database, warehouse count and
    configuration (matrix values, hosts, k-safety) with at least two client counts."""
    curves: dict[tuple[str, int, str], dict[int, list[Run]]] = {}
    for r in runs:
        if r.tpmc is not None:
            hosts = f"{r.hosts} hosts k={r.k_safety}" if r.hosts else ""
            shape = ", ".join(filter(None, [hosts, matrix_label(r.matrix)]))
            curves.setdefault((r.database, r.warehouses, shape), {}).setdefault(r.clients, []).append(r)
    curves = {k: v for k, v in curves.items() if len(v) >= 2}
    if not curves:
        return ""
    out = []
    for chart, label, value in (
        ("sweep-tpmc", "tpmC (mean of runs)", lambda r: r.tpmc),
        (
            "sweep-latency",
            "NEW_ORDER p90, ms (mean of runs)",
            lambda r: r.latency_ms.get("NEW_ORDER", {}).get("p90", 0),
        ),
    ):
        series = {k: [(c, sum(map(value, rs)) / len(rs)) for c, rs in sorted(v.items())] for k, v in curves.items()}
        p = Plot(
            [c for s in series.values() for c, _ in s],
            [y for s in series.values() for _, y in s],
            "clients",
            label,
            integer_x=True,
        )
        legend = []
        for i, ((db, wh, shape), points) in enumerate(sorted(series.items())):
            name = f"{db}, {wh} warehouses" + (f", {shape}" if shape else "")
            p.line(points, PALETTE[i % len(PALETTE)], name)
            legend.append((name, PALETTE[i % len(PALETTE)]))
        out.append(p.svg(chart, legend))
    return "".join(out)


def _verdicts(run: Run) -> str:
    def badge(ok: bool | None, text: str) -> str:
        css = "na" if ok is None else "ok" if ok else "bad"
        return f'<span class="badge {css}">{html.escape(text)}</span>'

    d, c = run.durability, run.consistency
    if d is None:
        durability = badge(None, "not verified")
    else:
        durability = (
            badge(d.durable, "durable" if d.durable else f"{d.lost:,} acknowledged NewOrders lost")
            + f"<p>{d.found:,} of {d.acknowledged:,} acknowledged NewOrders found in {d.ledgers} "
            f"ledgers; {d.unknown_outcome:,} of unknown outcome</p>"
        )
    rows = "".join(
        f'<tr class="{"ok" if x.passed else "bad"}"><td>{x.number}</td><td>{"pass" if x.passed else "FAIL"}'
        f"</td><td>{x.checked:,}</td><td>{x.violations:,}</td><td>{html.escape(x.example)}</td></tr>"
        for x in (c.conditions if c else [])
    )
    consistency = (
        badge(None, "not checked")
        if c is None
        else (
            badge(
                c.passed,
                "all 12 conditions hold"
                if c.passed
                else "violated: " + ", ".join(str(x.number) for x in c.conditions if not x.passed),
            )
            + "<table><tr><th>clause 3.3.2.</th><th>verdict</th><th>checked</th><th>violations</th>"
            f"<th>example</th></tr>{rows}</table>"
        )
    )
    return (
        f'<div class="verdicts" data-chart="verdicts"><section><h3>Durability</h3>{durability}</section>'
        f"<section><h3>Consistency</h3>{consistency}</section>{_acid_section(run.acid, badge)}</div>"
    )


def _acid_section(a: Acid | None, badge) -> str:
    if a is None:
        return ""
    counts = ", ".join(f"{n} {state}" for state, n in a.counts.items() if n)
    rows = "".join(
        f'<tr class="{"bad" if status in ("failed", "error") else "ok"}"><td>{html.escape(test)}'
        f"</td><td>{html.escape(status)}</td><td>{html.escape(reason)}</td></tr>"
        for test, status, reason in a.tests
    )
    return (
        f'<section data-chart="acid"><h3>ACID tests (clause 3)</h3>{badge(a.passed, counts or "none run")}'
        f"<table><tr><th>test</th><th>verdict</th><th>reason or evidence</th></tr>{rows}</table></section>"
    )


def _transactions_table(run: Run) -> str:
    """Per type: the outcomes (rollbacks apart from errors), the retries, the latency from the minimum up."""
    if not run.counts:
        return ""
    quantiles = ("min", "p50", "p90", "p99", "max")
    head = "".join(
        f"<th>{h}</th>"
        for h in ("type", "committed", "rollbacks", "errors", "unknown", "retries", *(f"{q} ms" for q in quantiles))
    )
    rows = "".join(
        f"<tr><td>{t}</td><td>{c.committed:,}</td><td>{c.rollbacks:,}</td><td>{c.errors:,}</td>"
        f"<td>{c.unknown:,}</td><td>{c.retries:,}</td>"
        + "".join(f"<td>{run.latency_ms.get(t, {}).get(q, 0):.2f}</td>" for q in quantiles)
        + "</tr>"
        for t, c in run.counts.items()
    )
    return f'<h3>Transactions in the measured window</h3><table data-chart="transactions"><tr>{head}</tr>{rows}</table>'


def _mib(n: int | None) -> str:
    return "n/a" if n is None else f"{n / 2**20:,.1f} MiB"


def _server_section(run: Run) -> str:
    s = run.server
    if s is None:
        return ""
    sizes = ", ".join(f"{k} {_mib(v)}" for k, v in s.size_bytes.items())
    css = {"agree": "ok", "disagree": "bad"}.get(s.verdict, "na")
    rows = "".join(
        f'<tr class="{"ok" if c["agrees"] else "bad"}"><td>{html.escape(c["counter"])}</td>'
        f"<td>{html.escape(c['what'])}</td><td>{c['client']:,}</td><td>{c['server']:,}</td>"
        f"<td>{c['difference']:+,}</td><td>±{c['allowed']:,}</td></tr>"
        for c in s.comparisons
    )
    table = (
        (
            "<table><tr><th>server counter</th><th>of</th><th>clients</th><th>server</th><th>difference</th>"
            f"<th>allowed</th></tr>{rows}</table>"
        )
        if rows
        else ""
    )
    return (
        f'<section data-chart="server"><h3>Server counters (VLDB 4.6.6) and database size</h3>'
        f'<span class="badge {css}">clients and server: {html.escape(s.verdict)}</span>'
        f"<p>{html.escape(s.reason)}</p><p>database: {sizes}</p>{table}</section>"
    )


def _run_section(run: Run) -> str:
    facts = [
        ("database", run.database),
        ("warehouses", run.warehouses),
        ("clients", run.clients),
        ("tpmC", num(run.tpmc) if run.tpmc is not None else "none"),
        ("transactions/s", num(run.transactions_per_second) if run.transactions_per_second is not None else "?"),
        ("measured", f"{run.measured_seconds:g} s"),
        ("warmup", f"{run.warmup_seconds:g} s"),
        ("start", run.start or "?"),
    ]
    if run.phase:
        facts.append(("phase", run.phase + (f" ({run.reason})" if run.reason else "")))
    if run.verdict:
        facts.append(("verdict", run.verdict))
    dl = "".join(f"<dt>{k}</dt><dd>{html.escape(str(v))}</dd>" for k, v in facts)
    faults = "".join(
        f"<li>fault {f.number}: {html.escape(f.action)} {html.escape(f.target)} — {html.escape(f.state)}"
        + (f", injected at {f.injected:.1f} s" if f.injected is not None else "")
        + (
            f", recovered after {f.recovered - f.injected:.1f} s"
            if f.recovered is not None and f.injected is not None
            else ""
        )
        + "</li>"
        for f in run.faults
    )
    return (
        f'<h2>Run {html.escape(run.name)}</h2><dl class="facts">{dl}</dl>'
        f"<h3>tpmC over time</h3>{timeline_chart(run)}"
        + (f'<ul class="faults">{faults}</ul>' if faults else "")
        + f"<h3>Latency percentiles per transaction</h3>{latency_chart(run)}{_transactions_table(run)}"
        + f"{_server_section(run)}{_verdicts(run)}"
    )


CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1f2937;\
margin:24px auto;max-width:820px;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;border-bottom:1px solid #e5e7eb;padding-bottom:4px;margin-top:32px}
h3{font-size:15px;margin:20px 0 6px}figure{margin:0}svg.chart{max-width:100%;height:auto;background:#fff}
.axis{stroke:#6b7280}.grid{stroke:#eef0f3}.tick,.label,.marker-label{font-size:11px;fill:#4b5563}
.series{fill:none;stroke-width:2}.warmup{fill:#e5e7eb;opacity:.7}.fault{fill:#fecaca;opacity:.6}
.fault-line{stroke:#dc2626;stroke-width:1.5;stroke-dasharray:4 3}\
.baseline{stroke:#16a34a;stroke-width:1.5;stroke-dasharray:6 4}
.change{stroke:#9333ea;stroke-width:1.5;stroke-dasharray:2 3}figcaption{font-size:12px;color:#4b5563}
.key{margin-right:14px}.key i{display:inline-block;width:10px;height:10px;margin-right:4px;border-radius:2px}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:8px 0}\
.facts dt{color:#6b7280}.facts dd{margin:0}
.verdicts{display:grid;grid-template-columns:1fr 1fr;gap:16px;margin-top:16px}.verdicts p{margin:6px 0}
.badge{display:inline-block;padding:2px 10px;border-radius:12px;font-weight:600}\
.badge.ok{background:#dcfce7;color:#166534}
.badge.bad{background:#fee2e2;color:#991b1b}.badge.na{background:#f3f4f6;color:#4b5563}
table{border-collapse:collapse;margin-top:8px;font-size:12px}\
td,th{padding:2px 6px;border-bottom:1px solid #f3f4f6;text-align:left}
tr.bad td{background:#fef2f2}.missing{color:#6b7280;font-style:italic}\
.changes{font-size:12px;color:#4b5563;margin:4px 0}
"""


def page(title: str, body: list[str]) -> str:
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f'<meta name="viewport" content="width=device-width,initial-scale=1"><style>{CSS}</style></head>'
        f"<body>{''.join(body)}</body></html>\n"
    )


def render(runs: list[Run], title: str = "TPC-C report", baseline: float | None = None, appendix: str = "") -> str:
    """The page: the latest run in detail; with several runs the history and the sweeps too;
    appendix (HTML, e.g. the YCSB section) last."""
    if not runs:
        raise ValueError("no runs to report")
    runs = sorted(runs, key=lambda r: r.start)
    latest = runs[-1]
    baseline = baseline if baseline is not None else next((r.baseline for r in reversed(runs) if r.baseline), None)
    body = [
        f"<h1>{html.escape(title)}</h1><p>{len(runs)} run{'s' if len(runs) > 1 else ''}, "
        f"generated {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC</p>"
    ]
    if len(runs) > 1:
        rows = "".join(
            f"<tr><td>{html.escape(r.name)}</td><td>{html.escape(r.start)}</td><td>{r.database}</td>"
            f"<td>{r.warehouses}</td><td>{r.clients}</td>"
            f"<td>{num(r.tpmc) if r.tpmc is not None else '—'}</td>"
            f"<td>{html.escape(r.verdict or r.phase)}</td></tr>"
            for r in runs
        )
        body.append(
            f"<h2>History</h2><h3>tpmC trend: {html.escape(latest.database)}, {latest.warehouses} "
            f"warehouses, {latest.clients} clients</h3>{trend_chart(comparable(runs, latest), baseline)}"
            "<table><tr><th>run</th><th>start</th><th>database</th><th>warehouses</th><th>clients</th>"
            f"<th>tpmC</th><th>verdict</th></tr>{rows}</table>"
        )
        sweeps = sweep_charts(runs)
        if sweeps:
            body.append(f"<h2>Sweeps</h2>{sweeps}")

        body.append(report_experiments.section(runs))
    body.append(report_papers.section(runs))
    body.append(_run_section(latest))
    body.append(appendix)
    return page(title, body)


# ---- CLI ----------------------------------------------------------------------------------------


def from_cluster(
    kubectl: str, resource: str, namespace: str | None, name: str | None = None, selector: str | None = None
) -> Any:
    """`kubectl get <resource>` as JSON (the cluster I/O of this command)."""
    if shutil.which(kubectl) is None:
        raise ValueError(f"{kubectl} not found: needed to read {resource} from the cluster")
    cmd = [
        kubectl,
        "get",
        resource,
        *([name] if name else []),
        "-o",
        "json",
        *(["-n", namespace] if namespace else []),
        *(["-l", selector] if selector else []),
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise ValueError(f"{' '.join(cmd)}: {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else 'failed'}")
    return json.loads(out.stdout)


def add_parser(sub: argparse._SubParsersAction) -> None:
    rp = sub.add_parser("report", help="one self-contained HTML page from results or BenchmarkRuns")
    rp.add_argument(
        "files", nargs="*", metavar="FILE", help="`tpcc run --results` documents, `kubectl get br -o json` output"
    )
    rp.add_argument("--run", metavar="NAME", help="read this BenchmarkRun from the cluster (kubectl)")
    rp.add_argument(
        "--history", metavar="RUN", help="read the BenchmarkResults of this run from the cluster (its history)"
    )
    rp.add_argument("--namespace", "-n", default=None)
    rp.add_argument("--kubectl", default="kubectl")
    rp.add_argument("--baseline", type=float, default=None, help="tpmC baseline of the trend")
    rp.add_argument("--title", default=None, help="default: TPC-C report (YCSB report with YCSB results only)")
    rp.add_argument("--output", "-o", required=True, metavar="HTML")
    rp.add_argument("--csv", metavar="FILE", help="also one CSV row per TPC-C run (the figures' data)")
    rp.set_defaults(metrics_port=0, verbose=False)


def cmd_report(args, metrics=None) -> int:

    runs: list[Run] = []
    ycsb_runs: list[ycsb_report.YcsbRun] = []

    def read(doc: Any, source: str, name: str) -> None:
        found, rest = ycsb_report.split(doc, source, name)
        ycsb_runs.extend(found)
        if rest is not None:
            runs.extend(read_runs(rest, source))

    for f in args.files:
        try:
            doc = json.loads(Path(f).read_text())
        except json.JSONDecodeError as e:
            raise ValueError(f"{f}: not JSON ({e})") from None
        read(doc, f, Path(f).stem)
    if args.history:
        read(
            from_cluster(
                args.kubectl,
                "benchmarkresults.bench.tpcc.dev",
                args.namespace,
                selector=f"bench.tpcc.dev/run={args.history}",
            ),
            "cluster",
            args.history,
        )
    if args.run:
        read(from_cluster(args.kubectl, "benchmarkruns.bench.tpcc.dev", args.namespace, args.run), "cluster", args.run)
    if not runs and not ycsb_runs:
        raise ValueError("no runs: give result files, --run NAME or --history RUN")
    runs = distinct(runs)
    title = args.title or ("TPC-C report" if runs else "YCSB report")
    ycsb = ycsb_report.section(ycsb_runs) if ycsb_runs else ""
    text = render(runs, title, args.baseline, ycsb) if runs else page(title, [f"<h1>{html.escape(title)}</h1>", ycsb])
    Path(args.output).write_text(text)
    if args.csv:
        Path(args.csv).write_text(report_experiments.to_csv(runs))
    print(f"tpcc report: {len(runs) + len(ycsb_runs)} runs -> {args.output}")
    return 0
