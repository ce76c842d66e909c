"""A run's client processes are forked from the runner as it starts (executor.ClientPool) and
wait there for their plan: however the runner ends before it has one, none is left behind."""

from __future__ import annotations

import time

from tpcc_runner.executor import ClientPool


def test_clients_without_a_plan_end_when_the_pool_stops():
    pool = ClientPool(3, "tpcc_runner.drivers.voltdb")
    assert all(p.is_alive() for p in pool.procs)
    t = time.monotonic()
    pool.stop()
    assert [p.is_alive() for p in pool.procs] == [False] * 3
    assert time.monotonic() - t < 5  # each one's end of file or SIGTERM, not stop's SIGKILL


def test_a_pool_stopped_twice_is_stopped():
    pool = ClientPool(2, "tpcc_runner.drivers.mongodb")
    pool.stop()
    pool.stop()
    assert all(p.exitcode is not None for p in pool.procs)
