"""spec.sweep.saturation: clients raised step by step on one database until throughput stops
growing or a p90 response-time limit breaks; the decision is a pure function, the cells are a
sweep's."""

from __future__ import annotations

import pytest
from crd_schema import validate
from runner_docs import durability_report, pod_results
from test_phases import CHECK_OK, IPS, Driver, the
from tpcc_operator import saturation, sweep, sweep_layout
from tpcc_operator.saturation import Figure
from tpcc_operator.stages.actions import CreateRunObjects, CreateVerifyJob, WriteResult, WriteStartAt
from tpcc_operator.stages.machine import JobState, World
from tpcc_operator.workloads.tpcc import P90_LIMITS_MS

LADDER = (2, 4, 8, 16)
SEARCH = {"startClients": 2, "factor": 2, "maxClients": 16, "minGainPercent": 5}


@pytest.fixture
def search_spec(spec_of):
    return spec_of(
        {
            "database": {"type": "voltdb"},
            "runners": {"parallelism": 2},
            "workload": {"warehouses": 1},
            "sweep": {"saturation": SEARCH},
        }
    )


def test_the_ladder_adds_a_step_or_multiplies_by_a_factor_within_max_clients(spec_of):
    assert (
        sweep_layout.saturation_ladder(
            spec_of({"database": {"type": "voltdb"}, "sweep": {"saturation": SEARCH}}).sweep.saturation
        )
        == LADDER
    )
    stepped = spec_of(
        {"database": {"type": "voltdb"}, "sweep": {"saturation": {"startClients": 10, "step": 20, "maxClients": 75}}}
    ).sweep.saturation
    assert sweep_layout.saturation_ladder(stepped) == (10, 30, 50, 70)
    assert stepped.min_gain_percent == 3  # the CRD's default: the studies' "not more than 3 %"


def test_growing_throughput_goes_on_to_the_next_count():
    decision = saturation.decide(LADDER, [Figure(2, 100), Figure(4, 190)], 5)
    assert (decision.next_clients, decision.stopped, decision.saturation) == (8, None, Figure(4, 190))


def test_a_gain_under_the_threshold_stops_at_the_best_count_so_far():
    decision = saturation.decide(LADDER, [Figure(2, 100), Figure(4, 190), Figure(8, 198)], 5)
    assert decision.next_clients is None and decision.stopped == saturation.GAIN_BELOW_THRESHOLD
    assert decision.saturation == Figure(8, 198) and "gained 4.2 %, under minGainPercent 5" in decision.reason
    # throughput that falls stops too, and the saturation point is the count before
    falling = saturation.decide(LADDER, [Figure(2, 100), Figure(4, 190), Figure(8, 150)], 5)
    assert falling.stopped == saturation.GAIN_BELOW_THRESHOLD and falling.saturation == Figure(4, 190)


def test_a_broken_p90_limit_stops_and_that_count_does_not_count():
    broken = Figure(8, 400, ("NEW_ORDER p90 6000 ms > 5000 ms",))
    decision = saturation.decide(LADDER, [Figure(2, 100), Figure(4, 190), broken], 5)
    assert decision.stopped == saturation.LIMIT_BROKEN and decision.saturation == Figure(4, 190)
    assert "8 clients broke the p90 limits (NEW_ORDER p90 6000 ms > 5000 ms)" in decision.reason
    # a first count already over the limits: no saturation point at all
    first = saturation.decide(LADDER, [Figure(2, 100, ("STOCK_LEVEL p90 21000 ms > 20000 ms",))], 5)
    assert first.stopped == saturation.LIMIT_BROKEN and first.saturation is None


def test_max_clients_ends_a_search_whose_throughput_still_grew():
    figures = [Figure(c, 100 * c) for c in LADDER]
    decision = saturation.decide(LADDER, figures, 5)
    assert decision.stopped == saturation.MAX_CLIENTS and decision.saturation == Figure(16, 1600)


