"""The runner pod's readiness: /ready answers 200 only once its clients are connected,
while /metrics serves Prometheus from the start."""

import urllib.error
import urllib.request

from secantus_server import free_port
from tpcc_runner.metrics import RunnerMetrics


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def test_ready_only_after_the_clients_connected():
    metrics, port = RunnerMetrics(), free_port()
    metrics.serve(port)
    base = f"http://127.0.0.1:{port}"
    assert _status(f"{base}/metrics") == 200
    assert _status(f"{base}/ready") == 503  # the server is up, the clients are not
    metrics.ready.set()
    assert _status(f"{base}/ready") == 200
    with urllib.request.urlopen(f"{base}/metrics", timeout=5) as r:
        assert b"tpcc_phase" in r.read()
