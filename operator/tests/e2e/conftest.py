"""The e2e modules share one session per worker: one cluster check, the CRDs applied once, one
test namespace and one operator release watching it (installing the operator is the slow part).

hack/test.sh runs the modules on two pytest-xdist workers (`--dist loadfile`: a module stays on
one worker, in order), each with its own namespace and operator release: most of a run is
waiting (a database starting, a fixed duration, a cron minute), so two at a time nearly halve
the stage on a 2-core node."""
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

# Seconds each module took in CI (2 cores, one at a time). Longest first, so that the two
# workers finish together instead of one starting the 500-second module when the other is done.
MODULE_SECONDS = {"test_mongodb_e2e.py": 720, "test_benchmarkrun_e2e.py": 700, "test_regression_e2e.py": 510,
                  "test_schedule_e2e.py": 300, "test_sweep_e2e.py": 270, "test_validation_e2e.py": 100,
                  "test_fail_fast_e2e.py": 60, "test_mongodb_charts_e2e.py": 30}


def pytest_collection_modifyitems(items):
    """Longest module first (stable: a module's tests keep their order); every worker collects
    the same order, as xdist requires."""
    items.sort(key=lambda item: -MODULE_SECONDS.get(item.path.name, 0))


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
