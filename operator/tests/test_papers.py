"""hack/k8s/papers.py, what hack/papers.sh runs: every study's manifests name what they reproduce,
scaled they stay valid BenchmarkRuns that fit this machine, and what cannot run here says why."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import yaml
from crd_schema import validate
from tpcc_operator import plan
from tpcc_operator.runspec import RunSpec

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("papers", ROOT / "hack" / "k8s" / "papers.py")
papers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(papers)
MANIFESTS = papers.manifests([])
SETTINGS = plan.Settings(charts_dir=ROOT / "charts", runner_image="local/tpcc-runner:dev")
RUN = plan.Run(name="paper", namespace="tpcc-papers", uid="u", generation=1)


def test_every_study_has_manifests():
    studies = {where.split("/")[3] for where, _ in MANIFESTS}
    assert studies == {"vldb2019", "sharded", "voltdb", "fdb-ycsb"}
    assert len({m["metadata"]["name"] for _, m in MANIFESTS}) == len(MANIFESTS), "one name per run"


@pytest.mark.parametrize("where, manifest", MANIFESTS, ids=[w for w, _ in MANIFESTS])
def test_a_manifest_names_its_study_and_figure(where, manifest):
    assert papers.annotation(manifest, "paper"), "bench.tpcc.dev/paper: which study"
    assert papers.annotation(manifest, "figure"), "bench.tpcc.dev/figure: which figure or table"
    text = (ROOT / where.split("#")[0]).read_text()
    assert text.startswith("#"), "a header comment: the paper's configuration and what differs"


@pytest.mark.parametrize("where, manifest", MANIFESTS, ids=[w for w, _ in MANIFESTS])
def test_scaled_it_stays_valid_and_fits_one_small_node(where, manifest):
    if papers.not_runnable(manifest["spec"]):
        return
    small, notes = papers.scaled(manifest)
    assert validate(small) == []
    spec = RunSpec.parse(small["spec"])
    plan.helm_release(RUN, spec, SETTINGS)  # DatabaseTooSmall would raise
    assert spec.workload.duration_seconds <= papers.SCALED_SECONDS
    assert (spec.deploy.replicas if spec.database.deploy else 1) == 1 or spec.faults
    assert all(isinstance(n, str) and "->" in n for n in notes)
    assert small["metadata"] == manifest["metadata"], "the same run name: its results are found by it"


def test_what_cannot_run_here_says_why():
    sharded = {"database": {"type": "mongodb", "deploy": {"values": {"topology": "sharded"}}}}
    assert "sharded MongoDB needs mongod" in papers.not_runnable(sharded)
    assert "no FoundationDB server" in papers.not_runnable(
        {"database": {"type": "foundationdb", "external": {"endpoints": ["f:4500"]}}}
    )
    assert papers.not_runnable({"database": {"type": "voltdb", "deploy": {"replicas": 3}}}) is None


def test_a_mongodb_replica_set_runs_scaled_on_the_test_server_without_its_faults():
    manifest = {
        "metadata": {"name": "x"},
        "spec": {
            "database": {"type": "mongodb", "deploy": {"replicas": 3}},
            "workload": {"warehouses": 10, "clients": 40, "durationSeconds": 600},
            "faults": [{"action": "kill-primary"}],
        },
    }
    small, notes = papers.scaled(manifest)
    assert small["spec"]["database"]["deploy"] == {"replicas": 1, "values": {"testServer": {"enabled": True}}}
    assert "faults" not in small["spec"] and any("faults dropped" in n for n in notes)
    # the test server's aborted transactions are reported, not judged (they are not the paper's database)
    assert small["spec"]["workload"]["maxErrorPercent"] == 100 and any("error budget off" in n for n in notes)
    assert small["spec"]["workload"]["warehouses"] == 1 and manifest["spec"]["workload"]["warehouses"] == 10
    # and loads a tenth of a warehouse's rows (its full load took 3.5 of a CI case's 6.5 min)
    assert small["spec"]["workload"]["scaleDown"] == 10 and any("scaleDown 1 -> 10" in n for n in notes)
    ycsb = {**manifest, "spec": {**manifest["spec"], "workload": {"kind": "ycsb"}}}
    assert "scaleDown" not in papers.scaled(ycsb)[0]["spec"]["workload"]  # TPC-C's rows only


@pytest.mark.parametrize(
    "partitioning, matrix, limit",
    [("warehouse", [], None), ("d_id", [], "3Gi"), ("warehouse", ["warehouse", "d_id"], "3Gi")],
)
def test_a_scaled_voltdb_run_of_the_d_id_layout_gets_the_memory_its_load_needs(partitioning, matrix, limit):
    """At one warehouse the D_ID layout's multi-partition loads peaked at 2,220 MiB: the chart's
    2Gi limit OOM-killed VoltDB in the load, so a scaled run of it keeps 3Gi."""
    spec = {
        "database": {"type": "voltdb", "deploy": {"values": {"resources": {"limits": {"memory": "7680Mi"}}}}},
        "workload": {"driverOptions": {"partitioning": partitioning}},
    }
    if matrix:
        spec["sweep"] = {
            "clients": [300],
            "matrix": [{"field": "workload.driverOptions.partitioning", "values": matrix}],
        }
    small, notes = papers.scaled({"metadata": {"name": "x"}, "spec": spec})
    resources = small["spec"]["database"]["deploy"]["values"].get("resources")
    assert (resources and resources["limits"]["memory"]) == limit
    assert any("3Gi" in n for n in notes) == bool(limit)


def test_ours_reads_the_sweep_medians_or_the_runs_throughput():
    sweep = {"sweep": {"configurations": [{"warehouses": 1, "clients": 2, "tpmC": {"n": 2, "median": 1234.5}}]}}
    assert papers.ours(sweep) == "warehouses 1, clients 2: median 1,234 tpmC (n=2)"
    sweep["sweep"]["configurations"][0].update(matrix={"cost.pricePerHour": "1.66"}, throughputPerPricePerHour=743.7)
    assert papers.ours(sweep) == (
        "warehouses 1, clients 2, matrix {'cost.pricePerHour': '1.66'}: median 1,234 tpmC (n=2), "
        "744 tpmC per price per hour"
    )
    ycsb_sweep = {"sweep": {"configurations": [{"clients": 1, "opsPerSecond": {"n": 1, "median": 312.4}}]}}
    assert papers.ours(ycsb_sweep) == "clients 1: median 312 ops/s (n=1)"  # a YCSB sweep's, not "?"
    assert papers.ours({"results": {"tpmC": 4321.2}}) == "4,321 tpmC"
    assert papers.ours({"ycsb": {"opsPerSecond": 987.6}}) == "988 ops/s"  # status.ycsb, the Ops/s column
    assert papers.ours({"reason": "DatabaseNotReady", "message": "pods"}) == "no result (DatabaseNotReady: pods)"


def _configuration(tpmc: float, clients: int, warehouses: int = 100, **matrix: str) -> dict:
    """One entry of status.sweep.configurations, as the operator writes it."""
    return {
        "warehouses": warehouses,
        "clients": clients,
        **({"matrix": matrix} if matrix else {}),
        "tpmC": {"n": 1, "median": tpmc, "min": tpmc, "max": tpmc},
    }


def test_a_single_run_is_beside_every_number_the_study_prints_for_it():
    fig7 = _load("voltdb", "fig7-sample-run.yaml")
    # what the VoltDB study's Fig. 7 measured here at full size (docs/papers.md)
    status = {
        "phase": "Succeeded",
        "results": {
            "tpmC": 86696.5,
            "aborts": 8864,
            "transactions": {"NEW_ORDER": {"executed": 875829}, "PAYMENT": {"executed": 1061656}},
        },
    }
    rows = {r["paper"].split()[1]: r for r in papers.beside_paper(fig7, status, [])}
    assert rows["tpmC"] == {
        "point": "the run",
        "paper": "17226.21565209026 tpmC (Fig. 7 (§5.4))",
        "ours": "86,696 at 30 warehouses, 300 clients",
        "ratio": "5.03",
    }
    assert rows["NewOrders"]["ours"].startswith("875,829") and rows["NewOrders"]["ratio"] == "5.08"
    assert rows["transactions"]["ours"].startswith("1,937,485")
    assert rows["NewOrder"]["paper"].startswith("1738 NewOrder rollbacks") and rows["NewOrder"]["ratio"] == "5.1"


NOT_COMPARABLE = "(scaled run: not comparable with the study's)"


def test_a_sweeps_points_are_matched_to_its_configurations_and_a_scaled_ratio_says_so():
    fig1 = _load("vldb2019", "fig1-threads-by-warehouses.yaml")
    preference = "workload.driverOptions.read_preference"
    status = {
        "sweep": {
            "cells": [{}],
            "configurations": [
                _configuration(2668, 4, **{preference: "primary"}),
                _configuration(5336, 4, **{preference: "nearest"}),
            ],
        }
    }
    rows = papers.beside_paper(fig1, status, ["100 warehouses -> 1"])
    assert len(rows) == 28 + 1  # A.1 prints 28 points; the one measured, once per read preference
    measured = [r for r in rows if r["point"] == "100 warehouses, 4 clients"]
    assert [(r["ours"], r["ratio"]) for r in measured] == [
        ("2,668 at 100 warehouses, 4 clients, read_preference=primary", f"0.5 {NOT_COMPARABLE}"),
        ("5,336 at 100 warehouses, 4 clients, read_preference=nearest", f"1 {NOT_COMPARABLE}"),
    ]
    assert all(r["ours"] == "not measured" and "ratio" not in r for r in rows if r not in measured)
    assert papers.beside_paper(fig1, None, [])[0]["ours"] == "not run"


def test_a_relation_the_study_prints_is_ours_said_the_same_way():
    fig11 = _load("voltdb", "fig11-clients.yaml")
    status = {
        "sweep": {
            "cells": [{}],
            "configurations": [_configuration(t, c, warehouses=20) for c, t in ((20, 1000), (300, 1500), (1000, 1530))],
        }
    }
    assert papers.beside_paper(fig11, status, []) == [
        {
            "point": "300 clients against 20 clients",
            "paper": "47.87% in tpmC (§5.8)",
            "ours": "+50.00% at 20 warehouses, 300 clients against 20 warehouses, 20 clients",
        },
        {
            "point": "1000 clients against 300 clients",
            "paper": "5.07% in tpmC (§5.8)",
            "ours": "+2.00% at 20 warehouses, 1000 clients against 20 warehouses, 300 clients",
        },
    ]


def test_a_scaled_run_is_marked_so_for_the_report():
    fig7 = _load("voltdb", "fig7-sample-run.yaml")
    small, notes = papers.scaled(fig7)
    marked = papers.marked_scaled(small, notes)
    assert marked["metadata"]["annotations"]["bench.tpcc.dev/scaled"] == "; ".join(notes)
    assert "bench.tpcc.dev/scaled" not in small["metadata"]["annotations"], "a copy"
    assert papers.marked_scaled(fig7, []) is fig7


def test_ci_runs_the_smallest_experiment_of_each_study():
    picks = {where.split("/")[3]: where.split("/")[4] for where, _ in papers.smallest_of_each_study()}
    assert picks["vldb2019"] == "app-d-sample-run.yaml"  # one cell (the first of the one-cell ones); A.2 scaled has 8
    # the study's unsharded replica set (Fig. 10) runs here, its saturation search scaled to 2..4 clients
    assert picks["sharded"] == "fig10-fig11-warehouses.yaml#sharded-fig10-unsharded"
    a2 = yaml.safe_load((papers.PAPERS / "vldb2019" / "app-a2-batch-and-findandmodify.yaml").read_text())
    # 2 clients x 3 repetitions x the 2 printed pairs (find_and_modify paired with batch_writes)
    assert papers.cells(a2["spec"]) == 2 * 3 * 2 and papers.cells(papers.scaled(a2)[0]["spec"]) == 2 * 2


def _load(study: str, name: str) -> dict:
    return yaml.safe_load((papers.PAPERS / study / name).read_text())


def test_a_saturation_search_counts_its_ladder_in_each_matrix_combination():
    fig8 = _load("sharded", "fig8-consistency-by-shards.yaml")
    assert papers.cells(fig8["spec"]) == 10 * 4 * 2 * 2  # 50..500 by 50, 4 shard counts x 2 x 2 concerns
    small, notes = papers.scaled(fig8)
    # the test server is one node: the shards axis goes, the concern axes stay, each a 2..4 ladder
    assert [a["field"] for a in small["spec"]["sweep"]["matrix"]] == [
        "workload.driverOptions.read_concern",
        "workload.driverOptions.write_concern",
    ]
    assert papers.cells(small["spec"]) == 2 * 2 * 2 and any("sharded.shards" in n for n in notes)
    assert papers.cells({"sweep": {"saturation": {"startClients": 2, "factor": 2, "maxClients": 64}}}) == 6


def test_scaled_paired_shape_axes_shrink_to_one_small_deployment():
    fig6 = _load("voltdb", "fig6-vertical-scaling.yaml")
    small, _ = papers.scaled(fig6)
    # the instance types' cpu and memory go (the chart's defaults), sites per host 2, 4, 8 -> 2
    assert small["spec"]["sweep"]["matrix"] == [{"field": "database.deploy.values.sitesPerHost", "values": ["2"]}]
    fig10 = _load("voltdb", "fig10-k-factor.yaml")
    assert papers.scaled(fig10)[0]["spec"]["sweep"]["matrix"] == [
        {"field": "database.deploy.replicas", "values": ["1"]},
        {"field": "database.deploy.kSafety", "values": ["0"], "pairedWith": "database.deploy.replicas"},
    ]
    fig4 = _load("vldb2019", "fig4-instance-types.yaml")
    small, _ = papers.scaled(fig4)
    assert "matrix" not in small["spec"]["sweep"] and papers.cells(small["spec"]) == 2  # the test server, 2 and 4
    # sites per host 1, 2, 4 paired with hosts 3, 6, 9: 1 and 2 stay, paired with one host each (values repeat: gone)
    grown = {
        "spec": {
            "database": {"type": "voltdb"},
            "sweep": {
                "clients": [4],
                "matrix": [
                    {"field": "database.deploy.values.sitesPerHost", "values": ["1", "2", "4"]},
                    {
                        "field": "database.deploy.replicas",
                        "values": ["3", "6", "9"],
                        "pairedWith": "database.deploy.values.sitesPerHost",
                    },
                ],
            },
        }
    }
    assert papers.scaled(grown)[0]["spec"]["sweep"]["matrix"] == [
        {"field": "database.deploy.values.sitesPerHost", "values": ["1", "2"]}
    ]
