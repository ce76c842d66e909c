"""Fail fast on a real cluster: a runner image that cannot be pulled and a garbage resource
quantity end the run Failed within 90 s with a reason, a message naming the cause and a
Warning Event (not `Loading` until loadTimeoutSeconds). Uses the fixtures of
test_benchmarkrun_e2e (the operator from the chart, a fresh namespace)."""

from __future__ import annotations

import json
import re
import time

import pytest
from test_benchmarkrun_e2e import get_run, kubectl, manifest, wait_for

pytestmark = pytest.mark.k8s

EXTERNAL = {"type": "voltdb", "external": {"endpoints": ["192.0.2.1:21212"]}}


def failed_within(ns: str, name: str, seconds: float) -> dict:
    deadline = time.time() + seconds
    while time.time() < deadline:
        br = get_run(ns, name)
        if br and br.get("status", {}).get("phase") == "Failed":
            return br
        time.sleep(2)
    br = get_run(ns, name) or {}
    raise AssertionError(f"{name} not Failed within {seconds}s: {json.dumps(br.get('status'))}")


def warnings(ns: str, name: str) -> set[str]:
    events = json.loads(
        kubectl("get", "events", "-n", ns, "-o", "json", "--field-selector", f"involvedObject.name={name}").stdout
    )["items"]
    return {e["reason"] for e in events if e["type"] == "Warning"}


def kstatus_failed(br: dict) -> None:
    conditions = {c["type"]: c for c in br["status"]["conditions"]}
    assert conditions["Ready"]["status"] == "False" and conditions["Stalled"]["status"] == "True"
    assert br["status"]["observedGeneration"] == br["metadata"]["generation"]
    assert all(c["observedGeneration"] == br["metadata"]["generation"] for c in conditions.values())


def test_an_image_that_is_not_there_fails_within_90s(namespace, operator):  # noqa: F811
    name = "bad-image"
    kubectl(
        "apply",
        "-n",
        namespace,
        "-f",
        "-",
        input=manifest(
            name, database=EXTERNAL, runners={"image": "local/no-such-runner:0", "imagePullPolicy": "Never"}
        ),
    )
    br = failed_within(namespace, name, 90)
    assert br["status"]["reason"] == "ImagePullFailed"
    assert "ErrImageNeverPull" in br["status"]["message"] and "local/no-such-runner:0" in br["status"]["message"]
    assert "ImagePullFailed" in warnings(namespace, name)
    kstatus_failed(br)
    kubectl("delete", "benchmarkrun", name, "-n", namespace, "--timeout=60s")


def test_a_garbage_resource_quantity_fails_within_90s(namespace, operator):  # noqa: F811
    """Refused at apply when the CRD validates quantities; else the operator fails the run
    before creating anything. Either way the field is named."""
    name = "bad-quantity"
    out = kubectl(
        "apply",
        "-n",
        namespace,
        "-f",
        "-",
        check=False,
        input=manifest(
            name, database=EXTERNAL, runners={"imagePullPolicy": "Never", "resources": {"requests": {"memory": "lots"}}}
        ),
    )
    if out.returncode != 0:
        assert "resources" in out.stderr and "memory" in out.stderr, out.stderr
        return
    br = failed_within(namespace, name, 90)
    assert br["status"]["reason"] == "InvalidSpec"
    assert "spec.runners.resources.requests.memory: 'lots'" in br["status"]["message"]
    assert "InvalidSpec" in warnings(namespace, name)
    kstatus_failed(br)
    kubectl("delete", "benchmarkrun", name, "-n", namespace, "--timeout=60s")


