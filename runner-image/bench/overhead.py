#!/usr/bin/env python3
"""The runner's own costs against a real VoltDB (started here unless --endpoint is given):

- `tpcc load` of N warehouses: wall seconds, rows/s, the CPU seconds of the runner's
  process tree (the command and its load workers), the peak RSS of its largest process, and
  the VoltDB server's CPU seconds meanwhile (when this script started the server);
- `tpcc run` start-up: the CPU seconds of the runner's process tree from launch until every
  client process is connected (its /ready answers 200), before the first transaction; the
  start is held with --start-file until that is read.

CPU seconds, not wall seconds, because the machine may be shared. --runner points at another
tree's runner-image to measure its code (e.g. before a change) with this script.

    .venv/bin/python runner-image/bench/overhead.py [--warehouses 2] [--clients 8] [--repeat 3]
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import servers
from servers import free_port

ROOT = Path(__file__).resolve().parents[2]
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def stat_fields(pid: int | str) -> list[str] | None:
    """The fields of /proc/PID/stat after the command's name (state, ppid, pgrp, ...; utime
    and stime at 11 and 12), or None when the process is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def every_process() -> Iterator[tuple[int, list[str]]]:
    """(pid, stat_fields) of every live process."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := stat_fields(entry.name)) is not None:
            yield int(entry.name), fields


def group_cpu_seconds(pid: int) -> float:
    """CPU seconds of every live process in pid's process group (a server and its children)."""
    group = os.getpgid(pid)
    return sum(int(f[11]) + int(f[12]) for _, f in every_process() if int(f[2]) == group) / CLOCK_TICKS


def process_cpu(pid: int) -> float:
    """utime + stime of a live process, in seconds (0 if it is gone)."""
    fields = stat_fields(pid)
    return 0.0 if fields is None else (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def parent_pids() -> list[tuple[int, int]]:
    """(pid, parent pid) of every process."""
    return [(pid, int(fields[1])) for pid, fields in every_process()]


def tree_cpu(root: int) -> float:
    """CPU seconds of a live process and all its live descendants, plus what its
    descendants that already exited left in their parents' children counters."""
    children: dict[int, list[int]] = {}
    for pid, ppid in parent_pids():
        children.setdefault(ppid, []).append(pid)
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        if (fields := stat_fields(pid)) is None:
            continue
        total += sum(int(f) for f in fields[11:15]) / CLOCK_TICKS  # utime stime cutime cstime
        todo.extend(children.get(pid, []))
    return total


def become_subreaper() -> None:
    """Orphaned descendants (a fork server outliving its `tpcc`) come to this process, so
    reap_all() collects their CPU too."""
    pr_set_child_subreaper = 36
    if ctypes.CDLL(None, use_errno=True).prctl(pr_set_child_subreaper, 1, 0, 0, 0) != 0:
        sys.exit(f"prctl(PR_SET_CHILD_SUBREAPER): {os.strerror(ctypes.get_errno())}")


def reap_all(usages: list, keep: int | None = None) -> None:
    """Wait for every child of this process but `keep` (a server started after
    become_subreaper() is adopted too, and lives on); append each one's rusage."""
    while True:
        children = [pid for pid, ppid in parent_pids() if ppid == os.getpid() and pid != keep]
        if not children:
            return
        for pid in children:
            with contextlib.suppress(ChildProcessError):
                usages.append(os.wait4(pid, 0)[2])


def wait_ready(p: subprocess.Popen, port: int, timeout: float | None = None) -> bool:
    """Whether `tpcc run`'s /ready answered 200 (every client connected) before the process
    ended or the timeout passed."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while p.poll() is None and (deadline is None or time.monotonic() < deadline):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/ready", timeout=1) as r:
                if r.status == 200:
                    return True
        except OSError:
            pass
        time.sleep(0.02)
    return False


def tpcc_command(runner: Path, *args: str) -> tuple[list[str], dict[str, str]]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(runner), *filter(None, [os.environ.get("PYTHONPATH")])])}
    return [sys.executable, "-m", "tpcc_runner.cli", *args], env


def measure_load(
    runner: Path,
    endpoint: str,
    warehouses: int,
    workers: int | None,
    server_pid: int | None,
    db: str = "voltdb",
    extra: tuple[str, ...] = (),
) -> dict:
    """One `tpcc load --reset` (`extra`: more of its arguments): wall, rows/s, the CPU of the
    runner's whole process tree, the peak RSS of its largest process."""
    args = [
        "load",
        "--db",
        db,
        "--endpoints",
        endpoint,
        "--warehouses",
        str(warehouses),
        "--reset",
        "--seed",
        "1",
        "--metrics-port",
        "0",
    ]
    if workers:
        args += ["--workers", str(workers)]
    args += extra
    cmd, env = tpcc_command(runner, *args)
    server_before = process_cpu(server_pid) if server_pid else 0.0
    with tempfile.TemporaryFile("w+") as err:
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=err, text=True)
        out = p.stdout.read()
        # wait4, not wait: its rusage covers the command and the processes it waited for
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
        usages = [usage]
        reap_all(usages, keep=server_pid)  # the server too is this subreaper's child when started after it
        p.returncode = os.waitstatus_to_exitcode(status)  # reaped: Popen must not wait again
        if p.returncode != 0:
            err.seek(0)
            sys.exit(f"tpcc load failed: {err.read().strip()[-2000:]}")
    rows = json.loads(out)["rows"]
    result = {
        "warehouses": warehouses,
        "rows": rows,
        "wall_s": round(wall, 1),
        "rows_per_s": round(rows / wall),
        "client_cpu_s": round(sum(u.ru_utime + u.ru_stime for u in usages), 2),
        "peak_rss_mb": round(max(u.ru_maxrss for u in usages) / 1024),
        "processes": len(usages),
        "peak_rss_sum_mb": round(sum(u.ru_maxrss for u in usages) / 1024),  # an upper bound of the tree's
    }
    if server_pid:
        result["server_cpu_s"] = round(process_cpu(server_pid) - server_before, 1)
    return result


