#!/usr/bin/env python3
"""Writes docs/chart-<chart>.md for every chart in charts/: its Chart.yaml facts and every value
its values.schema.json accepts, with the path, type, default (values.yaml), validation (enum,
bounds, pattern, lengths, required keys, key patterns) and description (the schema's, else the
comment above the key in values.yaml). operator/tests/test_api_docs.py fails when a page is stale:
run this after editing a chart's values.yaml or values.schema.json.

    hack/gen-chart-docs.py            write the pages
    hack/gen-chart-docs.py --check    exit 1 if a page is not what this would write
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
CHARTS = ROOT / "charts"
DOCS = ROOT / "docs"
_spec = importlib.util.spec_from_file_location("gen_api_docs", Path(__file__).with_name("gen-api-docs.py"))
assert _spec and _spec.loader
api = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(api)
code, text = api.code, api.text
KEY = re.compile(r"^(?P<indent> *)(?P<key>[A-Za-z0-9_.\-]+):(?P<rest>.*)$")


def charts() -> list[Path]:
    return sorted(p.parent for p in CHARTS.glob("*/values.schema.json"))


def comments(values_yaml: str) -> dict[str, str]:
    """path -> the comment lines right above the key (same indent) and its trailing comment."""
    out: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    pending: list[str] = []
    for line in values_yaml.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            pending.append(stripped.lstrip("#").strip())
            continue
        m = KEY.match(line)
        if not m or stripped.startswith("-"):
            pending = []
            continue
        indent = len(m["indent"])
        while stack and stack[-1][0] >= indent:
            stack.pop()
        stack.append((indent, m["key"]))
        path = ".".join(k for _, k in stack)
        trailing = m["rest"].split(" #", 1)[1].strip() if " #" in m["rest"] else ""
        said = " ".join([*pending, trailing]).strip()
        if said:
            out[path] = said
        pending = []
    return out


def type_of(s: dict) -> str:
    if "anyOf" in s or "oneOf" in s:
        return " or ".join(type_of(a) for a in s.get("anyOf", s.get("oneOf")))
    if "const" in s:
        return f"{s['type']} {code(s['const'])}" if "type" in s else code(s["const"])
    t = s.get("type", "any")
    if isinstance(t, list):
        t = " or ".join(t)
    if t == "array":
        return f"array of {type_of(s.get('items') or {})}"
    if t == "object" and isinstance(s.get("additionalProperties"), dict) and "properties" not in s:
        return f"map of {type_of(s['additionalProperties'])}"
    return t


def validation(s: dict) -> str:
    out = []
    if "enum" in s:
        out.append("one of " + ", ".join(code(v) for v in s["enum"]))
    for key, word in (("minimum", "≥"), ("exclusiveMinimum", ">"), ("maximum", "≤"), ("exclusiveMaximum", "<")):
        if key in s and not isinstance(s[key], bool):
            out.append(f"{word} {s[key]}")
    for key, word in (("minLength", "length ≥"), ("maxLength", "length ≤"), ("minItems", "items ≥")):
        if key in s:
            out.append(f"{word} {s[key]}")
    if "pattern" in s:
        out.append(f"pattern {code(s['pattern'])}")
    names = s.get("propertyNames")
    if names:
        out.append("keys: " + ", ".join(filter(None, [validation(names)])))
    if s.get("required"):
        out.append("required: " + ", ".join(code(r) for r in s["required"]))
    if s.get("additionalProperties") is False and "properties" in s:
        out.append("no other keys")
    for alt in s.get("anyOf", []):
        if validation(alt):
            out.append(f"or ({validation(alt)})")
    return "<br>".join(out)


def default_of(values, path: list[str]):
    for key in path:
        if not isinstance(values, dict) or key not in values:
            return None
        values = values[key]
    return values


def rows(schema: dict, path: list[str], values, said: dict[str, str]) -> list[str]:
    out = []
    for name, sub in (schema.get("properties") or {}).items():
        p = [*path, name]
        dotted = ".".join(p)
        default = default_of(values, p)
        leaf = "properties" not in sub
        shown = code(default) if default is not None and (leaf or default in ({}, [])) else ""
        description = text(sub.get("description") or said.get(dotted, ""))
        out.append(f"| `{dotted}` | {type_of(sub)} | {shown} | {validation(sub)} | {description} |")
        out += rows(sub, p, values, said)
    return out


def page(chart: Path) -> str:
    meta = yaml.safe_load((chart / "Chart.yaml").read_text())
    schema = json.loads((chart / "values.schema.json").read_text())
    values_text = (chart / "values.yaml").read_text()
    values = yaml.safe_load(values_text) or {}
    facts = [f"appVersion {meta.get('appVersion', '-')}"]  # not the chart's version: every change bumps it
    if meta.get("kubeVersion"):
        facts.append(f"Kubernetes {meta['kubeVersion']}")
    out = [
        f"# Chart values: {meta['name']}",
        "",
        f"<!-- generated by hack/gen-chart-docs.py from charts/{chart.name}/: do not edit, run the script -->",
        "",
        f"{text(meta.get('description', ''))} (`charts/{chart.name}`; {', '.join(facts)}).",
        "",
    ]
    if schema.get("description"):
        out += [text(schema["description"]), ""]
    out += [
        f"Every value `charts/{chart.name}/values.schema.json` accepts, with its default from `values.yaml`;",
        "Helm refuses a value the schema refuses, naming it.",
        "",
        "| value | type | default | validation | description |",
        "|---|---|---|---|---|",
        *rows(schema, [], values, comments(values_text)),
        "",
    ]
    return "\n".join(out)


def pages() -> dict[Path, str]:
    return {DOCS / f"chart-{chart.name}.md": page(chart) for chart in charts()}


def main() -> int:
    stale = []
    for path, content in pages().items():
        if sys.argv[1:] == ["--check"]:
            if not path.exists() or path.read_text() != content:
                stale.append(str(path.relative_to(ROOT)))
        else:
            path.write_text(content)
    if stale:
        print(f"stale: {', '.join(stale)}: run hack/gen-chart-docs.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
