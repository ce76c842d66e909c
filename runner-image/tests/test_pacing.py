"""`tpcc run --target-tps`: each terminal's schedule (the rate over a real database is measured in
test_runner_e2e's test_a_paced_run_holds_its_target_rate; the spec deviation it names, in
test_workload)."""

from __future__ import annotations

from tpcc_runner.executor import RunPlan, next_paced_start
from tpcc_runner.workload import CConstants, Scale


def _plan(**fields) -> RunPlan:
    return RunPlan("voltdb", None, 2, Scale(), CConstants(0, 0, 0), (45, 43, 4, 4, 4), 4, 1, **fields)


def test_each_terminal_gets_an_equal_share_of_the_target_over_every_pod():
    # 8 terminals in all (this pod's 4 of 2 pods' 8) at 400 a second: each one every 20 ms
    assert _plan(shards=2, total_clients=8, target_tps=400).terminal_interval == 8 / 400
    assert _plan(target_tps=2).terminal_interval == 2.0  # 4 terminals, 2 a second
    assert _plan().terminal_interval is None


def test_a_terminal_on_time_keeps_its_schedule():
    assert next_paced_start(100.0, 0.5, now=100.2) == 100.5


def test_a_late_terminal_starts_at_once_and_makes_up_nothing():
    # a 3 s stall of the database: the next start is now, not the six missed starts at once
    assert next_paced_start(100.0, 0.5, now=103.1) == 103.1
    assert next_paced_start(103.1, 0.5, now=103.2) == 103.6
