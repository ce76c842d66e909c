"""`tpcc acid` against a real VoltDB 10.1.1: every test passes with the stored procedures (the
second transaction waits for the held one: serial execution per partition), and fails, with its
evidence, once each step is its own call (acid/voltdb.py's test-only weaken=separate-calls)."""

from __future__ import annotations

import random

import pytest
from cli_helpers import tpcc
from tpcc_runner.acid.clause3 import FAILED, TESTS
from tpcc_runner.acid.command import make_adapter, run_tests
from tpcc_runner.acid.voltdb import PROCEDURES
from tpcc_runner.drivers.base import ConnectionOptions
from voltdb_server import start_voltdb, voltdb  # noqa: F401  (pytest fixture)

SCALE = ["--warehouses", "1", "--items", "200", "--customers-per-district", "60"]


@pytest.fixture(scope="module")
def loaded(voltdb):
    load(voltdb)
    return voltdb


def procedures(server) -> set[str]:
    adapter = make_adapter("voltdb", ConnectionOptions(endpoints=server.endpoints))
    adapter.reader.connect()
    try:
        return adapter.reader._catalog("PROCEDURES", 2)
    finally:
        adapter.reader.close()


def test_every_acid_test_passes_with_the_second_transaction_waiting(loaded, tmp_path):
    out = tmp_path / "acid.json"
    done = tpcc(
        "acid",
        "--db",
        "voltdb",
        "--endpoints",
        loaded.endpoints[0],
        "--results",
        str(out),
        "--seed",
        "5",
        "--metrics-port",
        "0",
    )
    doc = done.json()
    assert done.code == 0, [(t["test"], t["reason"]) for t in doc["tests"] if t["status"] != "passed"]
    assert out.read_text().strip() == done.stdout.strip()
    assert doc["counts"] == {"passed": 11, "failed": 0, "not-applicable": 0, "error": 0}
    reasons = {t["test"]: t["reason"] for t in doc["tests"]}
    assert all(reasons[f"isolation{i}"].startswith("T2 waited for T1") for i in (1, 2, 3, 4, 5, 6, 8, 9))
    assert reasons["isolation7"].startswith("case A (T3 waited for T2)")
    assert "this shows serial execution, not locks" in reasons["isolation3"]
    assert reasons["consistency"].startswith("the 12 conditions held in one read while")
    # the test procedures are gone again, so a later `tpcc load --reset` can drop the tables
    assert not {name.lower() for name in PROCEDURES} & procedures(loaded)


def load(server, *options: str) -> None:
    done = tpcc(
        "load",
        "--db",
        "voltdb",
        "--endpoints",
        server.endpoints[0],
        *options,
        *SCALE,
        "--workers",
        "1",
        "--reset",
        "--seed",
        "3",
        "--metrics-port",
        "0",
    )
    assert done.code == 0, done.stderr


@pytest.mark.parametrize("partitioning", ["district", "d_id"])
def test_every_acid_test_passes_under_the_other_partitioning_layouts(loaded, tmp_path, partitioning):
    """Under district and d_id a home warehouse's rows are not in one w_id partition, so the test
    procedures run multi-partition: still serial, still all eleven tests passing (declared
    single-partition on w_id they would read only the rows that partition holds). Before the
    weakened tests: their procedures stay in the catalog until the module ends, and a reload
    that drops the tables cannot replan them."""
    option = ["--driver-opt", f"partitioning={partitioning}"]
    load(loaded, *option)
    try:
        done = tpcc(
            "acid",
            "--db",
            "voltdb",
            "--endpoints",
            loaded.endpoints[0],
            *option,
            "--results",
            str(tmp_path / "acid.json"),
            "--seed",
            "5",
            "--metrics-port",
            "0",
        )
        doc = done.json()
        failed = [(t["test"], t["reason"]) for t in doc["tests"] if t["status"] != "passed"]
        assert done.code == 0, failed
        assert doc["counts"] == {"passed": 11, "failed": 0, "not-applicable": 0, "error": 0}
    finally:
        load(loaded)  # the default layout again, for the module's other tests


@pytest.fixture(scope="module")
def weakened(loaded):
    adapter = make_adapter("voltdb", ConnectionOptions(endpoints=loaded.endpoints), weaken="separate-calls")
    adapter.connect()
    try:
        # consistency first: the weakened transaction tests leave the database inconsistent
        order = ["consistency", *(t for t in TESTS if t != "consistency")]
        yield {v.test: v for v in run_tests(adapter, order, random.Random(11))}
    finally:
        adapter.close()


@pytest.mark.parametrize("test", TESTS)
def test_each_test_fails_with_evidence_when_each_step_is_its_own_call(weakened, test):
    verdict = weakened[test]
    assert verdict.status == FAILED, verdict
    assert any(
        p in verdict.reason
        for p in (
            "dirty read",
            "dirty write",
            "non-repeatable read",
            "phantom",
            "rolled-back Payment changed",
            "condition 1 violated",
        )
    )
    assert verdict.reason.endswith("(weakened adapter, tests only: every step its own call, so its own transaction)")


def test_the_weakened_check_fails_because_a_payment_fell_between_its_two_reads(weakened):
    verdict = weakened["consistency"]
    # W_YTD read before the Payment, D_YTD and HISTORY after it
    assert {1, 8} <= set(verdict.observed["violated"]), verdict
    assert verdict.reason.startswith("condition 1 violated: warehouse 1: W_YTD=")


@pytest.fixture(scope="module")
def secured(tmp_path_factory):
    """VoltDB with security on: an administrator loads, a plain user (SQL and procedures) tests."""
    server = start_voltdb(
        tmp_path_factory.mktemp("voltdb-secured"), 1, 0, "--users", "admin:adm1:administrator,tester:t1:user"
    )
    yield server
    server.script("stop")


def test_a_user_who_may_not_add_the_test_procedures_gets_not_applicable_with_the_reason(secured):
    as_admin = {"TPCC_DB_USERNAME": "admin", "TPCC_DB_PASSWORD": "adm1"}
    done = tpcc(
        "load",
        "--db",
        "voltdb",
        "--endpoints",
        secured.endpoints[0],
        *SCALE,
        "--workers",
        "1",
        "--reset",
        "--seed",
        "3",
        "--metrics-port",
        "0",
        env=as_admin,
    )
    assert done.code == 0, done.stderr
    done = tpcc(
        "acid",
        "--db",
        "voltdb",
        "--endpoints",
        secured.endpoints[0],
        "--seed",
        "5",
        "--metrics-port",
        "0",
        env={"TPCC_DB_USERNAME": "tester", "TPCC_DB_PASSWORD": "t1"},
    )
    doc = done.json()
    assert done.code == 0 and doc["counts"] == {"passed": 0, "failed": 0, "not-applicable": 11, "error": 0}
    assert all(
        t["reason"].startswith(
            "not permitted for this user: @UpdateClasses: User tester does not have admin permission"
        )
        and "the administrator role" in t["reason"]
        for t in doc["tests"]
    )
    # the same database as its administrator: the tests run
    done = tpcc(
        "acid",
        "--db",
        "voltdb",
        "--endpoints",
        secured.endpoints[0],
        "--tests",
        "atomicity",
        "--metrics-port",
        "0",
        env=as_admin,
    )
    assert done.code == 0 and done.json()["counts"]["passed"] == 1, done.stderr