def test_a_claim_no_provisioner_serves_fails_within_90s_in_the_claims_words(namespace, operator):
    """A StorageClass whose provisioner is not running: the database pod's claim stays Pending; the
    run fails StorageUnavailable (not DatabaseNotReady ten minutes later), quoting the scheduler
    and the claim's Event."""
    storage_class = f"nobody-{namespace[-6:]}"
    kubectl(
        "apply",
        "-f",
        "-",
        input=json.dumps(
            {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "StorageClass",
                "metadata": {"name": storage_class},
                "provisioner": "example.com/nobody",
                "volumeBindingMode": "Immediate",
            }
        ),
    )
    name = "no-provisioner"
    try:
        kubectl(
            "apply",
            "-n",
            namespace,
            "-f",
            "-",
            input=manifest(
                name,
                database={"type": "voltdb", "deploy": {"values": {"persistence": {"storageClass": storage_class}}}},
            ),
        )
        t0 = time.time()
        br = failed_within(namespace, name, 90)
        status = br["status"]
        assert status["reason"] == "StorageUnavailable", status
        assert f"from the provisioner of StorageClass '{storage_class}'" in status["message"]
        assert "external provisioner 'example.com/nobody'" in status["message"]  # the claim's Event
        assert "unbound immediate PersistentVolumeClaims" in status["message"]  # the scheduler
        assert "StorageUnavailable" in warnings(namespace, name)
        kstatus_failed(br)
        print(f"StorageUnavailable after {time.time() - t0:.0f} s")
    finally:
        kubectl("delete", "benchmarkrun", name, "-n", namespace, "--ignore-not-found", "--timeout=120s", check=False)
        kubectl("delete", "storageclass", storage_class, "--ignore-not-found", check=False)


def test_a_pod_larger_than_the_node_fails_and_one_that_waits_for_room_says_so(namespace, operator):
    """cpu 64 fits no node: Failed Unschedulable at once. cpu equal to the whole node fits it
    empty but not beside the pods already there: the run waits, and its message says why.
    (Limits as high as the requests: the chart's default limit is below 64 CPUs.)"""
    waits, too_big = "waits-for-room", "too-big"
    node_cpu = kubectl("get", "nodes", "-o", "jsonpath={.items[0].status.allocatable.cpu}").stdout
    try:
        kubectl(
            "apply",
            "-n",
            namespace,
            "-f",
            "-",
            input=manifest(
                too_big,
                database={
                    "type": "voltdb",
                    "deploy": {"values": {"resources": {"requests": {"cpu": "64"}, "limits": {"cpu": "64"}}}},
                },
            ),
        )
        kubectl(
            "apply",
            "-n",
            namespace,
            "-f",
            "-",
            input=manifest(
                waits,
                database={
                    "type": "voltdb",
                    "deploy": {"values": {"resources": {"requests": {"cpu": node_cpu}, "limits": {"cpu": node_cpu}}}},
                },
            ),
        )
        br = failed_within(namespace, too_big, 60)
        assert br["status"]["reason"] == "Unschedulable"
        assert br["status"]["message"].startswith(
            f"pod {too_big}-g1-0 requests cpu 64, more than any node can allocate (largest: {float(node_cpu):g})"
        ), br["status"]
        assert re.search(r"; the scheduler: 0/\d+ nodes are available", br["status"]["message"]), br["status"]

        def waiting_for_cpu():
            status = get_run(namespace, waits)["status"]
            assert status["phase"] == "Deploying", status
            return "Insufficient cpu" in status["message"] and status  # the scheduler's words, once it retried

        waiting = wait_for("the waiting run's message to name the cpu", waiting_for_cpu, 60)
        assert f"pod {waits}-g1-0 not scheduled yet" in waiting["message"] and waiting["message"].startswith("since ")
    finally:
        kubectl(
            "delete",
            "benchmarkrun",
            too_big,
            waits,
            "-n",
            namespace,
            "--ignore-not-found",
            "--timeout=120s",
            check=False,
        )


def test_a_pod_the_api_server_refuses_fails_within_60s_in_its_words(namespace, operator):
    """Requests above the chart's default limit: the StatefulSet cannot create its pod (invalid),
    so the run fails PodRefused with the API server's words instead of waiting 600 s."""
    name = "refused-pod"
    try:
        kubectl(
            "apply",
            "-n",
            namespace,
            "-f",
            "-",
            input=manifest(
                name, database={"type": "voltdb", "deploy": {"values": {"resources": {"requests": {"cpu": "64"}}}}}
            ),
        )
        br = failed_within(namespace, name, 60)
        assert br["status"]["reason"] == "PodRefused", br["status"]
        assert "must be less than or equal to cpu limit" in br["status"]["message"]
        assert "PodRefused" in warnings(namespace, name)
        kstatus_failed(br)
    finally:
        kubectl("delete", "benchmarkrun", name, "-n", namespace, "--ignore-not-found", "--timeout=120s", check=False)