def measure_startup(runner: Path, endpoint: str, warehouses: int, clients: int, work: Path) -> float:
    start_file = work / f"start-{time.monotonic_ns()}"
    port = free_port()
    cmd, env = tpcc_command(
        runner,
        "run",
        "--db",
        "voltdb",
        "--endpoints",
        endpoint,
        "--warehouses",
        str(warehouses),
        "--clients",
        str(clients),
        "--duration",
        "1",
        "--warmup",
        "0",
        "--seed",
        "1",
        "--start-file",
        str(start_file),
        "--metrics-port",
        str(port),
    )
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        if not wait_ready(p, port, timeout=120):
            sys.exit(f"tpcc run did not get ready: {p.stderr.read().strip()[-2000:] if p.stderr else ''}")
        cpu = tree_cpu(p.pid)
        start_file.write_text(f"{time.time():.3f}\n")
        _, err = p.communicate(timeout=120)
        reap_all([])
        if p.returncode != 0:
            sys.exit(f"tpcc run failed: {err.strip()[-2000:]}")
        return cpu
    finally:
        if p.poll() is None:
            p.kill()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--warehouses", type=int, default=2)
    ap.add_argument("--workers", type=int, default=None, help="tpcc load --workers (default: its own)")
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=3, help="measurements of each (all are printed)")
    ap.add_argument("--endpoint", default=None, help="an empty VoltDB to use instead of starting one")
    ap.add_argument(
        "--runner",
        type=Path,
        default=ROOT / "runner-image",
        help="the runner-image directory whose tpcc_runner is measured",
    )
    ap.add_argument("--only", choices=("load", "startup"), default=None)
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tpcc-overhead-"))
    with contextlib.ExitStack() as stack:
        if a.endpoint is None:
            volt = stack.enter_context(servers.voltdb(work))
            endpoint, server_pid = volt.endpoint, volt.pid
        else:
            endpoint, server_pid = a.endpoint, None
        _measure(a, endpoint, server_pid, work)


def _measure(a: argparse.Namespace, endpoint: str, server_pid: int | None, work: Path) -> None:
    # after the server's start: its nodes are orphans this process must not wait for
    become_subreaper()
    loads = [
        measure_load(a.runner, endpoint, a.warehouses, a.workers, server_pid)
        for _ in range(a.repeat if a.only != "startup" else 0)
    ]
    if a.only == "startup" and not loads:
        # `tpcc run` needs a load: one, unmeasured
        measure_load(a.runner, endpoint, a.warehouses, a.workers, server_pid)
    startups = [
        round(measure_startup(a.runner, endpoint, a.warehouses, a.clients, work), 2)
        for _ in range(a.repeat if a.only != "load" else 0)
    ]
    for r in loads:
        print(json.dumps({"load": r}))
    if startups:
        print(json.dumps({"run_startup_cpu_s": startups, "clients": a.clients}))
    summary = []
    if loads:
        best = min(loads, key=lambda r: r["wall_s"])
        summary.append(
            f"load {a.warehouses} warehouses: {best['wall_s']} s, {best['rows_per_s']} "
            f"rows/s, client {best['client_cpu_s']} CPU-s, peak RSS "
            f"{best['peak_rss_mb']} MB, server {best.get('server_cpu_s')} CPU-s "
            f"(best wall of {len(loads)})"
        )
    if startups:
        summary.append(f"run start-up {min(startups)} CPU-s (min of {len(startups)})")
    print(" | ".join(summary))


if __name__ == "__main__":
    os.chdir(ROOT)
    main()
