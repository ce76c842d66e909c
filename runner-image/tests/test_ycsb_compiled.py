"""The compiled loop (_voltloop.c) draws what workload.py draws and sends what voltdb.py sends: for
each request distribution, field length distribution and mix it takes, the same seed gives the
same operations (kind, key, values, in the same order) and byte for byte the same calls. And it
refuses what it does not run, so those clients run the Python loop."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest
from tpcc_contract.ycsb.properties import resolve
from tpcc_runner.drivers.voltdb import encode_invocation
from tpcc_runner.processes import usable_cpus
from tpcc_runner.ycsb import voltdb_compiled
from tpcc_runner.ycsb.voltdb import VoltDBStore, _insert_call, _read_call, _update_call
from tpcc_runner.ycsb.workload import INSERT, READ, READMODIFYWRITE, UPDATE, CoreWorkload

pytestmark = pytest.mark.skipif(voltdb_compiled.extension() is None, reason="_voltloop not built")

MIXES = {
    "workload A": ("a", {}),
    "workload B": ("b", {}),
    "workload D (latest, inserts)": ("d", {}),
    "workload F (read-modify-write)": ("f", {}),
    "uniform, all fields written, ordered keys": (
        "a",
        {"requestdistribution": "uniform", "writeallfields": "true", "insertorder": "ordered", "zeropadding": "59"},
    ),
    "hotspot, one field read": (
        "b",
        {
            "requestdistribution": "hotspot",
            "readallfields": "false",
            "insertproportion": "0.1",
            "readproportion": "0.85",
        },
    ),
    "sequential": ("a", {"requestdistribution": "sequential"}),
    "exponential, inserts": (
        "a",
        {"requestdistribution": "exponential", "insertproportion": "0.2", "readproportion": "0.3"},
    ),
    "zipfian field lengths, 12 fields (field10 sorts before field2)": (
        "f",
        {"fieldlengthdistribution": "zipfian", "fieldcount": "12", "writeallfields": "true"},
    ),
    "uniform field lengths, 2nd pod of 3": ("d", {"fieldlengthdistribution": "uniform", "minfieldlength": "0"}),
}


def _props(preset: str, given: dict[str, str]):
    return resolve(preset, {"recordcount": "5000", "operationcount": "100000", **given})


def _call(op) -> tuple[str, list]:
    if op.kind in (READ, READMODIFYWRITE):
        return _read_call(op.key)
    if op.kind == UPDATE:
        return _update_call(op.key, op.written)
    return _insert_call(op.key, op.written)


@pytest.mark.parametrize("name", MIXES)
def test_the_same_seed_draws_the_same_operations_and_calls(name):
    preset, given = MIXES[name]
    props = _props(preset, given)
    shard = (1, 3) if "pod" in name else (0, 1)
    python, compiled = CoreWorkload(props, shard), CoreWorkload(props, shard)
    rng = random.Random("7:0")
    client = SimpleNamespace(workload=compiled, rng=random.Random("7:0"), limit=0)
    loop = voltdb_compiled.new_loop(compiled, [client], 1, 10.0)
    kinds = set()
    for n in range(3000):
        op = python.next_operation(rng)
        ((kind, keynum, key, values),) = loop.draw(0, 1)
        assert (kind, keynum, key, values) == (op.kind, op.keynum, op.key, op.values), f"operation {n}"
        assert loop.encode(0, 40 + n) == encode_invocation(*_call(op), 40 + n), f"the call of operation {n}"
        if op.kind == INSERT:
            python.acknowledge_insert(op)
        kinds.add(kind)
    assert kinds == {k for k, share in props.proportions().items() if share > 0}


@pytest.mark.parametrize(
    ("given", "why"),
    [
        ({"scanproportion": "0.05", "readproportion": "0.45"}, "scans"),
        ({"target": "100"}, "a target"),
        ({"dataintegrity": "true"}, "dataintegrity"),
        ({"zeropadding": "60"}, "zeropadding"),
    ],
)
def test_what_it_does_not_run_is_refused(given, why):
    assert why in (voltdb_compiled.refusal(_props("a", given), "run") or "")


def test_a_time_series_a_load_and_transactions_are_refused():
    assert voltdb_compiled.refusal(resolve("tsa", {"recordcount": "5000"}), "run") == "a time series"
    assert voltdb_compiled.refusal(_props("a", {}), "load") == "not a run of single operations"
    assert voltdb_compiled.refusal(_props("a", {"operationspertransaction": "10"}), "run") is not None


def test_workload_a_runs_compiled_in_one_client_process():
    assert voltdb_compiled.refusal(_props("a", {}), "run") is None
    assert VoltDBStore.client_processes(_props("a", {}), "run") == 1
    assert VoltDBStore.client_processes(_props("a", {"dataintegrity": "true"}), "run") == usable_cpus()
    assert VoltDBStore.client_processes(_props("a", {}), "load") == usable_cpus()
