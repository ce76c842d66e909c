"""pytest fixtures: a real SecantusDB server (MongoDB wire protocol, single-node replica set
"secantus") started with hack/secantus.sh on a free port for the module that imports it.

Use it from a test module with `from secantus_server import secantus  # noqa: F401`."""

from __future__ import annotations

import os
import pathlib
import signal
import socket
import subprocess
import time
from dataclasses import dataclass

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "hack" / "secantus.sh"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class SecantusServer:
    port: int
    dir: pathlib.Path

    @property
    def endpoint(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, sync_on_commit: bool = False) -> None:
        """sync_on_commit: fsync the journal at every commit (mongod's j:true); without it an
        acknowledged write is lost when the process is killed before the next sync."""
        subprocess.run(
            [
                str(SCRIPT),
                "start",
                "--port",
                str(self.port),
                "--dir",
                str(self.dir),
                *(["--sync-on-commit"] if sync_on_commit else []),
            ],
            check=True,
            stdout=subprocess.DEVNULL,
            timeout=120,
        )

    def crash(self) -> None:
        """SIGKILL the server's process group, as a node dies, and wait until it is gone (an
        unreaped zombie counts as gone: it holds no files or sockets)."""
        pidfile = self.dir / "secantusd.pid"
        pid = int(pidfile.read_text())
        os.killpg(pid, signal.SIGKILL)
        deadline = time.time() + 30
        while time.time() < deadline and _alive(pid):
            time.sleep(0.1)
        pidfile.unlink()

    def stop(self) -> None:
        subprocess.run([str(SCRIPT), "stop", "--dir", str(self.dir)], check=True, stdout=subprocess.DEVNULL, timeout=60)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except FileNotFoundError:
        return False


def _server(tmp_path_factory, name: str):
    if not os.access(SCRIPT, os.X_OK):
        pytest.fail(f"{SCRIPT} missing or not executable")
    server = SecantusServer(free_port(), tmp_path_factory.mktemp(name))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def secantus(tmp_path_factory):
    """One server for the module that imports it (as voltdb_server.voltdb: one per module
    whatever the scope, so it stops with its module)."""
    yield from _server(tmp_path_factory, "secantus")


@pytest.fixture
def own_secantus(tmp_path_factory):
    """A server of the test's own, for tests that stop and restart it."""
    yield from _server(tmp_path_factory, "secantus-own")
