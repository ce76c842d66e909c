"""YCSB's TimeSeriesWorkload with no database: its properties and their refusals, the keys, tags,
timestamps and values it writes as YCSB 0.17 writes them (exact where YCSB is deterministic),
the operation stream, and a load and run into the in-memory store verified by the ledger, which
fails when a series' record is lost or falls back to a value no data point wrote."""

from __future__ import annotations

import random
import struct
from collections import Counter

import pytest
from tpcc_contract.ycsb.properties import PropertyError, resolve
from tpcc_runner.ycsb.executor import Plan
from tpcc_runner.ycsb.ledger import parse_ledgers, verify
from tpcc_runner.ycsb.pool import execute_plan, parts
from tpcc_runner.ycsb.timeseries import (
    EpochTimestamps,
    TimeSeriesWorkload,
    printable_strings,
    shuffle_array,
    workload_for,
)
from tpcc_runner.ycsb.workload import INSERT, READ, SCAN, UPDATE, CoreWorkload
from ycsb_memory_store import MemoryDatabase

TS = "site.ycsb.workloads.TimeSeriesWorkload"
# 4 keys x tag cardinalities 1, 2, 3 = 24 series; a fixed first timestamp
SMALL = {
    "workload": TS,
    "recordcount": "240",
    "operationcount": "300",
    "fieldcount": "4",
    "fieldlength": "3",
    "tagcount": "3",
    "tagcardinality": "1,2,3",
    "tagkeylength": "2",
    "tagvaluelength": "2",
    "insertstart": "1700000000",
    "delayedseries": "0",
}


def ts_props(**given):
    return resolve(None, {**SMALL, **{k: str(v) for k, v in given.items()}})


def test_the_tsa_preset_is_tsworkloada_as_ycsb_reads_it():
    p = resolve("tsa", {})
    assert p.timeseries and p.fieldcount == 64 and p.fieldlength == 8
    assert p.tag_cardinalities() == (1, 2, 4, 2) and p.series_count() == 1024
    assert (p.readproportion, p.updateproportion, p.insertproportion) == (0.10, 0.0, 0.90)
    assert (p.querytimespan, p.timestampinterval, p.timestampunits) == (3600, 60, "SECONDS")
    # tsworkloada's delayedSeries / delayedIntervals are not YCSB's (lower-case) names: defaults
    assert (p.delayedseries, p.delayedintervals) == (0.10, 5)
    assert p.to_ycsb()["workload"] == TS and p.to_ycsb()["tagcardinality"] == (1, 2, 4, 2)


@pytest.mark.parametrize(
    "given, refused",
    [
        ({"workload": "site.ycsb.workloads.Nope"}, "property workload must be one of"),
        ({"tagcount": "2"}, "property tagcount: TimeSeriesWorkload's, not CoreWorkload's"),
        ({"workload": TS, "tagcardinality": "1,x"}, "property tagcardinality must be whole numbers >= 1"),
        ({"workload": TS, "tagcardinality": "1,0"}, "property tagcardinality must be whole numbers >= 1"),
        ({"workload": TS, "timestampunits": "NANOSECONDS"}, "property timestampunits must be one of SECONDS"),
        ({"workload": TS, "valuetype": "strings"}, "property valuetype must be one of integers"),
        ({"workload": TS, "requestdistribution": "latest"}, "property requestdistribution must be one of uniform"),
        (
            {"workload": TS, "readproportion": "0.5", "readmodifywriteproportion": "0.45"},
            "property readmodifywriteproportion must be 0",
        ),
        ({"workload": TS, "fieldcount": "2", "threadcount": "3"}, "property fieldcount (2: the series keys)"),
        ({"workload": TS, "fieldlength": "1", "fieldcount": "60"}, "property fieldlength 1 gives 52 distinct"),
        ({"workload": TS, "tagcount": "0"}, "property tagcount must be >= 1"),
        ({"workload": TS, "sparsity": "1"}, "property sparsity must be >= 0 and < 1"),
        ({"workload": TS, "delayedintervals": "0"}, "property delayedintervals must be >= 1"),
        ({"workload": TS, "groupbyfunction": "SUM"}, "property groupbykeys must have one 0 or 1 per tag"),
        ({"workload": TS, "downsamplingfunction": "AVG"}, "property downsamplinginterval must be >= 1"),
        ({"workload": TS, "recordcount": "100"}, "property recordcount (100) must be >= the number of series (640"),
        ({"workload": TS, "dataintegrity": "true"}, "property dataintegrity=true is not implemented"),
        ({"workload": TS, "randomwritetimestamporder": "true"}, "randomwritetimestamporder=true is not implemented"),
        ({"workload": TS, "operationspertransaction": "2"}, "property operationspertransaction must be 1"),
        ({"workload": TS, "queryrandomtimespan": "true"}, "property querytimespan (0) must be >= timestampinterval"),
    ],
)
def test_bad_timeseries_properties_are_refused_naming_the_property(given, refused):
    with pytest.raises(PropertyError) as e:
        resolve(None, given)
    assert refused in str(e.value)


