#!/usr/bin/env python3
"""Benchmark of `tpcc ycsb` itself, against real servers started here (VoltDB, and SecantusDB:
a Python server, so smaller): loads, runs workloads A and C unthrottled, and prints per database
and workload the ops/s, the runner's CPU (its process, getrusage) and the database's CPU (its
process group, /proc) per operation and as a share of the machine, side by side.

    .venv/bin/python runner-image/bench/ycsb_bench.py [--records 20000] [--threads 8] [--duration 30]
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
from bench import ROOT

TICKS = os.sysconf("SC_CLK_TCK")


def group_cpu_seconds(pid: int) -> float:
    """CPU seconds of every process in pid's process group (the server and its children)."""
    group, total = os.getpgid(pid), 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == group:  # pgrp; utime, stime follow at 11, 12
                total += int(fields[11]) + int(fields[12])
    return total / TICKS


def ycsb(phase: str, db: str, endpoint: str, server_pid: int, *args: str) -> dict:
    """The results document with the runner's and the server's CPU seconds added."""
    out = Path(tempfile.mkstemp(suffix=".json")[1])
    before, server_before, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), group_cpu_seconds(server_pid), time.time()
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "tpcc_runner.cli",
            "ycsb",
            phase,
            "--db",
            db,
            "--endpoints",
            endpoint,
            "--metrics-port",
            "0",
            "--results",
            str(out),
            *args,
        ],
        capture_output=True,
        text=True,
    )
    if p.returncode != 0:
        sys.exit(f"tpcc ycsb {phase} failed: {p.stderr.strip()[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    doc = json.loads(out.read_text())
    doc["wall_s"] = time.time() - t0
    doc["runner_cpu_s"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    doc["server_cpu_s"] = group_cpu_seconds(server_pid) - server_before
    return doc


def bench(db: str, endpoint: str, server_pid: int, records: int, threads: int, duration: int) -> list[dict]:
    size = ["-p", f"recordcount={records}"]
    load = ycsb("load", db, endpoint, server_pid, "--reset", "--threads", "2", "-p", "batchsize=100", *size)
    rows = []
    for workload in ("a", "c"):
        run = ycsb(
            "run",
            db,
            endpoint,
            server_pid,
            "--workload",
            workload,
            *size,
            "-p",
            "operationcount=0",
            "--duration",
            str(duration),
            "--threads",
            str(threads),
        )
        ops = run["status"]["opsPerSecond"] * run["OVERALL"]["RunTime(ms)"] / 1000
        rows.append(
            {
                "db": db,
                "workload": workload,
                "records": records,
                "threads": threads,
                "load_records_per_s": round(records / load["wall_s"]),
                "ops_per_s": run["status"]["opsPerSecond"],
                "errors": run["errors"],
                "p99_ms": {op: s["p99Ms"] for op, s in run["status"]["operations"].items()},
                "runner_cpu_ms_per_op": round(1000 * run["runner_cpu_s"] / ops, 3),
                "runner_machine_share": round(run["runner_cpu_s"] / run["wall_s"] / os.cpu_count(), 2),
                "server_machine_share": round(run["server_cpu_s"] / run["wall_s"] / os.cpu_count(), 2),
            }
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=20000)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--duration", type=int, default=30)
    ap.add_argument("--skip-mongodb", action="store_true")
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ycsb-bench-"))
    rows = []
    with servers.voltdb(work) as volt:
        rows += bench("voltdb", volt.endpoint, volt.pid, a.records, a.threads, a.duration)
    if not a.skip_mongodb:
        with servers.secantus(work) as sec:
            rows += bench("mongodb", sec.endpoint, sec.pid, a.records // 4, 4, min(a.duration, 20))
    for r in rows:
        print(json.dumps(r))
    print(
        " | ".join(
            f"{r['db']} {r['workload'].upper()}: {r['ops_per_s']} ops/s, runner {r['runner_cpu_ms_per_op']} "
            f"CPU-ms/op, machine: runner {r['runner_machine_share']:.0%} server "
            f"{r['server_machine_share']:.0%}"
            for r in rows
        )
    )


if __name__ == "__main__":
    os.chdir(ROOT)
    main()
