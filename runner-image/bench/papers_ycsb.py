#!/usr/bin/env python3
"""The FoundationDB-vs-MongoDB study's YCSB suite, scaled down to this machine: for each database
configuration the study ran (MongoDB default, w=majority&j=true, transactions of N operations; here
on SecantusDB, the MongoDB wire test server, and the same on VoltDB where it applies) and each
workload A-F, a fresh `tpcc ycsb load` then a `tpcc ycsb run` for --duration seconds, as the
study loaded then ran each workload. Prints ops/s per configuration and workload, keeps every
results document in --out (`tpcc report OUT/*.json -o ycsb.html` draws them).

    .venv/bin/python runner-image/bench/papers_ycsb.py [--duration 10] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import servers
from bench import ROOT


@dataclass(frozen=True)
class Configuration:
    name: str
    flags: tuple[str, ...] = ()  # --driver-opt flags of both load and run
    transactions: bool = False  # the run's operations in transactions of --ops-per-transaction


OPERATIONS = 1_000_000
MAJORITY_JOURNAL = ("--driver-opt", "write_concern=majority", "--driver-opt", "journal=true")
MONGODB = (
    Configuration("default"),
    Configuration("w=majority, j=true", MAJORITY_JOURNAL),
    Configuration("transactions", transactions=True),
)
VOLTDB = (Configuration("default"), Configuration("transactions", transactions=True))


def ycsb(phase: str, db: str, endpoint: str, out: Path, *args: str) -> dict:
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
        sys.exit(f"tpcc ycsb {phase} {' '.join(args)} failed: {p.stderr.strip()[-2000:]}")
    return json.loads(out.read_text())


def suite(
    db: str, endpoint: str, configurations: tuple[Configuration, ...], a: argparse.Namespace, records: int, threads: int
) -> list[dict]:
    rows = []
    for c in configurations:
        per_txn = ("-p", f"operationspertransaction={a.ops_per_transaction}") if c.transactions else ()
        for workload in a.workloads:
            size = ("--workload", workload, "-p", f"recordcount={records}", *c.flags)
            slug = f"{db}-{c.name.replace('=', '').replace(', ', '-')}-{workload}"
            if f"{db}/{c.name}/{workload}" in a.skip:
                continue
            if a.resume and (a.out / f"{slug}.json").exists():
                run = json.loads((a.out / f"{slug}.json").read_text())
            else:
                ycsb(
                    "load",
                    db,
                    endpoint,
                    a.out / f"{slug}-load.json",
                    "--reset",
                    "--threads",
                    "2",
                    "-p",
                    "batchsize=100",
                    *size,
                )
                # bounded by --duration; the operation count only sizes workload E's zipfian key
                # space (YCSB's expected inserts), which YCSB refuses to leave unbounded
                run = ycsb(
                    "run",
                    db,
                    endpoint,
                    a.out / f"{slug}.json",
                    *size,
                    *per_txn,
                    "-p",
                    f"operationcount={OPERATIONS}",
                    "--duration",
                    str(a.duration),
                    "--threads",
                    str(threads),
                    "--seed",
                    "1",
                )
            rows.append(
                {
                    "db": db,
                    "configuration": c.name,
                    "workload": workload,
                    "records": records,
                    "threads": threads,
                    "ops_per_s": run["status"]["opsPerSecond"],
                    "errors": run["errors"],
                }
            )
            print(json.dumps(rows[-1]), flush=True)
    return rows


def table(rows: list[dict], workloads: str) -> str:
    lines = [
        "| database | configuration | " + " | ".join(w.upper() for w in workloads) + " |",
        "|---|---|" + "---|" * len(workloads),
    ]
    for key in dict.fromkeys((r["db"], r["configuration"]) for r in rows):
        cells = {r["workload"]: r for r in rows if (r["db"], r["configuration"]) == key}
        lines.append(
            f"| {key[0]} | {key[1]} | "
            + " | ".join(
                f"{cells[w]['ops_per_s']:,.0f}" + (f" ({cells[w]['errors']} errors)" if cells[w]["errors"] else "")
                if w in cells
                else "—"
                for w in workloads
            )
            + " |"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--workloads", default="abcdef")
    ap.add_argument("--ops-per-transaction", type=int, default=1000, help="the study's 1,000 (default)")
    ap.add_argument("--out", type=Path, default=None, help="keep the results documents here (default: a temp dir)")
    ap.add_argument(
        "--skip",
        action="append",
        default=[],
        metavar="DB/CONFIGURATION/WORKLOAD",
        help="leave a cell out, e.g. mongodb/transactions/e (SecantusDB scans: a transaction "
        "of 1,000 takes minutes), repeatable",
    )
    ap.add_argument("--resume", action="store_true", help="reuse the run results already in --out")
    ap.add_argument("--skip-voltdb", action="store_true")
    ap.add_argument("--skip-mongodb", action="store_true")
    a = ap.parse_args()
    a.out = a.out or Path(tempfile.mkdtemp(prefix="papers-ycsb-"))
    a.out.mkdir(parents=True, exist_ok=True)
    work, rows = Path(tempfile.mkdtemp(prefix="papers-ycsb-servers-")), []
    if not a.skip_mongodb:
        with servers.secantus(work) as sec:  # SecantusDB is a Python server: fewer records and threads
            rows += suite("mongodb", sec.endpoint, MONGODB, a, 5000, 4)
    if not a.skip_voltdb:
        with servers.voltdb(work) as volt:
            rows += suite("voltdb", volt.endpoint, VOLTDB, a, 20000, 8)
    print(
        f"\n{platform.node()}, {os.cpu_count()} CPUs; {a.duration} s per workload after a fresh load; "
        f"transactions of {a.ops_per_transaction} operations; results in {a.out}\n"
    )
    print(table(rows, a.workloads))


if __name__ == "__main__":
    os.chdir(ROOT)
    main()