def test_case_folded_names_are_read_as_ycsb_reads_them():
    p = resolve(None, {"workload": TS, "timestampunits": "milliseconds", "valuetype": "Integers"})
    assert (p.timestampunits, p.valuetype) == ("MILLISECONDS", "integers")


def test_printable_strings_and_shuffle_are_ycsbs():
    assert printable_strings(2, 3) == ["AA", "AB", "AC"]
    assert printable_strings(2, 54)[51:] == ["Az", "BA", "BB"]
    items = list(range(6))
    shuffle_array(items, random.Random(1))
    assert sorted(items) == list(range(6)) and items != list(range(6))


def test_timestamps_start_at_insertstart_or_one_interval_before_the_clock():
    fixed = EpochTimestamps(60, "MINUTES", 1000)
    assert [fixed.next_value() for _ in range(3)] == [1000, 4600, 8200]
    clock = EpochTimestamps(60, "SECONDS", None)
    import time

    assert abs(clock.next_value() - (time.time() - 60)) < 2


def _points(workload, n, thread=(0, 1), rng=None):
    series = workload.for_thread(*thread)
    rng = rng or random.Random(3)
    return [series.next_load_insert(rng) for _ in range(n)]


def test_a_thread_writes_every_series_of_its_keys_then_the_next_timestamp():
    w = TimeSeriesWorkload(ts_props(randomtimeseriesorder="false"))
    p = w.props
    assert w.keys == ["AAA", "AAB", "AAC", "AAD"] and w.tag_keys == ["AA", "AB", "AC"]
    ops = _points(w, 48)
    assert all(op.kind == INSERT and op.upsert for op in ops)
    first = ops[:24]
    assert [op.key for op in first[:7]] == ["AAA"] * 6 + ["AAB"]
    # the odometer: last tag fastest, the first tag (cardinality 1) always its one value
    tags = [(op.written["AB"], op.written["AC"]) for op in first[:6]]
    assert tags == [(b"AA", b"AA"), (b"AA", b"AB"), (b"AA", b"AC"), (b"AB", b"AA"), (b"AB", b"AB"), (b"AB", b"AC")]
    assert {op.written["AA"] for op in ops} == {b"AA"}
    stamps = [struct.unpack(">q", op.written[p.timestampkey])[0] for op in ops]
    assert stamps == [1700000000] * 24 + [1700000060] * 24
    assert len({(op.key, op.written["AB"], op.written["AC"]) for op in first}) == 24
    assert all(len(op.written[p.valuekey]) == 8 for op in ops)


def test_threads_and_pods_own_disjoint_key_slices():
    w = TimeSeriesWorkload(ts_props(fieldcount=5, recordcount=300))
    slices = [{op.key for op in _points(w, 30, (t, 2))} for t in range(2)]
    assert len(slices[0]) == 2 and len(slices[1]) == 3 and not slices[0] & slices[1]
    pod1 = TimeSeriesWorkload(w.props, shard=(1, 2))
    assert pod1.keys == w.keys  # the shuffle is the same in every process and pod
    with pytest.raises(PropertyError, match="must be >= the client threads of all runner pods"):
        pod1.for_thread(2, 3)


