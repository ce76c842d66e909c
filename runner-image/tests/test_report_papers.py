"""`tpcc report` beside a study: a BenchmarkRun of crds/samples/papers/ (its paper-values
annotation) with a synthetic status, read (pure), drawn as the study's figure with the study's
values as a second, dashed series or as paired bars, the table of values with ours and the
ratio, and the page rendered in a real headless Chromium."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import chromium
import pytest
import yaml
from test_report import ARTIFACTS, CHARTS_SCRIPT
from tpcc_runner.cli import main
from tpcc_runner.paper_values import SCALED, compare
from tpcc_runner.report_papers import bar_pairs, our_lines, paper_lines, run_section
from tpcc_runner.report_runs import read_runs

PAPERS = Path(__file__).resolve().parents[2] / "crds" / "samples" / "papers"
CPU = "database.deploy.values.resources.limits.cpu"
START = "2026-11-28T10:00:00Z"


def _manifest(study: str, name: str) -> dict:
    return yaml.safe_load((PAPERS / study / name).read_text())


def _configuration(clients: int, tpmc: float, **matrix: str) -> dict:
    return {
        "warehouses": 100,
        "clients": clients,
        **({"matrix": matrix} if matrix else {}),
        "tpmC": {"n": 1, "median": tpmc, "min": tpmc, "max": tpmc, "best": tpmc, "mean": tpmc},
    }


def fig4_run() -> dict:
    """VLDB Fig. 4 as the operator leaves it: every instance type at every client count of the
    sweep, ours half of what A.1 prints for M60 at 96 threads (17192.5 against 34385)."""
    run = _manifest("vldb2019", "fig4-instance-types.yaml")
    clients = run["spec"]["sweep"]["clients"]
    configurations = [
        _configuration(c, 17192.5 * (0.4 + 0.6 * c / 96) * {"8": 0.5, "16": 1, "32": 1.5}[cpu], **{CPU: cpu})
        for cpu in ("8", "16", "32")
        for c in clients
    ]
    status = {
        "phase": "Succeeded",
        "results": {"tpmC": 17192.5, "start": START, "measuredSeconds": 300},
        "sweep": {"cells": [{"state": "Succeeded"}] * len(configurations), "configurations": configurations},
    }
    return {**run, "kind": "BenchmarkRun", "status": status}


def fig7_run(scaled: str = "") -> dict:
    """The VoltDB study's Fig. 7, one run, as measured here at full size (docs/papers.md)."""
    run = copy.deepcopy(_manifest("voltdb", "fig7-sample-run.yaml"))
    if scaled:
        run["metadata"]["annotations"][SCALED] = scaled
    run["status"] = {
        "phase": "Succeeded",
        "results": {
            "tpmC": 86696.5,
            "aborts": 8864,
            "start": "2026-11-28T11:00:00Z",
            "measuredSeconds": 600,
            "transactions": {
                "NEW_ORDER": {"executed": 875829, "latencyMs": {"p90": 177.0}},
                "PAYMENT": {"executed": 1061656, "latencyMs": {"p90": 176.0}},
            },
        },
    }
    return run


def test_a_sweeps_study_values_are_lines_beside_ours():
    (run,) = read_runs(fig4_run(), "fig4.json")
    assert run.paper is not None and run.paper.caption().startswith("Kamsky, VLDB 2019, Fig. 4")
    assert len(run.paper.values) == 17 and len(run.configurations) == 45
    lines = paper_lines(run.paper.values)
    assert {k.label(): len(v) for k, v in lines.items()} == {"cpu=8": 7, "cpu=16": 7, "cpu=32": 3}
    assert lines[next(k for k in lines if k.label() == "cpu=32")] == [(64, 46449.0), (84, 50924.0), (94, 52329.0)]
    assert {k.label(): len(v) for k, v in our_lines(run.configurations, "tpmC").items()} == {
        "100 warehouses, cpu=8": 15,
        "100 warehouses, cpu=16": 15,
        "100 warehouses, cpu=32": 15,
    }
    html = run_section(run)
    assert 'data-chart="paper-sweep"' in html and html.count('class="quoted"') == 17
    assert html.count('stroke-dasharray="6 4"') == 3, "the study's three lines dashed"
    assert "Kamsky, VLDB 2019, Fig. 4 / App. A.1 (dashed, squares): cpu=32" in html
    # the table: each printed value, ours at its point and ours over the paper's
    row = re.search(r"<tr><td>96 clients, cpu=16</td>.*?</tr>", html).group(0)
    assert "34385" in row and "17,192" in row and "<td>0.5</td>" in row


