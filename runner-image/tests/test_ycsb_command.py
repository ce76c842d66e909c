"""`tpcc ycsb` as a user runs it, with no database: bad input is one line and exit 2, an
unreachable database one line and exit 1 within the connect timeout."""

import socket
import threading
import time

import pytest
from cli_helpers import tpcc
from tpcc_contract.ycsb.measurements import Measurements
from tpcc_runner.metrics import PHASES, RunnerMetrics
from tpcc_runner.ycsb import command
from tpcc_runner.ycsb.command import _measuring_once_counted


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize(
    "args,needle",
    [
        (["-p", "recordcont=10"], "unknown property recordcont"),
        (["-p", "readproportion=0.7"], "must be 1, got 1.2"),
        (["-p", "requestdistribution=pareto"], "property requestdistribution must be one of uniform|zipfian"),
        (["-p", "dataintegrity=true", "-p", "fieldlengthdistribution=uniform"], "needs fieldlengthdistribution"),
        (["--threads", "0"], "property threadcount must be >= 1"),
        (["--processes", "0"], "--processes: must be >= 1, got '0'"),
        (["--processes", "1.5"], "--processes: expected a positive whole number, got '1.5'"),
        (["--target", "-5"], "property target must be a number >= 0"),
        (["-p", "novalue"], "expected NAME=VALUE"),
    ],
)
def test_bad_properties_are_one_line_and_exit_2(args, needle):
    done = tpcc(
        "ycsb", "run", "--db", "mongodb", "--endpoints", "127.0.0.1:1", "--workload", "a", "--metrics-port", "0", *args
    )
    assert done.code == 2, done.stderr
    assert needle in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


@pytest.mark.parametrize("db", ["voltdb", "mongodb"])
@pytest.mark.parametrize("phase", ["load", "run", "verify"])
def test_unreachable_database_fails_within_the_timeout(db, phase, tmp_path):
    ledger = ["--ledger", str(tmp_path / "none.log")] if phase == "verify" else []
    if ledger:
        (tmp_path / "none.log").write_text("")
    done = tpcc(
        "ycsb",
        phase,
        "--db",
        db,
        "--endpoints",
        f"127.0.0.1:{_closed_port()}",
        "--workload",
        "a",
        "--connect-timeout",
        "3",
        "--metrics-port",
        "0",
        *ledger,
        timeout=60,
    )
    assert done.code == 1, done.stderr
    assert done.seconds < 3 + 10
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tpcc ycsb: error:") and "3" in lines[0], done.stderr


def test_ycsb_sql_creates_each_voltdb_procedure_once():
    from tpcc_runner.ycsb.voltdb import PROCEDURES, ddl_statements, procedure_of

    created = [procedure_of(s) for s in ddl_statements() if s.startswith("CREATE PROCEDURE")]
    assert sorted(created) == sorted(PROCEDURES)


def test_flags_are_properties_checked_with_the_others():
    from tpcc_contract.ycsb.properties import PropertyError
    from tpcc_runner.cli import build_parser
    from tpcc_runner.ycsb.command import properties_of

    def props(*args):
        return properties_of(build_parser().parse_args(["ycsb", "run", "--db", "voltdb", "--workload", "b", *args]))

    p = props("-p", "operationcount=0", "--duration", "5", "--threads", "3", "--target", "100")
    assert (p.operationcount, p.maxexecutiontime, p.threadcount, p.target) == (0, 5.0, 3, 100.0)
    assert props("-p", "threadcount=2", "--threads", "4").threadcount == 4  # the flag is given last
    with pytest.raises(PropertyError, match="needs maxexecutiontime"):
        props("-p", "operationcount=0")


def _phase(metrics) -> str:
    (current,) = [p for p in PHASES if metrics.phase.labels(p)._value.get() == 1]
    return current


def test_measuring_waits_for_the_first_count_to_reach_the_metrics():
    metrics = RunnerMetrics()
    metrics.set_phase("waiting")
    measurements = Measurements()
    waiter = threading.Thread(target=_measuring_once_counted, args=(metrics, lambda: [measurements]))
    waiter.start()
    time.sleep(0.3)
    assert _phase(metrics) == "waiting"  # no operation counted yet: the stall rule would misread it
    measurements.measure("READ", "OK", 0.001)
    waiter.join(2)
    assert not waiter.is_alive() and _phase(metrics) == "measuring"


def test_measuring_is_said_after_the_wait_when_nothing_answers(monkeypatch):
    monkeypatch.setattr(command, "FIRST_COUNT_SECONDS", 0.2)
    metrics = RunnerMetrics()
    metrics.set_phase("waiting")
    _measuring_once_counted(metrics, lambda: [])
    assert _phase(metrics) == "measuring"  # a database that answers nothing shows as a stalled run


def test_a_late_measuring_does_not_undo_done():
    metrics = RunnerMetrics()
    metrics.set_phase("done")
    metrics.set_phase("measuring", only_from=("connecting", "waiting"))
    assert _phase(metrics) == "done"
