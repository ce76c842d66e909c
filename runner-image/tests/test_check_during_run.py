"""The consistency check after the load (`tpcc load --check`) and while transactions run
(`tpcc check --snapshot`) against real VoltDB and the MongoDB test server: each holds while
another client commits, and each is shown failing where it should (a damaged load; a check that
reads a warehouse statement by statement while a Payment commits between its reads)."""

from __future__ import annotations

import datetime as dt

import pytest
from cli_helpers import tpcc
from secantus_server import secantus  # noqa: F401  (pytest fixture)
from tpcc_runner.acid.clause3 import Pick
from tpcc_runner.acid.interleave import transactions_meanwhile
from tpcc_runner.drivers.base import ConnectionOptions
from tpcc_runner.drivers.mongodb import MongoDBDriver
from tpcc_runner.drivers.voltdb import DECIMAL, INTEGER, VoltDBDriver
from voltdb_server import voltdb  # noqa: F401  (pytest fixture)

pytestmark = pytest.mark.db

SCALE = ["--warehouses", "2", "--items", "200", "--customers-per-district", "60", "--workers", "1"]
ONE_PAYMENT = Pick(w_id=1, d_id=1, c_id=1, items=(1, 2, 3, 4, 5), unused_item=201, amount=1234)


def mongodb_opts(server) -> list[str]:
    return [
        "--endpoints",
        server.endpoint,
        "--driver-opt",
        "replica_set=secantus",
        "--driver-opt",
        "database=check_during_run",
        "--metrics-port",
        "0",
    ]


def voltdb_opts(server) -> list[str]:
    return ["--endpoints", server.endpoints[0], "--metrics-port", "0"]


@pytest.fixture(scope="module")
def loaded_voltdb(voltdb):
    done = tpcc("load", "--db", "voltdb", *voltdb_opts(voltdb), *SCALE, "--reset", "--seed", "7", "--check")
    assert done.code == 0, done.stderr
    assert done.json()["consistency"]["passed"] is True
    return voltdb


@pytest.fixture(scope="module")
def loaded_mongodb(secantus):
    done = tpcc("load", "--db", "mongodb", *mongodb_opts(secantus), *SCALE, "--reset", "--seed", "7", "--check")
    assert done.code == 0, done.stderr
    assert done.json()["consistency"]["passed"] is True
    return secantus


def test_a_snapshot_check_holds_on_voltdb_while_another_client_commits(loaded_voltdb):
    driver = VoltDBDriver(ConnectionOptions(endpoints=loaded_voltdb.endpoints))
    driver.connect()
    try:
        meta = driver.read_meta()
        with transactions_meanwhile(lambda: VoltDBDriver(driver.options), meta) as committed:
            # several reads, so the other client's transactions fall between and during them
            results = [r for _ in range(5) for r in driver.check_consistency([1, 2], snapshot=True)]
            during = committed[0]
    finally:
        driver.close()
    assert during >= 5 and all(r.passed for r in results), [r for r in results if not r.passed]


def test_the_check_command_reports_when_it_read(loaded_voltdb):
    before = dt.datetime.now(dt.timezone.utc)
    done = tpcc("check", "--db", "voltdb", *voltdb_opts(loaded_voltdb), "--snapshot")
    doc = done.json()
    assert done.code == 0 and doc["passed"] and doc["snapshot"] is True
    started, finished = (
        dt.datetime.fromisoformat(doc[k].replace("Z", "+00:00")) for k in ("started_at", "finished_at")
    )
    assert before <= started <= finished <= dt.datetime.now(dt.timezone.utc)


def _with_a_payment_after_the_warehouse_read(driver: MongoDBDriver, other: MongoDBDriver) -> list[int]:
    """Make the driver's check commit one Payment (on `other`) right after it read WAREHOUSE of
    warehouse 1, between that read and DISTRICT's; returns the list the Payment's c_id lands in."""
    paid: list[int] = []
    plain = driver._coll

    def coll(name: str):
        if name == "district" and not paid:
            paid.append(other.payment(ONE_PAYMENT.payment()).c_id)
        return plain(name)

    driver._coll = coll
    return paid


@pytest.mark.parametrize("snapshot", [True, False])
def test_on_mongodb_only_the_snapshot_check_holds_with_a_payment_between_its_reads(loaded_mongodb, snapshot):
    options = ConnectionOptions(
        endpoints=[loaded_mongodb.endpoint], extra={"replica_set": "secantus", "database": "check_during_run"}
    )
    driver, other = MongoDBDriver(options), MongoDBDriver(options)
    driver.connect()
    other.connect()
    try:
        paid = _with_a_payment_after_the_warehouse_read(driver, other)
        results = driver.check_consistency([1], snapshot=snapshot)
    finally:
        driver.close()
        other.close()
    violated = {r.number for r in results if not r.passed}
    assert paid, "the Payment was not made between the reads"
    if snapshot:
        assert not violated, [r for r in results if not r.passed]
    else:  # W_YTD read before the Payment; D_YTD and HISTORY after it
        assert {1, 8} <= violated


def test_load_check_fails_on_a_damaged_load(loaded_voltdb):
    driver = VoltDBDriver(ConnectionOptions(endpoints=loaded_voltdb.endpoints))
    driver.connect()
    try:
        ((ytd,),) = driver._sql("SELECT d_ytd FROM district WHERE d_w_id = 2 AND d_id = 3;")
        driver._sql(
            "UPDATE district SET d_ytd = ? WHERE d_w_id = ? AND d_id = 3;",
            (DECIMAL, ytd + 1),
            (INTEGER, 2),
            writes=True,
        )
    finally:
        driver.close()
    # the load is complete, so `load` only checks: a district's YTD off by a dollar breaks 1 and 9
    done = tpcc("load", "--db", "voltdb", *voltdb_opts(loaded_voltdb), *SCALE, "--seed", "7", "--check")
    assert done.code == 1, done.stderr
    assert {1, 9} <= set(done.json()["consistency"]["violated"])
