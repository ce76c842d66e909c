#!/usr/bin/env python3
"""Where our MongoDB client's CPU goes, per transaction: one terminal of the runner's own
executor (executor.terminal_step: the inputs, the transaction, the ledger record, the
histograms and interval counts, the interval report pickled as a client process sends it),
unpaced, against a SecantusDB loaded here (one warehouse scaled: 10,000 items, 300 customers
per district), with the driver's defaults (what `tpcc run` uses) and a durability ledger.

Two passes over the same number of transactions, one seed each:
- unprofiled: time.thread_time() around each step, by type, the process's CPU over all, and the
  garbage collector's passes and their CPU (what a gc.freeze() before the fork could save);
- under cProfile, timed by the thread's CPU clock: the top functions by own and by cumulative
  time, and the split of the profiled time between pymongo (pymongo and bson), the tool
  (tpcc_runner and tpcc_contract; py-tpcc's code for py-tpcc) and elsewhere (hdrh, this bench,
  py-tpcc's shim). A built-in or standard-library function's time goes to whoever called it
  (by cProfile's per-caller times), so a socket read that pymongo makes counts as pymongo's, a
  hashlib call our ledger makes counts as ours; and the function calls a transaction makes in
  each (deterministic for the same inputs and server answers, where the machine's speed is
  not: compare trees by them first).
cProfile adds a fixed cost to every Python call, so the split overstates code made of many
small calls; the unprofiled pass's figures are the CPU itself.

With --pytpcc, py-tpcc's executor and driver (as commands.py runs them, through its shim) get
the same two passes in a process of their own, on py-tpcc's load on the same server; both tools
then use the VLDB paper's options (commands.PAPER), and py-tpcc keeps no ledger or histograms.

    .venv/bin/python runner-image/bench/client_profile.py [--transactions 2000] [--top 25]
        [--pytpcc] [--no-ledger] [--driver-opt key=value ...]
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import os
import pickle
import pstats
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import servers
from commands import PAPER, SEED, TYPES, commit, load_pytpcc, machine, pytpcc_executor
from overhead import tpcc_command

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "runner-image"))

from tpcc_runner.drivers import make_driver  # noqa: E402
from tpcc_runner.drivers.base import ConnectionOptions  # noqa: E402
from tpcc_runner.executor import Accumulator, RunPlan, Window, terminal_step  # noqa: E402
from tpcc_runner.loader import constants_of, require_loaded, scale_of  # noqa: E402
from tpcc_runner.workload import DEFAULT_MIX, Call, Terminal, run_constants  # noqa: E402

REPORT_SECONDS = 1.0  # a client process reports its interval once a second (executor.REPORT_INTERVAL)
CATEGORIES = ("pymongo", "the tool", "elsewhere")  # the tool: tpcc_runner, or py-tpcc with --pytpcc
BENCH = Path(__file__).resolve().parent
Func = tuple[str, int, str]  # pstats' (file, line, name)


class TypedTerminal(Terminal):
    """A terminal that says which type its last transaction was."""

    last = ""

    def next_call(self) -> Call:
        call = super().next_call()
        self.last = call.txn
        return call


def category_of_file(path: str) -> str | None:
    """The category of a function by where it is defined (CATEGORIES); None: built-in or
    standard library, whose time goes to its callers."""
    parts = Path(path).parts
    if "pymongo" in parts or "bson" in parts:
        return "pymongo"
    if "tpcc_runner" in parts or "tpcc_contract" in parts or Path(path).is_relative_to(BENCH / "pytpcc"):
        return "the tool"
    if path.startswith("~") or "site-packages" not in parts and Path(path).parent != BENCH:
        return None  # {built-in method ...} or the standard library
    return "elsewhere"  # hdrh, this bench, py-tpcc's shim


def split(stats: pstats.Stats) -> dict[str, tuple[float, float]]:
    """Own time and calls of every function by category, a standard-library or built-in function's
    shared among its callers' categories in proportion to the time each call path spent in it."""
    table = stats.stats  # type: ignore[attr-defined]  # func -> (cc, nc, tt, ct, callers)
    shares: dict[Func, dict[str, float]] = {}

    def share_of(func: Func, seen: frozenset[Func]) -> dict[str, float]:
        """The category fractions of a function's own time."""
        if func in shares:
            return shares[func]
        own = category_of_file(func[0])
        if own is not None:
            return {own: 1.0}
        callers = table[func][4] if func in table else {}
        weights: Counter[str] = Counter()
        for caller, (_, _, tt, _) in callers.items():
            if caller in seen:
                continue
            for cat, f in share_of(caller, seen | {func}).items():
                weights[cat] += tt * f
        total = sum(weights.values())
        result = {cat: w / total for cat, w in weights.items()} if total else {"elsewhere": 1.0}
        shares[func] = result
        return result

    out = {c: [0.0, 0.0] for c in CATEGORIES}  # own seconds, calls
    for func, (_, nc, tt, _, _) in table.items():
        for cat, f in share_of(func, frozenset()).items():
            out[cat][0] += tt * f
            out[cat][1] += nc * f
    return {c: (t, n) for c, (t, n) in out.items()}


