"""How many CPUs the runner counts on: its cgroup's CPU limit, not the node's cores."""

from __future__ import annotations

import os

import pytest
from tpcc_runner.processes import usable_cpus

RUNNABLE = len(os.sched_getaffinity(0))


@pytest.mark.parametrize(
    "cpu_max, expected",
    [
        ("max 100000\n", RUNNABLE),  # no limit: the CPUs it may run on
        ("200000 100000\n", min(RUNNABLE, 2)),  # a 2-CPU limit
        ("150000 100000\n", min(RUNNABLE, 2)),  # 1.5 CPUs: rounded up
        ("50000 100000\n", 1),  # half a CPU: still one process
        ("garbage\n", RUNNABLE),  # unreadable: as without a limit
    ],
)
def test_the_cgroup_limit_bounds_the_cpus(tmp_path, cpu_max, expected):
    path = tmp_path / "cpu.max"
    path.write_text(cpu_max)
    assert usable_cpus(path) == expected


def test_without_a_cgroup_file_it_is_the_cpus_it_may_run_on(tmp_path):
    assert usable_cpus(tmp_path / "absent") == RUNNABLE


def test_the_load_workers_default_follows_the_limit(monkeypatch):
    """`tpcc load --workers` defaults to twice the CPUs usable_cpus counts."""
    from tpcc_runner import cli

    monkeypatch.setattr(cli, "usable_cpus", lambda: 3)
    args = cli.build_parser().parse_args(["load", "--db", "voltdb", "--warehouses", "1"])
    assert args.workers == 6
