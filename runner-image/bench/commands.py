#!/usr/bin/env python3
"""What each tool asks the server for one transaction: per transaction type and option set,
the commands (round trips) and the documents read and written that ours and py-tpcc (the
VLDB 2019 paper's tool, vendored in bench/pytpcc) send for the same options, counted by a
pymongo command listener (pymongo.monitoring.CommandListener) registered from outside
either tool: nothing in the runner's driver or in py-tpcc knows it is counted.

Each tool runs in a process of its own (`commands.py measure ...`, started by this script):
ours is its MongoDB driver run by its own executor (executor.execute_once, with the inputs
of one terminal, tpcc_runner.workload.Terminal, unpaced); py-tpcc is its own driver run with
the inputs of its own Executor.doOne, through pytpcc_shim's pymongo patches as
pytpcc_compare.py runs it. One terminal each, one transaction after another, so no write
conflict and no retry adds commands; every command sent while a transaction runs is its
own, the commit and an abort included.

- commands: every command sent (find, getMore, findAndModify, insert, update, delete,
  aggregate, commitTransaction, abortTransaction; a bulk write is one command per
  collection and kind of write).
- docs read: documents the server returned (find/getMore/aggregate batches, a
  findAndModify's value); what it examined to find them is not seen by a client.
- docs written: the `n` of each insert, update (matched), delete and findAndModify reply.

Both load one warehouse scaled (10,000 items, 300 customers per district: py-tpcc's
--scalefactor 10), each on the same SecantusDB, one database per tool and schema. The
commands a transaction sends do not depend on the tables' sizes; what does: the documents
a by-last-name customer lookup returns (one per name here, about three at full size), how
many STOCK documents StockLevel reads (the distinct items of the district's last 20
orders), and a Delivery's district with no undelivered order (none here).

Option sets: the knobs of the paper's appendix A.2 as each tool has them. py-tpcc's config
has denormalize and findandmodify; its batch_writes is an attribute its constructor sets
True ("things that are not better can't be set in config"), set False here for the
batch-off sets; it has no StockLevel-in-a-transaction knob (its StockLevel never runs in
one), so that set's py-tpcc figures are its paper set's. The sharded study's embedded schema
(a customer's orders, their lines and its history inside its CUSTOMER document; Panpaliya
2020, 6.5.2) is ours only: its py-tpcc figures are py-tpcc's normalized set's, the study's
"referenced schema", against which it found embedding to access fewer documents (7.3,
Observation 1). Both: write concern majority, causal sessions, no retryable writes (the
paper's appendix D).

    .venv/bin/python runner-image/bench/commands.py [--transactions 1000] [--only paper,normalized]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pymongo
import servers
from overhead import tpcc_command
from pymongo import monitoring

ROOT = Path(__file__).resolve().parents[2]
BENCH = Path(__file__).resolve().parent
RUNNER = ROOT / "runner-image"
VENDORED = BENCH / "pytpcc"
SCALE_FACTOR = 10  # py-tpcc --scalefactor: 10,000 items, 300 customers per district
ITEMS, CUSTOMERS_PER_DISTRICT = 10_000, 300  # the same for ours
TYPES = ("NEW_ORDER", "PAYMENT", "ORDER_STATUS", "DELIVERY", "STOCK_LEVEL")
SEED = 1


@dataclass(frozen=True)
class OptionSet:
    name: str
    schema: str  # denormalized (the paper's), normalized or embedded (the sharded study's)
    find_and_modify: bool = True
    batch_writes: bool = True
    stock_level_in_transaction: bool = False  # the paper's StockLevel runs outside
    pytpcc_as: str | None = None  # py-tpcc has no such set: the name of its set to compare with

    def ours(self) -> dict[str, str]:
        """`--driver-opt`s of our MongoDB driver."""
        return {
            "database": f"tpcc_{self.schema}",
            "schema": self.schema,
            "find_and_modify": str(self.find_and_modify).lower(),
            "batch_writes": str(self.batch_writes).lower(),
            "stock_level_in_transaction": str(self.stock_level_in_transaction).lower(),
            "read_concern": "snapshot",
            "write_concern": "majority",
            "causal": "true",
            "retry_writes": "false",
        }

    def pytpcc(self) -> dict[str, str]:
        """py-tpcc's [mongodb] config section (its batch_writes is set apart: not a config key)."""
        return {
            "name": f"pytpcc_{self.schema}",
            "denormalize": str(self.schema == "denormalized"),
            "findandmodify": str(self.find_and_modify),
            "notransactions": "False",
            "secondary_reads": "False",
            "causal_consistency": "True",
            "retry_writes": "False",
            "write_concern": "majority",
        }


