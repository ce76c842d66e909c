"""`tpcc ycsb` against the real databases: SecantusDB (MongoDB wire protocol) and VoltDB 10.1.1.
Workloads A-F at small scale with dataintegrity (every read checked against the value derived
from its key and field), the records a load writes, the keys a run's inserts add, N operations
in one transaction (and one that fails part-way writes nothing), the ledger's verification."""

from __future__ import annotations

import functools
import http.server
import json
import os
import signal
import threading
import time

import pytest
from cli_helpers import tpcc
from secantus_server import secantus  # noqa: F401  (fixture)
from test_mongodb_driver import commands_sent
from tpcc_contract.ycsb.properties import resolve
from tpcc_runner.drivers.base import ConnectionOptions, DriverError
from tpcc_runner.drivers.voltdb import STRING
from tpcc_runner.ycsb.store import make_store
from tpcc_runner.ycsb.workload import (
    INSERT,
    READ,
    READMODIFYWRITE,
    SCAN,
    UPDATE,
    CoreWorkload,
    Operation,
    deterministic_value,
)
from voltdb_server import voltdb  # noqa: F401  (fixture)

pytestmark = pytest.mark.db
RECORDS, OPERATIONS = 300, 300
MEASURED = ("READ", "UPDATE", "INSERT", "READ-MODIFY-WRITE")
SMALL = [
    "-p",
    f"recordcount={RECORDS}",
    "-p",
    f"operationcount={OPERATIONS}",
    "-p",
    "fieldcount=4",
    "-p",
    "fieldlength=20",
    "-p",
    "dataintegrity=true",
]
SERVER_FIXTURE = {"mongodb": "secantus", "voltdb": "voltdb"}


@pytest.fixture(params=sorted(SERVER_FIXTURE))
def db(request) -> tuple[str, str]:
    """(database, endpoints) of a real server."""
    server = request.getfixturevalue(SERVER_FIXTURE[request.param])
    endpoints = server.endpoint if request.param == "mongodb" else ",".join(server.endpoints)
    return request.param, endpoints


def ycsb(db, phase: str, *args: str, tmp_path=None):
    name, endpoints = db
    results = tmp_path / f"{phase}.json"
    done = tpcc(
        "ycsb",
        phase,
        "--db",
        name,
        "--endpoints",
        endpoints,
        "--metrics-port",
        "0",
        "--connect-timeout",
        "20",
        "--results",
        str(results),
        *args,
        timeout=300,
    )
    assert done.code == 0, done.stderr
    assert "Traceback" not in done.stderr
    return json.loads(results.read_text()), done.stdout


def connected(db, **given):
    name, endpoints = db
    props = resolve(
        None, {"recordcount": str(RECORDS), "fieldcount": "4", "fieldlength": "20", "dataintegrity": "true", **given}
    )
    store = make_store(name, ConnectionOptions(endpoints=endpoints.split(","), connect_timeout=20), props)
    store.connect()
    return store, CoreWorkload(props)


def load(db, tmp_path, *extra: str) -> dict:
    doc, _ = ycsb(db, "load", "--reset", "--threads", "2", "-p", "batchsize=50", *SMALL, *extra, tmp_path=tmp_path)
    assert doc["errors"] == 0
    return doc


def test_load_writes_every_record_with_its_values(db, tmp_path):
    doc = load(db, tmp_path)
    assert doc["OVERALL"]["RunTime(ms)"] > 0
    assert doc["operations"]["INSERT"]["Return"] == {"BATCHED_OK": RECORDS - 6, "OK": 6}  # 2 x 150 in 50s
    store, workload = connected(db)
    try:
        assert store.count_records() == RECORDS
        for n in range(RECORDS):
            key = workload.key_name(n)
            assert store.read(key, None) == {f: deterministic_value(key, f, 20) for f in workload.fields}, key
        # a scan is in key order from its start key
        keys = sorted(workload.key_name(n) for n in range(RECORDS))
        assert [k for k, _ in store.scan(keys[10], 5, ("field1",))] == keys[10:15]
    finally:
        store.close()


