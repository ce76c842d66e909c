"""What the operator knows of each workload, in one module each behind one interface
(base.Workload), and the one registry from workload.kind to it. Nothing in stages/ branches on the
workload: adding one means a module here and its runner package."""

from __future__ import annotations

from ..runspec import RunSpec
from ..runspec import Workload as WorkloadSpec
from .base import DurabilityVerdict, Measured, Workload, client_shares
from .tpcc import TPCC_WORKLOAD
from .ycsb import YCSB_WORKLOAD

REGISTRY: dict[str, Workload] = {w.kind: w for w in (TPCC_WORKLOAD, YCSB_WORKLOAD)}


def of(spec: RunSpec) -> Workload:
    """The run's workload (the CRD's enum admits only REGISTRY's kinds)."""
    return REGISTRY[spec.workload.kind]


def loaded(workload: WorkloadSpec) -> str:
    """What a workload's load Job writes, as the stage messages name it ("4 warehouses",
    "10,000 YCSB records")."""
    return REGISTRY[workload.kind].loaded(workload)


def checks_consistency(spec: RunSpec) -> bool:
    """verify.enabled, for a workload that has TPC-C's consistency conditions."""
    return spec.verify.enabled and of(spec).consistency_conditions


__all__ = [
    "REGISTRY",
    "DurabilityVerdict",
    "Measured",
    "Workload",
    "checks_consistency",
    "client_shares",
    "loaded",
    "of",
]
