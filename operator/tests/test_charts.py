"""The charts lint and render what the operator relies on (needs the helm CLI)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from crd_schema import CRD_PATH, ROOT
from jsonschema import SchemaError
from tpcc_operator import chart_policy, databases, plan
from tpcc_operator.databases.mongodb import MONGODB
from tpcc_operator.runspec import RunSpec

CHARTS = ROOT / "charts"


def _helm() -> str | None:
    for candidate in (
        os.environ.get("TPCC_HELM"),
        shutil.which("helm"),
        str(Path.home() / ".cache/tpcc-operator/k8s/bin/helm"),
    ):
        if candidate and Path(candidate).is_file():
            return candidate
    return None


HELM = _helm()
# for every test that renders a chart, here and in the modules that import render
needs_helm = pytest.mark.skipif(HELM is None, reason="no helm CLI (hack/local-k8s.sh tools fetches it)")
pytestmark = needs_helm


def helm(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([HELM, *args], capture_output=True, text=True)


def render(chart: str, *args: str) -> list[dict]:
    out = helm("template", "rel", str(CHARTS / chart), "--namespace", "ns", *args)
    assert out.returncode == 0, out.stderr
    return [d for d in yaml.safe_load_all(out.stdout) if d]


def by_kind(docs: list[dict], kind: str) -> list[dict]:
    return [d for d in docs if d["kind"] == kind]


def pod_labels(deployment_spec: dict) -> dict:
    return deployment_spec["template"]["metadata"]["labels"]


# Each database chart's defaults and every value set in its ci/ (the chart-testing convention).
VALUE_SETS = [
    (chart, [*(["-f", str(values)] if values else [])])
    for chart in ("voltdb", "mongodb")
    for values in [None, *sorted((CHARTS / chart / "ci").glob("*-values.yaml"))]
]
VALUE_SET_IDS = [
    f"{chart}-{Path(args[1]).name.removesuffix('-values.yaml') if args else 'defaults'}" for chart, args in VALUE_SETS
]


@pytest.mark.parametrize("chart", ["tpcc-operator", "voltdb", "mongodb"])
def test_lint(chart):
    out = helm("lint", "--strict", str(CHARTS / chart))
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize("chart, values", VALUE_SETS, ids=VALUE_SET_IDS)
def test_lint_every_ci_value_set(chart, values):
    out = helm("lint", "--strict", str(CHARTS / chart), *values)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize("chart, values", VALUE_SETS, ids=VALUE_SET_IDS)
def test_helm_test_pod_reaches_the_release_service(chart, values):
    (pod,) = [d for d in render(chart, *values) if d["metadata"].get("annotations", {}).get("helm.sh/hook") == "test"]
    command = " ".join(pod["spec"]["containers"][0]["command"])
    assert "rel" in command and ("21212" if chart == "voltdb" else "27017") in command


def test_operator_chart_ships_the_crd_unchanged():
    assert (CHARTS / "tpcc-operator" / "crds" / "benchmarkrun.yaml").read_text() == CRD_PATH.read_text()


def test_operator_chart(tmp_path):
    docs = render("tpcc-operator", "--include-crds")
    assert {d["kind"] for d in docs} == {
        "CustomResourceDefinition",
        "ServiceAccount",
        "Role",
        "RoleBinding",
        "ClusterRole",
        "ClusterRoleBinding",
        "Deployment",
        "Service",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "Pod",  # the helm test's (templates/tests/)
    }
    dep = by_kind(docs, "Deployment")[0]["spec"]
    assert dep["replicas"] == 1 and dep["strategy"] == {"type": "Recreate"}
    pod = dep["template"]["spec"]
    c = pod["containers"][0]
    assert c["command"][:3] == ["kopf", "run", "--module=tpcc_operator.handlers"]
    assert "--namespace=ns" in c["command"] and "--all-namespaces" not in c["command"]
    assert pod["securityContext"]["runAsNonRoot"] and c["securityContext"]["readOnlyRootFilesystem"]
    env = {e["name"]: e.get("value", e.get("valueFrom")) for e in c["env"]}
    assert env["NODE_NAME"] == {"fieldRef": {"fieldPath": "spec.nodeName"}}  # a node-loss spares it
    assert env["TPCC_RUNNER_IMAGE"] == c["image"] == "local/tpcc-runner:0.1.0"  # image.tag empty: appVersion
    # /metrics: the container port and the Service port the ServiceMonitor names
    assert {"name": "metrics", "containerPort": 9090} in c["ports"] and env["TPCC_METRICS_PORT"] == "9090"
    svc = by_kind(docs, "Service")[0]
    assert svc["spec"]["ports"][0]["name"] == "metrics"
    assert svc["spec"]["selector"].items() <= pod_labels(dep).items()
    assert json.loads(env["TPCC_POD_RESOURCES"])["limits"]["memory"] == "2Gi"
    assert env["TPCC_CLUSTER_WIDE"] == "false"  # kopf's cluster scanning off: the Role cannot list CRDs
    rules = by_kind(docs, "Role")[0]["rules"]
    granted = {(g, r): set(rule["verbs"]) for rule in rules for g in rule["apiGroups"] for r in rule["resources"]}
    assert granted[("", "pods")] == {"get", "list", "watch", "delete"}  # delete: fault injection only
    assert "*" not in {v for verbs in granted.values() for v in verbs}
    assert ("", "nodes") not in granted
    # values.schema.json rejects a bad value
    bad = helm("template", "rel", str(CHARTS / "tpcc-operator"), "--set", "image.pullPolicy=Sometimes")
    assert bad.returncode != 0 and "pullPolicy" in bad.stderr


def test_voltdb_chart_renders_what_the_plan_expects():
    run = plan.Run("bench", "ns", "u", 1)
    docs = render(
        "voltdb",
        "--set",
        "replicas=3",
        "--set",
        "kfactor=1",
        "--set-json",
        'podLabels={"bench.tpcc.dev/role": "database"}',
    )
    sts = by_kind(docs, "StatefulSet")[0]
    assert sts["spec"]["replicas"] == 3 and sts["spec"]["podManagementPolicy"] == "Parallel"
    assert sts["spec"]["serviceName"] == "rel-hl"
    assert sts["spec"]["template"]["metadata"]["labels"]["bench.tpcc.dev/role"] == "database"
    script = sts["spec"]["template"]["spec"]["containers"][0]["args"][0]
    assert "hostcount 3" in script
    assert "mesh rel-0.rel-hl.ns.svc.cluster.local:3021,rel-1.rel-hl.ns.svc.cluster.local:3021," in script
    headless = [s for s in by_kind(docs, "Service") if s["spec"].get("clusterIP") == "None"][0]
    assert headless["metadata"]["name"] == "rel-hl" and headless["spec"]["publishNotReadyAddresses"]
    assert 'kfactor="1"' in by_kind(docs, "ConfigMap")[0]["data"]["deployment.xml"]
    # the operator's endpoints name exactly these pods and port
    spec = RunSpec.parse({"database": {"type": "voltdb", "deploy": {"replicas": 3}}})
    assert plan.endpoints(run, spec)[0] == "bench-g1-0.bench-g1-hl.ns.svc.cluster.local:21212"
    bad = helm("template", "rel", str(CHARTS / "voltdb"), "--set", "kfactor=1")
    assert bad.returncode != 0 and "kfactor (1) must be less than replicas (1)" in bad.stderr


@pytest.mark.parametrize("chart", ["voltdb", "mongodb"])
@pytest.mark.parametrize(
    "setting, rule",
    [
        (None, "preferredDuringSchedulingIgnoredDuringExecution"),  # the default
        ("soft", "preferredDuringSchedulingIgnoredDuringExecution"),
        ("hard", "requiredDuringSchedulingIgnoredDuringExecution"),
        ("none", None),
    ],
)
def test_database_charts_spread_their_members_over_nodes(chart, setting, rule):
    """Each StatefulSet's pods keep off the nodes of the others of the same set (by its own
    selector): preferred by default, required or not at all as antiAffinity says; a sharded
    MongoDB's config servers, each shard and the routers alike."""
    chosen = ["--set", "replicas=3", *(["--set", f"antiAffinity={setting}"] if setting else [])]
    sets = by_kind(render(chart, *chosen), "StatefulSet")
    if chart == "mongodb":
        sets += by_kind(render(chart, *chosen, "--set", "topology=sharded", "--set", "sharded.shards=2"), "StatefulSet")
    assert len(sets) == (1 if chart == "voltdb" else 5)
    for sts in sets:
        anti = sts["spec"]["template"]["spec"].get("affinity", {}).get("podAntiAffinity")
        if rule is None:
            assert anti is None
            continue
        assert list(anti) == [rule]
        (term,) = anti[rule]
        if rule.startswith("preferred"):
            assert term["weight"] == 100
            term = term["podAffinityTerm"]
        assert term == {
            "topologyKey": "kubernetes.io/hostname",
            "labelSelector": {"matchLabels": sts["spec"]["selector"]["matchLabels"]},
        }