def test_load_partitions_with_insertstart(db, tmp_path):
    ycsb(db, "load", "--reset", *SMALL, "-p", "insertstart=0", "-p", "insertcount=100", tmp_path=tmp_path)
    ycsb(db, "load", *SMALL, "-p", "insertstart=100", "-p", "insertcount=200", "-p", "batchsize=64", tmp_path=tmp_path)
    store, workload = connected(db)
    try:
        assert store.count_records() == RECORDS
        assert all(store.read(workload.key_name(n), ("field0",)) for n in (0, 99, 100, 299))
    finally:
        store.close()


@pytest.mark.parametrize("preset", list("abcdef"))
def test_workload_reads_back_what_was_written(db, preset, tmp_path):
    load(db, tmp_path)
    doc, text = ycsb(
        db,
        "run",
        "--workload",
        preset,
        "--threads",
        "2",
        "--processes",  # one process: YCSB's insert key sequence (processes take slices of it)
        "1",
        *SMALL,
        "--ledger",
        str(tmp_path / "run.log"),
        tmp_path=tmp_path,
    )
    assert (
        doc["errors"] == 0
        and sum(
            s["count"]
            for name, s in doc["status"]["operations"].items()
            if name in ("READ", "UPDATE", "INSERT", "SCAN")
        )
        >= OPERATIONS
    )
    for name, m in doc["operations"].items():
        assert set(m["Return"]) <= {"OK"}, (name, m["Return"])  # no NOT_FOUND, ERROR, UNEXPECTED_STATE
    assert text.startswith("[OVERALL], RunTime(ms), ")
    inserted = doc["operations"].get("INSERT", {"Return": {"OK": 0}})["Return"]["OK"]
    assert (inserted > 0) == (preset in "de")
    store, workload = connected(db)
    try:
        # the run's inserts took the next keynums of YCSB's insert key sequence, and nothing else
        assert store.count_records() == RECORDS + inserted
        for n in range(RECORDS, RECORDS + inserted):
            key = workload.key_name(n)
            assert store.read(key, None) == {f: deterministic_value(key, f, 20) for f in workload.fields}
        assert store.read(workload.key_name(RECORDS + inserted), None) is None
    finally:
        store.close()
    name, endpoints = db
    verified = tpcc(
        "ycsb",
        "verify",
        "--db",
        name,
        "--endpoints",
        endpoints,
        "--metrics-port",
        "0",
        *SMALL,
        "--ledger",
        str(tmp_path / "run.log"),
    )
    assert verified.code == 0, verified.stderr + verified.stdout
    assert json.loads(verified.stdout)["records"] == RECORDS + inserted


