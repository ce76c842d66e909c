"""VoltDB (charts/voltdb): `replicas` nodes, each partition in kSafety+1 copies, every row in memory."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
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
# The d_id partitioning (the VoltDB study's District ID layout, WAREHOUSE and DISTRICT replicated)
# loads its districts and reads them back in multi-partition transactions: on the local cluster a
# VoltDB 10.1.1 pod (the chart's 512m heap) reloaded from the warehouse layout to d_id peaked at
# 2,220 MiB resident for one warehouse, and at the chart's 2Gi limit it was OOM-killed in the load
# (docs/papers.md). Less the server's 295 MiB and the heap: 1,413 MiB for that warehouse, charged
# to each. One measurement, at one warehouse: if part of it is a fixed cost of the load rather
# than of each warehouse, this over-counts (refuses what might fit) rather than OOM-kill a run.
D_ID_WAREHOUSE_BYTES = 2220 * MIB - SERVER_BYTES - 512 * MIB


class VoltDB(Database):
    name = "voltdb"
    chart = "voltdb"
    client_port = 21212
    container = "voltdb"
    load_options = ("partitioning",)  # warehouse, district, d_id: different PARTITION lines
    costs = Costs(warehouse=276 * MIB, record=(1233.4, 650.9, 1.36))  # resident memory of one copy

    def decided_values(self, deploy: Deploy) -> dict[str, Any]:
        return {**super().decided_values(deploy), "kfactor": deploy.k_safety}

    def capacity(
        self, deploy: Deploy, values: Mapping[str, Any], unit: Unit, load_values: frozenset[str] = frozenset()
    ) -> Capacity | None:
        """A node's room for tables is its memory limit less the JVM heap and the server's own
        resident memory; each warehouse lives in kSafety+1 copies spread over the nodes, and costs
        what its partitioning's load does (d_id's, when the run loads it). None when the values
        set no memory limit."""
        limit = value_at(values, "resources", "limits", "memory")
        heap = value_at(values, "heap")
        if limit is None or heap is None:
            return None
        d_id = "d_id" in load_values
        costs = replace(self.costs, warehouse=D_ID_WAREHOUSE_BYTES) if d_id else self.costs
        room = int(parse_quantity(limit)) - java_size(heap) - SERVER_BYTES
        per_copy = int(max(room, 0) * (1 - HEADROOM)) // unit.bytes(costs)
        copies = deploy.k_safety + 1
        return Capacity(
            count=deploy.replicas * per_copy // copies,
            unit=unit.name,
            basis=(
                f"{deploy.replicas} node(s) x ({limit} memory - {heap} heap - {SERVER_BYTES // MIB} MiB "
                f"server at start, {HEADROOM:.0%} kept free) / {copies} cop{'y' if copies == 1 else 'ies'} "
                f"of {unit.cost(costs)}{' (partitioning d_id: its load at one warehouse)' if d_id else ''}"
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
