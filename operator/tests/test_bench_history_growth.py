"""operator/bench/history_growth.py's made history, without a cluster: real BenchmarkResults of
one series that the operator's judge compares with, and `tpcc report` draws one row each."""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "operator" / "bench"))
import history_growth  # noqa: E402
from tpcc_operator import history  # noqa: E402


@pytest.fixture(scope="module")
def listed() -> str:
    items = history_growth.result_documents("bench", 40)
    return json.dumps({"kind": "List", "items": items})


def test_the_results_are_one_comparable_series_with_the_drawn_throughputs(listed):
    entries = [history.summary_of(o) for o in json.loads(listed)["items"]]
    spec = history_growth.spec_of()
    judged = history_growth.judged(spec, len(entries))
    assert len({e.summary.name for e in entries}) == 40
    assert {e.summary.comparison_hash for e in entries} == {judged.comparison_hash}
    assert [e.summary.throughput for e in entries] == pytest.approx(history_growth.tpmc_series(40))
    assert sorted(e.summary.completed for e in entries) == [e.summary.completed for e in entries]


def test_the_judge_compares_with_the_median_of_the_five_previous(listed):
    verdict = history_growth.judge_once(listed, history_growth.spec_of(), None)
    latest = history_growth.tpmc_series(40)[-5:]
    assert len(verdict.baseline_results) == 5
    tpmc = next(m for m in verdict.metrics if m.name == "tpmC")
    assert tpmc.baseline == pytest.approx(statistics.median(latest), rel=1e-3)


def test_the_report_draws_every_result_as_a_run_of_the_history(listed, tmp_path):
    (tmp_path / "results.json").write_text(listed)
    spec = history_growth.spec_of()
    (tmp_path / "points.json").write_text(json.dumps(history_growth.analysis_points(listed, spec)))
    history_growth.measure_runner(tmp_path, 1)
    page = (tmp_path / "report.html").read_text()
    assert "<h2>History</h2>" in page
    assert page.count("<td>history-growth-g") == 40
