"""The YCSB client (executor, measurements, ledger) with no database: an in-memory store shared
by the client threads. What a load writes (partitions, batches), how inserts grow the key space,
dataintegrity's checks, transactions, throttling and the duration, YCSB's output format."""

from __future__ import annotations

import copy
import dataclasses
import random
import threading
import time

import pytest
from tpcc_contract.ycsb.measurements import Measurements
from tpcc_contract.ycsb.properties import resolve
from tpcc_runner.drivers.base import DriverError, UnknownOutcome
from tpcc_runner.ycsb.executor import Plan, execute, shares, throttle_delay, written
from tpcc_runner.ycsb.ledger import ledger_line, parse_ledgers, value_digest, verify
from tpcc_runner.ycsb.measurements import live_buckets, live_counts, status_summary, ycsb_text
from tpcc_runner.ycsb.pool import execute_plan, parts
from tpcc_runner.ycsb.workload import CoreWorkload, deterministic_value, java_string_hash
from ycsb_memory_store import JournalStores, MemoryDatabase, MemoryStore, journal_lines

SMALL = {"recordcount": "200", "operationcount": "400", "fieldcount": "3", "fieldlength": "12", "dataintegrity": "true"}


def props_of(preset=None, **given):
    return resolve(preset, {**SMALL, **{k: str(v) for k, v in given.items()}})


def run(db: MemoryDatabase, props, phase: str, seed: int = 7, ledger: list | None = None):
    plan = Plan(lambda: db.store(props), props, phase, seed)
    return execute(plan, ledger.extend if ledger is not None else None)


def loaded(props, seed: int = 1) -> MemoryDatabase:
    db = MemoryDatabase()
    outcome = run(db, props, "load", seed)
    assert outcome.error_count == 0
    return db


def returns(outcome, name: str) -> dict:
    return outcome.measurements.summary(name)["Return"]


def test_load_partitions_and_batches():
    db = MemoryDatabase()
    first = run(db, props_of(insertstart=0, insertcount=120, batchsize=50, threadcount=2), "load")
    second = run(db, props_of(insertstart=120, insertcount=80, batchsize=50), "load")
    workload = CoreWorkload(props_of())
    assert set(db.records) == {workload.key_name(n) for n in range(200)}
    # 2 threads of 60 records: batches of 50 + 10 each; YCSB's BATCHED_OK for the records sent later
    assert returns(first, "INSERT") == {"BATCHED_OK": 116, "OK": 4}
    assert returns(second, "INSERT") == {"BATCHED_OK": 78, "OK": 2}
    assert first.operations == 120 and second.operations == 80
    key = workload.key_name(5)
    assert db.records[key]["field1"] == deterministic_value(key, "field1", 12)


def test_every_preset_reads_back_what_was_written():
    for preset in "abcdef":
        props = props_of(preset, threadcount=3)
        db = loaded(props)
        outcome = run(db, props, "run")
        assert outcome.error_count == 0, preset
        assert outcome.operations == 400
        for name in outcome.measurements.names():
            assert "UNEXPECTED_STATE" not in outcome.measurements.summary(name)["Return"], (preset, name)
        assert sum(
            returns(outcome, n).get("OK", 0)
            for n in ("READ", "UPDATE", "INSERT", "SCAN")
            if n in outcome.measurements.by_name
        ) >= 400 - (200 if preset == "f" else 0)


def test_a_corrupt_value_is_unexpected_state():
    props = props_of("c")
    db = loaded(props)
    for record in db.records.values():
        record["field2"] = b"x" * 12
    outcome = run(db, props, "run")
    assert returns(outcome, "READ") == {"UNEXPECTED_STATE": 400}


def test_a_missing_field_is_unexpected_state():
    props = props_of("c")
    db = loaded(props)
    for record in db.records.values():
        del record["field0"]
    assert returns(run(db, props, "run"), "READ") == {"UNEXPECTED_STATE": 400}


def test_inserts_grow_the_key_space_as_ycsb_numbers_them():
    props = props_of("d", threadcount=2)
    db = loaded(props)
    outcome = run(db, props, "run")
    inserts = returns(outcome, "INSERT")["OK"]
    assert inserts > 0
    workload = CoreWorkload(props)
    # the run's inserts take keynums recordcount, recordcount + 1, ... (CoreWorkload's
    # transactioninsertkeysequence), hashed by insertorder=hashed
    assert set(db.records) == {workload.key_name(n) for n in range(200 + inserts)}


