#!/usr/bin/env python3
"""How a run history's cost grows with its length (issue 43 §3): with 10, 100 and 1,000
BenchmarkResults of one series (real result documents, made as the operator makes them:
history.record of a captured finished run, its tpmC varied and shifted 10 % three quarters
through), the time of

  judge     one regression judgement, the operator's pure part on a finished run's tick: the
            listed results parsed from the API server's JSON, history.summary_of of each,
            regression.analysis_input, regression.judge (baseline: the median of the 5 previous
            passing results; with change points) and history.to_prune;
  analyze   the change-point analysis the analyzer Job runs (`tpcc changepoints`:
            changepoints.analyze over regression.changepoint_history);
  report    `tpcc report` of the same documents from a file (what `--history RUN` renders once
            kubectl has listed them): reading, the trend chart with its change points, the page;

each the median of --repeat in a process of its own per size, with that process's peak RSS
(the judge's is the operator's code and the history alone). No cluster, no API server. Goal:
each at most linear in the results, the judge's RSS under 150 MB at 1,000.

    .venv/bin/python operator/bench/history_growth.py [--sizes 10,100,1000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "operator"))
sys.path.insert(0, str(ROOT / "runner-image" / "bench"))
import growth  # noqa: E402  (the machine, the commit and the goal lines of every growth bench)
from tpcc_operator import history, plan, regression, workloads  # noqa: E402
from tpcc_operator.runspec import RunSpec  # noqa: E402

CAPTURED_RUN = ROOT / "operator" / "tests" / "fixtures" / "gitops" / "e2e" / "succeeded-voltdb-e2e.json"
SERIES = "history-growth"
REGRESSION = {"maxTpmCDropPercent": 10, "baseline": {"previous": 5}, "changePoints": {"enabled": True}}
GOAL_MB = 150.0
NOW = "2026-02-01T00:00:00Z"


def spec_of(regression_spec: dict | None = REGRESSION) -> RunSpec:
    captured = json.loads(CAPTURED_RUN.read_text())["spec"]
    return RunSpec.parse({**captured, **({"regression": regression_spec} if regression_spec else {})})


def finished_status(spec: RunSpec, i: int, tpmc: float) -> dict:
    """The captured run's final status as the i-th run of the series, measuring `tpmc`."""
    captured = json.loads(CAPTURED_RUN.read_text())["status"]
    hour = f"2026-01-{1 + i // 1440:02d}T{i // 60 % 24:02d}:{i % 60:02d}"  # one run a minute
    return {
        **captured,
        "startTime": f"{hour}:00Z",
        "completionTime": f"{hour}:50Z",
        "results": {**captured["results"], "tpmC": tpmc, "start": f"{hour}:20Z", "end": f"{hour}:40Z"},
        "regression": {**captured["regression"], "comparisonHash": regression.comparison_hash(spec)},
    }


