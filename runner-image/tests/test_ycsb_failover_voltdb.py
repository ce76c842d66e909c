"""YCSB's durability verdict under a real fault: a 3-node VoltDB cluster with k=1 under
`tpcc ycsb run` (reads, updates and inserts); one node is killed with SIGKILL and rejoins while
the run goes on. `tpcc ycsb verify` over the run's ledger then finds every acknowledged insert and
update and the record count within loaded + acknowledged inserts (+ those of unknown outcome).
Then the verdict is tried on a database that really lost acknowledged writes: the record of an
acknowledged insert and that of an acknowledged update deleted behind the runner's back, a field
another acknowledged update set overwritten with a value no update wrote (the record kept), and
strays added so that the count alone would still add up; verify must fail naming all three.
Last, the fault that really loses them: the only node of a k=0 VoltDB (CE: no command log) killed
after a run and restarted, empty, without even its table; verify counts every write lost."""

from __future__ import annotations

import json
import subprocess
import time

import pytest
from cli_helpers import TPCC, tpcc
from tpcc_contract.ycsb.properties import resolve
from tpcc_runner.drivers.base import ConnectionOptions
from tpcc_runner.drivers.voltdb import STRING, VARBINARY
from tpcc_runner.ycsb.ledger import parse_ledgers
from tpcc_runner.ycsb.store import make_store
from voltdb_server import start_voltdb, voltdb_cluster  # noqa: F401  (fixture)

pytestmark = pytest.mark.db

RECORDS, DURATION = 2000, 40
WORKLOAD = [
    "-p",
    f"recordcount={RECORDS}",
    "-p",
    "fieldcount=4",
    "-p",
    "fieldlength=20",
    "-p",
    "requestdistribution=uniform",
    "-p",
    "readproportion=0.5",
    "-p",
    "updateproportion=0.3",
    "-p",
    "insertproportion=0.2",
]
# (seconds after the start, action): node 1 dies mid-run and rejoins before the end
SCHEDULE = [(10, "kill-node"), (20, "restart-node")]


def _verify(common: list[str], ledgers: list[str]):
    done = tpcc("ycsb", "verify", *common, *WORKLOAD, *[a for path in ledgers for a in ("--ledger", path)])
    return done, json.loads(done.stdout)