@pytest.mark.parametrize("chart", ["voltdb", "mongodb"])
def test_database_charts_refuse_an_unknown_anti_affinity(chart):
    out = helm("template", "rel", str(CHARTS / chart), "--set", "antiAffinity=preferred")
    assert out.returncode != 0 and "antiAffinity must be one of" in out.stderr
    with pytest.raises(chart_policy.ReleaseRefused, match="antiAffinity"):
        chart_policy.check_values(chart, "", {"antiAffinity": "preferred"}, CHARTS)


@pytest.mark.parametrize("chart", ["voltdb", "mongodb"])
def test_database_charts_place_their_pods_by_node_selector_and_tolerations(chart):
    """nodeSelector and tolerations go to every database pod (each set of a sharded MongoDB and
    its routers), beside the anti-affinity; without them the pods carry neither; a toleration
    the schema does not know is refused before Helm installs anything."""
    tolerations = [{"key": "bench.tpcc.dev/reserved", "operator": "Exists", "effect": "NoSchedule"}]
    placed = [
        "--set-json",
        "tolerations=" + json.dumps(tolerations),
        "--set-json",
        'nodeSelector={"pool": "db"}',
    ]
    shapes = [[]] if chart == "voltdb" else [[], ["--set", "topology=sharded", "--set", "sharded.shards=2"]]
    for shape in shapes:
        pods = spec_of_pods(render(chart, *shape, *placed))
        assert len(pods) == (4 if shape else 1)  # sharded: config servers, 2 shards, routers
        for pod in pods:
            assert pod["tolerations"] == tolerations and pod["nodeSelector"] == {"pool": "db"}
            assert "podAntiAffinity" in pod["affinity"]
        assert all("tolerations" not in p and "nodeSelector" not in p for p in spec_of_pods(render(chart, *shape)))
    with pytest.raises(chart_policy.ReleaseRefused, match="tolerations"):
        chart_policy.check_values(chart, "", {"tolerations": [{"key": "a", "operator": "Maybe"}]}, CHARTS)
    with pytest.raises(chart_policy.ReleaseRefused, match="tolerations"):
        chart_policy.check_values(chart, "", {"tolerations": [{"key": "a", "hostPath": "/"}]}, CHARTS)