def test_operations_per_transaction(db, tmp_path):
    load(db, tmp_path)
    doc, _ = ycsb(db, "run", "--workload", "a", "-p", "operationspertransaction=50", *SMALL, tmp_path=tmp_path)
    assert doc["operations"]["TRANSACTION"]["Return"] == {"OK": OPERATIONS // 50}
    assert doc["operations"]["READ"]["Return"]["OK"] + doc["operations"]["UPDATE"]["Return"]["OK"] == OPERATIONS


def test_a_transaction_that_fails_part_way_writes_nothing(db, tmp_path):
    load(db, tmp_path)
    store, workload = connected(db)
    try:
        first, second = workload.key_name(1), workload.key_name(2)
        changed = {"field0": b"changed in the transaction"}
        ops = [
            Operation(UPDATE, 1, first, values=changed),
            Operation(INSERT, 2, second, values={f: b"x" for f in workload.fields}),  # already there
            Operation(UPDATE, 3, workload.key_name(3), values=changed),
        ]
        with pytest.raises(DriverError):
            store.transaction(ops)
        assert store.read(first, ("field0",)) == {"field0": deterministic_value(first, "field0", 20)}
        assert store.read(workload.key_name(3), ("field0",))["field0"] != changed["field0"]
        # the same operations one by one: the first update stays, so the check above can fail
        store.apply(ops[0])
        with pytest.raises(DriverError):
            store.apply(ops[1])
        assert store.read(first, ("field0",)) == changed
    finally:
        store.close()


def test_transaction_results(db, tmp_path):
    load(db, tmp_path)
    store, workload = connected(db)
    try:
        key, new_key = workload.key_name(5), workload.key_name(RECORDS)
        value = {"field2": b"rmw"}
        results = store.transaction(
            [
                Operation(READ, 5, key, fields=("field1",)),
                Operation(UPDATE, 0, workload.key_name(RECORDS + 9), values=value),
                Operation(READMODIFYWRITE, 5, key, fields=None, values=value),
                Operation(INSERT, RECORDS, new_key, values={f: b"new" for f in workload.fields}),
                Operation(SCAN, 5, key, fields=("field2",), scan_length=2),
                Operation(READ, RECORDS, new_key, fields=("field3",)),
            ]
        )
        assert results[0] == {"field1": deterministic_value(key, "field1", 20)}
        assert results[1] is False  # no such record: NOT_FOUND
        assert results[2] == ({f: deterministic_value(key, f, 20) for f in workload.fields}, True)
        assert results[3] is None
        assert results[4][0] == (key, value)  # the transaction sees its own update
        assert results[5] == {"field3": b"new"}  # and its own insert
        assert store.read(new_key, ("field0",)) == {"field0": b"new"}
    finally:
        store.close()


def test_mongodb_concerns_come_from_driver_options(secantus, tmp_path):
    """write_concern, journal and read_concern reach the commands: a transaction's commit
    carries {w: majority, j: true}, its first statement read concern snapshot; load upserts."""
    db = ("mongodb", secantus.endpoint)
    load(db, tmp_path)
    name, endpoints = db
    props = resolve("a", {"recordcount": str(RECORDS), "fieldcount": "4", "fieldlength": "20"})
    options = ConnectionOptions(
        endpoints=[endpoints],
        connect_timeout=20,
        extra={"write_concern": "majority", "journal": "true", "read_concern": "snapshot"},
    )
    store = make_store(name, options, props)
    store.connect()
    workload = CoreWorkload(props)
    try:
        key = workload.key_name(0)
        with commands_sent() as sent:
            store.transaction([Operation(READ, 0, key), Operation(UPDATE, 0, key, values={"field0": b"w"})])
            store.load([(key, {"field0": b"again"})])
        first, commit, load_write = sent[0], sent[-2], sent[-1]
        assert first["readConcern"]["level"] == "snapshot" and first["startTransaction"]
        assert commit["commitTransaction"] == 1 and dict(commit["writeConcern"]) == {"w": "majority", "j": True}
        assert load_write["update"] == "usertable" and load_write["updates"][0]["upsert"] is True
        assert dict(load_write["writeConcern"]) == {"w": "majority", "j": True}
        assert store.describe()["write_concern"] == "majority" and store.describe()["journal"] is True
    finally:
        store.close()


def _delete_record(store, key: str) -> None:
    """What a database losing an acknowledged insert leaves: the record gone (native delete)."""
    if hasattr(store, "collection"):
        assert store.collection.delete_one({"_id": key}).deleted_count == 1
    else:
        store.driver._sql("DELETE FROM usertable WHERE ycsb_key = ?;", (STRING, key), writes=True)


def test_verify_reads_the_ledger_from_a_pod_url_and_fails_on_a_lost_insert(db, tmp_path):
    load(db, tmp_path)
    ledger = tmp_path / "run.log"
    doc, _ = ycsb(db, "run", "--workload", "d", "--threads", "1", *SMALL, "--ledger", str(ledger), tmp_path=tmp_path)
    inserted = doc["operations"]["INSERT"]["Return"]["OK"]
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/run.log"  # as the operator reads a runner pod's
    name, endpoints = db
    verify = ("ycsb", "verify", "--db", name, "--endpoints", endpoints, "--metrics-port", "0", *SMALL, "--ledger", url)
    try:
        verified = tpcc(*verify)
        assert verified.code == 0, verified.stderr
        assert json.loads(verified.stdout)["records"] == RECORDS + inserted
        store, workload = connected(db)
        try:
            _delete_record(store, workload.key_name(RECORDS))  # the run's first insert
        finally:
            store.close()
        verified = tpcc(*verify)
    finally:
        server.shutdown()
    verdict = json.loads(verified.stdout)
    assert verified.code == 1 and not verdict["durable"] and verdict["lost"] == 1 and verdict["ledgers"] == 1
    assert verdict["lost_examples"] == [f"insert of {workload.key_name(RECORDS)}: no record"]


def test_report_draws_the_runs_as_ycsb_printed_them(db, tmp_path):
    """`tpcc report` on the results documents of real runs (each operation alone, and in
    transactions of 50): the throughput table and every operation's line hold what YCSB printed."""
    from tpcc_runner.cli import main
    from tpcc_runner.report_svg import num

    load(db, tmp_path)
    files = []
    for per_txn in ("1", "50"):
        doc, printed = ycsb(
            db, "run", "--workload", "a", "-p", f"operationspertransaction={per_txn}", *SMALL, tmp_path=tmp_path
        )
        files.append(tmp_path / f"run-{per_txn}.json")
        files[-1].write_text(json.dumps(doc))
        for line in printed.splitlines():  # [READ], Operations, 152
            name, key, value = (part.strip() for part in line.split(",", 2))
            if key == "Operations":
                assert f"<td>{name.strip('[]')}</td><td>{int(value):,}</td>" in _report_of(main, files, tmp_path)
    page = _report_of(main, files, tmp_path)
    name = db[0]
    for label, path in ((f"{name} default", files[0]), (f"{name} transactions of 50 ops", files[1])):
        ops = json.loads(path.read_text())["OVERALL"]["Throughput(ops/sec)"]
        assert f"<tr><td>{label}</td><td>{num(ops)}</td></tr>" in page
        assert f"{label}, workload A: {num(ops)} ops/s (1 run)" in page


def _report_of(main, files, tmp_path) -> str:
    out = tmp_path / "report.html"
    assert main(["report", *map(str, files), "-o", str(out)]) == 0
    return out.read_text()


def _two_pods(endpoints: str, shards: tuple[str, str], tmp_path) -> list[dict]:
    """Two `tpcc ycsb run` of workload D at once, as two runner pods (--shard)."""
    import subprocess

    from cli_helpers import TPCC

    runs = [
        subprocess.Popen(
            [
                *TPCC,
                "ycsb",
                "run",
                "--db",
                "voltdb",
                "--endpoints",
                endpoints,
                "--metrics-port",
                "0",
                "--workload",
                "d",
                "--threads",
                "2",
                *SMALL,
                "-p",
                "operationcount=600",
                "-p",
                "insertproportion=0.3",
                "-p",
                "readproportion=0.7",
                "--shard",
                shard,
                "--results",
                str(tmp_path / f"pod{n}.json"),
                "--ledger",
                str(tmp_path / f"pod{n}.log"),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n, shard in enumerate(shards)
    ]
    for run in runs:
        run.communicate(timeout=300)
    return [json.loads((tmp_path / f"pod{n}.json").read_text()) for n in range(2)]


def _verified_durable(db, *ledgers, props: tuple[str, ...] = ()) -> dict:
    """`tpcc ycsb verify` over the ledgers (props: -p overrides of SMALL): its verdict, which must
    say durable."""
    name, endpoints = db
    ledger_args = [arg for ledger in ledgers for arg in ("--ledger", str(ledger))]
    verified = tpcc(
        "ycsb", "verify", "--db", name, "--endpoints", endpoints, "--metrics-port", "0", *SMALL, *props, *ledger_args
    )
    verdict = json.loads(verified.stdout)
    assert verified.code == 0 and verdict["durable"], verdict
    return verdict


@pytest.mark.parametrize("preset", ["a", "d", "f"])
def test_the_compiled_loop_runs_the_mix_and_its_ledger_verifies(voltdb, tmp_path, preset):
    """Workloads A (reads, updates), D (latest, inserts) and F (read-modify-writes) in the compiled
    loop (voltdb_compiled.py; no dataintegrity) against real VoltDB, 8 threads in one process:
    every operation counted once and each returned OK, the inserts took the next keys of YCSB's
    sequence, and verify finds every write the ledger acknowledged (each updated field holding a
    value, by digest, that an update wrote)."""
    db = ("voltdb", ",".join(voltdb.endpoints))
    props = ("-p", "dataintegrity=false")
    load(db, tmp_path, *props, "--ledger", str(tmp_path / "load.log"))
    run_args = ["--workload", preset, "--threads", "8", "--processes", "1", *props, "-p", "operationcount=3000"]
    ran, _ = ycsb(db, "run", *SMALL, *run_args, "--ledger", str(tmp_path / "run.log"), tmp_path=tmp_path)
    assert ran["driver"]["client_loop"] == "pipelined, compiled"
    operations = ran["operations"]
    assert all(set(op["Return"]) <= {"OK"} for op in operations.values()), operations
    count = {name: operations.get(name, {"Operations": 0})["Operations"] for name in MEASURED}
    # a read-modify-write is measured as its READ, its UPDATE and the whole
    assert count["READ"] + count["UPDATE"] + count["INSERT"] - count["READ-MODIFY-WRITE"] == 3000, count
    assert (count["INSERT"] > 0, count["READ-MODIFY-WRITE"] > 0) == (preset == "d", preset == "f")
    store, workload = connected(db)
    try:
        inserted = count["INSERT"]
        assert store.count_records() == RECORDS + inserted
        assert all(store.read(workload.key_name(n), None) for n in range(RECORDS, RECORDS + inserted))
    finally:
        store.close()
    verdict = _verified_durable(db, tmp_path / "load.log", tmp_path / "run.log", props=props)
    assert verdict["acknowledged_updates"] > 0 or preset == "d"
    assert verdict["records"] == RECORDS + inserted


def test_two_runner_pods_insert_their_own_keys(voltdb, tmp_path):
    """Workload D from two runner shards against real VoltDB: no key inserted twice (an insert of a
    key that is there fails on VoltDB), every acknowledged insert found, the count is the load's
    plus both pods' inserts; the same two runs without shards collide."""
    db = ("voltdb", ",".join(voltdb.endpoints))
    load(db, tmp_path)
    docs = _two_pods(db[1], ("0/2", "1/2"), tmp_path)
    inserted = [doc["operations"]["INSERT"]["Return"] for doc in docs]
    assert all(set(i) == {"OK"} and i["OK"] > 100 for i in inserted), inserted
    assert all(set(doc["operations"]["READ"]["Return"]) == {"OK"} for doc in docs)  # no NOT_FOUND: own keys
    verdict = _verified_durable(db, tmp_path / "pod0.log", tmp_path / "pod1.log")
    assert verdict["records"] == RECORDS + sum(i["OK"] for i in inserted) == verdict["expected_records"]
    load(db, tmp_path)
    docs = _two_pods(db[1], ("0/1", "0/1"), tmp_path)  # both YCSB's one sequence: the same keys
    assert sum(doc["operations"]["INSERT"]["Return"].get("ERROR", 0) for doc in docs) > 0


def test_client_processes_load_and_insert_their_own_keys(voltdb, tmp_path):
    """`tpcc ycsb load` and `run` with --processes 2 against real VoltDB: the load writes each
    record once, the run's processes insert keys of their own (an insert of a key that is there
    fails on VoltDB) and read only records that are there; verify finds every acknowledged
    write, and the count is the load's records plus the acknowledged inserts."""
    db = ("voltdb", ",".join(voltdb.endpoints))
    processes = ["--threads", "4", "--processes", "2", *SMALL]
    loaded, _ = ycsb(db, "load", "--reset", *processes, "--ledger", str(tmp_path / "load.log"), tmp_path=tmp_path)
    assert loaded["errors"] == 0 and sum(loaded["operations"]["INSERT"]["Return"].values()) == RECORDS
    mix = ["-p", "operationcount=800", "-p", "insertproportion=0.3", "-p", "readproportion=0.7"]
    ran, _ = ycsb(
        db, "run", "--workload", "d", *processes, *mix, "--ledger", str(tmp_path / "run.log"), tmp_path=tmp_path
    )
    inserted = ran["operations"]["INSERT"]["Return"]
    assert ran["processes"] == 2 and ran["OVERALL"]["RunTime(ms)"] > 0
    assert set(inserted) == {"OK"} and inserted["OK"] > 100, inserted
    assert set(ran["operations"]["READ"]["Return"]) == {"OK"}  # no NOT_FOUND: acknowledged keys only
    assert sum(sum(op["Return"].values()) for op in ran["operations"].values()) == 800
    verdict = _verified_durable(db, tmp_path / "load.log", tmp_path / "run.log")
    assert verdict["records"] == RECORDS + inserted["OK"] == verdict["expected_records"]


@pytest.mark.parametrize(
    ("dataintegrity", "client_loop"),
    [("true", "pipelined (not compiled: dataintegrity)"), ("false", "pipelined, compiled")],
)
def test_a_pipelined_run_outlives_a_server_that_stops_answering(voltdb, tmp_path, dataintegrity, client_loop):
    """A run's 8 threads pipelined over one connection (--processes 1) while the VoltDB server is
    stopped (SIGSTOP, a hung JVM) for 2.5 s, with call_timeout 1 s: what was in flight fails once
    its time is up (writes of unknown outcome in the ledger), the pipeline reconnects, the run goes
    on once the server does, and verify finds every acknowledged write. In the Python loop
    (pipelined.py; dataintegrity) and in the compiled one (voltdb_compiled.py)."""
    db = ("voltdb", ",".join(voltdb.endpoints))
    ycsb(db, "load", "--reset", "--threads", "2", *SMALL, "--ledger", str(tmp_path / "load.log"), tmp_path=tmp_path)
    pid = int((voltdb.directory / "node0" / "pid").read_text())
    run_args = ["--workload", "a", "--threads", "8", "--processes", "1", "--driver-opt", "call_timeout=1"]
    run_args += ["-p", "operationcount=0", "--duration", "8", "--ledger", str(tmp_path / "run.log")]
    run_args += ["-p", f"dataintegrity={dataintegrity}"]
    stopper = threading.Timer(3.0, _stop_for, (pid, 2.5))
    stopper.start()
    try:
        ran, _ = ycsb(db, "run", *SMALL, *run_args, tmp_path=tmp_path)  # the later operationcount wins
    finally:
        stopper.join()
        os.kill(pid, signal.SIGCONT)
    assert ran["driver"]["client_loop"] == client_loop
    returns = {name: op["Return"] for name, op in ran["operations"].items()}
    errors = sum(r.get("ERROR", 0) for r in returns.values())
    print("pipelined through a stopped server:", returns, ran["error_examples"][:2])
    assert 1 <= errors <= 8 and ran["errors"] == errors  # at most the 8 in flight, each once
    assert returns["READ"]["OK"] > 1000 and returns["UPDATE"]["OK"] > 1000
    verdict = _verified_durable(db, tmp_path / "load.log", tmp_path / "run.log")
    assert verdict["unknown_outcome"]["updates"] == returns["UPDATE"].get("ERROR", 0), verdict


def _stop_for(pid: int, seconds: float) -> None:
    os.kill(pid, signal.SIGSTOP)
    time.sleep(seconds)
    os.kill(pid, signal.SIGCONT)
