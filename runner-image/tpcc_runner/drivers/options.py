"""Driver options (`--driver-opt KEY=VALUE`, a BenchmarkRun's workload.driverOptions), declared
once per driver as a table and parsed the same way for every database, TPC-C driver and YCSB
store alike: an unknown key or a value of the wrong kind is one clear error naming the driver,
the option and what it wants (or the known keys), before anything connects (a typo is never
ignored). The same table is what `tpcc run --help` (and every command with --driver-opt) lists.

    OPTIONS = (Option("call_timeout", 60.0, seconds, "a call's outcome is unknown after this"), ...)
    opts = parse("voltdb", OPTIONS, connection_options.extra)   # {"call_timeout": 60.0, ...}
"""

from __future__ import annotations

import dataclasses
import textwrap
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any


class Want(ValueError):
    """A value parser's refusal: what the option wants, e.g. "seconds > 0"."""


class ValueParser:
    """A value parser: text in, the typed value out, or Want(wants)."""

    def __init__(self, wants: str, convert: Callable[[str], Any], allowed: tuple[str, ...] = ()):
        self.wants = wants  # what the error and the help say the option wants
        self.allowed = allowed  # the values it takes, when it is a closed set
        self._convert = convert  # returns the value, or raises ValueError for a refusal

    def __call__(self, text: str) -> Any:
        try:
            return self._convert(text)
        except ValueError:
            raise Want(self.wants) from None


@dataclass(frozen=True)
class Option:
    name: str
    default: Any  # already parsed (None: unset)
    parse: ValueParser
    help: str = ""  # what it does, for --help

    @property
    def wants(self) -> str:
        return self.parse.wants

    @property
    def allowed(self) -> tuple[str, ...]:
        return self.parse.allowed


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:  # refuses nan too
        raise ValueError(text)
    return value


def _digits(text: str) -> int:
    if not text.isdigit():
        raise ValueError(text)
    return int(text)


BOOLEANS = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}


def _boolean(text: str) -> bool:
    if text.lower() not in BOOLEANS:
        raise ValueError(text)
    return BOOLEANS[text.lower()]


def _one_of(allowed: tuple[str, ...]) -> Callable[[str], str]:
    def convert(text: str) -> str:
        if text not in allowed:
            raise ValueError(text)
        return text

    return convert


seconds = ValueParser("seconds > 0", _positive_float)
count = ValueParser("a whole number >= 0", _digits)
boolean = ValueParser("true or false", _boolean, allowed=("true", "false"))
text = ValueParser("text", str)
integer = ValueParser("a whole number", int)


def choice(*allowed: str) -> ValueParser:
    return ValueParser("one of " + "|".join(allowed), _one_of(allowed), allowed)


def with_defaults(options: tuple[Option, ...], **defaults: Any) -> tuple[Option, ...]:
    """The same table with other defaults (a YCSB store that reuses a TPC-C driver's options)."""
    return tuple(dataclasses.replace(o, default=defaults[o.name]) if o.name in defaults else o for o in options)


def parse(driver: str, options: tuple[Option, ...], given: dict[str, str]) -> dict[str, Any]:
    """Every declared option's value: the given one parsed, else its default."""
    declared = {o.name: o for o in options}
    unknown = sorted(set(given) - set(declared))
    if unknown:
        raise ValueError(f"{driver}: unknown driver option(s) {', '.join(unknown)} (known: {', '.join(declared)})")
    values = {}
    for name, option in declared.items():
        if name not in given:
            values[name] = option.default
            continue
        try:
            values[name] = option.parse(given[name])
        except Want as want:
            raise ValueError(f"{driver}: driver option {name} must be {want}, got {given[name]!r}") from None
    return values


def listing(tables: Iterable[tuple[str, tuple[Option, ...]]]) -> str:
    """The tables as --help text: per database, each option with what it wants, its default and
    what it does."""
    lines = ["driver options (--driver-opt KEY=VALUE), per --db:"]
    for driver, options in tables:
        lines.append(f"  {driver}:")
        for o in options:
            default = "unset" if o.default is None or o.default == "" else _shown(o.default)
            lines.append(f"    {o.name}: {o.wants}, default {default}")
            lines += textwrap.wrap(o.help, 96, initial_indent=" " * 6, subsequent_indent=" " * 6)
    return "\n".join(lines) + "\n"


def _shown(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