def test_a_count_is_its_repetitions_median_and_breaks_a_limit_if_any_repetition_does():
    cells = [
        {"warehouses": 1, "clients": 2, "repetition": r, "state": "Succeeded", "tpmC": t, "p90Ms": {"NEW_ORDER": p}}
        for r, (t, p) in enumerate(((100, 10), (300, 10), (120, 10)), 1)
    ]
    cells += [
        {"warehouses": 1, "clients": 4, "repetition": 1, "state": "Succeeded", "tpmC": 500, "p90Ms": {"NEW_ORDER": 10}},
        {
            "warehouses": 1,
            "clients": 4,
            "repetition": 2,
            "state": "Succeeded",
            "tpmC": 510,
            "p90Ms": {"NEW_ORDER": 5200},
        },
        {"warehouses": 1, "clients": 8, "repetition": 1, "state": "Running"},
    ]
    cells = [sweep.Cell.from_json(c) for c in cells]
    limits = P90_LIMITS_MS
    assert saturation.figures(cells, (1, ()), limits, "tpmC") == [
        Figure(2, 120),
        Figure(4, 505, ("NEW_ORDER p90 5200 ms > 5000 ms",)),
    ]
    # a limit of the spec's over TPC-C's
    assert saturation.figures(cells[:3], (1, ()), {**limits, "NEW_ORDER": 20}, "tpmC")[0].broken == ()
    assert saturation.figures(cells[:3], (1, ()), {**limits, "NEW_ORDER": 5}, "tpmC")[0].broken == (
        "NEW_ORDER p90 10 ms > 5 ms",
    )


def test_p90_limits_are_tpcc_s_with_the_spec_s_over_them(spec_of):
    spec = spec_of(
        {"database": {"type": "voltdb"}, "sweep": {"saturation": {**SEARCH, "p90LimitsMs": {"NEW_ORDER": 250}}}}
    )
    search = saturation.Search.of(spec)
    assert search.limits_ms == {
        "NEW_ORDER": 250,
        "PAYMENT": 5000,
        "ORDER_STATUS": 5000,
        "DELIVERY": 5000,
        "STOCK_LEVEL": 20000,
    }
    assert (search.counts, search.min_gain_percent, search.metric) == (LADDER, 5, "tpmC")
    ycsb = spec_of({"database": {"type": "voltdb"}, "workload": {"kind": "ycsb"}, "sweep": {"saturation": SEARCH}})
    assert saturation.Search.of(ycsb).limits_ms == {} and saturation.Search.of(ycsb).metric == "opsPerSecond"
    assert saturation.Search.of(spec_of({"database": {"type": "voltdb"}, "sweep": {"clients": [1]}})) is None


def test_the_crd_takes_a_search_and_plans_its_whole_ladder(search_spec):
    manifest = {
        "apiVersion": "bench.tpcc.dev/v1alpha1",
        "kind": "BenchmarkRun",
        "metadata": {"name": "s"},
        "spec": search_spec.document,
    }
    assert validate(manifest) == []
    cells = sweep_layout.sweep_cells(search_spec)
    assert [(c.warehouses, c.clients) for c in cells] == [(1, c) for c in LADDER]
    assert sweep_layout.sweep_plan(search_spec, cells).cells == 4  # at most: the search may stop before


def _measure(d: Driver, tpmc_pod: int, latency_s: float = 0.01) -> dict:
    """One cell from its Running phase to its verdict; returns the judging tick's status."""
    assert d.phase == "Running"
    d.tick(World())
    start = the(d.tick(World(runner=JobState(exists=True), runners_ready=2)), WriteStartAt).start_at
    docs = {0: pod_results(0, 2, tpmc_pod, latency_s), 1: pod_results(1, 2, tpmc_pod, latency_s)}
    d.tick(World(runner=JobState(exists=True, succeeded=True), start_at=start, results=docs))
    d.tick(World(database_ready=1, runner_pod_ips=IPS))
    d.tick(World(verifier=JobState(exists=True, succeeded=True), durability_report=durability_report(90)))
    d.tick(World())
    d.tick(World(checker=JobState(exists=True, succeeded=True), check_report=CHECK_OK, results=docs))
    d.tick(World(results=docs))  # judged: the next cell, or the end
    return d.status


def _deployed_and_loaded(spec) -> Driver:
    d = Driver(spec)
    for world in (
        None,
        None,
        None,
        World(database_ready=1),
        World(),
        World(load=JobState(exists=True, succeeded=True)),
    ):
        d.tick(world)
    return d


def _next_cell(d: Driver) -> None:
    assert d.tick(World()).actions == [CreateRunObjects()]


