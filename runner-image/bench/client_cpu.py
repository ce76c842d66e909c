#!/usr/bin/env python3
"""Our MongoDB driver's client CPU per transaction, by type, for this tree and a tree before a
change, on one SecantusDB loaded here (one warehouse scaled: 10,000 items, 300 customers per
district; the paper's options but w:1, which changes no command).

One terminal, unpaced, one transaction after another (no conflict, no retry), run by the
runner's own executor (executor.execute_once) in a process of its own per tree and round:
`time.thread_time()` around each transaction (the calling thread's CPU: its commands,
pymongo and our code, not pymongo's monitor threads) and the process's CPU over all of them.
The trees alternate, round after round, on the same data and the same inputs (one seed per
round), because this machine's speed drifts by up to 2x from minute to minute: compare a
round's two rows, then the medians.

    .venv/bin/python runner-image/bench/client_cpu.py --before DIR [--transactions 500] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import servers
from commands import SEED, TYPES, commit, machine
from overhead import tpcc_command

ROOT = Path(__file__).resolve().parents[2]
OPTIONS = {"database": "tpcc", "causal": "true", "retry_writes": "false", "stock_level_in_transaction": "false"}


def measure(runner: str, endpoint: str, transactions: int, seed: int) -> dict:
    """In the tree's own process: the transactions' CPU."""
    sys.path.insert(0, runner)
    from tpcc_runner.drivers import make_driver
    from tpcc_runner.drivers.base import ConnectionOptions
    from tpcc_runner.executor import execute_once
    from tpcc_runner.loader import constants_of, require_loaded, scale_of
    from tpcc_runner.workload import DEFAULT_MIX, Terminal, run_constants

    driver = make_driver("mongodb", ConnectionOptions(endpoints=[endpoint], extra=OPTIONS))
    driver.connect()
    meta = require_loaded(driver, 1)
    constants = run_constants(random.Random(seed), constants_of(meta))
    terminal = Terminal(seed, 0, constants, scale_of(meta), 1, 1, DEFAULT_MIX, paced=False)
    cpu, count = Counter[str](), Counter[str]()
    before = resource.getrusage(resource.RUSAGE_SELF)
    for _ in range(transactions):
        txn = terminal.next_call().txn
        params = terminal.inputs(txn)
        t0 = time.thread_time()
        outcome, _, _, _, error = execute_once(driver, txn, params, 10, time.time() + 600)
        cpu[txn] += time.thread_time() - t0
        count[txn] += 1
        if outcome not in ("committed", "rollbacks"):
            sys.exit(f"{txn}: {outcome}: {error}")
    after = resource.getrusage(resource.RUSAGE_SELF)
    process = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    driver.close()
    return {
        "process_ms": 1000 * process / transactions,
        "thread_ms": 1000 * sum(cpu.values()) / transactions,
        "types_ms": {t: 1000 * cpu[t] / count[t] for t in TYPES if count[t]},
    }


def run_tree(runner: Path, endpoint: str, transactions: int, seed: int) -> dict:
    cmd = [sys.executable, __file__, "measure", str(runner), endpoint, str(transactions), str(seed)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{runner}: exit {done.returncode}: {done.stderr.strip()[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def row(label: str, r: dict) -> str:
    types = " | ".join(f"{r['types_ms'].get(t, 0):.2f}" for t in TYPES)
    return f"| {label} | {r['process_ms']:.3f} | {r['thread_ms']:.3f} | {types} |"


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "measure":
        runner, endpoint, transactions, seed = sys.argv[2:6]
        print(json.dumps(measure(runner, endpoint, int(transactions), int(seed))))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--runner", type=Path, default=ROOT / "runner-image", help="the runner-image measured")
    ap.add_argument("--before", type=Path, required=True, help="the runner-image before a change")
    ap.add_argument("--transactions", type=int, default=500, help="per tree and round")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    trees = {"before": a.before, "now": a.runner}
    results: dict[str, list[dict]] = {label: [] for label in trees}
    lines = []
    with servers.secantus(Path(tempfile.mkdtemp(prefix="tpcc-client-cpu-"))) as server:
        cmd, env = tpcc_command(
            a.runner,
            "load",
            *("--db", "mongodb", "--endpoints", server.endpoint, "--warehouses", "1", "--seed", str(SEED)),
            *("--items", "10000", "--customers-per-district", "300", "--metrics-port", "0"),
            *("--driver-opt", "write_concern=1"),
        )
        subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        loads = [os.getloadavg()[0]]
        for n in range(a.rounds):
            for label, runner in trees.items():
                results[label].append(r := run_tree(runner, server.endpoint, a.transactions, SEED + n))
                lines.append(row(f"round {n + 1}, {label}", r))
            loads.append(os.getloadavg()[0])
        described = machine(server.endpoint)
    for label in trees:
        runs = results[label]
        median = {
            "process_ms": statistics.median(r["process_ms"] for r in runs),
            "thread_ms": statistics.median(r["thread_ms"] for r in runs),
            "types_ms": {t: statistics.median(r["types_ms"].get(t, 0) for r in runs) for t in TYPES},
        }
        lines.append(row(f"median, {label}", median))
    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, commit {commit()}, before {a.before}, {described}; "
        f"{a.transactions} transactions a tree and round, load average {', '.join(f'{x:.2f}' for x in loads)}"
    )
    print("| run | process CPU ms/txn | thread CPU ms/txn | " + " | ".join(TYPES) + " (thread ms) |")
    print("|---|---|---|" + "---|" * len(TYPES))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
