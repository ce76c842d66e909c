"""A deployed database is bounded by what its chart values give it (capacity.py), not a fixed cap:
refused before Helm runs, with the bound and what to raise."""

from __future__ import annotations

from pathlib import Path

import pytest
from doc_examples import doc_manifests
from tpcc_operator import capacity, chart_policy, plan, sweep_layout
from tpcc_operator.databases.mongodb import MONGODB
from tpcc_operator.databases.voltdb import D_ID_WAREHOUSE_BYTES, SERVER_BYTES, VOLTDB
from tpcc_operator.runspec import Deploy

RUN = plan.Run(name="bench", namespace="perf", uid="uid-1", generation=1)
CHARTS = Path(__file__).resolve().parents[2] / "charts"
SETTINGS = plan.Settings(charts_dir=CHARTS, runner_image="local/tpcc-runner:dev")
GI = 1 << 30
FULL_SIZE = capacity.warehouses(None)


def chart_defaults(db: str) -> dict:
    return chart_policy.with_defaults(db, "", {}, CHARTS)


def voltdb(replicas: int, k_safety: int, values: dict, unit: capacity.Unit = FULL_SIZE):
    return VOLTDB.capacity(Deploy("", "", replicas, k_safety), values, unit)


def mongodb(values: dict):
    return MONGODB.capacity(Deploy("", "", 1, 0), values, FULL_SIZE)


def test_the_figures_are_measured_ones():
    """bench/capacity.py printed them: a zero or absurd figure would make every bound meaningless."""
    assert 20 * capacity.MIB <= VOLTDB.costs.warehouse <= 400 * capacity.MIB
    assert 10 * capacity.MIB <= MONGODB.costs.warehouse <= 400 * capacity.MIB
    assert 0 < SERVER_BYTES < 1 * GI


def test_voltdb_room_is_memory_less_heap_and_server_over_the_copies():
    values = chart_defaults("voltdb")
    one = voltdb(1, 0, values)
    room = (2 * GI - 512 * capacity.MIB - SERVER_BYTES) * (1 - capacity.HEADROOM)
    assert one.count == int(room) // VOLTDB.costs.warehouse
    assert one.count >= 2, "the charts' defaults must hold what the samples and tests load"
    assert voltdb(3, 0, values).count == 3 * one.count
    assert voltdb(3, 1, values).count == 3 * one.count // 2
    bigger = {**values, "resources": {"limits": {"memory": "16Gi"}}, "heap": "2g"}
    assert voltdb(1, 0, bigger).count > 8 * one.count
    # a larger heap leaves less room for the tables
    assert voltdb(1, 0, {**values, "heap": "1g"}).count < one.count


def test_the_d_id_layout_is_bounded_by_what_its_load_took_where_it_ran_and_where_it_was_killed(spec_of):
    """At one warehouse the d_id load was OOM-killed at the chart's 2Gi and ran at 3Gi
    (docs/papers.md): the bound must refuse the first and admit the second; the warehouse
    layout keeps its own, larger bound."""
    defaults = chart_defaults("voltdb")
    three_gi = {**defaults, "resources": {"limits": {"memory": "3Gi"}}}
    d_id = frozenset({"d_id"})
    assert VOLTDB.capacity(Deploy("", "", 1, 0), defaults, FULL_SIZE, d_id).count == 0
    assert VOLTDB.capacity(Deploy("", "", 1, 0), three_gi, FULL_SIZE, d_id).count >= 1
    assert voltdb(1, 0, defaults).count > VOLTDB.capacity(Deploy("", "", 1, 0), three_gi, FULL_SIZE, d_id).count
    assert D_ID_WAREHOUSE_BYTES > VOLTDB.costs.warehouse
    # from the spec: the driver option, or a sweep axis that loads it in one of its cells
    one = {"database": {"type": "voltdb"}, "workload": {"warehouses": 1}}
    plan.helm_release(RUN, spec_of(one), SETTINGS)
    with pytest.raises(chart_policy.DatabaseTooSmall, match=r"warehouses = 1: .* holds at most 0 .*partitioning d_id"):
        plan.helm_release(
            RUN, spec_of({**one, "workload": {"warehouses": 1, "driverOptions": {"partitioning": "d_id"}}}), SETTINGS
        )
    axis = {"field": "workload.driverOptions.partitioning", "values": ["warehouse", "d_id"]}
    with pytest.raises(chart_policy.DatabaseTooSmall, match="partitioning d_id"):
        plan.helm_release(RUN, spec_of({**one, "sweep": {"clients": [4], "matrix": [axis]}}), SETTINGS)


