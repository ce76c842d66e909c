"""Driver options (`--driver-opt KEY=VALUE`, a BenchmarkRun's workload.driverOptions), declared
once per driver and parsed the same way for every database: an unknown key or a value of the
wrong kind is one clear error naming the driver, the option and what it wants, before anything
connects (a typo is never ignored).

    OPTIONS = (Option("call_timeout", 60.0, seconds), ...)   # the driver's docstring says what each does
    opts = parse("voltdb", OPTIONS, connection_options.extra)   # {"call_timeout": 60.0, ...}
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


class Want(ValueError):
    """A value parser's refusal: what the option wants, e.g. "seconds > 0"."""


@dataclass(frozen=True)
class Option:
    name: str
    default: Any            # already parsed (None: unset)
    parse: Callable[[str], Any]


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise Want("seconds > 0")
    return value


def count(text: str) -> int:
    if not text.isdigit():
        raise Want("a whole number >= 0")
    return int(text)


BOOLEANS = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}


def boolean(value: str) -> bool:
    if value.lower() not in BOOLEANS:
        raise Want("true or false")
    return BOOLEANS[value.lower()]


def text(value: str) -> str:
    return value


def integer(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise Want("a whole number") from None


def choice(*allowed: str) -> Callable[[str], str]:
    def parse(value: str) -> str:
        if value not in allowed:
            raise Want("one of " + "|".join(allowed))
        return value
    return parse


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

