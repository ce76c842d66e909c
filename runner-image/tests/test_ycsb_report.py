"""`tpcc report`'s YCSB section on results documents of real runs: tests/fixtures/ycsb/ holds what
`runner-image/bench/papers_ycsb.py --duration 5` wrote against SecantusDB and VoltDB 10.1.1 (the
study's suite: workloads A-F, MongoDB default / w=majority&j=true / transactions of 1,000
operations), a few of them kept. The page must show what YCSB printed for each run, one bar per
configuration and workload, and render in a real Chromium."""

from __future__ import annotations

import copy
import json
import re
import shutil
from pathlib import Path

import chromium
import pytest
from tpcc_contract.ycsb import results
from tpcc_contract.ycsb.measurements import Measurements
from tpcc_runner.cli import main
from tpcc_runner.report_svg import num
from tpcc_runner.ycsb.report import section, split, throughput_table

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "ycsb"
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
RUNS = sorted(p for p in FIXTURES.glob("*.json") if not p.name.endswith("-load.json"))
CONFIGURATION = {
    "default": "default",
    "wmajority-jtrue": "w=majority, j=true",
    "transactions": "transactions of 1000 ops",
}


def doc_of(path: Path) -> dict:
    return json.loads(path.read_text())


def expected_series(path: Path) -> str:
    db, rest = path.stem.split("-", 1)
    return f"{db} {CONFIGURATION[rest.rsplit('-', 1)[0]]}"


def test_the_fixtures_are_the_studys_configurations():
    assert {expected_series(p) for p in RUNS} == {
        "mongodb default",
        "mongodb w=majority, j=true",
        "mongodb transactions of 1000 ops",
        "voltdb default",
        "voltdb transactions of 1000 ops",
    }


@pytest.mark.parametrize("path", RUNS, ids=lambda p: p.stem)
def test_each_operation_reads_as_ycsb_printed_it(path):
    """Every number of a row is the one YCSB's lines carry, and the histogram the document holds
    gives the same percentiles (the report does not recompute them differently)."""
    doc = doc_of(path)
    (run,), rest = split(doc, str(path), path.stem)
    assert rest is None and run.series == expected_series(path)
    assert run.workload == path.stem.rsplit("-", 1)[1]
    assert run.ops_per_second == doc["OVERALL"]["Throughput(ops/sec)"] > 0
    decoded = Measurements.from_json(doc["operations"])
    assert {row.name for row in run.operations} == set(decoded.by_name)
    for row in run.operations:
        printed = decoded.summary(row.name)
        assert (row.operations, row.average_us, row.min_us, row.max_us, row.p95_us, row.p99_us, row.returns) == (
            printed["Operations"],
            printed["AverageLatency(us)"],
            printed["MinLatency(us)"],
            printed["MaxLatency(us)"],
            printed["95thPercentileLatency(us)"],
            printed["99thPercentileLatency(us)"],
            printed["Return"],
        )


def test_the_figure_has_one_bar_per_configuration_and_workload():
    runs = [r for p in RUNS for r in split(doc_of(p), str(p), p.stem)[0]]
    page = section(runs)
    cells = {(r.series, r.workload): r.ops_per_second for r in runs}
    assert page.count('<rect class="bar"') == len(cells)
    for (series, workload), ops in cells.items():
        assert f"<title>{series}, workload {workload.upper()}: {num(ops)} ops/s (1 run)</title>" in page
    # the per-run tables: each operation's line with its count
    for r in runs:
        for row in r.operations:
            assert f"<td>{row.name}</td><td>{row.operations:,}</td>" in page


def test_runs_of_one_cell_are_averaged():
    path = RUNS[0]
    first = split(doc_of(path), str(path), "first")[0]
    other = doc_of(path)
    other["OVERALL"]["Throughput(ops/sec)"] *= 3
    second = split(other, str(path), "second")[0]
    table = throughput_table(first + second)
    mean, n = table[expected_series(path)][first[0].workload]
    assert n == 2 and mean == pytest.approx(first[0].ops_per_second * 2)
    assert "(2 runs)" in section(first + second)