def tpmc_series(n: int, level: float = 1000.0) -> list[float]:
    """n throughputs: 3 % noise, 10 % lower from three quarters on (a change to be found)."""
    draw = random.Random(n)
    return [level * (0.9 if i >= 3 * n // 4 else 1.0) * (1 + 0.03 * draw.gauss(0, 1)) for i in range(n)]


def result_documents(namespace: str, n: int, spec: RunSpec | None = None, series: str = SERIES) -> list[dict]:
    """n BenchmarkResults of a run named `series`, oldest first, as the operator writes them."""
    spec = spec or spec_of()
    out = []
    for i, tpmc in enumerate(tpmc_series(n)):
        run = plan.Run(series, namespace, str(uuid.uuid4()), i + 1)
        record = history.record(run, spec, finished_status(spec, i, tpmc), None, None, ["local/voltdb:10.1.1"])
        out.append(history.result_object(record, "local/tpcc-runner:dev"))
    return out


def timed(step: Callable[[], object], repeat: int) -> tuple[float, float]:
    """(median wall ms, median CPU ms) of `repeat` calls."""
    walls, cpus = [], []
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        step()
        walls.append(1000 * (time.perf_counter() - w))
        cpus.append(1000 * (time.process_time() - c))
    return statistics.median(walls), statistics.median(cpus)


def judge_once(listed: str, spec: RunSpec, analysis: dict | None) -> regression.Verdict:
    """The operator's pure work on a finished run's tick, from the listed results' JSON."""
    entries = [history.summary_of(o) for o in json.loads(listed)["items"]]
    earlier = [e.summary for e in entries]
    this = judged(spec, len(entries))
    policy = regression.Policy.from_spec(spec.regression)
    regression.analysis_input(this, earlier, policy, NOW)
    verdict = regression.judge(this, earlier, policy, None, analysis)
    history.to_prune(entries, spec.history.limit, this.name)
    return verdict


def analysis_points(listed: str, spec: RunSpec) -> list[dict]:
    """What the analyzer Job is given for the run judged after the listed history."""
    earlier = [history.summary_of(o).summary for o in json.loads(listed)["items"]]
    return regression.changepoint_history(judged(spec, len(earlier)), earlier, NOW)


def judged(spec: RunSpec, earlier: int) -> regression.Summary:
    """The run judged after `earlier` results: finished, 10 % below the level it started at."""
    run = plan.Run(SERIES, "bench", "judged", earlier + 1)
    status = finished_status(spec, earlier, 900.0)
    return regression.Summary.of_status(
        history.result_name(run), regression.comparison_hash(spec), status, workloads.of(spec).figures(status)
    )


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure_runner(work: Path, repeat: int) -> dict:
    """In a process of its own: the analyzer's analysis and `tpcc report` of the documents."""
    sys.path.insert(0, str(ROOT / "runner-image"))
    from tpcc_runner import changepoints, report

    points = json.loads((work / "points.json").read_text())
    analysis = changepoints.analyze(changepoints.parse_history(points))
    (work / "analysis.json").write_text(json.dumps(analysis.to_json()))
    analyze_ms = timed(lambda: changepoints.analyze(changepoints.parse_history(points)), repeat)
    args = SimpleNamespace(
        files=[str(work / "results.json")],
        history=None,
        run=None,
        namespace=None,
        kubectl="kubectl",
        baseline=None,
        title=None,
        output=str(work / "report.html"),
        csv=None,
    )
    report_ms = timed(lambda: report.cmd_report(args), repeat)
    return {"analyze_ms": analyze_ms, "report_ms": report_ms, "peak_rss_mb": peak_rss_mb()}


def measure_judge(work: Path, repeat: int) -> dict:
    """In a process of its own: the operator's judgement over the listed history."""
    spec, listed = spec_of(), (work / "results.json").read_text()
    analysis = json.loads((work / "analysis.json").read_text())
    verdict = judge_once(listed, spec, analysis)
    return {"judge_ms": timed(lambda: judge_once(listed, spec, analysis), repeat), "verdict": verdict.outcome}


def in_process(kind: str, work: Path, repeat: int) -> dict:
    done = subprocess.run(
        [sys.executable, __file__, "measure", kind, str(work), str(repeat)], capture_output=True, text=True
    )
    if done.returncode != 0:
        sys.exit(f"history_growth.py: {kind} in {work}: {done.stderr.strip()[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure_size(n: int, repeat: int) -> dict:
    work = Path(tempfile.mkdtemp(prefix=f"history-growth-{n}-"))
    spec = spec_of()
    listed = json.dumps(
        {"apiVersion": f"{plan.GROUP}/{plan.VERSION}", "kind": "List", "items": result_documents("bench", n, spec)}
    )
    (work / "results.json").write_text(listed)
    (work / "points.json").write_text(json.dumps(analysis_points(listed, spec)))
    runner = in_process("runner", work, repeat)
    judge = in_process("judge", work, repeat)
    return {
        "results": n,
        "list_kb": round(len(listed) / 1024),
        **{f"{step}_ms": round(ms[0], 1) for step, ms in (("judge", judge["judge_ms"]), *steps(runner))},
        **{f"{step}_cpu_ms": round(ms[1], 1) for step, ms in (("judge", judge["judge_ms"]), *steps(runner))},
        "verdict": judge["verdict"],
        "judge_peak_rss_mb": round(judge["peak_rss_mb"], 1),
        "runner_peak_rss_mb": round(runner["peak_rss_mb"], 1),
    }


def steps(runner: dict) -> list[tuple[str, list[float]]]:
    return [("analyze", runner["analyze_ms"]), ("report", runner["report_ms"])]


def table(points: list[dict]) -> Iterator[str]:
    yield (
        "| results | listed JSON KB | judgement ms (CPU ms) | verdict | judge peak RSS MB "
        "| change-point analysis ms (CPU ms) | `tpcc report` ms (CPU ms) | report peak RSS MB |"
    )
    yield "|---|---|---|---|---|---|---|---|"
    for p in points:
        yield (
            f"| {p['results']:,} | {p['list_kb']:,} | {p['judge_ms']} ({p['judge_cpu_ms']}) | {p['verdict']} "
            f"| {p['judge_peak_rss_mb']} | {p['analyze_ms']} ({p['analyze_cpu_ms']}) "
            f"| {p['report_ms']} ({p['report_cpu_ms']}) | {p['runner_peak_rss_mb']} |"
        )


def goals(points: list[dict]) -> Iterator[str]:
    """On CPU time, which a machine shared with other work inflates less than wall time."""
    sizes = [p["results"] for p in points]
    for step, name in (("judge", "judgement"), ("analyze", "change-point analysis"), ("report", "tpcc report")):
        yield growth.at_most_linear(f"{name} CPU", sizes, [p[f"{step}_cpu_ms"] for p in points])
    largest = points[-1]
    within = "met" if largest["judge_peak_rss_mb"] < GOAL_MB else "NOT met"
    yield (
        f"judge peak RSS at {largest['results']:,} results: {largest['judge_peak_rss_mb']} MB "
        f"(goal: under {GOAL_MB:.0f} MB): {within}"
    )


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "measure":
        kind, work, repeat = sys.argv[2], Path(sys.argv[3]), int(sys.argv[4])
        out = (measure_runner if kind == "runner" else measure_judge)(work, repeat)
        print(json.dumps({**out, "peak_rss_mb": peak_rss_mb()}))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10,100,1000", help="results in the history, comma-separated")
    ap.add_argument("--repeat", type=int, default=5, help="measurements of each (the median is printed)")
    a = ap.parse_args()
    print(f"machine: {growth.machine()}; commit {growth.commit('operator/tpcc_operator', 'runner-image/tpcc_runner')}")
    points = []
    for n in (int(s) for s in a.sizes.split(",")):
        points.append(measure_size(n, a.repeat))
        print(json.dumps(points[-1]), flush=True)
    print(f"done: {growth.load_average()}")
    print("\n".join(table(points)))
    print("\n".join(goals(points)))


if __name__ == "__main__":
    main()
