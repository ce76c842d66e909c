"""The regression verdict: tries to fool the judge with runs that are slower, noisy, faster,
without history, and faster but losing orders or violating consistency. The history is made by
the operator's own code: each finished run's BenchmarkResult, as written and listed back."""

from __future__ import annotations

import copy
import datetime as dt

import crd_schema
import pytest
import yaml
from runner_docs import durability_report, pod_results, results_status
from specs import _regression, regression_policy
from test_phases import CHECK_OK, T0, Driver
from test_spec_edits_and_kstatus import kstatus
from tpcc_operator import history, plan, regression
from tpcc_operator.regression import Policy, Summary, comparison_hash, judge
from tpcc_operator.results import consistency_status, durability_status, run_status
from tpcc_operator.runspec import RunSpec
from tpcc_operator.stages.actions import CleanUp, PruneResults, RetireOldGenerations, WriteResult
from tpcc_operator.stages.dispatch import next_step
from tpcc_operator.stages.generations import spec_hash
from tpcc_operator.stages.machine import JobState, Step, World
from tpcc_operator.timestamps import rfc3339
from tpcc_operator.workloads.tpcc import TPCC_WORKLOAD

HASH = "h"


def summary(name: str, tpmc: float, p99: float = 10.0, verdict: str = "", completed: int = 0, **kw) -> Summary:
    return Summary(
        name=name,
        comparison_hash=kw.pop("hash", HASH),
        throughput=tpmc,
        p99_ms={"NEW_ORDER": p99},
        verdict=verdict,
        completed=f"2025-01-01T12:{completed:02d}:00Z",
        **kw,
    )


HISTORY = [
    summary("r1", 1000, 10.0, "Pass", 1),
    summary("r2", 1040, 10.4, "Pass", 2),
    summary("r3", 980, 9.8, "Inconclusive", 3),
]
POLICY = regression_policy()  # the CRD's: previous 3, tpmC -10%, NEW_ORDER p99 +50%


def test_a_run_30_percent_slower_is_regressed():
    v = judge(summary("now", 700.0), HISTORY, POLICY)
    assert v.outcome == "Regressed" and v.source == "previous" and set(v.baseline_results) == {"r1", "r2", "r3"}
    tpmc = v.metrics[0]
    assert (tpmc.name, tpmc.value, tpmc.baseline, tpmc.outcome) == ("tpmC", 700.0, 1000.0, "Regressed")
    assert tpmc.delta_percent == pytest.approx(-30.0)
    assert "tpmC -30.0% (limit 10%)" in v.message


@pytest.mark.parametrize("tpmc,p99", [(955.0, 11.0), (1049.0, 9.0), (1000.0, 14.9)])
def test_noise_within_the_thresholds_passes(tpmc, p99):
    v = judge(summary("now", tpmc, p99), HISTORY, POLICY)
    assert v.outcome == "Pass", v.message
    assert all(m.outcome == "Pass" for m in v.metrics)


def test_a_faster_run_is_improved():
    v = judge(summary("now", 1300.0, 7.0), HISTORY, POLICY)
    assert v.outcome == "Improved" and v.metrics[0].delta_percent == pytest.approx(30.0)


def test_same_throughput_but_a_slower_tail_is_regressed():
    v = judge(summary("now", 1000.0, 16.0), HISTORY, POLICY)
    assert v.outcome == "Regressed"
    p99 = v.metrics[1]
    assert (p99.name, p99.outcome, p99.baseline) == ("p99Ms/NEW_ORDER", "Regressed", 10.0)
    assert p99.delta_percent == pytest.approx(60.0)


def test_faster_throughput_does_not_hide_a_slower_tail():
    assert judge(summary("now", 1500.0, 20.0), HISTORY, POLICY).outcome == "Regressed"


@pytest.mark.parametrize(
    "history_,policy",
    [
        ([], regression_policy()),
        (HISTORY[:2], regression_policy(min_results=3)),
        # only results of another comparison, regressed or failed ones, or the run itself: no baseline
        (
            [
                summary("other", 1000, hash="x", verdict="Pass"),
                summary("bad", 1000, verdict="Regressed"),
                summary("lost", 1000, verdict="Failed"),
                summary("now", 1000, verdict="Pass"),
            ],
            regression_policy(),
        ),
    ],
)
def test_too_little_history_is_inconclusive(history_, policy):
    v = judge(summary("now", 100.0), history_, policy)  # even a 90 % drop: nothing to compare with
    assert v.outcome == "Inconclusive" and "needed" in v.message


