"""VoltDB (charts/voltdb): `replicas` nodes, each partition in kSafety+1 copies, every row in memory."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubernetes.utils import parse_quantity

from ..capacity import HEADROOM, MIB, Capacity, Costs, Unit, java_size, value_at
from ..runspec import Deploy
from .base import Database

# Printed by runner-image/bench/capacity.py --warehouses 4 (2,095,498 rows): a VoltDB 10.1.1 node
# with the chart's 512m heap grew from 295 to 1,400 MiB resident, 276 MiB per warehouse (tuples 45,
# indexes 32, strings 100, pooled 106); its 295 MiB before any row count here in full, beside the
# whole heap (the chart sets -Xms = -Xmx, so the heap may all become resident).
# --ycsb 50000: a row per field, each with the key, the field name, the value and index entries:
# 9,101 bytes for YCSB's default 10 x 100 (7,878 for 10 x 10, 2,020 for 1 x 100).
SERVER_BYTES = 295 * MIB


class VoltDB(Database):
    name = "voltdb"
    chart = "voltdb"
    client_port = 21212
    container = "voltdb"
    load_options = ("partitioning",)  # warehouse, district, d_id: different PARTITION lines
    costs = Costs(warehouse=276 * MIB, record=(1233.4, 650.9, 1.36))  # resident memory of one copy

    def decided_values(self, deploy: Deploy) -> dict[str, Any]:
        return {"kfactor": deploy.k_safety}

    def capacity(self, deploy: Deploy, values: Mapping[str, Any], unit: Unit) -> Capacity | None:
        """A node's room for tables is its memory limit less the JVM heap and the server's own
        resident memory; each warehouse lives in kSafety+1 copies spread over the nodes. None when
        the values set no memory limit."""
        limit = value_at(values, "resources", "limits", "memory")
        heap = value_at(values, "heap")
        if limit is None or heap is None:
            return None
        room = int(parse_quantity(limit)) - java_size(heap) - SERVER_BYTES
        per_copy = int(max(room, 0) * (1 - HEADROOM)) // unit.bytes(self.costs)
        copies = deploy.k_safety + 1
        return Capacity(
            count=deploy.replicas * per_copy // copies,
            unit=unit.name,
            basis=(
                f"{deploy.replicas} node(s) x ({limit} memory - {heap} heap - {SERVER_BYTES // MIB} MiB "
                f"server at start, {HEADROOM:.0%} kept free) / {copies} cop{'y' if copies == 1 else 'ies'} "
                f"of {unit.cost(self.costs)}"
            ),
            raise_=(
                "database.deploy.values.resources.limits.memory (with requests and heap to match), "
                "database.deploy.replicas"
            ),
        )

    def loses_data_with_a_node(self, deploy: Deploy) -> str | None:
        """With kSafety 0 each partition has one copy: a node lost takes the cluster down, and
        VoltDB CE, without a command log, restarts it empty (seen on the local cluster: every
        acknowledged NewOrder lost). A k-safe node rejoins with its rows."""
        if deploy.k_safety > 0:
            return None
        return (
            "VoltDB with kSafety 0 keeps one copy of each partition: with a node killed the database restarted "
            "without its data, so the run stops here instead of measuring errors to the end"
        )


VOLTDB = VoltDB()