def top(stats: pstats.Stats, key: int, n: int, transactions: int, only: str | None = None) -> list[str]:
    """The n functions with the most own (key 2) or cumulative (key 3) time, in us a
    transaction; only: those of one category."""
    table = stats.stats  # type: ignore[attr-defined]
    rows = sorted(
        ((f, v) for f, v in table.items() if only is None or category_of_file(f[0]) == only),
        key=lambda kv: kv[1][key],
        reverse=True,
    )[:n]
    lines = []
    for (path, line, name), (_, nc, tt, ct, _) in rows:
        where = name if path.startswith("~") else f"{shorten(path)}:{line}({name})"
        lines.append(
            f"| {where} | {nc / transactions:.1f} | {1e6 * tt / transactions:.0f} | {1e6 * ct / transactions:.0f} |"
        )
    return lines


def shorten(path: str) -> str:
    parts = Path(path).parts
    for anchor in ("site-packages", "runner-image", "lib"):
        if anchor in parts:
            return "/".join(parts[parts.index(anchor) + 1 :])
    return path


class Pass:
    """One terminal over a connected driver, its accumulator and window."""

    def __init__(self, driver, seed: int, ledger: bool):
        meta = require_loaded(driver, 1)
        constants = run_constants(random.Random(seed), constants_of(meta))
        self.terminal = TypedTerminal(seed, 0, constants, scale_of(meta), 1, 1, DEFAULT_MIX, paced=False)
        self.plan = RunPlan(
            "mongodb", driver.options, 1, scale_of(meta), constants, DEFAULT_MIX, 1, 1, seed=seed, ledger=ledger
        )
        now = time.time()
        self.window = Window(now, now, now + 24 * 3600)
        self.acc = Accumulator(self.window)
        self.driver = driver
        self.errors_in_a_row = 0
        self.next_report = time.monotonic() + REPORT_SECONDS
        self.report_bytes = 0

    def step(self) -> str:
        self.errors_in_a_row = terminal_step(
            self.plan, self.terminal, self.driver, self.acc, self.window, self.errors_in_a_row
        )
        if time.monotonic() >= self.next_report:
            self.report()
        return self.terminal.last

    def report(self) -> None:
        """What the client process puts on its queue each second (pickled by multiprocessing)."""
        self.report_bytes += len(pickle.dumps(self.acc.take()))
        self.next_report = time.monotonic() + REPORT_SECONDS


class GarbageCollections:
    """The cyclic garbage collector's passes while installed (gc.callbacks), and their CPU: what
    gc.freeze() before the client processes' fork could save at most."""

    def __init__(self) -> None:
        self.count, self.seconds, self._start = [0, 0, 0], 0.0, 0.0

    def __call__(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._start = time.thread_time()
        else:
            self.count[info["generation"]] += 1
            self.seconds += time.thread_time() - self._start

    def __enter__(self) -> GarbageCollections:
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self)


