"""A container the kernel kills at its memory limit, as the operator reads it (kube.pods_of):
the fact a failed run's message names (test_oom_kills.py: from this fact to the message). The
fault is real: a process that writes past its cgroup's limit on the local cluster's kubelet."""

from __future__ import annotations

import json

import pytest
from test_benchmarkrun_e2e import RUNNER_IMAGE, kubectl, wait_for
from tpcc_operator import kube

pytestmark = pytest.mark.k8s

LABELS = {"app": "oom-e2e"}
# writes 256 MiB (bytes * n fills every page; a bytearray's zeroed pages are never touched)
HOG = "import time; hog = b'x' * (256 << 20); time.sleep(600)"


def test_a_container_killed_at_its_memory_limit_is_read_as_oom_killed(namespace, images):
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "oom-e2e", "labels": LABELS},
        "spec": {
            "restartPolicy": "Always",  # restarted in place, as a database's StatefulSet pod is
            # the namespace enforces the restricted Pod Security Standard
            "securityContext": {"runAsNonRoot": True, "runAsUser": 1000, "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [
                {
                    "name": "database",
                    "image": RUNNER_IMAGE,
                    "imagePullPolicy": "Never",
                    "command": ["python3", "-c", HOG],
                    "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
                    "resources": {
                        "requests": {"cpu": "10m", "memory": "64Mi"},
                        "limits": {"cpu": "200m", "memory": "64Mi"},
                    },
                }
            ],
        },
    }
    kubectl("apply", "-n", namespace, "-f", "-", input=json.dumps(pod))
    try:
        # Not the first restart: on this cgroup v1 node containerd once reported a kill at the
        # limit as reason Error (CI, 2026-11-27: restarts 1, no OOMKilled); the container is
        # killed again at each restart, and the next report names it.
        def killed_at_its_limit():
            [pod] = kube.pods_of(namespace, LABELS, "database")
            return pod if pod.oom_killed_at else None

        seen = wait_for("an OOM kill in the container's last state", killed_at_its_limit, 150)
        assert seen.oom_killed_at.endswith("Z") and seen.memory_limit == "64Mi"
        assert kube.pods_of(namespace, LABELS, "no-such-container")[0].oom_killed_at == ""
    finally:
        kubectl("delete", "pod", "oom-e2e", "-n", namespace, "--wait=false", check=False)
