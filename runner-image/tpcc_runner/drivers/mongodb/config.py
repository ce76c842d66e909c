"""The MongoDB driver's options (`--driver-opt key=value`): the table below is what the driver
parses and what `tpcc run --help` lists."""

from __future__ import annotations

from pymongo.read_preferences import ReadPreference

from .. import options

DEFAULT_PORT = 27017
UNAUTHORIZED = 13  # the server's error code for an operation the user's roles do not allow
SCHEMAS = ("denormalized", "embedded", "normalized")
READ_PREFERENCES = {
    "primary": ReadPreference.PRIMARY,
    "primaryPreferred": ReadPreference.PRIMARY_PREFERRED,
    "secondary": ReadPreference.SECONDARY,
    "secondaryPreferred": ReadPreference.SECONDARY_PREFERRED,
    "nearest": ReadPreference.NEAREST,
}


def _members(value: str) -> str | int:
    if value == "majority":
        return value
    if not (value.isdigit() and int(value) >= 1):
        raise ValueError(value)
    return int(value)


_write_concern = options.ValueParser("majority or a number of members >= 1", _members)

OPTIONS = (
    options.Option(
        "schema",
        "denormalized",
        options.choice(*SCHEMAS),
        "denormalized embeds the order lines in their ORDERS document (the paper's schema); "
        "normalized keeps nine collections; embedded (the sharded study's) keeps each customer's "
        "orders, with their lines, and its history inside the CUSTOMER document",
    ),
    options.Option(
        "find_and_modify",
        True,
        options.boolean,
        "NewOrder's d_next_o_id increment, Payment's YTD increments and Delivery's new_order "
        "removal / order update in one round trip",
    ),
    options.Option("batch_writes", True, options.boolean, "one bulk write per collection instead of one write per row"),
    options.Option(
        "read_concern",
        "majority",
        options.choice("local", "majority", "snapshot"),
        "for transactions (snapshot is used as majority outside)",
    ),
    options.Option("write_concern", "majority", _write_concern, "commit write concern (and the loader's)"),
    options.Option("journal", False, options.boolean, "j:true in that write concern (acknowledged once journaled)"),
    options.Option(
        "transactions",
        True,
        options.boolean,
        "false: no multi-document transactions, every statement on its own (the FoundationDB "
        "study's mongo3, py-tpcc's notransactions; atomicity is then not TPC-C's)",
    ),
    options.Option(
        "stock_level_in_transaction",
        True,
        options.boolean,
        "false: StockLevel reads outside a transaction (clause 3.4 lets it see committed data of others)",
    ),
    options.Option(
        "read_preference",
        "primary",
        options.choice(*READ_PREFERENCES),
        "where StockLevel reads when it runs outside a transaction (a non-primary preference "
        "takes it out); every other transaction reads the primary",
    ),
    options.Option("causal", False, options.boolean, "causally consistent session"),
    options.Option(
        "retry_writes",
        True,
        options.boolean,
        "retryable writes (retryWrites): a write or commit re-sent once after a network error "
        "or failover; false leaves every such error to the executor",
    ),
    options.Option("database", "tpcc", options.text, "the database holding the TPC-C collections"),
    options.Option("uri", "", options.text, "a mongodb:// URI instead of the endpoints (no credentials)"),
    options.Option("replica_set", "", options.text, "the replica set name, added to the URI"),
    options.Option("auth_source", "", options.text, "the database the credentials are checked against"),
    options.Option(
        "txn_timeout",
        60.0,
        options.seconds,
        "client-side bound on one transaction and on each commit attempt (pymongo.timeout: "
        "covers server selection too)",
    ),
    options.Option("commit_retries", 3, options.count, "re-sends of a commit whose result is unknown"),
)
