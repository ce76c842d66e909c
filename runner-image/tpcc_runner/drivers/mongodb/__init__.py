"""MongoDB driver (pure pymongo) after Kamsky, "Adapting TPC-C Benchmark to Measure Performance
of Multi-Document Transactions in MongoDB" (VLDB 2019) and py-tpcc's mongodb driver.

Money is stored as int64 cents (the driver converts the runner's dollars at its boundary), so
sums are exact. Every TPC-C transaction runs as one multi-document transaction. Unlike pymongo's
`with_transaction`, the retry policy is the executor's: this module only classifies what
happened (RetryableError, UnknownOutcome, ConnectionLost, UserAbort) and never loops on a
transient error itself, except for re-sending a commit whose result is unknown.

The VLDB paper's configuration (its appendix D) is transactions with read_concern=snapshot,
write_concern=majority, causal=true, retry_writes=false, and StockLevel outside a transaction
(stock_level_in_transaction=false: read concern majority, in the causal session), the only
transaction that may read from a secondary; crds/samples/papers/ holds it as a manifest.

Options (`--driver-opt key=value`): OPTIONS in config.py, each with its default and what it does
(`tpcc run --help` lists them). Username and password come from ConnectionOptions and are never
put in a URI or a message.

Behind a mongos (`hello` answers msg: "isdbgrid") create_schema shards every TPC-C collection
that has a warehouse id on that field, hashed (SHARD_KEYS): the collections are created empty,
and a hashed key is split over every shard at once, so the warehouses spread over the shards
from the first insert without a balancer pass or knowing the warehouse count; all documents of
a warehouse hash alike, so a transaction on its home warehouse stays on one shard (remote
stock lines and remote-customer Payments cross shards); and the shard key stays a prefix of
every unique index, which a sharded collection needs to enforce them. ITEM has no warehouse
id and stays unsharded on the database's primary shard.

Schemas (schema=): normalized keeps the nine TPC-C tables as collections; denormalized (the
VLDB paper's) embeds the order lines in their ORDERS document; embedded (the sharded study's)
keeps each customer's orders, with their lines, and its history as arrays of its CUSTOMER
document (documents.OWNER_FIELDS), so NewOrder, Payment, OrderStatus and Delivery write one
customer document and stay on its warehouse's shard; NEW-ORDER stays a collection for
Delivery's oldest undelivered order, and StockLevel pays for it with an aggregation over the
district's customers (transactions._recent_items_embedded).

On SecantusDB (the test server) findAndModify costs a scan of the collection; use
find_and_modify=false there for anything but small data.

The driver is one class assembled from one part per job: connection.py (options, client,
describe), sessions.py (running a transaction and classifying its errors), loading.py (schema
and initial load), transactions.py (the five transactions) and verification.py (what the
consistency and durability checks read); connection.py's ServerStatistics fetches serverStatus
and dbStats for the results' `server` section; config.py holds the options, documents.py how rows
are stored.
"""

from __future__ import annotations

from .config import DEFAULT_PORT, OPTIONS, READ_PREFERENCES, _write_concern
from .connection import ServerStatistics, _one_line, topology_of
from .documents import INDEXES, SHARD_KEYS, _stored_cents
from .loading import Loading
from .sessions import _InvalidItem
from .transactions import Transactions
from .verification import Verification

# what the tests, acid/mongodb.py and ycsb/mongodb.py import from here
__all__ = [
    "DEFAULT_PORT",
    "INDEXES",
    "OPTIONS",
    "READ_PREFERENCES",
    "SHARD_KEYS",
    "MongoDBDriver",
    "_InvalidItem",
    "_one_line",
    "_stored_cents",
    "_write_concern",
    "topology_of",
]


class MongoDBDriver(Loading, Transactions, Verification, ServerStatistics):
    name = "mongodb"
