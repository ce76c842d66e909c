"""The `tpcc` command line end to end against real servers: load, check, run, check,
ledger, a corrupted row, an interrupted and resumed load."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pymongo
import pytest
from cli_helpers import TPCC, tpcc
from secantus_server import own_secantus, secantus  # noqa: F401  (fixtures)
from tpcc_runner.schema import TABLES
from voltdb_server import voltdb  # noqa: F401  (fixture)
from voltdbclient import FastSerializer, VoltProcedure

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from overhead import every_process  # noqa: E402  (the bench scripts' /proc reader)

pytestmark = pytest.mark.db


@dataclass
class Target:
    db: str
    endpoint: str
    warehouses: int
    scale: list[str]
    clients: int
    duration: int
    driver_opts: list[str]
    sql: Callable[[str], int]  # count query / update on the real server
    count_orders: Callable[[], int]
    corrupt: Callable[[], None]  # breaks clause 3.3.2.1 (W_YTD = sum(D_YTD)) on w 1

    def args(self) -> list[str]:
        return [
            "--db",
            self.db,
            "--endpoints",
            self.endpoint,
            "--metrics-port",
            "0",
            *[a for o in self.driver_opts for a in ("--driver-opt", o)],
        ]


def _volt_target(endpoint: str) -> Target:
    host, port = endpoint.rsplit(":", 1)

    def adhoc(sql: str) -> int:
        client = FastSerializer(host, int(port))
        try:
            resp = VoltProcedure(client, "@AdHoc", [FastSerializer.VOLTTYPE_STRING]).call([sql])
            assert resp.status == 1, resp.statusString
            return resp.tables[0].tuples[0][0]
        finally:
            client.close()

    return Target(
        "voltdb",
        endpoint,
        2,
        ["--items", "5000", "--customers-per-district", "300"],
        4,
        20,
        [],
        adhoc,
        lambda: adhoc("SELECT COUNT(*) FROM orders"),
        lambda: adhoc("UPDATE district SET d_ytd = d_ytd + 1 WHERE d_w_id = 1 AND d_id = 1"),
    )


def _mongo_target(endpoint: str, schema: str) -> Target:
    def db():
        return pymongo.MongoClient(f"mongodb://{endpoint}/?directConnection=true")["tpcc"]

    def corrupt() -> None:
        db().district.update_one({"d_w_id": 1, "d_id": 1}, {"$inc": {"d_ytd": 1.0}})

    def count_orders() -> int:
        if schema == "embedded":  # the orders are arrays of the customer documents
            return sum(len(c["orders"]) for c in db().customer.find({}, {"orders.o_id": 1}))
        return db().orders.count_documents({})

    return Target(
        "mongodb",
        endpoint,
        2,
        ["--items", "1000", "--customers-per-district", "30"],
        2,
        20,
        [f"schema={schema}"],
        None,
        count_orders,
        corrupt,
    )


@pytest.fixture(scope="module", params=["voltdb", "mongodb-normalized", "mongodb-denormalized", "mongodb-embedded"])
def target(request) -> Target:
    if request.param == "voltdb":
        return _volt_target(request.getfixturevalue("voltdb").endpoints[0])
    return _mongo_target(request.getfixturevalue("secantus").endpoint, request.param.split("-")[1])


@pytest.fixture(scope="module")
def loaded(target: Target):
    done = tpcc(
        "load", *target.args(), "--warehouses", str(target.warehouses), "--workers", "2", "--reset", *target.scale
    )
    assert done.code == 0, done.stderr
    return done.json()


def test_load_reports_the_population(target, loaded):
    scale = dict(zip(target.scale[::2], map(int, target.scale[1::2])))
    items, customers = scale["--items"], scale["--customers-per-district"]
    w = target.warehouses
    assert loaded["meta"]["complete"] is True
    assert loaded["meta"]["warehouses"] == w
    assert loaded["rows"] > items + w * (items + 10 * customers * 3)
    assert target.count_orders() == w * 10 * customers
    assert loaded["rows_per_second"] > 0


def test_a_database_with_tpcc_data_is_left_alone_with_refuse_existing(target, loaded):
    """A user's own database: without --reset the load must not touch an existing load."""
    orders = target.count_orders()
    refused = tpcc("load", *target.args(), "--warehouses", "1", "--workers", "1", "--refuse-existing", *target.scale)
    assert refused.code == 1, refused.stderr
    assert "already holds TPC-C data (2 warehouses" in refused.stderr
    assert "workload.resetBeforeLoad: true" in refused.stderr
    assert target.count_orders() == orders
    assert tpcc("check", *target.args()).code == 0