def spec_of_pods(docs: list[dict]) -> list[dict]:
    """The pod spec of every workload among the rendered documents."""
    return [d["spec"]["template"]["spec"] for d in docs if d["kind"] in ("StatefulSet", "Deployment")]


def test_mongodb_chart_initiates_the_replica_set():
    docs = render("mongodb", "--set", "replicas=3")
    sts = by_kind(docs, "StatefulSet")[0]
    containers = {c["name"]: c for c in sts["spec"]["template"]["spec"]["containers"]}
    assert "--replSet=rs0" in containers["mongod"]["args"] and containers["mongod"]["args"][0] == "mongod"
    assert containers["mongod"]["image"] == "mongo:7.0"
    script = by_kind(docs, "ConfigMap")[0]["data"]["init-replica-set.js"]
    assert "rel-2.rel-hl.ns.svc.cluster.local:27017" in script and "rs.initiate" in script
    assert "createUser" not in script
    auth = render("mongodb", "--set", "auth.enabled=true", "--set", "auth.existingSecret=creds")
    assert by_kind(auth, "Secret")[0]["data"]["keyfile"]
    mongod = by_kind(auth, "StatefulSet")[0]["spec"]["template"]["spec"]["containers"][0]
    assert "--keyFile=/keyfile/keyfile" in mongod["args"]
    assert "createUser" in by_kind(auth, "ConfigMap")[0]["data"]["init-replica-set.js"]


