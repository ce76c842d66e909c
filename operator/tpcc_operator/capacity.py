"""How many TPC-C warehouses, or YCSB records, a database the operator deploys can hold, from what
its chart values give each node. Pure: plan.helm_release refuses a run that would not fit before
Helm runs, naming the bound and what to raise (a fixed cap would be wrong both ways: too many for
the charts' small defaults, too few for a node sized for a real benchmark).

The per-warehouse figures are measured by runner-image/bench/capacity.py, which loads warehouses
into a real VoltDB and a WiredTiger-backed MongoDB wire server and prints them; rerun it after a
change to the schema or the loader (`--ycsb N` for the per-record figures).
- VoltDB keeps every row in memory: a node's room for tables is its memory limit less the JVM heap
  and the server's own resident memory; each warehouse lives in kSafety+1 copies spread over the
  nodes.
- MongoDB keeps rows on disk: each member of a replica set holds every warehouse in its data volume;
  a sharded deploy spreads the warehouses over its shards (hashed on the warehouse id).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubernetes.utils import parse_quantity

MIB = 1 << 20
# Printed by runner-image/bench/capacity.py --warehouses 4 (2,095,498 rows): a VoltDB 10.1.1 node
# with the chart's 512m heap grew from 295 to 1,400 MiB resident, 276 MiB per warehouse (tuples 45,
# indexes 32, strings 100, pooled 106); its 295 MiB before any row count here in full, beside the
# whole heap (the chart sets -Xms = -Xmx, so the heap may all become resident).
VOLTDB_BYTES_PER_WAREHOUSE = 276 * MIB
VOLTDB_SERVER_BYTES = 295 * MIB
# The same script on SecantusDB, the MongoDB wire server on WiredTiger (mongod's storage engine):
# its data directory grew 238 MiB per warehouse after a clean stop (checkpointed). mongod's default
# snappy block compression stores less, so for mongod this errs on the safe side.
MONGODB_BYTES_PER_WAREHOUSE = 238 * MIB
# Printed by runner-image/bench/capacity.py --ycsb 50000: bytes per YCSB record, loaded in three
# shapes (10 fields x 100 bytes, 10 x 10, 1 x 100) and fitted as a cost per record, per field and
# per value byte. VoltDB (resident memory growth) keeps a row per field, each with the key, the
# field name, the value and index entries: 9,101 bytes for YCSB's default 10 x 100 (7,878 for
# 10 x 10, 2,020 for 1 x 100). SecantusDB (its WiredTiger data directory after a clean stop) keeps
# one document per record: 2,672 bytes for 10 x 100 (786 and 550); for mongod, whose block
# compression may store less, this errs on the safe side.
VOLTDB_RECORD_BYTES = (1233.4, 650.9, 1.36)  # (per record, per field, per value byte)
MONGODB_RECORD_BYTES = (314.7, 26.1, 2.1)
# Room kept free for the rows a run adds (new orders, order lines, history) and for VoltDB's
# snapshot buffers and MongoDB's journal.
HEADROOM = 0.10

JAVA_SIZE = re.compile(r"^([0-9]+)([kKmMgG])$")
JAVA_UNITS = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


@dataclass(frozen=True)
class Unit:
    """What a run's data is counted in, and what one of them costs each database (bytes)."""

    name: str  # plural: "warehouses", "records"
    voltdb_bytes: int  # resident memory of one copy
    mongodb_bytes: int  # data volume
    shape: str = ""  # what one is made of, when that varies (a YCSB record's fields)

    def cost(self, db: str) -> str:
        size = self.voltdb_bytes if db == "voltdb" else self.mongodb_bytes
        text = f"{size // MIB} MiB" if size >= 16 * MIB else f"{size:,} bytes"
        return f"about {text} per {self.name[:-1]}{self.shape}"


WAREHOUSES = Unit("warehouses", VOLTDB_BYTES_PER_WAREHOUSE, MONGODB_BYTES_PER_WAREHOUSE)


