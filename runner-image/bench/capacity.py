#!/usr/bin/env python3
"""What one TPC-C warehouse costs the database that holds it, the figures behind the operator's
bound on a deployed database (operator/tpcc_operator/capacity.py):

- VoltDB (a real 10.1.1 node, 512m heap as the chart's default): `@Statistics MEMORY` before and
  after `tpcc load` of N warehouses: resident memory (RSS) and its parts (Java heap in use, tuple
  data allocated, indexes, strings, pooled memory); per warehouse, the growth divided by N; the
  server's resident memory outside the heap before any row.
- MongoDB wire (SecantusDB on WiredTiger, the MongoDB storage engine): the bytes of its data
  directory before and after the load; per warehouse, the growth divided by N.

    .venv/bin/python runner-image/bench/capacity.py [--warehouses 4] [--only voltdb|mongodb]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import servers
from servers import free_port

ROOT = Path(__file__).resolve().parents[2]
MIB = 1 << 20
MEMORY_COLUMNS = (
    "RSS",
    "JAVAUSED",
    "JAVAUNUSED",
    "TUPLEDATA",
    "TUPLEALLOCATED",
    "INDEXMEMORY",
    "STRINGMEMORY",
    "POOLEDMEMORY",
    "TUPLECOUNT",
)


def tpcc_load(db: str, endpoint: str, warehouses: int) -> dict:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "tpcc_runner.cli",
            "load",
            "--db",
            db,
            "--endpoints",
            endpoint,
            "--warehouses",
            str(warehouses),
            "--reset",
            "--seed",
            "1",
            "--metrics-port",
            "0",
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout)


def voltdb_memory(endpoint: str) -> dict[str, int]:
    """@Statistics MEMORY of the one node, in bytes (VoltDB reports KB) and rows."""
    from voltdbclient import FastSerializer, VoltProcedure

    host, port = endpoint.rsplit(":", 1)
    client = FastSerializer(host, int(port))
    try:
        stats = VoltProcedure(
            client, "@Statistics", [FastSerializer.VOLTTYPE_STRING, FastSerializer.VOLTTYPE_INTEGER]
        ).call(["MEMORY", 0])
        table = stats.tables[0]
        names = [c.name for c in table.columns]
        row = table.tuples[0]
        return {c: int(row[names.index(c)]) * (1 if c == "TUPLECOUNT" else 1024) for c in MEMORY_COLUMNS}
    finally:
        client.close()


def measure_voltdb(warehouses: int, work: Path) -> dict:
    with servers.voltdb(work) as volt:
        before = voltdb_memory(volt.endpoint)
        rows = tpcc_load("voltdb", volt.endpoint, warehouses)["rows"]
        time.sleep(2)  # let the load's client buffers drain from the server's accounting
        after = voltdb_memory(volt.endpoint)
    grown = {c: after[c] - before[c] for c in MEMORY_COLUMNS}
    return {
        "database": "voltdb",
        "warehouses": warehouses,
        "rows": rows,
        "server_outside_heap_mib_before_load": round((before["RSS"] - before["JAVAUSED"] - before["JAVAUNUSED"]) / MIB),
        "rss_mib_before": round(before["RSS"] / MIB),
        "rss_mib_after": round(after["RSS"] / MIB),
        "per_warehouse_mib": {c.lower(): round(v / warehouses / MIB, 1) for c, v in grown.items() if c != "TUPLECOUNT"},
    }


def dir_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def measure_mongodb(warehouses: int, work: Path) -> dict:
    script = ROOT / "hack" / "secantus.sh"
    port, data = free_port(), work / "secantus"
    subprocess.run(
        [str(script), "start", "--port", str(port), "--dir", str(data)],
        check=True,
        stdout=subprocess.DEVNULL,
        timeout=120,
    )
    try:
        before = dir_bytes(data)
        rows = tpcc_load("mongodb", f"127.0.0.1:{port}", warehouses)["rows"]
        # a clean stop checkpoints WiredTiger: the files then hold every row, not the journal
        subprocess.run([str(script), "stop", "--dir", str(data)], check=True, stdout=subprocess.DEVNULL, timeout=300)
        after = dir_bytes(data)
    finally:
        subprocess.run([str(script), "stop", "--dir", str(data)], check=False, capture_output=True)
    return {
        "database": "mongodb (SecantusDB on WiredTiger)",
        "warehouses": warehouses,
        "rows": rows,
        "data_dir_mib_before": round(before / MIB),
        "data_dir_mib_after": round(after / MIB),
        "per_warehouse_mib": round((after - before) / warehouses / MIB, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--warehouses", type=int, default=4)
    ap.add_argument("--only", choices=("voltdb", "mongodb"), default=None)
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tpcc-capacity-"))
    if a.only != "mongodb":
        print(json.dumps(measure_voltdb(a.warehouses, work)), flush=True)
    if a.only != "voltdb":
        print(json.dumps(measure_mongodb(a.warehouses, work)), flush=True)


if __name__ == "__main__":
    main()
