"""The studies' printed numbers as data (the bench.tpcc.dev/paper-values annotation of
crds/samples/papers/, tpcc_runner.paper_values): each value is printed so in the study's text and
quoted in the manifest's paper-result, each point is a configuration the manifest's sweep runs
(as the operator lays the sweep out), and every manifest whose study prints a number for it has
them, or says here why its numbers stay prose."""

from __future__ import annotations

import pytest
import studies
from crd_schema import defaulted_spec
from test_study_knobs import ANNOTATION, BY_NAME, IDS, MANIFESTS, TEXTS, _squash
from tpcc_operator import sweep_layout
from tpcc_operator.runspec import RunSpec
from tpcc_runner import paper_values
from tpcc_runner.paper_values import PaperValue, Point

# runs whose study prints numbers for them that are no value at a configuration of ours
PROSE = {
    "sharded-fig9": "12% between the schemas' saturation points: points of a search, not cells of the sweep",
    "sharded-fig10-sharded": "warehouses and clients at saturation, sharded against unsharded: two runs' searches",
    "sharded-fig10-unsharded": "as sharded-fig10-sharded",
    "voltdb-fig9": "where the data stops fitting (60 warehouses): no throughput",
    "voltdb-fig10": 'k 0 "has a 4% greater throughput" than k 1 and 2 together (not significantly different): '
    "no one configuration to relate it to",
}
NO_NUMBER = ("no value printed", "none:")


def _values(manifest: dict) -> tuple[PaperValue, ...]:
    text = (manifest["metadata"].get("annotations") or {}).get(paper_values.VALUES)
    return paper_values.parse(text) if text else ()


def _configurations(spec: RunSpec, point: Point) -> set[tuple]:
    """The configurations (cells without their repetition) of the sweep at the point."""
    return {
        (c.warehouses, c.clients, c.matrix)
        for c in sweep_layout.sweep_cells(spec)
        if point.matches(c.warehouses, c.clients, dict(c.matrix))
    }


def _unnamed_axes(spec: RunSpec, point: Point) -> list[str]:
    """What the point names that the sweep does not vary (a single run varies nothing)."""
    sweep = spec.sweep
    fields = {a.field for a in (sweep.matrix or ())} if sweep else set()
    wrong = [f for f, _ in point.matrix if f not in fields]
    if point.warehouses is not None and not (sweep and sweep.warehouses):
        wrong.append("warehouses")
    if point.clients is not None and not (sweep and (sweep.clients or sweep.saturation)):
        wrong.append("clients")
    return wrong


def test_every_printed_number_is_data_or_says_why_it_is_prose():
    with_values = {m["metadata"]["name"] for _, m in MANIFESTS if _values(m)}
    printing = {r.name for r in studies.RUNS if not r.printed.startswith(NO_NUMBER)}
    assert printing - with_values == set(PROSE), "a run printing numbers without paper-values nor a reason here"
    assert not with_values & set(PROSE)


@pytest.mark.parametrize("where, manifest", MANIFESTS, ids=IDS)
def test_each_value_is_printed_so_in_the_text_and_quoted_in_the_paper_result(where, manifest):
    values = _values(manifest)
    if not values:
        return
    row = BY_NAME[manifest["metadata"]["name"]]
    assert all(_squash(v.printed) in _squash(row.printed) for v in values), "paper-values beside paper-result"
    assert paper_values.parse(paper_values.to_annotation(values)) == values
    text = TEXTS / studies.TEXT[row.study]
    if not text.is_file():
        pytest.skip(f"{text} not on this machine (TPCC_STUDIES_DIR)")
    body = _squash(text.read_text())
    assert [v.printed for v in values if _squash(v.printed) not in body] == []
    # a table row named in `where` ("App. A.1, row M60 100 96") prints the value after it, and its
    # last column is the point's threads (a single run's: the workload's clients)
    rows = {v.where.split(", row ")[1]: v for v in values if ", row " in v.where}
    assert [r for r, v in rows.items() if _squash(f"{r} {v.printed}") not in body] == []
    clients = manifest["spec"]["workload"]["clients"]
    assert all(int(r.split()[-1]) == (v.point.clients or clients) for r, v in rows.items())


@pytest.mark.parametrize("where, manifest", MANIFESTS, ids=IDS)
def test_each_point_is_a_configuration_the_sweep_runs(where, manifest):
    values = _values(manifest)
    if not values:
        return
    spec = RunSpec.parse(defaulted_spec(manifest["spec"]))
    for v in values:
        for point in (v.point, *([v.relative_to] if v.relative_to else [])):
            assert _unnamed_axes(spec, point) == [], f"{v.label()}: not an axis of the sweep"
            if spec.sweep is not None:
                assert _configurations(spec, point), f"{v.label()}: no cell of the sweep at {point.label()}"
        if spec.sweep is not None:
            assert v.metric in paper_values.THROUGHPUTS, f"{v.label()}: a sweep's configurations have throughput only"
        if v.relative_to is not None:
            assert v.printed.endswith(("%", " times")), v.printed
            assert len(_configurations(spec, v.point)) == len(_configurations(spec, v.relative_to)) == 1
            assert v.point != v.relative_to


def test_the_annotation_is_one_of_the_manifests_own():
    for _, manifest in MANIFESTS:
        notes = manifest["metadata"]["annotations"]
        assert set(notes) <= {ANNOTATION + k for k in ("paper", "figure", "paper-result", "paper-values")}
