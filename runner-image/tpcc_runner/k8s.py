"""What a runner pod asks of the Kubernetes API, with its ServiceAccount token: read the
barrier ConfigMap the operator writes (startAt, ledgersVerified) and write its results into a
ConfigMap the operator made.
Plain HTTPS: the runner needs no Kubernetes client library."""

from __future__ import annotations

import json
import os
import time

SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"


class KubeError(Exception):
    pass


def _parse_ref(ref: str) -> tuple[str, str]:
    ns, sep, name = ref.partition("/")
    if not sep or not ns or not name:
        raise ValueError(f"expected NAMESPACE/NAME, got {ref!r}")
    return ns, name


def _request(method: str, path: str, body: dict | None = None, content_type: str = "application/json"):
    # imported here, not with the module: every `tpcc` process imports the CLI, which imports this
    # (the fork server of a run's clients too, none of which calls the API), and urllib.request
    # with http.client, email and ssl was about 30 ms of each interpreter's start-up
    import ssl
    import urllib.error
    import urllib.request

    host = os.environ.get("KUBERNETES_SERVICE_HOST")
    port = os.environ.get("KUBERNETES_SERVICE_PORT", "443")
    if not host:
        raise KubeError("not running in a Kubernetes pod (KUBERNETES_SERVICE_HOST is unset)")
    with open(f"{SA_DIR}/token") as f:
        token = f.read().strip()
    ctx = ssl.create_default_context(cafile=f"{SA_DIR}/ca.crt")
    req = urllib.request.Request(
        f"https://{host}:{port}{path}",
        method=method,
        data=json.dumps(body).encode() if body is not None else None,
        headers={"Authorization": f"Bearer {token}", "Content-Type": content_type},
    )
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=10) as resp:
            return json.loads(resp.read())
    except urllib.error.HTTPError as e:
        raise KubeError(f"{method} {path}: HTTP {e.code} {e.read()[:200]!r}") from None
    except (urllib.error.URLError, OSError) as e:
        raise KubeError(f"{method} {path}: {e}") from None


def configmap_data(ref: str) -> dict[str, str]:
    ns, name = _parse_ref(ref)
    return _request("GET", f"/api/v1/namespaces/{ns}/configmaps/{name}").get("data") or {}


def write_configmap_key(ref: str, key: str, value: str) -> None:
    ns, name = _parse_ref(ref)
    _request(
        "PATCH", f"/api/v1/namespaces/{ns}/configmaps/{name}", {"data": {key: value}}, "application/merge-patch+json"
    )


def wait_for_key(ref: str, key: str, timeout: float, poll: float = 1.0) -> str:
    """The value of `key` in the ConfigMap, once the operator has written it (the start
    barrier's startAt; ledgersVerified, which releases the runner pods holding their ledgers)."""
    deadline = time.time() + timeout
    while True:
        try:
            value = configmap_data(ref).get(key)
        except KubeError:
            value = None  # the API may blip; the deadline bounds the wait
        if value:
            return value
        if time.time() > deadline:
            raise KubeError(f"no {key} in ConfigMap {ref} after {timeout:.0f} s")
        time.sleep(poll)