def test_the_search_stops_where_the_gain_falls_under_the_threshold_and_skips_the_rest(search_spec):
    d = _deployed_and_loaded(search_spec)
    for i, tpmc in enumerate((100, 190, 195)):  # 4 -> 8 clients: +2.6 %, under 5 %
        if i:
            _next_cell(d)
        _measure(d, tpmc)
    table = d.status["sweep"]
    assert d.phase == "Succeeded" and [c["state"] for c in table["cells"]] == ["Succeeded"] * 3 + ["Skipped"]
    assert (table["progress"], table["skipped"]) == ("4/4", 1)
    [search] = table["saturation"]
    assert search["stopped"] == "GainBelowThreshold" and search["metric"] == "tpmC"
    assert [s["clients"] for s in search["steps"]] == [2, 4, 8]
    assert search["saturationClients"] == 8 and search["throughput"] == table["cells"][2]["tpmC"]
    assert search["steps"][1]["gainPercent"] == pytest.approx(90, abs=0.5)
    assert "1 warehouses saturate at 8 clients" in d.status["regression"]["message"]
    assert "1 skipped" in d.status["regression"]["message"]
    assert any(e.reason == "SaturationFound" for e in d.events)
    # the last cell never ran: no runner Job, no BenchmarkResult for it
    assert "result" not in table["cells"][3]


def test_a_count_over_the_p90_limit_ends_the_search_without_counting(search_spec):
    d = _deployed_and_loaded(search_spec)
    _measure(d, 100)
    _next_cell(d)
    _measure(d, 400, latency_s=6.0)  # 4 clients: four times the throughput, NewOrder p90 6 s
    table = d.status["sweep"]
    [search] = table["saturation"]
    assert search["stopped"] == "LimitBroken" and search["saturationClients"] == 2
    broken = search["steps"][1]["limitsBroken"]
    assert any(b.startswith("NEW_ORDER p90 6000") and b.endswith("> 5000 ms") for b in broken), broken
    assert search["throughput"] == table["cells"][0]["tpmC"]
    assert [c["state"] for c in table["cells"]] == ["Succeeded", "Succeeded", "Skipped", "Skipped"]


def test_a_search_goes_on_while_throughput_grows_up_to_max_clients(search_spec):
    d = _deployed_and_loaded(search_spec)
    for i, tpmc in enumerate((100, 200, 400, 800)):
        if i:
            _next_cell(d)
            assert d.status["sweep"]["saturation"][0].get("stopped") is None  # still searching
        _measure(d, tpmc)
    [search] = d.status["sweep"]["saturation"]
    assert search["stopped"] == "MaxClients" and search["saturationClients"] == 16
    assert d.status["sweep"]["succeeded"] == 4


def test_one_search_per_warehouse_count_each_on_its_own_load(spec_of):
    spec = spec_of(
        {
            "database": {"type": "voltdb"},
            "runners": {"parallelism": 2},
            "sweep": {"warehouses": [2, 1], "saturation": {**SEARCH, "maxClients": 8}},
        }
    )
    d = _deployed_and_loaded(spec)
    _measure(d, 100)
    _next_cell(d)
    _measure(d, 101)  # 2 warehouses saturate at 2 clients: 4 is skipped, 8 too
    assert [c["state"] for c in d.status["sweep"]["cells"][:3]] == [
        "Succeeded",
        "Succeeded",
        "Skipped",
    ]
    _next_cell(d)
    assert d.phase == "Loading" and d.status["sweep"]["current"] == 3  # the first cell of 1 warehouse
    d.tick(World())
    d.tick(World(load=JobState(exists=True, succeeded=True)))
    for i, tpmc in enumerate((100, 300, 900)):
        if i:
            _next_cell(d)
        _measure(d, tpmc)
    searches = {s["warehouses"]: s for s in d.status["sweep"]["saturation"]}
    assert (searches[2]["stopped"], searches[2]["saturationClients"]) == ("GainBelowThreshold", 4)
    assert (searches[1]["stopped"], searches[1]["saturationClients"]) == ("MaxClients", 8)


def test_a_failed_cell_ends_the_search_with_what_it_measured(search_spec):
    d = _deployed_and_loaded(search_spec)
    _measure(d, 100)
    _next_cell(d)
    d.tick(World())
    d.tick(World(runner=JobState(exists=True, failed=True, message="runner pod evicted")))
    assert d.phase == "Failed"
    d.tick(World())
    [search] = d.status["sweep"]["saturation"]
    assert search["stopped"] == "CellFailed" and search["saturationClients"] == 2
    assert d.status["verdict"] == "Failed"