@pytest.mark.parametrize(
    "broken",
    [
        dict(durable=False),  # an acknowledged order lost
        dict(consistent=False),  # a consistency condition violated
        dict(failed=True),  # the run ended Failed for any reason
    ],
)
def test_a_run_that_lost_data_fails_whatever_its_throughput(broken):
    faster = summary("now", 5000.0, 1.0, **broken)
    assert judge(faster, HISTORY, POLICY).outcome == "Failed"
    assert judge(faster, [], None).outcome == "Failed"  # without spec.regression too
    assert judge(faster, HISTORY, regression_policy(fixed=regression.FixedBaseline(10.0))).outcome == "Failed"


def test_the_baseline_is_the_median_of_the_newest_comparable_passing_results():
    old_fast = summary("old", 5000.0, 1.0, "Pass", 0)
    regressed = summary("slow", 500.0, 50.0, "Regressed", 4)  # never a baseline
    other = summary("other", 100.0, 99.0, "Pass", 5, hash="x")  # another workload
    v = judge(summary("now", 1000.0), [old_fast, regressed, other, *HISTORY], POLICY)
    assert set(v.baseline_results) == {"r1", "r2", "r3"} and v.metrics[0].baseline == 1000.0
    v = judge(summary("now", 1000.0), HISTORY, regression_policy(previous=1))
    assert v.baseline_results == ("r3",) and v.metrics[0].baseline == 980.0


def test_a_named_result_or_fixed_numbers():
    named = summary("golden", 2000.0, 5.0, "Pass")
    v = judge(summary("now", 1000.0), HISTORY, regression_policy(result="golden"), named)
    assert v.outcome == "Regressed" and v.source == "result" and v.baseline_results == ("golden",)
    assert judge(summary("now", 1000.0), HISTORY, regression_policy(result="golden"), None).outcome == "Inconclusive"
    fixed = regression_policy(fixed=regression.FixedBaseline(900.0, {"NEW_ORDER": 10.0}))
    v = judge(summary("now", 1000.0), [], fixed)
    assert v.outcome == "Improved" and v.source == "fixed" and v.metrics[0].baseline == 900.0


def test_policy_from_the_spec():
    p = Policy.from_spec(
        _regression(
            {
                "baseline": {"previous": 5, "minResults": 2},
                "maxTpmCDropPercent": 5,
                "maxP99IncreasePercent": {"NEW_ORDER": 20, "PAYMENT": 30},
                "onRegression": "Warn",
            }
        )
    )
    assert (p.previous, p.min_results, p.max_tpmc_drop_percent, p.on_regression) == (5, 2, 5.0, "Warn")
    assert p.max_p99_increase_percent == {"NEW_ORDER": 20.0, "PAYMENT": 30.0}
    assert Policy.from_spec(None) is None and Policy.from_spec(_regression({})) == regression_policy()
    assert (regression_policy().previous, regression_policy().min_results) == (3, 1)  # no baseline: the previous 3
    with pytest.raises(ValueError, match="one of previous, result, fixed"):
        Policy.from_spec(_regression({"baseline": {"previous": 2, "result": "x"}}))


def test_what_is_compared():
    base = {
        "database": {"type": "voltdb", "deploy": {"values": {"image": {"tag": "10.1"}}}},
        "workload": {"warehouses": 1, "clients": 4, "loadWorkers": 4},
        "runners": {"parallelism": 2},
    }
    same = copy.deepcopy(base)
    same["database"]["deploy"]["values"] = {"image": {"tag": "11.0"}, "sitesperhost": 1}  # the change under test
    same["runToken"] = "again"
    same["workload"]["loadWorkers"] = 8
    same["workload"]["maxErrorPercent"] = 2.5  # the run's own pass/fail gate, not what it measures
    assert comparison_hash(RunSpec.parse(same)) == comparison_hash(RunSpec.parse(base))
    other = copy.deepcopy(base)
    other["workload"]["clients"] = 8
    assert comparison_hash(RunSpec.parse(other)) != comparison_hash(RunSpec.parse(base))
    scaled = copy.deepcopy(base)
    scaled["workload"]["scaleDown"] = 10  # a tenth of the rows: another database size
    assert comparison_hash(RunSpec.parse(scaled)) != comparison_hash(RunSpec.parse(base))


