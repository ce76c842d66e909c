"""FoundationDB: the operator ships no chart for it (the CRD requires database.external), so it is
only reached: the runners connect to the coordinators the spec names (docs/foundationdb.md)."""

from __future__ import annotations

from .base import Database


class FoundationDB(Database):
    name = "foundationdb"


FOUNDATIONDB = FoundationDB()
