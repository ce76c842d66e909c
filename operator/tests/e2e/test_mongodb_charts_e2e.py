"""charts/mongodb as far as this cluster allows without running it: every value set renders
with `helm template` and the real API server accepts every object in a server-side dry-run
(schema, defaulting and admission, nothing created). The official mongo image is not pulled
and no replica set or sharded cluster runs here."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the unit tests' modules

from test_benchmarkrun_e2e import ROOT, kubectl  # noqa: E402
from tpcc_operator import plan  # noqa: E402
from tpcc_operator.runspec import RunSpec  # noqa: E402

pytestmark = pytest.mark.k8s

CHART = ROOT / "charts" / "mongodb"
HELM = next(
    (
        h
        for h in (
            os.environ.get("TPCC_HELM"),
            shutil.which("helm"),
            str(Path.home() / ".cache/tpcc-operator/k8s/bin/helm"),
        )
        if h and Path(h).is_file()
    ),
    "helm",
)
AUTH = ["--set", "auth.enabled=true", "--set", "auth.existingSecret=mongo-root"]

VALUE_SETS = {
    "defaults": [],
    "replica-set-3-auth-hard-anti-affinity": [
        "--set",
        "replicas=3",
        *AUTH,
        "--set",
        "antiAffinity=hard",
        "--set",
        "resources.requests.cpu=1",
        "--set",
        "resources.limits.memory=2Gi",
    ],
    "replica-set-emptydir-no-pdb": [
        "--set",
        "replicas=3",
        "--set",
        "persistence.enabled=false",
        "--set",
        "podDisruptionBudget.enabled=false",
        "--set",
        "antiAffinity=none",
    ],
    "sharded-auth": ["--set", "topology=sharded", "--set", "replicas=3", "--set", "sharded.shards=2", *AUTH],
    "sharded-one-member-shards": [
        "--set",
        "topology=sharded",
        "--set",
        "sharded.shards=4",
        "--set",
        "sharded.configServers=1",
        "--set",
        "sharded.mongos.replicas=1",
        "--set",
        "sharded.mongos.resources.limits.memory=512Mi",
    ],
    "test-server": ["-f", str(CHART / "ci" / "test-server-values.yaml")],
}


def render(release: str, namespace: str, args: list[str]) -> str:
    out = subprocess.run(
        [HELM, "template", release, str(CHART), "-n", namespace, *args], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def dry_run(namespace: str, manifests: str) -> list[dict]:
    """What the API server would store, or an AssertionError naming what it refused."""
    out = kubectl("apply", "--dry-run=server", "-n", namespace, "-o", "json", "-f", "-", input=manifests)
    doc = json.loads(out.stdout)
    return doc["items"] if doc.get("kind") == "List" else [doc]


def kinds_and_names(manifests: str) -> set[tuple[str, str]]:
    return {(d["kind"], d["metadata"]["name"]) for d in yaml.safe_load_all(manifests) if d}


@pytest.mark.parametrize("name", VALUE_SETS)
def test_the_api_server_accepts_every_object_of_a_value_set(cluster, namespace, name):
    manifests = render("mdb", namespace, VALUE_SETS[name])
    stored = dry_run(namespace, manifests)
    assert {(d["kind"], d["metadata"]["name"]) for d in stored} == kinds_and_names(manifests)
    sets = [d for d in stored if d["kind"] == "StatefulSet"]
    if "sharded" in name:
        assert {s["metadata"]["name"] for s in sets} >= {"mdb-cfg", "mdb-shard0", "mdb-mongos"}
    # the server kept what the chart relies on (nothing pruned as unknown)
    for s in sets:
        assert s["spec"]["podManagementPolicy"] == "Parallel" and s["spec"]["serviceName"] == "mdb-hl"
        if "emptydir" not in name and s["metadata"]["name"] != "mdb-mongos":
            assert s["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"] == "4Gi"


def test_the_values_the_operator_installs_for_the_paper_sample_are_accepted(cluster, crd, namespace, tmp_path):
    """crds/samples/papers/vldb2019/mongodb-replicaset.yaml through the operator's own plan: the release values
    it would install render and pass the API server, and the endpoints name those pods."""
    sample = yaml.safe_load((ROOT / "crds" / "samples" / "papers" / "vldb2019" / "mongodb-replicaset.yaml").read_text())
    spec = RunSpec.parse(sample["spec"])
    run = plan.Run(sample["metadata"]["name"], namespace, "uid", 1)
    release = plan.helm_release(run, spec, plan.Settings(charts_dir=ROOT / "charts"))
    values = tmp_path / "values.yaml"
    values.write_text(yaml.safe_dump(release.values))
    manifests = render(release.name, namespace, ["-f", str(values)])
    stored = dry_run(namespace, manifests)
    (sts,) = [d for d in stored if d["kind"] == "StatefulSet"]
    assert sts["spec"]["replicas"] == 3
    assert sts["spec"]["template"]["metadata"]["labels"].items() >= plan.database_pod_selector(run).items()
    hosts = [e.split(".")[0] for e in plan.endpoints(run, spec)]
    assert hosts == [f"{sts['metadata']['name']}-{i}" for i in range(3)]
    # and the BenchmarkRun itself passes the CRD on the server
    sample["metadata"]["namespace"] = namespace
    kubectl("apply", "--dry-run=server", "-f", "-", input=json.dumps(sample))


def test_the_api_server_refuses_a_chart_object_broken_the_way_a_bad_template_would(cluster, namespace):
    """The dry-run is a real check: the same rendering with one field broken is refused."""
    docs = [d for d in yaml.safe_load_all(render("mdb", namespace, VALUE_SETS["sharded-auth"])) if d]
    pdb = next(d for d in docs if d["kind"] == "PodDisruptionBudget")
    pdb["spec"]["maxUnavailable"] = "one"
    out = kubectl("apply", "--dry-run=server", "-n", namespace, "-f", "-", input=yaml.safe_dump_all(docs), check=False)
    assert out.returncode != 0 and "maxUnavailable" in out.stderr, out.stderr