def timed_pass(driver, transactions: int, seed: int, ledger: bool) -> dict:
    run = Pass(driver, seed, ledger)
    cpu, count = Counter[str](), Counter[str]()
    before = resource.getrusage(resource.RUSAGE_SELF)
    with GarbageCollections() as collections:
        for _ in range(transactions):
            t0 = time.thread_time()
            txn = run.step()
            cpu[txn] += time.thread_time() - t0
            count[txn] += 1
    run.report()
    after = resource.getrusage(resource.RUSAGE_SELF)
    outcomes = {t: {k: v for k, v in st.counts.items() if v} for t, st in run.acc.measured.items()}
    return {
        "process_ms": 1000 * (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) / transactions,
        "thread_ms": 1000 * sum(cpu.values()) / transactions,
        "types_ms": {t: 1000 * cpu[t] / count[t] for t in TYPES if count[t]},
        "count": dict(count),
        "outcomes": outcomes,
        "gc": {"collections": collections.count, "ms": 1000 * collections.seconds},
    }


def profiled_pass(driver, transactions: int, seed: int, ledger: bool) -> pstats.Stats:
    run = Pass(driver, seed, ledger)
    profile = cProfile.Profile(time.thread_time_ns, 1e-9)  # CPU, not the wait for the server
    profile.enable()
    for _ in range(transactions):
        run.step()
    run.report()
    profile.disable()
    return pstats.Stats(profile)


def pytpcc_passes(endpoint: str, transactions: int, stats_file: str) -> dict:
    """In a process of its own: py-tpcc's executor and driver (as commands.py runs them), the
    timed pass and the profiled one; the profile is written to stats_file."""
    driver, executor = pytpcc_executor(endpoint, PAPER)

    def step() -> str:
        txn, params = executor.doOne()
        driver.executeTransaction(txn, params)
        return str(txn)

    cpu, count = Counter[str](), Counter[str]()
    for _ in range(transactions):
        t0 = time.thread_time()
        txn = step()
        cpu[txn] += time.thread_time() - t0
        count[txn] += 1
    profile = cProfile.Profile(time.thread_time_ns, 1e-9)
    profile.enable()
    for _ in range(transactions):
        step()
    profile.disable()
    profile.dump_stats(stats_file)
    return {
        "thread_ms": 1000 * sum(cpu.values()) / transactions,
        "types_ms": {t: 1000 * cpu[t] / count[t] for t in TYPES if count[t]},
        "count": dict(count),
    }


def print_profile(title: str, stats: pstats.Stats, n: int, top_n: int) -> None:
    total = stats.total_tt  # type: ignore[attr-defined]
    parts = split(stats)
    calls = sum(c for _, c in parts.values())
    print(f"\n{title}, profiled: {1000 * total / n:.3f} ms and {calls / n:,.0f} function calls a transaction")
    print("| | " + " | ".join(CATEGORIES) + " |")
    print("|---|" + "---|" * len(CATEGORIES))
    print("| own time | " + " | ".join(f"{100 * parts[c][0] / total:.1f} %" for c in CATEGORIES) + " |")
    print("| calls a transaction | " + " | ".join(f"{parts[c][1] / n:,.0f}" for c in CATEGORIES) + " |")
    for by, key, only in (("own", 2, None), ("cumulative", 3, None), ("own", 2, "the tool")):
        print(f"\n{title}: top {top_n}{' of ' + only if only else ''} by {by} time")
        print("| function | calls/txn | own us/txn | cumulative us/txn |")
        print("|---|---|---|---|")
        print("\n".join(top(stats, key, top_n, n, only)))