def test_operations_per_transaction_group_and_undo():
    props = props_of("a", operationspertransaction=10, threadcount=2)
    db = loaded(props)
    outcome = run(db, props, "run")
    assert outcome.error_count == 0
    assert db.transactions == 40
    assert returns(outcome, "TRANSACTION") == {"OK": 40}


class FailingStore(MemoryStore):
    """Fails the 5th update of each transaction, after 4 have been written."""

    def __init__(self, db, props):
        super().__init__(db, props)
        self.updates = 0

    def transaction(self, ops):
        self.updates = 0
        return super().transaction(ops)

    def update(self, key, values):
        self.updates += 1
        if self.updates == 5:
            raise DriverError("injected failure")
        return super().update(key, values)


def test_a_failed_transaction_counts_all_its_operations_as_errors():
    props = props_of(
        "a", updateproportion=1, readproportion=0, operationspertransaction=10, operationcount=30, dataintegrity="false"
    )
    db = loaded(props)
    before = {k: dict(v) for k, v in db.records.items()}
    ledger: list[str] = []
    outcome = execute(Plan(lambda: FailingStore(db, props), props, "run", 3), ledger.extend)
    assert returns(outcome, "UPDATE") == {"ERROR": 30}
    assert returns(outcome, "TRANSACTION") == {"ERROR": 3}
    assert outcome.error_count == 30 and len(outcome.errors) == 3 and "injected failure" in outcome.errors[0]
    assert db.records == before and ledger == []


def test_throttle_delay_is_ycsbs_schedule():
    assert throttle_delay(100.0, 0, 0.0, 100.5) == 0.0  # no target
    assert throttle_delay(100.0, 10, 0.1, 100.2) == pytest.approx(0.8)
    assert throttle_delay(100.0, 10, 0.1, 101.5) == 0.0  # behind: no wait, it catches up
    assert shares(10, 3) == [4, 3, 3] and shares(0, 2) == [0, 0]


def test_target_paces_the_run():
    props = props_of("c", target=400, threadcount=2, operationcount=200)
    outcome = run(loaded(props), props, "run")
    assert 0.4 <= outcome.runtime_ms / 1000 <= 0.9  # 200 operations at 400/s: 0.5 s


def test_maxexecutiontime_ends_an_unbounded_run():
    props = props_of("c", operationcount=0, maxexecutiontime=0.5, target=1000)
    t0 = time.monotonic()
    outcome = run(loaded(props), props, "run")
    assert 0.4 <= time.monotonic() - t0 <= 1.5
    # stopped by the time, not a count: about 500 at 1000 ops/s, and as many as the run's own
    # length at the target allows (a loaded machine ends the 0.5 s a little late)
    assert 0.45 <= outcome.runtime_ms / 1000 <= 1.5
    assert 350 <= outcome.operations <= 1000 * outcome.runtime_ms / 1000 * 1.05 + 10


def test_ledger_verifies_and_finds_a_lost_write():
    props = props_of("d", readproportion=0.5, updateproportion=0.45, threadcount=2)
    db, ledger = MemoryDatabase(), []
    run(db, props, "load", ledger=ledger)
    run(db, props, "run", ledger=ledger)
    workload = CoreWorkload(props)
    keys = {workload.key_name(n) for n in range(200)}
    writes = parse_ledgers({"ledger": ledger})
    store = db.store(props)
    assert verify(store, writes, keys, 3)["durable"]
    lost = sorted(writes.inserted - keys)[0]
    del db.records[lost]
    db.keys.remove(lost)
    verdict = verify(store, writes, keys, 3)
    assert not verdict["durable"] and verdict["records"] == verdict["expected_records"] - 1
    assert verdict["lost_examples"][0] == f"insert of {lost}: no record"


def test_an_update_lost_while_its_record_stays_fails_the_verdict():
    """A database that loses an acknowledged update but keeps the record (a replica that took
    over without it; a page written back from before the update) holds the load's value again."""
    # random values (with dataintegrity every write of a field is the same value)
    props = props_of("a", threadcount=2, dataintegrity="false")
    db, load_ledger, run_ledger = MemoryDatabase(), [], []
    run(db, props, "load", ledger=load_ledger)
    loaded_values = copy.deepcopy(db.records)
    run(db, props, "run", ledger=run_ledger)
    keys = {CoreWorkload(props).key_name(n) for n in range(200)}
    writes = parse_ledgers({"load": load_ledger, "run": run_ledger})
    store = db.store(props)
    verdict = verify(store, writes, keys, 3)
    assert verdict["durable"] and verdict["acknowledged_updates"] > 50, verdict  # two threads, any order
    key = sorted(writes.updated)[0]
    name = sorted(writes.updated[key])[0]
    db.records[key][name] = loaded_values[key][name]  # the update is gone, the record is not
    verdict = verify(store, writes, keys, 3)
    assert not verdict["durable"] and verdict["lost"] == 1 and verdict["records"] == 200
    assert verdict["lost_examples"] == [f"update of {key}: {name} holds a value no update wrote"]


