#!/usr/bin/env python3
"""How a TPC-C load's cost grows with its size (issue 43 §3): `tpcc load` of 1, 2, 4, 8 (16)
warehouses into a one-node VoltDB 10.1.1 and into SecantusDB (the MongoDB wire server the
MongoDB driver is tested against), each size on a new, empty server started here (one server at
a time, stopped before the next). Per size: wall seconds, rows/s, the loader's CPU (its whole
process tree: the command, its fork server and load workers, reaped as a subreaper), its CPU
per row, the peak RSS of its largest process and the server's CPU meanwhile. Then the goal:
rows/s and the loader's CPU per row flat (linear time), its memory flat.

The MongoDB load is scaled by default (10,000 items, 300 customers per district, as
bench.py): SecantusDB is a Python server, and a full-size warehouse takes it minutes;
--mongodb-full-size loads the specification's sizes.

    .venv/bin/python runner-image/bench/load_growth.py [--warehouses 1,2,4,8,16] [--only voltdb|mongodb]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import growth
import servers
from overhead import become_subreaper, measure_load, reap_all

ROOT = Path(__file__).resolve().parents[2]
SCALED = ("--items", "10000", "--customers-per-district", "300")
SERVERS: dict[str, Callable[[Path], contextlib.AbstractContextManager[servers.Server]]] = {
    "voltdb": servers.voltdb,
    "mongodb": servers.secantus,
}
TOLERANCE = 0.2  # "flat": within 20 % (growth.flat, growth.not_worse)


def measure(db: str, warehouses: int, work: Path, extra: tuple[str, ...]) -> dict:
    """One load of `warehouses` into a new server of `db`."""
    with SERVERS[db](work / f"{db}-{warehouses}") as server:
        point = measure_load(ROOT / "runner-image", server.endpoint, warehouses, None, server.pid, db=db, extra=extra)
    reap_all([])  # the stopped server, adopted by this subreaper: not to be counted in the next load
    point["client_cpu_us_per_row"] = round(1e6 * point["client_cpu_s"] / point["rows"], 2)
    return {"db": db, **point}


def table(points: list[dict]) -> Iterator[str]:
    yield (
        "| database | warehouses | rows | wall s | rows/s | loader CPU-s | loader CPU us/row "
        "| peak RSS MB (largest process) | processes | server CPU-s |"
    )
    yield "|---|---|---|---|---|---|---|---|---|---|"
    for p in points:
        yield (
            f"| {p['db']} | {p['warehouses']} | {p['rows']:,} | {p['wall_s']} | {p['rows_per_s']:,} "
            f"| {p['client_cpu_s']} | {p['client_cpu_us_per_row']} | {p['peak_rss_mb']} | {p['processes']} "
            f"| {p['server_cpu_s']} |"
        )


def goals(db: str, points: list[dict]) -> Iterator[str]:
    """Rows/s and the loader's CPU per row at the largest size no worse than at any (fixed
    costs, start-up and the 100,000 ITEM rows, make small loads slower per row), its memory
    flat, the wall at most linear; and the wall's fixed and per-warehouse parts."""
    mine = [p for p in sorted(points, key=lambda p: p["warehouses"]) if p["db"] == db]
    if len(mine) < 2:
        return
    sizes, walls = [p["warehouses"] for p in mine], [p["wall_s"] for p in mine]
    yield growth.not_worse(f"{db} rows/s", [p["rows_per_s"] for p in mine], TOLERANCE, higher_is_better=True)
    yield growth.not_worse(
        f"{db} loader CPU us per row", [p["client_cpu_us_per_row"] for p in mine], TOLERANCE, higher_is_better=False
    )
    yield growth.flat(f"{db} loader peak RSS", [p["peak_rss_mb"] for p in mine], TOLERANCE)
    yield growth.at_most_linear(f"{db} wall", sizes, walls)
    fixed, per_warehouse = growth.linear_fit(sizes, walls)
    yield f"{db} wall, least squares: {fixed:.1f} s + {per_warehouse:.2f} s per warehouse"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--warehouses", default="1,2,4,8,16", help="the sizes, comma-separated")
    ap.add_argument("--only", choices=tuple(SERVERS), default=None)
    ap.add_argument("--mongodb-full-size", action="store_true", help="the specification's sizes on SecantusDB too")
    a = ap.parse_args()
    sizes = [int(w) for w in a.warehouses.split(",")]
    work = Path(tempfile.mkdtemp(prefix="tpcc-load-growth-"))
    # before any server starts: the loaders' orphaned fork servers come here to be reaped
    become_subreaper()
    print(f"machine: {growth.machine()}; commit {growth.commit('runner-image')}", flush=True)
    points = []
    for db in (d for d in SERVERS if a.only in (None, d)):
        extra = SCALED if db == "mongodb" and not a.mongodb_full_size else ()
        for w in sizes:
            points.append(measure(db, w, work, extra))
            print(json.dumps({**points[-1], "after": growth.load_average()}), flush=True)
    mongodb_size = "full size" if a.mongodb_full_size else f"scaled warehouses ({' '.join(SCALED)})"
    print(f"done: {growth.load_average()}; VoltDB: one node; MongoDB: SecantusDB, {mongodb_size}")
    print("\n".join(table(points)))
    for db in SERVERS:
        for line in goals(db, points):
            print(line)


if __name__ == "__main__":
    os.chdir(ROOT)
    main()