def test_mongodb_test_server_profile_keeps_the_contract():
    """testServer: SecantusDB in the container the operator targets, the same Services, the
    replica-set name and the pod's stable DNS name in hello, readiness = hello as primary."""
    values = CHARTS / "mongodb" / "ci" / "test-server-values.yaml"
    docs = render("mongodb", "-f", str(values))
    sts = by_kind(docs, "StatefulSet")[0]
    pod = sts["spec"]["template"]["spec"]
    (member,) = pod["containers"]
    assert member["name"] == MONGODB.container and member["image"] == "local/secantus:dev"
    script = member["args"][0]
    assert '--replica-set "rs0"' in script and '--advertise "$POD_NAME.rel-hl.ns.svc.cluster.local"' in script
    assert script.startswith("echo $$$$ >/tmp/database.pid\nexec ")  # $$ once Kubernetes expanded it
    assert member["readinessProbe"]["exec"]["command"][-2:] == ["--replica-set", "rs0"]
    assert {s["metadata"]["name"] for s in by_kind(docs, "Service")} == {
        s["metadata"]["name"] for s in by_kind(render("mongodb"), "Service")
    }
    assert sts["spec"]["volumeClaimTemplates"][0]["metadata"]["name"] == "data"
    for bad in (["--set", "replicas=3"], ["--set", "auth.enabled=true"]):
        out = helm("template", "rel", str(CHARTS / "mongodb"), "-f", str(values), *bad)
        assert out.returncode != 0 and "one-member replica set without auth" in out.stderr


@pytest.mark.parametrize("chart", ["voltdb", "mongodb"])
def test_database_charts_keep_data_on_a_claim_unless_asked(chart):
    sts = by_kind(
        render(chart, "--set", "persistence.storageClass=fast", "--set", "persistence.size=3Gi"), "StatefulSet"
    )[0]["spec"]
    (claim,) = sts["volumeClaimTemplates"]
    assert claim["metadata"]["name"] == "data" and claim["spec"]["storageClassName"] == "fast"
    assert claim["spec"]["resources"]["requests"]["storage"] == "3Gi"
    assert sts["persistentVolumeClaimRetentionPolicy"]["whenDeleted"] == "Delete"
    assert "data" not in {v["name"] for v in sts["template"]["spec"].get("volumes") or []}
    # the process the kill-process fault kills is named by a pid file, outside PID 1
    assert sts["template"]["spec"]["shareProcessNamespace"] is True
    db = {c["name"]: c for c in sts["template"]["spec"]["containers"]}[databases.named(chart).container]
    assert "echo $$$$ >/tmp/database.pid" in " ".join(db["command"] + db.get("args", []))  # $$ in the pod
    scratch = by_kind(render(chart, "--set", "persistence.enabled=false"), "StatefulSet")[0]["spec"]
    assert "volumeClaimTemplates" not in scratch
    assert {v["name"]: v for v in scratch["template"]["spec"]["volumes"]}["data"]["emptyDir"]
    out = helm("template", "rel", str(CHARTS / chart), "--set", "persistence.size=lots")
    assert out.returncode != 0 and "persistence.size" in out.stderr


def granted(rules: list[dict]) -> dict:
    return {(g, r): set(rule["verbs"]) for rule in rules for g in rule["apiGroups"] for r in rule["resources"]}


def test_operator_rbac_is_a_role_in_the_watched_namespace_unless_cluster_wide():
    docs = render("tpcc-operator", "--set", "watchNamespace=bench")
    # the one cluster-scoped grant of namespaced mode: reads of nodes and StorageClasses
    [reads] = by_kind(docs, "ClusterRole")
    assert granted(reads["rules"]) == {
        ("", "nodes"): {"get", "list"},
        ("storage.k8s.io", "storageclasses"): {"get", "list"},
    }
    assert [b["roleRef"]["name"] for b in by_kind(docs, "ClusterRoleBinding")] == [reads["metadata"]["name"]]
    off = render("tpcc-operator", "--set", "watchNamespace=bench", "--set", "schedulingReads=false")
    assert not by_kind(off, "ClusterRole") and not by_kind(off, "ClusterRoleBinding")
    role, binding = by_kind(docs, "Role")[0], by_kind(docs, "RoleBinding")[0]
    assert role["metadata"]["namespace"] == binding["metadata"]["namespace"] == "bench"
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "rel", "namespace": "ns"}]
    assert ("apiextensions.k8s.io", "customresourcedefinitions") not in granted(role["rules"])
    container = by_kind(docs, "Deployment")[0]["spec"]["template"]["spec"]["containers"][0]
    assert "--namespace=bench" in container["command"]
    wide = render("tpcc-operator", "--set", "clusterWide=true")
    assert not by_kind(wide, "Role") and by_kind(wide, "ClusterRoleBinding")
    assert "--all-namespaces" in by_kind(wide, "Deployment")[0]["spec"]["template"]["spec"]["containers"][0]["command"]


