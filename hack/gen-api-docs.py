#!/usr/bin/env python3
"""Writes docs/api.md, the API reference of the three CRDs in crds/: for each kind its group,
version, scope, short names and printer columns, then every field of its schema (spec and status)
with its path, type, default, validation (enum, bounds, pattern, lengths and counts, required
fields, the x-kubernetes-validations rules with their messages) and description.
operator/tests/test_api_docs.py fails when the committed page is stale: run this after editing a CRD.

    hack/gen-api-docs.py            write docs/api.md
    hack/gen-api-docs.py --check    exit 1 if docs/api.md is not what this would write
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
CRDS = [ROOT / "crds" / f"{name}.yaml" for name in ("benchmarkrun", "benchmarkresult", "benchmarkschedule")]
OUT = ROOT / "docs" / "api.md"
CODE = re.compile(r"(`[^`]*`)")


def text(s: str) -> str:
    """Prose for a table cell: one line; outside code spans pipes escaped and angle brackets shown
    (not read as HTML). Python-Markdown's tables leave pipes inside code spans alone."""
    s = " ".join(str(s).split())
    parts = CODE.split(s)
    for i, part in enumerate(parts):
        if i % 2 == 0:
            parts[i] = part.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")
    return "".join(parts)


def code(value) -> str:
    """A value as inline code in a table cell (JSON for anything but a plain string)."""
    if value == "":
        return '`""`'
    s = value if isinstance(value, str) else json.dumps(value, separators=(", ", ": "))
    s = " ".join(s.split())
    fence = "``" if "`" in s else "`"
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def type_of(s: dict) -> str:
    if s.get("x-kubernetes-int-or-string"):
        return "integer or string"
    if "anyOf" in s and "type" not in s:
        return " or ".join(sorted({a.get("type", "?") for a in s["anyOf"]}))
    t = s.get("type", "any")
    if t == "array":
        return f"array of {type_of(s.get('items') or {})}"
    if t == "object" and isinstance(s.get("additionalProperties"), dict) and "properties" not in s:
        return f"map of {type_of(s['additionalProperties'])}"
    if s.get("format"):
        t += f" ({s['format']})"
    return t


def validation(s: dict) -> str:
    out = []
    if "enum" in s:
        out.append("one of " + ", ".join(code(v) for v in s["enum"]))
    for key, word in (("minimum", "≥"), ("maximum", "≤")):
        if key in s:
            exclusive = s.get(f"exclusive{key.capitalize()}")
            out.append(f"{word.replace('≥', '>') if exclusive and key == 'minimum' else word} {s[key]}")
    if "anyOf" in s:
        for alt in s["anyOf"]:
            if "pattern" in alt:
                out.append(f"as a {alt.get('type', 'value')}: pattern {code(alt['pattern'])}")
    for key, word in (
        ("minLength", "length ≥"),
        ("maxLength", "length ≤"),
        ("minItems", "items ≥"),
        ("maxItems", "items ≤"),
        ("minProperties", "keys ≥"),
        ("maxProperties", "keys ≤"),
    ):
        if key in s:
            out.append(f"{word} {s[key]}")
    if "pattern" in s:
        out.append(f"pattern {code(s['pattern'])}")
    if s.get("required"):
        out.append("required: " + ", ".join(code(r) for r in s["required"]))
    if s.get("x-kubernetes-list-type"):
        keys = s.get("x-kubernetes-list-map-keys")
        out.append(f"list type {s['x-kubernetes-list-type']}" + (f" (keys {', '.join(keys)})" if keys else ""))
    if s.get("x-kubernetes-preserve-unknown-fields"):
        out.append("any fields kept")
    for rule in s.get("x-kubernetes-validations", []):
        said = rule.get("message") or rule.get("messageExpression")
        out.append(f"rule {code(rule['rule'])}" + (f": {text(said)}" if said else ""))
    return "<br>".join(out)


def rows(schema: dict, path: str, skip: dict[str, str]) -> list[str]:
    out = []
    for name, sub in (schema.get("properties") or {}).items():
        p = f"{path}.{name}" if path else name
        default = code(sub["default"]) if "default" in sub else ""
        description = text(sub.get("description", ""))
        if p in skip:
            out.append(f"| `{p}` | {type_of(sub)} | {default} | {validation(sub)} | {description} {skip[p]} |")
            continue
        out.append(f"| `{p}` | {type_of(sub)} | {default} | {validation(sub)} | {description} |")
        out += children(sub, p, skip)
    return out


