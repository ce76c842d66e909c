"""The e2e modules share one session: one cluster check, the CRDs applied once, one test
namespace and one operator release watching it (installing the operator is the slow part)."""
from __future__ import annotations

import json
import subprocess
import time

import pytest
from test_benchmarkrun_e2e import (
    ROOT,
    RUNNER_IMAGE,
    VOLTDB_IMAGE,
    _cluster_reachable,
    _namespace,
    _node_images,
    _unavailable,
    kubectl,
    wait_for,
)

SECANTUS_IMAGE = "local/secantus:dev"


@pytest.fixture(scope="session")
def cluster():
    if not _cluster_reachable():
        _unavailable("no reachable cluster in KUBECONFIG")


@pytest.fixture(scope="session")
def images(cluster):
    """The kubelet reports imported images in the node status some seconds later."""
    want = {RUNNER_IMAGE, VOLTDB_IMAGE, SECANTUS_IMAGE}
    deadline = time.time() + 90
    while not want <= _node_images():
        if time.time() > deadline:
            _unavailable(f"needs {sorted(want - _node_images())} on the node (hack/images.sh)")
        time.sleep(3)
    classes = json.loads(kubectl("get", "storageclass", "-o", "json").stdout)["items"]
    if not any((c["metadata"].get("annotations") or {}).get("storageclass.kubernetes.io/is-default-class")
               == "true" for c in classes):
        _unavailable("no default StorageClass (hack/local-k8s.sh up makes local-hostpath)")


@pytest.fixture(scope="session")
def crd(cluster):
    kubectl("apply", "-f", str(ROOT / "crds"))  # every CRD: BenchmarkRun, BenchmarkResult
    # (not `kubectl wait`: on a fresh CRD without conditions yet it errors instead of waiting)
    wait_for("the CRD Established", lambda: kubectl(
        "get", "crd/benchmarkruns.bench.tpcc.dev", "-o",
        'jsonpath={.status.conditions[?(@.type=="Established")].status}', check=False).stdout == "True", 60)
    # the API server serves the new type a moment after Established
    wait_for("BenchmarkRun served", lambda: kubectl("get", "br", "-A", check=False).returncode == 0, 30)


@pytest.fixture(scope="session")
def namespace(crd):
    ns = _namespace("tpcc-e2e")
    yield ns
    kubectl("delete", "namespace", ns, "--wait=false", check=False)


@pytest.fixture(scope="session")
def operator(namespace, images):
    """The operator chart installed in its own namespace, watching the test namespace."""
    op_ns = _namespace("tpcc-e2e-op")
    release = f"op-{op_ns[-6:]}"
    subprocess.run(["helm", "upgrade", "--install", release, str(ROOT / "charts" / "tpcc-operator"),
                    "-n", op_ns, "--set", "image.pullPolicy=Never", "--set", f"watchNamespace={namespace}",
                    # one run at a time here: a tick a second saves ~2 s at each of a run's steps
                    "--set", "tickSeconds=1",
                    "--wait", "--timeout", "120s"], check=True, capture_output=True, text=True)
    yield op_ns
    # while the operator still runs: it removes its finalizers (else the namespace never goes)
    kubectl("delete", "benchmarkschedules,benchmarkruns", "--all", "-n", namespace, "--timeout=180s", check=False)
    subprocess.run(["helm", "uninstall", release, "-n", op_ns], capture_output=True)
    kubectl("delete", "namespace", op_ns, "--wait=false", check=False)