def test_ledger_lines_carry_value_digests_and_older_ledgers_check_presence():
    line = ledger_line("U", "user1", {"field1": b"b", "field0": b"a"})
    assert line == f"U user1 field0={value_digest(b'a')},field1={value_digest(b'b')}"
    assert ledger_line("U", "user1", {"field0": b"a"}, known=False).startswith("?U user1 field0=")
    writes = parse_ledgers({"new": [line, "?U user1 field0=" + value_digest(b"c")], "old": ["U user2 field0,field2"]})
    assert writes.updated == {"user1": {"field0": set(), "field1": set()}, "user2": {"field0": set(), "field2": set()}}
    a, b, c = (value_digest(v) for v in (b"a", b"b", b"c"))
    assert writes.possible == {"user1": {"field0": {a, c}, "field1": {b}}}
    assert writes.unknown_updates == 1
    props = props_of(fieldcount=3)
    db = MemoryDatabase()
    db.store(props).load([("user1", {"field0": b"c", "field1": b"b"}), ("user2", {"field0": b"x", "field2": b"y"})])
    assert verify(db.store(props), writes, {"user1", "user2"}, 2)["durable"]  # c: the unknown-outcome update's


def test_a_read_modify_write_whose_read_failed_its_integrity_check_may_have_written():
    op = CoreWorkload(props_of("f")).next_operation(random.Random(3))
    while op.kind != "READMODIFYWRITE":
        op = CoreWorkload(props_of("f")).next_operation(random.Random(op.keynum + 4))
    assert written(op, "UNEXPECTED_STATE") == [ledger_line("U", op.key, op.written, known=False)]
    assert written(op, "NOT_FOUND") == []


def test_java_string_hash_and_deterministic_value():
    # the values Java 17 gives for String.hashCode and YCSB's buildDeterministicValue
    assert java_string_hash("user1:field0") == 1621652138
    assert java_string_hash("") == 0 and java_string_hash("a") == 97
    assert deterministic_value("user6284781860667377211", "field3", 40) == b"user6284781860667377211:field3:-56807784"


def test_measurements_merge_and_print_as_ycsb():
    a, b = Measurements(), Measurements()
    for ms in range(1, 101):
        (a if ms % 2 else b).measure("READ", "OK", ms / 1000)
    b.measure("READ", "ERROR", 0.5)
    a.add(b)
    s = a.summary("READ")
    assert s["Operations"] == 100 and s["Return"] == {"ERROR": 1, "OK": 100}
    assert s["50thPercentileLatency(us)"] == pytest.approx(50_000, rel=0.01)
    assert s["99thPercentileLatency(us)"] == pytest.approx(99_000, rel=0.01)
    text = ycsb_text(101, 2000, a).splitlines()
    assert text[:2] == ["[OVERALL], RunTime(ms), 2000", "[OVERALL], Throughput(ops/sec), 50.5"]
    assert "[READ], Return=ERROR, 1" in text and "[READ-FAILED], Operations, 1" in text
    status = status_summary(101, 2000, a)
    assert status["opsPerSecond"] == 50.5
    assert status["operations"]["READ"]["count"] == 101 and status["operations"]["READ"]["errors"] == 1
    assert Measurements.from_json(a.to_json()).summary("READ") == s


def test_a_bug_outside_an_operation_stops_the_run_and_says_so(monkeypatch):
    props = props_of("c", operationcount=0, maxexecutiontime=30)
    db = loaded(props)
    monkeypatch.setattr(CoreWorkload, "next_operation", lambda self, rng: 1 / 0)
    t0 = time.monotonic()
    outcome = run(db, props, "run")
    assert time.monotonic() - t0 < 5
    assert outcome.aborted == "client thread: ZeroDivisionError: division by zero"


class LostAnswerStore(MemoryStore):
    """Writes a load batch, then loses the answer: the outcome is unknown to the client."""

    def load(self, records):
        super().load(records)
        raise UnknownOutcome("answer lost")


