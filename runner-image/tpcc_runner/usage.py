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


def shard(text: str) -> tuple[int, int]:
    """An argparse type: runner INDEX of COUNT, as INDEX/COUNT."""
    i, sep, n = text.partition("/")
    try:
        index, count = int(i), int(n)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected INDEX/COUNT such as 0/2, got {text!r}") from None
    if not sep or count < 1 or not 0 <= index < count:
        raise argparse.ArgumentTypeError(f"expected 0 <= INDEX < COUNT, got {text!r}")
    return index, count


def share_of(total: int, shard: tuple[int, int], flag: str) -> int:
    """Runner INDEX's share of `total` clients over COUNT runners: total // COUNT, one more for
    the first total % COUNT runners, so any total can be asked for and the runners' client
    numbers k*COUNT + INDEX (k below each one's share) are exactly 0 .. total-1."""
    index, count = shard
    share = total // count + (index < total % count)
    if share < 1:
        raise UsageError(f"{flag} {total} leaves runner {index} of {count} without a client")
    return share


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