def test_voltdb_heap_sizes_are_read_as_the_jvm_reads_them():
    assert capacity.java_size("512m") == 512 * capacity.MIB
    assert capacity.java_size("2G") == 2 * GI
    assert capacity.java_size("1024k") == capacity.MIB
    with pytest.raises(ValueError):
        capacity.java_size("512Mi")


def test_mongodb_room_is_the_data_volume_of_a_member_or_of_each_shard():
    values = chart_defaults("mongodb")
    one = mongodb(values)
    assert one.count == int(4 * GI * (1 - capacity.HEADROOM)) // MONGODB.costs.warehouse
    assert "persistence.size" in one.raise_
    emptydir = mongodb({**values, "persistence": {"enabled": False}, "dataVolume": {"sizeLimit": "8Gi"}})
    assert emptydir.count > one.count and "dataVolume.sizeLimit" in emptydir.raise_
    sharded = mongodb({**values, "topology": "sharded", "sharded": {"shards": 3}})
    assert sharded.count == 3 * one.count and "sharded.shards" in sharded.raise_


def _spec(spec_of, database: dict, **workload):
    return spec_of({"database": database, "workload": workload})


def test_a_run_beyond_the_bound_is_refused_before_helm_naming_field_bound_and_remedy(spec_of):
    spec = _spec(spec_of, {"type": "voltdb"}, warehouses=1000)
    with pytest.raises(chart_policy.DatabaseTooSmall) as refused:
        plan.helm_release(RUN, spec, SETTINGS)
    bound = voltdb(1, 0, chart_defaults("voltdb")).count
    message = str(refused.value)
    assert message.startswith(f"spec.workload.warehouses = 1000: the deployed voltdb holds at most {bound} ")
    assert "2Gi memory - 512m heap" in message and "resources.limits.memory" in message
    assert refused.value.reason == "DatabaseTooSmall"


def test_a_scaled_down_warehouse_costs_its_share_of_a_full_one(spec_of):
    """workload.scaleDown N divides every table's rows by N: N times as many warehouses fit, and a
    refusal says the warehouse it counted was scaled down."""
    full = voltdb(1, 0, chart_defaults("voltdb")).count
    tenth = voltdb(1, 0, chart_defaults("voltdb"), capacity.warehouses(10))
    assert tenth.count >= 10 * full and "per warehouse scaled down 10x" in tenth.basis
    assert (
        mongodb(chart_defaults("mongodb")).count * 10
        <= MONGODB.capacity(Deploy("", "", 1, 0), chart_defaults("mongodb"), capacity.warehouses(10)).count
    )
    plan.helm_release(RUN, _spec(spec_of, {"type": "voltdb"}, warehouses=5 * full, scaleDown=10), SETTINGS)
    with pytest.raises(chart_policy.DatabaseTooSmall, match="per warehouse scaled down 10x"):
        plan.helm_release(RUN, _spec(spec_of, {"type": "voltdb"}, warehouses=20 * full, scaleDown=10), SETTINGS)
    with pytest.raises(chart_policy.DatabaseTooSmall):  # the same count at full size does not fit
        plan.helm_release(RUN, _spec(spec_of, {"type": "voltdb"}, warehouses=5 * full), SETTINGS)