def test_a_load_batch_of_unknown_outcome_is_in_the_ledger_as_unknown():
    props = props_of(recordcount=20, batchsize=10)
    db, ledger = MemoryDatabase(), []
    outcome = execute(Plan(lambda: LostAnswerStore(db, props), props, "load", 1), ledger.extend)
    assert outcome.error_count == 20 and returns(outcome, "INSERT") == {"BATCHED_OK": 18, "ERROR": 2}
    writes = parse_ledgers({"ledger": ledger})
    assert len(writes.unknown_inserts) == 20 and not writes.inserted
    verdict = verify(db.store(props), writes, set(), 3)
    assert verdict["durable"] and verdict["expected_records"] == [0, 20]


def test_operations_are_counted_for_prometheus_while_they_run():
    from prometheus_client import generate_latest
    from tpcc_runner.metrics import RunnerMetrics

    props = props_of("a", threadcount=2)
    db, metrics = loaded(props), RunnerMetrics()
    seen_at_start = []

    def connected(live):
        seen_at_start.append(live_counts(live()))
        metrics.ycsb.source = live

    outcome = execute(Plan(lambda: db.store(props), props, "run", 5), None, connected)
    assert seen_at_start == [{}]
    text = generate_latest(metrics.registry).decode()
    for name in ("READ", "UPDATE"):
        ok = returns(outcome, name)["OK"]
        assert f'tpcc_ycsb_operations_total{{operation="{name}",status="OK"}} {float(ok)}' in text
        # every timed operation is in the latency histogram
        assert (
            f'tpcc_ycsb_operation_duration_seconds_count{{operation="{name}"}} '
            f"{float(outcome.measurements.summary(name)['Operations'])}"
        ) in text


class SlowReadStore(MemoryStore):
    def read(self, key, fields):
        time.sleep(0.0035)
        return super().read(key, fields)


def test_the_latency_histogram_puts_each_operation_in_its_bucket():
    """Reads slowed to 3.5 ms and updates of an in-memory dict (microseconds) land on either side
    of the 3 ms bound; the histogram's sum is the HdrHistogram's mean times the count."""
    from prometheus_client import generate_latest
    from prometheus_client.parser import text_string_to_metric_families
    from tpcc_runner.metrics import RunnerMetrics

    props = props_of("a", operationcount=60, threadcount=2)
    db, metrics = loaded(props), RunnerMetrics()
    outcome = execute(
        Plan(lambda: SlowReadStore(db, props), props, "run", 5),
        None,
        lambda live: setattr(metrics.ycsb, "source", live),
    )
    (family,) = [
        f
        for f in text_string_to_metric_families(generate_latest(metrics.registry).decode())
        if f.name == "tpcc_ycsb_operation_duration_seconds"
    ]
    got = {(s.labels["operation"], s.name.rsplit("_", 1)[1], s.labels.get("le")): s.value for s in family.samples}
    reads, updates = (outcome.measurements.summary(n)["Operations"] for n in ("READ", "UPDATE"))
    assert reads and updates and reads + updates == 60
    assert got["READ", "bucket", "0.003"] == 0 and got["READ", "bucket", "+Inf"] == reads
    assert got["UPDATE", "bucket", "0.003"] == updates
    for name in ("READ", "UPDATE"):
        h = outcome.measurements.by_name[name].histogram
        assert got[name, "sum", None] == pytest.approx(h.get_mean_value() * h.get_total_count() / 1e6)


def test_live_buckets_add_the_threads_and_keep_sub_millisecond_bounds():
    first, second = Measurements(), Measurements()
    for seconds in (0.00004, 0.0001, 0.0003):
        first.measure("READ", "OK", seconds)
    second.measure("READ", "OK", 0.0026)
    second.measure("READ", "ERROR", 0.0002)
    buckets = live_buckets([first, second], (0.00005, 0.0001, 0.00025, 0.0025))
    assert buckets["READ"].cumulative == [1, 2, 2, 3, 4]
    assert buckets["READ-FAILED"].cumulative == [0, 0, 1, 1, 1]
    assert buckets["READ"].sum_seconds == pytest.approx(0.00004 + 0.0001 + 0.0003 + 0.0026, rel=1e-3)
    assert live_buckets([], (0.001,)) == {}