def test_a_ycsb_search_is_judged_on_operations_per_second(spec_of):
    from runner_docs import ycsb_pod_results
    from test_ycsb_run import YCSB_VERIFIED

    spec = spec_of(
        {
            "database": {"type": "voltdb"},
            "runners": {"parallelism": 2},
            "workload": {"kind": "ycsb"},
            "sweep": {"saturation": {"startClients": 2, "factor": 2, "maxClients": 8, "minGainPercent": 10}},
        }
    )
    manifest = {
        "apiVersion": "bench.tpcc.dev/v1alpha1",
        "kind": "BenchmarkRun",
        "metadata": {"name": "y"},
        "spec": spec.document,
    }
    assert validate(manifest) == []  # YCSB sweeps over clients are allowed now
    d = _deployed_and_loaded(spec)
    for i, reads in enumerate((950, 1950, 2000)):  # 100, 200 then 205 operations/s
        if i:
            _next_cell(d)
        d.tick(World())
        start = the(d.tick(World(runner=JobState(exists=True), runners_ready=2)), WriteStartAt).start_at
        docs = {0: ycsb_pod_results(0, 2, reads, 50, 0.002), 1: ycsb_pod_results(1, 2, reads, 50, 0.002)}
        d.tick(World(runner=JobState(exists=True, succeeded=True), start_at=start, results=docs))
        assert d.tick(World(runner_pod_ips=IPS, database_ready=1)).actions == [CreateVerifyJob(IPS)]
        d.tick(World(verifier=JobState(exists=True, succeeded=True), durability_report=YCSB_VERIFIED))
        step = d.tick(World(results=docs))
        assert the(step, WriteResult).result.spec.ops_per_second == d.status["sweep"]["cells"][i]["opsPerSecond"]
    table = d.status["sweep"]
    assert d.phase == "Succeeded" and [c["state"] for c in table["cells"]] == ["Succeeded"] * 3
    assert [c["opsPerSecond"] for c in table["cells"]] == [100, 200, 205] and "tpmC" not in table["cells"][0]
    [search] = table["saturation"]
    assert (search["metric"], search["stopped"], search["saturationClients"], search["throughput"]) == (
        "opsPerSecond",
        "GainBelowThreshold",
        8,
        205,
    )
    assert [c["opsPerSecond"]["median"] for c in table["configurations"]] == [100, 200, 205]
    # YCSB has no warehouses: no cell, search or configuration names any, nor do the words
    rows = [*table["cells"], *table["saturation"], *table["configurations"], *(table.get("comparisons") or ())]
    assert not [r for r in rows if "warehouses" in r], rows
    assert "warehouses" not in d.status["message"], d.status["message"]
    assert "the clients saturate at 8 clients (205 opsPerSecond" in d.status["message"], d.status["message"]


def test_one_search_per_matrix_combination_each_from_start_clients(spec_of):
    """The sharded study raised the clients to saturation per configuration: with sweep.matrix,
    each combination climbs its own ladder on the same load, and a stop skips only its own rest."""
    spec = spec_of(
        {
            "database": {"type": "voltdb"},
            "runners": {"parallelism": 2},
            "sweep": {
                "saturation": {**SEARCH, "maxClients": 8},
                "matrix": [{"field": "workload.remotePercent.newOrderLines", "values": ["1", "10"]}],
            },
        }
    )
    remote = "workload.remotePercent.newOrderLines"
    cells = sweep_layout.sweep_cells(spec)
    assert [(dict(c.matrix)[remote], c.clients) for c in cells] == [
        ("1", 2),
        ("1", 4),
        ("1", 8),
        ("10", 2),
        ("10", 4),
        ("10", 8),
    ]
    assert [c.loads for c in cells] == [True, False, False, False, False, False]  # one load for both
    d = _deployed_and_loaded(spec)
    _measure(d, 100)
    _next_cell(d)
    _measure(d, 101)  # remote 1 %: 2 -> 4 clients +1 %: saturated at 4, 8 skipped
    _next_cell(d)
    assert d.status["sweep"]["current"] == 3 and d.phase == "Running"  # remote 10 % starts at 2 clients
    for i, tpmc in enumerate((50, 100, 200)):
        if i:
            _next_cell(d)
        _measure(d, tpmc)
    table = d.status["sweep"]
    assert [c["state"] for c in table["cells"]] == ["Succeeded", "Succeeded", "Skipped"] + ["Succeeded"] * 3
    searches = {s["matrix"][remote]: s for s in table["saturation"]}
    assert (searches["1"]["stopped"], searches["1"]["saturationClients"]) == ("GainBelowThreshold", 4)
    assert (searches["10"]["stopped"], searches["10"]["saturationClients"]) == ("MaxClients", 8)
    assert "1 warehouses, newOrderLines=10 saturate at 8 clients" in d.status["regression"]["message"]
    found = [e.message for e in d.events if e.reason == "SaturationFound"]
    assert found[0].startswith("1 warehouses, newOrderLines=1: ") and found[1].startswith(
        "1 warehouses, newOrderLines=10: "
    )