def test_the_values_the_user_gives_raise_the_bound(spec_of):
    """What a fixed cap of 32 could not do: 100 warehouses on nodes sized for them."""
    big = {
        "type": "voltdb",
        "deploy": {
            "replicas": 3,
            "kSafety": 1,
            "values": {"heap": "2g", "resources": {"requests": {"memory": "24Gi"}, "limits": {"memory": "24Gi"}}},
        },
    }
    assert plan.helm_release(RUN, _spec(spec_of, big, warehouses=100), SETTINGS).values["heap"] == "2g"
    mongo = {"type": "mongodb", "deploy": {"replicas": 3, "values": {"persistence": {"size": "64Gi"}}}}
    plan.helm_release(RUN, _spec(spec_of, mongo, warehouses=100), SETTINGS)
    with pytest.raises(chart_policy.DatabaseTooSmall, match="spec.workload.warehouses = 100: the deployed mongodb"):
        plan.helm_release(RUN, _spec(spec_of, {"type": "mongodb", "deploy": {"replicas": 3}}, warehouses=100), SETTINGS)


def test_a_sweep_is_bounded_by_its_largest_warehouse_count(spec_of):
    spec = spec_of({"database": {"type": "voltdb"}, "sweep": {"warehouses": [1, 1000]}})
    with pytest.raises(chart_policy.DatabaseTooSmall, match=r"^spec.sweep.warehouses = 1000: "):
        plan.helm_release(RUN, spec, SETTINGS)


def test_a_sweeps_larger_load_later_on_the_same_deployment_is_refused_before_the_first_install(spec_of):
    """The install of cell 0 (1 warehouse) passes on its own; the run must not wait for cell 1
    to find that its 1000 warehouses do not fit."""
    spec = spec_of({"database": {"type": "voltdb"}, "sweep": {"warehouses": [1, 1000]}})
    first = sweep_layout.sweep_cells(spec)[0]
    plan.helm_release(sweep_layout.cell_run(RUN, first), sweep_layout.cell_spec(spec, first), SETTINGS)
    with pytest.raises(
        chart_policy.DatabaseTooSmall, match=r"^sweep cell 1 \(deployment 0\): spec.workload.warehouses = 1000: "
    ):
        sweep_layout.refuse_undeployable(sweep_layout.cell_run(RUN, first), spec, SETTINGS)


def test_a_later_deployment_too_small_for_the_load_is_refused_before_the_first_install(spec_of):
    one_node = voltdb(1, 0, chart_defaults("voltdb")).count
    axis = {"field": "database.deploy.replicas", "values": ["3", "1"]}
    spec = spec_of(
        {"database": {"type": "voltdb"}, "workload": {"warehouses": one_node + 1}, "sweep": {"matrix": [axis]}}
    )
    cells = sweep_layout.sweep_cells(spec)
    assert [c.deployment for c in cells] == [0, 1]
    plan.helm_release(sweep_layout.cell_run(RUN, cells[0]), sweep_layout.cell_spec(spec, cells[0]), SETTINGS)
    with pytest.raises(
        chart_policy.DatabaseTooSmall, match=rf"^sweep cell 1 \(deployment 1: replicas=1\): .* = {one_node + 1}: "
    ):
        sweep_layout.refuse_undeployable(sweep_layout.cell_run(RUN, cells[0]), spec, SETTINGS)
    fits = spec_of({"database": {"type": "voltdb"}, "workload": {"warehouses": one_node}, "sweep": {"matrix": [axis]}})
    sweep_layout.refuse_undeployable(RUN, fits, SETTINGS)


