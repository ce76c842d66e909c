"""The YCSB FoundationDB store's key layout and its failure without libfdb_c. No FoundationDB
server or libfdb_c exists here: these use the binding's pure-Python tuple layer (the code that
runs against a real cluster); nothing that reads or writes a database is tested."""

import random
import time

import pytest
from test_foundationdb_keys import HAS_BINDING, _libfdb_c_present, needs_binding
from tpcc_contract.ycsb.properties import Properties
from tpcc_runner.drivers.base import ConnectionOptions, Unreachable
from tpcc_runner.drivers.foundationdb import LIBFDB_C_MISSING
from tpcc_runner.ycsb.foundationdb import FoundationDBStore, YcsbKeyspace
from tpcc_runner.ycsb.generators import build_key_name

PREFIX = b"\x15\x2a"  # what the directory layer hands out: a short tuple-encoded integer


@pytest.fixture
def ks():
    if not HAS_BINDING:
        pytest.skip("pip install foundationdb (binding)")
    return YcsbKeyspace(PREFIX, "usertable")


def test_a_field_key_round_trips_under_the_prefix(ks):
    key = ks.field_key("user6284781860667377211", "field3")
    assert key.startswith(PREFIX)
    assert ks.table.unpack(key) == ("user6284781860667377211", "field3")
    assert ks.records([(key, b"v")], None) == [("user6284781860667377211", {"field3": b"v"})]


def test_a_record_range_holds_its_fields_and_no_other_record(ks):
    r = ks.record_range("user1")
    inside = [ks.field_key("user1", f"field{i}") for i in range(10)]
    outside = [ks.field_key(k, "field0") for k in ("user", "user0", "user10", "user1\x00", "user2")]
    assert all(r.start <= k < r.stop for k in inside)
    assert not any(r.start <= k < r.stop for k in outside)  # "user10" is not part of "user1"


def test_keys_sort_as_ycsbs_key_names_so_a_scan_is_one_range(ks):
    rng = random.Random(5)
    names = [
        build_key_name(rng.randrange(10**6), ordered, 1 if ordered else 0)
        for ordered in (True, False)
        for _ in range(300)
    ]
    encoded = sorted(names, key=lambda n: ks.field_key(n, "field0"))
    assert encoded == sorted(names)
    start = ks.from_key(sorted(names)[10])
    t = ks.table_range()
    assert t.start < start < t.stop
    assert [n for n in sorted(names) if ks.field_key(n, "field0") >= start][0] == sorted(names)[10]


def test_records_group_fields_by_key_in_order_and_project(ks):
    kvs = [(ks.field_key(k, f), f"{k}/{f}".encode()) for k in ("user1", "user2") for f in ("field0", "field1")]
    assert ks.records(kvs, ("field1",)) == [
        ("user1", {"field1": b"user1/field1"}),
        ("user2", {"field1": b"user2/field1"}),
    ]
    assert ks.records([], None) == []


@pytest.mark.skipif(_libfdb_c_present(), reason="libfdb_c is installed here")
def test_connect_without_libfdb_c_is_unreachable_within_a_second():
    store = FoundationDBStore(
        ConnectionOptions(endpoints=["10.0.0.1"], connect_timeout=30, extra={"cluster_id": "ycsb:abc123"}), Properties()
    )
    start = time.monotonic()
    with pytest.raises(Unreachable) as e:
        store.connect()
    assert time.monotonic() - start < 1.0
    expected = LIBFDB_C_MISSING if HAS_BINDING else "FoundationDB Python binding not installed"
    assert str(e.value).startswith(expected) and "\n" not in str(e.value)


@needs_binding
def test_the_store_opens_its_own_directory():
    store = FoundationDBStore(ConnectionOptions(extra={"cluster_id": "ycsb:abc123"}), Properties())
    assert store.driver.directory == ("ycsb",)
    other = FoundationDBStore(ConnectionOptions(extra={"directory": "bench/ycsb"}), Properties())
    assert other.driver.directory == ("bench", "ycsb")
