"""`tpcc report`'s experiment views: which runs are grouped into a configuration or a hosts
line (pure), the CSV read back, and the figures rendered in a real headless Chromium."""

from __future__ import annotations

import csv
import io
import json

import chromium
from test_report import CHARTS_SCRIPT, runner_doc
from tpcc_runner.cli import main
from tpcc_runner.report_experiments import configuration_groups, hosts_series, to_csv
from tpcc_runner.report_runs import read_runs


def result(
    name: str,
    tpmc: float,
    *,
    matrix: dict | None = None,
    warehouses: int = 2,
    clients: int = 4,
    replicas: int | None = None,
    k_safety: int = 0,
    day: int = 0,
) -> dict:
    """A BenchmarkResult as the operator writes it for one sweep cell (or one run)."""
    run_spec = {
        "database": {"type": "voltdb", **({"deploy": {"replicas": replicas, "kSafety": k_safety}} if replicas else {})},
        "workload": {"warehouses": warehouses, "clients": clients},
    }
    return {
        "kind": "BenchmarkResult",
        "metadata": {"name": name},
        "spec": {
            "tpmC": tpmc,
            "measureStart": f"2026-11-{1 + day:02d}T00:00:00Z",
            "verdict": "Pass",
            "phase": "Succeeded",
            "runSpec": run_spec,
            "database": {"type": "voltdb"},
            "latencyMs": {"NEW_ORDER": {"p90": 12.5, "p99": 30.0}},
            "durable": True,
            "consistent": True,
            **({"matrix": matrix} if matrix else {}),
        },
    }


SNAPSHOT = {"workload.driverOptions.read_concern": "snapshot"}
MAJORITY = {"workload.driverOptions.read_concern": "majority"}
# a VLDB-Fig.-3-like matrix: two read concerns x two client counts x three repetitions
MATRIX_RESULTS = [
    result(f"m-{i}", tpmc, matrix=m, clients=c, day=i)
    for i, (m, c, tpmc) in enumerate(
        [
            (SNAPSHOT, 4, 900),
            (SNAPSHOT, 4, 950),
            (SNAPSHOT, 4, 1000),
            (SNAPSHOT, 8, 1500),
            (SNAPSHOT, 8, 1400),
            (SNAPSHOT, 8, 1450),
            (MAJORITY, 4, 700),
            (MAJORITY, 4, 720),
            (MAJORITY, 4, 710),
            (MAJORITY, 8, 1100),
            (MAJORITY, 8, 1000),
            (MAJORITY, 8, 1050),
        ]
    )
]
# a VoltDB-Figs.-8/10-like series: hosts 1, 3, 5 at k=0 and 3, 5 at k=1
HOSTS_RESULTS = [
    result(f"h-{h}-{k}", tpmc, replicas=h, k_safety=k, day=20 + i)
    for i, (h, k, tpmc) in enumerate(
        [(1, 0, 50_000), (3, 0, 120_000), (5, 0, 180_000), (3, 1, 70_000), (5, 1, 110_000)]
    )
]


def test_matrix_cells_are_grouped_by_configuration_with_their_repetitions():
    runs = read_runs({"kind": "List", "items": MATRIX_RESULTS}, "cluster")
    groups = configuration_groups(runs)
    assert list(groups) == ["driverOptions.read_concern=snapshot", "driverOptions.read_concern=majority"]
    assert groups["driverOptions.read_concern=snapshot"][(2, 8)] == [1500, 1400, 1450]
    assert groups["driverOptions.read_concern=majority"][(2, 4)] == [700, 720, 710]
    # one configuration alone compares nothing; runs without matrix values are not configurations
    assert configuration_groups(runs[:6]) == {}
    assert configuration_groups(read_runs({"kind": "List", "items": HOSTS_RESULTS}, "cluster")) == {}


def test_hosts_lines_are_one_per_k_safety_and_need_two_host_counts():
    runs = read_runs(
        {"kind": "List", "items": HOSTS_RESULTS + [result("lone", 5, replicas=2, k_safety=1, warehouses=9)]}, "cluster"
    )
    series = hosts_series(runs)
    assert series == {
        ("voltdb", 0, 2): {1: [50_000], 3: [120_000], 5: [180_000]},
        ("voltdb", 1, 2): {3: [70_000], 5: [110_000]},
    }


def test_the_csv_has_one_row_per_run_with_its_matrix_and_shape(tmp_path):
    runs = read_runs({"kind": "List", "items": MATRIX_RESULTS[:2] + HOSTS_RESULTS[:1]}, "cluster")
    rows = list(csv.DictReader(io.StringIO(to_csv(runs))))
    assert [r["name"] for r in rows] == ["m-0", "m-1", "h-1-0"]
    assert rows[0]["matrix"] == "driverOptions.read_concern=snapshot" and rows[0]["tpmC"] == "900"
    assert rows[0]["hosts"] == "" and rows[2]["hosts"] == "1" and rows[2]["k_safety"] == "0"
    assert rows[0]["new_order_p90_ms"] == "12.5" and rows[0]["durable"] == "true"


def test_the_page_draws_grouped_bars_and_the_hosts_lines_and_writes_the_csv(tmp_path):
    source = tmp_path / "results.json"
    source.write_text(json.dumps({"kind": "List", "items": MATRIX_RESULTS + HOSTS_RESULTS}))
    page, table = tmp_path / "report.html", tmp_path / "report.csv"
    assert main(["report", str(source), "-o", str(page), "--csv", str(table)]) == 0
    seen = chromium.visit(page, CHARTS_SCRIPT)
    assert seen.problems == []
    charts = {c["chart"]: c for c in json.loads(seen.evaluated)}
    assert charts["configurations"]["bars"] == 4  # 2 configurations x 2 client counts
    assert charts["configurations"]["outside"] == 0 and charts["configurations"]["width"] > 300
    assert charts["hosts"]["paths"] == 2 and charts["hosts"]["outside"] == 0
    assert len(table.read_text().splitlines()) == 1 + len(MATRIX_RESULTS) + len(HOSTS_RESULTS)
    # a bar's median and a whisker from min to max where there are repetitions
    text = page.read_text()
    assert "driverOptions.read_concern=snapshot; 2 warehouses, 8 clients: median 1,450 tpmC of 3" in text
    assert text.count('class="whisker"') == 4


def test_runs_without_a_matrix_or_hosts_add_no_experiment_section(tmp_path):
    files = []
    for clients in (2, 4):
        files.append(tmp_path / f"r{clients}.json")
        files[-1].write_text(json.dumps(runner_doc(3000 * clients, clients=clients, day=clients)))
    page = tmp_path / "plain.html"
    assert main(["report", *map(str, files), "-o", str(page)]) == 0
    assert "<h2>Experiments</h2>" not in page.read_text()
