#!/usr/bin/env python3
"""Benchmark of the runner itself, against real servers started here: loads and runs VoltDB
(and SecantusDB, smaller: it is a Python server) and prints, per database and as the last
line, the load rate (rows/s), tpmC, and the runner's CPU seconds per committed transaction
(the runner's own processes, measured with getrusage over the `tpcc run` child tree).

    .venv/bin/python runner-image/bench/bench.py [--warehouses 1] [--clients 8] [--duration 60]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import servers

ROOT = Path(__file__).resolve().parents[2]


def tpcc(*args: str) -> tuple[dict, float, float]:
    """(JSON output, wall seconds, CPU seconds of the runner process tree)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.time()
    p = subprocess.run(
        [sys.executable, "-m", "tpcc_runner.cli", *args, "--metrics-port", "0"], capture_output=True, text=True
    )
    wall = time.time() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit(f"tpcc {args[0]} failed: {p.stderr.strip()[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return json.loads(p.stdout), wall, cpu


def bench(db: str, endpoint: str, load_args: list[str], run_args: list[str], driver_opts: list[str]) -> dict:
    common = ["--db", db, "--endpoints", endpoint, *driver_opts]
    loaded, load_wall, _ = tpcc("load", *common, *load_args, "--reset")
    result, _, run_cpu = tpcc("run", *common, *run_args)
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
                volt.endpoint,
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
                    sec.endpoint,
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
            f"runner {r['runner_cpu_ms_per_txn']} CPU-ms/txn"
            for r in out
        )
    )


if __name__ == "__main__":
    os.chdir(ROOT)
    main()
