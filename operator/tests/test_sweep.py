"""spec.sweep: every cell on one deployed database, warehouses outer and loaded once per size,
each cell a full run with its own objects, checks and BenchmarkResult; the sweep's verdict."""

from __future__ import annotations

from dataclasses import replace

import pytest
from crd_schema import validate
from runner_docs import durability_report, pod_results, results_status
from specs import edited
from test_phases import CHECK_OK, IPS, RUN, Driver, kinds, the
from tpcc_operator import history, plan, regression, runner_jobs, runspec, sweep, sweep_layout
from tpcc_operator.runspec import RunSpec
from tpcc_operator.stages.actions import (
    CleanUp,
    CreateAnalysisJob,
    CreateCheckJob,
    CreateLoadJob,
    CreateRunJob,
    CreateRunObjects,
    WriteResult,
    WriteStartAt,
)
from tpcc_operator.stages.generations import spec_hash
from tpcc_operator.stages.kstatus import regression_fails
from tpcc_operator.stages.machine import JobState, World

SETTINGS = plan.Settings(charts_dir=plan.Path("charts"))


@pytest.fixture
def sweep_spec(spec_of):
    return spec_of(
        {
            "database": {"type": "voltdb"},
            "runners": {"parallelism": 2},
            "regression": {"baseline": {"previous": 1}, "maxTpmCDropPercent": 10},
            "sweep": {"warehouses": [2, 1], "clients": [2, 4]},
        }
    )


def test_cells_run_warehouses_outer_and_load_once_per_size(sweep_spec):
    cells = sweep_layout.sweep_cells(edited(sweep_spec, "sweep.repetitions", 2))
    assert [(c.warehouses, c.clients, c.repetition) for c in cells] == [
        (2, 2, 1),
        (2, 2, 2),
        (2, 4, 1),
        (2, 4, 2),
        (1, 2, 1),
        (1, 2, 2),
        (1, 4, 1),
        (1, 4, 2),
    ]
    assert [c.index for c in cells if c.loads] == [0, 4]
    assert sweep_layout.load_cells(cells, cells[6]) == cells[4:7]
    # a list left out is the workload's one value
    only_clients = sweep_layout.sweep_cells(edited(sweep_spec, "sweep", {"clients": [2, 4]}))
    assert [(c.warehouses, c.clients) for c in only_clients] == [(1, 2), (1, 4)]
    assert sweep_layout.sweep_cells(edited(sweep_spec, "sweep", None)) == []


def test_a_ycsb_sweep_has_no_warehouses(sweep_spec):
    """The warehouse counts are TPC-C's (workloads.tpcc): a YCSB sweep varies the clients only,
    its cells, their labels and the sweep's own message name no warehouse count."""
    ycsb = edited(edited(sweep_spec, "workload", {"kind": "ycsb"}), "sweep", {"clients": [2, 4]})
    cells = sweep_layout.sweep_cells(ycsb)
    assert [(c.warehouses, c.clients, c.loads) for c in cells] == [(None, 2, True), (None, 4, False)]
    assert sweep_layout.cell_spec(ycsb, cells[1]).workload == replace(ycsb.workload, clients=4)
    table = sweep.initial(cells, sweep_layout.sweep_plan(ycsb, cells))
    assert [sweep.label(c) for c in table.cells] == ["2 clients #1", "4 clients #1"]
    assert not [c for c in table.to_json()["cells"] if "warehouses" in c]
    d = Driver(ycsb)
    d.tick(World())
    assert "a sweep of 2 cells ([2, 4] clients x 1) on 1 loads" in str(d.events), d.events


def test_a_cell_measures_its_own_workload_under_its_own_names(sweep_spec):
    cells = sweep_layout.sweep_cells(sweep_spec)
    third = sweep_layout.cell_spec(sweep_spec, cells[2])
    assert third.sweep is None and (third.workload.warehouses, third.workload.clients) == (1, 2)
    assert third.workload.reset_before_load  # the sweep's own earlier load is replaced
    assert sweep_layout.cell_spec(sweep_spec, cells[1]).workload.reset_before_load is None

    run = sweep_layout.cell_run(RUN, cells[2])
    assert plan.release_name(run) == plan.release_name(RUN) == "bench-g2"  # one database
    assert plan.job_name(run, "runner") == "bench-g2-c2-runner"
    assert plan.start_configmap_name(run) == "bench-g2-c2-start"
    job = runner_jobs.load_job(run, third, SETTINGS)
    assert (
        job["metadata"]["name"] == "bench-g2-c2-loader"
        and "--reset" in job["spec"]["template"]["spec"]["containers"][0]["args"]
    )
    # every cell draws its own inputs (a repetition is not the same stream again)
    assert (
        len({runner_jobs.run_seed(sweep_layout.cell_run(RUN, c), sweep_layout.cell_spec(sweep_spec, c)) for c in cells})
        == 4
    )


