"""Driver registry: the runner names a database, this module imports its driver lazily so
a user without (say) the FoundationDB binding can still run VoltDB."""

import importlib

from .base import ConnectionOptions, Driver

DRIVERS = {
    "voltdb": "tpcc_runner.drivers.voltdb:VoltDBDriver",
    "mongodb": "tpcc_runner.drivers.mongodb:MongoDBDriver",
    "foundationdb": "tpcc_runner.drivers.foundationdb:FoundationDBDriver",
}


def driver_module(name: str) -> str:
    """The module of a database's driver, for a process to import before it is needed."""
    return DRIVERS[name].split(":")[0]


def driver_class(name: str) -> type[Driver]:
    try:
        module, cls = DRIVERS[name].split(":")
    except KeyError:
        raise ValueError(f"unknown database {name!r} (choose from {', '.join(DRIVERS)})") from None
    return getattr(importlib.import_module(module), cls)


def make_driver(name: str, options: ConnectionOptions) -> Driver:
    return driver_class(name)(options)
