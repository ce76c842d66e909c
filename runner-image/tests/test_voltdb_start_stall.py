"""hack/voltdb.sh start against a node that stalls as it starts.

CI12 and a CI of 2026-12-07 failed in a VoltDB fixture whose node logged nothing more after its
first lines and never came up. `start` now stops such a start after --stall quiet seconds and
starts the cluster once more from scratch. This test stalls a node for real: it SIGSTOPs the
JVM's process group as soon as the node has a pid, so the node writes nothing more.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest
from voltdb_server import SCRIPT, free_base_port, prepare

pytestmark = pytest.mark.db


def _stop_when_launched(pid_file, deadline: float) -> int:
    while time.monotonic() < deadline:
        if pid_file.exists() and (written := pid_file.read_text().strip()):
            pid = int(written)
            os.killpg(pid, signal.SIGSTOP)
            return pid
        time.sleep(0.02)
    raise AssertionError(f"{pid_file} never appeared")


def _start_one_node(directory, stall_seconds: int) -> subprocess.Popen:
    prepare()
    return subprocess.Popen(
        [str(SCRIPT), "start", "--nodes", "1", "--base-port", str(free_base_port()), "--dir", str(directory)]
        + ["--stall", str(stall_seconds)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_start_whose_node_stalls_is_started_again_and_comes_up(tmp_path):
    start = _start_one_node(tmp_path, 10)
    try:
        stalled_pid = _stop_when_launched(tmp_path / "node0" / "pid", time.monotonic() + 60)
        out, err = start.communicate(timeout=240)
        assert start.returncode == 0, err
        assert "attempt 1 stalled: node node0 logged nothing for" in err
        # the stalled node is gone, not left stopped beside the new one
        with pytest.raises(ProcessLookupError):
            os.kill(stalled_pid, 0)
        kept = tmp_path / "stalled-1" / "node0"
        assert (kept / "threads.txt").exists() and (kept / "stdout.log").exists()
        new_pid = int((tmp_path / "node0" / "pid").read_text())
        assert new_pid != stalled_pid
        assert "Server completed initialization" in (tmp_path / "node0" / "volt.log").read_text()
        assert out.strip().splitlines()[-1].startswith("127.0.0.1:")
    finally:
        if start.poll() is None:
            start.kill()
        subprocess.run([str(SCRIPT), "stop", "--dir", str(tmp_path)], timeout=120, check=False)


def test_a_start_that_stalls_twice_fails_with_the_reason_and_leaves_no_node(tmp_path):
    start = _start_one_node(tmp_path, 5)
    try:
        pids = [_stop_when_launched(tmp_path / "node0" / "pid", time.monotonic() + 60)]
        # the second attempt's node, once the first one's directory has been moved aside
        while not (tmp_path / "stalled-1").exists() and start.poll() is None:
            time.sleep(0.05)
        pids.append(_stop_when_launched(tmp_path / "node0" / "pid", time.monotonic() + 60))
        _, err = start.communicate(timeout=240)
        assert start.returncode == 1
        assert "the start stalled twice, the last time: node node0 logged nothing for" in err
        for pid in pids:
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)
        assert (tmp_path / "stalled-2" / "node0" / "threads.txt").exists()
    finally:
        if start.poll() is None:
            start.kill()
        subprocess.run([str(SCRIPT), "stop", "--dir", str(tmp_path)], timeout=120, check=False)