def test_the_check_of_a_cell_counts_the_deliveries_of_every_cell_on_its_load(sweep_spec):
    cells = sweep_layout.sweep_cells(sweep_spec)
    run = sweep_layout.cell_run(RUN, cells[3])
    job = runner_jobs.check_job(run, sweep_layout.cell_spec(sweep_spec, cells[3]), SETTINGS, earlier_cells=(2,))
    pod = job["spec"]["template"]["spec"]
    args = pod["containers"][0]["args"]
    paths = [args[i + 1] for i, a in enumerate(args) if a == "--deliveries"]
    assert paths == ["/etc/tpcc/check/deliveries.json", "/etc/tpcc/check-c2/deliveries.json"]
    mounted = {v["configMap"]["name"] for v in pod["volumes"] if "configMap" in v}
    assert mounted == {"bench-g2-c3-check", "bench-g2-c2-check"}


def _initial(spec: RunSpec) -> sweep.Table:
    cells = sweep_layout.sweep_cells(spec)
    return sweep.initial(cells, sweep_layout.sweep_plan(spec, cells))


def _measure_cell(d: Driver, tpmc_pod: int, check=CHECK_OK) -> tuple[int, ...]:
    """From the cell's Running phase (runner Job not created) to its check's report; returns
    the earlier cells whose Deliveries the check counts."""
    assert d.phase == "Running"
    assert CreateRunJob() in d.tick(World()).actions
    start = the(d.tick(World(runner=JobState(exists=True), runners_ready=2)), WriteStartAt).start_at
    docs = {0: pod_results(0, 2, tpmc_pod, 0.01), 1: pod_results(1, 2, tpmc_pod, 0.01)}
    d.tick(World(runner=JobState(exists=True, succeeded=True), start_at=start, results=docs))
    assert d.phase == "Verifying"
    d.tick(World(database_ready=1, runner_pod_ips=IPS))
    d.tick(World(verifier=JobState(exists=True, succeeded=True), durability_report=durability_report(90)))
    check_job = d.tick(World())
    assert kinds(check_job.actions) == [CreateCheckJob]
    d.tick(World(checker=JobState(exists=True, succeeded=True), check_report=check, results=docs))
    return the(check_job, CreateCheckJob).earlier_cells


def test_a_two_by_two_sweep_runs_four_cells_on_one_database(sweep_spec):
    d = Driver(sweep_spec)
    d.tick()
    assert d.status["sweep"]["progress"] == "0/4" and d.status["sweep"]["cells"][0]["state"] == "Pending"
    d.tick()
    assert d.phase == "Deploying" and d.status["sweep"]["cells"][0]["state"] == "Running"
    d.tick()
    d.tick(World(database_ready=1))
    assert d.tick(World()).actions == [CreateLoadJob()]
    d.tick(World(load=JobState(exists=True, succeeded=True)))
    results = []
    for index, (load, earlier) in enumerate([(False, ()), (False, (0,)), (True, ()), (False, (2,))]):
        if index:  # the cell's objects first, then (for a new size) its load
            assert d.tick(World()).actions == [CreateRunObjects()]
            assert d.status["sweep"]["cells"][index]["state"] == "Running"
            if load:
                assert d.phase == "Loading" and d.tick(World()).actions == [CreateLoadJob()]
                d.tick(World(load=JobState(exists=True, succeeded=True)))
        assert d.status.get("results") is None and d.status.get("startAt") is None  # nothing of the last cell
        assert _measure_cell(d, 100 + index) == earlier
        assert d.status["sweep"]["cells"][index]["state"] == "Succeeded"
        # the judging tick: the cell's verdict and BenchmarkResult, then the next cell
        step = d.tick(World(results={0: pod_results(0, 2, 100 + index, 0.01)}))
        result = the(step, WriteResult).result
        assert result.name == f"bench-g2-c{index}-uid"
        assert result.spec.run_spec["workload"]["clients"] == sweep_layout.sweep_cells(sweep_spec)[index].clients
        results.append(result)
        row = d.status["sweep"]["cells"][index]
        assert row["verdict"] == "Inconclusive" and row["result"] == result.name and row["tpmC"] > 0
    assert d.phase == "Succeeded" and d.status["verdict"] == "Inconclusive"
    assert d.status["sweep"] | {"cells": None, "configurations": None} == {
        "current": 3,
        "total": 4,
        "progress": "4/4",
        "succeeded": 4,
        "failed": 0,
        "regressed": 0,
        "cells": None,
        "configurations": None,
        "comparisons": [],  # one repetition each: nothing to compare
        "plan": {"cells": 4, "loads": 2, "deployments": 1, "estimatedSeconds": 4 * (5 + 30 + 300)},
    }
    assert [(c["warehouses"], c["clients"], c["tpmC"]["n"]) for c in d.status["sweep"]["configurations"]] == [
        (2, 2, 1),
        (2, 4, 1),
        (1, 2, 1),
        (1, 4, 1),
    ]
    assert "sweep of 4 cells: 4 Inconclusive" in d.status["regression"]["message"]
    assert d.condition("Ready")["status"] == "True"
    # every cell compares only with itself: four comparison hashes
    assert len({r.spec.comparison_hash for r in results}) == 4
    step = d.tick()
    assert CleanUp() in step.actions and WriteResult not in kinds(step.actions)