# ---- through the state machine: three runs of one spec, re-run by runToken ----------------------


def finish(d: Driver, new_orders: int, latency_s: float, lost: int = 0, check: dict | None = None) -> None:
    """Drive a started run from Running to its terminal phase with the runner's real documents."""
    d.status.update(phase="Running", startAt="x")
    d.tick(
        World(
            runner=JobState(True, True),
            results={0: pod_results(0, 2, new_orders, latency_s), 1: pod_results(1, 2, new_orders, latency_s)},
        )
    )
    d.tick(World(verifier=JobState(True, True), durability_report=durability_report(90, lost=lost)))
    if d.phase == "Verifying":
        d.tick(World(checker=JobState(True, True), check_report=check or CHECK_OK))


class History:
    """The BenchmarkResults the operator wrote, listed back as kube.observe lists them."""

    def __init__(self):
        self.objects: dict[str, dict] = {}

    def world(self) -> World:
        return World(
            history=[history.summary_of(o) for o in self.objects.values()], results={0: pod_results(0, 2, 100, 0.01)}
        )

    def judge(self, d: Driver) -> Step:
        step = d.tick(self.world())
        for action in step.actions:
            if isinstance(action, WriteResult):
                self.objects[action.result.name] = history.result_object(action.result, "local/tpcc-runner:dev")
            if isinstance(action, PruneResults):
                for name in action.names:
                    del self.objects[name]
        return step


def rerun(d: Driver, token: str) -> None:
    d.spec["runToken"] = token
    d.run = plan.Run("bench", "perf", "uid", d.run.generation + 1)
    step = d.tick()
    assert d.phase == "Pending" and RetireOldGenerations() in step.actions
    assert "verdict" not in d.status


@pytest.fixture
def guarded(document_of):
    return document_of(
        {
            "database": {"type": "voltdb"},
            "workload": {"clients": 8},
            "runners": {"parallelism": 2},
            "regression": {"baseline": {"previous": 2}, "maxTpmCDropPercent": 10},
        }
    )


def test_three_runs_inconclusive_pass_then_regressed_fails_the_verdict(guarded):
    h, d = History(), Driver(guarded)
    d.tick()
    finish(d, 100, 0.010)
    assert d.phase == "Succeeded" and kstatus(2, d.status) == "InProgress"  # not judged yet
    h.judge(d)
    assert d.status["verdict"] == "Inconclusive" and kstatus(2, d.status) == "Current"
    assert d.condition("Ready")["reason"] == "Inconclusive" and d.condition("Regressed")["status"] == "False"

    rerun(d, "2")
    finish(d, 102, 0.010)
    h.judge(d)
    assert d.status["verdict"] == "Pass" and kstatus(3, d.status) == "Current"
    assert d.status["regression"]["baseline"] == {"source": "previous", "results": ["bench-g2-uid"]}

    d.spec["database"]["deploy"] = {"values": {"sitesperhost": 1}}  # slowed: still compared
    rerun(d, "3")
    finish(d, 65, 0.010)
    step = h.judge(d)
    assert d.status["verdict"] == "Regressed" and kstatus(4, d.status) == "Failed"
    ready, stalled = d.condition("Ready"), d.condition("Stalled")
    assert ready["status"] == "False" and stalled["status"] == "True" and stalled["reason"] == "Regressed"
    assert d.condition("Regressed")["status"] == "True" and d.phase == "Succeeded"
    tpmc = d.status["regression"]["metrics"][0]
    assert tpmc["name"] == "tpmC" and tpmc["outcome"] == "Regressed" and tpmc["deltaPercent"] < -30
    assert sorted(d.status["regression"]["baseline"]["results"]) == ["bench-g2-uid", "bench-g3-uid"]
    # a failed verdict keeps the database under cleanup OnSuccess, as a failure does
    assert CleanUp() not in step.actions and step.events[0].type == "Warning"
    assert sorted(h.objects) == ["bench-g2-uid", "bench-g3-uid", "bench-g4-uid"]
    result = h.objects["bench-g4-uid"]
    assert result["spec"]["verdict"] == "Regressed" and result["metadata"]["labels"][plan.LABEL_RUN] == "bench"
    assert result["metadata"]["labels"][plan.LABEL_SERIES] == "bench"  # a run's history is its own
    # nothing more on later ticks, and a restart judges nothing again
    assert d.tick(h.world()).actions == [] and d.status["verdict"] == "Regressed"


