"""Durability under failover, runner level: a real 3-node VoltDB cluster with k=1 under
`tpcc run`; one node is killed with SIGKILL twice and restarted each time. Afterwards no
acknowledged NewOrder is missing, all 12 conditions hold, the runner exited 0 and
reported the transactions whose outcome it could not know."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest
from cli_helpers import TPCC, tpcc
from voltdb_server import voltdb_cluster  # noqa: F401  (fixture)

pytestmark = pytest.mark.db

DURATION = 60
# (seconds after start, action): the same node dies twice and comes back each time
SCHEDULE = [(10, "kill-node"), (20, "restart-node"), (32, "kill-node"), (42, "restart-node")]


def test_kill_a_node_twice_during_a_run_loses_no_acknowledged_order(voltdb_cluster, tmp_path):
    endpoints = ",".join(voltdb_cluster.endpoints)
    common = ["--db", "voltdb", "--endpoints", endpoints, "--metrics-port", "0"]
    loaded = tpcc(
        "load",
        *common,
        "--warehouses",
        "2",
        "--reset",
        "--workers",
        "2",
        "--items",
        "5000",
        "--customers-per-district",
        "300",
    )
    assert loaded.code == 0, loaded.stderr
    ledger, results, log = tmp_path / "ledger", tmp_path / "results.json", tmp_path / "run.log"
    start = time.time() + 3
    with log.open("w") as out:  # a file, not a pipe: what a hung or failed run said is kept
        run = subprocess.Popen(
            [
                *TPCC,
                "run",
                *common,
                "--warehouses",
                "2",
                "--clients",
                "6",
                "--duration",
                str(DURATION),
                "--warmup",
                "0",
                "--start-at",
                str(start),
                "--ledger",
                str(ledger),
                "--verify-ledger",
                "--results",
                str(results),
                "--check",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    victim = 1
    try:
        for at, action in SCHEDULE:
            time.sleep(max(0.0, start + at - time.time()))
            getattr(voltdb_cluster, action.replace("-", "_"))(victim)
        run.wait(timeout=DURATION + 300)
    finally:  # a failed kill or restart must not leave the run writing into the next test's cluster
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGUSR1)  # every process prints its threads' stacks
            time.sleep(2)
            os.killpg(run.pid, signal.SIGKILL)  # the run, its fork server and its clients
            run.wait()
            print("the run did not end; its log and stacks:", log.read_text()[-20000:])
    assert run.returncode == 0, log.read_text()[-3000:]
    doc = json.loads(results.read_text())
    assert doc["consistency"]["passed"], doc["consistency"]
    assert doc["tpmC"] > 0
    totals = doc["totals"]
    print("failover totals:", totals)
    assert "unknown" in totals and "errors" in totals and totals["committed"] > 0
    # throughput is visible per 10 s, so the dip around each kill can be seen
    assert len(doc["timeline"]) >= DURATION // 10 - 1
    verified = tpcc("verify-ledger", *common, "--ledger", str(ledger))
    assert verified.code == 0, verified.stderr
    v = verified.json()
    assert v["lost"] == 0 and v["acknowledged"] > 0
    # the run's own verification (what the operator records) saw the same ledger
    assert doc["durability"]["lost"] == 0
    assert doc["durability"]["acknowledged"] == v["acknowledged"]
    # the ledger holds every NewOrder of unknown outcome, also those finishing after the window
    assert v["unknown_outcome"] >= doc["transactions"]["NEW_ORDER"]["unknown"]
    assert tpcc("check", *common).code == 0


def test_the_acid_tests_pass_on_the_three_node_cluster_after_the_failovers(voltdb_cluster):
    """Clause 3's tests on the k=1 cluster the run above killed a node of twice (each
    partition's transactions run serially on every replica)."""
    done = tpcc(
        "acid",
        "--db",
        "voltdb",
        "--endpoints",
        ",".join(voltdb_cluster.endpoints),
        "--seed",
        "9",
        "--metrics-port",
        "0",
    )
    doc = done.json()
    assert done.code == 0, [(t["test"], t["reason"]) for t in doc["tests"] if t["status"] != "passed"]
    assert doc["counts"] == {"passed": 11, "failed": 0, "not-applicable": 0, "error": 0}
    assert doc["driver"]["k_factor"] == 1 and doc["driver"]["hosts"] == 3
