#!/usr/bin/env python3
"""What one TPC-C warehouse costs the database that holds it, the figures behind the operator's
bound on a deployed database (each database's `costs` in operator/tpcc_operator/databases/):

- VoltDB (a real 10.1.1 node, 512m heap as the chart's default): `@Statistics MEMORY` before and
  after `tpcc load` of N warehouses: resident memory (RSS) and its parts (Java heap in use, tuple
  data allocated, indexes, strings, pooled memory); per warehouse, the growth divided by N; the
  server's resident memory outside the heap before any row.
- MongoDB wire (SecantusDB on WiredTiger, the MongoDB storage engine): the bytes of its data
  directory before and after the load; per warehouse, the growth divided by N.

With --ycsb N, the same for YCSB records instead (`tpcc ycsb load` of N records, three shapes:
10 fields of 100 bytes, YCSB's default, 10 of 10 and 1 of 100), from which the operator's bound
on recordCount takes a fixed cost per record, per field and per value byte (least squares).

    .venv/bin/python runner-image/bench/capacity.py [--warehouses 4] [--only voltdb|mongodb]
    .venv/bin/python runner-image/bench/capacity.py --ycsb 50000 [--only voltdb|mongodb]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
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


YCSB_SHAPES = ((10, 100), (10, 10), (1, 100))  # (fieldcount, fieldlength)


def ycsb_load(db: str, endpoint: str, records: int, fieldcount: int, fieldlength: int) -> None:
    properties = {"recordcount": records, "fieldcount": fieldcount, "fieldlength": fieldlength, "batchsize": 100}
    subprocess.run(
        [sys.executable, "-m", "tpcc_runner.cli", "ycsb", "load", "--db", db, "--endpoints", endpoint]
        + ["--workload", "a", "--threads", "2", "--reset", "--seed", "1", "--metrics-port", "0"]
        + [a for name, value in properties.items() for a in ("-p", f"{name}={value}")],
        check=True,
        capture_output=True,
        text=True,
    )


def fit_per_record(points: list[tuple[int, int, float]]) -> dict[str, float]:
    """bytes per record = fixed + per_field x fieldcount + per_byte x fieldcount x fieldlength,
    from the three shapes (exact for three points)."""
    import numpy

    a = numpy.array([[1.0, f, f * n] for f, n, _ in points])
    b = numpy.array([bytes_ for _, _, bytes_ in points])
    fixed, per_field, per_byte = numpy.linalg.lstsq(a, b, rcond=None)[0]
    return {"fixed": round(fixed, 1), "per_field": round(per_field, 1), "per_value_byte": round(per_byte, 2)}


def measure_ycsb(db: str, records: int, work: Path) -> dict:
    """Bytes per record of each shape on a fresh server: VoltDB's resident memory growth,
    MongoDB's data directory growth after a clean stop."""
    points = []
    for n, (fieldcount, fieldlength) in enumerate(YCSB_SHAPES):
        where = work / f"ycsb-{db}-{n}"
        if db == "voltdb":
            with servers.voltdb(where) as volt:
                before = voltdb_memory(volt.endpoint)["RSS"]
                ycsb_load("voltdb", volt.endpoint, records, fieldcount, fieldlength)
                time.sleep(2)
                grown = voltdb_memory(volt.endpoint)["RSS"] - before
        else:
            grown = _mongodb_growth(
                where, lambda endpoint: ycsb_load("mongodb", endpoint, records, fieldcount, fieldlength)
            )
        points.append((fieldcount, fieldlength, grown / records))
        print(
            json.dumps(
                {
                    "database": db,
                    "records": records,
                    "fieldcount": fieldcount,
                    "fieldlength": fieldlength,
                    "bytes_per_record": round(grown / records, 1),
                }
            ),
            flush=True,
        )
    return {"database": db, "ycsb_records": records, "bytes_per_record": fit_per_record(points)}


def _mongodb_growth(work: Path, load: Callable[[str], object]) -> int:
    """Bytes the data directory of a fresh SecantusDB grew by the load (given its endpoint); a
    clean stop checkpoints WiredTiger first, so the files then hold every row, not the journal."""
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
        load(f"127.0.0.1:{port}")
        subprocess.run([str(script), "stop", "--dir", str(data)], check=True, stdout=subprocess.DEVNULL, timeout=300)
        return dir_bytes(data) - before
    finally:
        subprocess.run([str(script), "stop", "--dir", str(data)], check=False, capture_output=True)


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
    loaded = {}
    grown = _mongodb_growth(work, lambda endpoint: loaded.update(tpcc_load("mongodb", endpoint, warehouses)))
    return {
        "database": "mongodb (SecantusDB on WiredTiger)",
        "warehouses": warehouses,
        "rows": loaded["rows"],
        "per_warehouse_mib": round(grown / warehouses / MIB, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--warehouses", type=int, default=4)
    ap.add_argument("--only", choices=("voltdb", "mongodb"), default=None)
    ap.add_argument("--ycsb", type=int, default=0, metavar="RECORDS", help="measure YCSB records instead")
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tpcc-capacity-"))
    if a.ycsb:
        for db in ("voltdb", "mongodb"):
            if a.only in (None, db):
                print(json.dumps(measure_ycsb(db, a.ycsb, work)), flush=True)
        return
    if a.only != "mongodb":
        print(json.dumps(measure_voltdb(a.warehouses, work)), flush=True)
    if a.only != "voltdb":
        print(json.dumps(measure_mongodb(a.warehouses, work)), flush=True)


if __name__ == "__main__":
    main()
