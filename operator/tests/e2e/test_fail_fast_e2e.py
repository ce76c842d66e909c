"""Fail fast on a real cluster: a runner image that cannot be pulled and a garbage resource
quantity end the run Failed within 90 s with a reason, a message naming the cause and a
Warning Event (not `Loading` until loadTimeoutSeconds). Uses the fixtures of
test_benchmarkrun_e2e (the operator from the chart, a fresh namespace)."""
from __future__ import annotations

import json
import time

import pytest

from test_benchmarkrun_e2e import get_run, kubectl, manifest

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
    events = json.loads(kubectl("get", "events", "-n", ns, "-o", "json",
                                "--field-selector", f"involvedObject.name={name}").stdout)["items"]
    return {e["reason"] for e in events if e["type"] == "Warning"}


def kstatus_failed(br: dict) -> None:
    conditions = {c["type"]: c for c in br["status"]["conditions"]}
    assert conditions["Ready"]["status"] == "False" and conditions["Stalled"]["status"] == "True"
    assert br["status"]["observedGeneration"] == br["metadata"]["generation"]
    assert all(c["observedGeneration"] == br["metadata"]["generation"] for c in conditions.values())


def test_an_image_that_is_not_there_fails_within_90s(namespace, operator):  # noqa: F811
    name = "bad-image"
    kubectl("apply", "-n", namespace, "-f", "-", input=manifest(
        name, database=EXTERNAL, runners={"image": "local/no-such-runner:0", "imagePullPolicy": "Never"}))
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
    out = kubectl("apply", "-n", namespace, "-f", "-", check=False, input=manifest(
        name, database=EXTERNAL, runners={"imagePullPolicy": "Never",
                                          "resources": {"requests": {"memory": "lots"}}}))
    if out.returncode != 0:
        assert "resources" in out.stderr and "memory" in out.stderr, out.stderr
        return
    br = failed_within(namespace, name, 90)
    assert br["status"]["reason"] == "InvalidSpec"
    assert "spec.runners.resources.requests.memory: 'lots'" in br["status"]["message"]
    assert "InvalidSpec" in warnings(namespace, name)
    kstatus_failed(br)
    kubectl("delete", "benchmarkrun", name, "-n", namespace, "--timeout=60s")
