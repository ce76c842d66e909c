"""Never dangerous, on the real API server: the corpus of bad manifests is rejected at apply with
a message naming the field; a foreign chart or values the chart does not offer are refused at
apply by the chart's ValidatingAdmissionPolicy and, without it, end Failed within 90 s; every \
documented example passes a
server-side dry-run; the operator's ServiceAccount holds only the namespaced permissions.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the unit tests' corpus modules

from bad_manifests import BAD  # noqa: E402
from doc_examples import doc_manifests  # noqa: E402
from test_benchmarkrun_e2e import get_run, kubectl, manifest, wait_for, wait_phase  # noqa: E402

pytestmark = pytest.mark.k8s


@pytest.mark.parametrize("bad", BAD, ids=lambda b: b.id)
def test_bad_manifest_is_rejected_at_apply(namespace, bad):
    out = kubectl("apply", "-n", namespace, "-f", "-", input=bad.json(), check=False)
    assert out.returncode != 0, f"accepted: {bad.json()}"
    assert bad.field in out.stderr and bad.says in out.stderr, out.stderr
    assert get_run(namespace, bad.name) is None


@pytest.mark.parametrize("where, doc", doc_manifests(), ids=lambda x: x if isinstance(x, str) else "")
def test_documented_example_passes_server_side_dry_run(namespace, where, doc):
    out = kubectl("apply", "--dry-run=server", "-n", namespace, "-f", "-", input=json.dumps(doc), check=False)
    assert out.returncode == 0, f"{where}: {out.stderr}"


# What a chart's values.schema.json or the operator's allowedCharts refuse: refused at apply by the
# chart's ValidatingAdmissionPolicy (the first line), and, where that policy is absent (Kubernetes
# before 1.30, admissionPolicy.enabled=false), by the operator before Helm runs (the second line).
REFUSED_RELEASES = [
    (
        "foreign-url-chart",
        {"type": "voltdb", "deploy": {"chart": "https://charts.example/miner-1.0.0.tgz"}},
        "database.deploy.chart https://charts.example/miner-1.0.0.tgz is not allowed",
        "database.deploy.chart 'https://charts.example/miner-1.0.0.tgz' is not allowed",
    ),
    (
        "foreign-path-chart",
        {"type": "voltdb", "deploy": {"chart": "/etc"}},
        "database.deploy.chart /etc is not allowed",
        "database.deploy.chart '/etc' is not allowed",
    ),
    (
        "root-database",
        {"type": "voltdb", "deploy": {"values": {"podSecurityContext": {"runAsNonRoot": True, "runAsUser": 0}}}},
        "database.deploy.values.podSecurityContext.runAsUser: must be integer, at least 1",
        "database.deploy.values.podSecurityContext.runAsUser: must be at least 1",
    ),
    (
        "privileged-value",
        {"type": "voltdb", "deploy": {"values": {"privileged": True}}},
        "database.deploy.values: privileged not offered by the chart",
        "database.deploy.values.privileged: not a value of this chart",
    ),
    (
        "hostpath-injection",
        {
            "type": "voltdb",
            "deploy": {"values": {"dataVolume": {"sizeLimit": "1Gi}\n      - name: host\n        hostPath: {path: /"}}},
        },
        "database.deploy.values.dataVolume.sizeLimit: must be string, matching",
        "database.deploy.values.dataVolume.sizeLimit",
    ),
    (
        "mongod-arg-injection",
        {"type": "mongodb", "deploy": {"values": {"extraArgs": ["--bind_ip_all", "x; rm -rf /"]}}},
        "database.deploy.values.extraArgs[*]: must be string, matching",
        "database.deploy.values.extraArgs[1]",
    ),
    (
        "label-key-injection",
        {"type": "mongodb", "deploy": {"values": {"podLabels": {"a\nb": "c"}}}},
        "database.deploy.values.podLabels: keys must be string, matching",
        "database.deploy.values.podLabels: key",
    ),
]


def _binding(operator: str) -> str:
    release = kubectl(
        "get",
        "deploy",
        "-n",
        operator,
        "-l",
        "app.kubernetes.io/name=tpcc-operator",
        "-o",
        "jsonpath={.items[0].metadata.labels.app\\.kubernetes\\.io/instance}",
    ).stdout
    return f"{release}-benchmarkruns"


@pytest.mark.parametrize("name, database, at_apply, _", REFUSED_RELEASES, ids=[r[0] for r in REFUSED_RELEASES])
def test_release_the_operator_will_not_install_is_refused_at_apply(namespace, operator, name, database, at_apply, _):
    """The chart's ValidatingAdmissionPolicy: refused by the API server, the field named, nothing made."""
    out = kubectl("apply", "-n", namespace, "-f", "-", input=manifest(name, database=database), check=False)
    assert out.returncode != 0, f"accepted: {database}"
    assert f"spec.{at_apply}" in out.stderr and "ValidatingAdmissionPolicy" in out.stderr, out.stderr
    assert get_run(namespace, name) is None
    schedule = {
        "apiVersion": "bench.tpcc.dev/v1alpha1",
        "kind": "BenchmarkSchedule",
        "metadata": {"name": name},
        "spec": {"schedule": "@daily", "runTemplate": {"spec": {"database": database}}},
    }
    out = kubectl("apply", "--dry-run=server", "-n", namespace, "-f", "-", input=json.dumps(schedule), check=False)
    assert out.returncode != 0 and f"spec.runTemplate.spec.{at_apply}" in out.stderr, out.stderr


