"""The error for bad usage (exit 2), in its own module: a command module imports it from here, so
it is the class `tpcc` catches even when cli.py runs as `python -m tpcc_runner.cli` (then loaded
twice: as __main__ and as tpcc_runner.cli); and the parsers every command shares (tpcc's,
tpcc ycsb's, tpcc acid's), so a bad value reads the same everywhere."""

from __future__ import annotations

import argparse
import datetime as dt
import os
from collections.abc import Callable

from .drivers.base import ConnectionOptions


class UsageError(Exception):
    pass


def at_least(minimum: int, kind: Callable[[str], int | float]) -> Callable[[str], int | float]:
    """An argparse type: a number of `kind` (int, float), at least `minimum`."""

    what = "whole number" if kind is int else "number"
    what = f"a positive {what}" if minimum >= 1 else f"a {what}"

    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {text!r}")
        return value

    return parse


def positive(kind: Callable[[str], int | float]) -> Callable[[str], int | float]:
    return at_least(1, kind)


def connection_options(args) -> ConnectionOptions:
    extra = {}
    for kv in args.driver_opt:
        key, sep, value = kv.partition("=")
        if not sep or not key:
            raise UsageError(f"--driver-opt expects KEY=VALUE, got {kv!r}")
        extra[key] = value
    return ConnectionOptions(
        endpoints=[e.strip() for e in args.endpoints.split(",") if e.strip()],
        username=os.environ.get("TPCC_DB_USERNAME") or None,
        password=os.environ.get("TPCC_DB_PASSWORD") or None,
        connect_timeout=args.connect_timeout,
        extra=extra,
    )


def parse_time(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        pass
    try:
        t = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"not a RFC 3339 time or epoch seconds: {text!r}") from None
    return (t if t.tzinfo else t.replace(tzinfo=dt.timezone.utc)).timestamp()
