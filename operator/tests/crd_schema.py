"""The real CRD, and specs defaulted by its schema as the API server would."""
from __future__ import annotations

import copy
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
CRD_PATH = ROOT / "crds" / "benchmarkrun.yaml"


def load_crd() -> dict:
    return yaml.safe_load(CRD_PATH.read_text())


def crd_schema() -> dict:
    return load_crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def apply_defaults(schema: dict, value):
    """Structural defaulting: fill absent properties that have a default, then recurse."""
    if isinstance(value, dict):
        for key, sub in (schema.get("properties") or {}).items():
            if key not in value and "default" in sub:
                value[key] = copy.deepcopy(sub["default"])
            if key in value:
                value[key] = apply_defaults(sub, value[key])
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            for key in value:
                value[key] = apply_defaults(extra, value[key])
    elif isinstance(value, list) and "items" in schema:
        value = [apply_defaults(schema["items"], v) for v in value]
    return value


def defaulted_spec(spec: dict) -> dict:
    return apply_defaults(crd_schema()["properties"]["spec"], copy.deepcopy(spec))

