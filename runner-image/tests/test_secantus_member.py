"""hack/secantus/member.py, what the test-server image (local/secantus:dev) runs in place of
mongod in charts/mongodb: a real SecantusDB process, its `hello`, the chart's readiness
contract, and an acknowledged write surviving a SIGKILL and a restart on the same directory."""

from __future__ import annotations

import pathlib
import signal
import subprocess
import sys
import time

import pymongo
import pytest
from pymongo.write_concern import WriteConcern
from secantus_server import free_port

pytestmark = pytest.mark.db
MEMBER = pathlib.Path(__file__).resolve().parents[2] / "hack" / "secantus" / "member.py"


def ready(port: int, replica_set: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(MEMBER), "ready", "--port", str(port), "--replica-set", replica_set],
        capture_output=True,
        text=True,
        timeout=30,
    )


class Member:
    def __init__(self, data: pathlib.Path, advertise: str, replica_set: str = "rs0"):
        self.port, self.data, self.advertise, self.replica_set = free_port(), data, advertise, replica_set
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                str(MEMBER),
                "serve",
                "--port",
                str(self.port),
                "--storage-path",
                str(self.data),
                "--replica-set",
                self.replica_set,
                "--advertise",
                self.advertise,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while ready(self.port, self.replica_set).returncode != 0:
            assert self.proc.poll() is None, self.proc.stderr.read().decode()
            assert time.monotonic() < deadline, "member not ready within 60 s"
            time.sleep(0.5)

    def kill(self, sig: int) -> int:
        self.proc.send_signal(sig)
        return self.proc.wait(timeout=30)


@pytest.fixture
def member(tmp_path):
    m = Member(tmp_path / "data", "localhost")
    yield m
    if m.proc and m.proc.poll() is None:
        m.kill(signal.SIGKILL)


def test_hello_names_the_replica_set_and_the_advertised_member(tmp_path):
    pod_dns = "db-0.db-hl.ns.svc.cluster.local"
    m = Member(tmp_path / "data", pod_dns)
    m.start()
    try:
        with pymongo.MongoClient("127.0.0.1", m.port, directConnection=True) as c:
            hello = c.admin.command("hello")
        # the operator's kill-primary reads the pod name from `primary`; drivers use `hosts`
        assert hello["setName"] == "rs0" and hello["isWritablePrimary"] is True
        assert hello["hosts"] == [f"{pod_dns}:{m.port}"] and hello["primary"] == f"{pod_dns}:{m.port}"
        assert hello["me"] == hello["primary"]
        # readiness: another set's name, or nothing listening, is not ready
        other = ready(m.port, "rs1")
        assert other.returncode == 1 and "setName='rs0'" in other.stderr
        assert m.kill(signal.SIGTERM) == 0
        assert ready(m.port, "rs0").returncode == 1
    finally:
        if m.proc.poll() is None:
            m.kill(signal.SIGKILL)


def test_acknowledged_majority_commit_survives_sigkill_and_restart_on_the_same_directory(member):
    member.start()
    uri = f"mongodb://localhost:{member.port}/?replicaSet=rs0"
    with pymongo.MongoClient(uri, serverSelectionTimeoutMS=10_000) as c:
        orders = c.tpcc.get_collection("orders", write_concern=WriteConcern(w="majority"))
        for o_id in range(1, 51):
            with c.start_session() as s, s.start_transaction(write_concern=WriteConcern(w="majority")):
                orders.insert_one({"o_id": o_id}, session=s)
    assert member.kill(signal.SIGKILL) == -signal.SIGKILL  # a crash: no clean shutdown
    member.start()
    with pymongo.MongoClient(uri, serverSelectionTimeoutMS=10_000) as c:
        assert sorted(d["o_id"] for d in c.tpcc.orders.find()) == list(range(1, 51))


def test_a_fresh_directory_holds_nothing(member, tmp_path):
    """The check above is not vacuous: a member on a new directory (a lost volume) starts empty."""
    member.start()
    with pymongo.MongoClient(f"mongodb://localhost:{member.port}/?replicaSet=rs0") as c:
        c.tpcc.orders.insert_one({"o_id": 1})
    member.kill(signal.SIGKILL)
    member.data = tmp_path / "another-volume"
    member.start()
    with pymongo.MongoClient(f"mongodb://localhost:{member.port}/?replicaSet=rs0") as c:
        assert c.tpcc.orders.count_documents({}) == 0
