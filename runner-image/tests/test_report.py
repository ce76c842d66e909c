"""`tpcc report`: the page from result documents made with the runner's own results code, opened
in a real headless Chromium: no console error, every chart drawn with what it must mark (warmup,
each fault, baseline, change point), a screenshot kept in tests/artifacts/."""

from __future__ import annotations

import datetime as dt
import json
import random
import re
import shutil
from pathlib import Path

import chromium
import pytest
from tpcc_contract.histograms import record_latency
from tpcc_contract.results import PodWindow, TypeStats, build_results
from tpcc_contract.tpcc import TRANSACTIONS
from tpcc_runner.cli import main
from tpcc_runner.report import render
from tpcc_runner.report_runs import distinct, read_runs

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
START = 1_767_225_600.0  # 2026-01-01T00:00:00Z


def runner_doc(
    tpmc_level: float,
    clients: int = 4,
    day: int = 0,
    seconds: int = 120,
    warmup: int = 20,
    dip: tuple[int, int] | None = None,
    seed: int = 1,
) -> dict:
    """What `tpcc run --results` writes for a run at about `tpmc_level`, NewOrder latencies
    spread like a real run's (log-normal), a 10 s timeline with its warmup; `dip`: (from, to)
    seconds of the measured window where throughput fell to a fifth, as around a killed node."""
    rng = random.Random(seed)
    stats = {t: TypeStats() for t in TRANSACTIONS}
    per_second = []
    for k in range(seconds):
        rate = tpmc_level / 60 * (0.2 if dip and dip[0] <= k < dip[1] else 1.0)
        per_second.append(max(0, round(rng.gauss(rate, rate * 0.05))))
    for t, share, median in zip(TRANSACTIONS, (1.0, 0.95, 0.09, 0.09, 0.09), (8, 4, 2, 20, 12)):
        n = int(sum(per_second) * share) + 1
        stats[t].counts["committed"] = n
        for _ in range(min(n, 3000)):
            record_latency(stats[t].histogram, rng.lognormvariate(0, 0.6) * median / 1000 * clients / 4)
    timeline = {b: sum(per_second[b * 10 : (b + 1) * 10]) for b in range(seconds // 10)}
    for b in range(-(warmup // 10), 0):
        timeline[b] = round(tpmc_level / 6 * (0.6 + 0.2 * (b + warmup // 10)))
    start = START + day * 86400
    window = PodWindow(start, start + 0.01, start + warmup, start + warmup, start + warmup + seconds)
    return build_results(
        stats,
        window,
        per_second,
        2,
        clients,
        False,
        timeline,
        {"shard": "0/1", "warmup_seconds": warmup, "options": {"db": "voltdb", "seed": seed}},
    )


def benchmarkrun(doc: dict, name: str, faults: list[tuple[float, float]], baseline: float) -> dict:
    """The BenchmarkRun the operator would show for that run (status.results in its names)."""

    def at(offset: float) -> str:
        t = dt.datetime.fromisoformat(doc["start"].replace("Z", "+00:00")) + dt.timedelta(seconds=offset)
        return t.isoformat().replace("+00:00", "Z")

    return {
        "apiVersion": "bench.tpcc.dev/v1alpha1",
        "kind": "BenchmarkRun",
        "metadata": {"name": name, "generation": 1},
        "spec": {
            "database": {"type": "voltdb"},
            "baselineTpmC": baseline,
            "workload": {"warehouses": 2, "clients": doc["clients"], "warmupSeconds": doc["warmup_seconds"]},
        },
        "status": {
            "phase": "Succeeded",
            "verdict": "Regressed",
            "results": {
                "tpmC": doc["tpmC"],
                "start": doc["start"],
                "end": doc["end"],
                "measuredSeconds": doc["measured_seconds"],
                "timeline": doc["timeline"],
                "transactionsPerSecond": doc["transactions_per_second"],
                "serverAgreement": {"verdict": "agree", "reason": ""},
                "databaseBytes": {"data": 210 * 2**20, "index": 40 * 2**20, "memory": 900 * 2**20},
                "transactions": {
                    t: {"latencyMs": v["latency_ms"], "committed": v["committed"], "rollbacks": 3, "retries": 2}
                    for t, v in doc["transactions"].items()
                },
            },
            "faults": [
                {
                    "number": i + 1,
                    "action": "kill-node",
                    "target": "bench-g1-2",
                    "state": "Recovered",
                    "injectedTime": at(a),
                    "recoveredTime": at(b),
                    "recoverySeconds": b - a,
                }
                for i, (a, b) in enumerate(faults)
            ],
            "durability": {
                "acknowledged": 5120,
                "found": 5120,
                "lost": 0,
                "unknownOutcome": 3,
                "ledgers": 2,
                "durable": True,
            },
            "consistency": {
                "passed": True,
                "violated": [],
                "conditions": [{"number": n, "passed": True, "checked": 20 * n, "violations": 0} for n in range(1, 13)],
            },
        },
    }


def test_reads_runner_documents_benchmarkruns_and_results():
    doc = runner_doc(6000)
    (run,) = read_runs(doc, "/tmp/nightly.json")
    assert (run.name, run.database, run.clients, run.tpmc) == ("nightly", "voltdb", 4, doc["tpmC"])
    assert run.timeline[0][0] == -20 and run.warmup_seconds == 20
    (br,) = read_runs({"kind": "List", "items": [benchmarkrun(doc, "r1", [(30, 42)], 6500)]}, "list")
    assert [(f.injected, f.recovered) for f in br.faults] == [(30.0, 42.0)]
    assert br.baseline == 6500 and br.verdict == "Regressed" and br.durability.durable
    result = {
        "kind": "BenchmarkResult",
        "metadata": {"name": "r1-g1-abcde"},
        "spec": {
            "tpmC": doc["tpmC"],
            "measureStart": doc["start"],
            "verdict": "Pass",
            "runSpec": {"workload": {"clients": 4, "warehouses": 2}},
            "database": {"type": "voltdb"},
            "durable": False,
            "lost": 2,
            "consistent": True,
            "violated": [],
            "faults": [{"action": "kill-node", "injectedTime": br.faults and doc["start"], "recoverySeconds": 9.5}],
        },
    }
    (rec,) = read_runs(result, "cluster")
    assert rec.durability.lost == 2 and not rec.durability.durable and rec.faults[0].recovered == 9.5
    # the BenchmarkRun and its record are one measurement: the one with the timeline stays
    assert distinct([rec, br]) == [br]
    with pytest.raises(ValueError, match="bad.json: neither"):
        read_runs({"hello": 1}, "bad.json")


def test_bad_input_is_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["report", str(bad), "-o", str(tmp_path / "r.html")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("tpcc report: error: ") and str(bad) in err and "\n" not in err
    assert main(["report", "-o", str(tmp_path / "r.html")]) == 1
    assert "no runs" in capsys.readouterr().err


# the page's own account of what it drew, read in the rendered page
CHARTS_SCRIPT = """JSON.stringify(Array.from(document.querySelectorAll('[data-chart]')).map(e => {
  const box = e.getBoundingClientRect();
  return {chart: e.dataset.chart, width: box.width, height: box.height,
          paths: e.querySelectorAll('path.series').length, bars: e.querySelectorAll('rect.bar').length,
          warmup: e.querySelectorAll('rect.warmup').length, faults: e.querySelectorAll('line.fault-line').length,
          baseline: e.querySelectorAll('line.baseline').length, changes: e.querySelectorAll('line.change').length,
          badges: e.querySelectorAll('.badge.ok').length,
          // marks drawn outside the plot area (top 16, bottom 300 - 44 in the SVG's units)
          outside: Array.from(e.querySelectorAll('path.series, circle, rect.bar')).filter(m => {
            const b = m.getBBox(); return b.y < 15 || b.y + b.height > 257; }).length};
}))"""


@pytest.fixture(scope="module")
def history_page(tmp_path_factory) -> Path:
    """Ten nightly runs (the last four 22 % slower: a change point) at 4 clients, a client sweep,
    and the latest run as the operator shows it, with two node kills during its window."""
    tmp = tmp_path_factory.mktemp("report")
    files = []
    nights = (6000, 6100, 5950, 6050, 5900, 6020, 4700, 4650, 4720, 4650)
    for day, level in enumerate(nights):
        doc = runner_doc(level, day=day, seed=day)
        if day == len(nights) - 1:
            doc = benchmarkrun(
                runner_doc(level, day=day, seed=day, dip=(30, 45)), "nightly", [(30, 42), (80, 91)], baseline=6000
            )
        files.append(tmp / f"night-{day}.json")
        files[-1].write_text(json.dumps(doc))
    for clients, level in ((2, 3200), (8, 9800), (16, 11000)):
        files.append(tmp / f"sweep-{clients}.json")
        files[-1].write_text(json.dumps(runner_doc(level, clients=clients, day=-30 + clients, seed=clients)))
    out = tmp / "report.html"
    assert main(["report", *map(str, files), "--title", "VoltDB nightly", "-o", str(out)]) == 0
    return out


def test_the_page_needs_nothing_from_the_network(history_page):
    page = history_page.read_text()
    assert "<script" not in page and "http://" not in page and "https://" not in page
    assert "<link" not in page and "@import" not in page and "url(" not in page


def test_the_report_renders_in_chromium_with_every_chart(history_page, tmp_path):
    seen = chromium.visit(history_page, CHARTS_SCRIPT)
    assert seen.problems == []
    charts = {c["chart"]: c for c in json.loads(seen.evaluated)}
    assert set(charts) == {
        "trend",
        "sweep-tpmc",
        "sweep-latency",
        "timeline",
        "latency",
        "verdicts",
        "transactions",
        "server",
    }
    tables = ("transactions", "server")
    assert all(
        c["width"] > 300 and c["height"] > 100 and c["outside"] == 0 for name, c in charts.items() if name not in tables
    ), charts
    assert all(charts[t]["width"] > 300 for t in tables) and charts["server"]["badges"] == 1
    assert charts["timeline"]["warmup"] == 1 and charts["timeline"]["faults"] == 2
    assert charts["timeline"]["paths"] == 1
    assert charts["latency"]["bars"] == 5 * 5  # five percentiles of five transactions
    assert charts["trend"]["baseline"] == 1 and charts["trend"]["changes"] == 1
    page = history_page.read_text()  # the change is where the slower nights begin, and listed
    assert re.search(r"<title>change point: 5,9\d\d → 4,[56]\d\d \(-2\d\.\d%\) from night-6</title>", page)
    assert re.search(
        r'<ul class="changes"><li>tpmC: mean 5,9\d\d → 4,[56]\d\d \(-2\d\.\d%, p [^)]+\) '
        r"from run 7, night-6</li></ul>",
        page,
    )
    assert charts["sweep-tpmc"]["paths"] == 1 and charts["sweep-latency"]["paths"] == 1
    assert charts["verdicts"]["badges"] == 2  # durable, and all 12 conditions hold
    assert "<dt>transactions/s</dt>" in page and "clients and server: agree" in page
    assert "data 210.0 MiB, index 40.0 MiB, storage n/a, memory 900.0 MiB" in page
    assert re.search(
        r"<tr><td>NEW_ORDER</td><td>[\d,]+</td><td>3</td><td>0</td><td>0</td><td>2</td>"
        r"<td>\d+\.\d\d</td>",
        page,
    )  # rollbacks, retries, then the minimum latency
    shot = tmp_path / "report.png"
    shot.write_bytes(seen.screenshot)
    assert seen.screenshot.startswith(b"\x89PNG") and len(seen.screenshot) > 20_000
    ARTIFACTS.mkdir(exist_ok=True)
    shutil.copy(shot, ARTIFACTS / "report.png")


def test_the_check_sees_a_broken_page(tmp_path):
    """What the render test relies on: a script error, a console error and a failed load are
    all reported."""
    page = tmp_path / "broken.html"
    page.write_text(
        '<!DOCTYPE html><html><body><img src="missing.png">'
        '<script>console.error("drawn wrong"); undefinedFunction();</script></body></html>'
    )
    problems = " | ".join(chromium.visit(page, "1").problems)
    assert "console.error: drawn wrong" in problems
    assert "undefinedFunction is not defined" in problems
    assert "missing.png" in problems


def test_a_failed_run_shows_its_verdicts(tmp_path):
    doc = runner_doc(5000)
    doc["durability"] = {
        "acknowledged": 900,
        "found": 897,
        "lost": 3,
        "unknown_outcome": 0,
        "ledgers": 1,
        "durable": False,
    }
    doc["consistency"] = {
        "passed": False,
        "conditions": [
            {
                "number": n,
                "passed": n != 3,
                "checked": 10,
                "violations": int(n == 3),
                "example": "w=1 d=2: NO gap" if n == 3 else None,
            }
            for n in range(1, 13)
        ],
    }
    page = render(read_runs(doc, "failed.json"))
    assert "3 acknowledged NewOrders lost" in page and "violated: 3" in page and "w=1 d=2: NO gap" in page
    assert 'data-chart="trend"' not in page  # one run: no history


def test_the_acid_tests_of_a_run_and_of_its_record_are_shown():
    run = benchmarkrun(runner_doc(5000), "acid-run", [], None)
    run["status"]["acid"] = {
        "passed": False,
        "seed": 7,
        "counts": {"passed": 9, "failed": 1, "not-applicable": 1, "error": 0},
        "tests": [
            {
                "test": "isolation3",
                "clause": "3.4.2.3",
                "status": "failed",
                "reason": "lost update: D_NEXT_O_ID rose by 1 for 2 NewOrders",
            },
            {"test": "consistency", "clause": "3.3.2", "status": "not-applicable", "reason": "no snapshot read <here>"},
        ],
    }
    page = render(read_runs(run, "cluster"))
    assert 'data-chart="acid"' in page and "9 passed, 1 failed, 1 not-applicable" in page
    assert "lost update: D_NEXT_O_ID rose by 1" in page and "no snapshot read &lt;here&gt;" in page
    record = {
        "kind": "BenchmarkResult",
        "metadata": {"name": "acid-run-g1-abcde"},
        "spec": {
            "tpmC": 1.0,
            "verdict": "Failed",
            "database": {"type": "voltdb"},
            "runSpec": {},
            "acid": {"passed": False, "counts": {"passed": 10, "failed": 1}, "failed": ["isolation5"]},
        },
    }
    (rec,) = read_runs(record, "cluster")
    assert rec.acid.tests == [("isolation5", "failed", "")] and not rec.acid.passed
    assert 'data-chart="acid"' not in render(read_runs(runner_doc(5000), "plain.json"))  # not asked for
