#!/usr/bin/env python3
"""What each YCSB client asks a MongoDB server for one operation: ours (`tpcc ycsb`, pymongo)
against YCSB's own Java client with its MongoDB binding (YCSB 0.17.0, the binding's sources
vendored in bench/ycsb_java with their licence, built here against YCSB's core and the MongoDB
Java driver 3.8.0 the binding's pom names, both from Maven Central), the same workloads and
properties, one after the other on one SecantusDB.

Counted by the server, so neither client knows: its `top` command's per-collection counts and
times (the commands that name the YCSB table: find, getMore, insert, update, delete, and
aggregate and the like under "commands"; mongod's `top` has the same shape) before and after
each load and run, each client with a database of its own. Heartbeats, handshakes and
`buildInfo` name no collection and are left out. The server's own microseconds in those
commands (top's time) per command of each kind are printed beside them: what each client's
commands cost the server (the operations' mixes differ by each client's random draws).

One client thread each (threadcount 1), so the counts do not depend on timing. The load writes
batchsize records per command as inserts in both (insertMany, unordered; ours' default is upserts,
but the binding's batched upserts fail: it sends each record as an update document without an
operator, which the Java driver refuses, "Invalid BSON field name _id"), the record count a
multiple of the batch size (the binding drops a last partial batch).

    .venv/bin/python runner-image/bench/ycsb_commands.py [--records 1000] [--operations 1000] [--workloads a,b,c,d,e,f]

Needs Maven and a JDK 17 (hack/voltdb.sh fetch installs both where apt can); the classpath and
classes are kept in $TPCC_CACHE/ycsb-java.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pymongo
import servers
from commands import commit
from overhead import tpcc_command

ROOT = Path(__file__).resolve().parents[2]
RUNNER = ROOT / "runner-image"
JAVA_SOURCES = Path(__file__).resolve().parent / "ycsb_java"
CACHE = Path(os.environ.get("TPCC_CACHE", Path.home() / ".cache" / "tpcc-operator")) / "ycsb-java"
TABLE = "usertable"
SECTIONS = ("queries", "getmore", "insert", "update", "remove", "commands")  # top's, one per kind of command
LABELS = {"queries": "find", "getmore": "getMore", "insert": "insert", "update": "update", "remove": "delete"}
TIMED = ("queries", "insert", "update")  # the server's time per command of these kinds
BATCH = 100  # records per load command


def _digest(*paths: Path) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def java_classpath() -> str:
    """YCSB's Java client with the vendored MongoDB binding: the classpath, built once."""
    for tool in ("mvn", "javac", "java"):
        if not shutil.which(tool):
            sys.exit(f"ycsb_commands: needs {tool} (Maven and a JDK 17: hack/voltdb.sh fetch installs them)")
    pom, sources = JAVA_SOURCES / "pom.xml", sorted((JAVA_SOURCES / "src").rglob("*.java"))
    lib, classes = CACHE / "lib", CACHE / "classes"
    lib_stamp, classes_stamp = CACHE / ".lib", CACHE / ".classes"
    if not lib_stamp.exists() or lib_stamp.read_text() != _digest(pom):
        shutil.rmtree(lib, ignore_errors=True)
        cmd = ["mvn", "-q", "-B", "-f", str(pom), "dependency:copy-dependencies", f"-DoutputDirectory={lib}"]
        subprocess.run(cmd, check=True)
        lib_stamp.write_text(_digest(pom))
    if not classes_stamp.exists() or classes_stamp.read_text() != _digest(pom, *sources):
        shutil.rmtree(classes, ignore_errors=True)
        subprocess.run(
            ["javac", "-nowarn", "-d", str(classes), "-cp", f"{lib}/*", *map(str, sources)],
            check=True,
            stderr=subprocess.DEVNULL,  # the binding's deprecated-API note
        )
        classes_stamp.write_text(_digest(pom, *sources))
    return f"{classes}:{lib}/*"


class Client:
    """One YCSB client: its command line for a load or run, and how to read what it did."""

    name: str

    def command(
        self, phase: str, endpoint: str, database: str, props: dict[str, str], results: Path
    ) -> tuple[list[str], dict]:
        """The command and its environment (results: where a client that writes a document puts it)."""
        raise NotImplementedError

    def operations(self, phase: str, out: str, results: Path) -> dict[str, int]:
        """Operations done, by YCSB's name (READ, UPDATE, ...), from what the client printed."""
        raise NotImplementedError


class JavaYCSB(Client):
    name = "YCSB 0.17.0 Java"

    def __init__(self, classpath: str) -> None:
        self.classpath = classpath

    def command(
        self, phase: str, endpoint: str, database: str, props: dict[str, str], results: Path
    ) -> tuple[list[str], dict]:
        url = f"mongodb://{endpoint}/{database}?w=1"
        settings = {
            "workload": "site.ycsb.workloads.CoreWorkload",
            **props,
            "mongodb.url": url,
            "mongodb.upsert": "false",
        }
        settings["threadcount"] = "1"
        cmd = ["java", "-cp", self.classpath, "site.ycsb.Client", "-load" if phase == "load" else "-t"]
        cmd += ["-db", "site.ycsb.db.MongoDbClient", *(x for k, v in settings.items() for x in ("-p", f"{k}={v}"))]
        return cmd, dict(os.environ)

    def operations(self, phase: str, out: str, results: Path) -> dict[str, int]:
        done: dict[str, int] = {}
        for m in re.finditer(r"^\[(\w+)\], Return=(?:OK|BATCHED_OK), (\d+)$", out, re.M):
            done[m[1]] = done.get(m[1], 0) + int(m[2])
        return done


