"""Paired sweep.matrix axes (pairedWith): values that change together, the i-th of one with the
i-th of the other, as the studies varied them: the cpu and memory of an instance type (the VLDB
study's M50/M60/M80), hosts and kSafety at a constant count of unique partitions (the VoltDB
study's Fig. 10). A paired axis adds no combinations; its cells, deployments and comparisons
take both values together; bad pairings are refused at apply with the field named."""

from __future__ import annotations

from pathlib import Path

import pytest
from crd_schema import validate
from tpcc_operator import plan, sweep, sweep_layout
from tpcc_operator.runspec import RunSpec

SETTINGS = plan.Settings(charts_dir=Path(__file__).resolve().parents[2] / "charts")
CPU = "database.deploy.values.resources.limits.cpu"
MEMORY = "database.deploy.values.resources.limits.memory"
REPLICAS = "database.deploy.replicas"
K_SAFETY = "database.deploy.kSafety"


def manifest(spec: dict) -> dict:
    return {"apiVersion": "bench.tpcc.dev/v1alpha1", "kind": "BenchmarkRun", "metadata": {"name": "p"}, "spec": spec}


def instance_types(**sweep_more) -> dict:
    return {
        "database": {"type": "mongodb", "deploy": {"replicas": 3}},
        "sweep": {
            "clients": [10, 20],
            "matrix": [
                {"field": CPU, "values": ["2", "4", "8"]},
                {"field": MEMORY, "values": ["8Gi", "16Gi", "32Gi"], "pairedWith": CPU},
            ],
            **sweep_more,
        },
    }


def test_a_paired_axis_adds_no_combinations_and_each_deployment_takes_both_values():
    spec = instance_types()
    assert validate(manifest(spec)) == []
    cells = sweep_layout.sweep_cells(RunSpec.parse(spec))
    assert [(dict(c.matrix)[CPU], dict(c.matrix)[MEMORY], c.clients) for c in cells] == [
        ("2", "8Gi", 10),
        ("2", "8Gi", 20),
        ("4", "16Gi", 10),
        ("4", "16Gi", 20),
        ("8", "32Gi", 10),
        ("8", "32Gi", 20),
    ]
    assert [c.deployment for c in cells] == [0, 0, 1, 1, 2, 2]
    typed = RunSpec.parse(spec)
    third = sweep_layout.cell_spec(typed, cells[4])
    assert third.deploy.values["resources"]["limits"] == {"cpu": "8", "memory": "32Gi"}


def test_hosts_and_k_safety_at_constant_unique_partitions():
    """VoltDB Fig. 10's shape: (hosts, k) = (2, 1), (3, 2), (4, 3): as many copies as hosts, so
    the unique partitions stay those of one host."""
    spec = {
        "database": {"type": "voltdb"},
        "sweep": {
            "clients": [4],
            "matrix": [
                {"field": REPLICAS, "values": ["2", "3", "4"]},
                {"field": K_SAFETY, "values": ["1", "2", "3"], "pairedWith": REPLICAS},
            ],
        },
    }
    assert validate(manifest(spec)) == []
    typed = RunSpec.parse(spec)
    assert sweep_layout.valid_deployments(typed) == [
        ((REPLICAS, "2"), (K_SAFETY, "1")),
        ((REPLICAS, "3"), (K_SAFETY, "2")),
        ((REPLICAS, "4"), (K_SAFETY, "3")),
    ]
    assert len(sweep_layout.sweep_cells(typed)) == 3


def test_the_comparison_changes_paired_values_together():
    spec = RunSpec.parse(instance_types(repetitions=2, clients=[10]))
    cells = sweep_layout.sweep_cells(spec)
    table = sweep.initial(cells, sweep_layout.sweep_plan(spec, cells))
    for i, c in enumerate(cells):
        tpmc = {"2": 100.0, "4": 180.0, "8": 300.0}[dict(c.matrix)[CPU]] + c.repetition
        table = sweep.with_cell(table, i, state="Succeeded", tpm_c=tpmc)
    by_axis = [c.to_json() for c in sweep.comparisons(table) if c.axis]
    assert [(c["axis"], c["values"]) for c in by_axis] == [(CPU, ["2", "4"]), (CPU, ["2", "8"])]
    assert all("matrix" not in c for c in by_axis)  # memory changed with cpu: nothing held alike
    assert [c["medianChangePercent"] for c in by_axis] == [
        pytest.approx(78.82, abs=0.01),
        pytest.approx(197.04, abs=0.01),
    ]


@pytest.mark.parametrize(
    ("matrix", "says"),
    [
        (
            [{"field": CPU, "values": ["2", "4"]}, {"field": MEMORY, "values": ["8Gi"], "pairedWith": CPU}],
            "with as many values",
        ),
        (
            [
                {"field": CPU, "values": ["2", "4"]},
                {"field": MEMORY, "values": ["8Gi", "16Gi"], "pairedWith": REPLICAS},
            ],
            "sweep.matrix pairedWith names another axis",
        ),
        (
            [
                {"field": CPU, "values": ["2", "4"]},
                {"field": "workload.driverOptions.read_concern", "values": ["local", "majority"], "pairedWith": CPU},
            ],
            "of the same kind",
        ),
        (
            [
                {"field": CPU, "values": ["2", "4"], "pairedWith": MEMORY},
                {"field": MEMORY, "values": ["8Gi", "16Gi"], "pairedWith": CPU},
            ],
            "itself paired with none",
        ),
    ],
)
def test_bad_pairings_are_refused_at_apply(matrix, says):
    spec = {"database": {"type": "mongodb"}, "sweep": {"matrix": matrix}}
    problems = validate(manifest(spec))
    assert any(says in p for p in problems), problems