def test_all_12_conditions_hold_after_load(target, loaded):
    done = tpcc("check", *target.args())
    assert done.code == 0, done.stderr
    out = done.json()
    assert out["passed"] and [c["number"] for c in out["conditions"]] == list(range(1, 13))


def test_run_commits_keeps_the_mix_and_leaves_no_trace_of_rollbacks(target, loaded, tmp_path):
    ledger, results = tmp_path / "ledger", tmp_path / "results.json"
    before = target.count_orders()
    done = tpcc(
        "run",
        *target.args(),
        "--warehouses",
        str(target.warehouses),
        "--clients",
        str(target.clients),
        "--duration",
        str(target.duration),
        "--warmup",
        "2",
        "--ledger",
        str(ledger),
        "--results",
        str(results),
        "--check",
        timeout=target.duration + 300,
    )
    assert done.code == 0, done.stderr
    doc = json.loads(results.read_text())
    assert doc == done.json()
    assert doc["tpmC"] > 0
    assert doc["consistency"]["passed"], doc["consistency"]
    # condition 11 counted the orders this run delivered from its acknowledged Deliveries,
    # not from ORDERS (each Delivery delivers at most one order per district)
    assert sum(doc["deliveries"].values()) > 0
    condition_11 = doc["consistency"]["conditions"][10]
    assert condition_11["number"] == 11 and "acknowledged Deliveries" in condition_11["note"], condition_11
    tx = doc["transactions"]
    executed = sum(t["executed"] for t in tx.values())
    for name, pct in zip(["NEW_ORDER", "PAYMENT", "ORDER_STATUS", "DELIVERY", "STOCK_LEVEL"], [45, 43, 4, 4, 4]):
        # the deck keeps every 100 draws exact; each client's partial deck drifts: the cards of one
        # type in its first k draws are hypergeometric, sd at most 2.5 cards: 3 sd per client
        slack = 1.0 if executed >= 2000 else 100.0 * target.clients * 8 / executed
        assert abs(tx[name]["mix_percent"] - pct) <= slack, (name, tx[name]["mix_percent"], executed)
        assert tx[name]["errors"] == 0 and tx[name]["unknown"] == 0
    assert doc["c_constants"]["run"]["c_last"] != doc["c_constants"]["load"]["c_last"]
    assert all(t["latency_ms"]["p99"] >= t["latency_ms"]["p50"] > 0 for t in tx.values())
    # Every acknowledged NewOrder is in the database, and nothing else is: the 1% that
    # rolled back left no order behind.
    acked = sum(1 for line in ledger.read_text().splitlines() if line.startswith("ack "))
    assert target.count_orders() - before == acked
    if executed >= 2000:
        assert tx["NEW_ORDER"]["rollbacks"] > 0
    verified = tpcc("verify-ledger", *target.args(), "--ledger", str(ledger))
    assert verified.code == 0, verified.stderr
    assert verified.json()["lost"] == 0 and verified.json()["acknowledged"] == acked
    assert "tpmC" in done.stderr and "NEW_ORDER" in done.stderr  # the human summary