def test_a_node_killed_during_a_ycsb_run_loses_no_acknowledged_write_and_a_real_loss_fails(voltdb_cluster, tmp_path):
    endpoints = ",".join(voltdb_cluster.endpoints)
    common = ["--db", "voltdb", "--endpoints", endpoints, "--metrics-port", "0", "--connect-timeout", "20"]
    load_ledger, run_ledger, results = tmp_path / "load.log", tmp_path / "run.log", tmp_path / "run.json"
    loaded = tpcc(
        "ycsb",
        "load",
        *common,
        *WORKLOAD,
        "--reset",
        "--threads",
        "2",
        "-p",
        "batchsize=100",
        "--ledger",
        str(load_ledger),
    )
    assert loaded.code == 0, loaded.stderr
    start = time.time()
    run = subprocess.Popen(
        [
            *TPCC,
            "ycsb",
            "run",
            *common,
            *WORKLOAD,
            "-p",
            "operationcount=0",
            # each client process pipelines its threads' operations over a connection to every
            # node (ycsb/pipelined.py), so some are in flight on the victim's when it dies
            "--threads",
            "12",
            "--duration",
            str(DURATION),
            "--seed",
            "7",
            "--ledger",
            str(run_ledger),
            "--results",
            str(results),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    for at, action in SCHEDULE:
        time.sleep(max(0.0, start + at - time.time()))
        getattr(voltdb_cluster, action.replace("-", "_"))(1)
    out, err = run.communicate(timeout=DURATION + 300)
    assert run.returncode == 0, err[-3000:]
    doc = json.loads(results.read_text())
    assert doc["driver"]["client_loop"] == "pipelined, compiled"  # voltdb_compiled.py's loop lived through it
    inserts = doc["operations"]["INSERT"]["Return"]
    print("ycsb failover:", {name: m["Return"] for name, m in doc["operations"].items()})
    assert inserts["OK"] > 100 and doc["operations"]["UPDATE"]["Return"]["OK"] > 100
    assert doc["errors"] > 0  # the kill was felt: operations on the dead node's connections failed

    done, verdict = _verify(common, [str(load_ledger), str(run_ledger)])
    print("ycsb failover verdict:", verdict)
    assert done.code == 0 and verdict["durable"], verdict
    assert verdict["lost"] == 0 and verdict["acknowledged_inserts"] == RECORDS + inserts["OK"]
    expected = verdict["expected_records"]
    low, high = (expected, expected) if isinstance(expected, int) else expected
    assert low == RECORDS + inserts["OK"] and low <= verdict["records"] <= high

    # Now the database loses acknowledged writes: the verdict must see it though the count adds up.
    writes = parse_ledgers({"run": run_ledger.read_text().splitlines()})
    lost_insert = sorted(writes.inserted)[0]
    lost_update, reverted = sorted(set(writes.updated) - writes.inserted)[:2]
    reverted_field = sorted(writes.updated[reverted])[0]
    props = resolve(None, {"recordcount": str(RECORDS), "fieldcount": "4", "fieldlength": "20"})
    store = make_store("voltdb", ConnectionOptions(endpoints=endpoints.split(","), connect_timeout=20), props)
    store.connect()
    try:
        for key in (lost_insert, lost_update):
            store.driver._sql("DELETE FROM usertable WHERE ycsb_key = ?;", (STRING, key), writes=True)
        # an update lost while its record stays: the field holds a value no update wrote
        store.driver._sql(
            "UPDATE usertable SET field_value = ? WHERE ycsb_key = ? AND field = ?;",
            (VARBINARY, b"z" * 20),
            (STRING, reverted),
            (STRING, reverted_field),
            writes=True,
        )
        for n in range(2):  # as many strays as losses: the record count alone would not notice
            store.insert(f"stray{n}", {f"field{i}": b"x" * 20 for i in range(4)})
    finally:
        store.close()
    done, verdict = _verify(common, [str(load_ledger), str(run_ledger)])
    # the updated record was also the load's acknowledged insert: four acknowledged writes gone
    assert done.code == 1 and not verdict["durable"] and verdict["lost"] == 4, verdict
    assert sorted(verdict["lost_examples"]) == sorted(
        [
            f"insert of {lost_insert}: no record",
            f"insert of {lost_update}: no record",
            f"update of {lost_update}: no record",
            f"update of {reverted}: {reverted_field} holds a value no update wrote",
        ]
    )
    assert low <= verdict["records"] <= high  # the record count alone would have passed it


@pytest.fixture(scope="module")
def one_node(tmp_path_factory):
    """A VoltDB node of its own with k=0 (the session's shared one must keep its data)."""
    server = start_voltdb(tmp_path_factory.mktemp("voltdb-k0"), 1, 0)
    yield server
    server.script("stop")


def test_a_k0_node_restarted_empty_fails_the_ycsb_verdict_with_every_write_lost(one_node, tmp_path):
    common = [
        "--db",
        "voltdb",
        "--endpoints",
        ",".join(one_node.endpoints),
        "--metrics-port",
        "0",
        "--connect-timeout",
        "20",
    ]
    load_ledger, run_ledger = tmp_path / "load.log", tmp_path / "run.log"
    loaded = tpcc(
        "ycsb",
        "load",
        *common,
        *WORKLOAD,
        "--reset",
        "--threads",
        "2",
        "-p",
        "batchsize=100",
        "--ledger",
        str(load_ledger),
    )
    assert loaded.code == 0, loaded.stderr
    ran = tpcc(
        "ycsb",
        "run",
        *common,
        *WORKLOAD,
        "-p",
        "operationcount=0",
        "--threads",
        "2",
        "--duration",
        "4",
        "--ledger",
        str(run_ledger),
    )
    assert ran.code == 0, ran.stderr
    ledgers = [str(load_ledger), str(run_ledger)]
    done, before = _verify(common, ledgers)
    assert done.code == 0 and before["durable"], before
    one_node.kill_node(0)
    one_node.restart_node(0)  # no command log, no snapshot: it starts without schema or records
    done, after = _verify(common, ledgers)
    print("k=0 node restarted:", after)
    assert done.code == 1 and not after["durable"] and after["records"] == 0
    acknowledged = before["acknowledged_inserts"] + before["acknowledged_updates"]
    assert after["lost"] == acknowledged > RECORDS
    assert all(example.endswith(": no table") for example in after["lost_examples"])
