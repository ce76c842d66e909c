"""The error budget against a real database that refuses one transaction type: a VoltDB whose
Payment procedure was dropped (a schema change gone wrong) rejects every Payment. The runner
counts the errors and goes on, NewOrders commit and tpmC looks fine; the operator's judge of
the budget (workload.maxErrorPercent) must fail the run and name Payment alone."""

from __future__ import annotations

import pytest
from cli_helpers import tpcc
from tpcc_operator.results import error_budget_message, run_status
from voltdb_server import voltdb  # noqa: F401  (fixture)
from voltdbclient import FastSerializer, VoltProcedure

pytestmark = pytest.mark.db

SCALE = ["--warehouses", "1", "--items", "5000", "--customers-per-district", "300"]
PAYMENT_DDL = "CREATE PROCEDURE PARTITION ON TABLE warehouse COLUMN w_id PARAMETER 0 FROM CLASS tpcc.procedures.Payment"


def _adhoc(endpoint: str, sql: str) -> None:
    host, port = endpoint.rsplit(":", 1)
    client = FastSerializer(host, int(port))
    try:
        resp = VoltProcedure(client, "@AdHoc", [FastSerializer.VOLTTYPE_STRING]).call([sql])
        assert resp.status == 1, resp.statusString
    finally:
        client.close()


def test_a_database_refusing_every_payment_fails_the_error_budget(voltdb):  # noqa: F811
    endpoint = voltdb.endpoints[0]
    args = ["--db", "voltdb", "--endpoints", endpoint, "--metrics-port", "0"]
    load = tpcc("load", *args, *SCALE, "--workers", "1", "--reset")
    assert load.code == 0, load.stderr
    _adhoc(endpoint, "DROP PROCEDURE Payment")
    try:
        run = tpcc("run", *args, "--warehouses", "1", "--clients", "2", "--duration", "8", "--warmup", "1")
    finally:
        _adhoc(endpoint, PAYMENT_DDL)  # the session's other tests need it back
    assert run.code == 0, run.stderr
    results = run_status([run.json()])
    payment = results.transactions["PAYMENT"]
    assert payment.committed == 0 and payment.errors > 0
    assert results.tpm_c > 0  # NewOrders went on committing: tpmC alone would pass
    message = error_budget_message(results, 10)
    assert message is not None and message.startswith("errors above workload.maxErrorPercent (10%): PAYMENT ")
    assert "NEW_ORDER" not in message and "DELIVERY" not in message, message
