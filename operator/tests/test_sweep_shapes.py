"""sweep.matrix over the database's shape: every database.deploy combination is a deployment of
its own (deployed once, its cells together), every schema a load of its own; the plan counts
them before anything starts, and the phase machine retires one deployment before the next."""

from __future__ import annotations

import pytest
import yaml
from crd_schema import crd_schema, defaulted_spec, validate
from runner_docs import pod_results
from test_phases import RUN, Driver
from test_sweep import SETTINGS, _measure_cell
from tpcc_operator import failures, plan, sweep, sweep_layout
from tpcc_operator.runspec import RunSpec
from tpcc_operator.stages.actions import CreateLoadJob, CreateRunObjects, InstallDatabase, RetireDeployment
from tpcc_operator.stages.machine import JobState, World

REPLICAS, K_SAFETY = "database.deploy.replicas", "database.deploy.kSafety"


@pytest.fixture
def hosts_by_k(spec_of):
    """The VoltDB study's shape: tpmC against hosts, per k-safety; a non-shape axis listed first."""
    return spec_of(
        {
            "database": {"type": "voltdb"},
            "runners": {"parallelism": 2},
            "sweep": {
                "warehouses": [1, 2],
                "clients": [2],
                "matrix": [
                    {"field": "workload.driverOptions.call_timeout", "values": ["30", "60"]},
                    {"field": REPLICAS, "values": ["1", "2"]},
                    {"field": K_SAFETY, "values": ["0", "1"]},
                ],
            },
        }
    )


def _shape(cell: sweep_layout.Cell) -> tuple[str, str]:
    values = dict(cell.matrix)
    return values[REPLICAS], values[K_SAFETY]


def test_each_shape_is_deployed_once_its_cells_together(hosts_by_k):
    cells = sweep_layout.sweep_cells(hosts_by_k)
    # replicas=1 kSafety=1 cannot be deployed: left out, so 3 deployments x 2 sizes x 2 timeouts
    assert len(cells) == 12
    assert [_shape(c) for c in cells[::4]] == [("1", "0"), ("2", "0"), ("2", "1")]
    assert [c.deployment for c in cells] == [0] * 4 + [1] * 4 + [2] * 4
    assert [c.index for c in cells if c.deploys] == [4, 8]  # the first deployment is the run's own
    # within a deployment: one load per warehouse count, the other axes inside it
    assert [c.index for c in cells if c.loads] == [0, 2, 4, 6, 8, 10]
    assert [(c.warehouses, dict(c.matrix)["workload.driverOptions.call_timeout"]) for c in cells[:4]] == [
        (1, "30"),
        (1, "60"),
        (2, "30"),
        (2, "60"),
    ]
    # a cell's matrix keeps the spec's axis order (configurations and labels are keyed by it)
    assert [f for f, _ in cells[5].matrix] == ["workload.driverOptions.call_timeout", REPLICAS, K_SAFETY]
    assert sweep_layout.load_cells(cells, cells[5]) == cells[4:6]  # a new deployment starts a new load


def test_the_plan_counts_deployments_loads_and_the_time_of_each_redeploy(hosts_by_k):
    cells = sweep_layout.sweep_cells(hosts_by_k)
    measured = 5 + 30 + 300  # startDelaySeconds + warmupSeconds + durationSeconds
    assert sweep_layout.sweep_plan(hosts_by_k, cells) == sweep_layout.SweepPlan(
        cells=12,
        loads=6,
        deployments=3,
        estimated_seconds=12 * measured + 2 * sweep_layout.REDEPLOY_ESTIMATE_SECONDS,
        left_out=("replicas=1 kSafety=1",),
    )
    table = sweep.initial(cells, sweep_layout.sweep_plan(hosts_by_k, cells)).to_json()
    assert table["plan"] == {
        "cells": 12,
        "loads": 6,
        "deployments": 3,
        "estimatedSeconds": 12 * measured + 180,
        "leftOut": ["replicas=1 kSafety=1"],
    }
    assert [r["deployment"] for r in table["cells"]] == [c.deployment for c in cells]
    # without shape axes nothing changes: one deployment, no deployment column
    plain = sweep_layout.sweep_cells(hosts_by_k.__class__.parse({**hosts_by_k.document, "sweep": {"clients": [2, 4]}}))
    assert {c.deployment for c in plain} == {0} and not any(c.deploys for c in plain)