def children(s: dict, p: str, skip: dict[str, str]) -> list[str]:
    if s.get("type") == "array" and isinstance(s.get("items"), dict):
        return children_of_item(s["items"], f"{p}[]", skip)
    if isinstance(s.get("additionalProperties"), dict) and "properties" not in s:
        return children_of_item(s["additionalProperties"], f"{p}.<key>", skip)
    return rows(s, p, skip)


def children_of_item(item: dict, p: str, skip: dict[str, str]) -> list[str]:
    """An array's items or a map's values: a row of their own only when they say something
    (validation or description) beyond their type, then their fields."""
    out = []
    if validation(item) or item.get("description"):
        default = code(item["default"]) if "default" in item else ""
        out.append(
            f"| `{p}` | {type_of(item)} | {default} | {validation(item)} | {text(item.get('description', ''))} |"
        )
    return out + children(item, p, skip)


def kind_section(crd: dict, run_spec: dict | None) -> list[str]:
    names = crd["spec"]["names"]
    out = [f"## {names['kind']}", ""]
    for version in crd["spec"]["versions"]:
        schema = version["schema"]["openAPIV3Schema"]
        facts = [
            f"`apiVersion: {crd['spec']['group']}/{version['name']}`",
            f"scope {crd['spec']['scope']}",
            f"plural `{names['plural']}`",
        ]
        if names.get("shortNames"):
            facts.append("short names " + ", ".join(f"`{s}`" for s in names["shortNames"]))
        if version.get("subresources"):
            facts.append("subresources " + ", ".join(f"`{s}`" for s in version["subresources"]))
        out += ["; ".join(facts) + ".", ""]
        if schema.get("description"):
            out += [text(schema["description"]), ""]
        columns = version.get("additionalPrinterColumns") or []
        if columns:
            out += [f"`kubectl get {names['plural']}` columns:", "", "| column | type | from |", "|---|---|---|"]
            for c in columns:
                wide = " (`-o wide`)" if c.get("priority") else ""
                out.append(f"| {c['name']}{wide} | {c['type']} | {code(c['jsonPath'])} |")
            out.append("")
        skip = {}
        template = ((schema["properties"].get("spec") or {}).get("properties") or {}).get("runTemplate")
        if run_spec is not None and template and template["properties"].get("spec") == run_spec:
            skip["spec.runTemplate.spec"] = (
                "Its fields are the BenchmarkRun's `spec` fields, with the same validation "
                "([BenchmarkRun](#benchmarkrun))."
            )
        top = {k: v for k, v in schema["properties"].items() if k not in ("apiVersion", "kind", "metadata")}
        out += [
            "| field | type | default | validation | description |",
            "|---|---|---|---|---|",
            *rows({"properties": top}, "", skip),
            "",
        ]
        if validation(schema):
            out += [f"On the whole object: {validation(schema)}", ""]
    return out


def generate() -> str:
    crds = [yaml.safe_load(p.read_text()) for p in CRDS]
    run_spec = crds[0]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    out = [
        "# API reference",
        "",
        "<!-- generated by hack/gen-api-docs.py from crds/*.yaml: do not edit, run the script -->",
        "",
        "Every field of the three custom resources, as their CRDs (`crds/`) define them: the API server",
        "applies the defaults and refuses what the validation refuses, naming the field. `kubectl explain",
        "benchmarkrun.spec.workload` shows the same from a cluster. A path's `[]` is an array's item,",
        "`<key>` a map's key.",
        "",
    ]
    for crd in crds:
        out += kind_section(crd, run_spec if crd["spec"]["names"]["kind"] == "BenchmarkSchedule" else None)
    return "\n".join(out).rstrip("\n") + "\n"


def main() -> int:
    text_ = generate()
    if sys.argv[1:] == ["--check"]:
        if OUT.read_text() != text_:
            print(f"{OUT.relative_to(ROOT)} is stale: run hack/gen-api-docs.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text_)
    return 0


if __name__ == "__main__":
    sys.exit(main())
