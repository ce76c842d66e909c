"""Results arithmetic: tpmC over the window each pod really measured, percentiles from
histograms, merging runner pods over their common window, the clause 5.2.5.3 limits."""

import pytest
from tpcc_contract.histograms import record_latency
from tpcc_contract.results import PodWindow, TypeStats, build_results, merge_results
from tpcc_contract.tpcc import NEW_ORDER, PAYMENT, STOCK_LEVEL, TRANSACTIONS
from tpcc_runner.results import LATENCY_BUCKETS, bucket_index, summary

START_AT = 1_800_000_000.0  # the barrier's instant, epoch seconds
EXTRA = {
    "options": {"seed": 7},
    "c_constants": {"load": {"c_last": 1}, "run": {"c_last": 70}},
    "spec_deviations": ["no keying or think times"],
}


def _stats(new_orders, latency_s, payments=0):
    stats = {t: TypeStats() for t in TRANSACTIONS}
    for _ in range(new_orders):
        stats[NEW_ORDER].counts["committed"] += 1
        record_latency(stats[NEW_ORDER].histogram, latency_s)
    stats[PAYMENT].counts["committed"] = payments
    return stats


def _window(duration=60, warmup=10.0, late=0.0, stopped_early=0.0):
    started = START_AT + late
    return PodWindow(
        start_at=START_AT,
        terminals_started=started,
        planned_measure_start=START_AT + warmup,
        measure_start=max(START_AT + warmup, started),
        measure_end=START_AT + warmup + duration - stopped_early,
    )


def _pod(per_second, latency_s=0.01, *, shard=0, shards=1, clients=2, paced=False, **window):
    stats = _stats(sum(per_second), latency_s)
    return build_results(
        stats,
        _window(len(per_second), **window),
        list(per_second),
        1,
        clients,
        paced,
        {0: sum(per_second)},
        {**EXTRA, "shard": f"{shard}/{shards}"},
    )


def test_tpmc_is_new_orders_per_minute_of_the_measured_window():
    doc = build_results(_stats(300, 0.01, 200), _window(120), [3, 2] * 60, 2, 4, False, {0: 25}, EXTRA)
    assert doc["tpmC"] == 150.0 and doc["measured_seconds"] == 120
    assert doc["transactions"][NEW_ORDER]["mix_percent"] == 60.0
    assert doc["timeline"] == [{"t": 0, "tpmC": 150.0}]
    assert doc["start"] == "2027-01-15T08:00:10Z" and doc["window"]["late_seconds"] == 0


def test_efficiency_is_null_with_its_reason_without_think_times():
    unpaced = _pod([1] * 60)
    assert unpaced["efficiency"] is None and "think" in unpaced["efficiency_reason"]
    assert "efficiency n/a" in summary(unpaced)
    paced = _pod([1] * 60, warmup=0.0, paced=True)
    assert paced["pacing"] == "spec" and "efficiency_reason" not in paced
    assert paced["efficiency"] == pytest.approx(100 * 60.0 / 12.86, abs=0.01)


def test_a_pod_that_started_late_divides_by_the_seconds_it_measured():
    # 5 s late with a 2 s warmup: the first 3 measured seconds had no terminal running
    doc = _pod([0, 0, 0] + [10] * 57, warmup=2.0, late=5.0)
    assert doc["measured_seconds"] == 57 and doc["tpmC"] == 600.0
    assert doc["window"]["late_seconds"] == 5.0
    # a terminal that died early ends the window there
    assert _pod([10] * 60, stopped_early=20.5)["measured_seconds"] == 39