def test_delayed_series_lag_behind_by_their_index_modulo_delayedintervals():
    w = TimeSeriesWorkload(ts_props(delayedseries=0.5, delayedintervals=3, randomtimeseriesorder="false"))
    ops = _points(w, 48)[24:]  # the second timestamp
    lags = [(1700000060 - struct.unpack(">q", op.written["YCSBTS"])[0]) // 60 for op in ops]
    assert lags == [i % 3 for i in range(12)] + [0] * 12


def test_values_are_ycsbs_numbers():
    ints = _points(TimeSeriesWorkload(ts_props(valuetype="integers")), 200)
    values = [struct.unpack(">q", op.written["YCSBV"])[0] for op in ints]
    assert all(-(2**31) <= v < 2**31 for v in values) and min(values) < 0 < max(values)
    floats = _points(TimeSeriesWorkload(ts_props()), 200)
    doubles = [struct.unpack(">d", op.written["YCSBV"])[0] for op in floats]
    assert all(0 <= v < 100000 for v in doubles) and max(doubles) > 50000


def test_the_run_mixes_operations_and_queries_name_a_series_and_a_time():
    w = TimeSeriesWorkload(
        ts_props(readproportion=0.3, updateproportion=0.2, insertproportion=0.4, scanproportion=0.1, querytimespan=120)
    )
    series = w.for_thread(0, 1)
    rng = random.Random(5)
    for _ in range(24):
        series.next_load_insert(rng)
    ops = [series.next_operation(rng) for _ in range(4000)]
    mix = Counter(op.kind for op in ops)
    for kind, share in ((READ, 0.3), (UPDATE, 0.2), (INSERT, 0.4), (SCAN, 0.1)):
        assert abs(mix[kind] / 4000 - share) < 0.03
    read = next(op for op in ops if op.kind == READ)
    assert len(read.fields) == 4 and read.fields[0].startswith("AA=")
    start, end = next(f for f in read.fields if f.startswith("YCSBTS=")).removeprefix("YCSBTS=").split(",")
    offsets = (int(start) - 1700000000) / 60
    assert int(end) - int(start) == 120 and offsets == int(offsets) and 0 <= offsets <= w.max_offsets - 2
    update = next(op for op in ops if op.kind == UPDATE)
    assert struct.unpack(">q", update.written["YCSBTS"])[0] < series.timestamps.current
    assert all(1 <= op.scan_length <= 1000 for op in ops if op.kind == SCAN)


def test_group_by_and_downsampling_fields_are_0_17s():
    w = TimeSeriesWorkload(
        ts_props(groupbyfunction="SUM", groupbykeys="0,1,0", downsamplingfunction="AVG", downsamplinginterval=60)
    )
    fields = w.query_fields(random.Random(1), 1700000000, scan=False)
    assert "AB" in fields and "YCSBGB=SUM" in fields and "YCSBDS=AVG60" in fields and "YCSBTS=1700000000" in fields
    assert "YCSBDS=AVG=60" in w.query_fields(random.Random(1), 1700000000, scan=True)


def test_workload_for_picks_the_workload_class():
    assert isinstance(workload_for(ts_props()), TimeSeriesWorkload)
    assert isinstance(workload_for(resolve("a", {})), CoreWorkload)


def _run(db, props, phase, ledger, seed=7, processes=1):
    plan = Plan(lambda: db.store(props), props, phase, seed, processes=processes)
    return execute_plan(plan, ledger.extend)


def test_load_and_run_keep_one_record_per_series_key_and_verify():
    props = ts_props(threadcount=2, readproportion=0.1, updateproportion=0.1, insertproportion=0.8)
    db, ledger = MemoryDatabase(), []
    load = _run(db, props, "load", ledger)
    assert load.operations == 240 and load.error_count == 0
    assert sorted(db.records) == sorted(TimeSeriesWorkload(props).keys)
    record = db.records[TimeSeriesWorkload(props).keys[0]]
    assert set(record) == {"AA", "AB", "AC", "YCSBTS", "YCSBV"}
    run = _run(db, props, "run", ledger, seed=8)
    assert run.operations == 300 and run.error_count == 0
    assert run.measurements.summary("READ")["Return"] == {"OK": run.measurements.summary("READ")["Operations"]}
    assert all(line.startswith("U ") for line in ledger)
    verdict = verify(db.store(props), parse_ledgers({"ledger": ledger}), set(), props.fieldcount, props.fieldcount)
    assert verdict["durable"] and verdict["records"] == 4 and verdict["expected_records"] == 4


def test_verify_fails_when_a_series_record_is_lost_or_falls_back():
    props = ts_props()
    db, ledger = MemoryDatabase(), []
    _run(db, props, "load", ledger)
    writes = parse_ledgers({"ledger": ledger})
    lost_key = TimeSeriesWorkload(props).keys[1]
    del db.records[lost_key]
    db.keys.remove(lost_key)
    verdict = verify(db.store(props), writes, set(), props.fieldcount, props.fieldcount)
    assert not verdict["durable"] and verdict["lost_examples"] == [f"update of {lost_key}: no record"]
    other = TimeSeriesWorkload(props).keys[2]
    db.records[other]["YCSBV"] = struct.pack(">d", -1.0)  # a value no data point wrote
    verdict = verify(db.store(props), writes, set(), props.fieldcount, props.fieldcount)
    assert f"update of {other}: YCSBV holds a value no update wrote" in verdict["lost_examples"]


def test_client_processes_keep_the_pods_shard_and_insertstart():
    props = ts_props(threadcount=4)
    plan = Plan(lambda: None, props, "load", 1, shard=(1, 3), processes=2)
    for part in parts(plan):
        assert part.plan.shard == (1, 3) and part.plan.props.insertstart == 1700000000


def test_the_command_refuses_more_client_threads_than_series_keys_before_connecting():
    from tpcc_runner.cli import build_parser
    from tpcc_runner.usage import UsageError
    from tpcc_runner.ycsb.command import cmd_ycsb

    argv = ["ycsb", "run", "--db", "voltdb", "--endpoints", "127.0.0.1:1", "--workload", "tsa", "-p", "fieldcount=5"]
    args = build_parser().parse_args([*argv, "--threads", "3", "--shard", "1/2"])
    with pytest.raises(
        UsageError, match=r"fieldcount \(5: the series keys\) must be >= the client threads of all runner pods \(6\)"
    ):
        cmd_ycsb(args, None)
