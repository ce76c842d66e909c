"""The judge of client against server counts (server_agreement) and the `server` section of the
results documents, merged over runner pods (results.merge_server)."""

from __future__ import annotations

from tpcc_contract.results import merge_server, server_results
from tpcc_contract.server_agreement import AGREE, DISAGREE, NOT_AVAILABLE, judge
from tpcc_contract.server_stats import ClientCounts, CounterGroup, DatabaseSize, ServerCounters
from tpcc_runner.results import summary


def _volt_like(t: float, new_order: tuple[int, int], payment: int) -> ServerCounters:
    return ServerCounters(
        t,
        (
            CounterGroup("NewOrder+NewOrderMP", ("NEW_ORDER",), *new_order),
            CounterGroup("Payment+PaymentMP", ("PAYMENT",), payment, 0),
        ),
        {"procedure.NewOrder.invocations": sum(new_order)},
    )


CLIENTS = {"NEW_ORDER": ClientCounts(committed=1000, rollbacks=10, retries=3), "PAYMENT": ClientCounts(committed=900)}


def test_counts_that_match_agree():
    verdict = judge(CLIENTS, _volt_like(1, (5000, 40), 7000), _volt_like(2, (6000, 50), 7900))
    assert verdict.verdict == AGREE
    assert [(c.counter, c.what, c.client, c.server) for c in verdict.comparisons] == [
        ("NewOrder+NewOrderMP", "committed", 1000, 1000),
        ("NewOrder+NewOrderMP", "aborted", 10, 10),
        ("Payment+PaymentMP", "committed", 900, 900),
        ("Payment+PaymentMP", "aborted", 0, 0),
    ]


def test_work_the_clients_did_not_count_is_a_disagreement_with_the_difference():
    # 50 NewOrders more than the clients committed: another client of the database
    verdict = judge(CLIENTS, _volt_like(1, (5000, 40), 7000), _volt_like(2, (6050, 50), 7900))
    assert verdict.verdict == DISAGREE
    assert "NewOrder+NewOrderMP committed: server 1050, clients 1000 (+50, allowed ±5)" in verdict.reason
    assert "Payment" not in verdict.reason


def test_commits_the_server_lost_disagree_but_unknown_outcomes_widen_the_tolerance():
    before, after = _volt_like(1, (5000, 40), 7000), _volt_like(2, (5996, 50), 7900)
    assert judge(CLIENTS, before, after).verdict == AGREE  # 4 short of 1000: within 0.5 %
    short = _volt_like(2, (5900, 50), 7900)
    assert judge(CLIENTS, before, short).verdict == DISAGREE
    unsure = {**CLIENTS, "NEW_ORDER": ClientCounts(committed=1000, rollbacks=10, unknown=100)}
    assert judge(unsure, before, short).verdict == AGREE


def test_a_server_without_counters_or_restarted_is_not_available_with_the_reason():
    none = ServerCounters.not_available("mongodb: serverStatus has no transactions.totalCommitted")
    verdict = judge(CLIENTS, none, none)
    assert (verdict.verdict, verdict.reason) == (NOT_AVAILABLE, none.unavailable)
    restarted = judge(CLIENTS, _volt_like(1, (5000, 40), 7000), _volt_like(2, (100, 0), 90))
    assert restarted.verdict == NOT_AVAILABLE and "went down" in restarted.reason


def _pod_doc(before, after, clients, pods=2):
    return server_results(before, after, DatabaseSize(data_bytes=after.taken_at), clients, pods)


def test_pods_are_judged_together_from_the_earliest_before_and_latest_after():
    half = {"NEW_ORDER": ClientCounts(committed=500, rollbacks=5), "PAYMENT": ClientCounts(committed=450)}
    # pod 0 took its counters first and finished first; pod 1 saw pod 0's early commits
    a = _pod_doc(_volt_like(1, (5000, 40), 7000), _volt_like(10, (5800, 48), 7700), half)
    b = _pod_doc(_volt_like(2, (5000, 40), 7000), _volt_like(11, (6000, 50), 7900), half)
    assert a["server_agreement"]["verdict"] == NOT_AVAILABLE  # one pod alone cannot tell
    merged = merge_server([a, b])
    assert merged["server_agreement"]["verdict"] == AGREE
    assert merged["server"]["counted_during_run"] == {"procedure.NewOrder.invocations": 1010}
    assert merged["server"]["size"]["data_bytes"] == 11  # the last pod's
    doc_b = _pod_doc(_volt_like(2, (5000, 40), 7000), _volt_like(11, (6100, 50), 7900), half)
    assert merge_server([a, doc_b])["server_agreement"]["verdict"] == DISAGREE


def test_the_summary_says_the_size_and_the_verdict(tmp_path):
    from test_results import _pod

    doc = {
        **_pod([5] * 60),
        **_pod_doc(
            _volt_like(1, (0, 0), 0), _volt_like(2, (1, 0), 0), {"NEW_ORDER": ClientCounts(committed=1)}, pods=1
        ),
    }
    text = summary(doc)
    assert "server counters vs clients: agree" in text
    assert "transactions/s" in text and "minms" in text


def test_a_server_that_cannot_be_asked_is_reported_not_available_and_the_run_goes_on():
    import socket

    from tpcc_runner.cli import build_parser, connection_options, fetch_database_size, fetch_server_counters

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    args = build_parser().parse_args(
        ["run", "--db", "voltdb", "--endpoints", f"127.0.0.1:{port}", "--warehouses", "1", "--connect-timeout", "1"]
    )
    counters = fetch_server_counters(args, connection_options(args))
    assert counters.unavailable.startswith("voltdb: Unreachable: VoltDB not reachable")
    assert fetch_database_size(args, connection_options(args)).unavailable.startswith("voltdb: Unreachable")
    assert judge(CLIENTS, counters, counters).verdict == NOT_AVAILABLE


def test_a_counter_the_server_lists_only_after_first_use_counts_from_zero():
    from tpcc_contract.server_stats import counter_deltas

    before = ServerCounters(1, (), {"procedure.LoadItems.invocations": 3})
    after = ServerCounters(2, (), {"procedure.LoadItems.invocations": 3, "procedure.NewOrder.invocations": 40})
    assert counter_deltas(before, after) == {"procedure.LoadItems.invocations": 0, "procedure.NewOrder.invocations": 40}
    assert counter_deltas(ServerCounters.not_available("refused"), after) == {}
