"""A runner pod stops measuring once the operator has released it mid-run (ledger.ended_when_released):
the operator writes ledgersVerified into the start ConfigMap when it has ended and judged the run,
which a failure mid-run does at once (a VoltDB without k-safety that lost its data with a node).
The ConfigMap is read through tpcc_runner.k8s, here replaced by a dict the test edits."""

from __future__ import annotations

import queue
import threading
import time

import pytest
from tpcc_runner import cli, k8s, ledger

REF = "perf/bench-g1-start"


@pytest.fixture
def start_configmap(monkeypatch) -> dict:
    """The start ConfigMap's data as the pod reads it; an entry "fail" makes the next read fail."""
    data: dict = {}

    def read(ref: str) -> dict:
        assert ref == REF
        if data.pop("fail", None):
            raise k8s.KubeError("GET configmaps: 503 Service Unavailable")
        return dict(data)

    monkeypatch.setattr(k8s, "configmap_data", read)
    return data


def test_a_release_stops_a_blocking_wait_in_the_main_thread(start_configmap):
    start_configmap["startAt"] = "2026-11-27T02:24:57Z"
    threading.Timer(0.2, start_configmap.update, kwargs={"fail": True}).start()  # an API blip, read past
    threading.Timer(0.4, start_configmap.update, kwargs={"ledgersVerified": "true"}).start()
    t0 = time.monotonic()
    with pytest.raises(ledger.Released), ledger.ended_when_released(REF, poll=0.05):
        queue.Queue().get(timeout=30)  # as ClientPool.collect waits for its reports
    assert 0.4 <= time.monotonic() - t0 < 5


def test_no_release_no_stop(start_configmap):
    start_configmap["startAt"] = "2026-11-27T02:24:57Z"
    with ledger.ended_when_released(REF, poll=0.01):
        time.sleep(0.2)
    # after the block a release changes nothing: the pod holds its ledger until released (hold_ledger)
    start_configmap["ledgersVerified"] = "true"
    time.sleep(0.1)


def test_outside_kubernetes_nothing_is_watched(monkeypatch):
    monkeypatch.setattr(k8s, "configmap_data", lambda ref: pytest.fail("read a ConfigMap"))
    with ledger.ended_when_released(None, poll=0.01):
        time.sleep(0.05)


def test_a_released_run_exits_0_and_says_why(monkeypatch, capsys, start_configmap):
    start_configmap["ledgersVerified"] = "true"

    def measuring(args, metrics) -> int:
        with ledger.ended_when_released(REF, poll=0.01):
            time.sleep(30)
        return 1

    monkeypatch.setitem(cli.COMMANDS, "run", measuring)
    assert cli.main(["run", "--db", "voltdb", "--warehouses", "1", "--metrics-port", "0"]) == 0
    assert "the operator ended the run before its duration did" in capsys.readouterr().err