def test_what_the_operator_cannot_size_is_not_bounded(spec_of):
    """An allowlisted chart's defaults are unknown; YCSB has no warehouses."""
    allowed = {"type": "voltdb", "deploy": {"chart": "oci://r/voltdb"}}
    settings = plan.Settings(charts_dir=CHARTS, runner_image="x", allowed_charts=("oci://r/voltdb",))
    plan.helm_release(RUN, _spec(spec_of, allowed, warehouses=1000), settings)
    ycsb = spec_of({"database": {"type": "voltdb"}, "workload": {"kind": "ycsb", "warehouses": 1000}})
    plan.helm_release(RUN, ycsb, SETTINGS)


@pytest.mark.parametrize("where, manifest", doc_manifests(), ids=[w for w, _ in doc_manifests()])
def test_every_example_and_sample_fits_the_database_it_deploys(where, manifest, spec_of):
    """As the operator checks it before its first install: a sweep's every deployment with the
    most any of its cells loads there."""
    if "external" not in manifest["spec"]["database"]:
        spec = spec_of(manifest["spec"])
        if spec.sweep:
            sweep_layout.refuse_undeployable(RUN, spec, SETTINGS)
        else:
            plan.helm_release(RUN, spec, SETTINGS)


def test_a_sweep_that_leaves_out_what_does_not_fit_runs_each_deployment_up_to_what_it_holds(spec_of):
    """oversizedLoads LeaveOut (the VoltDB study's Fig. 9: a smaller instance type holds fewer
    warehouses): each deployment runs the warehouse counts it holds, the rest named in the plan,
    and nothing is refused; Refuse (the default) refuses the same sweep before the first install."""
    one_node = voltdb(1, 0, chart_defaults("voltdb")).count
    three = voltdb(3, 0, chart_defaults("voltdb")).count
    assert one_node < three
    axis = {"field": "database.deploy.replicas", "values": ["3", "1"]}
    sweep = {"warehouses": [one_node, one_node + 1], "matrix": [axis]}
    spec = spec_of({"database": {"type": "voltdb"}, "sweep": {**sweep, "oversizedLoads": "LeaveOut"}})
    cells = sweep_layout.sweep_cells(spec)
    assert [(c.deployment, c.warehouses, c.loads) for c in cells] == [
        (0, one_node, True),
        (0, one_node + 1, True),
        (1, one_node, True),
    ]
    sweep_layout.refuse_undeployable(RUN, spec, SETTINGS)
    (left_out,) = sweep_layout.sweep_plan(spec, cells).left_out or ()
    assert left_out == f"replicas=1 warehouses={one_node + 1}: the deployed voltdb holds at most {one_node} warehouses"
    refused = spec_of({"database": {"type": "voltdb"}, "sweep": sweep})
    assert len(sweep_layout.sweep_cells(refused)) == 4
    with pytest.raises(chart_policy.DatabaseTooSmall, match=r"^sweep cell 3 \(deployment 1: replicas=1\)"):
        sweep_layout.refuse_undeployable(RUN, refused, SETTINGS)


def test_the_voltdb_studys_fig9_leaves_out_what_each_instance_type_cannot_hold(spec_of):
    """One sweep over four instance types (memory lead, cpu paired with repeating values): the
    7.5 GiB type stops below 60 warehouses, as the study's c4.xlarge did; the 15 GiB and larger
    ones run every count."""
    (manifest,) = [m for w, m in doc_manifests() if m["metadata"]["name"] == "voltdb-fig9"]
    spec = spec_of(manifest["spec"])
    cells = sweep_layout.sweep_cells(spec)
    by_type = {d: [c.warehouses for c in cells if c.deployment == d] for d in range(4)}
    print(by_type, sweep_layout.sweep_plan(spec, cells).left_out)
    assert max(by_type[0]) < 60 and all(by_type[d] == [10, 20, 30, 40, 50, 60, 70, 80] for d in (1, 2, 3))
    cpu = {c.deployment: dict(c.matrix)["database.deploy.values.resources.limits.cpu"] for c in cells}
    assert cpu == {0: "4", 1: "8", 2: "4", 3: "4"}