OPTION_SETS = (
    OptionSet("paper", "denormalized"),
    OptionSet("findAndModify off", "denormalized", find_and_modify=False),
    OptionSet("batch off", "denormalized", batch_writes=False),
    # py-tpcc never runs StockLevel in a transaction
    OptionSet("StockLevel in txn", "denormalized", stock_level_in_transaction=True, pytpcc_as="paper"),
    OptionSet("normalized", "normalized"),
    OptionSet("normalized, findAndModify off", "normalized", find_and_modify=False),
    OptionSet("normalized, batch off", "normalized", batch_writes=False),
    OptionSet("embedded", "embedded", pytpcc_as="normalized"),
)
BY_NAME = {o.name: o for o in OPTION_SETS}
PAPER = BY_NAME["paper"]


# --- counting ------------------------------------------------------------------------------


@dataclass
class TypeCounts:
    """What the transactions of one type sent and got back, summed."""

    transactions: int = 0
    committed: int = 0
    commands: int = 0
    docs_read: int = 0
    docs_written: int = 0
    by_command: Counter = field(default_factory=Counter)


def documents_read(name: str, reply: dict) -> int:
    if name == "findAndModify":
        return int(reply.get("value") is not None)
    cursor = reply.get("cursor") or {}
    return len(cursor.get("firstBatch", cursor.get("nextBatch", ())))


def documents_written(name: str, reply: dict) -> int:
    if name in ("insert", "update", "delete"):
        return int(reply.get("n", 0))
    if name == "findAndModify":
        return int((reply.get("lastErrorObject") or {}).get("n", 0))
    return 0


class TransactionCommands(monitoring.CommandListener):
    """Counts the commands started while a transaction of a type runs (`during`), and the
    documents their replies carry. One thread: a reply comes before the next command."""

    def __init__(self) -> None:
        self.counts = {t: TypeCounts() for t in TYPES}
        self._current: TypeCounts | None = None

    @contextlib.contextmanager
    def during(self, txn: str) -> Iterator[TypeCounts]:
        self._current = counts = self.counts[txn]
        counts.transactions += 1
        try:
            yield counts
        finally:
            self._current = None

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        if self._current is not None:
            self._current.commands += 1
            self._current.by_command[event.command_name] += 1

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        if self._current is not None:
            self._current.docs_read += documents_read(event.command_name, event.reply)
            self._current.docs_written += documents_written(event.command_name, event.reply)

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        pass


# --- one tool, one option set (the `measure` subcommand, a process of its own) --------------


def measure_ours(endpoint: str, options: OptionSet, transactions: int, listener: TransactionCommands) -> None:
    sys.path.insert(0, str(RUNNER))
    from tpcc_runner.drivers import make_driver
    from tpcc_runner.drivers.base import ConnectionOptions
    from tpcc_runner.executor import execute_once
    from tpcc_runner.loader import constants_of, require_loaded, scale_of
    from tpcc_runner.workload import DEFAULT_MIX, Terminal, run_constants

    driver = make_driver("mongodb", ConnectionOptions(endpoints=[endpoint], extra=options.ours()))
    driver.connect()
    meta = require_loaded(driver, 1)
    constants = run_constants(random.Random(SEED), constants_of(meta))
    terminal = Terminal(SEED, 0, constants, scale_of(meta), 1, 1, DEFAULT_MIX, paced=False)
    for _ in range(transactions):
        txn = terminal.next_call().txn
        params = terminal.inputs(txn)
        with listener.during(txn) as counts:
            outcome, _, retries, _, error = execute_once(driver, txn, params, 10, time.time() + 600)
        if outcome not in ("committed", "rollbacks") or retries:
            sys.exit(f"ours: {txn} {outcome} after {retries} retries: {error}")
        counts.committed += outcome == "committed"
    driver.close()


