"""The generated reference pages are what their generators write from the files they document:
docs/api.md from the CRDs (hack/gen-api-docs.py), docs/chart-<chart>.md from each chart's
values.schema.json and values.yaml (hack/gen-chart-docs.py). Fails after an edit of a CRD or a
chart's values until the script runs, as test_schedule_crd does for the generated CRD copies."""

from __future__ import annotations

import importlib.util
import json
import re

import yaml
from crd_schema import ROOT


def _load(script: str):
    spec = importlib.util.spec_from_file_location(script.replace("-", "_"), ROOT / "hack" / f"{script}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


api_docs = _load("gen-api-docs")
chart_docs = _load("gen-chart-docs")


def test_the_api_reference_is_not_stale():
    assert api_docs.OUT.read_text() == api_docs.generate(), "docs/api.md is stale: run hack/gen-api-docs.py"


def test_the_chart_values_pages_are_not_stale():
    pages = chart_docs.pages()
    assert {p.name for p in pages} == {"chart-tpcc-operator.md", "chart-voltdb.md", "chart-mongodb.md"}
    stale = [p.name for p, text in pages.items() if not p.exists() or p.read_text() != text]
    assert stale == [], "run hack/gen-chart-docs.py"


def _paths(schema: dict, path: str = "") -> list[str]:
    out = []
    for name, sub in (schema.get("properties") or {}).items():
        p = f"{path}.{name}" if path else name
        out.append(p)
        if sub.get("type") == "array" and isinstance(sub.get("items"), dict):
            out += _paths(sub["items"], f"{p}[]")
        elif isinstance(sub.get("additionalProperties"), dict) and "properties" not in sub:
            out += _paths(sub["additionalProperties"], f"{p}.<key>")
        else:
            out += _paths(sub, p)
    return out


def test_the_api_reference_has_every_field_with_its_description_default_and_rules():
    page = (ROOT / "docs" / "api.md").read_text()
    rows = {m[1]: m[0] for m in re.finditer(r"^\| `([^`]+)` \|.*$", page, re.M)}
    for name in ("benchmarkrun", "benchmarkresult"):
        crd = yaml.safe_load((ROOT / "crds" / f"{name}.yaml").read_text())
        schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
        kind = crd["spec"]["names"]["kind"]
        section = page.split(f"\n## {kind}\n", 1)[1].split("\n## ", 1)[0]
        top = {k: v for k, v in schema["properties"].items() if k not in ("apiVersion", "kind", "metadata")}
        paths = _paths({"properties": top})
        assert len(paths) > 20
        missing = [p for p in paths if f"| `{p}` |" not in section]
        assert missing == [], kind
    run = yaml.safe_load((ROOT / "crds" / "benchmarkrun.yaml").read_text())
    workload = run["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["workload"]
    row = rows["spec.workload.warehouses"]
    assert str(workload["properties"]["warehouses"]["default"]) in row and "≤ 100000" in row
    rules = [r for r in json.dumps(run).split('"rule": ')[1:]]
    assert len(rules) > 10 and page.count("rule `") >= len(rules)
    assert "workload.clients must be at least runners.parallelism" in page  # a rule's message


def test_the_chart_pages_have_every_value_with_its_default():
    for chart in ("tpcc-operator", "voltdb", "mongodb"):
        page = (ROOT / "docs" / f"chart-{chart}.md").read_text()
        schema = json.loads((ROOT / "charts" / chart / "values.schema.json").read_text())
        missing = [p for p in _paths(schema) if "[]" not in p and "<key>" not in p and f"| `{p}` |" not in page]
        assert missing == [], chart
    page = (ROOT / "docs" / "chart-tpcc-operator.md").read_text()
    assert re.search(r"^\| `clusterWide` \| boolean \| `false` \|.*ClusterRole", page, re.M)