def test_check_jobs_name_the_earlier_cells_of_their_load(sweep_spec):
    d = Driver(sweep_spec)
    status = {
        "phase": "Verifying",
        "durability": {"durable": True},
        "specHash": spec_hash(sweep_spec),
        "observedGeneration": 2,
        "runGeneration": 2,
        "sweep": {**_initial(sweep_spec).to_json(), "current": 3},
    }
    status["sweep"] = sweep.with_cell(sweep.Table.from_json(status["sweep"]), 3, state="Running").to_json()
    d.status = status
    step = d.tick(World())
    assert step.actions == [CreateCheckJob((2,))]


def test_a_failed_cell_ends_the_sweep_failed_and_records_it(sweep_spec):
    d = Driver(sweep_spec)
    for world in (
        None,
        None,
        None,
        World(database_ready=1),
        World(),
        World(load=JobState(exists=True, succeeded=True)),
    ):
        d.tick(world)
    violated = {"passed": False, "conditions": [{"number": 11, "passed": False, "checked": 20, "violations": 1}]}
    _measure_cell(d, 100, check=violated)
    assert d.phase == "Failed" and d.status["reason"] == "ConsistencyViolated"
    step = d.tick(World(results={0: pod_results(0, 2, 100, 0.01)}))
    result = the(step, WriteResult).result
    assert result.name == "bench-g2-c0-uid" and result.verdict == "Failed"
    table = d.status["sweep"]
    assert table["cells"][0]["state"] == "Failed" and table["cells"][0]["reason"] == "ConsistencyViolated"
    assert [c["state"] for c in table["cells"][1:]] == ["Pending"] * 3
    assert d.status["verdict"] == "Failed" and "3 not run" in d.status["regression"]["message"]
    assert d.condition("Stalled")["status"] == "True"


def test_a_regressed_cell_does_not_stop_the_sweep_but_fails_its_verdict(sweep_spec):
    table = _initial(sweep_spec)
    for i, v in enumerate(["Pass", "Regressed", "Improved", "Pass"]):
        table = sweep.with_cell(table, i, state="Succeeded", verdict=v, result=f"r{i}")
    assert sweep.verdict(table) == "Regressed" and table.regressed == 1
    assert "1 Regressed" in sweep.message(table) and "2 warehouses x 4 clients #1 (r1)" in sweep.message(table)
    status = {"phase": "Succeeded", "verdict": sweep.verdict(table), "regression": {"onRegression": "Fail"}}
    assert regression_fails(status)
    assert sweep.verdict(sweep.with_cell(table, 3, state="Failed", verdict="Failed")) == "Failed"


def test_adding_a_sweep_is_a_new_run_but_runs_without_one_keep_their_hash(sweep_spec):
    plain = edited(sweep_spec, "sweep", None)
    assert spec_hash(plain) != spec_hash(sweep_spec)
    assert spec_hash(RunSpec.parse({**plain.document, "sweep": None})) == spec_hash(plain)


# ---- sweep.matrix: more axes than warehouses and clients, every cell on the shared load --------

