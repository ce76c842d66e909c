"""The CRD reads well in `kubectl explain`, is structural, and its defaults complete a spec."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from crd_schema import crd_schema, defaulted_spec, load_crd

ROOT = Path(__file__).resolve().parents[2]


def walk(schema: dict, path: str = ""):
    yield path, schema
    for key, sub in (schema.get("properties") or {}).items():
        yield from walk(sub, f"{path}.{key}")
    if isinstance(schema.get("items"), dict):
        yield from walk(schema["items"], f"{path}[]")
    if isinstance(schema.get("additionalProperties"), dict):
        yield from walk(schema["additionalProperties"], f"{path}{{}}")


def test_identity_and_columns():
    crd = load_crd()
    assert crd["metadata"]["name"] == "benchmarkruns.bench.tpcc.dev"
    assert crd["spec"]["names"]["kind"] == "BenchmarkRun"
    assert crd["spec"]["names"]["shortNames"] == ["br"]
    version = crd["spec"]["versions"][0]
    assert version["name"] == "v1alpha1" and version["served"] and version["storage"]
    assert version["subresources"] == {"status": {}}
    assert [c["name"] for c in version["additionalPrinterColumns"]] == [
        "Phase",
        "DB",
        "Scale",
        "Clients",
        "tpmC",
        "Ops/s",
        "Verdict",
        "Sweep",
        "Age",
    ]


@pytest.mark.parametrize("kind", ["benchmarkrun", "benchmarkschedule", "benchmarkresult"])
def test_the_crds_carry_the_recommended_labels_with_the_charts_app_version(kind):
    labels = yaml.safe_load((ROOT / "crds" / f"{kind}.yaml").read_text())["metadata"]["labels"]
    chart = yaml.safe_load((ROOT / "charts" / "tpcc-operator" / "Chart.yaml").read_text())
    assert labels == {
        "app.kubernetes.io/name": "tpcc-operator",
        "app.kubernetes.io/component": "crd",
        "app.kubernetes.io/part-of": "tpcc-operator",
        "app.kubernetes.io/version": chart["appVersion"],
    }


def test_structural():
    """Every node has a type (or is int-or-string / preserved), properties and
    additionalProperties never meet, and defaults satisfy their own enum and minimum."""
    for path, node in walk(crd_schema()):
        if path in ("", ".metadata"):
            continue
        assert "type" in node or node.get("x-kubernetes-int-or-string"), f"{path} has no type"
        assert not ("properties" in node and "additionalProperties" in node), path
        if "default" in node:
            d = node["default"]
            if "enum" in node:
                assert d in node["enum"], path
            if "minimum" in node:
                assert d >= node["minimum"], path


# JSONSchemaProps fields a CRD schema node may have (the API server rejects any other key).
SCHEMA_KEYS = {
    "type",
    "description",
    "properties",
    "items",
    "additionalProperties",
    "required",
    "default",
    "enum",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "maxLength",
    "maxProperties",
    "pattern",
    "format",
    "anyOf",
    "x-kubernetes-validations",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-int-or-string",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
}


def test_only_known_schema_keys():
    for path, node in walk(crd_schema()):
        assert set(node) <= SCHEMA_KEYS, f"{path}: unknown keys {set(node) - SCHEMA_KEYS}"


@pytest.mark.parametrize("part", ["spec", "status"])
def test_fields_described(part):
    for path, node in walk(crd_schema()["properties"][part], f".{part}"):
        if node.get("type") == "object" and "properties" in node:
            for key, sub in node["properties"].items():
                assert sub.get("description"), f"{path}.{key} needs a description for kubectl explain"


def test_defaults_complete_a_minimal_spec():
    spec = defaulted_spec({"database": {"type": "voltdb"}})
    assert spec["workload"]["warehouses"] == 1
    assert spec["workload"]["mix"] == {"newOrder": 45, "payment": 43, "orderStatus": 4, "delivery": 4, "stockLevel": 4}
    assert spec["runners"]["parallelism"] == 1 and spec["runners"]["metricsPort"] == 9100
    assert spec["verify"]["enabled"] is True
    assert spec["cleanup"]["policy"] == "OnSuccess"
    assert spec["database"]["readyTimeoutSeconds"] == 600
    assert "deploy" not in spec["database"]  # absent deploy = deploy with defaults


def test_validation_rules_and_enums():
    schema = crd_schema()
    db = schema["properties"]["spec"]["properties"]["database"]
    assert db["properties"]["type"]["enum"] == ["voltdb", "mongodb", "foundationdb"]
    assert db["required"] == ["type"]
    assert schema["properties"]["spec"]["properties"]["workload"]["properties"]["warehouses"]["minimum"] == 1
    rules = [r["rule"] for _, n in walk(schema) for r in n.get("x-kubernetes-validations", [])]
    assert any("has(self.deploy) && has(self.external)" in r for r in rules)
    assert any("clients >= self.runners.parallelism" in r for r in rules)
    assert any("== 100" in r for r in rules)
    # no password field anywhere in the spec: credentials come from a Secret reference
    assert not [p for p, _ in walk(schema["properties"]["spec"]) if p.lower().endswith("password")]


# ---- validation at apply, offline (e2e/test_validation_e2e.py asks the real API server) --------

from bad_manifests import BAD  # noqa: E402
from crd_schema import validate  # noqa: E402
from doc_examples import doc_manifests  # noqa: E402


def test_the_corpus_is_large_enough():
    assert len(BAD) >= 30 and len({b.id for b in BAD}) == len(BAD)


@pytest.mark.parametrize("bad", BAD, ids=lambda b: b.id)
def test_bad_manifest_is_rejected_naming_the_field(bad):
    errors = "\n".join(validate(bad.manifest()))
    assert bad.field in errors and bad.says in errors, errors or "accepted"


@pytest.mark.parametrize("where, manifest", doc_manifests(), ids=lambda x: x if isinstance(x, str) else "")
def test_every_documented_example_is_valid(where, manifest):
    assert validate(manifest) == []


@pytest.mark.parametrize(
    "spec",
    [
        {
            "database": {"type": "voltdb"},
            "runners": {
                "resources": {"requests": {"cpu": "250m", "memory": 268435456}, "limits": {"cpu": 2, "memory": "1.5Gi"}}
            },
        },
        {"database": {"type": "voltdb"}, "runners": {"image": "registry.example:5000/team/tpcc-runner:1.2.3"}},
        {"database": {"type": "voltdb"}, "runners": {"image": "tpcc@sha256:" + "a" * 64}},
        {"database": {"type": "voltdb"}, "workload": {"driverOptions": {"call_timeout": "30"}}},
        {
            "database": {"type": "voltdb"},
            "workload": {"driverOptions": {"delivery": "per-district", "partitioning": "district"}},
        },
        {
            "database": {"type": "mongodb", "external": {"endpoints": ["db:27017"]}},
            "workload": {"warehouses": 1000, "driverOptions": {"uri": "mongodb://db:27017/?tls=true"}},
        },
        {"database": {"type": "voltdb", "deploy": {"replicas": 3, "kSafety": 1}}, "workload": {"warehouses": 48}},
        {"database": {"type": "voltdb"}, "faults": [{"action": "kill-node", "allowDataLoss": True}]},
        {
            "database": {"type": "voltdb", "deploy": {"replicas": 3, "kSafety": 1}},
            "workload": {"durationSeconds": 300},
            "faults": [{"action": "kill-node", "afterSeconds": 60, "everySeconds": 60, "count": 4}],
        },
        # one member, its process killed: a crash-restart on the same volume, the journal keeps commits
        {
            "database": {"type": "mongodb", "deploy": {"replicas": 1}},
            "faults": [{"action": "kill-primary", "method": "kill-process", "afterSeconds": 20, "count": 2}],
        },
        {
            "database": {"type": "voltdb", "deploy": {"replicas": 3, "kSafety": 1}},
            "faults": [{"action": "kill-node", "method": "kill-process", "podIndex": 2}],
        },
        # YCSB inserts from two runner pods: each inserts its own slice of the keys
        {
            "database": {"type": "voltdb"},
            "runners": {"parallelism": 2},
            "workload": {"kind": "ycsb", "clients": 4, "ycsb": {"workload": "d"}},
        },
        # YCSB under faults: its ledger is verified once they have recovered
        {
            "database": {"type": "voltdb", "deploy": {"replicas": 3, "kSafety": 1}},
            "workload": {"kind": "ycsb"},
            "faults": [{"action": "kill-node", "afterSeconds": 20, "podIndex": 1}],
        },
        {
            "database": {"type": "voltdb"},
            "runners": {"parallelism": 2},
            "sweep": {"warehouses": [2, 1], "clients": [2, 4, 8], "repetitions": 2},
        },
        {
            "database": {"type": "voltdb"},
            "sweep": {
                "clients": [2, 4],
                "repetitions": 5,
                "matrix": [
                    {"field": "workload.remotePercent.newOrderLines", "values": ["0", "1", "100"]},
                    {"field": "workload.pacing", "values": ["none", "spec"]},
                    {"field": "workload.driverOptions.call_timeout", "values": ["30", "60.5"]},
                ],
            },
        },
        # the VLDB paper's driver options: 3 x 2 x 2 x 4 values x 4 repetitions = 192 cells (at most 200)
        {
            "database": {"type": "mongodb", "deploy": {"replicas": 3}},
            "sweep": {
                "clients": [10],
                "repetitions": 4,
                "matrix": [
                    {"field": "workload.driverOptions.read_concern", "values": ["majority", "local", "snapshot"]},
                    {"field": "workload.driverOptions.write_concern", "values": ["majority", "1"]},
                    {"field": "workload.driverOptions.causal", "values": ["true", "false"]},
                    {
                        "field": "workload.driverOptions.read_preference",
                        "values": ["primary", "secondary", "nearest", "primaryPreferred"],
                    },
                ],
            },
        },
        {
            "database": {"type": "foundationdb", "external": {"endpoints": ["fdb:4500"]}},
            "workload": {"driverOptions": {"cluster_id": "bench:abc"}},
            "sweep": {
                "clients": [10],
                "matrix": [{"field": "workload.driverOptions.txn_timeout", "values": ["5", "10"]}],
            },
        },
    ],
    ids=[
        "quantities",
        "registry-image",
        "digest-image",
        "voltdb-option",
        "voltdb-delivery-per-district",
        "external-big",
        "voltdb-48-on-3-k1",
        "data-loss-allowed",
        "last-kill-in-window",
        "mongodb-one-member-kill-process",
        "voltdb-k1-kill-process",
        "ycsb-d-two-pods",
        "ycsb-kill-node",
        "sweep",
        "sweep-matrix-voltdb",
        "sweep-matrix-mongodb-192-cells",
        "sweep-matrix-foundationdb",
    ],
)
def test_good_specs_pass(spec):
    manifest = {
        "apiVersion": "bench.tpcc.dev/v1alpha1",
        "kind": "BenchmarkRun",
        "metadata": {"name": "good-run-2"},
        "spec": spec,
    }
    assert validate(manifest) == []


def test_reset_before_load_has_no_schema_default():
    """The operator decides it: true for a deployed database, false for an external one."""
    assert "resetBeforeLoad" not in defaulted_spec({"database": {"type": "voltdb"}})["workload"]


def test_the_status_schema_keeps_every_field_the_operator_writes():
    """The API server prunes (or, for a wrong type, refuses) what the status schema does not
    declare: status.durability and status.consistency as the operator builds them must fit."""
    from runner_docs import durability_report
    from tpcc_operator.results import consistency_status, durability_status

    status = crd_schema()["properties"]["status"]["properties"]
    durability = durability_status(durability_report(10, lost=2)).to_json()
    assert set(durability) <= set(status["durability"]["properties"])
    assert status["durability"]["properties"]["lostExamples"]["items"]["type"] == "string"
    assert all(isinstance(e, str) for e in durability["lostExamples"])
    condition = consistency_status(
        {
            "passed": True,
            "conditions": [
                {"number": 11, "passed": True, "checked": 2, "violations": 0, "example": "x", "note": "from deliveries"}
            ],
        }
    ).to_json()
    assert set(condition["conditions"][0]) <= set(
        status["consistency"]["properties"]["conditions"]["items"]["properties"]
    )


def _undeclared(value, schema: dict, path: str):
    """Paths in value that the structural schema would prune."""
    if schema.get("x-kubernetes-preserve-unknown-fields"):
        return
    if isinstance(value, dict):
        props, extra = schema.get("properties"), schema.get("additionalProperties")
        for k, v in value.items():
            if props is not None and k in props:
                yield from _undeclared(v, props[k], f"{path}.{k}")
            elif isinstance(extra, dict):
                yield from _undeclared(v, extra, f"{path}.{k}")
            else:
                yield f"{path}.{k}"
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, v in enumerate(value):
            yield from _undeclared(v, schema["items"], f"{path}[{i}]")


def test_statuses_the_state_machine_writes_are_declared():
    """Every field of the statuses next_step builds (the GitOps fixtures) survives pruning."""
    import json
    from pathlib import Path

    status_schema = crd_schema()["properties"]["status"]
    fixtures = sorted((Path(__file__).parent / "fixtures" / "gitops").glob("*.json"))
    assert fixtures
    for path in fixtures:
        obj = json.loads(path.read_text())
        if obj.get("kind") != "BenchmarkRun":
            continue
        assert list(_undeclared(obj.get("status", {}), status_schema, "status")) == [], path.name


SCHEMA_KEYWORDS = {
    "type",
    "description",
    "properties",
    "items",
    "additionalProperties",
    "default",
    "enum",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "required",
    "nullable",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "x-kubernetes-validations",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-int-or-string",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
    "x-kubernetes-embedded-resource",
}


@pytest.mark.parametrize("path", sorted((ROOT / "crds").glob("*.yaml")), ids=lambda p: p.name)
def test_every_schema_node_uses_only_openapi_keywords(path):
    """A flow mapping whose description holds a comma (`{type: string, description: a, b}`)
    turns the rest into bogus keys, which the API server refuses (strict decoding) while a
    YAML load passes: every key of every schema node must be a schema keyword."""
    crd = yaml.safe_load(path.read_text())
    bad = []
    for version in crd["spec"]["versions"]:
        for where, node in walk(version["schema"]["openAPIV3Schema"], version["name"]):
            bad += [f"{where}: {key}" for key in node if key not in SCHEMA_KEYWORDS]
    assert bad == []


def _undescribed(node: dict, path: str) -> list[str]:
    out = []
    for key, prop in (node.get("properties") or {}).items():
        where = f"{path}.{key}"
        if "description" not in prop:
            out.append(where)
        out += _undescribed(prop, where)
        if isinstance(prop.get("items"), dict):
            out += _undescribed(prop["items"], f"{where}[]")
    return out


def test_every_status_field_reads_in_kubectl_explain_and_conditions_merge_by_type():
    for path in sorted((ROOT / "crds").glob("*.yaml")):
        schema = yaml.safe_load(path.read_text())["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
        status = schema["properties"].get("status", {})
        assert _undescribed(status, "status") == [], path.name
        conditions = (status.get("properties") or {}).get("conditions")
        if conditions:  # server-side apply merges conditions by type instead of replacing the list
            assert (conditions.get("x-kubernetes-list-type"), conditions.get("x-kubernetes-list-map-keys")) == (
                "map",
                ["type"],
            ), path.name


class _Yaml11Loader(yaml.SafeLoader):
    """YAML as kubectl reads it (go-yaml v2, YAML 1.1): y, n, yes, no, on, off are booleans."""


_Yaml11Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool",
    __import__("re").compile(r"^(?:y|Y|n|N|yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF)$"),
    list("yYnNoO"),
)


def test_no_key_of_a_crd_is_a_boolean_as_kubectl_reads_it():
    """A bare `n:` is `false:` to kubectl: the API server then keeps a property named "false"
    and prunes status.sweep.configurations[].tpmC.n (it did, until quoted)."""

    def keys(node, path="$"):
        if isinstance(node, dict):
            for k, v in node.items():
                yield path, k
                yield from keys(v, f"{path}.{k}")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                yield from keys(v, f"{path}[{i}]")

    for crd in sorted((ROOT / "crds").glob("*.yaml")):
        for doc in yaml.load_all(crd.read_text(), Loader=_Yaml11Loader):
            bad = [f"{path}: {key!r}" for path, key in keys(doc) if not isinstance(key, str)]
            assert bad == [], f"{crd.name}: quote these keys: {bad}"
