"""The e2e modules of a session share one cluster check, the CRDs applied once, one
test namespace and one operator release watching it (installing the operator is the slow part).

hack/test.sh runs them in two shares at once (SHARES below)."""

from __future__ import annotations

import json
import os
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

# hack/test.sh runs the e2e modules as two pytest sessions at once (TPCC_E2E_SHARE=a and =b), each
# with its own namespace and operator release: most of a run is waiting (a database starting, a
# fixed duration, a cron minute). The shares are balanced by what each module took with two at
# a time on 2 cores (hack/test.sh prints it after the stage, from hack/module-times.py; a fresh
# clone's CI, 2026-11-27, empty caches): a = MongoDB failovers 408 s + regression 260 + papers 228
# + YCSB 222 + validation 35 + chart objects and OOM kill 6 = ~1,160 s; b = sweep 517 + VoltDB
# runs (with the ACID tests) and failover 330 + schedule 234 + fail-fast 84 = ~1,165 s. (Not
# pytest-xdist: its loadgroup cannot pin modules together under pytest 9, and its queue
# prefetches, so two long modules can wait on one worker while the other idles.) Three sessions
# (2026-11-27) took the stage from 1,336 to 1,095-1,175 s on the local cluster, but the node's 2
# CPUs of requests then filled: in CI three runs held every millicore, none could start its
# verifier, and the stage hung.
# 2026-11-28: VoltDB's faults in test_voltdb_faults_e2e.py (three runs, 564 s on the local cluster)
# instead of four runs in the MongoDB module (570 s).
# 2026-11-29: the CI at 4730fb2 took share a 1,953 s and share b 1,535 s; test_nodes_e2e.py's two
# node-losses (226 + 261 s on the 3-node cluster, alone; 618 s in a CI where the first failed) went to
# b, which then took 2,187 s against a's 1,990: fail-fast (93 s) moved to a. test_nodes_e2e.py needs
# hack/test.sh's three nodes (a failure on fewer there, a skip elsewhere).
# 2026-11-29: a cold CI (fresh machine, 3bf451d) took share a 2,131 s and share b 2,135 s; the
# for-good node loss then became a YCSB run (228 s alone; the TPC-C one it replaced, 261 s).
# 2026-11-29: with the MongoDB loads scaled down, the CI at 4c806ba took share a 1,879 s and b
# 2,150 s: schedules (233 s) moved to a, validation (88 s) to b, about 2,020 s each.
SHARES = {
    "test_mongodb_e2e.py": "a",
    "test_voltdb_faults_e2e.py": "a",
    "test_nodes_e2e.py": "b",
    "test_regression_e2e.py": "a",
    "test_papers_e2e.py": "a",
    "test_ycsb_e2e.py": "a",
    "test_validation_e2e.py": "b",
    "test_mongodb_charts_e2e.py": "a",
    "test_oom_kill_e2e.py": "a",
    "test_sweep_e2e.py": "b",
    "test_benchmarkrun_e2e.py": "b",
    "test_schedule_e2e.py": "a",
    "test_fail_fast_e2e.py": "a",
    "test_gitops_flux_e2e.py": "b",
}


def pytest_collection_modifyitems(config, items):
    share = os.environ.get("TPCC_E2E_SHARE")
    keep, drop = [], []
    for item in items:
        if item.path.parent.name == "e2e" and item.path.name not in SHARES:
            raise pytest.UsageError(f"{item.path.name}: give it a share in e2e/conftest.py SHARES")
        in_share = share is None or item.path.parent.name != "e2e" or SHARES[item.path.name] == share
        (keep if in_share else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


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
    if not any(
        (c["metadata"].get("annotations") or {}).get("storageclass.kubernetes.io/is-default-class") == "true"
        for c in classes
    ):
        _unavailable("no default StorageClass (hack/local-k8s.sh up makes local-hostpath)")


@pytest.fixture(scope="session")
def crd(cluster):
    # every CRD: BenchmarkRun, BenchmarkResult. The shares apply them at once: on a cluster
    # without them one share's create can lose to another's (AlreadyExists), and the next apply
    # is an update.
    def applied():
        out = kubectl("apply", "-f", str(ROOT / "crds"), check=False)
        assert out.returncode == 0 or "AlreadyExists" in out.stderr, out.stderr
        return out.returncode == 0

    wait_for("the CRDs applied", applied, 30, every=1)
    # (not `kubectl wait`: on a fresh CRD without conditions yet it errors instead of waiting)
    wait_for(
        "the CRD Established",
        lambda: (
            kubectl(
                "get",
                "crd/benchmarkruns.bench.tpcc.dev",
                "-o",
                'jsonpath={.status.conditions[?(@.type=="Established")].status}',
                check=False,
            ).stdout
            == "True"
        ),
        60,
    )
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
    subprocess.run(
        [
            "helm",
            "upgrade",
            "--install",
            release,
            str(ROOT / "charts" / "tpcc-operator"),
            "-n",
            op_ns,
            "--set",
            "image.tag=dev",  # the local images' tag (the chart's default is its appVersion)
            "--set",
            "image.pullPolicy=Never",
            "--set",
            f"watchNamespace={namespace}",
            # one run at a time here: a tick a second saves ~2 s at each of a run's steps
            "--set",
            "tickSeconds=1",
            "--wait",
            "--timeout",
            "120s",
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    # the API server enforces a new ValidatingAdmissionPolicy some seconds after it exists
    foreign = json.dumps(
        {
            "apiVersion": "bench.tpcc.dev/v1alpha1",
            "kind": "BenchmarkRun",
            "metadata": {"name": "policy-probe"},
            "spec": {"database": {"type": "voltdb", "deploy": {"chart": "/etc"}}},
        }
    )
    wait_for(
        "the admission policy enforced",
        lambda: (
            kubectl("apply", "--dry-run=server", "-n", namespace, "-f", "-", input=foreign, check=False).returncode != 0
        ),
        60,
    )
    yield op_ns
    # while the operator still runs: it removes its finalizers (else the namespace never goes)
    kubectl("delete", "benchmarkschedules,benchmarkruns", "--all", "-n", namespace, "--timeout=180s", check=False)
    subprocess.run(["helm", "uninstall", release, "-n", op_ns], capture_output=True)
    kubectl("delete", "namespace", op_ns, "--wait=false", check=False)