MATRIX = [
    {"field": "workload.remotePercent.newOrderLines", "values": ["0", "1"]},
    {"field": "workload.driverOptions.call_timeout", "values": ["30", "60"]},
]


def _args(job: dict) -> list[str]:
    return job["spec"]["template"]["spec"]["containers"][0]["args"]


@pytest.fixture
def matrix_spec(spec_of):
    return spec_of(
        {
            "database": {"type": "voltdb"},
            "runners": {"parallelism": 2},
            "workload": {"driverOptions": {"load_timeout": "900"}},
            "sweep": {"warehouses": [2, 1], "clients": [2], "repetitions": 2, "matrix": MATRIX},
        }
    )


def test_matrix_cells_are_every_combination_after_clients_and_before_repetitions(matrix_spec):
    cells = sweep_layout.sweep_cells(matrix_spec)
    assert [(c.warehouses, dict(c.matrix), c.repetition) for c in cells[:8]] == [
        (2, {"workload.remotePercent.newOrderLines": line, "workload.driverOptions.call_timeout": timeout}, rep)
        for line in ("0", "1")
        for timeout in ("30", "60")
        for rep in (1, 2)
    ]
    assert len(cells) == 16 and cells[8].warehouses == 1 and cells[8].matrix == cells[0].matrix
    # one load per warehouse count, whatever the matrix: the plan says so before anything runs
    assert [c.index for c in cells if c.loads] == [0, 8]
    assert sweep_layout.sweep_plan(matrix_spec, cells) == sweep_layout.SweepPlan(
        cells=16, loads=2, deployments=1, estimated_seconds=16 * (5 + 30 + 300)
    )
    external = edited(matrix_spec, "database", {"type": "voltdb", "external": {"endpoints": ["db:21212"]}})
    assert sweep_layout.sweep_plan(external, sweep_layout.sweep_cells(external)).deployments == 0


def test_a_matrix_cell_runs_with_its_own_values(matrix_spec):
    cells = sweep_layout.sweep_cells(matrix_spec)
    cell = cells[6]  # 2 warehouses, 1 % remote lines, call_timeout 60, repetition 1
    measured = sweep_layout.cell_spec(matrix_spec, cell)
    assert measured.workload.remote_percent == runspec.RemotePercent(new_order_lines=1)  # typed: an int
    assert measured.workload.driver_options == {"load_timeout": "900", "call_timeout": "60"}
    args = _args(runner_jobs.run_job(sweep_layout.cell_run(RUN, cell), measured, SETTINGS))
    assert args[args.index("--remote-line-percent") + 1] == "1" and "--remote-payment-percent" not in args
    assert "call_timeout=60" in args and "load_timeout=900" in args
    first = sweep_layout.cell_spec(matrix_spec, cells[0])
    assert first.workload.remote_percent.new_order_lines == 0 and first.workload.driver_options["call_timeout"] == "30"
    assert matrix_spec.workload.driver_options == {"load_timeout": "900"}  # the sweep's own spec untouched
    paced = edited(matrix_spec, "sweep.matrix", [{"field": "workload.pacing", "values": ["none", "spec"]}])
    think = [
        "--think-time" in _args(runner_jobs.run_job(RUN, sweep_layout.cell_spec(paced, c), SETTINGS))
        for c in sweep_layout.sweep_cells(paced)[:4]
    ]
    assert think == [False, False, True, True]
    retrying = edited(matrix_spec, "sweep.matrix", [{"field": "workload.retryWait", "values": ["backoff", "pytpcc"]}])
    waits = []
    for c in sweep_layout.sweep_cells(retrying)[:4]:
        args = _args(runner_jobs.run_job(RUN, sweep_layout.cell_spec(retrying, c), SETTINGS))
        waits.append(args[args.index("--retry-wait") + 1])
    assert waits == ["backoff", "backoff", "pytpcc", "pytpcc"]
    offered = edited(
        matrix_spec, "sweep.matrix", [{"field": "workload.targetTransactionsPerSecond", "values": ["100", "2000"]}]
    )
    rates = []
    for c in sweep_layout.sweep_cells(offered)[:4]:
        measured = sweep_layout.cell_spec(offered, c)
        args = _args(runner_jobs.run_job(RUN, measured, SETTINGS))
        rates.append((measured.workload.target_transactions_per_second, args[args.index("--target-tps") + 1]))
    assert rates == [(100, "100"), (100, "100"), (2000, "2000"), (2000, "2000")]  # typed: an int


