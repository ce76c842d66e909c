"""What the operator knows of each database, in one module each behind one interface
(base.Database), and the one registry from database.type to it. Nothing outside this package
branches on the database type: the CRD's enum, the shipped charts and the admission policy's chart
list are held to REGISTRY by tests."""

from __future__ import annotations

from ..runspec import RunSpec
from .base import Database
from .foundationdb import FOUNDATIONDB
from .mongodb import MONGODB
from .voltdb import VOLTDB

REGISTRY: dict[str, Database] = {d.name: d for d in (VOLTDB, MONGODB, FOUNDATIONDB)}


def named(name: str) -> Database:
    """The database of a database.type (the CRD's enum admits only REGISTRY's names)."""
    return REGISTRY[name]


def of(spec: RunSpec) -> Database:
    """The run's database."""
    return named(spec.database.type)


def shipped_charts() -> tuple[str, ...]:
    """The charts the operator ships, one per database it can deploy."""
    return tuple(d.chart for d in REGISTRY.values() if d.chart)


__all__ = ["REGISTRY", "Database", "named", "of", "shipped_charts"]