def test_a_paced_run_holds_its_target_rate(target, loaded):
    """--target-tps: the run's rate is the target's, not the database's limit (this VoltDB runs
    well over a thousand transactions a second back to back here)."""
    if target.db != "voltdb":
        pytest.skip("the MongoDB test server commits a few transactions a second, below the rate tested")
    done = tpcc(
        "run",
        *target.args(),
        "--warehouses",
        str(target.warehouses),
        "--clients",
        "4",
        "--duration",
        "10",
        "--warmup",
        "2",
        "--target-tps",
        "80",
        timeout=300,
    )
    assert done.code == 0, done.stderr
    doc = done.json()
    # committed a second over the measured window; the 1 % of NewOrders that roll back are not
    assert 0.9 * 80 <= doc["transactions_per_second"] <= 1.03 * 80, doc["transactions_per_second"]
    assert doc["options"]["target_tps"] == 80
    assert "terminals submit at a fixed rate, 80 transactions a second over all terminals" in doc["spec_deviations"][0]


def test_a_corrupted_row_fails_check(target, loaded):
    target.corrupt()
    done = tpcc("check", *target.args())
    assert done.code == 1
    violated = done.json()["violated"]
    assert 1 in violated and 9 in violated
    assert "FAIL 3.3.2.1 " in done.stderr and "e.g." in done.stderr


