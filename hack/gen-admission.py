#!/usr/bin/env python3
"""Writes charts/tpcc-operator/templates/admission-policy.yaml: ValidatingAdmissionPolicies that
refuse, at `kubectl apply`, a BenchmarkRun (or a BenchmarkSchedule's runTemplate) whose
database.deploy.chart is neither the shipped chart nor in the operator's allowedCharts, or whose
deploy.values for a shipped chart break that chart's values.schema.json: a key the chart does not
offer (so no root, privileged or host settings), a value of the wrong type or out of range, a
string that does not match its pattern (no injected YAML or shell). The operator checks the same
again before Helm runs (chart_policy.py): this is the first line, so a GitOps tool shows a refused
manifest instead of a run that fails seconds later.

The CEL is compiled from the charts' schemas (the keywords they use: type, enum, pattern, minimum,
maximum, maxLength, maxItems, maxProperties, required, additionalProperties, propertyNames); a keyword it does
not know stops this script, so the policy never silently checks less than the schema says.

    python3 hack/gen-admission.py           # rewrite the template
    python3 hack/gen-admission.py --check   # exit 1 if it is stale (a test runs this)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The JSON Schema keywords compiled to CEL (the ones the database charts' values.schema.json use);
# the operator's own check (the second line, chart_policy.py) judges every keyword with jsonschema.
KEYWORDS = frozenset(
    {
        "type",
        "enum",
        "pattern",
        "minimum",
        "maximum",
        "maxLength",
        "maxItems",
        "maxProperties",
        "required",
        "properties",
        "additionalProperties",
        "propertyNames",
        "items",
        "description",
        "$schema",
        "title",
    }
)

OUT = ROOT / "charts" / "tpcc-operator" / "templates" / "admission-policy.yaml"
CHARTS = ("voltdb", "mongodb")
CEL_TYPES = {
    "string": "string",
    "integer": "int",
    "boolean": "bool",
    "object": "map",
    "array": "list",
    "number": "double",
}
# Where the spec of a run is in each kind the policies see.
KINDS = {
    "benchmarkruns": ("object.spec", "spec"),
    "benchmarkschedules": ("object.spec.runTemplate.spec", "spec.runTemplate.spec"),
}


def lit(value) -> str:
    """A CEL literal (JSON's string escapes are CEL's, for the patterns' backslashes too)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(lit(v) for v in value) + "]"
    return json.dumps(value)


def leaf_check(schema: dict, x: str) -> tuple[str, str]:
    """(CEL that holds when `x` satisfies this schema's own keywords, what the message says)."""
    unknown = set(schema) - KEYWORDS
    if unknown:
        raise SystemExit(f"gen-admission: JSON Schema keywords {sorted(unknown)} not compiled to CEL")
    types = schema.get("type")
    types = [types] if isinstance(types, str) else list(types or [])
    alternatives, says = [], []
    for t in types or ["any"]:
        parts = [f"type({x}) == {CEL_TYPES[t]}"] if t != "any" else []
        if t in ("integer", "number"):
            if "minimum" in schema:
                parts.append(f"{x} >= {schema['minimum']}")
            if "maximum" in schema:
                parts.append(f"{x} <= {schema['maximum']}")
        if t == "string":
            if "pattern" in schema:
                parts.append(f"{x}.matches({lit(schema['pattern'])})")
            if "maxLength" in schema:
                parts.append(f"size({x}) <= {schema['maxLength']}")
        if t == "array" and "maxItems" in schema:
            parts.append(f"size({x}) <= {schema['maxItems']}")
        if t == "object" and "maxProperties" in schema:
            parts.append(f"size({x}) <= {schema['maxProperties']}")
        alternatives.append(" && ".join(parts) or "true")
    if "enum" in schema:
        alternatives = [f"({a}) && {x} in {lit(schema['enum'])}" for a in alternatives]
        says.append(f"one of {', '.join(map(json.dumps, schema['enum']))}")
    says = [" or ".join(types)] + says if types else says
    if "pattern" in schema:
        says.append(f"matching {schema['pattern']}")
    for word, key in (("at least", "minimum"), ("at most", "maximum")):
        if key in schema:
            says.append(f"{word} {schema[key]}")
    if "maxLength" in schema:
        says.append(f"at most {schema['maxLength']} characters")
    if "maxItems" in schema:
        says.append(f"at most {schema['maxItems']} items")
    if "maxProperties" in schema:
        says.append(f"at most {schema['maxProperties']} keys")
    expr = " || ".join(f"({a})" for a in alternatives) if len(alternatives) > 1 else alternatives[0]
    return expr, ", ".join(says)


def rules(schema: dict, x: str, path: str, guard: list[str]) -> list[tuple[str, str, str | None]]:
    """(condition, message, messageExpression) for this node and everything under it; each rule
    holds when the value is absent (`guard` says it is there, a map at every step)."""
    out = []
    present = " && ".join(guard)
    check, says = leaf_check(schema, x)
    if check != "true":
        out.append((f"!({present}) || ({check})", f"{path}: must be {says}", None))
    props = schema.get("properties") or {}
    is_map = guard + [f"type({x}) == map"]
    extra = schema.get("additionalProperties", True)
    if extra is False:
        allowed = lit(sorted(props))
        out.append(
            (
                f"!({' && '.join(is_map)}) || {x}.all(k, k in {allowed})",
                "",
                f"'{path}: ' + {x}.filter(k, !(k in {allowed})).join(', ') + ' not offered by the chart "
                f"(allowed: {', '.join(sorted(props))})'",
            )
        )
    elif isinstance(extra, dict):
        item, item_says = leaf_check(extra, f"{x}[k]")
        out.append((f"!({' && '.join(is_map)}) || {x}.all(k, {item})", f"{path}.*: must be {item_says}", None))
    if "propertyNames" in schema:
        name, name_says = leaf_check({"type": "string", **schema["propertyNames"]}, "k")
        out.append((f"!({' && '.join(is_map)}) || {x}.all(k, {name})", f"{path}: keys must be {name_says}", None))
    for key in schema.get("required") or []:
        out.append((f"!({' && '.join(is_map)}) || {lit(key)} in {x}", f"{path}.{key}: required", None))
    for key, sub in props.items():
        child = f"{x}[{lit(key)}]"
        out += rules(sub, child, f"{path}.{key}", is_map + [f"{lit(key)} in {x}"])
    if isinstance(schema.get("items"), dict):
        item, item_says = leaf_check(schema["items"], "i")
        out.append(
            (f"!({present} && type({x}) == list) || {x}.all(i, {item})", f"{path}[*]: must be {item_says}", None)
        )
    return out


def yaml_str(s: str) -> str:
    return json.dumps(s)  # a JSON string is a YAML double-quoted scalar


def policy(kind: str) -> str:
    root, path = KINDS[kind]
    lines = [
        "---",
        "apiVersion: admissionregistration.k8s.io/v1",
        "kind: ValidatingAdmissionPolicy",
        "metadata:",
        f'  name: {{{{ include "tpcc-operator.name" . }}}}-{kind}',
        '  labels: {{- include "tpcc-operator.labels" . | nindent 4 }}',
        "spec:",
        "  failurePolicy: Fail",
        "  matchConstraints:",
        "    resourceRules:",
        (
            f'    - {{apiGroups: [bench.tpcc.dev], apiVersions: ["*"], operations: [CREATE, UPDATE], '
            f"resources: [{kind}]}}"
        ),
        "  # only what changes the spec: kopf's finalizer and annotation updates of a run created before",
        "  # the policy (or under an older schema) must still pass, or the run could never be deleted",
        "  matchConditions:",
        "  - {name: spec-changed, expression: \"request.operation == 'CREATE' || object.spec != oldObject.spec\"}",
        "  variables:",
        f"  - {{name: db, expression: {yaml_str(f'{root}.database')}}}",
        (
            "  - {name: chart, expression: "
            "\"has(variables.db.deploy) && has(variables.db.deploy.chart) ? variables.db.deploy.chart : ''\"}"
        ),
        "  - {name: shipped, expression: \"variables.chart == '' || variables.chart == variables.db.type\"}",
        "  # allowedCharts compiled in as a CEL list (a ConfigMap as paramKind is refused at random on",
        "  # some API servers: kubernetes/kubernetes#130887, #133827)",
        "  - {name: allowed, expression: {{ .Values.allowedCharts | toJson | quote }}}",
        '  - {name: hasValues, expression: "has(variables.db.deploy) && has(variables.db.deploy.values)"}',
        '  - {name: values, expression: "variables.db.deploy.values"}  # read only when hasValues',
        "  validations:",
        '  - expression: "variables.shipped || variables.chart in variables.allowed"',
        "    messageExpression: "
        + yaml_str(
            f'"{path}.database.deploy.chart " + variables.chart'
            ' + " is not allowed: leave it empty for the operator\'s "'
            ' + variables.db.type + " chart, or use one of the operator\'s allowedCharts ("'
            ' + (variables.allowed.filter(c, c != "").size() > 0 ? variables.allowed.filter(c, c != "").join(", ")'
            ' : "none") + ")"'
        ),
        "    reason: Invalid",
    ]
    for chart in CHARTS:
        schema = json.loads((ROOT / "charts" / chart / "values.schema.json").read_text())
        applies = f"!variables.hasValues || !variables.shipped || variables.db.type != {lit(chart)}"
        for condition, message, message_expr in rules(
            schema, "variables.values", f"{path}.database.deploy.values", ["true"]
        ):
            condition = condition.replace("!(true) || ", "").replace("true && ", "")
            lines.append(f"  - expression: {yaml_str(f'{applies} || {condition}')}")
            if message_expr:
                lines.append(f"    messageExpression: {yaml_str(message_expr)}")
            else:
                lines.append(f"    message: {yaml_str(f'{message} (chart {chart})')}")
            lines.append("    reason: Invalid")
    lines += [
        "---",
        "apiVersion: admissionregistration.k8s.io/v1",
        "kind: ValidatingAdmissionPolicyBinding",
        "metadata:",
        f'  name: {{{{ include "tpcc-operator.name" . }}}}-{kind}',
        '  labels: {{- include "tpcc-operator.labels" . | nindent 4 }}',
        "spec:",
        f'  policyName: {{{{ include "tpcc-operator.name" . }}}}-{kind}',
        "  validationActions: [Deny]",
        "  matchResources:",
        "    {{- if not .Values.clusterWide }}",
        "    namespaceSelector:",
        '      matchLabels: {kubernetes.io/metadata.name: {{ include "tpcc-operator.watchNamespace" . | quote }}}',
        "    {{- end }}",
    ]
    return "\n".join(lines)


def render() -> str:
    head = [
        "# GENERATED by hack/gen-admission.py from charts/{voltdb,mongodb}/values.schema.json: do not edit.",
        "# The first line of the operator's chart policy (chart_policy.py is the second): a BenchmarkRun",
        "# or BenchmarkSchedule naming a chart outside allowedCharts, or values its shipped chart does not",
        "# offer, is refused at apply with the field named; the chart's allowedCharts are compiled in.",
        "{{- if .Values.admissionPolicy.enabled }}",
    ]
    return "\n".join(
        head
        + [policy(k).removeprefix("---\n") if i == 0 else policy(k) for i, k in enumerate(KINDS)]
        + ["{{- end }}", ""]
    )


def main() -> int:
    text = render()
    if "--check" in sys.argv:
        if not OUT.exists() or OUT.read_text() != text:
            print(f"{OUT.relative_to(ROOT)} is stale: run python3 hack/gen-admission.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text)
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
