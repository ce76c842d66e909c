"""One option parser for every driver (drivers/options.py): the same clear error for an unknown
key or a bad value, whichever database; typos are never ignored. No server needed: drivers parse
their options before they connect."""
from __future__ import annotations

import pytest
from tpcc_runner.drivers.base import ConnectionOptions
from tpcc_runner.drivers.foundationdb import FoundationDBDriver
from tpcc_runner.drivers.mongodb import MongoDBDriver
from tpcc_runner.drivers.voltdb import VoltDBDriver

DRIVERS = {"voltdb": VoltDBDriver, "mongodb": MongoDBDriver, "foundationdb": FoundationDBDriver}


def make(db: str, **extra):
    return DRIVERS[db](ConnectionOptions(endpoints=["127.0.0.1:1"], extra=extra))


@pytest.mark.parametrize("db", DRIVERS)
def test_an_unknown_option_is_refused_by_every_driver_in_the_same_words(db):
    with pytest.raises(ValueError, match=rf"^{db}: unknown driver option\(s\) call_timout \(known: "):
        make(db, call_timout="5")


@pytest.mark.parametrize("db, option, value, want", [
    ("voltdb", "call_timeout", "soon", "seconds > 0"),
    ("voltdb", "load_timeout", "0", "seconds > 0"),
    ("voltdb", "delivery", "per-order", "one of per-warehouse|per-district"),
    ("voltdb", "delivery", "PER-DISTRICT", "one of per-warehouse|per-district"),
    ("voltdb", "partitioning", "d_id", "one of warehouse|district"),
    ("mongodb", "txn_timeout", "-1", "seconds > 0"),
    ("mongodb", "commit_retries", "2.5", "a whole number >= 0"),
    ("mongodb", "causal", "maybe", "true or false"),
    ("mongodb", "read_concern", "linearizable", "one of local|majority|snapshot"),
    ("mongodb", "write_concern", "0", "majority or a number of members >= 1"),
    ("foundationdb", "txn_timeout", "never", "seconds > 0"),
    ("foundationdb", "api_version", "7.1", "a whole number"),
])
def test_a_bad_value_names_the_driver_the_option_and_what_it_wants(db, option, value, want):
    with pytest.raises(ValueError) as e:
        make(db, **{option: value})
    assert str(e.value) == f"{db}: driver option {option} must be {want}, got {value!r}"


def test_values_arrive_parsed_and_defaults_fill_the_rest():
    v = make("voltdb", call_timeout="2.5")
    assert (v.call_timeout, v.load_timeout, v.procs_jar, v.delivery_mode) == (2.5, 600.0, None, "per-warehouse")
    assert v.partitioning == "warehouse"
    split = make("voltdb", delivery="per-district", partitioning="district")
    assert (split.delivery_mode, split.partitioning) == ("per-district", "district")
    m = make("mongodb", causal="yes", write_concern="2", commit_retries="5")
    assert (m.causal, m.write_concern, m.commit_retries, m.retry_writes, m.txn_timeout) == (True, 2, 5, True, 60.0)
    f = make("foundationdb", directory="bench/tpcc", api_version="630")
    assert (f.directory, f.api_version, f.txn_timeout) == (("bench", "tpcc"), 630, 10.0)