def _metric(port: int, name: str) -> float:
    try:
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2).read().decode()
    except OSError:
        return 0.0
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return 0.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_interrupted_load_is_refused_by_run_and_resumes_without_duplicates(voltdb):
    t = _volt_target(voltdb.endpoints[0])
    port = _free_port()
    args = [
        "--db",
        "voltdb",
        "--endpoints",
        t.endpoint,
        "--warehouses",
        "2",
        "--workers",
        "1",
        "--items",
        "20000",
        "--customers-per-district",
        "1000",
    ]
    proc = subprocess.Popen(
        [*TPCC, "load", *args, "--reset", "--metrics-port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.time() + 120
    while _metric(port, "tpcc_load_units_done") < 3 and time.time() < deadline:
        assert proc.poll() is None, proc.stderr.read()
        time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    refused = tpcc(
        "run",
        "--db",
        "voltdb",
        "--endpoints",
        t.endpoint,
        "--metrics-port",
        "0",
        "--warehouses",
        "2",
        "--duration",
        "5",
    )
    assert refused.code == 1 and "incomplete" in refused.stderr, refused.stderr
    resumed = tpcc("load", *args, "--metrics-port", "0")
    assert resumed.code == 0, resumed.stderr
    in_database = sum(t.sql(f"SELECT COUNT(*) FROM {table}") for table in TABLES)
    assert 0 < resumed.json()["rows"] < in_database  # the units done before the kill were skipped
    assert t.count_orders() == 2 * 10 * 1000
    assert t.sql("SELECT COUNT(*) FROM stock") == 2 * 20000
    assert t.sql("SELECT COUNT(*) FROM item") == 20000
    assert tpcc("check", "--db", "voltdb", "--endpoints", t.endpoint, "--metrics-port", "0").code == 0


def test_mongodb_driver_options_appear_in_the_results(secantus, tmp_path):
    """Every option the studies compared, set away from its default, is in the results
    document twice: as written (options.driver_options) and as the driver applied it; and the
    retry wait of py-tpcc's that the MongoDB studies' manifests ask for (options.retry_wait)."""
    studied = {
        "schema": "normalized",
        "find_and_modify": "false",
        "batch_writes": "false",
        "read_concern": "snapshot",
        "write_concern": "1",
        "read_preference": "primaryPreferred",
        "causal": "true",
        "retry_writes": "false",
        "database": "tpcc_options",
    }
    target = Target(
        "mongodb",
        secantus.endpoint,
        1,
        ["--items", "1000", "--customers-per-district", "30"],
        1,
        3,
        [f"{k}={v}" for k, v in studied.items()],
        None,
        lambda: 0,
        lambda: None,
    )
    done = tpcc("load", *target.args(), "--warehouses", "1", "--workers", "1", "--reset", *target.scale)
    assert done.code == 0, done.stderr
    results = tmp_path / "results.json"
    done = tpcc(
        "run",
        *target.args(),
        "--warehouses",
        "1",
        "--clients",
        "1",
        "--duration",
        "3",
        "--warmup",
        "0",
        "--retry-wait",
        "pytpcc",
        "--results",
        str(results),
        timeout=300,
    )
    assert done.code == 0, done.stderr
    options = json.loads(results.read_text())["options"]
    assert options["driver_options"] == studied
    assert options["retry_wait"] == "pytpcc"
    applied = options["driver"]
    assert {
        k: applied[k]
        for k in (
            "schema_variant",
            "find_and_modify",
            "batch_writes",
            "read_concern",
            "write_concern",
            "read_preference",
            "causal_consistency",
            "retry_writes",
            "database",
            "topology",
        )
    } == {
        "schema_variant": "normalized",
        "find_and_modify": False,
        "batch_writes": False,
        "read_concern": "snapshot",
        "write_concern": 1,
        "read_preference": "primaryPreferred",
        "causal_consistency": True,
        "retry_writes": False,
        "database": "tpcc_options",
        "topology": "replica_set",
    }


@pytest.fixture(params=["voltdb", "mongodb"])
def killable(request) -> Target:
    """A loaded database of the test's own: the killed runner's transactions the server aborts
    (or, for a while, holds open) must not reach any other test."""
    if request.param == "voltdb":
        target = _volt_target(request.getfixturevalue("voltdb").endpoints[0])
    else:
        target = _mongo_target(request.getfixturevalue("own_secantus").endpoint, "denormalized")
    done = tpcc(
        "load",
        *target.args(),
        "--warehouses",
        "1",
        "--workers",
        "1",
        "--reset",
        "--items",
        "1000",
        "--customers-per-district",
        "30",
    )
    assert done.code == 0, done.stderr
    return target


def test_runner_processes_killed_mid_run_leave_no_partial_transaction(killable):
    """Every runner process SIGKILLed while its terminals are in transactions (clause 3.2.2's
    atomicity under a client crash): whatever was in flight is all or nothing, so the 12
    conditions still hold over every order touched (condition 11 from ORDERS itself: the
    killed run's acknowledged Deliveries died with it)."""
    target = killable
    run = subprocess.Popen(
        [*TPCC, "run", *target.args(), "--warehouses", "1", "--clients", "2", "--duration", "120", "--warmup", "1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    before = target.count_orders()
    deadline = time.time() + 120
    while target.count_orders() < before + 20 and time.time() < deadline and run.poll() is None:
        time.sleep(0.5)  # until the terminals are committing
    assert run.poll() is None, run.stderr.read()
    os.killpg(run.pid, signal.SIGKILL)
    run.wait(30)
    assert run.returncode == -signal.SIGKILL
    done = tpcc("check", *target.args(), "--warehouses", "1")
    assert done.code == 0, done.stdout + done.stderr
    assert done.json()["passed"] and target.count_orders() >= before + 20


def _procedure_calls(endpoint: str) -> dict[str, int]:
    """Invocations of each procedure since the server started (VoltDB's @Statistics PROCEDURE)."""
    host, port = endpoint.rsplit(":", 1)
    client = FastSerializer(host, int(port))
    try:
        resp = VoltProcedure(
            client, "@Statistics", [FastSerializer.VOLTTYPE_STRING, FastSerializer.VOLTTYPE_INTEGER]
        ).call(["PROCEDURE", 0])
        assert resp.status == 1, resp.statusString
        table = resp.tables[0]
        names = [c.name.upper() for c in table.columns]
        proc, calls = names.index("PROCEDURE"), names.index("INVOCATIONS")
        out: dict[str, int] = {}
        for row in table.tuples:
            name = row[proc].rsplit(".", 1)[-1]
            out[name] = out.get(name, 0) + row[calls]
        return out
    finally:
        client.close()


@pytest.mark.parametrize(
    "delivery, partitioning",
    [("per-district", "warehouse"), ("per-warehouse", "district"), ("per-district", "district")],
)
def test_voltdb_delivery_and_partitioning_variants_run_check_and_count_one_delivery_each(
    voltdb, tmp_path, delivery, partitioning
):
    """The VoltDB study's variants: Delivery split per district (every Delivery ten
    DeliveryDistrict transactions on the server, counted once in the results, the mix holds) and
    tables partitioned by district; each loads, runs, names its mode in the results, and keeps
    the 12 conditions after the run, condition 11 from the runners' acknowledged Deliveries."""
    target = _volt_target(voltdb.endpoints[0])
    target.driver_opts = [f"delivery={delivery}", f"partitioning={partitioning}"]
    done = tpcc(
        "load",
        *target.args(),
        "--warehouses",
        "1",
        "--workers",
        "1",
        "--reset",
        "--items",
        "1000",
        "--customers-per-district",
        "30",
    )
    assert done.code == 0, done.stderr
    before = _procedure_calls(target.endpoint)
    results = tmp_path / "results.json"
    done = tpcc(
        "run",
        *target.args(),
        "--warehouses",
        "1",
        "--clients",
        "2",
        "--duration",
        "15",
        "--warmup",
        "1",
        "--results",
        str(results),
        "--check",
        timeout=300,
    )
    assert done.code == 0, done.stderr
    doc = json.loads(results.read_text())
    after = _procedure_calls(target.endpoint)
    assert (doc["options"]["driver"]["delivery"], doc["options"]["driver"]["partitioning"]) == (delivery, partitioning)
    assert doc["options"]["driver_options"] == {"delivery": delivery, "partitioning": partitioning}
    assert doc["consistency"]["passed"], doc["consistency"]
    # the server's count of Deliveries is its DeliveryDistrict calls over ten in per-district mode
    assert doc["server_agreement"]["verdict"] == "agree", doc["server_agreement"]
    tx = doc["transactions"]
    executed = sum(t["executed"] for t in tx.values())
    assert tx["DELIVERY"]["committed"] > 0 and all(t["errors"] == 0 for t in tx.values()), tx
    assert abs(tx["DELIVERY"]["mix_percent"] - 4) <= 100.0 * 2 * 8 / executed

    def calls(name: str) -> int:
        return after.get(name, 0) - before.get(name, 0)

    if delivery == "per-district":  # ten single-district transactions per Delivery, no whole one
        assert calls("DeliveryDistrict") % 10 == 0 and calls("Delivery") == 0
        assert calls("DeliveryDistrict") >= 10 * tx["DELIVERY"]["committed"]
    else:
        assert calls("DeliveryDistrict") == 0 and calls("Delivery") >= tx["DELIVERY"]["committed"]
    if partitioning == "district":  # NewOrder and Payment always multi-partition
        assert calls("NewOrder") == calls("Payment") == 0
        assert calls("NewOrderMP") >= tx["NEW_ORDER"]["executed"] and calls("PaymentMP") >= tx["PAYMENT"]["executed"]
    else:
        assert calls("NewOrder") > calls("NewOrderMP")
    checked = tpcc("check", *target.args(), "--warehouses", "1", "--deliveries", str(results))
    assert checked.code == 0, checked.stdout + checked.stderr
    assert "acknowledged Deliveries" in checked.json()["conditions"][10]["note"]
    other = "warehouse" if partitioning == "district" else "district"
    refused = tpcc(
        "run",
        "--db",
        "voltdb",
        "--endpoints",
        target.endpoint,
        "--metrics-port",
        "0",
        "--driver-opt",
        f"partitioning={other}",
        "--warehouses",
        "1",
        "--clients",
        "1",
        "--duration",
        "2",
    )
    assert refused.code != 0 and "the database was loaded with schema" in refused.stderr, refused.stderr


def _live_members(group: int) -> list[int]:
    """The processes of a process group that have not ended (a zombie has)."""
    return [pid for pid, f in every_process() if int(f[2]) == group and f[0] != "Z"]  # state, ppid, pgrp


def _killed_alone(args: list[str], children: int, sig: signal.Signals) -> tuple[int, str]:
    """Start `tpcc ARGS` in a group of its own, wait until its `children` processes (workers,
    and their fork server where there is one) are there and working, send `sig` to the runner's
    process alone (as `kill PID`, `timeout` or the kubelet does), and return its exit code and
    its group's stderr once every process of the group has ended; fail if one is still there
    10 s after the runner ended."""
    run = subprocess.Popen(
        [*TPCC, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        deadline = time.time() + 60
        while len(_live_members(run.pid)) < 1 + children and time.time() < deadline and run.poll() is None:
            time.sleep(0.2)
        time.sleep(2)  # the workers connected and at work
        assert run.poll() is None and len(_live_members(run.pid)) >= 1 + children, (
            run.stderr.read() if run.stderr else ""
        )
        os.kill(run.pid, sig)
        run.wait(10)
        deadline = time.time() + 10
        while _live_members(run.pid) and time.time() < deadline:
            time.sleep(0.2)
        assert not _live_members(run.pid), f"still running 10 s after the runner ended: {_live_members(run.pid)}"
        assert run.stderr is not None
        return run.returncode, run.stderr.read()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(run.pid, signal.SIGKILL)


def _volt_args(voltdb) -> list[str]:
    return ["--db", "voltdb", "--endpoints", voltdb.endpoints[0], "--metrics-port", "0"]


def test_a_runner_killed_alone_takes_its_client_processes_with_it(voltdb):
    """`tpcc run` ended by a signal sent to it alone: SIGTERM stops it as Ctrl-C does (exit
    143), and after a SIGKILL its client processes (forked from it as it started) end within
    seconds instead of running on against the database to the end of the run's 120 s."""
    scaled = ["--warehouses", "1", "--items", "1000", "--customers-per-district", "30"]
    assert (done := tpcc("load", *_volt_args(voltdb), *scaled, "--workers", "1", "--reset")).code == 0, done.stderr
    run = ["run", *_volt_args(voltdb), "--warehouses", "1", "--clients", "2", "--processes", "2", "--duration", "120"]
    code, stderr = _killed_alone(run, 2, signal.SIGTERM)
    assert code == 143 and "tpcc run: terminated (SIGTERM)" in stderr, stderr
    code, stderr = _killed_alone(run, 2, signal.SIGKILL)
    assert code == -signal.SIGKILL and stderr.count("has ended; so does this worker") == 2, stderr


def test_a_ycsb_run_and_a_load_killed_alone_take_their_workers_with_them(voltdb):
    """The same for `tpcc ycsb run`'s client processes and `tpcc load`'s workers (killed
    mid-load)."""
    props = ["-p", "recordcount=1000", "-p", "fieldcount=4", "-p", "fieldlength=20"]
    ycsb = ["ycsb", "load", *_volt_args(voltdb), "--reset", *props]
    assert (done := tpcc(*ycsb)).code == 0, done.stderr
    run = ["ycsb", "run", *_volt_args(voltdb), "--workload", "a", "--threads", "2", "--processes", "2"]
    _, stderr = _killed_alone([*run, *props, "--duration", "120", "-p", "operationcount=0"], 3, signal.SIGKILL)
    assert stderr.count("has ended; so does this worker") == 2, stderr
    # 10 warehouses: about 20 s of loading here, 2-3 s of which happen
    load = ["load", *_volt_args(voltdb), "--warehouses", "10", "--workers", "2", "--reset"]
    _, stderr = _killed_alone(load, 3, signal.SIGKILL)
    assert stderr.count("has ended; so does this worker") == 2, stderr
