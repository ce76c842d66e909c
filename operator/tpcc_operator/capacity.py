"""How many TPC-C warehouses, or YCSB records, a database the operator deploys can hold, from what
its chart values give each node. Pure: plan.helm_release refuses a run that would not fit before
Helm runs, naming the bound and what to raise (a fixed cap would be wrong both ways: too many for
the charts' small defaults, too few for a node sized for a real benchmark).

What one warehouse or record costs a database, and how its chart values bound the count, is that
database's (`databases/`: its `COSTS` and `capacity`, measured by runner-image/bench/capacity.py);
here is what they share: the unit counted, the headroom kept free, the refusal's words.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

MIB = 1 << 20
# Room kept free for the rows a run adds (new orders, order lines, history) and for VoltDB's
# snapshot buffers and MongoDB's journal.
HEADROOM = 0.10

JAVA_SIZE = re.compile(r"^([0-9]+)([kKmMgG])$")
JAVA_UNITS = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


@dataclass(frozen=True)
class Costs:
    """What one warehouse and one YCSB record cost a database (bytes of what bounds it: resident
    memory of one copy, or data volume), as runner-image/bench/capacity.py measured them."""

    warehouse: int
    # a YCSB record, fitted over three shapes: per record, per field, per value byte
    record: tuple[float, float, float]


@dataclass(frozen=True)
class Unit:
    """What a run's data is counted in: warehouses, or YCSB records of a shape."""

    name: str  # plural: "warehouses", "records"
    fieldcount: int = 0  # a YCSB record's fields, each of up to fieldlength bytes
    fieldlength: int = 0
    scale_down: int = 1  # a warehouse's rows divided by this (workload.scaleDown)

    @property
    def shape(self) -> str:
        """What one is made of, when that varies (a YCSB record's fields, a scaled-down warehouse)."""
        if self.name != "records":
            return f" scaled down {self.scale_down}x" if self.scale_down > 1 else ""
        return f" of {self.fieldcount} field{'' if self.fieldcount == 1 else 's'} x {self.fieldlength} bytes"

    def bytes(self, costs: Costs) -> int:
        """What one costs a database with these costs. A scaled-down warehouse holds every table's
        rows divided by its divisor (the items and stock, the customers with their orders, lines
        and history: `Scale.scaled_down`), so it costs that share of a full one."""
        if self.name != "records":
            return costs.warehouse // self.scale_down
        per_record, per_field, per_byte = costs.record
        return int(per_record + self.fieldcount * (per_field + per_byte * self.fieldlength))

    def cost(self, costs: Costs) -> str:
        size = self.bytes(costs)
        text = f"{size // MIB} MiB" if size >= 16 * MIB else f"{size:,} bytes"
        return f"about {text} per {self.name[:-1]}{self.shape}"


def warehouses(scale_down: int | None) -> Unit:
    """Full-size warehouses, or scaled down (workload.scaleDown: None or 1 is full size)."""
    return Unit("warehouses", scale_down=scale_down or 1)


def ycsb_records(fieldcount: int, fieldlength: int) -> Unit:
    """A YCSB record of fieldcount fields of up to fieldlength bytes (the longest a
    fieldlengthdistribution draws: the bound holds for every draw)."""
    return Unit("records", fieldcount, fieldlength)


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


def value_at(values: Mapping[str, Any], *path: str) -> Any:
    """The chart value at a path of keys; None where any is missing."""
    for key in path:
        if not isinstance(values, Mapping) or key not in values:
            return None
        values = values[key]
    return values


def too_small(db: str, capacity: Capacity | None, wanted: int, field: str) -> str | None:
    """Why the deploy cannot hold `wanted` warehouses or records (the most the spec loads, from
    `field`, which may say how it was counted)."""
    if capacity is None or wanted <= capacity.count:
        return None
    return (
        f"{field} = {wanted}: the deployed {db} holds at most {capacity.count} {capacity.unit} "
        f"({capacity.basis}); raise {capacity.raise_}, or use database.external"
    )