def test_a_thread_whose_reads_all_failed_leaves_the_minimum_of_the_others():
    """Its READ has Return counts and an empty histogram (the latencies are under READ-FAILED):
    added to the others it must not make YCSB's MinLatency 0."""
    failed_only, succeeded = Measurements(), Measurements()
    failed_only.measure("READ", "ERROR", 0.002)
    succeeded.measure("READ", "OK", 0.0005)
    succeeded.measure("READ", "OK", 0.0009)
    for order in ((succeeded, failed_only), (failed_only, succeeded)):
        total = Measurements()
        for m in order:
            total.add(m)
        summary = total.summary("READ")
        assert summary["MinLatency(us)"] == 500 and summary["Operations"] == 2
        assert summary["Return"] == {"ERROR": 1, "OK": 2}
        assert total.summary("READ-FAILED")["MinLatency(us)"] == 2000


# client processes (Plan.processes > 1): each has a database of its own (JournalStores), so the
# tests read what each did from the journal the processes append to


def run_in_processes(props, phase: str, journal, processes: int, seed: int = 7, shard=(0, 1), **stores):
    ledger: list[str] = []
    plan = Plan(JournalStores(props, str(journal), **stores), props, phase, seed, shard, processes)
    return execute_plan(plan, ledger.extend), ledger


def test_a_load_over_processes_loads_every_record_once(tmp_path):
    props = props_of(recordcount=203, insertstart=3, insertcount=200, batchsize=7, threadcount=5)
    outcome, ledger = run_in_processes(props, "load", tmp_path / "journal", processes=3)
    journal = journal_lines(tmp_path / "journal")
    keys = [key for _, _, key in journal]
    workload = CoreWorkload(props)
    assert sorted(keys) == sorted(workload.key_name(n) for n in range(3, 203))  # each once
    assert len({pid for pid, _, _ in journal}) == 3
    assert outcome.operations == 200 and outcome.error_count == 0
    assert sum(returns(outcome, "INSERT").values()) == 200
    assert sorted(parse_ledgers({"load": ledger}).inserted) == sorted(keys)


def test_parts_deal_the_threads_their_records_and_insert_slices():
    plan = Plan(MemoryStore, props_of(recordcount=10, threadcount=5), "load", 1, (1, 3), processes=3)
    got = [(p.threads, p.limits, p.plan.props.insertstart, p.plan.props.insertcount, p.plan.shard) for p in parts(plan)]
    # pod 1 of 3: its processes insert keynums 1, 4, 7 mod 9, all 1 mod 3 (the pod's slice)
    assert got == [((0, 3), (2, 2), 0, 4, (1, 9)), ((1, 4), (2, 2), 4, 4, (4, 9)), ((2,), (2,), 8, 2, (7, 9))]
    tiny = dataclasses.replace(plan, props=props_of(recordcount=2, threadcount=4))
    got = [(p.threads, p.limits, p.plan.props.insertstart, p.plan.props.insertcount) for p in parts(tiny)]
    assert got == [((0, 2), (1, 0), 0, 1), ((1, 3), (1, 0), 1, 1)]  # no process without records


def test_a_load_with_more_threads_than_records_ends():
    props = props_of(recordcount=3, threadcount=5)
    db = MemoryDatabase()
    assert run(db, props, "load").operations == 3 and len(db.records) == 3


def test_processes_measurements_add_up_to_what_they_did(tmp_path):
    props = props_of("a", operationcount=600, threadcount=4)
    outcome, _ = run_in_processes(props, "run", tmp_path / "journal", processes=2, loaded=True)
    journal = journal_lines(tmp_path / "journal")
    assert len({pid for pid, _, _ in journal}) == 2
    assert outcome.operations == 600 == len(journal) and outcome.error_count == 0
    for kind, name in (("READ", "READ"), ("UPDATE", "UPDATE")):
        done = sum(1 for _, k, _ in journal if k == kind)
        assert returns(outcome, name) == {"OK": done}  # every read finds its record, intact
        assert outcome.measurements.summary(name)["Operations"] == done


def test_measurements_sent_between_processes_add_exactly():
    parts = [Measurements(), Measurements()]
    for i in range(1, 3001):
        parts[i % 2].measure("READ", "OK" if i % 7 else "NOT_FOUND", i / 1_000_000 * 37)
    parts[1].measure("UPDATE", "ERROR", 0.25)
    direct, sent = Measurements(), Measurements()
    for m in parts:
        direct.add(m)
        sent.add(Measurements.from_json(m.to_wire()))
    for name in ("READ", "UPDATE", "UPDATE-FAILED"):
        assert sent.summary(name) == direct.summary(name)
        assert sent.by_name[name].histogram.encode() == direct.by_name[name].histogram.encode()


