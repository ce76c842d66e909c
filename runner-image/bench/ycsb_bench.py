#!/usr/bin/env python3
"""Benchmark of `tpcc ycsb` itself, against real servers started here (VoltDB, and SecantusDB:
a Python server, so smaller): loads, runs workloads A and C unthrottled, and prints per database
and workload the ops/s, the runner's CPU (its whole process tree: the command, its fork server
and client processes, reaped here as a subreaper) and the database's CPU (its process group,
/proc) per operation and as a share of the machine, side by side. --runner points at another
tree's runner-image to measure its code (e.g. before a change) with this script; --processes
is passed to `tpcc ycsb run` (default: the runner's own, min(threads, CPUs)).

    .venv/bin/python runner-image/bench/ycsb_bench.py [--records 20000] [--threads 8] [--duration 30]
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
from bench import ROOT
from overhead import become_subreaper, group_cpu_seconds, reap_all, tpcc_command


def ycsb(runner: Path, phase: str, db: str, endpoint: str, server_pid: int, *args: str) -> dict:
    """The results document with the runner's and the server's CPU seconds added."""
    out = Path(tempfile.mkstemp(suffix=".json")[1])
    server_before, t0 = group_cpu_seconds(server_pid), time.time()
    cmd, env = tpcc_command(
        runner, "ycsb", phase, "--db", db, "--endpoints", endpoint, "--metrics-port", "0", "--results", str(out), *args
    )
    with tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err, text=True)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.time() - t0
        usages = [usage]
        reap_all(usages, keep=server_pid)  # the fork server and its client processes
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            sys.exit(f"tpcc ycsb {phase} failed: {err.read().strip()[-2000:]}")
    doc = json.loads(out.read_text())
    doc["wall_s"] = wall
    doc["runner_cpu_s"] = sum(u.ru_utime + u.ru_stime for u in usages)
    doc["server_cpu_s"] = group_cpu_seconds(server_pid) - server_before
    return doc


def bench(
    runner: Path, db: str, server: servers.Server, records: int, threads: int, duration: int, processes: list[str]
) -> list[dict]:
    size = ["-p", f"recordcount={records}"]
    endpoint, server_pid = server.endpoint, server.pid
    load = ycsb(runner, "load", db, endpoint, server_pid, "--reset", "--threads", "2", "-p", "batchsize=100", *size)
    rows = []
    for workload in ("a", "c"):
        run = ycsb(
            runner,
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
            *processes,
        )
        rows.append(
            {**figures(db, workload, records, threads, run), "load_records_per_s": round(records / load["wall_s"])}
        )
    return rows


def figures(db: str, workload: str, records: int, threads: int, run: dict) -> dict:
    """What one `tpcc ycsb run` (its document, with ycsb()'s CPU seconds) measured."""
    ops = run["status"]["opsPerSecond"] * run["OVERALL"]["RunTime(ms)"] / 1000
    return {
        "db": db,
        "workload": workload,
        "records": records,
        "threads": threads,
        "processes": run.get("processes", 1),
        "ops_per_s": run["status"]["opsPerSecond"],
        "errors": run["errors"],
        "p99_ms": {op: s["p99Ms"] for op, s in run["status"]["operations"].items()},
        "runner_cpu_ms_per_op": round(1000 * run["runner_cpu_s"] / ops, 4),
        "server_cpu_ms_per_op": round(1000 * run["server_cpu_s"] / ops, 4),
        "runner_machine_share": round(run["runner_cpu_s"] / run["wall_s"] / os.cpu_count(), 2),
        "server_machine_share": round(run["server_cpu_s"] / run["wall_s"] / os.cpu_count(), 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=20000)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--duration", type=int, default=30)
    ap.add_argument("--skip-mongodb", action="store_true")
    ap.add_argument("--processes", type=int, default=None, help="tpcc ycsb run's --processes")
    ap.add_argument(
        "--runner",
        type=Path,
        default=ROOT / "runner-image",
        help="the runner-image directory whose tpcc_runner is measured",
    )
    a = ap.parse_args()
    processes = ["--processes", str(a.processes)] if a.processes else []
    work = Path(tempfile.mkdtemp(prefix="ycsb-bench-"))
    rows = []
    become_subreaper()  # before the servers: the runners' orphaned fork servers come here to be reaped
    with servers.voltdb(work) as volt:
        rows += bench(a.runner, "voltdb", volt, a.records, a.threads, a.duration, processes)
    if not a.skip_mongodb:
        with servers.secantus(work) as sec:
            rows += bench(a.runner, "mongodb", sec, a.records // 4, 4, min(a.duration, 20), processes)
    for r in rows:
        print(json.dumps(r))
    print(
        " | ".join(
            f"{r['db']} {r['workload'].upper()} ({r['processes']} processes): {r['ops_per_s']} ops/s"
            f", runner {r['runner_cpu_ms_per_op']} "
            f"CPU-ms/op, machine: runner {r['runner_machine_share']:.0%} server "
            f"{r['server_machine_share']:.0%}"
            for r in rows
        )
    )


if __name__ == "__main__":
    os.chdir(ROOT)
    main()
