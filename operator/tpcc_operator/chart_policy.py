"""Which Helm chart a BenchmarkRun may install and with which values, decided before Helm runs.

Anyone allowed to create a BenchmarkRun shapes the database pods, so: the chart is the one the
operator ships for database.type (its Database.chart), or one the operator's administrator allowlisted (chart value
allowedCharts); values for a shipped chart must satisfy its values.schema.json, which admits
only what the chart exposes (no privileged container, hostPath, host network, service account
or root user). The values are judged by the jsonschema library with every keyword of the draft
the schema declares, as Helm judges them again at install.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator, ValidationError
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for


class ReleaseRefused(ValueError):
    """The spec asks for a chart or values the operator will not install (a one-line reason)."""

    reason = "ReleaseRefused"


class DatabaseTooSmall(ReleaseRefused):
    """The database the values describe cannot hold the warehouses the spec loads."""

    reason = "DatabaseTooSmall"


def chart_reference(db: str, shipped: str | None, chart: str, charts_dir: Path, allowed: tuple[str, ...]) -> str:
    """What `helm` is given for database.deploy.chart: the chart shipped for the database (None:
    none) for "" or its own name, an allowlisted reference as written; anything else is refused."""
    if shipped and chart in ("", shipped):
        return str(charts_dir / shipped)
    if chart in allowed:
        return chart
    listed = ", ".join(allowed) if allowed else "none"
    raise ReleaseRefused(
        f"database.deploy.chart {chart!r} is not allowed: leave it empty for the "
        f"operator's {db} chart, or use one of the operator's allowedCharts ({listed})"
    )


def check_values(shipped: str | None, chart: str, values: dict, charts_dir: Path) -> None:
    """Values for a shipped chart, over its defaults as Helm merges them, must satisfy its
    values.schema.json; an allowlisted chart is trusted with its own schema."""
    merged = with_defaults(shipped, chart, values, charts_dir)
    if shipped is None or merged is None:
        return
    schema = values_schema(shipped, charts_dir)
    problems = schema_violations(schema, merged, "database.deploy.values")
    if problems:
        raise ReleaseRefused("; ".join(problems[:3]))


def values_schema(shipped: str, charts_dir: Path) -> dict:
    """A shipped chart's values.schema.json."""
    return copy.deepcopy(_parsed(charts_dir / shipped / "values.schema.json"))


@functools.cache
def _parsed(path: Path) -> Any:
    """A shipped chart's JSON or YAML file, parsed once: the charts are the operator image's and
    do not change while it runs, and a sweep's every deployment and cell reads them (parsing
    values.yaml was 8 ms a read, 32 reads a pass of a 4-deployment, 8-size sweep). Callers get
    copies."""
    text = path.read_text()
    return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)


def with_defaults(shipped: str | None, chart: str, values: dict, charts_dir: Path) -> dict | None:
    """The values a shipped chart renders with (its defaults under them, merged as Helm does);
    None for an allowlisted chart, whose defaults the operator does not know."""
    if shipped is None or chart not in ("", shipped):
        return None
    defaults = copy.deepcopy(_parsed(charts_dir / shipped / "values.yaml")) or {}
    return _merged(defaults, values)


def _merged(base: dict, top: dict) -> dict:
    out = dict(base)
    for k, v in top.items():
        out[k] = _merged(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def validator(schema: dict) -> Validator:
    """A jsonschema validator of the draft the schema's $schema names, read as Helm reads it (http or
    https: the charts write https://json-schema.org/draft-07/schema#, whose registered id is http);
    no $schema is Draft 2020-12, Helm's default. A draft jsonschema does not know is refused."""
    declared = schema.get("$schema")
    if declared is None:
        return Draft202012Validator(schema)
    for uri in (declared, declared.replace("https://", "http://", 1), declared.replace("http://", "https://", 1)):
        # jsonschema returns the default as given for an unknown draft; its stubs only allow a class
        cls = validator_for({"$schema": uri}, default=None)  # type: ignore[arg-type]
        if cls is not None:
            cls.check_schema(schema)
            return cls(schema)
    raise ValueError(
        f"the chart's values.schema.json declares $schema {declared!r}, a draft the operator does not know"
    )


def schema_violations(schema: dict, value: Any, path: str) -> list[str]:
    """Every way `value` breaks the JSON schema, one message per problem, each starting with the
    value's path (`path` for the root)."""
    return [_message(e, path) for e in validator(schema).iter_errors(value)]


def _where(path: str, parts) -> str:
    return path + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts)


def _message(error: ValidationError, path: str) -> str:
    where = _where(path, error.absolute_path)
    if "propertyNames" in error.absolute_schema_path:  # judged on a key: the path is its object's
        return f"{where}: key {_says(error)}"
    if error.validator == "additionalProperties" and error.validator_value is False:
        schema = error.schema if isinstance(error.schema, dict) else {}
        allowed, patterns = schema.get("properties") or {}, schema.get("patternProperties") or {}
        instance: Any = error.instance  # an object: additionalProperties judged it
        extra = [k for k in instance if k not in allowed and not any(re.search(p, k) for p in patterns)]
        return "; ".join(f"{where}.{k}: not a value of this chart (allowed: {', '.join(allowed)})" for k in extra)
    return f"{where}: {_says(error)}"


def _says(error: ValidationError) -> str:
    """What the value must be, in the words the operator's status and events use."""
    # validator_value is typed Any | Unset; an error raised by a keyword always carries its value
    word, value = error.validator, error.instance
    want: Any = error.validator_value
    if word == "type":
        return f"must be {' or '.join([want] if isinstance(want, str) else want)}, got {value!r}"
    if word == "enum":
        return f"must be one of {', '.join(map(json.dumps, want))}"
    if word == "const":
        return f"must be {json.dumps(want)}"
    if word == "pattern":
        return f"{value!r} is not allowed here (must match {want})"
    bounds = {
        "minimum": "at least",
        "maximum": "at most",
        "exclusiveMinimum": "more than",
        "exclusiveMaximum": "less than",
    }
    if word in bounds:
        return f"must be {bounds[word]} {want}"
    sizes = {
        "minLength": "shorter than {} characters",
        "maxLength": "longer than {} characters",
        "minItems": "fewer than {} items",
        "maxItems": "more than {} items",
    }
    if word in sizes:
        return sizes[word].format(want)
    if word == "anyOf":
        return " or ".join(f"({_says(e)})" for e in error.context) + ", got " + repr(value)
    return error.message