def test_response_time_limits_of_clause_5_2_5_3():
    ok = _pod([1] * 60, latency_s=4.9)
    assert ok["response_times"][NEW_ORDER] == {
        "limit_seconds": 5.0,
        "p90_seconds": pytest.approx(4.9, rel=0.01),
        "passed": True,
    }
    assert ok["response_times"][STOCK_LEVEL]["passed"] is None  # none executed: nothing to judge
    assert ok["response_times_passed"]
    slow = _pod([1] * 60, latency_s=5.2)
    assert slow["response_times"][NEW_ORDER]["passed"] is False and not slow["response_times_passed"]
    assert "over the clause 5.2.5.3 limit: NEW_ORDER" in summary(slow)
    # the merged verdict comes from the merged histogram: 20% slow ones in one pod fail the run
    merged = merge_results([_pod([8] * 60, latency_s=0.01), _pod([2] * 60, latency_s=6.0, shard=1, shards=2)])
    assert merged["response_times"][NEW_ORDER]["passed"] is False


def test_percentiles_come_from_the_histogram():
    stats = {t: TypeStats() for t in TRANSACTIONS}
    for ms in range(1, 101):
        stats[NEW_ORDER].counts["committed"] += 1
        record_latency(stats[NEW_ORDER].histogram, ms / 1000)
    lat = build_results(stats, _window(), [0] * 60, 1, 1, False, {}, EXTRA)["transactions"][NEW_ORDER]["latency_ms"]
    assert lat["p50"] == pytest.approx(50, rel=0.01)
    assert lat["p99"] == pytest.approx(99, rel=0.01)
    assert lat["max"] == pytest.approx(100, rel=0.01)


def test_merge_adds_counts_and_merges_histograms_not_percentiles():
    fast = _pod([2] * 60, 0.001, shard=0, shards=2, clients=2)
    slow = _pod([1] * 60, 0.100, shard=1, shards=2, clients=3)
    m = merge_results([fast, slow])
    assert m["tpmC"] == fast["tpmC"] + slow["tpmC"] == 180.0
    assert m["clients"] == 5 and m["pods"] == 2
    assert m["transactions"][NEW_ORDER]["committed"] == 180
    lat = m["transactions"][NEW_ORDER]["latency_ms"]
    assert lat["p50"] == pytest.approx(1, rel=0.01)
    assert lat["p75"] == pytest.approx(100, rel=0.01)
    assert m["start"] == fast["start"] and m["end"] == fast["end"]
    assert m["timeline"] == [{"t": 0, "tpmC": 1080.0}]
    assert m["late_runners"] == [] and [w["shard"] for w in m["pod_windows"]] == [0, 1]
    assert m["efficiency"] is None and m["spec_deviations"] == ["no keying or think times"]
    assert "tpmC" in summary(m)


def test_merged_tpmc_counts_only_the_common_window_and_names_the_late_pod():
    on_time = _pod([10] * 60, shard=0, shards=2, warmup=0.0, late=0.02)
    late = _pod([0, 0, 0] + [10] * 57, shard=1, shards=2, warmup=0.0, late=2.5)
    m = merge_results([late, on_time])
    # seconds 3..59 are common: 57 s in which both pods committed 10 NewOrders a second
    assert m["measured_seconds"] == 57 and m["tpmC"] == 1200.0
    assert m["late_runners"] == [{"shard": 1, "late_seconds": 2.5}]
    # within a second of the start is not late
    assert merge_results([on_time, _pod([10] * 60, shard=1, shards=2, warmup=0.0, late=0.9)])["late_runners"] == []


def test_a_pod_late_within_the_warmup_measured_the_whole_interval_and_is_not_late():
    """Late is late for measuring: a pod whose terminals were all running 1.1 s after the start
    (a busy node's wake-up) but 8.9 s before the measured interval began measured it all."""
    on_time = _pod([10] * 60, shard=0, shards=2, warmup=10.0, late=0.02)
    within = _pod([10] * 60, shard=1, shards=2, warmup=10.0, late=1.1)
    m = merge_results([on_time, within])
    assert m["late_runners"] == [] and m["measured_seconds"] == 60
    assert [w["late_seconds"] for w in m["pod_windows"]] == [0.02, 1.1]
    past = _pod([0, 0] + [10] * 58, shard=1, shards=2, warmup=10.0, late=11.5)
    assert merge_results([on_time, past])["late_runners"] == [{"shard": 1, "late_seconds": 11.5}]


