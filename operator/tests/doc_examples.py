"""Every BenchmarkRun in the docs (README.md, docs/*.md: ```yaml blocks with `kind: BenchmarkRun`
or a bare `spec:` fragment) and crds/samples (with its subdirectories; a file may hold several
runs), as the manifests a user would apply."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
YAML_BLOCK = re.compile(r"^```yaml\n(.*?)^```", re.S | re.M)


def doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "charts").glob("*/README.md"))]


def doc_manifests() -> list[tuple[str, dict]]:
    """(where, manifest) for each example; a fragment gets a name from its place in the file."""
    out = []
    for path in doc_files():
        text = path.read_text()
        # a block may hold several documents (docs/gitops.md: a Kustomization beside the run)
        blocks = enumerate(YAML_BLOCK.findall(text), 1)
        for n, doc in ((n, doc) for n, block in blocks for doc in yaml.safe_load_all(block)):
            where = f"{path.relative_to(ROOT)}#{n}"
            if not isinstance(doc, dict):
                continue
            if doc.get("kind") == "BenchmarkRun":
                out.append((where, doc))
            elif set(doc) == {"spec"}:
                out.append(
                    (
                        where,
                        {
                            "apiVersion": "bench.tpcc.dev/v1alpha1",
                            "kind": "BenchmarkRun",
                            "metadata": {"name": f"doc-example-{n}"},
                            "spec": doc["spec"],
                        },
                    )
                )
    for path in sample_files():
        docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
        where = str(path.relative_to(ROOT))
        out += [(where if len(docs) == 1 else f"{where}#{d['metadata']['name']}", d) for d in docs]
    return out


def sample_files() -> list[Path]:
    """crds/samples and its subdirectories (papers/: the studies' suites, several runs a file)."""
    return sorted((ROOT / "crds" / "samples").rglob("*.yaml"))
