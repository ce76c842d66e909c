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



# ---- offline validation: what the API server checks at apply ---------------------------------

def _escape(name: str) -> str:
    """CEL sees a declared property name with '-' as __dash__ (Kubernetes' escaping)."""
    return name.replace("-", "__dash__")


def _cel_value(schema: dict, value):
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        return {(_escape(k) if k in props else k):
                _cel_value(props.get(k) or (extra if isinstance(extra, dict) else {}), v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_cel_value(schema.get("items") or {}, v) for v in value]
    return value


def _cel_functions():
    """The Kubernetes quantity library, as far as the CRD's rules use it."""
    from celpy import celtypes
    from kubernetes.utils import parse_quantity

    def is_quantity(text):
        try:
            parse_quantity(str(text))
            return celtypes.BoolType(True)
        except ValueError:
            return celtypes.BoolType(False)
    return {"quantity": lambda text: celtypes.DoubleType(float(parse_quantity(str(text)))),
            "isQuantity": is_quantity,
            "compareTo": lambda a, b: celtypes.IntType((a > b) - (a < b))}


def _cel_holds(rule: str, schema: dict, value) -> bool:
    import celpy
    env = celpy.Environment()
    program = env.program(env.compile(rule), functions=_cel_functions())
    return bool(program.evaluate({"self": celpy.json_to_cel(_cel_value(schema, value))}))


def _type_ok(schema: dict, value) -> bool:
    if schema.get("x-kubernetes-int-or-string"):
        return isinstance(value, (int, str)) and not isinstance(value, bool)
    want = schema.get("type")
    return {"object": lambda: isinstance(value, dict), "array": lambda: isinstance(value, list),
            "string": lambda: isinstance(value, str), "boolean": lambda: isinstance(value, bool),
            "integer": lambda: isinstance(value, int) and not isinstance(value, bool),
            "number": lambda: isinstance(value, (int, float)) and not isinstance(value, bool),
            }.get(want, lambda: True)()


def violations(schema: dict, value, path: str = "") -> list[str]:
    """Errors as 'path: message' for a defaulted value: types, unknown fields (kubectl's strict
    field validation), enum/bounds/pattern/lengths, required, then the CEL rules of valid nodes."""
    import re
    if not _type_ok(schema, value):
        return [f"{path}: must be {schema.get('type', 'int or string')}"]
    out = []
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{path}: Unsupported value: {value!r}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            out.append(f"{path}: should be greater than or equal to {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            out.append(f"{path}: should be less than or equal to {schema['maximum']}")
    if isinstance(value, str):
        if "pattern" in schema and not re.search(schema["pattern"], value):
            out.append(f"{path}: should match '{schema['pattern']}'")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            out.append(f"{path}: may not be more than {schema['maxLength']} bytes")
    if isinstance(value, list):
        if len(value) > schema.get("maxItems", len(value)) or len(value) < schema.get("minItems", 0):
            out.append(f"{path}: wrong number of items")
        for i, item in enumerate(value):
            out += violations(schema.get("items") or {}, item, f"{path}[{i}]")
    if isinstance(value, dict) and not schema.get("x-kubernetes-preserve-unknown-fields"):
        props, extra = schema.get("properties") or {}, schema.get("additionalProperties")
        if len(value) > schema.get("maxProperties", len(value)):
            out.append(f"{path}: must have at most {schema['maxProperties']} properties")
        for key in schema.get("required") or []:
            if key not in value:
                out.append(f"{path}.{key}: Required value")
        for key, sub in value.items():
            if key in props:
                out += violations(props[key], sub, f"{path}.{key}")
            elif isinstance(extra, dict):
                out += violations(extra, sub, f"{path}.{key}")
            elif path != ".metadata":
                out.append(f'{path}: unknown field "{key}"')
    if not out:
        for rule in schema.get("x-kubernetes-validations") or []:
            if not _cel_holds(rule["rule"], schema, value):
                out.append(f"{path or '<root>'}: {rule['message']}")
    return out


def validate(manifest: dict) -> list[str]:
    """What `kubectl apply` of this BenchmarkRun would be told (empty: accepted)."""
    schema = crd_schema()
    return violations(schema, apply_defaults(schema, copy.deepcopy(manifest)))