def timed_row(r: dict) -> str:
    types = " | ".join(f"{r['types_ms'].get(t, 0):.3f}" for t in TYPES)
    return f"| {r.get('process_ms', float('nan')):.3f} | {r['thread_ms']:.3f} | {types} |"


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "pytpcc-passes":
        endpoint, transactions, stats_file = sys.argv[2:5]
        print(json.dumps(pytpcc_passes(endpoint, int(transactions), stats_file)))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--transactions", type=int, default=2000, help="in each of the two passes")
    ap.add_argument("--top", type=int, default=25, help="functions listed by own and by cumulative time")
    ap.add_argument(
        "--pytpcc",
        action="store_true",
        help="profile py-tpcc's executor and driver too (its own load on the same server), both with "
        "the VLDB paper's options (commands.PAPER; ours' unless --driver-opt)",
    )
    ap.add_argument("--no-ledger", action="store_true", help="without the durability ledger's records")
    ap.add_argument("--driver-opt", action="append", default=[], metavar="KEY=VALUE", help="as `tpcc run`'s")
    a = ap.parse_args()
    extra = dict(o.split("=", 1) for o in a.driver_opt)
    if a.pytpcc and not extra:
        extra = {k: v for k, v in PAPER.ours().items() if k != "database"}
    ledger = not a.no_ledger
    work = Path(tempfile.mkdtemp(prefix="tpcc-client-profile-"))
    theirs = None
    with servers.secantus(work) as server:
        cmd, env = tpcc_command(
            ROOT / "runner-image",
            "load",
            *("--db", "mongodb", "--endpoints", server.endpoint, "--warehouses", "1", "--seed", str(SEED)),
            *("--items", "10000", "--customers-per-district", "300", "--metrics-port", "0"),
            *("--driver-opt", "write_concern=1"),
        )
        subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        loads = [os.getloadavg()[0]]
        driver = make_driver("mongodb", ConnectionOptions(endpoints=[server.endpoint], extra=extra))
        driver.connect()
        timed = timed_pass(driver, a.transactions, SEED, ledger)
        loads.append(os.getloadavg()[0])
        stats = profiled_pass(driver, a.transactions, SEED + 1, ledger)
        loads.append(os.getloadavg()[0])
        driver.close()
        if a.pytpcc:
            load_pytpcc(server.endpoint, PAPER, work)
            stats_file = str(work / "pytpcc.prof")
            cmd = [sys.executable, __file__, "pytpcc-passes", server.endpoint, str(a.transactions), stats_file]
            done = subprocess.run(cmd, cwd=work, capture_output=True, text=True)
            if done.returncode != 0:
                sys.exit(f"py-tpcc: exit {done.returncode}: {done.stderr.strip()[-3000:]}")
            theirs = (json.loads(done.stdout.strip().splitlines()[-1]), pstats.Stats(stats_file))
            loads.append(os.getloadavg()[0])
        described = machine(server.endpoint)
    n = a.transactions
    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, commit {commit()}, {described}; "
        f"{n} transactions a pass, one terminal, our driver options {extra or 'the defaults'}, "
        f"ledger {'on' if ledger else 'off'}, load average {', '.join(f'{x:.2f}' for x in loads)}"
    )
    print(f"\nunprofiled: transactions {timed['count']}, outcomes {timed['outcomes']}")
    collected = timed["gc"]
    print(
        f"garbage collections (generations 0, 1, 2): {collected['collections']}, {collected['ms']:.1f} ms, "
        f"{100 * collected['ms'] / (n * timed['thread_ms']):.2f} % of the pass's thread CPU"
    )
    print("| tool | process CPU ms/txn | thread CPU ms/txn | " + " | ".join(TYPES) + " (thread ms) |")
    print("|---|---|---|" + "---|" * len(TYPES))
    print("| ours " + timed_row(timed))
    if theirs:
        print("| py-tpcc " + timed_row(theirs[0]))
    print_profile("ours", stats, n, a.top)
    if theirs:
        print_profile("py-tpcc", theirs[1], n, a.top)


if __name__ == "__main__":
    main()