def pytpcc_executor(endpoint: str, options: OptionSet) -> tuple[Any, Any]:
    """py-tpcc's MongoDB driver on its loaded database with `options`, and its executor (inputs
    from the random module, seeded with SEED)."""
    import pytpcc_shim

    pytpcc_shim.install()
    sys.path.insert(0, str(VENDORED))
    from drivers.mongodbdriver import MongodbDriver
    from runtime.executor import Executor
    from util import scaleparameters

    random.seed(SEED)  # py-tpcc's inputs draw from the random module
    driver = MongodbDriver(str(VENDORED / "tpcc.sql"))
    driver.batch_writes = options.batch_writes
    config = {"uri": f"mongodb://{endpoint}/?directConnection=true", **options.pytpcc()}
    driver.loadConfig({**config, "reset": False, "load": False, "execute": True, "warehouses": 1})
    return driver, Executor(driver, scaleparameters.makeWithScaleFactor(1, SCALE_FACTOR))


def measure_pytpcc(endpoint: str, options: OptionSet, transactions: int, listener: TransactionCommands) -> None:
    driver, executor = pytpcc_executor(endpoint, options)
    for _ in range(transactions):
        txn, params = executor.doOne()
        with listener.during(txn) as counts:
            value, retries = driver.executeTransaction(txn, params)
        if retries:
            sys.exit(f"py-tpcc: {txn} retried {retries} times")
        counts.committed += value is not None  # None: its NewOrder rolled back


def measure(tool: str, endpoint: str, option_set: str, transactions: int) -> dict:
    options = BY_NAME[option_set]
    listener = TransactionCommands()
    monitoring.register(listener)  # every MongoClient created from now on reports to it
    t0 = time.monotonic()
    (measure_ours if tool == "ours" else measure_pytpcc)(endpoint, options, transactions, listener)
    counts = {t: {**asdict(c), "by_command": dict(c.by_command)} for t, c in listener.counts.items()}
    return {"tool": tool, "options": option_set, "wall_s": round(time.monotonic() - t0, 1), "types": counts}


# --- loads, the runs, the table -------------------------------------------------------------


def load_ours(endpoint: str, schema: str) -> None:
    opts = [f"database=tpcc_{schema}", f"schema={schema}", "write_concern=majority"]
    cmd, env = tpcc_command(
        RUNNER,
        "load",
        *("--db", "mongodb", "--endpoints", endpoint, "--warehouses", "1", "--reset", "--seed", str(SEED)),
        *("--items", str(ITEMS), "--customers-per-district", str(CUSTOMERS_PER_DISTRICT), "--metrics-port", "0"),
        *(arg for o in opts for arg in ("--driver-opt", o)),
    )
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)


