#!/usr/bin/env python3
"""Benchmark of the runner itself, against real servers started here: loads and runs VoltDB
(and SecantusDB, smaller: it is a Python server) and prints, per database and as the last
line, the load rate (rows/s), tpmC, and the runner's and the server's CPU per committed
transaction side by side. The runner's is its whole process tree: `wait4` of the command and,
as a child subreaper, of every process it left (the fork server and the clients forked from it
are not waited for by `tpcc run` itself, so RUSAGE_CHILDREN alone misses them); the server's
is its process's from /proc (overhead.py's helpers).

    .venv/bin/python runner-image/bench/bench.py [--warehouses 1] [--clients 8] [--duration 60]
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

import servers
from overhead import become_subreaper, process_cpu, reap_all

ROOT = Path(__file__).resolve().parents[2]


def tpcc(server_pid: int, *args: str) -> tuple[dict, float, float]:
    """(JSON output, wall seconds, CPU seconds of the runner's whole process tree; the server,
    adopted by this subreaper when it started after the first bench, is left running)."""
    t0 = time.time()
    with tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen(
            [sys.executable, "-m", "tpcc_runner.cli", *args, "--metrics-port", "0"],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )
        out = p.stdout.read() if p.stdout else ""
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.time() - t0
        usages = [usage]
        reap_all(usages, keep=server_pid)
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            sys.exit(f"tpcc {args[0]} failed: {err.read().strip()[-2000:]}")
    return json.loads(out), wall, sum(u.ru_utime + u.ru_stime for u in usages)


def bench(db: str, server: servers.Server, load_args: list[str], run_args: list[str], driver_opts: list[str]) -> dict:
    # after the server's start: its processes are orphans this process must not wait for
    become_subreaper()
    common = ["--db", db, "--endpoints", server.endpoint, *driver_opts]
    loaded, load_wall, _ = tpcc(server.pid, "load", *common, *load_args, "--reset")
    server_before = process_cpu(server.pid)
    result, _, run_cpu = tpcc(server.pid, "run", *common, *run_args)
    server_cpu = process_cpu(server.pid) - server_before
    committed_all = sum(t["committed"] for t in result["transactions"].values())
    measured = result["measured_seconds"]
    warmup = result["warmup_seconds"]
    # CPU covers warmup + measured window + start-up; scale committed to the same span
    approx_committed = committed_all * (measured + warmup) / measured
    return {
        "db": db,
        "load_rows": loaded["rows"],
        "load_seconds": round(load_wall, 1),
        "load_rows_per_s": round(loaded["rows"] / load_wall),
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
    ap.add_argument("--skip-mongodb", action="store_true")
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tpcc-bench-"))
    out = []
    with servers.voltdb(work) as volt:
        out.append(
            bench(
                "voltdb",
                volt,
                ["--warehouses", str(a.warehouses), "--workers", "2"],
                [
                    "--warehouses",
                    str(a.warehouses),
                    "--clients",
                    str(a.clients),
                    "--duration",
                    str(a.duration),
                    "--warmup",
                    "10",
                ],
                [],
            )
        )
    if not a.skip_mongodb:
        with servers.secantus(work) as sec:
            out.append(
                bench(
                    "mongodb",
                    sec,
                    ["--warehouses", "1", "--workers", "2", "--items", "10000", "--customers-per-district", "300"],
                    ["--warehouses", "1", "--clients", "4", "--duration", str(min(a.duration, 30)), "--warmup", "5"],
                    [],
                )
            )
    for r in out:
        print(json.dumps(r))
    print(
        " | ".join(
            f"{r['db']}: load {r['load_rows_per_s']} rows/s, tpmC {r['tpmC']}, "
            f"runner {r['runner_cpu_ms_per_txn']} / server {r['server_cpu_ms_per_txn']} CPU-ms/txn "
            f"(runner {round(100 * r['runner_share_of_cpu'])} % of the run's CPU)"
            for r in out
        )
    )


if __name__ == "__main__":
    os.chdir(ROOT)
    main()
