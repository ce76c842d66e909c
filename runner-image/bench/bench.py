#!/usr/bin/env python3
"""Benchmark of the runner itself, against real servers started here: loads and runs VoltDB
(and SecantusDB, smaller: it is a Python server) and prints, per database and as the last
line, the load rate (rows/s), tpmC, and the runner's and the server's CPU per committed
transaction side by side. The runner's is its whole process tree: `wait4` of the command and,
as a child subreaper, of every process it left (the fork server and the clients forked from it
are not waited for by `tpcc run` itself, so RUSAGE_CHILDREN alone misses them); the server's
is its process's from /proc (overhead.py's helpers).

    .venv/bin/python runner-image/bench/bench.py [--warehouses 1] [--clients 8] [--duration 60]
        [--rounds 1] [--runner DIR] [--skip-mongodb]

--runner DIR measures another tree's runner-image beside this one on the same VoltDB (the
"before" of a change): the trees take turns, round by round, each round in the other order,
and the last lines are each tree's median. This machine's speed moves by up to 2x from one
minute to the next, so one run a tree does not tell a change of a fifth.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

import servers
from growth import commit, machine
from overhead import become_subreaper, process_cpu, reap_all, tpcc_command

ROOT = Path(__file__).resolve().parents[2]
THIS_RUNNER = ROOT / "runner-image"


def tpcc(server_pid: int, *args: str, runner: Path = THIS_RUNNER) -> tuple[dict, float, float]:
    """(JSON output, wall seconds, CPU seconds of the runner's whole process tree; the server,
    adopted by this subreaper when it started after the first bench, is left running)."""
    t0 = time.time()
    command, env = tpcc_command(runner, *args, "--metrics-port", "0")
    with tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=err, text=True, env=env)
        out = p.stdout.read() if p.stdout else ""
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.time() - t0
        usages = [usage]
        reap_all(usages, keep=server_pid)
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            sys.exit(f"tpcc {args[0]} failed: {err.read().strip()[-2000:]}")
    return json.loads(out), wall, sum(u.ru_utime + u.ru_stime for u in usages)


def load(db: str, server: servers.Server, load_args: list[str]) -> tuple[dict, float]:
    # after the server's start: its processes are orphans this process must not wait for
    become_subreaper()
    loaded, load_wall, _ = tpcc(server.pid, "load", "--db", db, "--endpoints", server.endpoint, *load_args, "--reset")
    return loaded, load_wall


def bench(
    db: str, server: servers.Server, loaded: tuple[dict, float], run_args: list[str], runner: Path = THIS_RUNNER
) -> dict:
    (loaded_rows, load_wall) = loaded
    server_before = process_cpu(server.pid)
    result, _, run_cpu = tpcc(server.pid, "run", "--db", db, "--endpoints", server.endpoint, *run_args, runner=runner)
    server_cpu = process_cpu(server.pid) - server_before
    committed_all = sum(t["committed"] for t in result["transactions"].values())
    measured = result["measured_seconds"]
    warmup = result["warmup_seconds"]
    # CPU covers warmup + measured window + start-up; scale committed to the same span
    approx_committed = committed_all * (measured + warmup) / measured
    return {
        "db": db,
        "tree": "this" if runner == THIS_RUNNER else str(runner),
        "load_rows": loaded_rows["rows"],
        "load_seconds": round(load_wall, 1),
        "load_rows_per_s": round(loaded_rows["rows"] / load_wall),
        "tpmC": result["tpmC"],
        "efficiency": result["efficiency"],
        "committed_per_s": round(committed_all / measured, 1),
        "runner_cpu_s": round(run_cpu, 1),
        "runner_cpu_ms_per_txn": round(1000 * run_cpu / max(approx_committed, 1), 3),
        "server_cpu_s": round(server_cpu, 1),
        "server_cpu_ms_per_txn": round(1000 * server_cpu / max(approx_committed, 1), 3),
        "runner_share_of_cpu": round(run_cpu / max(run_cpu + server_cpu, 1e-9), 2),
        "new_order_p99_ms": result["transactions"]["NEW_ORDER"]["latency_ms"]["p99"],
        "clients": result["clients"],
        "warehouses": result["warehouses"],
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--warehouses", type=int, default=1)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--duration", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=1, help="VoltDB runs of each tree, taking turns")
    ap.add_argument("--runner", type=Path, help="another tree's runner-image, measured beside this one on VoltDB")
    ap.add_argument("--skip-mongodb", action="store_true")
    a = ap.parse_args()
    print(f"{machine()}, commit {commit('runner-image')}", flush=True)
    work = Path(tempfile.mkdtemp(prefix="tpcc-bench-"))
    trees = [THIS_RUNNER, *([a.runner.resolve()] if a.runner else [])]
    out = []
    with servers.voltdb(work) as volt:
        loaded = load("voltdb", volt, ["--warehouses", str(a.warehouses), "--workers", "2"])
        run_args = ["--warehouses", str(a.warehouses), "--clients", str(a.clients)]
        run_args += ["--duration", str(a.duration), "--warmup", "10"]
        for n in range(a.rounds):
            for runner in trees if n % 2 == 0 else trees[::-1]:
                out.append({**bench("voltdb", volt, loaded, run_args, runner), "round": n + 1})
                print(json.dumps(out[-1]), flush=True)
    if not a.skip_mongodb:
        with servers.secantus(work) as sec:
            scaled = ["--items", "10000", "--customers-per-district", "300"]
            loaded = load("mongodb", sec, ["--warehouses", "1", "--workers", "2", *scaled])
            run_args = ["--warehouses", "1", "--clients", "4", "--duration", str(min(a.duration, 30)), "--warmup", "5"]
            out.append(bench("mongodb", sec, loaded, run_args))
            print(json.dumps(out[-1]), flush=True)
    for db in dict.fromkeys(r["db"] for r in out):
        for tree in dict.fromkeys(r["tree"] for r in out if r["db"] == db):
            runs = [r for r in out if r["db"] == db and r["tree"] == tree]
            print(
                f"{db} ({tree}{f', median of {len(runs)}' if len(runs) > 1 else ''}): "
                f"load {runs[0]['load_rows_per_s']} rows/s, tpmC {round(median(r['tpmC'] for r in runs))}, "
                f"runner {round(median(r['runner_cpu_ms_per_txn'] for r in runs), 3)} / "
                f"server {round(median(r['server_cpu_ms_per_txn'] for r in runs), 3)} CPU-ms/txn "
                f"(runner {round(100 * median(r['runner_share_of_cpu'] for r in runs))} % of the run's CPU)"
            )


if __name__ == "__main__":
    os.chdir(ROOT)
    main()