def test_warn_keeps_ready_and_says_regressed(guarded):
    guarded["regression"]["onRegression"] = "Warn"
    guarded["regression"]["baseline"] = {"fixed": {"tpmC": 1000.0}}
    d = Driver(guarded)
    d.tick()
    finish(d, 100, 0.010)
    step = History().judge(d)
    assert d.status["verdict"] == "Regressed" and kstatus(2, d.status) == "Current"
    assert d.condition("Ready")["status"] == "True" and d.condition("Regressed")["status"] == "True"
    assert CleanUp() in step.actions


@pytest.mark.parametrize(
    "lost,check",
    [(3, None), (0, {"passed": False, "conditions": [{"number": 2, "passed": False, "checked": 10, "violations": 1}]})],
)
def test_a_faster_run_losing_orders_is_failed(guarded, lost, check):
    guarded["regression"]["baseline"] = {"fixed": {"tpmC": 10.0}}
    d = Driver(guarded)
    d.tick()
    finish(d, 500, 0.001, lost=lost, check=check)
    History().judge(d)
    assert d.phase == "Failed" and d.status["verdict"] == "Failed" and kstatus(2, d.status) == "Failed"


def test_a_status_that_hides_a_loss_is_still_failed():
    """Succeeded in phase but the durability or consistency record says otherwise."""
    docs = [pod_results(0, 1, 500, 0.001)]
    status = {
        "phase": "Succeeded",
        "results": run_status(docs).to_json(),
        "durability": durability_status(durability_report(90, lost=1)).to_json(),
        "consistency": consistency_status(CHECK_OK).to_json(),
    }
    fixed = regression_policy(fixed=regression.FixedBaseline(1.0))
    assert judge(Summary.of_status("x", HASH, status, TPCC_WORKLOAD.figures(status)), [], fixed).outcome == "Failed"


def test_history_is_pruned_to_its_limit(guarded):
    guarded["history"] = {"limit": 2}
    h, d = History(), Driver(guarded)
    d.tick()
    for i in range(4):
        if i:
            rerun(d, str(i))
        finish(d, 100, 0.010)
        d.now += dt.timedelta(minutes=1)
        h.judge(d)
    assert sorted(h.objects) == ["bench-g4-uid", "bench-g5-uid"]


