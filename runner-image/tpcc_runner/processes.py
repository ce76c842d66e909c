"""How the runner starts its worker processes (load workers, run clients).

Spawning re-runs the interpreter start-up and re-imports, in every process, the main module
(the whole CLI) and what the worker needs: about 0.4 CPU-s each. A fork server does that
once; each worker is then forked from it, already initialised (a load's workers, a YCSB
run's client processes). Forking the runner itself is cheaper still, but only before it has a
thread (the metrics server) or a connection, since a fork copies their locks in whatever state
they are: a TPC-C run's clients are forked as the runner starts (executor.ClientPool)."""

from __future__ import annotations

import contextlib
import faulthandler
import math
import multiprocessing as mp
import multiprocessing.connection
import multiprocessing.context
import os
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

# `kill -USR1` prints every thread's stack to stderr: how to see where a stuck run waits. Set
# on import, so the fork server (which imports this module) and every worker has it too.
faulthandler.register(signal.SIGUSR1, all_threads=True)


def worker_context(*modules: str) -> multiprocessing.context.ForkServerContext:
    """A fork-server context whose server has imported the main module and `modules`. The
    server starts with the first process and serves the rest of this process's life, so
    only the first call's modules are preloaded; a later worker imports what it lacks."""
    ctx = mp.get_context("forkserver")
    # A worker re-runs the main module (multiprocessing's rule) from the server's imports:
    # by its name when run with -m, by its path ("__main__") when run as a script.
    main_name = getattr(getattr(sys.modules["__main__"], "__spec__", None), "name", None)
    ctx.set_forkserver_preload(["__main__", *filter(None, [main_name]), *modules])
    return ctx


class Terminated(Exception):
    """SIGTERM reached the runner: `kill`, `timeout`, or the kubelet stopping its pod."""


@contextlib.contextmanager
def terminated_by_sigterm() -> Iterator[None]:
    """While in this block, SIGTERM raises Terminated in the main thread: the runner stops as
    Ctrl-C stops it, at once. Without a handler the runner, as its container's PID 1 (for
    which the kernel ignores a signal it has no handler for), ran on against the database
    until the kubelet's SIGKILL at the end of the pod's grace period (30 s)."""

    def raise_terminated(signum: int, frame: object) -> None:
        raise Terminated

    previous = signal.signal(signal.SIGTERM, raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


# how a worker ends when the runner that started it has ended first (end_with_runner)
EXIT_RUNNER_GONE = 3


def end_with_runner() -> None:
    """Called first in every worker (a run's client process, a load worker): end it as soon as
    the runner process that started it ends, however that ends. A runner killed by SIGKILL or
    SIGTERM runs no handler of its own, and its workers are the fork server's children, which
    lives as long as they do: they ran on against the database to the end of their duration
    (hours, for a long run), a run nobody measures any more. multiprocessing gives each worker
    a sentinel of its parent, a pipe whose other end closes with the runner; a thread waits on
    it and ends the process at once (its connections close with it: a transaction in flight is
    the server's to abort, as when the whole runner is killed)."""
    runner = mp.parent_process()
    if runner is None:  # not a multiprocessing worker
        return

    def end_when_gone() -> None:
        multiprocessing.connection.wait([runner.sentinel])
        print(
            f"{mp.current_process().name}: the runner (pid {runner.pid}) has ended; so does this worker",
            file=sys.stderr,
        )
        os._exit(EXIT_RUNNER_GONE)

    threading.Thread(target=end_when_gone, name="end-with-runner", daemon=True).start()


def usable_cpus(cgroup_cpu_max: Path = Path("/sys/fs/cgroup/cpu.max")) -> int:
    """The CPUs this process may use: the CPUs it may run on, but no more than its cgroup's
    CPU limit rounded up (cgroup v2's cpu.max, "QUOTA PERIOD" or "max PERIOD"). In a pod,
    os.cpu_count() is the node's CPUs: a runner with a 2-CPU limit on a 64-core node would
    start 64 load workers, each with its memory, and have them throttled."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    try:
        quota, period = cgroup_cpu_max.read_text().split()[:2]
        if quota != "max":
            cpus = min(cpus, math.ceil(int(quota) / int(period)))
    except (OSError, ValueError):
        pass  # no cgroup v2 file (not Linux, cgroup v1): the CPUs it may run on
    return max(1, cpus)
