"""Never dangerous, on the real API server: the corpus of bad manifests is rejected at apply with
a message naming the field; what only the operator can know (a foreign chart, values the chart
does not expose) ends Failed within 90 s with a reason; every documented example passes a
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
from test_benchmarkrun_e2e import get_run, kubectl, manifest, wait_phase  # noqa: E402

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


@pytest.mark.parametrize("name, database, says", [
    ("foreign-url-chart", {"type": "voltdb", "deploy": {"chart": "https://charts.example/miner-1.0.0.tgz"}},
     "database.deploy.chart 'https://charts.example/miner-1.0.0.tgz' is not allowed"),
    ("foreign-path-chart", {"type": "voltdb", "deploy": {"chart": "/etc"}}, "database.deploy.chart '/etc' is not allowed"),
    ("root-database", {"type": "voltdb", "deploy": {"values": {"podSecurityContext": {"runAsNonRoot": True,
                                                                                        "runAsUser": 0}}}},
     "database.deploy.values.podSecurityContext.runAsUser: must be at least 1"),
    ("privileged-value", {"type": "voltdb", "deploy": {"values": {"privileged": True}}},
     "database.deploy.values.privileged: not a value of this chart"),
    ("hostpath-injection", {"type": "voltdb", "deploy": {"values": {"dataVolume": {
        "sizeLimit": "1Gi}\n      - name: host\n        hostPath: {path: /"}}}},
     "database.deploy.values.dataVolume.sizeLimit"),
])
def test_release_the_operator_will_not_install_fails_fast(namespace, operator, name, database, says):
    kubectl("apply", "-n", namespace, "-f", "-", input=manifest(name, database=database,
                                                                 runners={"imagePullPolicy": "Never"}))
    t0 = time.time()
    br = wait_phase(namespace, name, ("Failed",), timeout=90)
    assert time.time() - t0 <= 90
    assert br["status"]["reason"] == "ReleaseRefused" and says in br["status"]["message"], br["status"]
    releases = kubectl("get", "secrets", "-n", namespace, "-l", f"owner=helm,name={name}-g1", "-o", "name").stdout
    assert releases.strip() == ""  # Helm never ran
    kubectl("delete", "benchmarkrun", name, "-n", namespace, "--timeout=60s")


def _can(op_ns: str, verb: str, resource: str, namespace: str | None) -> bool:
    sa = kubectl("get", "serviceaccount", "-n", op_ns, "-l", "app.kubernetes.io/name=tpcc-operator",
                 "-o", "jsonpath={.items[0].metadata.name}").stdout
    where = ["-n", namespace] if namespace else ["--all-namespaces"]
    # `can-i VERB pods/exec` would ask about the pod named "exec": a subresource is a flag
    resource, _, sub = resource.partition("/")
    where += ["--subresource", sub] if sub else []
    out = kubectl("auth", "can-i", verb, resource, *where, "--as", f"system:serviceaccount:{op_ns}:{sa}",
                  check=False)
    return out.stdout.strip() == "yes"


@pytest.mark.parametrize("verb, resource, in_watched, elsewhere", [
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
    ("list", "nodes", False, False),
])
def test_operator_holds_only_namespaced_permissions(namespace, operator, verb, resource, in_watched, elsewhere):
    """The chart installed with watchNamespace: a Role there, nothing anywhere else."""
    assert _can(operator, verb, resource, namespace) is in_watched
    assert _can(operator, verb, resource, "kube-system") is elsewhere
    if resource != "nodes":
        assert _can(operator, verb, resource, None) is False  # not cluster-wide