class Ours(Client):
    name = "ours (tpcc ycsb)"

    def command(
        self, phase: str, endpoint: str, database: str, props: dict[str, str], results: Path
    ) -> tuple[list[str], dict]:
        args = ["ycsb", phase, "--db", "mongodb", "--endpoints", endpoint, "--metrics-port", "0", "--threads", "1"]
        args += ["--results", str(results)]
        args += ["--driver-opt", f"database={database}", "--driver-opt", "upsert=false"]
        args += [x for k, v in props.items() for x in ("-p", f"{k}={v}")]
        if phase == "run":
            args += ["--processes", "1"]
        return tpcc_command(RUNNER, *args)

    def operations(self, phase: str, out: str, results: Path) -> dict[str, int]:
        doc = json.loads(results.read_text())
        return {op: s["count"] for op, s in doc["status"]["operations"].items()}


def top(endpoint: str, namespace: str) -> dict[str, tuple[int, int]]:
    """The server's (count, microseconds) for each kind of command on one collection."""
    with pymongo.MongoClient(f"mongodb://{endpoint}/?directConnection=true") as c:
        entry = c.admin.command("top")["totals"].get(namespace, {})
    return {s: (entry.get(s, {}).get("count", 0), entry.get(s, {}).get("time", 0)) for s in SECTIONS}


def measured(client: Client, phase: str, endpoint: str, database: str, props: dict[str, str]) -> dict:
    """One load or run: the operations the client reports and what the server counted for them."""
    namespace = f"{database}.{TABLE}"
    before = top(endpoint, namespace)
    with tempfile.NamedTemporaryFile(suffix=".json") as results:
        cmd, env = client.command(phase, endpoint, database, props, Path(results.name))
        done = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"{client.name} {phase}: exit {done.returncode}: {(done.stderr or done.stdout).strip()[-2000:]}")
        ops = client.operations(phase, done.stdout, Path(results.name))
    after = top(endpoint, namespace)
    counts = {s: after[s][0] - before[s][0] for s in SECTIONS}
    micros = {s: after[s][1] - before[s][1] for s in SECTIONS}
    return {"client": client.name, "phase": phase, "operations": ops, "commands": counts, "server_us": micros}


def workload_props(workload: str, records: int, operations: int) -> dict[str, str]:
    """YCSB's core workload files' properties (workloads/workloada..f), as both clients take them."""
    from tpcc_contract.ycsb.properties import PRESETS

    return {**PRESETS[workload], "recordcount": str(records), "operationcount": str(operations)}


def row(workload: str, m: dict, ops: int) -> str:
    """One load or run, per operation asked for (YCSB counts a read-modify-write's read and update
    under READ and UPDATE too)."""
    kinds = " ".join(f"{k} {v}" for k, v in sorted(m["operations"].items()) if k not in ("CLEANUP", "INIT"))
    per = [f"{m['commands'][s] / ops:.3f}" if ops else "-" for s in SECTIONS]
    total = sum(m["commands"].values())
    each = [f"{m['server_us'][s] / m['commands'][s]:,.0f}" if m["commands"][s] else "-" for s in TIMED]
    cells = [f"{workload} {m['phase']}", m["client"], kinds, *per, f"{total / ops:.3f}" if ops else "-", *each]
    return "| " + " | ".join(cells) + " |"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=1000, help=f"per workload and client (a multiple of {BATCH})")
    ap.add_argument("--operations", type=int, default=1000, help="per workload and client")
    ap.add_argument("--workloads", default="a,b,c,d,e,f")
    a = ap.parse_args()
    if a.records % BATCH:
        sys.exit(f"--records: a multiple of {BATCH} (the binding does not write a last partial batch)")
    sys.path.insert(0, str(RUNNER / "contract"))
    clients = [JavaYCSB(java_classpath()), Ours()]
    work = Path(tempfile.mkdtemp(prefix="ycsb-commands-"))
    rows = []
    with servers.secantus(work) as server:
        for w in a.workloads.split(","):
            props = workload_props(w, a.records, a.operations)
            for n, client in enumerate(clients):
                database = f"ycsb_{w}_{n}"
                load = measured(client, "load", server.endpoint, database, {**props, "batchsize": str(BATCH)})
                run = measured(client, "run", server.endpoint, database, props)
                for m in (load, run):
                    print(json.dumps({"workload": w, **m}), flush=True)
                    rows.append(row(w, m, a.records if m["phase"] == "load" else a.operations))
        with pymongo.MongoClient(f"mongodb://{server.endpoint}/?directConnection=true") as c:
            version = c.admin.command("buildInfo").get("version", "unknown")
    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, commit {commit()}, {platform.machine()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}, pymongo {pymongo.version}, SecantusDB "
        f"(buildInfo version {version}); {a.records:,} records, {a.operations:,} operations, one client thread"
    )
    head = " | ".join(f"{LABELS.get(s, 'other')}/op" for s in SECTIONS)
    timed = " | ".join(f"server us/{LABELS[s]}" for s in TIMED)
    print(f"| workload | client | operations | {head} | commands/op | {timed} |")
    print("|---" * (4 + len(SECTIONS) + len(TIMED)) + "|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