def test_pods_with_different_seeds_or_windows_are_not_merged():
    a = _pod([1] * 60)
    b = {**_pod([1] * 60, shard=1, shards=2), "options": {"seed": 8}}
    with pytest.raises(ValueError, match="seed"):
        merge_results([a, b])
    c = _pod([1] * 60, shard=1, shards=2, warmup=11.0)
    with pytest.raises(ValueError, match="planned window"):
        merge_results([a, c])


def test_merge_of_nothing_is_an_error():
    with pytest.raises(ValueError):
        merge_results([])


def test_latency_bucket_index():
    assert bucket_index(0.0005) == 0
    assert bucket_index(0.001) == 0
    assert bucket_index(0.0011) == 1
    assert bucket_index(100.0) == len(LATENCY_BUCKETS)


def test_merge_never_sums_the_pods_own_ledger_verifications_into_a_run_verdict():
    """Each pod found its own orders; a key both acknowledged is invisible to the sum."""
    a = {
        **_pod([10] + [0] * 59),
        "durability": {
            "acknowledged": 10,
            "found": 10,
            "lost": 0,
            "unknown_outcome": 0,
            "durable": True,
            "lost_examples": [],
        },
    }
    b = {
        **_pod([5] + [0] * 59, shard=1, shards=2),
        "durability": {
            "acknowledged": 5,
            "found": 5,
            "lost": 0,
            "unknown_outcome": 0,
            "durable": True,
            "lost_examples": [],
        },
    }
    assert "durability" not in merge_results([a, b])
    assert "durability" not in merge_results([_pod([1] * 60)])


def test_transactions_per_second_counts_every_committed_type_over_the_window():
    stats = _stats(600, 0.01, payments=300)
    doc = build_results(stats, _window(60), [10] * 60, 1, 2, False, {}, EXTRA)
    assert doc["transactions_per_second"] == 15.0  # (600 + 300) / 60 s
    assert doc["tpmC"] == 600.0


def test_latency_has_the_minimum_beside_the_percentiles():
    stats = _stats(3, 0.2)
    record_latency(stats[NEW_ORDER].histogram, 0.004)
    lat = build_results(stats, _window(), [0] * 60, 1, 1, False, {}, EXTRA)["transactions"][NEW_ORDER]["latency_ms"]
    assert lat["min"] == pytest.approx(4.0, rel=0.01)
    assert lat["max"] == pytest.approx(200.0, rel=0.01)
    assert (
        build_results(_stats(0, 0.1), _window(), [0] * 60, 1, 1, False, {}, EXTRA)["transactions"][NEW_ORDER][
            "latency_ms"
        ]["min"]
        == 0.0
    )


def test_mean_latency_is_hdrhistograms_own_mean_over_the_recorded_buckets():
    import random

    from tpcc_contract.histograms import latency_summary_ms, new_histogram

    rng = random.Random(3)
    for scale_s in (0.0005, 0.02, 3.0):
        h = new_histogram()
        for _ in range(500):
            record_latency(h, rng.expovariate(1 / scale_s))
        assert latency_summary_ms(h)["mean"] == round(h.get_mean_value() / 1000, 3)


def test_percentiles_are_hdrhistograms_own_over_the_recorded_buckets():
    import random

    from tpcc_contract.histograms import new_histogram, percentiles_us

    rng = random.Random(5)
    for scale_s in (0.0005, 0.02, 3.0):
        h = new_histogram()
        for _ in range(500):
            record_latency(h, rng.expovariate(1 / scale_s))
        ps = (0, 1, 50, 90, 95, 99, 99.9, 100)
        assert percentiles_us(h, ps) == {p: h.get_value_at_percentile(p) for p in ps}


def test_a_client_process_sends_its_statistics_without_a_summary_and_they_come_back_whole():
    stats = _stats(3, 0.25)[NEW_ORDER]
    stats.retries = 2
    wire = stats.to_wire()
    assert "latency_ms" not in wire
    back = TypeStats.from_dict(wire)
    assert (back.counts, back.retries) == (stats.counts, 2)
    assert back.histogram.get_total_count() == 3