def test_the_record_and_its_configmap():
    run = plan.Run("bench", "perf", "0f3e9a77-1111", 3)
    assert history.result_name(run) == "bench-g3-0f3e9"
    spec = {"database": {"type": "voltdb"}, "runToken": "t", "history": {"deleteWithRun": True}}
    docs = [pod_results(0, 1, 100, 0.01)]
    status = {
        "phase": "Succeeded",
        "results": run_status(docs).to_json(),
        "verdict": "Pass",
        "completionTime": "t",
        "regression": regression.Verdict("Pass", "ok").to_status("abc", "Fail").to_json(),
        "durability": durability_status(durability_report(9)).to_json(),
        "consistency": consistency_status(CHECK_OK).to_json(),
    }
    git = history.GitSource.from_metadata(
        {
            "annotations": {
                "argocd.argoproj.io/tracking-id": "app:bench.tpcc.dev/BenchmarkRun:perf/bench",
                history.ANNOTATION_REVISION: "a1b2c3",
            }
        }
    )
    from tpcc_contract.results import merge_results

    rec = history.record(run, RunSpec.parse(spec), status, merge_results(docs), git, ["local/voltdb:10.1.1"])
    obj = history.result_object(rec, "local/tpcc-runner:dev")
    s = obj["spec"]
    assert (s["run"], s["verdict"], s["comparisonHash"], s["runToken"], s["durable"], s["consistent"]) == (
        "bench",
        "Pass",
        "abc",
        "t",
        True,
        True,
    )
    assert s["p99Ms"]["NEW_ORDER"] == pytest.approx(10.0, rel=0.01) and s["tpmC"] == 100.0
    assert s["transactionsPerSecond"] == status["results"]["transactionsPerSecond"] > 0
    assert "serverAgreement" not in s  # the pod's document has no server section
    assert s["git"] == {"tool": "ArgoCD", "source": "app:bench.tpcc.dev/BenchmarkRun:perf/bench", "revision": "a1b2c3"}
    assert s["database"]["images"] == ["local/voltdb:10.1.1"] and s["runnerImage"] == "local/tpcc-runner:dev"
    assert obj["metadata"]["ownerReferences"][0]["uid"] == run.uid  # deleteWithRun
    cm = history.result_configmap(rec, "result-uid")
    assert cm["metadata"]["ownerReferences"][0]["uid"] == "result-uid"
    assert plan.LABEL_RUN not in cm["metadata"]["labels"]  # retiring generations must not take it
    # the recommended labels, as on the run's Jobs: its instance of tpcc-benchmark, component "result"
    recommended = {k: v for k, v in plan.labels(run, role="result").items() if k.startswith("app.kubernetes.io/")}
    assert len(recommended) == 6 and recommended[plan.LABEL_COMPONENT] == "result"
    assert obj["metadata"]["labels"].items() >= recommended.items()
    assert {k: v for k, v in cm["metadata"]["labels"].items() if k.startswith("app.kubernetes.io/")} == recommended
    assert '"tpmC":100.0' in cm["data"]["results.json"]
    flux = history.GitSource.from_metadata(
        {
            "labels": {
                "kustomize.toolkit.fluxcd.io/name": "bench",
                "kustomize.toolkit.fluxcd.io/namespace": "flux-system",
            }
        }
    )
    assert flux == history.GitSource("Flux", "flux-system/bench", None)
    assert history.GitSource.from_metadata({"labels": {"app": "x"}}) is None


def test_large_results_are_compressed_under_a_mebibyte():
    import base64
    import gzip
    import json
    import random

    rng = random.Random(1)
    big = {"results": {"timeline": [{"t": i, "tpmC": rng.random()} for i in range(60_000)], "tpmC": 1.0}}
    data, binary = history.results_payload(big)
    assert not data and len(binary["results.json.gz"]) < 1024 * 1024
    assert json.loads(gzip.decompress(base64.b64decode(binary["results.json.gz"])))["results"]["tpmC"] == 1.0


def test_the_result_name_never_reuses_another_runs():
    a, b = plan.Run("bench", "ns", "aaaaa-1", 1), plan.Run("bench", "ns", "bbbbb-2", 1)
    assert history.result_name(a) != history.result_name(b)


def test_run_token_starts_a_new_run_once(guarded):
    d = Driver(guarded)
    d.tick()
    before = d.status["specHash"]
    d.status.update(phase="Succeeded", completionTime=rfc3339(T0), verdict="Pass", cleanedUp=True)
    assert spec_hash(RunSpec.parse(guarded)) == before  # no token: the hash is what it always was
    rerun(d, "a")
    d.status.update(phase="Succeeded", verdict="Pass", cleanedUp=True)
    # the same token seen again (resync, restart) starts nothing
    for _ in range(3):
        step = next_step(d.run, d.typed, copy.deepcopy(d.status), World(), d.now)
        assert RetireOldGenerations() not in step.actions and d.status["specHash"] != before


# ---- the CRDs: what the operator writes fits them (the API server would prune unknown fields) ------


