"""The typed spec and the CRD's schema are held to each other field by field, both ways; the
CRD is the one place defaults live; a spec the model cannot read ends the run with the field."""

from __future__ import annotations

import dataclasses
import datetime as dt
import types
import typing
from collections.abc import Mapping

import pytest
import yaml
from crd_schema import CRD_PATH
from tpcc_operator import plan, runspec
from tpcc_operator.runspec import RunSpec, SpecError
from tpcc_operator.stages.failing import spec_unreadable
from tpcc_operator.stages.machine import patched

SCHEMA_TYPES = {int: "integer", float: "number", str: "string", bool: "boolean"}
SAMPLES = sorted((CRD_PATH.parent / "samples").rglob("*.yaml"))


def spec_schema() -> dict:
    crd = yaml.safe_load(CRD_PATH.read_text())
    return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]


def _unwrapped(hint) -> tuple[object, bool]:
    """(the type, whether it is Optional)."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        (inner,) = [a for a in typing.get_args(hint) if a is not type(None)]
        return inner, True
    return hint, False


def mismatches(cls: type, schema: dict, path: str = "spec") -> list[str]:
    """Every difference between a spec dataclass and its schema: a property without a field or
    a field without a property, a type that differs, a field whose optionality is not what
    the schema says (optional exactly when neither required nor defaulted)."""
    out = []
    props, required = schema.get("properties") or {}, set(schema.get("required") or ())
    fields = {runspec.json_name(f): f for f in runspec.spec_fields(cls)}
    out += [f"{path}.{name}: in the CRD, not in {cls.__name__}" for name in props.keys() - fields.keys()]
    out += [f"{path}.{name}: in {cls.__name__}, not in the CRD" for name in fields.keys() - props.keys()]
    hints = typing.get_type_hints(cls)
    for name in fields.keys() & props.keys():
        prop, where = props[name], f"{path}.{name}"
        hint, optional = _unwrapped(hints[fields[name].name])
        if optional == (name in required or "default" in prop):
            out.append(
                f"{where}: optional in {cls.__name__} is {optional}, the CRD "
                f"{'requires or defaults it' if optional else 'neither requires nor defaults it'}"
            )
        out += _type_mismatches(hint, prop, where)
    return out


def _type_mismatches(hint, prop: dict, where: str) -> list[str]:
    origin = typing.get_origin(hint)
    if dataclasses.is_dataclass(hint):
        if prop.get("type") != "object" or prop.get("x-kubernetes-preserve-unknown-fields"):
            return [f"{where}: {hint.__name__} is not an object with properties in the CRD"]
        return mismatches(hint, prop, where)
    if origin is tuple:
        if prop.get("type") != "array":
            return [f"{where}: a tuple, the CRD says {prop.get('type')}"]
        item = typing.get_args(hint)[0]
        return _type_mismatches(item, prop["items"], f"{where}[]")
    if origin is Mapping:
        return [] if prop.get("type") == "object" else [f"{where}: a mapping, the CRD says {prop.get('type')}"]
    if SCHEMA_TYPES.get(hint) != prop.get("type"):
        return [f"{where}: {hint}, the CRD says {prop.get('type')}"]
    return []


def test_the_model_and_the_crd_agree_field_by_field():
    assert mismatches(RunSpec, spec_schema()) == []


def test_the_comparison_finds_a_drifted_model():
    """The test above can fail: a field renamed, retyped, made optional, or missing."""

    @dataclasses.dataclass(frozen=True)
    class Drifted:
        chart: str | None = None  # the CRD defaults it: not optional
        version: int = 0  # a string in the CRD
        replica: int = 0  # no such property (replicas)
        values: Mapping[str, object] | None = None

    schema = spec_schema()["properties"]["database"]["properties"]["deploy"]
    found = mismatches(Drifted, schema, "spec.database.deploy")
    assert "spec.database.deploy.chart: optional in Drifted is True, the CRD requires or defaults it" in found
    assert any(m.startswith("spec.database.deploy.version: <class 'int'>") for m in found)
    assert "spec.database.deploy.replica: in Drifted, not in the CRD" in found
    assert {
        "spec.database.deploy.replicas: in the CRD, not in Drifted",
        "spec.database.deploy.kSafety: in the CRD, not in Drifted",
    } <= set(found)


def test_defaults_come_from_the_crd():
    spec = RunSpec.parse({"database": {"type": "voltdb"}})
    schema = spec_schema()["properties"]
    assert spec.workload.clients == schema["workload"]["properties"]["clients"]["default"]
    assert spec.verify.timeout_seconds == schema["verify"]["properties"]["timeoutSeconds"]["default"]
    assert spec.workload.mix == runspec.Mix(45, 43, 4, 4, 4)
    # an absent section that means "with its defaults" reads the CRD's defaults too
    assert spec.database.deploy is None and spec.deploy == runspec.Deploy("", "", 1, 0, None)
    regression = RunSpec.parse({"database": {"type": "voltdb"}, "regression": {}}).regression
    assert regression.baseline is None and regression.baseline_or_defaults.min_results == 1


def test_parse_is_what_the_api_server_stores():
    """Parsing an already defaulted spec changes nothing: the stored object and a test's
    spec read alike, and the document kept for the hashes is the stored one."""
    once = RunSpec.parse({"database": {"type": "voltdb"}, "sweep": {"clients": [1, 2]}})
    again = RunSpec.parse(once.document)
    assert again == once and again.document == once.document


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_every_sample_reads(sample):
    for doc in yaml.safe_load_all(sample.read_text()):
        if doc and doc.get("kind") == "BenchmarkRun":
            assert isinstance(RunSpec.parse(doc["spec"]), RunSpec)


@pytest.mark.parametrize(
    "spec, says",
    [
        ({}, "spec.database: required"),
        ({"database": {"type": "voltdb"}, "workload": {"clients": "eight"}}, "spec.workload.clients: expected int"),
        ({"database": {"type": "voltdb"}, "workload": {"clients": True}}, "spec.workload.clients: expected int"),
        ({"database": {"type": "voltdb"}, "sweep": {"clients": 4}}, "spec.sweep.clients: expected a list"),
        ({"database": {"type": "voltdb"}, "faults": [{"afterSeconds": 5}]}, r"spec.faults\[0\].action: required"),
    ],
)
def test_what_the_model_cannot_read_names_the_field(spec, says):
    with pytest.raises(SpecError, match=says):
        RunSpec.parse(spec)


def test_an_unreadable_spec_ends_the_run_failed_once():
    run = plan.Run("bench", "perf", "uid", 1)
    now = dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc)
    step = spec_unreadable(run, {}, "spec.workload.clients: expected int, got str 'eight'", now)
    status = patched({}, step.status)
    assert (status["phase"], status["reason"]) == ("Failed", "InvalidSpec")
    assert "spec.workload.clients" in status["message"]
    assert spec_unreadable(run, status, "again", now).status == {}  # terminal: said once
