"""Which Helm chart a BenchmarkRun may install and with which values, decided before Helm runs.

Anyone allowed to create a BenchmarkRun shapes the database pods, so: the chart is the one the
operator ships for database.type, or one the operator's administrator allowlisted (chart value
allowedCharts); values for a shipped chart must satisfy its values.schema.json, which admits
only what the chart exposes (no privileged container, hostPath, host network, service account
or root user). Helm checks the same schema again at install.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

SHIPPED_CHARTS = ("voltdb", "mongodb")
_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "integer": int, "number": (int, float)}


class ReleaseRefused(ValueError):
    """The spec asks for a chart or values the operator will not install (a one-line reason)."""


def chart_reference(db: str, chart: str, charts_dir: Path, allowed: tuple[str, ...]) -> str:
    """What `helm` is given for database.deploy.chart: the shipped chart for "" (or its own
    name), an allowlisted reference as written; anything else is refused."""
    if chart in ("", db) and db in SHIPPED_CHARTS:
        return str(charts_dir / db)
    if chart in allowed:
        return chart
    listed = ", ".join(allowed) if allowed else "none"
    raise ReleaseRefused(f"database.deploy.chart {chart!r} is not allowed: leave it empty for the "
                         f"operator's {db} chart, or use one of the operator's allowedCharts ({listed})")


def check_values(db: str, chart: str, values: dict, charts_dir: Path) -> None:
    """Values for a shipped chart, over its defaults as Helm merges them, must satisfy its
    values.schema.json; an allowlisted chart is trusted with its own schema."""
    if chart not in ("", db):
        return
    schema = json.loads((charts_dir / db / "values.schema.json").read_text())
    defaults = yaml.safe_load((charts_dir / db / "values.yaml").read_text()) or {}
    problems = schema_violations(schema, _merged(defaults, values), "database.deploy.values")
    if problems:
        raise ReleaseRefused("; ".join(problems[:3]))


def _merged(base: dict, top: dict) -> dict:
    out = dict(base)
    for k, v in top.items():
        out[k] = _merged(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _is(value: Any, type_: str) -> bool:
    if type_ in ("integer", "number") and isinstance(value, bool):
        return False
    return isinstance(value, _TYPES[type_])


# The JSON Schema keywords judged here (the ones the database charts' values.schema.json use, as
# hack/gen-admission.py compiles them to CEL); a schema with any other is refused, never half-checked.
KEYWORDS = frozenset({"type", "enum", "pattern", "minimum", "maximum", "maxLength", "maxItems", "required",
                      "properties", "additionalProperties", "propertyNames", "items", "description", "$schema",
                      "title"})


def schema_violations(schema: dict, value: Any, path: str) -> list[str]:
    """The JSON Schema keywords the charts' values.schema.json use; one message per problem."""
    unknown = set(schema) - KEYWORDS
    if unknown:
        raise ValueError(f"{path}: the chart's values.schema.json uses {sorted(unknown)}, which the operator "
                         "does not check")
    types = schema.get("type")
    if types is not None:
        types = [types] if isinstance(types, str) else types
        if not any(_is(value, t) for t in types):
            return [f"{path}: must be {' or '.join(types)}, got {value!r}"]
    out = []
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{path}: must be one of {', '.join(map(json.dumps, schema['enum']))}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            out.append(f"{path}: must be at least {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            out.append(f"{path}: must be at most {schema['maximum']}")
    if isinstance(value, (str, int)) and not isinstance(value, bool) and "pattern" in schema:
        if not re.search(schema["pattern"], str(value)):
            out.append(f"{path}: {str(value)!r} is not allowed here (must match {schema['pattern']})")
    if isinstance(value, str) and len(value) > schema.get("maxLength", len(value)):
        out.append(f"{path}: longer than {schema['maxLength']} characters")
    if isinstance(value, list):
        if len(value) > schema.get("maxItems", len(value)):
            out.append(f"{path}: more than {schema['maxItems']} items")
        for i, item in enumerate(value):
            out += schema_violations(schema.get("items") or {}, item, f"{path}[{i}]")
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties", True)
        names = schema.get("propertyNames")
        for key, sub in value.items():
            if names is not None:
                out += [f"{path}: key {m.split(': ', 1)[1]}" for m in schema_violations(names, key, path)]
            if key in props:
                out += schema_violations(props[key], sub, f"{path}.{key}")
            elif extra is False:
                out.append(f"{path}.{key}: not a value of this chart (allowed: {', '.join(props)})")
            elif isinstance(extra, dict):
                out += schema_violations(extra, sub, f"{path}.{key}")
        out += [f"{path}.{key}: required" for key in schema.get("required") or [] if key not in value]
    return out
