"""The error for bad usage (exit 2), in its own module: a command module imports it from here, so
it is the class `tpcc` catches even when cli.py runs as `python -m tpcc_runner.cli` (then loaded
twice: as __main__ and as tpcc_runner.cli); and the one parser of a positive number that every
command's options use, so a bad one reads the same everywhere."""

import argparse
from collections.abc import Callable


class UsageError(Exception):
    pass


def positive(kind: Callable[[str], int | float]) -> Callable[[str], int | float]:
    """An argparse type: a number of `kind` (int, float), at least 1."""

    what = "a positive whole number" if kind is int else "a positive number"

    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if value < 1:
            raise argparse.ArgumentTypeError(f"must be >= 1, got {text!r}")
        return value

    return parse
