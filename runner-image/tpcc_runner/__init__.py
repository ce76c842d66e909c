"""TPC-C runner: load, run and check TPC-C against VoltDB, MongoDB and FoundationDB."""

__version__ = "0.1.0"
