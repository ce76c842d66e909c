#!/usr/bin/env python3
"""py-tpcc (the VLDB 2019 paper's tool, vendored in bench/pytpcc, run through pytpcc_shim.py)
and ours side by side on SecantusDB (a new, empty server for each, same version and options):
each loads, then runs, with the same warehouses, clients, duration and write concern, and the
CPU of each tool's whole process tree is measured (wait4 rusage of the command and every
process it waited for, orphans reaped too).

Start-up is the tree's CPU until transactions begin: ours, when every client is connected
(its /ready, before the start file is written); py-tpcc, when its first client process enters
Executor.execute (the shim creates a file then; polled every 20 ms, so its figure also holds up
to 20 ms of the first client's work).

Both tools run from compiled bytecode, as installed (compile_bytecode). Prints one JSON line
per tool and one table.

    .venv/bin/python runner-image/bench/pytpcc_compare.py [--warehouses 1] [--clients 4] \
        [--duration 60] [--scaled] [--write-concern majority] [--rounds 1]

--retry-wait pytpcc runs ours with py-tpcc's wait before a retry; --before-retry-wait backoff
measures this tree with its default wait as the row before it, the same rounds.

--rounds N measures the tools N times, taking turns (each round in the other order), and ends
with the median of each round's ratios: this machine's speed moves by up to 2x from one minute
to the next, so one run a tool does not settle a goal of 10 %.
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

import pymongo
import servers
from growth import load_average
from overhead import become_subreaper, group_cpu_seconds, reap_all, tpcc_command, tree_cpu, wait_ready
from servers import free_port
from tpcc_runner.executor import RETRY_WAITS

ROOT = Path(__file__).resolve().parents[2]
BENCH = Path(__file__).resolve().parent
PYTPCC_DB = "pytpcc"
SCALED_FACTOR = 10  # py-tpcc --scalefactor 10: 10,000 items, 300 customers per district


def run_measured(cmd: list[str], env: dict, cwd: Path, started, server_pid: int) -> dict:
    """Run cmd to its end; `started(p)` returns the tree's CPU at the start of transactions
    (or None for a load). Returns wall seconds, total CPU seconds, start-up CPU, the server's CPU
    seconds meanwhile, stdout."""
    with tempfile.TemporaryFile("w+") as err, tempfile.TemporaryFile("w+") as out:
        server_before = group_cpu_seconds(server_pid)
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=out, stderr=err, text=True)
        startup = started(p) if started else None
        _, status, usage = os.wait4(p.pid, 0)  # the command and the processes it waited for
        wall = time.monotonic() - t0
        server_cpu = group_cpu_seconds(server_pid) - server_before
        usages = [usage]
        reap_all(usages, keep=server_pid)  # orphans that came to this subreaper
        p.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        out.seek(0)
        if p.returncode != 0:
            sys.exit(f"{' '.join(cmd[:4])} failed ({p.returncode}): {err.read().strip()[-3000:]}")
        return {
            "wall_s": wall,
            "cpu_s": sum(u.ru_utime + u.ru_stime for u in usages),
            "startup_cpu_s": startup,
            "server_cpu_s": server_cpu,
            "stdout": out.read(),
        }


# --- py-tpcc -------------------------------------------------------------------------------


def pytpcc_config(work: Path, endpoint: str, write_concern: str) -> Path:
    cfg = work / "pytpcc.cfg"
    cfg.write_text(
        "[mongodb]\n"
        f"uri = mongodb://{endpoint}/?directConnection=true\n"
        f"name = {PYTPCC_DB}\n"
        f"write_concern = {write_concern}\n"
    )
    return cfg


def pytpcc(a, work: Path, cfg: Path, *args: str, started=None) -> dict:
    # tpcc.py lists its drivers from ./drivers: its cwd (where results.log goes) links to them
    with contextlib.suppress(FileExistsError):
        (work / "drivers").symlink_to(BENCH / "pytpcc" / "drivers")
    cmd = [sys.executable, str(BENCH / "pytpcc_shim.py"), "mongodb", "--config", str(cfg)]
    cmd += ["--warehouses", str(a.warehouses), "--clients", str(a.clients), *args]
    if a.scaled:
        cmd += ["--scalefactor", str(SCALED_FACTOR)]
    env = dict(os.environ)
    if started:
        env["TPCC_PYTPCC_STARTED"] = str(started)
    return run_measured(cmd, env, work, (lambda p: _wait_for_file(p, started)) if started else None, a.server_pid)


def _wait_for_file(p: subprocess.Popen, path: Path) -> float | None:
    while p.poll() is None:
        if path.exists():
            return tree_cpu(p.pid)
        time.sleep(0.02)
    return None


def pytpcc_rows(client: pymongo.MongoClient) -> int:
    """Rows py-tpcc loaded, counted on the server (its ORDER_LINE rows are inside ORDERS)."""
    db = client[PYTPCC_DB]
    rows = sum(db[name].estimated_document_count() for name in db.list_collection_names())
    lines = list(db.ORDERS.aggregate([{"$group": {"_id": None, "n": {"$sum": {"$size": "$ORDER_LINE"}}}}]))
    return rows + (lines[0]["n"] if lines else 0)


def measure_pytpcc(a, work: Path, endpoint: str, client: pymongo.MongoClient) -> dict:
    cfg = pytpcc_config(work, endpoint, a.write_concern)
    load = pytpcc(a, work, cfg, "--reset", "--no-execute")
    rows = pytpcc_rows(client)
    run = pytpcc(a, work, cfg, "--no-load", "--duration", str(a.duration), started=work / "pytpcc-started")
    # py-tpcc saves its result document (Results.show -> driver.save_result) in test.results
    doc = client.test.results.find_one(sort=[("_id", -1)])
    # its total counts a NewOrder that rolled back (the driver's None) with the completed ones
    return _row("py-tpcc", load, rows, run, doc["total"], doc["tpmc"], doc["total_retries"], doc["total"])


# --- ours ----------------------------------------------------------------------------------


def ours(a, *args: str, started=None) -> dict:
    common = ["--db", "mongodb", "--endpoints", a.endpoint, "--driver-opt", f"write_concern={a.write_concern}"]
    common += ["--warehouses", str(a.warehouses)]
    cmd, env = tpcc_command(a.runner, args[0], *common, *args[1:])
    return run_measured(cmd, env, a.runner, started, a.server_pid)


def _until_ready(p: subprocess.Popen, port: int, start_file: Path) -> float:
    """CPU of the tree once every client is connected; then let the run start."""
    wait_ready(p, port)
    cpu = tree_cpu(p.pid)
    start_file.write_text(f"{time.time():.3f}\n")
    return cpu


def measure_ours(a, work: Path) -> dict:
    scale = ["--items", "10000", "--customers-per-district", "300"] if a.scaled else []
    load = ours(a, "load", "--reset", "--workers", str(a.clients), "--seed", "1", "--metrics-port", "0", *scale)
    rows = json.loads(load["stdout"])["rows"]
    port, start_file = free_port(), work / "ours-start"
    run = ours(
        a,
        "run",
        *("--clients", str(a.clients), "--duration", str(a.duration), "--warmup", "0", "--seed", "1"),
        *("--metrics-port", str(port), "--start-file", str(start_file)),
        *(("--retry-wait", a.retry_wait) if a.retry_wait != "backoff" else ()),  # trees before the option
        started=lambda p: _until_ready(p, port, start_file),
    )
    result = json.loads(run["stdout"])
    txns = result["transactions"].values()
    committed = sum(t["committed"] for t in txns)
    completed = committed + sum(t["rollbacks"] for t in txns)
    return _row("ours", load, rows, run, committed, result["tpmC"], sum(t["retries"] for t in txns), completed)


# --- the table -----------------------------------------------------------------------------


def _row(
    tool: str, load: dict, rows: int, run: dict, committed: int, tpmc: float, retries: int, completed: int
) -> dict:
    """completed: the transactions that ended committed or rolled back; with the retries, the
    attempts the client made (a retried attempt costs the client too, whatever its outcome)."""
    startup = run["startup_cpu_s"] or 0.0
    per = 1000 / max(committed, 1)
    return {
        "tool": tool,
        "load_rows": rows,
        "load_wall_s": round(load["wall_s"], 1),
        "load_cpu_s": round(load["cpu_s"], 2),
        "load_rows_per_cpu_s": round(rows / max(load["cpu_s"], 1e-9)),
        "committed": committed,
        "tpmC": round(tpmc, 1),
        "retries": retries,
        "run_cpu_s": round(run["cpu_s"], 2),
        "startup_cpu_s": round(startup, 2),
        "cpu_ms_per_commit": round(per * run["cpu_s"], 2),
        "cpu_ms_per_commit_after_startup": round(per * (run["cpu_s"] - startup), 2),
        "retries_per_commit": round(retries / max(committed, 1), 2),
        "cpu_ms_per_attempt_after_startup": round(1000 * (run["cpu_s"] - startup) / max(completed + retries, 1), 2),
        # the server's whole CPU over the run (its start-up and background work included)
        "server_cpu_ms_per_commit": round(per * run["server_cpu_s"], 2),
    }


COLUMNS = (
    ("tool", "tool"),
    ("committed", "commits"),
    ("tpmC", "tpmC"),
    ("retries", "retries"),
    ("startup_cpu_s", "start-up CPU-s"),
    ("run_cpu_s", "run CPU-s"),
    ("cpu_ms_per_commit", "CPU ms/commit"),
    ("cpu_ms_per_commit_after_startup", "... without start-up"),
    ("retries_per_commit", "retries/commit"),
    ("cpu_ms_per_attempt_after_startup", "CPU ms/attempt without start-up"),
    ("server_cpu_ms_per_commit", "server CPU ms/commit"),
    ("load_rows", "load rows"),
    ("load_cpu_s", "load CPU-s"),
    ("load_rows_per_cpu_s", "load rows/CPU-s"),
)


def table(rows: list[dict]) -> str:
    lines = ["| " + " | ".join(h for _, h in COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += [
        "| " + " | ".join(f"{r[k]:,}" if isinstance(r[k], int) else str(r[k]) for k, _ in COLUMNS) + " |" for r in rows
    ]
    if len(rows) >= 2 and rows[0]["tool"] == "py-tpcc":
        theirs, mine = rows[0], rows[-1]
        lines.append(
            f"ours / py-tpcc: CPU per commit {mine['cpu_ms_per_commit'] / theirs['cpu_ms_per_commit']:.2f} "
            f"(goal <= 1.0, issue 43), without start-up "
            f"{mine['cpu_ms_per_commit_after_startup'] / theirs['cpu_ms_per_commit_after_startup']:.2f}, "
            "per attempt without start-up "
            f"{mine['cpu_ms_per_attempt_after_startup'] / theirs['cpu_ms_per_attempt_after_startup']:.2f}, "
            f"load rows per CPU-s {mine['load_rows_per_cpu_s'] / theirs['load_rows_per_cpu_s']:.1f}x (goal >= 5), "
            f"server CPU per commit {mine['server_cpu_ms_per_commit'] / theirs['server_cpu_ms_per_commit']:.2f} "
            "(goal <= 1.10)"
        )
    return "\n".join(lines)


def compile_bytecode(runner: Path) -> None:
    """Both tools' modules compiled, as an installed package's are (pip compiles them; the
    runner image pip-installs): without it, where PYTHONDONTWRITEBYTECODE is set, every
    process of either tool would compile its modules from source at each start."""
    for tree in (runner / "tpcc_runner", BENCH / "pytpcc", BENCH / "pytpcc_shim.py"):
        ok = compileall.compile_dir(tree, quiet=1) if tree.is_dir() else compileall.compile_file(tree, quiet=1)
        if not ok:
            sys.exit(f"could not compile {tree}")


def measure_on_new_server(a, work: Path, tool: str) -> dict:
    """One tool on a SecantusDB of its own, started empty (dropping the other tool's data
    from a shared one takes minutes on this server)."""
    work.mkdir(parents=True)
    with servers.secantus(work) as server:
        become_subreaper()  # a later server is adopted: reap_all leaves it alone
        a.endpoint, a.server_pid = server.endpoint, server.pid
        if tool == "ours":
            row = measure_ours(a, work)
        else:
            with pymongo.MongoClient(f"mongodb://{server.endpoint}/?directConnection=true") as client:
                row = measure_pytpcc(a, work, server.endpoint, client)
    # an adopted server, stopped, is this process's zombie: reaped here, or the next tool's
    # reap_all would count the server's CPU as that tool's
    with contextlib.suppress(ChildProcessError):
        os.waitpid(server.pid, 0)
    return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--warehouses", type=int, default=1)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--duration", type=int, default=60)
    ap.add_argument("--scaled", action="store_true", help="10,000 items, 300 customers per district")
    ap.add_argument("--write-concern", default="majority", help="majority or a number of members")
    ap.add_argument("--only", choices=("py-tpcc", "ours"), default=None)
    ap.add_argument("--runner", type=Path, default=ROOT / "runner-image", help="the runner-image measured")
    ap.add_argument("--before", type=Path, default=None, help="also measure this runner-image (a row before ours)")
    ap.add_argument("--before-label", default="before", help="that row's name")
    ap.add_argument("--retry-wait", choices=tuple(RETRY_WAITS), default="backoff", help="ours: tpcc run --retry-wait")
    ap.add_argument(
        "--before-retry-wait",
        choices=tuple(RETRY_WAITS),
        default=None,
        help="the before row's --retry-wait (default: --retry-wait); without --before, this tree again",
    )
    ap.add_argument("--rounds", type=int, default=1, help="measure every tool this many times, taking turns")
    a = ap.parse_args()
    if a.before_retry_wait and not a.before:
        a.before = a.runner
    work = Path(tempfile.mkdtemp(prefix="tpcc-pytpcc-"))
    for runner in {r for r in (a.runner, a.before) if r}:
        compile_bytecode(runner)
    # (row label, the options measured, tool), in the order of the table
    measured: list[tuple[str, argparse.Namespace, str]] = []
    if a.only in (None, "py-tpcc"):
        measured.append(("py-tpcc", a, "py-tpcc"))
    if a.before and a.only in (None, "ours"):
        before = {"runner": a.before, "retry_wait": a.before_retry_wait or a.retry_wait}
        measured.append((f"ours ({a.before_label})", argparse.Namespace(**{**vars(a), **before}), "ours"))
    if a.only in (None, "ours"):
        measured.append(("ours" if a.retry_wait == "backoff" else f"ours ({a.retry_wait} retry wait)", a, "ours"))
    rounds = []
    for n in range(a.rounds):
        rows = {}
        for label, options, tool in measured if n % 2 == 0 else measured[::-1]:
            rows[label] = {**measure_on_new_server(options, work / f"{n + 1}-{len(rows)}", tool), "tool": label}
            print(json.dumps({**rows[label], "round": n + 1}), flush=True)
        rounds.append([rows[label] for label, _, _ in measured])
        print(
            f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, round {n + 1} of {a.rounds}, SecantusDB, "
            f"{a.warehouses} warehouse(s) {'scaled' if a.scaled else 'full size'}, {a.clients} clients, "
            f"{a.duration} s, w:{a.write_concern}, {load_average()}"
        )
        print(table(rounds[-1]), flush=True)
    if len(rounds) > 1 and measured[0][2] == "py-tpcc" and measured[-1][2] == "ours":
        print(medians(rounds))


def medians(rounds: list[list[dict]]) -> str:
    """The median over the rounds of ours / py-tpcc per goal, and of our start-up."""

    def ratio(key: str) -> float:
        return median(r[-1][key] / r[0][key] if r[0][key] else math.nan for r in rounds)

    startup = median(r[-1]["startup_cpu_s"] for r in rounds)
    return (
        f"median of {len(rounds)} rounds, ours / py-tpcc: server CPU per commit "
        f"{ratio('server_cpu_ms_per_commit'):.2f} (goal <= 1.10), client CPU per commit "
        f"{ratio('cpu_ms_per_commit'):.2f} (goal <= 1.0), without start-up "
        f"{ratio('cpu_ms_per_commit_after_startup'):.2f}, per attempt (a retry is one) without start-up "
        f"{ratio('cpu_ms_per_attempt_after_startup'):.2f}; retries per commit {ratio('retries_per_commit'):.2f} "
        f"of py-tpcc's; our start-up {startup} CPU-s (goal < 0.5)"
    )


if __name__ == "__main__":
    main()