def load_pytpcc(endpoint: str, options: OptionSet, work: Path) -> None:
    """py-tpcc's own load (through the shim, as pytpcc_compare.py runs it)."""
    config = {"uri": f"mongodb://{endpoint}/?directConnection=true", **options.pytpcc()}
    cfg = work / f"pytpcc-{options.schema}.cfg"
    cfg.write_text("[mongodb]\n" + "".join(f"{k} = {v}\n" for k, v in config.items()))
    with contextlib.suppress(FileExistsError):
        (work / "drivers").symlink_to(VENDORED / "drivers")  # tpcc.py lists ./drivers
    cmd = [sys.executable, str(BENCH / "pytpcc_shim.py"), "mongodb", "--config", str(cfg), "--warehouses", "1"]
    cmd += ["--clients", "1", "--scalefactor", str(SCALE_FACTOR), "--reset", "--no-execute"]
    subprocess.run(cmd, cwd=work, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def run_measure(tool: str, endpoint: str, options: OptionSet, transactions: int, work: Path) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "measure", tool, endpoint, options.name, str(transactions)]
    done = subprocess.run(cmd, cwd=work, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{tool}, {options.name}: exit {done.returncode}: {done.stderr.strip()[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def per_txn(counts: dict, key: str) -> float | None:
    return counts[key] / counts["transactions"] if counts["transactions"] else None


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _ratio(mine: float | None, theirs: float | None) -> str:
    return "-" if not mine or not theirs else f"{mine / theirs:.2f}"


def table(results: list[tuple[OptionSet, dict, dict]]) -> str:
    lines = [
        "| option set | txn | txns ours / py-tpcc | cmds/txn ours | py-tpcc | ratio | docs read/txn ours | py-tpcc "
        "| docs written/txn ours | py-tpcc |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for options, mine, theirs in results:
        name = options.name if options.pytpcc_as is None else f"{options.name} (py-tpcc: {options.pytpcc_as})"
        for t in (*TYPES, "all"):
            m, p = (_total(r) if t == "all" else r["types"][t] for r in (mine, theirs))
            cmds = per_txn(m, "commands"), per_txn(p, "commands")
            lines.append(
                f"| {name} | {t} | {m['transactions']} / {p['transactions']} | {_fmt(cmds[0])} | {_fmt(cmds[1])} "
                f"| {_ratio(*cmds)} | {_fmt(per_txn(m, 'docs_read'))} | {_fmt(per_txn(p, 'docs_read'))} "
                f"| {_fmt(per_txn(m, 'docs_written'))} | {_fmt(per_txn(p, 'docs_written'))} |"
            )
    return "\n".join(lines)


def _total(result: dict) -> dict:
    keys = ("transactions", "committed", "commands", "docs_read", "docs_written")
    return {k: sum(c[k] for c in result["types"].values()) for k in keys}


def machine(endpoint: str) -> str:
    cpu = next(
        (ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines() if "model name" in ln),
        platform.machine(),
    )
    with pymongo.MongoClient(f"mongodb://{endpoint}/?directConnection=true") as client:
        server = client.admin.command("buildInfo").get("version", "unknown")
    return (
        f"{cpu}, {os.cpu_count()} CPUs, Python {platform.python_version()}, pymongo {pymongo.version}, "
        f"SecantusDB (buildInfo version {server})"
    )


def commit() -> str:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()

    changed = git("status", "--porcelain", "--", "runner-image/tpcc_runner", "runner-image/bench")
    return git("rev-parse", "--short", "HEAD") + (" (with uncommitted changes)" if changed else "")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "measure":
        tool, endpoint, option_set, transactions = sys.argv[2:6]
        print(json.dumps(measure(tool, endpoint, option_set, int(transactions))))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--transactions", type=int, default=1000, help="per tool and option set")
    ap.add_argument("--only", default="", help="option sets, comma-separated (default: all)")
    a = ap.parse_args()
    wanted = [o for o in OPTION_SETS if not a.only or o.name in a.only.split(",")]
    like_of = {o.name: BY_NAME[o.pytpcc_as] if o.pytpcc_as else o for o in wanted}
    work = Path(tempfile.mkdtemp(prefix="tpcc-commands-"))
    results = []
    with servers.secantus(work) as server:
        for schema in sorted({o.schema for o in wanted}):
            load_ours(server.endpoint, schema)
        for schema in sorted({o.schema for o in like_of.values()}):
            load_pytpcc(server.endpoint, OptionSet("load", schema), work)
        theirs_of: dict[str, dict] = {}
        for options in wanted:
            mine = run_measure("ours", server.endpoint, options, a.transactions, work)
            like = like_of[options.name]
            if like.name not in theirs_of:
                theirs_of[like.name] = run_measure("py-tpcc", server.endpoint, like, a.transactions, work)
            results.append((options, mine, theirs_of[like.name]))
            print(json.dumps(mine), json.dumps(theirs_of[like.name]), sep="\n", flush=True)
        described = machine(server.endpoint)
    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, commit {commit()}, {described}; one warehouse "
        f"scaled ({ITEMS:,} items, {CUSTOMERS_PER_DISTRICT} customers per district), one terminal, "
        f"{a.transactions:,} transactions per tool and option set"
    )
    print(table(results))


if __name__ == "__main__":
    main()
