"""`tpcc ycsb` with YCSB's TimeSeriesWorkload (the preset tsa, scaled down) against SecantusDB
(MongoDB wire protocol) and VoltDB 10.1.1: the load leaves one record per series key holding the
tags, timestamp and value of the last data point written to it, as YCSB's MongoDB binding does;
a run from two client processes (their own series keys each) inserts, updates and reads with no
error; the ledger's verification passes, and fails once a series' record holds a value no data
point wrote (a write lost under a surviving record)."""

from __future__ import annotations

import json
import struct

import pytest
from cli_helpers import tpcc
from secantus_server import secantus  # noqa: F401  (fixture)
from tpcc_contract.ycsb.properties import resolve
from tpcc_runner.drivers.base import ConnectionOptions
from tpcc_runner.ycsb.store import make_store
from tpcc_runner.ycsb.timeseries import TimeSeriesWorkload
from voltdb_server import voltdb  # noqa: F401  (fixture)

pytestmark = pytest.mark.db
SERVER_FIXTURE = {"mongodb": "secantus", "voltdb": "voltdb"}
START = 1700000000
# tsa with 8 series keys x 8 tag combinations = 64 series, 10 data points each on load
SCALED = {
    "recordcount": "640",
    "fieldcount": "8",
    "tagcardinality": "1,2,2,2",
    "insertstart": str(START),
    "batchsize": "25",
}
PROPERTIES = [arg for name, value in SCALED.items() for arg in ("-p", f"{name}={value}")]


@pytest.fixture(params=sorted(SERVER_FIXTURE))
def db(request) -> tuple[str, str]:
    server = request.getfixturevalue(SERVER_FIXTURE[request.param])
    endpoints = server.endpoint if request.param == "mongodb" else ",".join(server.endpoints)
    return request.param, endpoints


def ycsb(db, phase: str, *args: str) -> tuple[int, str, str]:
    name, endpoints = db
    done = tpcc(
        "ycsb", phase, "--db", name, "--endpoints", endpoints, "--metrics-port", "0", "--connect-timeout", "20",
        "--workload", "tsa", *PROPERTIES, *args, timeout=120,
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    return done.code, done.stdout, done.stderr


def test_timeseries_a_loads_runs_and_verifies(db, tmp_path):
    load_ledger, run_ledger = tmp_path / "load.log", tmp_path / "run.log"
    code, _, err = ycsb(
        db, "load", "--reset", "--threads", "2", "--ledger", str(load_ledger), "--results", str(tmp_path / "load.json")
    )
    loaded = json.loads((tmp_path / "load.json").read_text())
    assert code == 0 and loaded["errors"] == 0 and loaded["properties"]["workload"].endswith("TimeSeriesWorkload"), err
    props = resolve("tsa", SCALED)
    workload = TimeSeriesWorkload(props)
    store = make_store(db[0], ConnectionOptions(endpoints=db[1].split(","), connect_timeout=20), props)
    store.connect()
    try:
        assert store.count_records() == 8
        for key in workload.keys:
            record = store.read(key, None)
            assert record is not None and set(record) == {*workload.tag_keys, "YCSBTS", "YCSBV"}, key
            # the last data point a series key got: the 10th timestamp (delayed series lag behind)
            assert START + 9 * 60 - 5 * 60 <= struct.unpack(">q", record["YCSBTS"])[0] <= START + 9 * 60

        scanned = store.scan(sorted(workload.keys)[2], 3, None)  # rows or keys per record: its 6 fields
        assert [k for k, _ in scanned] == sorted(workload.keys)[2:5] and all(len(r) == 6 for _, r in scanned)

        mix = [
            "-p",
            "operationcount=1200",
            "-p",
            "readproportion=0.3",
            "-p",
            "insertproportion=0.6",
            "-p",
            "updateproportion=0.1",
        ]
        code, _, err = ycsb(
            db,
            "run",
            "--threads",
            "2",
            "--processes",
            "2",
            *mix,
            "--ledger",
            str(run_ledger),
            "--results",
            str(tmp_path / "run.json"),
        )
        ran = json.loads((tmp_path / "run.json").read_text())
        assert code == 0 and ran["errors"] == 0, err
        assert {op: set(r["Return"]) for op, r in ran["operations"].items()} == {
            "INSERT": {"OK"},
            "UPDATE": {"OK"},
            "READ": {"OK"},
        }
        assert sum(r["Operations"] for r in ran["operations"].values()) == 1200

        ledgers = ["--ledger", str(load_ledger), "--ledger", str(run_ledger)]
        code, out, err = ycsb(db, "verify", *ledgers)
        verdict = json.loads(out)
        assert code == 0 and verdict["durable"] and verdict["records"] == 8 == verdict["expected_records"], err
        assert verdict["acknowledged_updates"] == 8

        broken = workload.keys[3]
        assert store.update(broken, {"YCSBV": struct.pack(">d", -1.0)})  # no data point wrote a negative float
        code, out, _ = ycsb(db, "verify", *ledgers)
        verdict = json.loads(out)
        assert code == 1 and not verdict["durable"]
        assert verdict["lost_examples"] == [f"update of {broken}: YCSBV holds a value no update wrote"]
    finally:
        store.close()
