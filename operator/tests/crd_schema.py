"""What the API server does with a CRD's structural schema, offline: defaulting, validation at apply
(types, unknown fields, bounds, patterns, the x-kubernetes-validations CEL rules) and Kubernetes
quantities parsed as resource.ParseQuantity parses them. The BenchmarkRun CRD's tests use it, and
dashboards/tests checks the chart's monitoring objects against prometheus-operator's CRDs with it."""

from __future__ import annotations

import copy
import re
from decimal import Decimal
from pathlib import Path

import yaml
from tpcc_operator.runspec import apply_defaults  # the operator's own, as the API server defaults

ROOT = Path(__file__).resolve().parents[2]
CRD_PATH = ROOT / "crds" / "benchmarkrun.yaml"


def load_crd() -> dict:
    return yaml.safe_load(CRD_PATH.read_text())


def crd_schema() -> dict:
    return load_crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


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
        return {
            (_escape(k) if k in props else k): _cel_value(props.get(k) or (extra if isinstance(extra, dict) else {}), v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_cel_value(schema.get("items") or {}, v) for v in value]
    return value


# ---- Kubernetes quantities: k8s.io/apimachinery/pkg/api/resource ParseQuantity (v0.33), step by step ----
# kubernetes.utils.parse_quantity (Python's Decimal) took "NaN", "Infinity", "1_000" and " 1", which the
# API server refuses; CEL's isQuantity() and quantity() are ParseQuantity.

_DIGITS = "0123456789"
_SUFFIX_CHARS = "eEinumkKMGTP"  # what parseQuantityString takes into the suffix
_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_PARSE_INT = re.compile(r"[+-]?[0-9]+")  # strconv.ParseInt(s, 10, 64): no spaces, no '_' in base 10
_MAX_INT64 = (1 << 63) - 1


def _int32(n: int) -> int:
    """Go's int32 conversion (wraps): the exponent is kept as an int32."""
    return (n + (1 << 31)) % (1 << 32) - (1 << 31)


def _split_quantity(text: str) -> tuple[bool, str, str, str, str]:
    """parseQuantityString: (positive, value, numerator, denominator, suffix); ValueError as
    ErrFormatWrong."""
    positive, pos, end = True, 0, len(text)
    if text[0] in "+-":
        positive, pos = text[0] == "+", 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return positive, "0", "0", "", ""
    i = pos
    while i < end and text[i] in _DIGITS:
        i += 1
    if i >= end:
        return positive, text, text[pos:], "", ""
    num, pos, denom = text[pos:i] or "0", i, ""
    if text[pos] == ".":
        i = pos = pos + 1
        while i < end and text[i] in _DIGITS:
            i += 1
        if i >= end:
            return positive, text, num, text[pos:], ""
        denom, pos = text[pos:i], i  # "1.G" is taken: an empty denominator
    value, start = text[:pos], pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    if any(c not in _DIGITS for c in text[pos:]):
        raise ValueError(f"quantities must match the regular expression: {text!r}")
    return positive, value, num, denom, text[start:]


def parse_quantity(text: str) -> Decimal:
    """The exact value the API server gives the quantity `text` (ValueError where it refuses it):
    "100m", "1.5Gi", "1e3", "+.5", "1." and "0.1n" (rounded up to 1n) are quantities; "NaN",
    "Infinity", "1_000", " 1", "1 ", "1e", "1Ki3", ".e-10" and "" are not."""
    if text == "":
        raise ValueError("quantities must match the regular expression: ''")
    if text == "0":
        return Decimal(0)
    positive, value, num, denom, suffix = _split_quantity(text)
    if suffix in _DECIMAL_SUFFIXES:
        base, exponent = 10, _DECIMAL_SUFFIXES[suffix]
    elif suffix in _BINARY_SUFFIXES:
        base, exponent = 2, _BINARY_SUFFIXES[suffix]
    elif (
        len(suffix) > 1
        and suffix[0] in "eE"
        and _PARSE_INT.fullmatch(suffix[1:])
        and -(1 << 63) <= int(suffix[1:]) <= _MAX_INT64
    ):
        base, exponent = 10, _int32(int(suffix[1:]))
    else:
        raise ValueError(f"unable to parse quantity's suffix: {text!r}")
    sign = "" if positive else "-"
    # The fast path: an int64 and a base-10 scale, exact, when the digits fit.
    if base == 10:
        mantissa, precision = 1, 18 - len(num) - len(denom)
    elif not denom:
        mantissa, precision = 1 << exponent, 15 - len(num) - int(exponent * 3 / 10) - 1
    else:
        mantissa, precision = 1, -1
    scale = _int32((exponent if base == 10 else 0) - len(denom))
    if precision >= 0 and scale >= -9 and int(num + denom) * mantissa <= _MAX_INT64:
        return Decimal(f"{sign}{int(num + denom) * mantissa}E{scale}")
    # Otherwise an arbitrary-precision decimal: the digits as written, the suffix applied, rounded
    # up (away from zero) to a whole nano, a binary one capped at the int64 maximum.
    if not any(c in _DIGITS for c in value):
        raise ValueError(f"quantities must be numeric: {text!r}")
    whole, _, fraction = value.lstrip("+-").partition(".")
    unscaled, inf_scale = int(whole + fraction or "0"), len(fraction)
    if base == 10:
        inf_scale = _int32(inf_scale + _int32(-exponent))
    else:
        unscaled <<= exponent
    if unscaled and inf_scale > 9:
        drop = inf_scale - 9
        unscaled = 1 if drop > len(str(unscaled)) else -(-unscaled // 10**drop)
        inf_scale = 9
    amount = Decimal(f"{unscaled}E{-inf_scale}")
    if base == 2 and amount > _MAX_INT64:
        amount = Decimal(_MAX_INT64)
    return amount.copy_negate() if sign else amount  # exact: unary minus would round to 28 digits


def _cel_functions():
    """The Kubernetes quantity and strings libraries, as far as the CRD's rules use them."""
    from celpy import celtypes

    def is_quantity(text):
        try:
            parse_quantity(str(text))
            return celtypes.BoolType(True)
        except ValueError:
            return celtypes.BoolType(False)

    return {
        "quantity": lambda text: parse_quantity(str(text)),
        # the Kubernetes strings library's split
        "split": lambda text, sep: celtypes.ListType([celtypes.StringType(p) for p in str(text).split(str(sep))]),
        "isQuantity": is_quantity,
        "compareTo": lambda a, b: celtypes.IntType((a > b) - (a < b)),
    }


def _cel_evaluate(expression: str, schema: dict, value):
    import celpy

    env = celpy.Environment()
    program = env.program(env.compile(expression), functions=_cel_functions())
    return program.evaluate({"self": celpy.json_to_cel(_cel_value(schema, value))})


def _cel_holds(rule: str, schema: dict, value) -> bool:
    return bool(_cel_evaluate(rule, schema, value))


def _cel_message(rule: dict, schema: dict, value) -> str:
    """A failed rule's message: its messageExpression evaluated, as the API server does, else message."""
    if "messageExpression" in rule:
        return str(_cel_evaluate(rule["messageExpression"], schema, value))
    return rule["message"]


def _type_ok(schema: dict, value) -> bool:
    if schema.get("x-kubernetes-int-or-string"):
        return isinstance(value, (int, str)) and not isinstance(value, bool)
    want = schema.get("type")
    return {
        "object": lambda: isinstance(value, dict),
        "array": lambda: isinstance(value, list),
        "string": lambda: isinstance(value, str),
        "boolean": lambda: isinstance(value, bool),
        "integer": lambda: isinstance(value, int) and not isinstance(value, bool),
        "number": lambda: isinstance(value, (int, float)) and not isinstance(value, bool),
    }.get(want, lambda: True)()


def violations(schema: dict, value, path: str = "") -> list[str]:
    """Errors as 'path: message' for a defaulted value: types, unknown fields (kubectl's strict
    field validation), enum/bounds/pattern/lengths, required, then the CEL rules of valid nodes."""
    if not _type_ok(schema, value):
        return [f"{path}: must be {schema.get('type', 'int or string')}"]
    out = []
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{path}: Unsupported value: {value!r}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        # OpenAPI v3.0: exclusiveMinimum/exclusiveMaximum are booleans that make the bound strict
        low, high = schema.get("minimum"), schema.get("maximum")
        strict_low, strict_high = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
        if low is not None and (value <= low if strict_low else value < low):
            out.append(f"{path}: should be greater than {'' if strict_low else 'or equal to '}{low}")
        if high is not None and (value >= high if strict_high else value > high):
            out.append(f"{path}: should be less than {'' if strict_high else 'or equal to '}{high}")
    if isinstance(value, str):
        if "pattern" in schema and not re.search(schema["pattern"], value):
            out.append(f"{path}: should match '{schema['pattern']}'")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            out.append(f"{path}: may not be more than {schema['maxLength']} bytes")
        if "minLength" in schema and len(value) < schema["minLength"]:
            out.append(f"{path}: should be at least {schema['minLength']} chars long")
    if isinstance(value, list):
        if len(value) > schema.get("maxItems", len(value)) or len(value) < schema.get("minItems", 0):
            out.append(f"{path}: wrong number of items")
        for i, item in enumerate(value):
            out += violations(schema.get("items") or {}, item, f"{path}[{i}]")
    if isinstance(value, dict) and not schema.get("x-kubernetes-preserve-unknown-fields"):
        props, extra = schema.get("properties") or {}, schema.get("additionalProperties")
        if len(value) > schema.get("maxProperties", len(value)):
            out.append(f"{path}: must have at most {schema['maxProperties']} properties")
        if len(value) < schema.get("minProperties", 0):
            out.append(f"{path}: should have at least {schema['minProperties']} properties")
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
                out.append(f"{path or '<root>'}: {_cel_message(rule, schema, value)}")
    return out


def validate(manifest: dict) -> list[str]:
    """What `kubectl apply` of this BenchmarkRun would be told (empty: accepted)."""
    schema = crd_schema()
    return violations(schema, apply_defaults(schema, copy.deepcopy(manifest)))
