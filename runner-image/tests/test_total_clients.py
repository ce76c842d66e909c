"""Any number of clients over any number of runner pods: with --total-clients (TPC-C) or
--total-threads (YCSB) each pod runs its share, the first ones one more, and the pods' TPC-C
terminal numbers are exactly 0 .. N-1 (the warehouses and districts the terminals are bound to
come from those numbers, so none is driven twice and none is skipped)."""

from __future__ import annotations

import pytest
from tpcc_runner.cli import _run_plan, build_parser
from tpcc_runner.drivers.base import ConnectionOptions, LoadMeta
from tpcc_runner.usage import UsageError, share_of
from tpcc_runner.ycsb.command import properties_of

OPTIONS = ConnectionOptions(endpoints=["db:21212"])
# What a loaded database records of its load (the run reads the scale and C constants).
META = LoadMeta(10, 100_000, 10, 3_000, 3_000, 900, 157, 259, 7911, "stored-procedures", "2026-01-01T00:00:00Z", True)


def run_plan(*args: str):
    parsed = build_parser().parse_args(["run", "--db", "voltdb", "--warehouses", "10", "--seed", "1", *args])
    return _run_plan(parsed, OPTIONS, META)


@pytest.mark.parametrize(("total", "pods"), [(10, 1), (84, 4), (94, 4), (10, 3), (30, 7), (50, 50)])
def test_the_pods_terminals_are_exactly_the_total(total, pods):
    plans = [run_plan("--total-clients", str(total), "--shard", f"{i}/{pods}") for i in range(pods)]
    shares = [p.clients for p in plans]
    assert sum(shares) == total and max(shares) - min(shares) <= 1 and shares == sorted(shares, reverse=True)
    numbers = sorted(n for p in plans for process in p.client_ids() for n in process)
    assert numbers == list(range(total))
    assert {p.all_clients for p in plans} == {total}


def test_clients_per_pod_stays_as_it_was():
    plan = run_plan("--clients", "5", "--shard", "1/2")
    assert (plan.clients, plan.all_clients) == (5, 10)
    assert sorted(n for process in plan.client_ids() for n in process) == [1, 3, 5, 7, 9]


def test_a_pod_left_without_a_client_and_both_counts_are_refused():
    with pytest.raises(UsageError, match="leaves runner 3 of 4 without a client"):
        share_of(3, (3, 4), "--total-clients")
    with pytest.raises(SystemExit):
        build_parser().parse_args(
            ["run", "--db", "voltdb", "--warehouses", "1", "--clients", "2", "--total-clients", "4"]
        )


def ycsb_run(*args: str):
    return build_parser().parse_args(["ycsb", "run", "--db", "voltdb", "--workload", "a", *args])


def test_ycsb_threads_are_shared_out_the_same_way():
    threads = [properties_of(ycsb_run("--total-threads", "10", "--shard", f"{i}/4")).threadcount for i in range(4)]
    assert threads == [3, 3, 2, 2]
    with pytest.raises(UsageError, match="not both"):
        properties_of(ycsb_run("--total-threads", "10", "--threads", "2"))


def test_a_time_series_run_refuses_unequal_shares():
    """Its threads take series keys by the pod's number times its thread count."""
    tsa = ("--workload", "tsa", "-p", "tagcardinality=1,2", "-p", "tagcount=2")
    assert properties_of(ycsb_run(*tsa, "--total-threads", "8", "--shard", "1/4")).threadcount == 2
    with pytest.raises(UsageError, match="not a multiple of the 4 runners"):
        properties_of(ycsb_run(*tsa, "--total-threads", "10", "--shard", "1/4"))