def test_a_single_run_is_paired_bars_and_every_printed_count_in_the_table():
    (run,) = read_runs(fig7_run(), "fig7.json")
    assert bar_pairs(compare(run.paper.values, run.configurations)) == [
        ("30 warehouses, 300 clients: tpmC", 17226.21565209026, 86696.5)
    ]
    html = run_section(run)
    assert 'data-chart="paper-bars"' in html and html.count('class="bar paper"') == html.count('class="bar ours"') == 1
    for printed, ours, ratio in (
        ("17226.21565209026", "86,696", "5.03"),
        ("172361", "875,829", "5.08"),
        ("384568", "1,937,485", "5.04"),
        ("1738", "8,864", "5.1"),
    ):
        assert re.search(rf"<td>{printed} .*?</td><td>{ours} .*?</td><td>{ratio}</td>", html), printed
    assert "not comparable" not in html


def test_a_scaled_run_says_its_ratios_compare_nothing():
    (run,) = read_runs(fig7_run("600 s measured -> 30 s; 30 warehouses -> 1"), "fig7.json")
    html = run_section(run)
    assert "ours ÷ paper (scaled run: not comparable)" in html and "30 warehouses -&gt; 1" in html


def test_a_relation_is_in_the_table_and_a_run_without_paper_values_has_no_section():
    run = _manifest("voltdb", "fig11-clients.yaml")
    configurations = [
        {**_configuration(c, t), "warehouses": 20} for c, t in ((20, 1000), (140, 1400), (300, 1500), (1000, 1530))
    ]
    run["status"] = {"sweep": {"cells": [{}], "configurations": configurations}}
    (read,) = read_runs({**run, "kind": "BenchmarkRun"}, "fig11.json")
    html = run_section(read)
    assert "<td>300 clients against 20 clients</td>" in html and "+50.00%" in html and "+2.00%" in html
    assert "paper-sweep" not in html and "paper-bars" not in html, "relations are not drawn"
    del run["metadata"]["annotations"]["bench.tpcc.dev/paper-values"]
    (plain,) = read_runs({**run, "kind": "BenchmarkRun"}, "fig11.json")
    assert plain.paper is None and run_section(plain) == ""


@pytest.fixture(scope="module")
def papers_page(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("papers")
    files = [tmp / "fig4.json", tmp / "fig7.json"]
    files[0].write_text(json.dumps(fig4_run()))
    files[1].write_text(json.dumps(fig7_run("30 warehouses -> 1")))
    out = tmp / "papers.html"
    assert main(["report", *map(str, files), "--title", "Beside the papers", "-o", str(out)]) == 0
    return out


def test_the_page_draws_both_studies_without_a_script(papers_page, tmp_path):
    page = papers_page.read_text()
    assert "<script" not in page and "<h2>Beside the paper</h2>" in page
    seen = chromium.visit(papers_page, CHARTS_SCRIPT)
    assert seen.problems == []
    charts = {c["chart"]: c for c in json.loads(seen.evaluated)}
    assert charts["paper-sweep"]["paths"] == 6 and charts["paper-sweep"]["outside"] == 0
    assert charts["paper-bars"]["bars"] == 2 and charts["paper-bars"]["outside"] == 0
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "report-papers.png").write_bytes(seen.screenshot)