def test_run_inserts_are_unique_over_pods_and_processes(tmp_path):
    """2 pods of 2 processes insert (ordered keys: keynum readable): every key once, each pod in
    its own slice (keynum mod 2), each process in its own (mod 4); reads choose only records
    their process has (loaded or inserted and acknowledged): none NOT_FOUND."""
    props = props_of("d", insertorder="ordered", readproportion=0.5, insertproportion=0.5, threadcount=4)
    inserted: dict[int, list[int]] = {}
    for pod in range(2):
        outcome, _ = run_in_processes(props, "run", tmp_path / "journal", 2, 7 + pod, (pod, 2), loaded=True)
        assert "NOT_FOUND" not in returns(outcome, "READ")
        journal = journal_lines(tmp_path / "journal")
        keynums = [int(key.removeprefix("user")) for _, kind, key in journal if kind == "INSERT"]
        assert len(keynums) == returns(outcome, "INSERT")["OK"] > 0
        assert all(n >= 200 and n % 2 == pod for n in keynums)
        for pid, kind, key in journal:
            if kind == "INSERT":
                inserted.setdefault(pid, []).append(int(key.removeprefix("user")))
        (tmp_path / "journal").unlink()
    everything = [n for keynums in inserted.values() for n in keynums]
    assert len(inserted) == 4 and len(everything) == len(set(everything))
    assert all(len({n % 4 for n in keynums}) == 1 for keynums in inserted.values())


def test_processes_draw_apart_and_the_same_each_time(tmp_path):
    props = props_of("c", operationcount=100, threadcount=2)

    def draws(journal):
        run_in_processes(props, "run", journal, 2, seed=11, loaded=True)
        by_pid: dict[int, list[str]] = {}
        for pid, _, key in journal_lines(journal):
            by_pid.setdefault(pid, []).append(key)
        return sorted(by_pid.values())

    first = draws(tmp_path / "first")
    assert len(first) == 2 and first[0] != first[1]
    assert draws(tmp_path / "second") == first


def test_a_process_that_cannot_connect_fails_the_run_in_one_line(tmp_path):
    props = props_of("c", operationcount=0, maxexecutiontime=30, threadcount=4)
    t0 = time.monotonic()
    with pytest.raises(DriverError) as failed:
        run_in_processes(props, "run", tmp_path / "journal", 2, loaded=True, fail_once=str(tmp_path / "fail"))
    assert time.monotonic() - t0 < 20
    assert str(failed.value) == "ycsb: a client process could not connect: DriverError: connection refused"


def test_a_process_that_dies_fails_the_run_and_the_others_stop(tmp_path):
    props = props_of("c", operationcount=0, maxexecutiontime=60, threadcount=2)
    t0 = time.monotonic()
    with pytest.raises(DriverError) as failed:
        run_in_processes(props, "run", tmp_path / "journal", 2, loaded=True, exit_once=str(tmp_path / "exit"))
    assert time.monotonic() - t0 < 20  # not the 60 s of the run
    assert str(failed.value) in {f"ycsb client process {i} ended (exit code 3) without its results" for i in (0, 1)}


def test_processes_are_counted_for_prometheus_while_they_run(tmp_path):
    props = props_of("c", operationcount=0, maxexecutiontime=2.5, threadcount=2)
    samples: list[int] = []
    sources = []

    def connected(live):
        sources.append(live)

        def sample():
            while len(samples) < 4:  # in the first half of the run
                time.sleep(0.3)
                samples.append(sum(live_counts(live()).values()))

        threading.Thread(target=sample, daemon=True).start()

    plan = Plan(JournalStores(props, str(tmp_path / "journal"), loaded=True, read_delay=0.002), props, "run", 3)
    outcome = execute_plan(dataclasses.replace(plan, processes=2), None, connected)
    final = live_counts(sources[0]())
    assert final == live_counts([outcome.measurements]) and sum(final.values()) == outcome.operations
    # counts came while the run went, and grew: not only at the end
    assert samples == sorted(samples) and any(0 < n < outcome.operations for n in samples), samples


def test_a_plan_over_processes_is_not_run_as_threads_here():
    plan = Plan(MemoryStore, props_of(recordcount=10, threadcount=2), "load", 1, processes=2)
    with pytest.raises(ValueError, match="pool.execute_plan"):
        execute(plan)
