"""Results arithmetic: tpmC, percentiles from histograms, merging runner pods."""
import pytest

from tpcc_runner.metrics import LATENCY_BUCKETS, bucket_index
from tpcc_runner.results import TypeStats, build_results, merge_results, record_latency, summary
from tpcc_runner.workload import NEW_ORDER, PAYMENT, TRANSACTIONS


def _stats(new_orders, latency_s, payments=0):
    stats = {t: TypeStats() for t in TRANSACTIONS}
    for _ in range(new_orders):
        stats[NEW_ORDER].counts["committed"] += 1
        record_latency(stats[NEW_ORDER].histogram, latency_s)
    stats[PAYMENT].counts["committed"] = payments
    return stats


def test_tpmc_is_new_orders_per_minute_of_the_measured_window():
    doc = build_results(_stats(300, 0.01, 200), 120.0, 2, 4, {0: 25}, {"start": "a", "end": "b"})
    assert doc["tpmC"] == 150.0
    assert doc["efficiency"] == pytest.approx(100 * 150 / (12.86 * 2), abs=0.01)
    assert doc["transactions"][NEW_ORDER]["mix_percent"] == 60.0
    assert doc["timeline"] == [{"t": 0, "tpmC": 150.0}]


def test_percentiles_come_from_the_histogram():
    stats = {t: TypeStats() for t in TRANSACTIONS}
    for ms in range(1, 101):
        stats[NEW_ORDER].counts["committed"] += 1
        record_latency(stats[NEW_ORDER].histogram, ms / 1000)
    lat = build_results(stats, 60, 1, 1, {}, {})["transactions"][NEW_ORDER]["latency_ms"]
    assert lat["p50"] == pytest.approx(50, rel=0.01)
    assert lat["p99"] == pytest.approx(99, rel=0.01)
    assert lat["max"] == pytest.approx(100, rel=0.01)


def test_merge_adds_counts_and_merges_histograms_not_percentiles():
    fast = build_results(_stats(100, 0.001), 60, 1, 2, {0: 10}, {"start": "2026-01-01T00:00:10Z",
                                                                 "end": "2026-01-01T00:01:10Z"})
    slow = build_results(_stats(100, 0.100), 60, 1, 3, {0: 5}, {"start": "2026-01-01T00:00:09Z",
                                                                "end": "2026-01-01T00:01:11Z"})
    m = merge_results([fast, slow])
    assert m["tpmC"] == fast["tpmC"] + slow["tpmC"] == 200.0
    assert m["clients"] == 5 and m["pods"] == 2
    assert m["transactions"][NEW_ORDER]["committed"] == 200
    lat = m["transactions"][NEW_ORDER]["latency_ms"]
    assert lat["p50"] == pytest.approx(1, rel=0.01)
    assert lat["p75"] == pytest.approx(100, rel=0.01)
    assert m["start"] == "2026-01-01T00:00:09Z" and m["end"] == "2026-01-01T00:01:11Z"
    assert m["timeline"] == [{"t": 0, "tpmC": 90.0}]
    assert "tpmC" in summary(m)


def test_merge_of_nothing_is_an_error():
    with pytest.raises(ValueError):
        merge_results([])


def test_latency_bucket_index():
    assert bucket_index(0.0005) == 0
    assert bucket_index(0.001) == 0
    assert bucket_index(0.0011) == 1
    assert bucket_index(100.0) == len(LATENCY_BUCKETS)


def test_merge_adds_up_the_pods_ledger_verifications():
    extra = {"start": "s", "end": "e"}
    a = {**build_results(_stats(10, 0.01), 60, 1, 1, {}, extra),
         "durability": {"acknowledged": 10, "found": 9, "lost": 1, "unknown_outcome": 2,
                        "lost_examples": [[1, 2, 3001]]}}
    b = {**build_results(_stats(5, 0.01), 60, 1, 1, {}, extra),
         "durability": {"acknowledged": 5, "found": 5, "lost": 0, "unknown_outcome": 1,
                        "lost_examples": []}}
    d = merge_results([a, b])["durability"]
    assert d == {"acknowledged": 15, "found": 14, "lost": 1, "unknown_outcome": 3,
                 "lost_examples": [[1, 2, 3001]], "pods": 2}
    assert "durability" not in merge_results([build_results(_stats(1, 0.01), 60, 1, 1, {}, extra)])