def test_a_cell_deploys_its_own_shape_under_a_release_of_its_own(hosts_by_k):
    cells = sweep_layout.sweep_cells(hosts_by_k)
    last = cells[9]  # replicas 2, kSafety 1: its deployment's second cell (1 warehouse, call_timeout 60)
    measured = sweep_layout.cell_spec(hosts_by_k, last)
    assert (measured.deploy.replicas, measured.deploy.k_safety) == (2, 1)  # typed: integers
    run = sweep_layout.cell_run(RUN, last)
    release = plan.helm_release(run, measured, SETTINGS)
    assert release.name == "bench-g2-d2" and (release.values["replicas"], release.values["kfactor"]) == (2, 1)
    assert plan.endpoints(run, measured) == [
        f"bench-g2-d2-{i}.bench-g2-d2-hl.perf.svc.cluster.local:21212" for i in range(2)
    ]
    assert (
        plan.release_name(sweep_layout.cell_run(RUN, cells[3])) == "bench-g2"
    )  # the first deployment's name is the run's
    assert plan.is_release_of("bench", "bench-g2-d2") and not plan.is_release_of("bench", "bench-g2-x2")
    # the job names stay per cell
    assert plan.job_name(run, "loader") == "bench-g2-c9-loader"
    assert hosts_by_k.deploy.replicas == 1  # the sweep's own spec untouched


def test_resources_are_a_deployment_axis_set_in_the_chart_values(spec_of):
    spec = spec_of(
        {
            "database": {"type": "voltdb", "deploy": {"values": {"heap": "1g"}}},
            "sweep": {
                "clients": [1],
                "matrix": [{"field": "database.deploy.values.resources.limits.cpu", "values": ["1", "2"]}],
            },
        }
    )
    cells = sweep_layout.sweep_cells(spec)
    assert [(c.deployment, c.deploys) for c in cells] == [(0, False), (1, True)]
    values = plan.helm_release(
        sweep_layout.cell_run(RUN, cells[1]), sweep_layout.cell_spec(spec, cells[1]), SETTINGS
    ).values
    assert values["resources"]["limits"]["cpu"] == "2" and values["heap"] == "1g"


def test_a_schema_is_a_load_of_its_own_on_the_one_deployment(spec_of):
    spec = spec_of(
        {
            "database": {"type": "mongodb", "deploy": {"replicas": 3}},
            "sweep": {
                "clients": [1, 2],
                "matrix": [{"field": "workload.driverOptions.schema", "values": ["normalized", "embedded"]}],
            },
        }
    )
    cells = sweep_layout.sweep_cells(spec)
    assert [(dict(c.matrix)["workload.driverOptions.schema"], c.clients, c.loads) for c in cells] == [
        ("normalized", 1, True),
        ("normalized", 2, False),
        ("embedded", 1, True),
        ("embedded", 2, False),
    ]
    assert sweep_layout.sweep_plan(spec, cells).deployments == 1 and sweep_layout.sweep_plan(spec, cells).loads == 2
    second = sweep_layout.cell_spec(spec, cells[2])
    # the reload drops every schema's collections first (the loader's reset)
    assert second.workload.driver_options == {"schema": "embedded"} and second.workload.reset_before_load


def test_a_voltdb_partitioning_is_a_load_of_its_own_and_a_delivery_form_is_not(spec_of):
    """The VoltDB study's Figs 4 and 5: Warehouse ID against District ID partitioning on one
    deployment, each layout loaded once (its tables differ), the Delivery forms sharing a load."""
    spec = spec_of(
        {
            "database": {"type": "voltdb", "deploy": {"replicas": 3}},
            "sweep": {
                "clients": [2],
                "matrix": [
                    {"field": "workload.driverOptions.partitioning", "values": ["warehouse", "d_id"]},
                    {"field": "workload.driverOptions.delivery", "values": ["per-warehouse", "per-district"]},
                ],
            },
        }
    )
    cells = sweep_layout.sweep_cells(spec)
    assert [tuple(v for _, v in c.matrix) + (c.loads,) for c in cells] == [
        ("warehouse", "per-warehouse", True),
        ("warehouse", "per-district", False),
        ("d_id", "per-warehouse", True),
        ("d_id", "per-district", False),
    ]
    assert sweep_layout.sweep_plan(spec, cells).loads == 2
    reload = sweep_layout.cell_spec(spec, cells[2])
    assert reload.workload.driver_options["partitioning"] == "d_id" and reload.workload.reset_before_load


def _kept_by_the_api_server(status: dict) -> None:
    """What the stages write under status.database and status.sweep is in the CRD's status schema
    (the API server prunes the rest: a `retired` pruned would retire the deployment every tick)."""
    schema = crd_schema()["properties"]["status"]["properties"]
    assert set(status["database"]) <= set(schema["database"]["properties"])
    table = schema["sweep"]["properties"]
    assert set(status["sweep"]["plan"]) <= set(table["plan"]["properties"])
    assert all(set(row) <= set(table["cells"]["items"]["properties"]) for row in status["sweep"]["cells"])


