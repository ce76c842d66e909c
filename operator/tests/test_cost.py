"""spec.cost: throughput per unit of price per hour, in status and in the BenchmarkResult; an
edit of the price changes the figure and never starts a new run."""

from __future__ import annotations

import json

from runner_docs import results_status, ycsb_status
from test_phases import Driver, the
from tpcc_operator.cost import CostFigure, cost_status
from tpcc_operator.runspec import Cost
from tpcc_operator.stages.actions import WriteResult
from tpcc_operator.stages.generations import spec_hash
from tpcc_operator.workloads.tpcc import TPCC_WORKLOAD
from tpcc_operator.workloads.ycsb import YCSB_WORKLOAD


def test_the_figure_divides_tpmc_or_a_ycsb_runs_operations_per_second():
    assert cost_status(None, TPCC_WORKLOAD.figures({"results": results_status(100.0)})) is None
    assert cost_status(Cost(2.5, "EUR"), TPCC_WORKLOAD.figures({"results": results_status(1000.0)})).to_json() == {
        "pricePerHour": 2.5,
        "currency": "EUR",
        "throughputMetric": "tpmC",
        "throughputPerPricePerHour": 400.0,
    }
    ycsb = YCSB_WORKLOAD.figures({"ycsb": ycsb_status(622.0)})
    assert cost_status(Cost(0.3, "USD"), ycsb).throughput_per_price_per_hour == 2073.333
    running = TPCC_WORKLOAD.figures({"phase": "Running"})
    assert cost_status(Cost(0.3, "USD"), running).to_json() == {"pricePerHour": 0.3, "currency": "USD"}


def test_a_finished_run_shows_its_cost_and_an_edit_of_the_price_only_moves_the_figure(spec_of):
    d = Driver(spec_of({"database": {"type": "voltdb"}, "cost": {"pricePerHour": 1.6}}))
    measured = spec_hash(d.typed)
    d.status = {
        "phase": "Succeeded",
        "observedGeneration": 2,
        "specHash": measured,
        "results": results_status(800.0),
        "verdict": "Pass",
        "cleanedUp": True,
    }
    step = d.tick()
    assert step.actions == [] and d.status["cost"] == {
        "pricePerHour": 1.6,
        "currency": "USD",
        "throughputMetric": "tpmC",
        "throughputPerPricePerHour": 500.0,
    }
    d.spec["cost"] = {"pricePerHour": 3.2, "currency": "EUR"}
    assert spec_hash(d.typed) == measured  # not measured: no new run
    assert d.tick().actions == [] and d.status["phase"] == "Succeeded"
    assert d.status["cost"]["throughputPerPricePerHour"] == 250.0 and d.status["cost"]["currency"] == "EUR"
    del d.spec["cost"]
    d.tick()
    assert "cost" not in d.status  # removed by the merge patch's null


def test_the_benchmarkresult_records_the_cost_of_what_it_measured(spec_of):
    d = Driver(spec_of({"database": {"type": "voltdb"}, "cost": {"pricePerHour": 2.0}}))
    d.status = {
        "phase": "Succeeded",
        "observedGeneration": 2,
        "specHash": spec_hash(d.typed),
        "results": results_status(900.0),
        "completionTime": "2026-11-25T12:00:00Z",
    }
    step = d.tick()
    assert the(step, WriteResult).result.spec.cost.to_json() == {
        "pricePerHour": 2.0,
        "currency": "USD",
        "throughputMetric": "tpmC",
        "throughputPerPricePerHour": 450.0,
    }


def test_status_cost_round_trips_through_its_type_byte_for_byte(spec_of):
    d = Driver(spec_of({"database": {"type": "voltdb"}, "cost": {"pricePerHour": 0.7, "currency": "EUR"}}))
    d.status = {
        "phase": "Succeeded",
        "observedGeneration": 2,
        "specHash": spec_hash(d.typed),
        "results": results_status(900.0),
        "verdict": "Pass",
        "cleanedUp": True,
    }
    d.tick()
    written = json.dumps(d.status["cost"])
    assert json.dumps(CostFigure.from_json(json.loads(written)).to_json()) == written
