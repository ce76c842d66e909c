"""Every manifest of crds/samples/papers/ against the studies' own texts (studies.py, written from
../shared/studies/): its knobs are the ones the text states, its annotations quote the numbers
the text prints, each quote is found in the text, it is valid as written and each deployment it
makes holds its data; and every result figure or table of a study is a manifest or says which
CRD feature it needs (docs/papers.md)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import studies
import yaml
from crd_schema import defaulted_spec, validate
from tpcc_operator import plan, sweep_layout
from tpcc_operator.runspec import RunSpec

ROOT = Path(__file__).resolve().parents[2]
PAPERS = ROOT / "crds" / "samples" / "papers"
TEXTS = Path(os.environ.get("TPCC_STUDIES_DIR", ROOT.parent / "shared" / "studies"))
ANNOTATION = "bench.tpcc.dev/"
SETTINGS = plan.Settings(charts_dir=ROOT / "charts", runner_image="local/tpcc-runner:dev")
RUN = plan.Run(name="paper", namespace="tpcc-papers", uid="u", generation=1)
BY_NAME = {r.name: r for r in studies.RUNS}


def _manifests() -> list[tuple[str, dict]]:
    out = []
    for path in sorted(PAPERS.glob("*/*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc:
                out.append((str(path.relative_to(PAPERS)), doc))
    return out


MANIFESTS = _manifests()
IDS = [m["metadata"]["name"] for _, m in MANIFESTS]


def _at(spec: dict, path: str):
    """The value at a dot-separated spec path (KeyError names the path when it is absent)."""
    node = spec
    for key in path.split("."):
        if not isinstance(node, dict) or key not in node:
            raise KeyError(f"spec.{path} is not set")
        node = node[key]
    return node


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("\\$", "$")).strip()


def test_every_manifest_is_a_result_of_the_table_and_every_result_a_manifest():
    assert len(set(IDS)) == len(IDS), "one name per BenchmarkRun"
    assert sorted(IDS) == sorted(BY_NAME), "a manifest without a row in studies.py, or a row without a manifest"
    for where, manifest in MANIFESTS:
        assert BY_NAME[manifest["metadata"]["name"]].file == where


@pytest.mark.parametrize("where, manifest", MANIFESTS, ids=IDS)
def test_its_annotations_are_the_studys_numbers(where, manifest):
    row = BY_NAME[manifest["metadata"]["name"]]
    notes = manifest["metadata"]["annotations"]
    assert notes[ANNOTATION + "paper"] == studies.PAPER[row.study]
    assert notes[ANNOTATION + "figure"] == row.figure
    assert notes[ANNOTATION + "paper-result"] == row.printed
    assert where.split("/")[0] == row.study


@pytest.mark.parametrize("where, manifest", MANIFESTS, ids=IDS)
def test_its_knobs_are_the_ones_the_text_states(where, manifest):
    row = BY_NAME[manifest["metadata"]["name"]]
    wrong = {}
    for path, value in row.knobs.items():
        try:
            got = _at(manifest["spec"], path)
        except KeyError as e:
            wrong[path] = str(e)
            continue
        if got != value:
            wrong[path] = f"{got!r}, the study: {value!r}"
    assert not wrong, f"{where}#{row.name} drifted from the study: {wrong}"


@pytest.mark.parametrize("where, manifest", MANIFESTS, ids=IDS)
def test_it_is_valid_as_written_and_each_deployment_holds_its_data(where, manifest):
    assert validate(manifest) == []
    spec = RunSpec.parse(defaulted_spec(manifest["spec"]))
    assert (ROOT / "crds" / "samples" / "papers" / where).read_text().startswith("#"), "a header comment"
    if not spec.database.deployed:
        return
    if spec.sweep is None:
        plan.helm_release(RUN, spec, SETTINGS)  # DatabaseTooSmall would raise
        return
    for cell in (c for c in sweep_layout.sweep_cells(spec) if c.loads):
        plan.helm_release(sweep_layout.cell_run(RUN, cell), sweep_layout.cell_spec(spec, cell), SETTINGS)


@pytest.mark.parametrize("row", studies.RUNS, ids=[r.name for r in studies.RUNS])
def test_what_it_quotes_is_in_the_text(row):
    text = TEXTS / studies.TEXT[row.study]
    if not text.is_file():
        pytest.skip(f"{text} not on this machine (TPCC_STUDIES_DIR)")
    body = _squash(text.read_text())
    missing = [q for q in row.quotes if _squash(q) not in body]
    assert not missing, f"not in {text.name}: {missing}"


def test_the_printed_numbers_are_among_the_quotes():
    """Every number of a paper-result annotation is in one of its row's quotes (so in the text),
    or is a section, table, figure or appendix number."""
    for row in studies.RUNS:
        quoted = " ".join(_squash(q) for q in row.quotes)
        cited = set(re.findall(r"(?:§|[A-D]\.|Fig\. |Figs )(\d[\d.]*)", row.printed))
        for number in re.findall(r"\d[\d.]*\d|\d", row.printed):
            if number in cited or number.rstrip(".") in cited:
                continue
            assert number in quoted or number in row.figure, f"{row.name}: {number} is quoted from nowhere"


def test_every_result_of_every_study_is_a_manifest_or_names_the_feature_it_needs():
    covered = {name for item in studies.INVENTORY for name in item.runs}
    assert covered <= set(BY_NAME)
    assert set(BY_NAME) - covered == {"voltdb-tpmc-by-hosts"}, "only the variant reproduces no result"
    for item in studies.INVENTORY:
        assert item.runs or item.missing, f"{item.study} {item.figure}: neither a manifest nor why not"
        assert all(BY_NAME[n].study == item.study for n in item.runs)
    doc = (ROOT / "docs" / "papers.md").read_text()
    for path in sorted({r.file for r in studies.RUNS}):
        assert f"`{path.split('/')[-1]}`" in doc, f"docs/papers.md does not name {path}"