def test_allowed_values_and_charts_pass_the_policy(namespace, operator):
    good = {
        "type": "mongodb",
        "deploy": {
            "replicas": 3,
            "values": {
                "extraArgs": ["--wiredTigerCacheSizeGB=1"],
                "podLabels": {"team": "db"},
                "resources": {"requests": {"cpu": "500m", "memory": 2147483648}},
                "persistence": {"size": "10Gi"},
            },
        },
    }
    out = kubectl(
        "apply", "--dry-run=server", "-n", namespace, "-f", "-", input=manifest("good", database=good), check=False
    )
    assert out.returncode == 0, out.stderr


def test_without_the_policy_the_operator_refuses_the_release_within_90s(namespace, operator):
    """The second line: the binding switched to Audit (as on a cluster without the policy), each
    refused release ends Failed ReleaseRefused before Helm runs."""
    binding = _binding(operator)
    kubectl(
        "patch",
        "validatingadmissionpolicybinding",
        binding,
        "--type",
        "merge",
        "-p",
        '{"spec": {"validationActions": ["Audit"]}}',
    )
    try:
        wait_for(
            "the policy in Audit",
            lambda: (
                kubectl(
                    "apply",
                    "--dry-run=server",
                    "-n",
                    namespace,
                    "-f",
                    "-",
                    input=manifest("probe", database=REFUSED_RELEASES[0][1]),
                    check=False,
                ).returncode
                == 0
            ),
            30,
        )
        for name, database, _, says in REFUSED_RELEASES:
            kubectl(
                "apply",
                "-n",
                namespace,
                "-f",
                "-",
                input=manifest(name, database=database, runners={"imagePullPolicy": "Never"}),
            )
        t0 = time.time()
        for name, _, _, says in REFUSED_RELEASES:
            br = wait_phase(namespace, name, ("Failed",), timeout=max(5.0, 90 - (time.time() - t0)))
            assert br["status"]["reason"] == "ReleaseRefused" and says in br["status"]["message"], br["status"]
            releases = kubectl(
                "get", "secrets", "-n", namespace, "-l", f"owner=helm,name={name}-g1", "-o", "name"
            ).stdout
            assert releases.strip() == ""  # Helm never ran
    finally:
        kubectl(
            "patch",
            "validatingadmissionpolicybinding",
            binding,
            "--type",
            "merge",
            "-p",
            '{"spec": {"validationActions": ["Deny"]}}',
        )
    # Runs the policy would refuse now (made before it, or under an older schema) still go: the
    # operator's finalizer removal changes no spec, which the policy does not judge.
    time.sleep(2)
    names = [name for name, *_ in REFUSED_RELEASES]
    kubectl("delete", "benchmarkrun", *names, "-n", namespace, "--ignore-not-found", "--timeout=60s")


