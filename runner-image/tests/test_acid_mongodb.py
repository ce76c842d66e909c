"""`tpcc acid` against a real SecantusDB (MongoDB wire protocol, WiredTiger transactions): every
test passes with the driver as it is, and fails, with its evidence, once the driver is weakened
the way a real misconfiguration would (acid/mongodb.py's test-only `weaken=`)."""

from __future__ import annotations

import random

import pytest
from cli_helpers import tpcc
from secantus_server import secantus  # noqa: F401  (pytest fixture)
from tpcc_runner.acid.clause3 import FAILED, PASSED, TESTS
from tpcc_runner.acid.command import make_adapter, run_tests
from tpcc_runner.drivers.base import ConnectionOptions

# 60 customers per district leave 18 undelivered orders in each: enough for every Delivery here
SCALE = ["--warehouses", "1", "--items", "200", "--customers-per-district", "60"]
# what each weakening breaks: without transactions everything; reads outside the transaction
# only what needs a repeatable read (7) or no phantom (8, 9) -- its writes still conflict.
# The consistency test is run apart, on a database the weakened runs have not broken.
TRANSACTION_TESTS = [t for t in TESTS if t != "consistency"]
FAILS_WHEN_WEAKENED = {
    "no-transaction": set(TRANSACTION_TESTS),
    "reads-outside-transaction": {"isolation7", "isolation8", "isolation9"},
}


def driver_opts(server) -> list[str]:
    return [
        "--endpoints",
        server.endpoint,
        "--driver-opt",
        "replica_set=secantus",
        "--driver-opt",
        "database=acid",
        "--metrics-port",
        "0",
    ]


@pytest.fixture(scope="module")
def loaded(secantus):
    done = tpcc("load", "--db", "mongodb", *driver_opts(secantus), *SCALE, "--workers", "1", "--reset", "--seed", "3")
    assert done.code == 0, done.stderr
    return secantus


def test_every_acid_test_passes_on_the_real_server_and_is_written_as_json(loaded, tmp_path):
    out = tmp_path / "acid.json"
    done = tpcc("acid", "--db", "mongodb", *driver_opts(loaded), "--results", str(out), "--seed", "5")
    doc = done.json()
    assert done.code == 0, [(t["test"], t["reason"]) for t in doc["tests"] if t["status"] != PASSED]
    assert out.read_text().strip() == done.stdout.strip()
    assert [t["test"] for t in doc["tests"]] == list(TESTS)
    assert doc["counts"] == {"passed": 11, "failed": 0, "not-applicable": 0, "error": 0}
    reasons = {t["test"]: t["reason"] for t in doc["tests"]}
    # snapshot isolation: a second writer is rolled back, a reader does not wait
    assert reasons["isolation3"].startswith("T2 was rolled back by the database (mongodb: WriteConflict")
    assert reasons["isolation1"].startswith("T2 completed without waiting for T1")
    assert reasons["isolation7"].startswith("case D")


@pytest.fixture(scope="module", params=sorted(FAILS_WHEN_WEAKENED))
def weakened(request, loaded):
    options = ConnectionOptions(
        endpoints=[loaded.endpoint], connect_timeout=10, extra={"replica_set": "secantus", "database": "acid"}
    )
    adapter = make_adapter("mongodb", options, weaken=request.param)
    adapter.connect()
    yield request.param, {v.test: v for v in run_tests(adapter, TRANSACTION_TESTS, random.Random(11))}
    adapter.close()


@pytest.mark.parametrize("test", TRANSACTION_TESTS)
def test_each_test_fails_with_evidence_on_a_weakened_driver(weakened, test):
    weakening, verdicts = weakened
    verdict = verdicts[test]
    if test in FAILS_WHEN_WEAKENED[weakening]:
        assert verdict.status == FAILED, verdict
        assert any(
            p in verdict.reason
            for p in ("dirty read", "dirty write", "non-repeatable read", "phantom", "rolled-back Payment changed")
        )
    else:
        assert verdict.status == PASSED, verdict


def consistency_verdict(server, weaken: str | None):
    options = ConnectionOptions(
        endpoints=[server.endpoint],
        connect_timeout=10,
        extra={"replica_set": "secantus", "database": "acid_consistency"},
    )
    adapter = make_adapter("mongodb", options, weaken=weaken)
    adapter.connect()
    try:
        return run_tests(adapter, ["consistency"], random.Random(13))[0]
    finally:
        adapter.close()


def test_the_consistency_check_holds_in_one_snapshot_and_fails_read_statement_by_statement(secantus):
    done = tpcc(
        "load",
        "--db",
        "mongodb",
        *driver_opts(secantus)[:4],
        "--driver-opt",
        "database=acid_consistency",
        "--metrics-port",
        "0",
        *SCALE,
        "--workers",
        "1",
        "--reset",
        "--seed",
        "4",
    )
    assert done.code == 0, done.stderr
    verdict = consistency_verdict(secantus, None)
    assert verdict.status == PASSED and verdict.observed["concurrent"] >= 1, verdict
    for weaken in sorted(FAILS_WHEN_WEAKENED):
        verdict = consistency_verdict(secantus, weaken)
        # W_YTD read before the Payment that commits between the reads, D_YTD and HISTORY after it
        assert verdict.status == FAILED and {1, 8} <= set(verdict.observed["violated"]), verdict
        assert verdict.reason.startswith("condition 1 violated: warehouse 1: W_YTD=")
    # the weakened checks only read: the database is still consistent
    assert consistency_verdict(secantus, None).status == PASSED


def test_the_weakened_driver_is_named_in_its_description(loaded):
    options = ConnectionOptions(endpoints=[loaded.endpoint], extra={"replica_set": "secantus", "database": "acid"})
    adapter = make_adapter("mongodb", options, weaken="no-transaction")
    adapter.connect()
    try:
        assert adapter.describe()["weakened"] == "no-transaction"
        assert adapter.held.transactions is False and adapter.reader.transactions is True
    finally:
        adapter.close()
    with pytest.raises(ValueError, match="unknown weakening 'serial'"):
        make_adapter("mongodb", options, weaken="serial")


def test_every_acid_test_passes_with_orders_and_history_inside_the_customers(secantus):
    """schema=embedded: the judges read the orders and history where that schema keeps them."""
    opts = [
        "--endpoints",
        secantus.endpoint,
        "--driver-opt",
        "replica_set=secantus",
        "--driver-opt",
        "database=acid_embedded",
        "--driver-opt",
        "schema=embedded",
        "--metrics-port",
        "0",
    ]
    done = tpcc("load", "--db", "mongodb", *opts, *SCALE, "--workers", "1", "--reset", "--seed", "3")
    assert done.code == 0, done.stderr
    done = tpcc("acid", "--db", "mongodb", *opts, "--seed", "5")
    doc = done.json()
    assert done.code == 0, [(t["test"], t["reason"]) for t in doc["tests"] if t["status"] != PASSED]
    assert doc["counts"] == {"passed": 11, "failed": 0, "not-applicable": 0, "error": 0}
