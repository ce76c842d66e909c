"""One option parser for every driver (drivers/options.py): the same clear error for an unknown
key or a bad value, whichever database, TPC-C driver or YCSB store; typos are never ignored. The
tables it parses with are what --help lists and what the CRD's driverOptions rules allow. No
server needed: drivers parse their options before they connect."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from tpcc_contract.ycsb.properties import Properties
from tpcc_runner.cli import build_parser
from tpcc_runner.drivers import driver_class, options
from tpcc_runner.drivers.base import ConnectionOptions
from tpcc_runner.drivers.foundationdb import FoundationDBDriver
from tpcc_runner.drivers.mongodb import MongoDBDriver
from tpcc_runner.drivers.voltdb import VoltDBDriver
from tpcc_runner.ycsb.store import store_class

DRIVERS = {"voltdb": VoltDBDriver, "mongodb": MongoDBDriver, "foundationdb": FoundationDBDriver}


def make(db: str, **extra):
    return DRIVERS[db](ConnectionOptions(endpoints=["127.0.0.1:1"], extra=extra))


def make_store(db: str, **extra):
    return store_class(db)(ConnectionOptions(endpoints=["127.0.0.1:1"], extra=extra), Properties())


MAKERS = {"tpcc driver": make, "ycsb store": make_store}


@pytest.mark.parametrize("maker", MAKERS)
@pytest.mark.parametrize("db", DRIVERS)
def test_an_unknown_option_is_refused_by_every_driver_and_store_in_the_same_words(db, maker):
    with pytest.raises(ValueError, match=rf"^{db}: unknown driver option\(s\) txn_timout \(known: "):
        MAKERS[maker](db, txn_timout="5")


@pytest.mark.parametrize(
    "maker, db, option, value, want",
    [
        ("tpcc driver", "voltdb", "call_timeout", "soon", "seconds > 0"),
        ("tpcc driver", "voltdb", "load_timeout", "0", "seconds > 0"),
        ("tpcc driver", "voltdb", "delivery", "per-order", "one of per-warehouse|per-district"),
        ("tpcc driver", "voltdb", "delivery", "PER-DISTRICT", "one of per-warehouse|per-district"),
        ("tpcc driver", "voltdb", "partitioning", "w_id", "one of warehouse|district|d_id"),
        ("tpcc driver", "mongodb", "txn_timeout", "-1", "seconds > 0"),
        ("tpcc driver", "mongodb", "commit_retries", "2.5", "a whole number >= 0"),
        ("tpcc driver", "mongodb", "causal", "maybe", "true or false"),
        ("tpcc driver", "mongodb", "read_concern", "linearizable", "one of local|majority|snapshot"),
        ("tpcc driver", "mongodb", "write_concern", "0", "majority or a number of members >= 1"),
        ("tpcc driver", "foundationdb", "txn_timeout", "never", "seconds > 0"),
        ("tpcc driver", "foundationdb", "api_version", "7.1", "a whole number"),
        ("ycsb store", "voltdb", "call_timeout", "nan", "seconds > 0"),
        ("ycsb store", "mongodb", "txn_retries", "-1", "a whole number >= 0"),
        ("ycsb store", "mongodb", "upsert", "sometimes", "true or false"),
        ("ycsb store", "foundationdb", "txn_timeout", "0", "seconds > 0"),
    ],
)
def test_a_bad_value_names_the_driver_the_option_and_what_it_wants(maker, db, option, value, want):
    with pytest.raises(ValueError) as e:
        MAKERS[maker](db, **{option: value})
    assert str(e.value) == f"{db}: driver option {option} must be {want}, got {value!r}"


def test_values_arrive_parsed_and_defaults_fill_the_rest():
    v = make("voltdb", call_timeout="2.5")
    assert (v.call_timeout, v.load_timeout, v.procs_jar, v.delivery_mode) == (2.5, 600.0, None, "per-warehouse")
    assert v.partitioning == "warehouse"
    split = make("voltdb", delivery="per-district", partitioning="district")
    assert (split.delivery_mode, split.partitioning) == ("per-district", "district")
    assert make("voltdb", partitioning="d_id").partitioning == "d_id"
    m = make("mongodb", causal="yes", write_concern="2", commit_retries="5")
    assert (m.causal, m.write_concern, m.commit_retries, m.retry_writes, m.txn_timeout) == (True, 2, 5, True, 60.0)
    f = make("foundationdb", directory="bench/tpcc", api_version="630")
    assert (f.directory, f.api_version, f.txn_timeout) == (("bench", "tpcc"), 630, 10.0)


# -- a YCSB store may reuse a TPC-C driver's table with its own defaults ----------------------------


def test_the_ycsb_foundationdb_store_takes_the_drivers_options_with_its_own_directory():
    store = make_store("foundationdb")
    assert store.driver.directory == ("ycsb",)
    assert {o.name: o.default for o in store.option_table}["directory"] == "ycsb"
    assert [o.name for o in store.option_table] == [o.name for o in FoundationDBDriver.option_table]


# -- --help lists the tables the drivers parse with -------------------------------------------------


@pytest.mark.parametrize(
    "command, tables",
    [
        (["run"], {db: driver_class(db).option_table for db in DRIVERS}),
        (["load"], {db: driver_class(db).option_table for db in DRIVERS}),
        (["ycsb", "run"], {db: store_class(db).option_table for db in DRIVERS}),
    ],
)
def test_help_lists_every_option_of_every_database_with_what_it_wants_and_its_default(command, tables, capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args([*command, "--help"])
    listed = capsys.readouterr().out.split("driver options (--driver-opt KEY=VALUE), per --db:\n")[1]
    for db, table in tables.items():
        section = re.split(r"\n  (?=\S)", listed.split(f"  {db}:\n")[1])[0]  # up to the next database
        for option in table:
            assert f"    {option.name}: {option.wants}, default " in section, (db, option.name)
        assert len(re.findall(r"^    \S", section, re.M)) == len(table), db  # and nothing else


def test_every_option_says_what_it_does():
    tables = [driver_class(db).option_table for db in DRIVERS] + [store_class(db).option_table for db in DRIVERS]
    assert [o.name for table in tables for o in table if len(o.help) < 10] == []


def test_a_command_without_driver_options_lists_none(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["report", "--help"])
    assert "driver options" not in capsys.readouterr().out


# -- the CRD's workload.driverOptions rules and the runner's tables agree ---------------------------
# The CRD checks driverOptions at apply with CEL rules that list the keys (and the enumerated and
# boolean values) per database; the runner parses them with the tables above. The CRD omits on
# purpose the options that name a file inside the runner pod, which a BenchmarkRun cannot place.
IN_POD_FILES = {"voltdb": {"procs_jar"}, "mongodb": set(), "foundationdb": {"cluster_file"}}
CRD = Path(__file__).resolve().parents[2] / "crds" / "benchmarkrun.yaml"


def crd_rules(db: str) -> list[str]:
    version = yaml.safe_load(CRD.read_text())["spec"]["versions"][0]
    spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    return [
        " ".join(r["rule"].split())
        for r in spec["x-kubernetes-validations"]
        if "driverOptions" in r["rule"] and r["rule"].startswith(f"self.database.type != '{db}'")
    ]


def quoted(listed: str) -> set[str]:
    return set(re.findall(r"'([^']*)'", listed))


def crd_keys(db: str) -> dict[str, set[str]]:
    """Per workload kind, the keys the CRD lets through for db."""
    rule = next(r for r in crd_rules(db) if ".all(k, " in r and "'true'" not in r)
    lists = [quoted(m) for m in re.findall(r"k in \[([^\]]*)\]", rule)]
    if "kind == 'ycsb' ?" in rule:
        return {"ycsb": lists[0], "tpcc": lists[1]}
    return {"ycsb": lists[0], "tpcc": lists[0]}


def table(db: str, kind: str):
    return {o.name: o for o in (store_class(db) if kind == "ycsb" else driver_class(db)).option_table}


@pytest.mark.parametrize("db", DRIVERS)
@pytest.mark.parametrize("kind", ["tpcc", "ycsb"])
def test_the_crd_lets_through_every_option_of_the_runner_but_the_in_pod_files(db, kind):
    assert crd_keys(db)[kind] <= set(table(db, kind)), "the CRD allows a key the runner refuses"
    assert set(table(db, kind)) - crd_keys(db)[kind] == IN_POD_FILES[db], "a runner option the CRD refuses"


@pytest.mark.parametrize("db", DRIVERS)
def test_the_crd_allows_the_values_the_runner_takes_for_its_enumerated_options(db):
    enumerated = {
        key: quoted(values)
        for rule in crd_rules(db)
        for key, values in re.findall(r"driverOptions\['(\w+)'\] in \[([^\]]*)\]", rule)
    }
    for key, values in enumerated.items():
        assert values == set(table(db, "tpcc")[key].allowed), key
    booleans = [
        quoted(m)
        for rule in crd_rules(db)
        for m in re.findall(r"\[([^\]]*)\]\.all\(k, !\(k in self\.workload\.driverOptions\)", rule)
    ]
    runner_booleans = {o.name for o in table(db, "tpcc").values() if o.parse is options.boolean}
    assert set().union(*booleans) == runner_booleans
    assert len(enumerated) + len(runner_booleans) > 0 or db == "foundationdb"


# -- the docs name only options that exist, with the defaults the tables give --------------------
REPO = CRD.parents[1]


def every_option() -> set[str]:
    return {o.name for db in DRIVERS for cls in (driver_class(db), store_class(db)) for o in cls.option_table}


def test_the_docs_name_no_option_the_runner_does_not_have():
    docs = [REPO / "README.md", *(REPO / "docs").glob("*.md"), *(REPO / "runner-image").glob("**/README.md")]
    named = {
        name
        for doc in docs
        for name in re.findall(r"--driver-opt `?([a-z_]+)=|driverOptions\.([a-z_]+)", doc.read_text())
        for name in name
        if name and name not in {"key", "all"}
    }
    assert len(named) > 5
    assert named - every_option() == set()


def test_the_foundationdb_docs_table_gives_the_drivers_defaults():
    rows = re.findall(r"^\| `(\w+)` \| `([^`]*)` \|", (REPO / "docs" / "foundationdb.md").read_text(), re.M)
    defaults = {o.name: o.default for o in FoundationDBDriver.option_table}
    documented = {name: type(defaults[name])(default) for name, default in rows if name in defaults}
    assert len(documented) == 3
    assert documented == {name: defaults[name] for name in documented}
