#!/usr/bin/env python3
"""How `tpcc ycsb run` scales with its threads (issue 43 §3): ops/s and the runner's CPU per
operation (its whole process tree, as ycsb_bench.py counts it) beside the server's, at 1, 8, 32
and 64 threads, workloads A and C, short unthrottled runs, on a one-node VoltDB 10.1.1 and on
SecantusDB (the MongoDB wire server; a Python server, so fewer records). One server at a time,
loaded once, every thread count run against the same records. The runner's own defaults
otherwise (client processes: min(threads, CPUs)). The goal: the runner's CPU per operation at
the most threads no more than 10 % above its least (it may fall: deeper pipelines).

    .venv/bin/python runner-image/bench/ycsb_growth.py [--threads 1,8,32,64] [--duration 10] [--only voltdb|mongodb]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import growth
import servers
from overhead import become_subreaper, reap_all
from ycsb_bench import figures, ycsb

ROOT = Path(__file__).resolve().parents[2]
RUNNER = ROOT / "runner-image"
SERVERS = {"voltdb": (servers.voltdb, 20000), "mongodb": (servers.secantus, 5000)}  # and their records


def curve(db: str, server: servers.Server, records: int, threads: list[int], duration: int) -> Iterator[dict]:
    size = ["-p", f"recordcount={records}"]
    ycsb(RUNNER, "load", db, server.endpoint, server.pid, "--reset", "--threads", "2", "-p", "batchsize=100", *size)
    for workload in ("a", "c"):
        for n in threads:
            run = ycsb(
                RUNNER,
                "run",
                db,
                server.endpoint,
                server.pid,
                *("--workload", workload, *size, "-p", "operationcount=0"),
                *("--duration", str(duration), "--threads", str(n)),
            )
            yield {**figures(db, workload, records, n, run), "load_average": growth.load_average()}


def table(rows: list[dict]) -> Iterator[str]:
    yield (
        "| database | workload | threads | processes | ops/s | runner CPU-ms/op | server CPU-ms/op "
        "| machine: runner / server | errors |"
    )
    yield "|---|---|---|---|---|---|---|---|---|"
    for r in rows:
        yield (
            f"| {r['db']} | {r['workload'].upper()} | {r['threads']} | {r['processes']} | {r['ops_per_s']:,.0f} "
            f"| {r['runner_cpu_ms_per_op']} | {r['server_cpu_ms_per_op']} "
            f"| {r['runner_machine_share']:.0%} / {r['server_machine_share']:.0%} | {r['errors']} |"
        )


def goals(rows: list[dict]) -> Iterator[str]:
    """Per database and workload: the runner's CPU per operation at the most threads no more
    than 10 % above its least at any thread count."""
    for db, workload in sorted({(r["db"], r["workload"]) for r in rows}):
        mine = sorted((r for r in rows if (r["db"], r["workload"]) == (db, workload)), key=lambda r: r["threads"])
        threads = f"{mine[0]['threads']} to {mine[-1]['threads']} threads"
        yield growth.not_worse(
            f"{db} {workload.upper()} runner CPU-ms per operation, {threads}",
            [r["runner_cpu_ms_per_op"] for r in mine],
            0.1,
            higher_is_better=False,
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", default="1,8,32,64", help="the thread counts, comma-separated")
    ap.add_argument("--duration", type=int, default=10, help="seconds of each run")
    ap.add_argument("--only", choices=tuple(SERVERS), default=None)
    a = ap.parse_args()
    threads = [int(n) for n in a.threads.split(",")]
    work = Path(tempfile.mkdtemp(prefix="ycsb-growth-"))
    become_subreaper()  # before the servers: the runners' orphaned fork servers come here to be reaped
    print(f"machine: {growth.machine()}; commit {growth.commit('runner-image')}", flush=True)
    rows: list[dict] = []
    for db, (start, records) in SERVERS.items():
        if a.only not in (None, db):
            continue
        with start(work / db) as server:
            for row in curve(db, server, records, threads, a.duration):
                rows.append(row)
                print(json.dumps(row), flush=True)
        reap_all([])  # the stopped server, adopted by this subreaper
    print(f"done: {growth.load_average()}; VoltDB: one node; MongoDB: SecantusDB; {a.duration} s runs")
    print("\n".join(table(rows)))
    print("\n".join(goals(rows)))


if __name__ == "__main__":
    os.chdir(ROOT)
    main()
