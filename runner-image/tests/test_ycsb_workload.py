"""YCSB properties, presets and the operation stream, without a database or Java
(test_ycsb_java.py compares the generators with YCSB's own)."""

from __future__ import annotations

import random

import pytest
from tpcc_contract.ycsb.properties import PRESETS, PropertyError, resolve
from tpcc_runner.ycsb.workload import INSERT, READ, READMODIFYWRITE, SCAN, UPDATE, CoreWorkload


def test_presets_are_ycsbs_workload_files():
    a = resolve("a", {})
    assert (a.readproportion, a.updateproportion, a.requestdistribution, a.recordcount) == (0.5, 0.5, "zipfian", 1000)
    d = resolve("d", {})
    assert (d.readproportion, d.insertproportion, d.requestdistribution) == (0.95, 0.05, "latest")
    e = resolve("e", {})
    assert (e.scanproportion, e.insertproportion, e.maxscanlength, e.scanlengthdistribution) == (
        0.95,
        0.05,
        100,
        "uniform",
    )
    f = resolve("f", {})
    assert (f.readproportion, f.readmodifywriteproportion) == (0.5, 0.5)
    assert resolve("c", {}).readproportion == 1.0
    assert sorted(PRESETS) == [*"abcdef", "tsa"]


def test_every_property_can_be_overridden():
    p = resolve(
        "e",
        {
            "maxscanlength": "7",
            "requestdistribution": "hotspot",
            "hotspotdatafraction": "0.1",
            "exponential.percentile": "90",
            "insertorder": "ordered",
            "batchsize": "50",
            "operationspertransaction": "4",
            "readallfields": "false",
        },
    )
    assert (p.maxscanlength, p.requestdistribution, p.hotspotdatafraction, p.exponential_percentile) == (
        7,
        "hotspot",
        0.1,
        90.0,
    )
    assert (p.insertorder, p.batchsize, p.operationspertransaction, p.readallfields) == ("ordered", 50, 4, False)
    assert p.to_ycsb()["exponential.percentile"] == 90.0


@pytest.mark.parametrize(
    ("preset", "overrides", "message"),
    [
        (None, {"recordcont": "5"}, "unknown property recordcont"),
        ("a", {"readproportion": "0.6"}, "must be 1, got 1.1"),
        ("a", {"requestdistribution": "zipf"}, "property requestdistribution must be one of uniform|zipfian"),
        ("a", {"fieldlengthdistribution": "histogram"}, "property fieldlengthdistribution must be one of"),
        ("a", {"recordcount": "-5"}, "property recordcount must be a whole number >= 0"),
        ("a", {"operationcount": "ten"}, "property operationcount must be a whole number"),
        ("a", {"readallfields": "yes"}, "property readallfields must be true or false"),
        ("a", {"insertstart": "900", "insertcount": "200"}, "property recordcount (1000) must be >= insertstart"),
        ("a", {"hotspotopnfraction": "1.5"}, "property hotspotopnfraction must be between 0 and 1"),
        ("a", {"minscanlength": "10", "maxscanlength": "5"}, "property maxscanlength (5) must be >= minscanlength"),
        ("a", {"workload": "site.ycsb.workloads.RestWorkload"}, "property workload must be one of"),
        ("g", {}, "unknown workload 'g'"),
    ],
)
def test_bad_properties_are_named(preset, overrides, message):
    with pytest.raises(PropertyError) as e:
        resolve(preset, overrides)
    assert message in str(e.value)


def _stream(seed: int, preset: str, n: int = 300, **overrides: str):
    workload = CoreWorkload(resolve(preset, overrides))
    rng = random.Random(seed)
    return [workload.next_operation(rng) for _ in range(n)]


def test_a_seed_repeats_the_stream_and_another_changes_it():
    assert _stream(1, "a") == _stream(1, "a")
    assert _stream(1, "a") != _stream(2, "a")