def _result_schema() -> dict:
    crd = yaml.safe_load((crd_schema.ROOT / "crds" / "benchmarkresult.yaml").read_text())
    return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def test_benchmarkresult_crd_is_shipped_by_the_chart_and_names_its_columns():
    path = crd_schema.ROOT / "crds" / "benchmarkresult.yaml"
    assert (
        crd_schema.ROOT / "charts" / "tpcc-operator" / "crds" / "benchmarkresult.yaml"
    ).read_text() == path.read_text()
    version = yaml.safe_load(path.read_text())["spec"]["versions"][0]
    assert [c["name"] for c in version["additionalPrinterColumns"]] == [
        "Run",
        "Verdict",
        "tpmC",
        "p99 NewOrder",
        "Durable",
        "Consistent",
        "Age",
    ]
    assert {"rule": "self == oldSelf", "message": "a BenchmarkResult is immutable"} in version["schema"][
        "openAPIV3Schema"
    ]["properties"]["spec"]["x-kubernetes-validations"]


def test_what_the_operator_writes_fits_both_crds(guarded):
    h, d = History(), Driver(guarded)
    d.tick()
    finish(d, 100, 0.010)
    h.judge(d)
    d.spec["runToken"] = "2"
    d.run = plan.Run("bench", "perf", "uid", 3)
    d.tick()
    finish(d, 60, 0.010)
    h.judge(d)
    assert d.status["verdict"] == "Regressed"
    status_schema = crd_schema.crd_schema()["properties"]["status"]
    mine = {k: d.status[k] for k in ("verdict", "regression", "resultName", "conditions")}
    assert crd_schema.violations(status_schema, mine) == []
    spec_schema = copy.deepcopy(_result_schema()["properties"]["spec"])
    spec_schema.pop("x-kubernetes-validations")  # oldSelf exists only on update
    for obj in h.objects.values():
        assert crd_schema.violations(spec_schema, obj["spec"]) == []


def test_the_regression_spec_is_validated_at_apply(guarded):
    manifest = {
        "apiVersion": "bench.tpcc.dev/v1alpha1",
        "kind": "BenchmarkRun",
        "metadata": {"name": "bench"},
        "spec": {
            "database": {"type": "voltdb"},
            "runToken": "2025-01-01",
            "regression": {
                "baseline": {"previous": 5},
                "maxP99IncreasePercent": {"PAYMENT": 20},
                "onRegression": "Warn",
            },
        },
    }
    assert crd_schema.validate(manifest) == []
    spec = crd_schema.defaulted_spec(manifest["spec"])
    assert spec["regression"]["maxTpmCDropPercent"] == 10 and spec["history"] == {"limit": 50, "deleteWithRun": False}
    manifest["spec"]["regression"]["baseline"]["result"] = "bench-g1-abcde"
    assert any("give one of previous, result, fixed" in e for e in crd_schema.validate(manifest))
    manifest["spec"]["regression"] = {"onRegression": "Ignore"}
    assert any("onRegression" in e for e in crd_schema.validate(manifest))


def test_a_loss_counts_even_when_the_durable_flag_is_missing():
    """The API server prunes status fields its schema lacks: the count of lost orders decides."""
    status = {"phase": "Succeeded", "results": results_status(5000.0), "durability": {"acknowledged": 90, "lost": 2}}
    this = Summary.of_status("x", HASH, status, TPCC_WORKLOAD.figures(status))
    assert this.durable is False and judge(this, HISTORY, POLICY).outcome == "Failed"
    figures = TPCC_WORKLOAD.figures(status)
    assert Summary.of_status("x", HASH, {**status, "durability": {"lost": 0}}, figures).durable is True
    assert Summary.of_status("x", HASH, {**status, "durability": {}}, figures).durable is None


def test_the_runs_of_a_schedule_share_one_history():
    """Each scheduled run is a new object with a new name: its results are compared and
    pruned within the schedule's series, or `previous: N` would never find a baseline."""
    scheduled = plan.Run("nightly-29412345", "perf", "uid-9", 1, series="nightly")
    assert scheduled.history_series == "nightly" and plan.Run("bench", "perf", "u", 1).history_series == "bench"
    spec = {"database": {"type": "voltdb"}, "workload": {}, "runners": {}}
    status = {"verdict": "Pass", "phase": "Succeeded", "regression": {"comparisonHash": "c0ffee"}}
    rec = history.record(scheduled, RunSpec.parse(spec), status, None, None, [])
    assert rec.labels[plan.LABEL_SERIES] == "nightly" and rec.labels[plan.LABEL_RUN] == "nightly-29412345"
