"""`tpcc acid`: the ACID tests of clause 3 against a loaded database, one verdict per test,
printed and written as JSON. The document (also `--results FILE`):

    {"command": "acid", "db": "mongodb", "passed": true, "seed": 7,
     "counts": {"passed": 11, "failed": 0, "not-applicable": 0, "error": 0},
     "tests": [{"test": "isolation3", "clause": "3.4.2.3", "status": "passed",
                "reason": "T2 was rolled back by the database (...) and retried after T1; ...",
                "observed": {...the values the verdict was decided on...}}, ...],
     "driver": {...the connection's describe()...}}

status is passed, failed (reason: the evidence), not-applicable (reason: why) or error (the test
could not run, e.g. no undelivered order to deliver). `passed` is true when none failed or
erred; the exit status is 0 then, else 1. The tests change the database as the clause's do
(Payments, NewOrders, Deliveries committed), so run them on a load made for them or before a
run, not during one (isolation test 7 puts the two item prices it raises back)."""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import logging
import random
import sys
from collections import Counter
from typing import Any

from .. import k8s
from ..drivers.base import DriverError, NotLoaded, NotPermitted
from ..loader import require_loaded
from ..redact import redact
from ..usage import connection_options
from .clause3 import ERROR, FAILED, NOT_APPLICABLE, TESTS, Verdict, pick
from .interleave import StillWaiting

log = logging.getLogger("tpcc")
ADAPTERS = {"mongodb": "tpcc_runner.acid.mongodb:MongoDBAcid", "voltdb": "tpcc_runner.acid.voltdb:VoltDBAcid"}
NOT_PERMITTED = "not permitted for this user: {error}; the tests need a user allowed to {needs}"
NO_ADAPTER = {
    "foundationdb": "no ACID adapter for FoundationDB: there is no server here to build and test "
    "one against (docs/foundationdb.md)"
}


def _tests(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in TESTS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown test(s) {', '.join(unknown) or '(none given)'} (known: {','.join(TESTS)})"
        )
    return names


def add_parser(sub, common: argparse.ArgumentParser) -> None:
    ac = sub.add_parser("acid", parents=[common], help="the ACID tests of clause 3 (atomicity, isolation 1-9)")
    ac.add_argument(
        "--tests",
        type=_tests,
        default=list(TESTS),
        metavar="NAME[,NAME...]",
        help=f"which tests (default all: {','.join(TESTS)})",
    )
    ac.add_argument("--results", default=None, metavar="FILE", help="also write the JSON here")
    ac.add_argument("--seed", type=int, default=None, help="fixes the randomly selected rows")
    ac.add_argument(
        "--results-configmap",
        default=None,
        metavar="NAMESPACE/NAME",
        help="write acid.json into this existing ConfigMap (the operator's check ConfigMap)",
    )


def make_adapter(db: str, options, weaken: str | None = None):
    """The database part of the tests; `weaken` is for tests only (see each adapter)."""
    module, cls = ADAPTERS[db].split(":")
    return getattr(importlib.import_module(module), cls)(options, weaken)


def run_tests(adapter, names: list[str], rng: random.Random) -> list[Verdict]:
    meta = adapter.reader.read_meta()
    if meta is None:
        raise NotLoaded("the database holds no TPC-C load: run `tpcc load` first")
    require_loaded(adapter.reader, meta.warehouses)
    verdicts = []
    for name in names:
        if name in adapter.not_applicable:
            verdicts.append(Verdict(name, NOT_APPLICABLE, adapter.not_applicable[name]))
            continue
        chosen = pick(rng, meta.warehouses, meta.districts, meta.customers_per_district, meta.items)
        try:
            verdict = TESTS[name].judge(adapter.observe(name, chosen))
        except StillWaiting as e:  # a lock the database never released is a failure, not an error
            verdict = Verdict(name, FAILED, str(e), {"pick": dataclasses.asdict(chosen)})
        except NotPermitted as e:  # the user's roles, not the database's isolation
            verdict = Verdict(name, NOT_APPLICABLE, NOT_PERMITTED.format(needs=adapter.needs, error=e))
        except (DriverError, *adapter.database_errors) as e:
            verdict = Verdict(name, ERROR, f"could not run: {e}", {"pick": dataclasses.asdict(chosen)})
        note = adapter.notes.get(name)
        verdicts.append(dataclasses.replace(verdict, reason=f"{verdict.reason} ({note})") if note else verdict)
        log.info("acid: %s %s: %s", name, verdicts[-1].status, verdicts[-1].reason)
    return verdicts


def document(db: str, seed: int, verdicts: list[Verdict], driver: dict[str, Any]) -> dict[str, Any]:
    counts = Counter(v.status for v in verdicts)
    return {
        "command": "acid",
        "db": db,
        "passed": not (counts[FAILED] or counts[ERROR]),
        "seed": seed,
        "counts": {s: counts[s] for s in ("passed", FAILED, NOT_APPLICABLE, ERROR)},
        "tests": [v.to_dict() for v in verdicts],
        "driver": driver,
    }


def cmd_acid(args, metrics) -> int:

    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    if args.db in NO_ADAPTER:
        doc = document(args.db, seed, [Verdict(n, NOT_APPLICABLE, NO_ADAPTER[args.db]) for n in args.tests], {})
    else:
        adapter = make_adapter(args.db, connection_options(args))
        try:
            adapter.connect()
        except NotPermitted as e:  # e.g. VoltDB: adding the test procedures needs admin
            adapter.close()
            reason = NOT_PERMITTED.format(needs=adapter.needs, error=e)
            doc = document(args.db, seed, [Verdict(n, NOT_APPLICABLE, reason) for n in args.tests], {})
        else:
            doc = _run_connected(args, adapter, seed, metrics)
    text = redact(json.dumps(doc, indent=2, default=str))
    print(text)
    if args.results:
        with open(args.results, "w") as f:
            f.write(text + "\n")
    if args.results_configmap:
        k8s.write_configmap_key(args.results_configmap, "acid.json", text)
    print(f"acid: {doc['counts']} -> {'passed' if doc['passed'] else 'FAILED'}", file=sys.stderr)
    metrics.set_phase("done")
    return 0 if doc["passed"] else 1


def _run_connected(args, adapter, seed: int, metrics) -> dict[str, Any]:
    try:
        metrics.set_phase("checking")
        return document(args.db, seed, run_tests(adapter, args.tests, random.Random(seed)), adapter.describe())
    finally:
        adapter.close()
