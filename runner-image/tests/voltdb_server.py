"""pytest fixtures that run real VoltDB servers through hack/voltdb.sh (fetching the jars
from Maven Central on first use and building the procedures jar) on free loopback ports.

Import the fixtures into a test module: `from voltdb_server import voltdb, voltdb_cluster`.
"""

from __future__ import annotations

import random
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "hack" / "voltdb.sh"
PORT_SPAN = 80  # hack/voltdb.sh uses ports P .. P+79 for up to 8 nodes


@dataclass
class VoltDBServer:
    endpoints: list[str]
    directory: Path

    def script(self, *args: str, timeout: float = 240) -> str:
        done = subprocess.run(
            [str(SCRIPT), *args, "--dir", str(self.directory)], capture_output=True, text=True, timeout=timeout
        )
        if done.returncode != 0:
            raise RuntimeError(f"voltdb.sh {' '.join(args)} failed: {done.stderr.strip()}")
        return done.stdout.strip()

    def kill_node(self, i: int) -> None:
        self.script("kill-node", str(i))

    def restart_node(self, i: int) -> None:
        self.script("restart-node", str(i))


def _ephemeral_ports_start() -> int:
    """Where the kernel's ports for outgoing connections begin (Linux: 32768)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_base_port() -> int:
    """A base port whose whole span is free right now, below the ephemeral ports:
    a node killed and restarted must get its ports back, and a client's outgoing connection
    (a reconnect while the node was down) once took a restarted node's internal port, which
    then failed to bind ("JOINER: Failed to bind")."""
    for _ in range(50):
        base = random.randrange(10000, _ephemeral_ports_start() - PORT_SPAN)
        socks = []
        try:
            for port in range(base, base + PORT_SPAN):
                s = socket.socket()
                socks.append(s)
                s.bind(("", port))  # every address: a port taken on any one is taken
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError("no free port range for VoltDB")


def prepare() -> None:
    """The server's jars (fetched on first use) and the procedures jar, for hack/voltdb.sh start."""
    for step in ("fetch", "procs"):
        subprocess.run([str(SCRIPT), step], check=True, timeout=900)


def start_voltdb(tmp: Path, nodes: int, kfactor: int, *options: str) -> VoltDBServer:
    """options: more of hack/voltdb.sh start's (e.g. --users)."""
    prepare()
    server = VoltDBServer([], tmp)
    out = server.script(
        "start", "--nodes", str(nodes), "--kfactor", str(kfactor), "--base-port", str(free_base_port()), *options
    )
    server.endpoints = out.splitlines()[-1].split(",")
    return server


@pytest.fixture(scope="module")
def voltdb(tmp_path_factory) -> VoltDBServer:
    """One VoltDB node (2 sites: 2 partitions) for the module that imports it. Each importing
    module has a fixture of its own (pytest scopes a fixture to where it is defined), so a
    session scope would still start one server per module, and keep them all running, idle but
    ticking, until the session ends."""
    server = start_voltdb(tmp_path_factory.mktemp("voltdb"), 1, 0)
    yield server
    server.script("stop")


@pytest.fixture(scope="module")
def voltdb_cluster(tmp_path_factory) -> VoltDBServer:
    """Three nodes with k-safety 1: any one node may die."""
    server = start_voltdb(tmp_path_factory.mktemp("voltdb-cluster"), 3, 1)
    yield server
    server.script("stop")
