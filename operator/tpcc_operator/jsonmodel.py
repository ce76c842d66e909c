"""The one mapping between the operator's dataclasses and its resources' JSON, both ways.

A field's JSON name is its name in camelCase, or its `json` metadata where that is not it
(runUID, tpmC). A field that is None is left out: null in a merge patch would delete the field,
and what an older operator wrote simply lacks the fields it did not know, which parse back as
None. Nothing is coerced on the way in (the CRD's schema typed it), so a document parsed and
written again is the document it was.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import re
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

T = TypeVar("T")
M = TypeVar("M", bound="JsonModel")


def named(name: str) -> dict[str, str]:
    """Field metadata: the JSON name, where camelCase of the Python name is not it."""
    return {"json": name}


def json_name(f: dataclasses.Field) -> str:
    return f.metadata.get("json") or re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), f.name)


def to_json(value: Any) -> Any:
    """A dataclass (and what it holds) as JSON: camelCase names, None fields left out."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            json_name(f): to_json(v) for f in dataclasses.fields(value) if (v := getattr(value, f.name)) is not None
        }
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, Mapping):
        return {k: to_json(v) for k, v in value.items()}
    return value


@functools.cache
def _type_hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def from_json(cls: type[T], data: Mapping[str, Any], path: str = "") -> T:
    """`data` as the dataclass `cls`: an absent (or null) field takes its default; an absent
    field without one raises ValueError naming it."""
    if not isinstance(data, Mapping):
        raise ValueError(f"{path or cls.__name__}: expected an object, got {type(data).__name__}")
    hints = _type_hints(typing.cast(type, cls))
    kwargs = {}
    for f in dataclasses.fields(typing.cast(type, cls)):
        key = json_name(f)
        if data.get(key) is not None:
            kwargs[f.name] = _value(hints[f.name], data[key], f"{path}.{key}")
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise ValueError(f"{path or cls.__name__}.{key}: required")
    return cls(**kwargs)


def _value(hint: Any, value: Any, path: str) -> Any:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return _value(next(a for a in args if a is not type(None)), value, path)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return from_json(hint, value, path)
    if origin is tuple:
        return tuple(_value(args[0], v, f"{path}[{i}]") for i, v in enumerate(value))
    if origin is Mapping:
        return {k: _value(args[1], v, f"{path}.{k}") for k, v in value.items()}
    return copy.deepcopy(value)


class JsonModel:
    """A dataclass that is a part of a resource's JSON, read and written by the mapping above."""

    def to_json(self) -> dict[str, Any]:
        return to_json(self)

    @classmethod
    def from_json(cls: type[M], data: Mapping[str, Any]) -> M:
        return from_json(cls, data)

    @classmethod
    def in_status(cls: type[M], status: Mapping[str, Any], key: str) -> M | None:
        """The part of `status` at `key`, None where it is absent (or empty)."""
        return from_json(cls, status[key], key) if status.get(key) else None