def test_a_database_too_small_for_its_warehouses_fails_before_helm_within_60s(namespace, operator):
    """The bound the CRD cannot see (it lives in the chart's values): the run ends Failed
    DatabaseTooSmall, the bound and the values to raise in the message, and Helm never runs. A
    sweep whose later cell loads more than the deployment holds fails so before its first cell."""
    voltdb = {"type": "voltdb", "deploy": {"replicas": 3, "kSafety": 1}}
    runs = {
        "too-small": ({"warehouses": 40}, None, "spec.workload.warehouses = 40: "),
        "too-small-later": (
            {},
            {"warehouses": [1, 40]},
            "sweep cell 1 (deployment 0): spec.workload.warehouses = 40: ",
        ),
    }
    for name, (workload, sweep, _) in runs.items():
        extra = {"sweep": sweep} if sweep else {}
        body = manifest(name, database=voltdb, workload=workload, runners={"imagePullPolicy": "Never"}, **extra)
        kubectl("apply", "-n", namespace, "-f", "-", input=body)
    for name, (_, _, starts) in runs.items():
        br = wait_phase(namespace, name, ("Failed",), timeout=60)
        assert br["status"]["reason"] == "DatabaseTooSmall", br["status"]
        message = br["status"]["message"]
        assert (
            message.startswith(starts + "the deployed voltdb holds at most ")
            and "2 copies" in message
            and "resources.limits.memory" in message
        ), message
        helm = kubectl("get", "secrets", "-n", namespace, "-l", f"owner=helm,name={name}-g1", "-o", "name")
        assert helm.stdout == ""
    kubectl("delete", "benchmarkrun", *runs, "-n", namespace, "--timeout=60s")


def _can(op_ns: str, verb: str, resource: str, namespace: str | None) -> bool:
    sa = kubectl(
        "get",
        "serviceaccount",
        "-n",
        op_ns,
        "-l",
        "app.kubernetes.io/name=tpcc-operator",
        "-o",
        "jsonpath={.items[0].metadata.name}",
    ).stdout
    where = ["-n", namespace] if namespace else ["--all-namespaces"]
    # `can-i VERB pods/exec` would ask about the pod named "exec": a subresource is a flag
    resource, _, sub = resource.partition("/")
    where += ["--subresource", sub] if sub else []
    out = kubectl("auth", "can-i", verb, resource, *where, "--as", f"system:serviceaccount:{op_ns}:{sa}", check=False)
    return out.stdout.strip() == "yes"


@pytest.mark.parametrize(
    "verb, resource, in_watched, elsewhere",
    [
        ("create", "jobs.batch", True, False),
        ("patch", "benchmarkruns.bench.tpcc.dev/status", True, False),
        ("delete", "pods", True, False),
        ("create", "secrets", True, False),
        ("create", "statefulsets.apps", True, False),
        ("get", "secrets", True, False),
        ("create", "clusterroles.rbac.authorization.k8s.io", False, False),
        ("create", "pods", False, False),
        # the kill-process fault execs `kill` in a database container: only in the watched namespace
        ("create", "pods/exec", True, False),
        ("get", "pods/exec", True, False),
        ("escalate", "roles.rbac.authorization.k8s.io", False, False),
        # read-only and cluster-scoped: why a pod cannot be scheduled (schedulingReads)
        ("list", "nodes", True, True),
        ("get", "storageclasses.storage.k8s.io", True, True),
        ("delete", "nodes", False, False),
        ("get", "persistentvolumeclaims", True, False),
        ("list", "events", True, False),
    ],
)
def test_operator_holds_only_namespaced_permissions(namespace, operator, verb, resource, in_watched, elsewhere):
    """The chart installed with watchNamespace: a Role there, nothing anywhere else."""
    assert _can(operator, verb, resource, namespace) is in_watched
    assert _can(operator, verb, resource, "kube-system") is elsewhere
    if resource not in ("nodes", "storageclasses.storage.k8s.io"):
        assert _can(operator, verb, resource, None) is False  # not cluster-wide