def benchmarkrun(path: Path, name: str) -> dict:
    """A finished BenchmarkRun of the run: status.ycsb as the operator merges the pods' documents."""
    doc = doc_of(path)
    opts = doc["driver_options"]
    return {
        "apiVersion": "bench.tpcc.dev/v1alpha1",
        "kind": "BenchmarkRun",
        "metadata": {"name": name},
        "spec": {
            "database": {"type": doc["db"]},
            "workload": {
                "kind": "ycsb",
                "driverOptions": opts,
                "ycsb": {
                    "workload": doc["workload"],
                    "operationsPerTransaction": int(doc["properties"]["operationspertransaction"]),
                },
            },
        },
        "status": {"phase": "Succeeded", "ycsb": results.merge([doc])},
    }


def test_a_benchmarkrun_shows_the_merged_percentiles():
    path = next(p for p in RUNS if "transactions" in p.stem)
    obj = benchmarkrun(path, "br")
    (run,), rest = split(obj, "cluster", "br")
    assert rest is None and run.series == expected_series(path) and run.runtime_ms is None
    merged = obj["status"]["ycsb"]
    assert run.ops_per_second == merged["opsPerSecond"]
    for row in run.operations:
        op = merged["operations"][row.name]
        assert row.p99_us == pytest.approx(op["latencyMs"]["p99"] * 1000)
        assert row.average_us is None and row.min_us is None
        assert row.returns == {"succeeded": op["count"] - op["errors"], "failed": op["errors"]}
    assert "no mean or minimum" in section([run])


def test_a_list_of_runs_splits_ycsb_from_tpcc_and_leaves_unfinished_ones_out():
    ycsb_run = benchmarkrun(RUNS[0], "y")
    unfinished = copy.deepcopy(ycsb_run)
    del unfinished["status"]
    tpcc_run = {"kind": "BenchmarkRun", "metadata": {"name": "t"}, "spec": {"database": {"type": "voltdb"}}}
    found, rest = split({"items": [ycsb_run, tpcc_run, unfinished]}, "cluster", "list")
    assert [r.name for r in found] == ["y"] and rest == {"items": [tpcc_run]}
    assert split({"items": [ycsb_run]}, "cluster", "list")[1] is None


def test_a_load_document_is_refused_in_one_line(tmp_path, capsys):
    load = next(FIXTURES.glob("*-load.json"))
    assert main(["report", str(load), "-o", str(tmp_path / "r.html")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("tpcc report: error: ") and str(load) in err and "ycsb load" in err and "\n" not in err


BARS_SCRIPT = """JSON.stringify([...document.querySelectorAll('svg.chart')].map(s => ({
  chart: s.dataset.chart, bars: s.querySelectorAll('rect.bar').length,
  width: s.getBoundingClientRect().width,
  outside: [...s.querySelectorAll('rect.bar')].filter(b => b.getBBox().y < 0 || b.getBBox().height < 0).length})))"""


def test_the_ycsb_page_renders_in_chromium(tmp_path):
    out = tmp_path / "ycsb.html"
    assert main(["report", *map(str, RUNS), "-o", str(out)]) == 0
    page = out.read_text()
    assert "<title>YCSB report</title>" in page and "<script" not in page and "https://" not in page
    seen = chromium.visit(out, BARS_SCRIPT)
    assert seen.problems == []
    (chart,) = json.loads(seen.evaluated)
    assert chart["chart"] == "ycsb-throughput" and chart["bars"] == len(RUNS) and chart["outside"] == 0
    assert chart["width"] > 300
    assert len(re.findall(r'<table class="ycsb-operations">', page)) == len(RUNS)
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "ycsb-report.png").write_bytes(seen.screenshot)
    shutil.copy(out, ARTIFACTS / "ycsb-report.html")
