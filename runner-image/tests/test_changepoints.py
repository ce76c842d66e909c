"""`tpcc changepoints`: Apache Otava's E-Divisive over histories shaped like the operator's (one
point per BenchmarkResult, nightly, tpmC with a few percent of run-to-run noise, p99 per
transaction type). Tries to fool it with noise and single bad runs, which are no change of level,
and checks it sees a real drop where it happened, the same way every time."""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib
from cli_helpers import TPCC, tpcc
from packaging.requirements import Requirement
from tpcc_runner.changepoints import HistoryPoint, analyze, parse_history

NIGHT = dt.datetime(2026, 1, 1, 2, 0, tzinfo=dt.timezone.utc)
TYPES = {"NEW_ORDER": 40.0, "PAYMENT": 20.0, "DELIVERY": 90.0}


def history(
    tpmc_levels: list[float], seed: int, noise: float = 0.03, new_order_p99: list[float] | None = None
) -> list[dict]:
    """What the operator feeds the CLI: one point per result, oldest first, the run judged last.
    Each run's tpmC is its level with `noise` relative standard deviation; the p99s have 5 %
    noise around their usual level, NewOrder's times a factor per run (`new_order_p99`)."""
    rng = random.Random(seed)
    points = []
    for i, level in enumerate(tpmc_levels):
        usual = {**TYPES, "NEW_ORDER": TYPES["NEW_ORDER"] * (new_order_p99[i] if new_order_p99 else 1.0)}
        points.append(
            {
                "name": f"nightly-g{i + 1}-3fa2c",
                "time": (NIGHT + dt.timedelta(days=i)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "tpmC": round(rng.gauss(level, level * noise), 1),
                "p99Ms": {t: round(rng.gauss(ms, ms * 0.05), 2) for t, ms in usual.items()},
            }
        )
    return points


def found(doc: list[dict]) -> dict[str, list[int]]:
    analysis = analyze(parse_history(doc))
    return {m: [c.index for c in cps] for m, cps in analysis.change_points.items() if cps}


@pytest.mark.parametrize("runs,noise", [(20, 0.03), (30, 0.08)])
def test_noise_is_no_change_point(runs, noise):
    """A hundred flat histories: the t-test at p 0.001 over Hunter's windows lets about one
    series in fifty show a small step of noise; none of them gets near the judge's default
    limits (tpmC -10 %, p99 +50 %)."""
    series, spurious = 0, []
    for seed in range(100):
        for metric, cps in analyze(parse_history(history([6000.0] * runs, seed, noise=noise))).change_points.items():
            series += 1
            spurious += [(metric, abs(c.change_percent)) for c in cps]
    assert series == 400 and len(spurious) <= 0.03 * series, spurious
    assert all(change < (10 if metric == "tpmC" else 50) for metric, change in spurious), spurious


@pytest.mark.parametrize("seed", range(10))
def test_a_20_percent_drop_at_run_12_is_found_at_12(seed):
    doc = history([6000.0] * 12 + [4800.0] * 8, seed)
    analysis = analyze(parse_history(doc))
    assert {m: [c.index for c in cps] for m, cps in analysis.change_points.items() if cps} == {"tpmC": [12]}
    (cp,) = analysis.change_points["tpmC"]
    assert cp.name == doc[12]["name"] and cp.time == doc[12]["time"]
    assert cp.mean_before == pytest.approx(6000, rel=0.03) and cp.mean_after == pytest.approx(4800, rel=0.03)
    assert cp.change_percent == pytest.approx(-20, abs=3)
    assert cp.pvalue < 0.001
    assert (analysis.points, analysis.last) == (20, doc[-1]["name"])


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("at", [1, 5, 10, 15])
@pytest.mark.parametrize("slow", [True, False])
def test_one_bad_run_is_no_change_point(seed, at, slow):
    """One run 35 % off with NewOrder's p99 3x (a noisy neighbour, a slow node), or as much
    faster, and at least four normal runs after it: an outlier, not a new level."""
    doc = history([6000.0] * 20, seed)
    doc[at]["tpmC"] = 3900.0 if slow else 8100.0
    doc[at]["p99Ms"]["NEW_ORDER"] *= 3 if slow else 0.4
    changes = found(doc)
    assert "tpmC" not in changes and "p99Ms/NEW_ORDER" not in changes, changes


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("odd", [1.3, 0.6])
def test_a_drop_right_after_one_odd_run_is_still_found(seed, odd):
    """The run before a 20 % drop was 30 % fast, or 40 % slow (below even the new level): the
    outlier rule must not take the real change away with it."""
    doc = history([6000.0] * 12 + [4800.0] * 8, seed)
    doc[11]["tpmC"] = 6000.0 * odd
    expected = [[12]] if odd > 1 else [[11], [12]]  # a run that slow may as well open the new level
    assert found(doc).get("tpmC") in expected


def test_a_slower_tail_is_found_on_its_own_metric_even_with_gaps():
    """NewOrder's p99 60 % up from run 15 while tpmC holds; two results lack PAYMENT's p99 (no
    PAYMENT committed): the index is still the run's position in the history."""
    doc = history([6000.0] * 20, seed=4, new_order_p99=[1.0] * 15 + [1.6] * 5)
    for p in doc[2:4]:
        del p["p99Ms"]["PAYMENT"]
    analysis = analyze(parse_history(doc))
    changes = {m: [(c.index, c.name) for c in cps] for m, cps in analysis.change_points.items() if cps}
    assert changes == {"p99Ms/NEW_ORDER": [(15, doc[15]["name"])]}
    assert analysis.metric_points["p99Ms/PAYMENT"] == 18 and analysis.metric_points["tpmC"] == 20


def test_the_same_history_gives_the_same_analysis():
    doc = history([6000.0] * 12 + [4800.0] * 8, seed=2)
    assert json.dumps(analyze(parse_history(doc)).to_json()) == json.dumps(analyze(parse_history(doc)).to_json())


def test_a_change_at_the_run_judged_is_found_once_it_is_far_enough_out():
    """The last point alone can be a new segment: E-Divisive cannot tell one bad run at the end
    from a new level (the judge decides what a change at the run itself means)."""
    doc = history([6000.0] * 19 + [3900.0], seed=1, noise=0.02)
    assert found(doc) == {"tpmC": [19]}


def test_bad_histories_are_refused():
    with pytest.raises(ValueError, match="JSON list"):
        parse_history({"items": []})
    with pytest.raises(ValueError, match="point 1: expected an object with name and time"):
        parse_history([{"name": "a", "time": "2026-01-01T00:00:00Z", "tpmC": 1}, {"name": "b"}])
    with pytest.raises(ValueError, match="oldest first: b"):
        parse_history(
            [
                {"name": "a", "time": "2026-01-02T00:00:00Z", "tpmC": 1},
                {"name": "b", "time": "2026-01-01T00:00:00Z", "tpmC": 1},
            ]
        )
    with pytest.raises(ValueError, match=r"point 0 \(a\): tpmC and p99Ms values must be numbers"):
        parse_history([{"name": "a", "time": "2026-01-01T00:00:00Z", "tpmC": "fast"}])
    with pytest.raises(ValueError, match="empty history"):
        analyze([])
    # a point without figures (the run never measured) is in no metric's series
    only = analyze([HistoryPoint("a", "2026-01-01T00:00:00Z", None)])
    assert only.change_points == {} and only.to_json()["metrics"] == {}


def test_the_cli_round_trip(tmp_path):
    doc = history([6000.0] * 12 + [4800.0] * 8, seed=3)
    path = tmp_path / "history.json"
    path.write_text(json.dumps(doc))
    done = tpcc("changepoints", "--history", str(path))
    assert done.code == 0, done.stderr
    out = done.json()
    assert out == analyze(parse_history(doc)).to_json()
    assert out["library"] == "apache-otava 0.8.0" and out["maxPValue"] == 0.001
    assert out["points"] == 20 and out["last"] == "nightly-g20-3fa2c"
    (cp,) = out["metrics"]["tpmC"]["changePoints"]
    assert (cp["index"], cp["result"]) == (12, "nightly-g13-3fa2c") and cp["changePercent"] < -15
    assert "changepoints: 20 points, tpmC: 1" in done.stderr
    # from stdin, with a stricter significance: the drop is still far beyond it
    piped = subprocess.run(
        [*TPCC, "changepoints", "--history", "-", "--max-pvalue", "1e-6"],
        input=json.dumps(doc),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert piped.returncode == 0, piped.stderr
    strict = json.loads(piped.stdout)
    assert strict["maxPValue"] == 1e-6 and strict["metrics"]["tpmC"]["changePoints"][0]["index"] == 12


@pytest.mark.parametrize(
    "args,code,needle",
    [
        (["--history", "{missing}"], 1, "No such file"),
        (["--history", "{bad}"], 1, "not JSON"),
        (["--history", "{object}"], 1, "JSON list"),
        (["--history", "{good}", "--max-pvalue", "2"], 2, "must be between 0 and 1"),
        # outside a pod the ConfigMap cannot be written: said in one line, after the analysis
        (["--history", "{good}", "--results-configmap", "bench/nightly-g20-cp"], 1, "not running in a Kubernetes pod"),
    ],
)
def test_bad_input_is_one_line(tmp_path, args, code, needle):
    files = {
        "missing": tmp_path / "none.json",
        "bad": tmp_path / "bad.json",
        "object": tmp_path / "object.json",
        "good": tmp_path / "good.json",
    }
    files["bad"].write_text("[{")
    files["object"].write_text("{}")
    files["good"].write_text(json.dumps(history([6000.0] * 5, seed=0)))
    done = tpcc("changepoints", *[a.format(**files) for a in args])
    assert done.code == code
    errors = [line for line in done.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and needle in errors[0] and "Traceback" not in done.stderr


def test_numpy_and_scipy_are_pinned_as_otava_pins_them():
    """Otava is installed without its dependencies: what brings the two its analysis imports
    (numpy: the runner's own dependencies, as the loader needs it too; scipy: the changepoints
    extra) must say what Otava's own metadata says, and what is installed must satisfy it."""
    pyproject = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    project = pyproject["project"]
    pinned = {str(Requirement(r)) for r in project["optional-dependencies"]["changepoints"]}
    pinned |= {str(Requirement(r)) for r in project["dependencies"] if Requirement(r).name == "numpy"}
    otava = [Requirement(r) for r in importlib.metadata.requires("apache-otava")]
    assert pinned == {str(r) for r in otava if r.name in ("numpy", "scipy")}
    root = Path(__file__).resolve().parents[2]
    no_deps = (root / "runner-image" / "requirements-no-deps.txt").read_text()
    assert "apache-otava" in [line.strip() for line in no_deps.splitlines() if not line.startswith("#")]
    assert (
        f"apache-otava=={importlib.metadata.version('apache-otava')}"
        in (root / "constraints.txt").read_text().splitlines()
    )
    for r in otava:
        if r.name in ("numpy", "scipy") and r.marker.evaluate():
            assert r.specifier.contains(importlib.metadata.version(r.name)), r


def test_the_runner_loads_numpy_only_to_analyse():
    """`tpcc run` and its client processes import the CLI: numpy and scipy stay out of them."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, tpcc_runner.cli; print(sorted(m for m in ('numpy', 'scipy', 'otava') if m in sys.modules))",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stderr
