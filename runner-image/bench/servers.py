"""The real servers the benchmark scripts measure, started and stopped by the project's own
scripts (hack/voltdb.sh, hack/secantus.sh) in a scratch directory: one place for how."""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VOLTDB_SH = ROOT / "hack" / "voltdb.sh"
SECANTUS_SH = ROOT / "hack" / "secantus.sh"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass(frozen=True)
class Server:
    endpoint: str  # host:port the runner connects to
    pid: int  # the server's process, whose CPU a script measures beside the runner's
    directory: Path  # its data and logs


@contextmanager
def voltdb(work: Path) -> Iterator[Server]:
    """A one-node VoltDB 10.1.1 with the TPC-C and YCSB procedures, on ports of its own (a test
    server may hold the default ones)."""
    for step in ("fetch", "procs"):
        subprocess.run([str(VOLTDB_SH), step], check=True)
    directory = work / "voltdb"
    started = subprocess.run(
        [str(VOLTDB_SH), "start", "--dir", str(directory), "--base-port", str(20000 + free_port() % 40000)],
        check=True,
        capture_output=True,
        text=True,
    )
    try:
        # voltdb.sh's node runs `exec java` from the process whose pid it records
        pid = int((directory / "node0" / "pid").read_text())
        yield Server(started.stdout.strip().splitlines()[-1].split(",")[0], pid, directory)
    finally:
        subprocess.run([str(VOLTDB_SH), "stop", "--dir", str(directory)], check=False)


@contextmanager
def secantus(work: Path) -> Iterator[Server]:
    """SecantusDB, the MongoDB wire server on WiredTiger the MongoDB driver is tested against."""
    directory, port = work / "secantus", free_port()
    subprocess.run(
        [str(SECANTUS_SH), "start", "--port", str(port), "--dir", str(directory)],
        check=True,
        stdout=subprocess.DEVNULL,
        timeout=120,
    )
    try:
        yield Server(f"127.0.0.1:{port}", int((directory / "secantusd.pid").read_text()), directory)
    finally:
        subprocess.run([str(SECANTUS_SH), "stop", "--dir", str(directory)], check=False, stdout=subprocess.DEVNULL)