def test_a_matrix_cell_compares_with_the_same_values_only(matrix_spec):
    cells = sweep_layout.sweep_cells(matrix_spec)
    hashes = {
        c.matrix: regression.comparison_hash(sweep_layout.cell_spec(matrix_spec, c)) for c in cells if c.warehouses == 2
    }
    assert len(set(hashes.values())) == 4  # each combination its own history
    # the same configuration written out as a run of its own is the same history
    plain = RunSpec.parse(
        {
            **matrix_spec.document,
            "sweep": None,
            "workload": {
                **matrix_spec.document["workload"],
                "warehouses": 2,
                "clients": 2,
                "remotePercent": {"newOrderLines": 1},
                "driverOptions": {"load_timeout": "900", "call_timeout": "60"},
            },
        }
    )
    assert regression.comparison_hash(plain) == hashes[cells[6].matrix]


@pytest.fixture
def two_value_sweep(spec_of):
    return spec_of(
        {
            "database": {"type": "voltdb"},
            "runners": {"parallelism": 2},
            "regression": {"baseline": {"previous": 1}, "maxTpmCDropPercent": 10},
            "sweep": {"clients": [2], "matrix": [MATRIX[0]]},
        }
    )


def test_a_matrix_sweep_loads_once_and_judges_each_cell_against_its_own_values(two_value_sweep):
    cells = sweep_layout.sweep_cells(two_value_sweep)
    earlier = {c.matrix: regression.comparison_hash(sweep_layout.cell_spec(two_value_sweep, c)) for c in cells}
    # an earlier run measured far less with no remote lines and far more with 1 %: matched by
    # values, this run's cells improved and regressed (the other way round, if they were swapped)
    history_ = [
        history.Entry(
            regression.Summary(
                f"earlier-c{i}", earlier[c.matrix], tpmc, verdict="Pass", completed="2025-01-01T00:00:00Z"
            )
        )
        for i, (c, tpmc) in enumerate(zip(cells, (1.0, 1e9)))
    ]
    d = Driver(two_value_sweep)
    for world in (
        None,
        None,
        None,
        World(database_ready=1),
        World(),
        World(load=JobState(exists=True, succeeded=True)),
    ):
        d.tick(world)
    assert d.status["sweep"]["plan"] == {"cells": 2, "loads": 1, "deployments": 1, "estimatedSeconds": 2 * 335}
    recorded = []
    for index in (0, 1):
        if index:
            assert d.tick(World()).actions == [CreateRunObjects()] and d.phase == "Running"
        _measure_cell(d, 100)
        step = d.tick(World(results={0: pod_results(0, 2, 100, 0.01)}, history=history_))
        recorded.append(the(step, WriteResult).result.spec.to_json())
    assert d.actions.count(CreateLoadJob()) == 1 and d.phase == "Succeeded"
    rows = d.status["sweep"]["cells"]
    values = [{"workload.remotePercent.newOrderLines": v} for v in ("0", "1")]
    assert [r["matrix"] for r in rows] == values and [r["verdict"] for r in rows] == ["Improved", "Regressed"]
    assert [r["matrix"] for r in recorded] == values
    assert [r["runSpec"]["workload"]["remotePercent"] for r in recorded] == [{"newOrderLines": 0}, {"newOrderLines": 1}]
    assert [c["matrix"] for c in d.status["sweep"]["configurations"]] == values
    assert "newOrderLines=1 #1" in d.status["regression"]["message"]


# ---- spec.regression.changePoints: the analyzer Job before the verdict ------------------------


def _history(spec: dict, n: int) -> list[history.Entry]:
    chash = regression.comparison_hash(spec)
    return [
        history.Entry(
            regression.Summary(
                f"earlier-g{i}-uid",
                chash,
                100.0,
                {"NEW_ORDER": 10.0},
                verdict="Pass",
                completed=f"2025-01-01T0{i}:00:00Z",
            )
        )
        for i in range(n)
    ]


@pytest.fixture
def change_point_run(spec_of):
    return spec_of(
        {
            "database": {"type": "voltdb"},
            "runners": {"parallelism": 2},
            "regression": {"baseline": {"previous": 3}, "changePoints": {"minHistory": 3}},
        }
    )


