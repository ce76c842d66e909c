"""The typed parts of a BenchmarkRun's status (runstatus.py) against the CRD's status schema, field
by field both ways, and the statuses captured from real runs (those written by older operators
too, which lack newer fields) read as them and written again unchanged."""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from collections.abc import Mapping
from pathlib import Path

import pytest
import yaml
from crd_schema import CRD_PATH, crd_schema
from runner_docs import acid_report
from status_parts import PARTS, changed_by_types
from tpcc_operator import history
from tpcc_operator.jsonmodel import json_name
from tpcc_operator.results import acid_status

SCHEMA_TYPES = {int: "integer", float: "number", str: "string", bool: "boolean"}
FIXTURES = sorted((Path(__file__).resolve().parent / "fixtures" / "gitops").rglob("*.json"))


def _unwrapped(hint):
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        (inner,) = [a for a in typing.get_args(hint) if a is not type(None)]
        return inner
    return hint


def mismatches(cls: type, schema: dict, path: str) -> list[str]:
    """A property without a field, a field without a property, a type that differs."""
    props = schema.get("properties") or {}
    fields = {json_name(f): f for f in dataclasses.fields(cls)}
    out = [f"{path}.{name}: in the CRD, not in {cls.__name__}" for name in props.keys() - fields.keys()]
    out += [f"{path}.{name}: in {cls.__name__}, not in the CRD" for name in fields.keys() - props.keys()]
    hints = typing.get_type_hints(cls)
    for name in fields.keys() & props.keys():
        out += _type_mismatches(_unwrapped(hints[fields[name].name]), props[name], f"{path}.{name}")
    return out


def _type_mismatches(hint, prop: dict, where: str) -> list[str]:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if dataclasses.is_dataclass(hint):
        return mismatches(hint, prop, where) if prop.get("type") == "object" else [f"{where}: not an object"]
    if origin is tuple:
        if prop.get("type") != "array":
            return [f"{where}: a tuple, the CRD says {prop.get('type')}"]
        return _type_mismatches(_unwrapped(args[0]), prop["items"], f"{where}[]")
    if origin is Mapping:
        if prop.get("type") != "object":
            return [f"{where}: a mapping, the CRD says {prop.get('type')}"]
        extra = prop.get("additionalProperties")
        return _type_mismatches(args[1], extra, f"{where}{{}}") if isinstance(extra, dict) else []
    if hint is typing.Any:
        return []
    if SCHEMA_TYPES.get(hint) != prop.get("type"):
        return [f"{where}: {hint}, the CRD says {prop.get('type')}"]
    return []


@pytest.mark.parametrize("key", PARTS)
def test_each_typed_part_is_its_crd_schema_field_by_field(key):
    status = crd_schema()["properties"]["status"]
    assert mismatches(PARTS[key], status["properties"][key], f"status.{key}") == []


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_captured_statuses_read_as_types_and_write_back_unchanged(path):
    status = json.loads(path.read_text()).get("status") or {}
    assert changed_by_types(status) == []


def test_a_part_written_by_the_operator_reads_back_as_it_was():
    acid = acid_status(acid_report(failed={"isolation5": "C_BALANCE off by 12.50"}))
    assert type(acid).from_json(acid.to_json()) == acid
    assert [t.test for t in acid.failed] == ["isolation5"] and acid.to_json()["counts"]["not-applicable"] == 0


# A BenchmarkResult's spec as the first operator that wrote results stored it (2026-11-22): no
# runToken, matrix, opsPerSecond, cost, load, acid or the checks after load and during the run.
OLDEST_RESULT = {
    "run": "bench",
    "runUID": "0f3e9aa1-0000-4000-8000-000000000000",
    "runGeneration": 3,
    "phase": "Succeeded",
    "verdict": "Pass",
    "regression": {"message": "no spec.regression: nothing compared", "comparisonHash": "abc"},
    "comparisonHash": "abc",
    "specHash": "",
    "startTime": "2026-11-22T10:00:00Z",
    "completionTime": "2026-11-22T10:05:00Z",
    "measureStart": "2026-11-22T10:02:00Z",
    "measureEnd": "2026-11-22T10:03:00Z",
    "tpmC": 4200.5,
    "efficiency": 81.6,
    "measuredSeconds": 60,
    "p99Ms": {"NEW_ORDER": 12.5, "PAYMENT": 8},
    "latencyMs": {"NEW_ORDER": {"p50": 3.1, "p90": 7.2, "p99": 12.5, "max": 40.0}},
    "durable": True,
    "lost": 0,
    "consistent": True,
    "violated": [],
    "faults": [],
    "database": {"type": "voltdb", "images": ["voltdb/voltdb-community:9.2.1"], "release": "bench-g3"},
    "runSpec": {"database": {"type": "voltdb"}},
    "resultsConfigMap": "bench-g3-0f3e9",
    "runnerImage": "local/tpcc-runner:dev",
}


def test_the_benchmark_result_spec_is_its_crd_schema_field_by_field():
    crd = yaml.safe_load((CRD_PATH.parent / "benchmarkresult.yaml").read_text())
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert mismatches(history.ResultSpec, spec, "spec") == []


def test_a_benchmark_result_an_older_operator_stored_still_loads_and_writes_back_unchanged():
    result = history.ResultSpec.from_json(OLDEST_RESULT)
    assert result.to_json() == OLDEST_RESULT and result.ops_per_second is None and result.acid is None
    entry = history.summary_of({"metadata": {"name": "bench-g3-0f3e9"}, "spec": OLDEST_RESULT})
    assert entry.run_uid == OLDEST_RESULT["runUID"]
    assert (entry.summary.throughput, entry.summary.throughput_metric) == (4200.5, "tpmC")
    assert entry.summary.p99_ms == {"NEW_ORDER": 12.5, "PAYMENT": 8.0} and entry.summary.durable is True
    bare = history.summary_of({"metadata": {"name": "r"}, "spec": {"run": "bench", "verdict": "Failed"}})
    assert bare.summary.throughput is None and bare.summary.comparison_hash == "" and bare.run_uid == ""
