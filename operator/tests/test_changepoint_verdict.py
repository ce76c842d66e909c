"""The regression verdict with spec.regression.changePoints: the judge reads the analysis that
`tpcc changepoints` (the runner's, Apache Otava's E-Divisive, run here for real) made of the
history the operator hands it. Tries to fool it with a bad run just before the run judged, with
an old change, a stale analysis and too little history; checks a real drop or rise at the run
judged names the change point, also when the baseline comparison passes."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import crd_schema
import pytest
from specs import _regression, change_point_policy, regression_policy
from test_crd import _undeclared
from tpcc_operator.regression import ChangePointPolicy, FixedBaseline, Policy, Summary, changepoint_history, judge
from tpcc_operator.runstatus import Regression
from tpcc_runner.changepoints import analyze, parse_history

HASH = "h"
NOW = "2026-02-01T00:00:00Z"
CHANGE_POINTS = change_point_policy()  # the CRD's: minHistory 8, p 0.001, recentResults 5


def results(levels: list[float], seed: int, new_order_p99: float = 40.0) -> list[Summary]:
    """Nightly BenchmarkResults of one comparison (3 % run-to-run noise on tpmC, 5 % on the p99)
    as history.summary_of lists them; the last is the run judged (no verdict, no result yet)."""
    rng = random.Random(seed)
    out = [
        Summary(
            f"nightly-g{i + 1}-3fa2c",
            HASH,
            round(rng.gauss(level, level * 0.03), 1),
            {"NEW_ORDER": round(rng.gauss(new_order_p99, new_order_p99 * 0.05), 2)},
            verdict="Pass",
            completed=f"2026-01-{i + 1:02d}T02:00:00Z",
        )
        for i, level in enumerate(levels)
    ]
    out[-1] = Summary(out[-1].name, HASH, out[-1].throughput, out[-1].p99_ms)  # in status: no completionTime yet
    return out


def analysed(run: Summary, history: list[Summary]) -> dict:
    """What the analysis Job writes into changepoints.json."""
    return analyze(parse_history(json.loads(json.dumps(changepoint_history(run, history, NOW))))).to_json()


def judged(levels: list[float], seed: int, fixed: float | None = None, **policy) -> tuple:
    """(verdict, analysis) of the last of `levels` against the others, the baseline fixed at
    `fixed` tpmC (so only the change points can move the verdict) or the previous 3."""
    *history, run = results(levels, seed)
    policy = regression_policy(
        fixed=FixedBaseline(fixed) if fixed else None,
        change_points=policy.pop("change_points", CHANGE_POINTS),
        **policy,
    )
    analysis = analysed(run, history)
    return judge(run, history, policy, analysis=analysis), analysis


@pytest.mark.parametrize("seed", range(5))
def test_a_drop_at_the_run_judged_is_regressed_naming_the_change_point(seed):
    """Twelve nights at 6000, then the third at 4800: the fixed baseline (4800) passes it, the
    change point does not."""
    verdict, analysis = judged([6000.0] * 12 + [4800.0] * 3, seed, fixed=4800.0)
    assert [c["index"] for c in analysis["metrics"]["tpmC"]["changePoints"]] == [12]
    assert verdict.outcome == "Regressed", verdict.message
    (cp,) = verdict.change_points
    assert (cp.metric, cp.result, cp.results_since, cp.outcome) == ("tpmC", "nightly-g13-3fa2c", 3, "Regressed")
    assert cp.change_percent == pytest.approx(-20, abs=4) and cp.pvalue <= 0.001
    assert verdict.message.startswith("Regressed: change point at nightly-g13-3fa2c: tpmC -")
    assert "the baseline comparison: Pass: tpmC" in verdict.message
    status = verdict.to_status(HASH, "Fail").to_json()["changePoints"]
    assert status == [
        {
            "metric": "tpmC",
            "result": "nightly-g13-3fa2c",
            "resultsSince": 3,
            "meanBefore": round(cp.mean_before, 3),
            "meanAfter": round(cp.mean_after, 3),
            "changePercent": round(cp.change_percent, 3),
            "pValue": float(f"{cp.pvalue:.3g}"),
            "limitPercent": 10.0,
            "outcome": "Regressed",
        }
    ]


def test_status_regression_round_trips_through_its_type_byte_for_byte():
    """status.regression as the run writes it (metrics against a fixed baseline, a change point)
    parsed as runstatus.Regression and written again is the same JSON, key order included."""
    verdict, _ = judged([6000.0] * 12 + [4800.0] * 3, 0, fixed=4800.0)
    written = json.dumps(verdict.to_status(HASH, "Warn").to_json())
    assert '"changePoints": [{"metric": "tpmC"' in written and '"deltaPercent"' in written
    assert json.dumps(Regression.from_json(json.loads(written)).to_json()) == written


@pytest.mark.parametrize("seed", range(5))
def test_a_rise_is_improved(seed):
    verdict, _ = judged([4800.0] * 12 + [6000.0] * 3, seed, fixed=6000.0)
    assert verdict.outcome == "Improved" and verdict.change_points[0].outcome == "Improved", verdict.message


def test_a_slower_tail_is_regressed_by_its_own_change_point():
    *history, run = results([6000.0] * 15, seed=1)
    slower = [
        Summary(
            s.name,
            HASH,
            s.throughput,
            {"NEW_ORDER": s.p99_ms["NEW_ORDER"] * (1.8 if i >= 12 else 1)},
            verdict=s.verdict,
            completed=s.completed,
        )
        for i, s in enumerate([*history, run])
    ]
    *history, run = slower
    policy = regression_policy(fixed=FixedBaseline(6000.0, {"NEW_ORDER": 72.0}), change_points=CHANGE_POINTS)
    verdict = judge(run, history, policy, analysis=analysed(run, history))
    assert verdict.outcome == "Regressed", verdict.message
    assert [(c.metric, c.outcome) for c in verdict.change_points] == [("p99Ms/NEW_ORDER", "Regressed")]


@pytest.mark.parametrize("seed", range(10))
def test_a_flat_history_has_no_change_point_to_judge(seed):
    verdict, _ = judged([6000.0] * 20, seed, fixed=6000.0)
    assert verdict.outcome == "Pass" and verdict.change_points == ()
    assert verdict.message.endswith("; no change point in the last 5 results")
    assert verdict.to_status(HASH, "Fail").to_json()["changePoints"] == []


def test_a_change_older_than_recent_results_is_the_new_normal():
    """Twelve at 6000 and eight at 4800: the change point at run 13 is eight results old."""
    verdict, analysis = judged([6000.0] * 12 + [4800.0] * 8, seed=0, fixed=4800.0)
    assert [c["index"] for c in analysis["metrics"]["tpmC"]["changePoints"]] == [12]
    assert verdict.outcome == "Pass" and verdict.change_points == ()
    wider, _ = judged(
        [6000.0] * 12 + [4800.0] * 8, seed=0, fixed=4800.0, change_points=change_point_policy(recent_results=8)
    )
    assert wider.outcome == "Regressed" and wider.change_points[0].results_since == 8


def test_a_normal_run_after_one_bad_run_is_not_regressed():
    """A bad run just before the run judged can open a 'new level' in the analysis that the run
    is not at: its own tpmC must be beyond the limit from the old level too."""
    for seed in range(50):
        *history, run = results([6000.0] * 16, seed)
        history[-1] = Summary(
            history[-1].name, HASH, 3900.0, history[-1].p99_ms, verdict="Regressed", completed=history[-1].completed
        )
        analysis = analysed(run, history)
        if [c["index"] for c in analysis["metrics"]["tpmC"]["changePoints"]] == [14]:
            break
    else:
        pytest.fail("no history where the analysis opens a level at the bad run: the test proves nothing")
    verdict = judge(run, history, regression_policy(change_points=CHANGE_POINTS), analysis=analysis)
    assert verdict.outcome == "Pass", verdict.message
    (cp,) = verdict.change_points
    assert (cp.result, cp.outcome, cp.results_since) == ("nightly-g15-3fa2c", "Pass", 2)


def test_too_little_history_leaves_the_baseline_verdict():
    verdict, _ = judged([6000.0] * 4 + [4800.0] * 2, seed=0, fixed=4800.0)
    assert verdict.outcome == "Pass" and verdict.change_points == ()
    assert verdict.message.endswith("; change points: 5 earlier comparable result(s), 8 needed")
    # and with no baseline either: Inconclusive, as without change points; no analysis needed
    run = results([6000.0], seed=0)[-1]
    verdict = judge(run, [], regression_policy(change_points=CHANGE_POINTS), analysis=None)
    assert verdict.outcome == "Inconclusive" and "0 earlier comparable result(s), 8 needed" in verdict.message


def test_a_missing_or_stale_analysis_judges_nothing():
    *history, run = results([6000.0] * 12 + [4800.0] * 3, seed=0)
    policy = regression_policy(fixed=FixedBaseline(4800.0), change_points=CHANGE_POINTS)
    missing = judge(run, history, policy, analysis=None)
    assert missing.outcome == "Pass" and missing.message.endswith("; change points: not analysed")
    stale = judge(run, history, policy, analysis=analysed(history[-1], history[:-1]))
    assert stale.outcome == "Pass" and "the analysis ends at nightly-g14-3fa2c, not at this run" in stale.message
    # without the policy the analysis is not looked at, nor reported
    plain = judge(run, history, regression_policy(fixed=FixedBaseline(4800.0)), analysis=analysed(run, history))
    assert plain.outcome == "Pass" and "changePoints" not in plain.to_status(HASH, "Fail").to_json()


def test_the_history_handed_to_the_analysis():
    """Comparable results that measured something, regressed ones too, oldest first, the run last."""
    run = Summary("r9", HASH, 5000.0, {"NEW_ORDER": 41.0})
    history = [
        Summary("r3", HASH, 6100.0, {"NEW_ORDER": 39.0}, verdict="Regressed", completed="2026-01-03T00:00:00Z"),
        Summary("r1", HASH, 6000.0, {"NEW_ORDER": 40.0}, verdict="Pass", completed="2026-01-01T00:00:00Z"),
        Summary("other", "x", 9000.0, verdict="Pass", completed="2026-01-02T00:00:00Z"),
        Summary("lost", HASH, 9000.0, durable=False, verdict="Failed", completed="2026-01-04T00:00:00Z"),
        Summary("broken", HASH, 9000.0, consistent=False, verdict="Failed", completed="2026-01-05T00:00:00Z"),
        Summary("failed", HASH, None, failed=True, verdict="Failed", completed="2026-01-06T00:00:00Z"),
        Summary("r9", HASH, 1.0, verdict="Pass", completed="2026-01-07T00:00:00Z"),
    ]  # an earlier write of itself
    points = changepoint_history(run, history, NOW)
    assert points == [
        {"name": "r1", "time": "2026-01-01T00:00:00Z", "tpmC": 6000.0, "p99Ms": {"NEW_ORDER": 40.0}},
        {"name": "r3", "time": "2026-01-03T00:00:00Z", "tpmC": 6100.0, "p99Ms": {"NEW_ORDER": 39.0}},
        {"name": "r9", "time": NOW, "tpmC": 5000.0, "p99Ms": {"NEW_ORDER": 41.0}},
    ]
    assert [p.name for p in parse_history(points)] == ["r1", "r3", "r9"]  # what the runner's CLI accepts


def test_the_cli_round_trip_feeds_the_judge(tmp_path):
    """The operator's history through the real `tpcc changepoints` and back into the judge."""
    *history, run = results([6000.0] * 12 + [4800.0] * 2, seed=3)
    path = tmp_path / "history.json"
    path.write_text(json.dumps(changepoint_history(run, history, NOW)))
    done = subprocess.run(
        [sys.executable, "-m", "tpcc_runner.cli", "changepoints", "--history", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    verdict = judge(
        run,
        history,
        regression_policy(fixed=FixedBaseline(4800.0), change_points=CHANGE_POINTS),
        analysis=json.loads(done.stdout),
    )
    assert verdict.outcome == "Regressed" and verdict.change_points[0].result == "nightly-g13-3fa2c"


def test_the_policy_from_the_spec_and_its_crd_defaults():
    assert Policy.from_spec(_regression({})).change_points is None
    assert Policy.from_spec(_regression({"changePoints": {"enabled": False, "minHistory": 3}})).change_points is None
    assert Policy.from_spec(_regression({"changePoints": {}})).change_points == ChangePointPolicy(8, 0.001, 5)
    custom = Policy.from_spec(_regression({"changePoints": {"minHistory": 12, "maxPValue": 0.01, "recentResults": 3}}))
    assert custom.change_points == ChangePointPolicy(min_history=12, max_pvalue=0.01, recent_results=3)


def test_the_status_schema_keeps_the_change_points():
    verdict, _ = judged([6000.0] * 12 + [4800.0] * 3, seed=0, fixed=4800.0)
    status = {"verdict": verdict.outcome, "regression": verdict.to_status(HASH, "Fail").to_json()}
    assert status["regression"]["changePoints"]
    assert list(_undeclared(status, crd_schema.crd_schema()["properties"]["status"], "status")) == []


def test_the_operator_never_loads_numpy_or_the_analysis_library():
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, tpcc_operator.handlers, tpcc_operator.regression; "
            "print(sorted(m for m in ('numpy', 'scipy', 'otava') if m in sys.modules))",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