def ycsb_records(fieldcount: int, fieldlength: int) -> Unit:
    """A YCSB record of fieldcount fields of up to fieldlength bytes (the longest a
    fieldlengthdistribution draws: the bound holds for every draw)."""

    def cost(per_record: float, per_field: float, per_byte: float) -> int:
        return int(per_record + fieldcount * (per_field + per_byte * fieldlength))

    return Unit(
        "records",
        cost(*VOLTDB_RECORD_BYTES),
        cost(*MONGODB_RECORD_BYTES),
        f" of {fieldcount} field{'' if fieldcount == 1 else 's'} x {fieldlength} bytes",
    )


@dataclass(frozen=True)
class Capacity:
    """The most warehouses (or records) a deployed database holds, and how that was worked out."""

    count: int
    unit: str  # what count counts: "warehouses", "records"
    basis: str  # e.g. "3 nodes x (2Gi memory - 512m heap - 300 MiB server)"
    raise_: str  # the values that raise it


def java_size(value: str) -> int:
    """Bytes of a JVM size such as -Xmx takes (512m, 2g); the chart's schema admits only these."""
    m = JAVA_SIZE.match(str(value))
    if not m:
        raise ValueError(f"not a JVM size: {value!r}")
    return int(m.group(1)) * JAVA_UNITS[m.group(2).lower()]


def _get(values: Mapping[str, Any], *path: str) -> Any:
    for key in path:
        if not isinstance(values, Mapping) or key not in values:
            return None
        values = values[key]
    return values


def voltdb(replicas: int, k_safety: int, values: Mapping[str, Any], unit: Unit = WAREHOUSES) -> Capacity | None:
    """None when the values set no memory limit (nothing to bound by)."""
    limit = _get(values, "resources", "limits", "memory")
    heap = _get(values, "heap")
    if limit is None or heap is None:
        return None
    room = int(parse_quantity(limit)) - java_size(heap) - VOLTDB_SERVER_BYTES
    per_copy = int(max(room, 0) * (1 - HEADROOM)) // unit.voltdb_bytes
    return Capacity(
        count=replicas * per_copy // (k_safety + 1),
        unit=unit.name,
        basis=(
            f"{replicas} node(s) x ({limit} memory - {heap} heap - {VOLTDB_SERVER_BYTES // MIB} MiB "
            f"server at start, {HEADROOM:.0%} kept free) / {k_safety + 1} cop{'y' if k_safety == 0 else 'ies'} "
            f"of {unit.cost('voltdb')}"
        ),
        raise_=(
            "database.deploy.values.resources.limits.memory (with requests and heap to match), database.deploy.replicas"
        ),
    )


def mongodb(values: Mapping[str, Any], unit: Unit = WAREHOUSES) -> Capacity | None:
    """None when the data volume has no size (nothing to bound by)."""
    persistent = _get(values, "persistence", "enabled") is not False
    where = ("persistence", "size") if persistent else ("dataVolume", "sizeLimit")
    size = _get(values, *where)
    if size is None:
        return None
    sharded = _get(values, "topology") == "sharded"
    shards = int(_get(values, "sharded", "shards") or 1) if sharded else 1
    per_member = int(int(parse_quantity(size)) * (1 - HEADROOM)) // unit.mongodb_bytes
    over = f"{shards} shards x " if sharded else "every member holds all: "
    return Capacity(
        count=shards * per_member,
        unit=unit.name,
        basis=f"{over}{size} data volume ({'.'.join(where)}, {HEADROOM:.0%} kept free) / {unit.cost('mongodb')}",
        raise_=f"database.deploy.values.{'.'.join(where)}" + (", sharded.shards" if sharded else ""),
    )


def of(db: str, replicas: int, k_safety: int, values: Mapping[str, Any], unit: Unit = WAREHOUSES) -> Capacity | None:
    """The capacity of a deploy from its chart values merged over the chart's defaults."""
    if db == "voltdb":
        return voltdb(replicas, k_safety, values, unit)
    if db == "mongodb":
        return mongodb(values, unit)
    return None


def too_small(db: str, capacity: Capacity | None, wanted: int, field: str) -> str | None:
    """Why the deploy cannot hold `wanted` warehouses or records (the most the spec loads, from
    `field`, which may say how it was counted)."""
    if capacity is None or wanted <= capacity.count:
        return None
    return (
        f"{field} = {wanted}: the deployed {db} holds at most {capacity.count} {capacity.unit} "
        f"({capacity.basis}); raise {capacity.raise_}, or use database.external"
    )
