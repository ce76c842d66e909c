"""The MongoDB driver's options (`--driver-opt key=value`, listed in the package docstring)."""
from __future__ import annotations

from pymongo.read_preferences import ReadPreference

from .. import options

DEFAULT_PORT = 27017
UNAUTHORIZED = 13  # the server's error code for an operation the user's roles do not allow
SCHEMAS = ("denormalized", "normalized")
READ_PREFERENCES = {
    "primary": ReadPreference.PRIMARY,
    "primaryPreferred": ReadPreference.PRIMARY_PREFERRED,
    "secondary": ReadPreference.SECONDARY,
    "secondaryPreferred": ReadPreference.SECONDARY_PREFERRED,
    "nearest": ReadPreference.NEAREST,
}


def _write_concern(value: str) -> str | int:
    if value == "majority":
        return value
    if not (value.isdigit() and int(value) >= 1):
        raise options.Want("majority or a number of members >= 1")
    return int(value)


OPTIONS = (
    options.Option("schema", "denormalized", options.choice(*SCHEMAS)),
    options.Option("find_and_modify", True, options.boolean),
    options.Option("batch_writes", True, options.boolean),
    options.Option("read_concern", "majority", options.choice("local", "majority", "snapshot")),
    options.Option("write_concern", "majority", _write_concern),
    options.Option("journal", False, options.boolean),
    options.Option("transactions", True, options.boolean),
    options.Option("stock_level_in_transaction", True, options.boolean),
    options.Option("read_preference", "primary", options.choice(*READ_PREFERENCES)),
    options.Option("causal", False, options.boolean),
    options.Option("retry_writes", True, options.boolean),
    options.Option("database", "tpcc", options.text),
    options.Option("uri", "", options.text),
    options.Option("replica_set", "", options.text),
    options.Option("auth_source", "", options.text),
    options.Option("txn_timeout", 60.0, options.seconds),
    options.Option("commit_retries", 3, options.count),
)