def test_the_studies_shape_axes_sites_per_host_shards_and_delivery():
    """VoltDB's sites per host and MongoDB's shard count are deployments of their own, typed as
    the chart's values schema types them (integers); VoltDB's Delivery form is a cell axis."""
    voltdb = {
        "database": {"type": "voltdb"},
        "sweep": {
            "clients": [4],
            "matrix": [
                {"field": "database.deploy.values.sitesPerHost", "values": ["2", "4"]},
                {"field": "workload.driverOptions.delivery", "values": ["per-warehouse", "per-district"]},
            ],
        },
    }
    assert validate(manifest(voltdb)) == []
    typed = RunSpec.parse(voltdb)
    cells = sweep_layout.sweep_cells(typed)
    assert [c.deployment for c in cells] == [0, 0, 1, 1]
    last = sweep_layout.cell_spec(typed, cells[3])
    assert last.deploy.values["sitesPerHost"] == 4 and last.workload.driver_options["delivery"] == "per-district"
    assert (
        plan.helm_release(sweep_layout.cell_run(plan.Run("p", "ns", "u", 1), cells[3]), last, SETTINGS).values[
            "sitesPerHost"
        ]
        == 4
    )
    sharded = {
        "database": {"type": "mongodb", "deploy": {"values": {"topology": "sharded"}}},
        "sweep": {"clients": [4], "matrix": [{"field": "database.deploy.values.sharded.shards", "values": ["1", "3"]}]},
    }
    assert validate(manifest(sharded)) == []
    typed = RunSpec.parse(sharded)
    three = sweep_layout.cell_spec(typed, sweep_layout.sweep_cells(typed)[1])
    assert three.deploy.values == {"topology": "sharded", "sharded": {"shards": 3}}
    assert plan.database_pod_count(three) == 3 + 3 * 1 + 2  # config servers, 3 shards of 1, routers
    wrong = {**sharded, "database": {"type": "voltdb"}}
    assert any("sharded.shards a mongodb one" in p for p in validate(manifest(wrong)))
    bad = {
        **voltdb,
        "sweep": {"clients": [4], "matrix": [{"field": "database.deploy.values.sitesPerHost", "values": ["0"]}]},
    }
    assert any("sitesPerHost: values are whole numbers 1-64" in p for p in validate(manifest(bad)))


PRICE = "cost.pricePerHour"


def priced_instance_types(**sweep_more) -> dict:
    """VLDB Fig. 4's shape: each instance type's cpu and memory with App. C's price per hour."""
    spec = instance_types(**sweep_more)
    spec["sweep"]["matrix"].append({"field": PRICE, "values": ["1.66", "3.29", "6.13"], "pairedWith": CPU})
    return spec


def test_a_price_paired_with_an_instance_type_prices_its_cells_and_configurations():
    spec = priced_instance_types(clients=[10], repetitions=2)
    assert validate(manifest(spec)) == []
    typed = RunSpec.parse(spec)
    cells = sweep_layout.sweep_cells(typed)
    # the price goes with its deployment (the axis it pairs with), not as a combination of its own
    assert [(dict(c.matrix)[CPU], dict(c.matrix)[PRICE], c.deployment) for c in cells] == [
        ("2", "1.66", 0),
        ("2", "1.66", 0),
        ("4", "3.29", 1),
        ("4", "3.29", 1),
        ("8", "6.13", 2),
        ("8", "6.13", 2),
    ]
    priced = sweep_layout.cell_spec(typed, cells[4]).cost
    assert priced is not None and (priced.price_per_hour, priced.currency) == (6.13, "USD")
    table = sweep.initial(cells, sweep_layout.sweep_plan(typed, cells))
    for i, c in enumerate(cells):
        tpmc = {"2": 11104.0, "4": 22802.0, "8": 46449.0}[dict(c.matrix)[CPU]] + c.repetition - 1
        table = sweep.with_cell(table, i, state="Succeeded", tpm_c=tpmc)
    per_price = {c.matrix[CPU]: c.throughput_per_price_per_hour for c in sweep.configurations(table)}
    # median of (x, x + 1) over the type's own price, not spec.cost's
    assert per_price == {"2": round(11104.5 / 1.66, 3), "4": round(22802.5 / 3.29, 3), "8": round(46449.5 / 6.13, 3)}
    assert sweep.configurations(table, price_per_hour=100.0) == sweep.configurations(table)


def test_without_a_price_axis_spec_cost_prices_every_configuration_and_without_either_none():
    spec = RunSpec.parse(instance_types(clients=[10]))
    cells = sweep_layout.sweep_cells(spec)
    table = sweep.initial(cells, sweep_layout.sweep_plan(spec, cells))
    for i in range(len(cells)):
        table = sweep.with_cell(table, i, state="Succeeded", tpm_c=1000.0 * (i + 1))
    assert [c.throughput_per_price_per_hour for c in sweep.configurations(table, 4.0)] == [250.0, 500.0, 750.0]
    assert [c.throughput_per_price_per_hour for c in sweep.configurations(table)] == [None, None, None]


@pytest.mark.parametrize("price", ["0", "0.0", "-1", "1.6.6", "$1.66", "abc", ""])
def test_a_price_axis_takes_only_decimal_prices_above_zero(price):
    spec = priced_instance_types()
    spec["sweep"]["matrix"][-1]["values"] = [price, "3.29", "6.13"]
    problems = validate(manifest(spec))
    assert any("sweep.matrix cost.pricePerHour: values are prices per hour" in p for p in problems), problems