def _deploy_and_load(d: Driver, ready: int) -> None:
    """From Deploying (install not done) to Running, on a database of `ready` pods."""
    assert d.phase == "Deploying"
    assert d.tick(World()).actions == [InstallDatabase()]
    assert d.tick(World(database_ready=ready - 1)).actions == []  # no second install while waiting
    d.tick(World(database_ready=ready))
    assert d.phase == "Loading" and d.tick(World()).actions == [CreateLoadJob()]
    d.tick(World(load=JobState(exists=True, succeeded=True)))


def test_the_next_deployment_retires_the_earlier_one_before_it_installs(spec_of):
    spec = spec_of(
        {
            "database": {"type": "voltdb"},
            "runners": {"parallelism": 2},
            "sweep": {"clients": [2], "matrix": [{"field": REPLICAS, "values": ["1", "2"]}]},
        }
    )
    d = Driver(spec)
    d.tick()
    d.tick()
    _deploy_and_load(d, 1)
    assert d.status["database"]["release"] == "bench-g2"
    _measure_cell(d, 100)
    d.tick(World(results={0: pod_results(0, 2, 100, 0.01)}))  # judged: the next cell deploys
    assert d.phase == "Deploying" and d.status["sweep"]["current"] == 1
    assert d.condition("DatabaseReady")["status"] == "False" and d.condition("DatabaseReady")["reason"] == "Redeploying"
    assert d.status["database"] == {"release": "bench-g2-d1", "installed": False, "retired": False}
    assert d.tick(World()).actions == [CreateRunObjects()]  # the cell's own objects first
    assert d.tick(World()).actions == [RetireDeployment()]
    _kept_by_the_api_server(d.status)
    old = failures.PodState("bench-g2-0", 120.0)
    waiting = d.tick(World(pods=[old]))
    assert waiting.actions == [] and "earlier deployment's 1 pods to be gone" in d.status["message"]
    assert d.tick(World(pods=[old])).actions == []  # never retired twice, never installed over it
    _deploy_and_load(d, 2)
    assert d.status["database"]["release"] == "bench-g2-d1"
    assert d.status["database"]["endpoints"][1].startswith("bench-g2-d1-1.bench-g2-d1-hl.")
    assert d.condition("DatabaseReady")["status"] == "True"
    _measure_cell(d, 100)
    d.tick(World(results={0: pod_results(0, 2, 100, 0.01)}))
    assert d.phase == "Succeeded", d.status.get("message")
    counted = (InstallDatabase(), RetireDeployment(), CreateLoadJob())
    assert [d.actions.count(a) for a in counted] == [2, 1, 2]
    rows = d.status["sweep"]["cells"]
    assert [(r["deployment"], r["state"]) for r in rows] == [(0, "Succeeded"), (1, "Succeeded")]
    _kept_by_the_api_server(d.status)
    assert d.status["sweep"]["plan"]["deployments"] == 2


def test_a_deployment_that_never_gets_ready_fails_the_sweep_at_its_cell(spec_of):
    spec = spec_of(
        {
            "database": {"type": "voltdb", "readyTimeoutSeconds": 60},
            "runners": {"parallelism": 2},
            "sweep": {"clients": [2], "matrix": [{"field": REPLICAS, "values": ["1", "2"]}]},
        }
    )
    d = Driver(spec)
    d.tick()
    d.tick()
    _deploy_and_load(d, 1)
    _measure_cell(d, 100)
    d.tick(World(results={0: pod_results(0, 2, 100, 0.01)}))
    d.tick(World())
    d.tick(World())
    d.tick(World())  # installed
    d.tick(World(database_ready=1), after=61)
    assert d.phase == "Failed" and d.status["reason"] == "DatabaseNotReady"
    assert "1/2 pods ready" in d.status["message"]


def test_the_voltdb_studys_hosts_by_k_safety_is_one_sweep_whose_every_deployment_fits():
    sample = plan.Path(__file__).resolve().parents[2] / "crds/samples/papers/voltdb/voltdb-tpmc-by-hosts.yaml"
    manifest = yaml.safe_load(sample.read_text())
    assert validate(manifest) == []
    spec = RunSpec.parse(defaulted_spec(manifest["spec"]))
    cells = sweep_layout.sweep_cells(spec)
    shapes = {c.deployment: _shape(c) for c in cells}
    assert list(shapes.values()) == [
        ("1", "0"),
        ("2", "0"),
        ("2", "1"),
        ("3", "0"),
        ("3", "1"),
        ("3", "2"),
        ("4", "0"),
        ("4", "1"),
        ("4", "2"),
    ]
    left_out = ("replicas=1 kSafety=1", "replicas=1 kSafety=2", "replicas=2 kSafety=2")
    assert sweep_layout.sweep_plan(spec, cells).left_out == left_out
    charts = plan.Settings(charts_dir=sample.parents[4] / "charts")
    for cell in (c for c in cells if c.loads):  # DatabaseTooSmall would raise
        plan.helm_release(sweep_layout.cell_run(RUN, cell), sweep_layout.cell_spec(spec, cell), charts)