def test_operations_carry_what_ycsb_sends():
    ops = _stream(3, "f", 400, writeallfields="false", fieldcount="4", fieldlength="8")
    kinds = {op.kind for op in ops}
    assert kinds == {READ, READMODIFYWRITE}
    for op in ops:
        assert op.key.startswith("user") and op.fields is None  # readallfields=true
        if op.kind == READMODIFYWRITE:
            [(field, value)] = op.values.items()  # one field, as writeallfields=false
            assert field in ("field0", "field1", "field2", "field3") and len(value) == 8
            assert all(32 <= b < 127 for b in value)
    scans = _stream(3, "e", 400, readallfields="false")
    assert {op.kind for op in scans} == {SCAN, INSERT}
    assert all(1 <= op.scan_length <= 100 and len(op.fields) == 1 for op in scans if op.kind == SCAN)
    inserts = [op for op in scans if op.kind == INSERT]
    assert [op.keynum for op in inserts] == list(range(1000, 1000 + len(inserts)))  # after the load
    assert all(len(op.values) == 10 for op in inserts)
    assert {op.kind for op in _stream(3, "a", 400, writeallfields="true")} == {READ, UPDATE}


def test_reads_see_only_acknowledged_inserts():
    workload = CoreWorkload(resolve("d", {"insertproportion": "0.5", "readproportion": "0.5", "recordcount": "10"}))
    rng = random.Random(5)
    pending = []
    for _ in range(200):
        op = workload.next_operation(rng)
        if op.kind == INSERT:
            pending.append(op)
        else:  # nothing acknowledged yet: reads stay within the loaded records
            assert op.keynum <= 9
    for op in pending:
        workload.acknowledge_insert(op)
    assert workload.inserted.last_value() == 9 + len(pending)


def test_load_inserts_its_key_range_once():
    workload = CoreWorkload(
        resolve(
            "a",
            {
                "recordcount": "50",
                "insertstart": "10",
                "insertcount": "20",
                "insertorder": "ordered",
                "zeropadding": "4",
            },
        )
    )
    rng = random.Random(1)
    keys = [workload.next_load_insert(rng).key for _ in range(20)]
    assert keys == [f"user{n:04d}" for n in range(10, 30)]


def _pod_keys(shard: tuple[int, int], operations: int, **given: str) -> tuple[list[str], set[str]]:
    """(the keys pod shard inserts, the keys it reads or updates), every insert acknowledged."""
    workload = CoreWorkload(
        resolve("d", {"recordcount": "50", "insertproportion": "0.5", "readproportion": "0.5", **given}), shard
    )
    rng, inserted, touched = random.Random(f"pod{shard[0]}"), [], set()
    for _ in range(operations):
        op = workload.next_operation(rng)
        if op.kind == INSERT:
            inserted.append(op.key)
            workload.acknowledge_insert(op)
        else:
            touched.add(op.key)
    return inserted, touched


@pytest.mark.parametrize("insertorder", ["hashed", "ordered"])
def test_each_runner_pod_inserts_its_own_slice_and_reads_only_keys_that_exist(insertorder):
    """Three pods of a workload D run: no key inserted twice, the keys after the load taken in
    turn (pod I: recordcount + I + k*3), and each pod's reads among the loaded records and its own
    acknowledged inserts (another pod's may not have happened)."""
    loaded = {CoreWorkload(resolve("d", {"insertorder": insertorder})).key_name(n) for n in range(50)}
    pods = [_pod_keys((i, 3), 300, insertorder=insertorder) for i in range(3)]
    inserted = [key for keys, _ in pods for key in keys]
    assert len(inserted) == len(set(inserted)) and not set(inserted) & loaded
    one = CoreWorkload(resolve("d", {"insertorder": insertorder}))
    for i, (keys, touched) in enumerate(pods):
        assert keys == [one.key_name(50 + i + 3 * k) for k in range(len(keys))]
        assert touched <= loaded | set(keys) and touched & set(keys)  # the latest: its own inserts too
    alone, _ = _pod_keys((0, 1), 300, insertorder=insertorder)  # one pod: YCSB's own sequence
    assert alone == [one.key_name(n) for n in range(50, 50 + len(alone))]
