"""Result merge into status: sums across pods, percentiles from merged histograms, no
histograms in the status; consistency report -> status.consistency; the verifier's report ->
status.durability."""

from __future__ import annotations

import pytest
from runner_docs import WARMUP, durability_report, pod_results
from tpcc_operator.results import consistency_status, durability_status, late_runners_message, run_status


def test_merge_of_two_pods():
    fast = pod_results(0, 2, new_orders=120, latency_s=0.002)
    slow = pod_results(1, 2, new_orders=60, latency_s=0.100)
    typed = run_status([fast, slow])
    r = typed.to_json()
    assert r["tpmC"] == fast["tpmC"] + slow["tpmC"] == 180.0
    assert r["runnerPods"] == 2 and r["measuredSeconds"] == 60
    assert r["start"] == "2025-01-01T00:00:10Z" and r["end"] == "2025-01-01T00:01:10Z"
    no = r["transactions"]["NEW_ORDER"]
    assert no["committed"] == 180 and no["rollbacks"] == 2
    # p50 falls in the fast pod (2/3 of the samples), p99 in the slow one: from the merged histogram
    assert 1.9 <= no["latencyMs"]["p50"] <= 2.1
    assert 99 <= no["latencyMs"]["p99"] <= 101
    assert r["retries"] == 4 and r["aborts"] == 2
    assert r["committed"] == sum(t["committed"] for t in r["transactions"].values())
    assert [p["shard"] for p in r["pods"]] == [0, 1]
    assert [p["tpmC"] for p in r["pods"]] == [120.0, 60.0]
    assert "histogram" not in repr(r)  # the timeline stays (10 s steps), histograms do not
    assert r["timeline"] == [{"t": 0, "tpmC": 6 * 180.0}]  # 180 NewOrders in one 10 s step
    assert r["seed"] == 42 and r["cConstants"]["run"]["c_last"] == 80
    assert "efficiency" not in r and "think" in r["efficiencyReason"] and r["pacing"] == "none"
    assert r["specDeviations"] == ["no keying or think times"]
    assert r["responseTimes"]["NEW_ORDER"] == {
        "limitSeconds": 5.0,
        "passed": True,
        "p90Seconds": pytest.approx(0.1, rel=0.01),
    }
    assert r["responseTimesPassed"] and r["lateRunners"] == []
    assert [p["lateSeconds"] for p in r["pods"]] == [0.01, 0.01]
    assert late_runners_message(typed) is None


def test_a_late_runner_pod_is_named_and_the_common_window_is_shorter():
    on_time = pod_results(0, 2, new_orders=600, latency_s=0.01)
    late = pod_results(1, 2, new_orders=570, latency_s=0.01, late_seconds=WARMUP + 3.4)
    typed = run_status([on_time, late])
    r = typed.to_json()
    # only the 56 seconds both pods measured count: 10 + ~10 NewOrders a second
    assert r["measuredSeconds"] == 56 and r["start"] == "2025-01-01T00:00:14Z"
    assert r["lateRunners"] == [{"shard": 1, "lateSeconds": 13.4}]
    assert [p["measureStart"] for p in r["pods"]] == ["2025-01-01T00:00:10Z", "2025-01-01T00:00:13.400000Z"]
    assert r["tpmC"] == round(60 * (560 + 570) / 56, 2)  # not the on-time pod's 60 s
    msg = late_runners_message(typed)
    assert "shard 1 (13.4 s after startAt)" in msg and "shard 0" not in msg


def test_pods_in_any_order_give_the_same_status():
    a, b = pod_results(0, 2, 50, 0.01), pod_results(1, 2, 70, 0.02)
    assert run_status([a, b]) == run_status([b, a])


def test_consistency_passed_and_violated():
    ok = {
        "passed": True,
        "violated": [],
        "conditions": [
            {"number": n, "passed": True, "checked": 10, "violations": 0, "example": None} for n in range(1, 13)
        ],
    }
    c = consistency_status(ok).to_json()
    assert c["passed"] and c["violated"] == [] and len(c["conditions"]) == 12
    bad = {
        "passed": False,
        "conditions": [
            {"number": 3, "passed": False, "checked": 10, "violations": 2, "example": {"d_id": 4}},
            {"number": 1, "passed": True, "checked": 1, "violations": 0},
        ],
    }
    c = consistency_status(bad).to_json()
    assert not c["passed"] and c["violated"] == [3]
    assert c["conditions"][0]["example"] == "{'d_id': 4}"


def test_a_report_that_claims_passed_with_a_violation_is_not_passed():
    c = consistency_status({"passed": True, "conditions": [{"number": 5, "passed": False}]}).to_json()
    assert not c["passed"] and c["violated"] == [5]


def test_a_durability_report_that_claims_durable_with_a_loss_is_not_durable():
    report = {**durability_report(10, lost=1), "durable": True}
    d = durability_status(report).to_json()
    assert (d["lost"], d["replaced"], d["durable"]) == (1, 1, False)
    assert durability_status(durability_report(10)).durable is True


def test_status_has_transactions_per_second_the_database_size_and_the_server_agreement():
    from tpcc_contract.results import server_results
    from tpcc_contract.server_stats import ClientCounts, CounterGroup, DatabaseSize, ServerCounters

    def counters(t: float, committed: int) -> ServerCounters:
        return ServerCounters(t, (CounterGroup("NewOrder+NewOrderMP", ("NEW_ORDER",), committed, 0),))

    size = DatabaseSize(data_bytes=5 << 20, index_bytes=1 << 20, memory_bytes=300 << 20)
    pods = [pod_results(shard, 2, new_orders=60, latency_s=0.01) for shard in (0, 1)]
    for shard, pod in enumerate(pods):  # each pod counted 500 NewOrders over the whole run
        pod.update(
            server_results(
                counters(1 + shard, 1000),
                counters(20 + shard, 2000 + 7 * shard),
                size,
                {"NEW_ORDER": ClientCounts(committed=500)},
                pods=2,
            )
        )
    r = run_status(pods).to_json()
    assert r["transactionsPerSecond"] > 0
    assert r["databaseBytes"] == {"data": 5 << 20, "index": 1 << 20, "memory": 300 << 20}
    assert r["serverAgreement"]["verdict"] == "disagree"  # the server counted 1007, the clients 1000
    assert "server 1007, clients 1000" in r["serverAgreement"]["reason"]
    assert r["serverAgreement"]["comparisons"][0] == {
        "counter": "NewOrder+NewOrderMP",
        "what": "committed",
        "transactions": ["NEW_ORDER"],
        "client": 1000,
        "server": 1007,
        "allowed": 5,
        "agrees": False,
    }
    assert "serverAgreement" not in run_status([pod_results(0, 1, 10, 0.01)]).to_json()  # an older runner's