def _finished(spec) -> Driver:
    d = Driver(spec)
    d.status = {
        "phase": "Succeeded",
        "specHash": spec_hash(spec),
        "observedGeneration": 2,
        "runGeneration": 2,
        "startAt": "2025-01-01T12:00:00Z",
        "completionTime": "2025-01-01T12:05:00Z",
        "results": results_status(100.0),
        "durability": {"durable": True},
        "consistency": {"passed": True, "violated": [], "conditions": []},
    }
    return d


def test_change_points_are_analysed_in_a_job_before_the_verdict_and_the_cleanup(change_point_run):
    d = _finished(change_point_run)
    step = d.tick(World(history=_history(change_point_run, 3)))
    assert kinds(step.actions) == [CreateAnalysisJob] and "verdict" not in d.status
    analysis = the(step, CreateAnalysisJob)
    assert [p["name"] for p in analysis.analysis_input] == [f"earlier-g{i}-uid" for i in range(3)] + ["bench-g2-uid"]
    assert analysis.max_pvalue == 0.001 and d.condition("Ready")["reason"] == "Judging"
    job = runner_jobs.analyzer_job(sweep_layout.cell_run(RUN, None), change_point_run, SETTINGS, analysis.max_pvalue)
    assert job["metadata"]["name"] == "bench-g2-analyzer"
    assert job["spec"]["template"]["spec"]["containers"][0]["args"][:3] == [
        "changepoints",
        "--history",
        "/etc/tpcc/analysis/history.json",
    ]
    # the Job still running: nothing judged, nothing cleaned up
    assert d.tick(World(history=_history(change_point_run, 3), analyzer=JobState(exists=True))).actions == []
    analysis = {"points": 4, "metrics": {}}
    step = d.tick(
        World(
            history=_history(change_point_run, 3),
            analyzer=JobState(exists=True, succeeded=True),
            change_points=analysis,
        )
    )
    assert WriteResult in kinds(step.actions) and CleanUp() in step.actions
    assert "changePoints" in d.status["regression"] and d.status["verdict"] in ("Pass", "Inconclusive")


def test_too_little_history_or_a_failed_run_is_judged_without_an_analysis(change_point_run):
    d = _finished(change_point_run)
    step = d.tick(World(history=_history(change_point_run, 2)))
    assert CreateAnalysisJob not in kinds(step.actions) and "verdict" in d.status
    d = _finished(change_point_run)
    d.status["phase"] = "Failed"
    assert CreateAnalysisJob not in kinds(d.tick(World(history=_history(change_point_run, 5))).actions)
    assert d.status["verdict"] == "Failed"


def test_a_mix_axis_runs_each_cell_with_its_own_mix_on_one_load(spec_of):
    document = {
        "database": {"type": "voltdb"},
        "sweep": {
            "clients": [2],
            "repetitions": 2,
            "matrix": [{"field": "workload.mix", "values": ["45/43/4/4/4", "100/0/0/0/0"]}],
        },
    }
    assert (
        validate(
            {
                "apiVersion": "bench.tpcc.dev/v1alpha1",
                "kind": "BenchmarkRun",
                "metadata": {"name": "m"},
                "spec": document,
            }
        )
        == []
    )
    spec = spec_of(document)
    cells = sweep_layout.sweep_cells(spec)
    assert [c.loads for c in cells] == [True, False, False, False]  # the mix leaves the data alone: one load
    mixes = [sweep_layout.cell_spec(spec, c).workload.mix for c in cells]
    assert mixes[2] == runspec.Mix(new_order=100, payment=0, order_status=0, delivery=0, stock_level=0)
    args = [
        _args(runner_jobs.run_job(sweep_layout.cell_run(RUN, c), sweep_layout.cell_spec(spec, c), SETTINGS))
        for c in cells
    ]
    assert [a[a.index("--mix") + 1] for a in args] == ["45,43,4,4,4"] * 2 + ["100,0,0,0,0"] * 2
    assert (
        len({regression.comparison_hash(sweep_layout.cell_spec(spec, c)) for c in cells}) == 2
    )  # each mix its history
    # the two mixes compared like any matrix axis: NewOrder-only against the standard mix
    table = _initial(spec)
    for i, tpmc in enumerate((100, 102, 300, 310)):
        table = sweep.with_cell(table, i, state="Succeeded", tpm_c=tpmc)
    [compared] = [c.to_json() for c in sweep.comparisons(table)]
    assert (compared["axis"], compared["values"]) == ("workload.mix", ["45/43/4/4/4", "100/0/0/0/0"])
    assert compared["medianChangePercent"] == pytest.approx(201.98, abs=0.01)  # medians 305 over 101