def test_every_permission_is_documented():
    """charts/tpcc-operator/README.md names every (apiGroup, resource) the ClusterRole can grant."""
    readme = (CHARTS / "tpcc-operator" / "README.md").read_text()
    rules = [
        r
        for role in by_kind(render("tpcc-operator", "--set", "clusterWide=true"), "ClusterRole")
        for r in role["rules"]
    ]
    for group, resource in granted(rules):
        assert f"`{resource}`" in readme, resource


@pytest.mark.parametrize("chart", ["voltdb", "mongodb"])
@pytest.mark.parametrize(
    "setting",
    [
        "privileged=true",
        "hostNetwork=true",
        "serviceAccountName=default",
        "podSecurityContext.runAsUser=0",
        "podSecurityContext.privileged=true",
        "dataVolume.sizeLimit=1Gi}",
    ],
)
def test_database_charts_refuse_what_they_do_not_expose(chart, setting):
    out = helm("template", "rel", str(CHARTS / chart), "--set", setting)
    assert out.returncode != 0 and "values don't meet the specifications of the schema" in out.stderr


def test_mongodb_replica_set_spreads_its_members_and_bounds_disruptions():
    docs = render(
        "mongodb", "--set", "replicas=3", "--set", "resources.requests.cpu=1", "--set", "resources.limits.memory=2Gi"
    )
    pod = by_kind(docs, "StatefulSet")[0]["spec"]["template"]["spec"]
    term = pod["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]
    assert term["podAffinityTerm"]["topologyKey"] == "kubernetes.io/hostname"
    assert (
        term["podAffinityTerm"]["labelSelector"]["matchLabels"]
        == by_kind(docs, "StatefulSet")[0]["spec"]["selector"]["matchLabels"]
    )
    mongod = {c["name"]: c for c in pod["containers"]}["mongod"]
    # a value set overrides the chart's default value by value
    assert mongod["resources"] == {"requests": {"cpu": 1, "memory": "512Mi"}, "limits": {"cpu": "2", "memory": "2Gi"}}
    (pdb,) = by_kind(docs, "PodDisruptionBudget")
    assert pdb["spec"]["maxUnavailable"] == 1
    assert pdb["spec"]["selector"]["matchLabels"] == by_kind(docs, "StatefulSet")[0]["spec"]["selector"]["matchLabels"]
    hard = by_kind(render("mongodb", "--set", "antiAffinity=hard"), "StatefulSet")[0]["spec"]["template"]["spec"]
    assert (
        hard["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]["topologyKey"]
        == "kubernetes.io/hostname"
    )
    bare = render("mongodb", "--set", "antiAffinity=none", "--set", "podDisruptionBudget.enabled=false")
    assert "affinity" not in by_kind(bare, "StatefulSet")[0]["spec"]["template"]["spec"]
    assert not by_kind(bare, "PodDisruptionBudget")


def test_mongodb_auth_keyfile_and_root_user_from_secrets():
    docs = render("mongodb", "--set", "replicas=3", "--set", "auth.enabled=true", "--set", "auth.existingSecret=creds")
    pod = by_kind(docs, "StatefulSet")[0]["spec"]["template"]["spec"]
    (init,) = pod["initContainers"]
    assert "chmod 0400 /keyfile/keyfile" in init["command"][-1]
    assert {v["name"]: v for v in pod["volumes"]}["keyfile-secret"]["secret"]["secretName"] == "rel-keyfile"
    env = {e["name"]: e for e in {c["name"]: c for c in pod["containers"]}["init-replica-set"]["env"]}
    assert env["MONGO_ROOT_PASSWORD"]["valueFrom"]["secretKeyRef"] == {"name": "creds", "key": "password"}
    # a keyfile Secret the user made is used, none generated
    own = render(
        "mongodb",
        "--set",
        "auth.enabled=true",
        "--set",
        "auth.existingSecret=creds",
        "--set",
        "auth.keyfileSecret=my-keyfile",
    )
    assert not by_kind(own, "Secret")
    assert {v["name"]: v for v in by_kind(own, "StatefulSet")[0]["spec"]["template"]["spec"]["volumes"]}[
        "keyfile-secret"
    ]["secret"]["secretName"] == "my-keyfile"
    out = helm("template", "rel", str(CHARTS / "mongodb"), "--set", "auth.enabled=true")
    assert out.returncode != 0 and "auth.enabled needs auth.existingSecret" in out.stderr


def test_mongodb_sharded_topology_renders_config_servers_shards_and_routers():
    docs = render(
        "mongodb",
        "--set",
        "topology=sharded",
        "--set",
        "replicas=3",
        "--set",
        "sharded.shards=3",
        "--set",
        "auth.enabled=true",
        "--set",
        "auth.existingSecret=creds",
        "--set-json",
        'podLabels={"bench.tpcc.dev/role": "database"}',
    )
    sets = {s["metadata"]["name"]: s for s in by_kind(docs, "StatefulSet")}
    assert set(sets) == {"rel-cfg", "rel-shard0", "rel-shard1", "rel-shard2", "rel-mongos"}
    assert sets["rel-cfg"]["spec"]["replicas"] == 3 and sets["rel-shard2"]["spec"]["replicas"] == 3
    assert sets["rel-mongos"]["spec"]["replicas"] == 2
    # selectors are disjoint: each StatefulSet owns only its pods
    selectors = [tuple(sorted(s["spec"]["selector"]["matchLabels"].items())) for s in sets.values()]
    assert len(set(selectors)) == len(selectors)
    args = {n: {c["name"]: c for c in s["spec"]["template"]["spec"]["containers"]} for n, s in sets.items()}
    assert "--configsvr" in args["rel-cfg"]["mongod"]["args"] and "--replSet=cfg" in args["rel-cfg"]["mongod"]["args"]
    assert (
        "--shardsvr" in args["rel-shard1"]["mongod"]["args"]
        and "--replSet=shard1" in args["rel-shard1"]["mongod"]["args"]
    )
    mongos = args["rel-mongos"]["mongos"]["args"]
    assert mongos[0] == "mongos" and "--keyFile=/keyfile/keyfile" in mongos
    assert (
        "--configdb=cfg/rel-cfg-0.rel-hl.ns.svc.cluster.local:27017,rel-cfg-1.rel-hl.ns.svc.cluster.local:27017,"
        "rel-cfg-2.rel-hl.ns.svc.cluster.local:27017"
    ) in mongos
    for s in sets.values():  # the operator finds every pod of the release by its labels
        assert s["spec"]["template"]["metadata"]["labels"]["bench.tpcc.dev/role"] == "database"
        assert s["spec"]["serviceName"] == "rel-hl"
    scripts = by_kind(docs, "ConfigMap")[0]["data"]
    assert "configsvr: true" in scripts["init-cfg.js"] and "createUser" not in scripts["init-shard0.js"]
    assert '"shard2/rel-shard2-0.rel-hl.ns.svc.cluster.local:27017,' in scripts["init-cluster.js"]
    assert "createUser" in scripts["init-cluster.js"] and "sh.addShard" in scripts["init-cluster.js"]
    client = [s for s in by_kind(docs, "Service") if s["metadata"]["name"] == "rel"][0]
    assert client["spec"]["selector"]["app.kubernetes.io/component"] == "mongos"
    assert {p["metadata"]["name"] for p in by_kind(docs, "PodDisruptionBudget")} == set(sets)
    # the operator's endpoints name exactly these routers
    spec = RunSpec.parse(
        {"database": {"type": "mongodb", "deploy": {"replicas": 3, "values": {"topology": "sharded"}}}}
    )
    assert (
        plan.endpoints(plan.Run("bench", "ns", "u", 1), spec)[1]
        == "bench-g1-mongos-1.bench-g1-hl.ns.svc.cluster.local:27017"
    )
    out = helm(
        "template",
        "rel",
        str(CHARTS / "mongodb"),
        "--set",
        "topology=sharded",
        "-f",
        str(CHARTS / "mongodb" / "ci" / "test-server-values.yaml"),
    )
    assert out.returncode != 0 and "topology: replicaset" in out.stderr


@pytest.mark.parametrize(
    "setting, key",
    [
        ("topology=mesh", "topology"),
        ("sharded.shards=0", "shards"),
        ("sharded.configServers=9", "configServers"),
        ("sharded.mongos.replicas=0", "replicas"),
        ("antiAffinity=maybe", "antiAffinity"),
        ("podDisruptionBudget.minAvailable=1", "minAvailable"),
        ("sharded.mongos.hostNetwork=true", "hostNetwork"),
        ("resources.requests.cpu=lots", "cpu"),
    ],
)
def test_mongodb_schema_rejects_bad_values(setting, key):
    out = helm("template", "rel", str(CHARTS / "mongodb"), "--set", setting)
    assert out.returncode != 0 and "values don't meet the specifications of the schema" in out.stderr
    assert key in out.stderr
    # the operator refuses the same values before Helm runs
    k, v = setting.split("=")
    values: dict = {}
    node = values
    *parents, leaf = k.split(".")
    for p in parents:
        node = node.setdefault(p, {})
    node[leaf] = yaml.safe_load(v)
    with pytest.raises(chart_policy.ReleaseRefused, match=key):
        chart_policy.check_values("mongodb", "", values, CHARTS)


# kind -> (API group, resource) of what the database charts may render
RESOURCES = {
    "ConfigMap": ("", "configmaps"),
    "Secret": ("", "secrets"),
    "Service": ("", "services"),
    "StatefulSet": ("apps", "statefulsets"),
    "PodDisruptionBudget": ("policy", "poddisruptionbudgets"),
    "Job": ("batch", "jobs"),
}
HELM_VERBS = {"get", "list", "create", "update", "patch", "delete"}


@pytest.mark.parametrize("chart, values", VALUE_SETS, ids=VALUE_SET_IDS)
def test_the_operator_may_install_everything_the_database_charts_render(chart, values):
    """Helm runs with the operator's Role: a kind it may not manage fails the install (a
    PodDisruptionBudget once did, on the real cluster)."""
    rules = granted(by_kind(render("tpcc-operator", "--set", "watchNamespace=bench"), "Role")[0]["rules"])
    for kind in sorted({d["kind"] for d in render(chart, "--skip-tests", *values)}):  # helm test pods: the user's
        assert kind in RESOURCES, f"{chart} renders a {kind}: add it to RESOURCES and to the operator's Role"
        assert HELM_VERBS <= rules.get(RESOURCES[kind], set()), f"{chart}: the operator may not manage {kind}"


def test_the_admission_policy_is_generated_from_the_charts_schemas():
    out = subprocess.run(
        [sys.executable, str(ROOT / "hack" / "gen-admission.py"), "--check"], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr


def test_the_admission_policy_holds_the_allow_list_and_binds_the_watched_namespace():
    docs = render(
        "tpcc-operator",
        "--set",
        "watchNamespace=bench",
        "--set-json",
        'allowedCharts=["oci://r.example/voltdb", "/charts/mine"]',
    )
    policies = {p["metadata"]["name"]: p for p in by_kind(docs, "ValidatingAdmissionPolicy")}
    assert set(policies) == {"rel-benchmarkruns", "rel-benchmarkschedules"}
    for policy in policies.values():
        allowed = {v["name"]: v["expression"] for v in policy["spec"]["variables"]}["allowed"]
        assert json.loads(allowed) == ["oci://r.example/voltdb", "/charts/mine"]  # a CEL list literal
    for binding in by_kind(docs, "ValidatingAdmissionPolicyBinding"):
        assert binding["spec"]["policyName"] in policies and binding["spec"]["validationActions"] == ["Deny"]
        assert binding["spec"]["matchResources"]["namespaceSelector"] == {
            "matchLabels": {"kubernetes.io/metadata.name": "bench"}
        }
    wide = by_kind(render("tpcc-operator", "--set", "clusterWide=true"), "ValidatingAdmissionPolicyBinding")
    assert all("namespaceSelector" not in (b["spec"].get("matchResources") or {}) for b in wide)
    off = render("tpcc-operator", "--set", "admissionPolicy.enabled=false")
    assert not by_kind(off, "ValidatingAdmissionPolicy") and not by_kind(off, "ValidatingAdmissionPolicyBinding")


# The keywords the operator's first, hand-written check skipped, on the operator chart's own schema
# (draft-07: anyOf, const, minLength, exclusiveMinimum): the operator and Helm give the same verdict.
@pytest.mark.parametrize(
    "values, says",
    [
        ({"image": {"repository": ""}}, "values.image.repository: shorter than 1 characters"),
        ({"image": {"repository": "r.example/tpcc-operator"}}, None),
        ({"tickSeconds": 0}, "values.tickSeconds: must be more than 0"),
        ({"tickSeconds": 0.5}, None),
        (
            {"monitoring": {"podMonitor": {"scrapeTimeout": "soon"}}},
            "values.monitoring.podMonitor.scrapeTimeout: ('soon' is not allowed here "
            "(must match ^([0-9]+(ms|s|m|h))+$)) or (must be \"\"), got 'soon'",
        ),
        ({"monitoring": {"podMonitor": {"scrapeTimeout": "1m30s"}}}, None),
        ({"monitoring": {"podMonitor": {"scrapeTimeout": ""}}}, None),  # the const alternative
        (
            {"monitoring": {"prometheusRule": {"tpmcBelowBaselineRatio": 0}}},
            "tpmcBelowBaselineRatio: must be more than 0",
        ),
        ({"allowedCharts": ["oci://r.example/voltdb", ""]}, "values.allowedCharts[1]: shorter than 1 characters"),
    ],
)
def test_every_keyword_of_the_operator_charts_schema_is_judged_as_helm_judges_it(values, says):
    defaults = yaml.safe_load((CHARTS / "tpcc-operator" / "values.yaml").read_text())
    schema = json.loads((CHARTS / "tpcc-operator" / "values.schema.json").read_text())
    problems = chart_policy.schema_violations(schema, chart_policy._merged(defaults, values), "values")
    assert any(says in p for p in problems) if says else problems == [], problems
    ((key, value),) = values.items()
    out = helm("template", "rel", str(CHARTS / "tpcc-operator"), "--set-json", f"{key}={json.dumps(value)}")
    refused = out.returncode != 0 and "values don't meet the specifications of the schema" in out.stderr
    assert refused == bool(says), out.stderr


def test_a_schema_is_read_in_the_draft_it_declares():
    """The database charts name draft-07 by https (Helm reads either scheme); none is Draft 2020-12,
    a draft jsonschema does not know is refused rather than read as another."""
    for chart in databases.shipped_charts():
        schema = json.loads((CHARTS / chart / "values.schema.json").read_text())
        assert schema["$schema"] == "https://json-schema.org/draft-07/schema#"
        assert type(chart_policy.validator(schema)).__name__ == "Draft7Validator"
    # draft-07 reads an array `items` as one schema per position, 2020-12 refuses the array form
    positional = {"type": "array", "items": [{"type": "string"}]}
    assert (
        chart_policy.schema_violations(
            {"$schema": "http://json-schema.org/draft-07/schema#", **positional}, ["a", 1], "v"
        )
        == []
    )
    with pytest.raises(SchemaError, match="is not of type 'object', 'boolean'"):
        chart_policy.validator({"$schema": "https://json-schema.org/draft/2020-12/schema", **positional})
    assert type(chart_policy.validator({"type": "object"})).__name__ == "Draft202012Validator"
    with pytest.raises(ValueError, match="declares \\$schema 'https://example.com/mine'"):
        chart_policy.validator({"$schema": "https://example.com/mine"})


@pytest.mark.parametrize("chart", databases.shipped_charts())
def test_the_shipped_charts_defaults_satisfy_their_schema(chart):
    chart_policy.check_values(chart, "", {}, CHARTS)


def test_the_readmes_helm_install_with_docker_built_images_deploys_those_images():
    """README.md: images built with plain Docker and the chart pointed at them (the tags match)."""
    text = " ".join((ROOT / "README.md").read_text().split())
    install = re.search(r"`helm install tpcc charts/tpcc-operator ((?:--set \S+ ?)+)`", text)
    assert install, "the README's helm install line is gone"
    built = re.findall(r"`docker build -f (\S+) -t (\S+) \.`", text)
    assert {f for f, _ in built} == {"runner-image/Dockerfile", "operator/Dockerfile"}
    sets = [a for s in install.group(1).split("--set") if (a := s.strip())]
    docs = render("tpcc-operator", *[x for s in sets for x in ("--set", s)])
    container = by_kind(docs, "Deployment")[0]["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}
    tags = {f: ref if ":" in ref.rsplit("/", 1)[-1] else f"{ref}:latest" for f, ref in built}  # docker's default tag
    assert container["image"] == tags["operator/Dockerfile"]
    assert env["TPCC_RUNNER_IMAGE"] == tags["runner-image/Dockerfile"]


@pytest.mark.parametrize("chart, values", VALUE_SETS, ids=VALUE_SET_IDS)
def test_every_database_container_has_requests_and_limits(chart, values):
    """A database the operator installs with the chart's defaults cannot eat the node: every
    container (init containers too) requests and is limited in CPU and memory."""
    for doc in render(chart, *values):
        pod = (doc.get("spec") or {}).get("template", {}).get("spec")
        if not pod:
            continue
        for container in pod.get("initContainers", []) + pod["containers"]:
            resources = container.get("resources") or {}
            for kind in ("requests", "limits"):
                assert {"cpu", "memory"} <= set(resources.get(kind) or {}), (
                    f"{chart} {doc['kind']}/{doc['metadata']['name']} {container['name']}: no {kind}"
                )
