"""The four studies' manifests (crds/samples/papers/<study>/*.yaml), as hack/papers.sh runs them:
each is dry-run by the API server as written; those that can run on this cluster are applied
(scaled with --scaled: seconds instead of minutes, 1 warehouse, SecantusDB for MongoDB) and
followed to the end; one line per manifest, printed as it ends, gives its figure, the paper's
number and ours.

A manifest names what it reproduces in annotations: bench.tpcc.dev/paper (the study),
bench.tpcc.dev/figure (its figure or table), bench.tpcc.dev/paper-result (the paper's number,
with where it is printed) and bench.tpcc.dev/paper-values (those numbers as data, point by point:
tpcc_runner.paper_values). Each manifest's line lists, per printed value, the paper's, ours at the
same point and ours over the paper's. A run shrunk with --scaled is marked so
(bench.tpcc.dev/scaled), for `tpcc report` too: its ratios compare nothing. The deciding parts
(scaled, not_runnable, ours, beside_paper) are pure.

    python hack/k8s/papers.py [--scaled] [--namespace NS] [--timeout S] [--only-dry-run] [STUDY ...]
"""

from __future__ import annotations

import argparse
import copy
import json
import subprocess
import sys
import time
from pathlib import Path

import yaml
from tpcc_runner import paper_values

ROOT = Path(__file__).resolve().parents[2]
PAPERS = ROOT / "crds" / "samples" / "papers"
ANNOTATION = "bench.tpcc.dev/"
SCALED_SECONDS, SCALED_WARMUP = 30, 5
SCALED_RECORDS = 2000


def manifests(studies: list[str]) -> list[tuple[str, dict]]:
    """(where, manifest) of every BenchmarkRun of the studies (all when none named); a file
    may hold several (where: path#name)."""
    dirs = [PAPERS / s for s in studies] if studies else sorted(p for p in PAPERS.iterdir() if p.is_dir())
    missing = [str(d) for d in dirs if not d.is_dir()]
    if missing:
        sys.exit(
            f"papers: no such study: {', '.join(missing)} (studies: "
            f"{', '.join(p.name for p in sorted(PAPERS.iterdir()) if p.is_dir())})"
        )
    out = []
    for path in (f for d in dirs for f in sorted(d.glob("*.yaml"))):
        docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
        where = str(path.relative_to(ROOT))
        out += [(where if len(docs) == 1 else f"{where}#{d['metadata']['name']}", d) for d in docs]
    return out


def cells(spec: dict) -> int:
    """How many runs a manifest makes at most: its sweep's cells (a saturation search counts its
    ladder's steps, once per matrix combination; a paired axis adds no combinations), or one."""
    sweep = spec.get("sweep") or {}
    search = sweep.get("saturation")
    n = len(sweep.get("warehouses", [1])) * sweep.get("repetitions", 1)
    n *= _steps(search) if search else len(sweep.get("clients", [1]))
    for axis in sweep.get("matrix", []):
        n *= 1 if axis.get("pairedWith") else len(axis["values"])
    return n


def _steps(search: dict) -> int:
    """The client counts a saturation search's ladder holds (start, then + step or x factor, up to max)."""
    count, clients = 0, search["startClients"]
    while clients <= search["maxClients"]:
        count += 1
        clients = clients + search["step"] if "step" in search else clients * search["factor"]
    return count


def smallest_of_each_study() -> list[tuple[str, dict]]:
    """One manifest per study, what CI runs: the one that runs here with the fewest cells when
    scaled, else its first (dry run only)."""
    picks = []
    for study in sorted(p.name for p in PAPERS.iterdir() if p.is_dir()):
        found = manifests([study])
        runnable = [(w, m) for w, m in found if not not_runnable(m["spec"])]
        picks.append(min(runnable, key=lambda wm: cells(scaled(wm[1])[0]["spec"])) if runnable else found[0])
    return picks


def not_runnable(spec: dict) -> str | None:
    """Why a manifest cannot run on this machine's cluster (None: it can, scaled if need be)."""
    db = spec["database"]
    if db["type"] == "foundationdb":
        return "no FoundationDB server here (docs/foundationdb.md)"
    if "external" in db:
        return "an external database"
    values = (db.get("deploy") or {}).get("values") or {}
    if db["type"] == "mongodb" and values.get("topology") == "sharded":
        return "a sharded MongoDB needs mongod (not installable here; SecantusDB is one node)"
    return None


def _scaled_list(values: list[int], to: list[int]) -> list[int]:
    return to[: max(1, min(len(values), len(to)))]


def _scaled_axis_value(field: str, value: str, test_server: bool) -> str | None:
    """An axis value shrunk to one small node (None: the axis goes). The MongoDB test server is
    one node of one shape: every database.deploy axis goes (replicas, shards, resources). VoltDB:
    one host, k=0, at most 2 sites a host, the chart's resources (the studies' instance sizes do
    not fit a 2-core node), so the price of an instance type (cost.pricePerHour) goes too."""
    if field.startswith("database.deploy.") and test_server:
        return None
    if field.startswith("database.deploy.values.resources.") or field == "cost.pricePerHour":
        return None
    shrink = {
        "database.deploy.replicas": lambda v: "1",
        "database.deploy.kSafety": lambda v: "0",
        "database.deploy.values.sitesPerHost": lambda v: str(min(int(v), 2)),
        "database.deploy.values.sharded.shards": lambda v: str(min(int(v), 2)),
    }.get(field)
    return shrink(value) if shrink else value


def _scaled_matrix(matrix: list[dict], test_server: bool, notes: list[str]) -> list[dict]:
    """sweep.matrix shrunk axis group by axis group (an axis and those paired with it, taken as rows
    of values): each value shrunk, the rows that became equal merged, a field left with one value
    in several rows (or none) dropped, the first field left the one the others pair with."""
    out = []
    for first in (a for a in matrix if not a.get("pairedWith")):
        group = [first, *(a for a in matrix if a.get("pairedWith") == first["field"])]
        kept = [a["field"] for a in group if _scaled_axis_value(a["field"], a["values"][0], test_server) is not None]
        rows = []
        for row in zip(*(a["values"] for a in group)):
            small = tuple(_scaled_axis_value(a["field"], v, test_server) for a, v in zip(group, row))
            small = tuple(v for v in small if v is not None)
            if small not in rows:
                rows.append(small)
        columns = {f: [r[i] for r in rows] for i, f in enumerate(kept)}
        # a paired field whose values now repeat (sitesPerHost 2, 2 beside distinct others) cannot stay
        columns = {f: v for f, v in columns.items() if len(set(v)) == len(v)}
        if rows and not columns and kept:  # every field constant over several rows: keep the first, once
            columns = {kept[0]: [rows[0][0]]}
        axes = [
            {"field": f, "values": v, **({"pairedWith": next(iter(columns))} if f != next(iter(columns)) else {})}
            for f, v in columns.items()
        ]
        before = " + ".join(f"{a['field']} {a['values']}" for a in group)
        after = " + ".join(f"{a['field']} {a['values']}" for a in axes) or "dropped"
        if before != after:
            notes.append(f"sweep.matrix {before} -> {after}")
        out += axes
    return out


def scaled(manifest: dict) -> tuple[dict, list[str]]:
    """The manifest shrunk to run in a minute or two on a 2-core machine, and what was changed."""
    out = copy.deepcopy(manifest)
    spec, notes = out["spec"], []
    workload = spec.setdefault("workload", {})
    runners = spec.setdefault("runners", {})
    if workload.get("durationSeconds", 0) > SCALED_SECONDS:
        notes.append(f"{workload['durationSeconds']} s measured -> {SCALED_SECONDS} s")
        workload["durationSeconds"], workload["warmupSeconds"] = SCALED_SECONDS, SCALED_WARMUP
    if workload.get("warehouses", 1) > 1:
        notes.append(f"{workload['warehouses']} warehouses -> 1")
        workload["warehouses"] = 1
    if runners.get("parallelism", 1) > 1:
        notes.append(f"{runners['parallelism']} runner pods -> 1")
        runners["parallelism"] = 1
    if workload.get("clients", 0) > 4:
        notes.append(f"{workload['clients']} clients -> 4")
        workload["clients"] = 4
    workload["loadWorkers"] = min(workload.get("loadWorkers", 2), 2)
    ycsb = workload.get("ycsb") or {}
    if ycsb.get("recordCount", 0) > SCALED_RECORDS:
        notes.append(f"{ycsb['recordCount']} records -> {SCALED_RECORDS}")
        ycsb["recordCount"] = SCALED_RECORDS
    sweep = spec.get("sweep")
    if sweep:
        for key, to in (("warehouses", [1]), ("clients", [2, 4])):
            if key in sweep and sweep[key] != _scaled_list(sweep[key], to):
                notes.append(f"sweep.{key} {sweep[key]} -> {_scaled_list(sweep[key], to)}")
                sweep[key] = _scaled_list(sweep[key], to)
        search = sweep.get("saturation")
        if search and (search.get("maxClients", 0) > 4 or search.get("startClients", 0) > 2):
            small = {"startClients": 2, "step": 2, "maxClients": 4}
            notes.append(f"sweep.saturation clients {search['startClients']}..{search['maxClients']} -> 2..4")
            search.pop("factor", None)
            search.update(small)
        if sweep.get("repetitions", 1) > 1:
            notes.append(f"sweep.repetitions {sweep['repetitions']} -> 1")
            sweep["repetitions"] = 1
        if sweep.get("matrix"):
            test_server = spec["database"]["type"] == "mongodb" and "deploy" in spec["database"]
            sweep["matrix"] = _scaled_matrix(sweep["matrix"], test_server, notes)
            if not sweep["matrix"]:
                del sweep["matrix"]
    db = spec["database"]
    if db["type"] == "mongodb" and "deploy" in db:
        notes.append("mongod replica set -> SecantusDB, one member (no mongod here)")
        db["deploy"] = {"replicas": 1, "values": {"testServer": {"enabled": True}}}
        # Its multi-document transactions abort whenever they overlap a write of another: a 4 s
        # Delivery there meets nearly every Payment, and 2 of 8 gave up in a CI run. The errors stay
        # in status; the consistency and durability verdicts still judge the run.
        notes.append(
            f"workload.maxErrorPercent {workload.get('maxErrorPercent', 10)} -> 100 (error budget off: the "
            "one-node test server aborts overlapping transactions; the errors are reported, not judged)"
        )
        workload["maxErrorPercent"] = 100
        if workload.get("kind", "tpcc") == "tpcc" and workload.get("scaleDown", 1) < 10:
            # its load of one full warehouse took 3.5 min of a 6.5 min CI case
            notes.append(
                f"workload.scaleDown {workload.get('scaleDown', 1)} -> 10 (10,000 items, 300 customers a "
                "district: the test server loads slowly)"
            )
            workload["scaleDown"] = 10
        if spec.pop("faults", None):
            notes.append("faults dropped (one member has no failover)")
    deploy = db.get("deploy") or {}
    if db["type"] == "voltdb" and deploy.get("replicas", 1) > 1 and not spec.get("faults"):
        notes.append(f"{deploy['replicas']} VoltDB hosts, k={deploy.get('kSafety', 0)} -> 1 host, k=0")
        deploy["replicas"], deploy["kSafety"] = 1, 0
    if db["type"] == "voltdb" and not spec.get("faults") and deploy.get("kSafety", 0) > 0:
        notes.append(f"VoltDB k={deploy['kSafety']} -> k=0 (one host)")
        deploy["kSafety"] = 0
    values = deploy.get("values") or {}
    if db["type"] == "voltdb" and "resources" in values:
        # the studies' instance sizes (4-8 CPUs, 7.5-32 GiB a host) do not fit this machine's node
        notes.append("VoltDB resources (the study's instance size) -> the chart's defaults")
        values.pop("resources")
    if db["type"] == "voltdb" and _uses_d_id(spec):
        # its multi-partition district loads and consistency read peaked at 2,220 MiB for one
        # warehouse (docs/papers.md): the chart's 2Gi limit would OOM-kill it in the load
        notes.append("VoltDB memory limit -> 3Gi (the d_id layout at one warehouse)")
        values.setdefault("resources", {}).setdefault("limits", {})["memory"] = "3Gi"
        deploy["values"] = values
    if db["type"] == "voltdb" and values.get("sitesPerHost", 2) > 2:
        notes.append(f"VoltDB sitesPerHost {values['sitesPerHost']} -> 2 (the chart's default)")
        values["sitesPerHost"] = 2
    return out, notes


def _uses_d_id(spec: dict) -> bool:
    """Whether a run loads the VoltDB study's D_ID layout, as its option or a sweep axis's value."""
    option = "workload.driverOptions.partitioning"
    axes = ((spec.get("sweep") or {}).get("matrix")) or []
    values = [v for a in axes if a["field"] == option for v in a["values"]]
    return "d_id" in [*values, ((spec.get("workload") or {}).get("driverOptions") or {}).get("partitioning")]


def ours(status: dict) -> str:
    """Our headline figure from a finished run's status: the sweep's per-configuration medians,
    else the run's throughput."""
    configurations = ((status.get("sweep") or {}).get("configurations")) or []
    if configurations:
        return "; ".join(_configuration(c) for c in configurations)
    ycsb, results = status.get("ycsb") or {}, status.get("results") or {}
    if ycsb.get("opsPerSecond") is not None:
        return f"{ycsb['opsPerSecond']:,.0f} ops/s"
    if results.get("tpmC") is not None:
        return f"{results['tpmC']:,.0f} tpmC"
    return f"no result ({status.get('reason', '?')}: {status.get('message', '')[:120]})"


def _configuration(c: dict) -> str:
    """One configuration of status.sweep.configurations: its keys, then its median throughput
    (tpmC, or a YCSB sweep's ops/s; and that per price per hour where it has a price)."""
    metrics = {"tpmC": "tpmC", "opsPerSecond": "ops/s"}
    where = ", ".join(f"{k} {v}" for k, v in c.items() if k not in (*metrics, "throughputPerPricePerHour"))
    key = next((k for k in metrics if "median" in (c.get(k) or {})), None)
    if key is None:
        return f"{where}: ?"
    stats, unit = c[key], metrics[key]
    per_price = c.get("throughputPerPricePerHour")
    return (
        f"{where}: median {stats['median']:,.0f} {unit}"
        + (f" (n={stats['n']})" if "n" in stats else "")
        + (f", {per_price:,.0f} {unit} per price per hour" if per_price is not None else "")
    )


def marked_scaled(manifest: dict, notes: list[str]) -> dict:
    """The manifest with what --scaled changed in its bench.tpcc.dev/scaled annotation (as is
    when nothing was), so that `tpcc report` knows its numbers are not the study's scale."""
    if not notes:
        return manifest
    out = copy.deepcopy(manifest)
    out["metadata"].setdefault("annotations", {})[paper_values.SCALED] = "; ".join(notes)
    return out


def beside_paper(manifest: dict, status: dict | None, scaled_notes: list[str]) -> list[dict]:
    """Per value the study prints for the manifest (bench.tpcc.dev/paper-values): the point, the
    paper's value as printed, ours at that point (status None: not run) and ours over the paper's,
    said to compare nothing when the run was scaled."""
    figure = paper_values.figure_of(manifest["metadata"])
    if figure is None:
        return []
    measured = paper_values.measured(manifest["spec"], status) if status is not None else []
    rows = []
    for c in paper_values.compare(figure.values, measured):
        unit = paper_values.METRICS[c.value.metric]
        row = {
            "point": c.value.label(),
            "paper": f"{c.value.printed}{' in' if c.value.change else ''} {unit} ({c.value.where})",
            "ours": c.ours_text() if status is not None else "not run",
        }
        if c.configuration and c.configuration != c.value.label():
            row["ours"] += f" at {c.configuration}"
        if c.ratio is not None:
            row["ratio"] = f"{c.ratio:.3g}" + (" (scaled run: not comparable with the study's)" if scaled_notes else "")
        rows.append(row)
    return rows


def kubectl(*args: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["kubectl", *args], input=stdin, capture_output=True, text=True, check=check)


def dry_run(manifest: dict, namespace: str) -> str | None:
    out = kubectl("apply", "--dry-run=server", "-n", namespace, "-f", "-", stdin=json.dumps(manifest), check=False)
    return None if out.returncode == 0 else out.stderr.strip()


def follow(manifest: dict, namespace: str, timeout: float) -> dict:
    name = manifest["metadata"]["name"]
    kubectl("delete", "benchmarkrun", name, "-n", namespace, "--ignore-not-found", "--timeout=120s")
    kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(manifest))
    deadline, last = time.time() + timeout, None
    while time.time() < deadline:
        run = json.loads(kubectl("get", "benchmarkrun", name, "-n", namespace, "-o", "json").stdout)
        status = run.get("status") or {}
        line = f"{status.get('phase')}: {status.get('message', '')}"
        if line != last:
            print(f"[papers] {name}: {line}", file=sys.stderr, flush=True)
            last = line
        if status.get("phase") in ("Succeeded", "Failed"):
            return status
        time.sleep(5)
    return {"phase": "Timeout", "reason": "Timeout", "message": f"not finished after {timeout:.0f} s"}


def annotation(manifest: dict, key: str) -> str:
    return ((manifest.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION + key, "")


def emit(row: dict) -> None:
    """One manifest's line, printed as soon as it is known: a run of hours that is interrupted
    keeps every line it finished."""
    print(json.dumps(row, ensure_ascii=False), flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("studies", nargs="*")
    ap.add_argument("--scaled", action="store_true")
    ap.add_argument("--only-dry-run", action="store_true")
    ap.add_argument("--namespace", default="tpcc-papers")
    ap.add_argument("--timeout", type=float, default=3600, help="per manifest, seconds")
    a = ap.parse_args()
    failed = 0
    for where, manifest in manifests(a.studies):
        refused = dry_run(manifest, a.namespace)
        row = {
            "manifest": where,
            "figure": annotation(manifest, "figure"),
            "paper": annotation(manifest, "paper-result") or "-",
        }
        reason = "refused by the API server: " + refused if refused else not_runnable(manifest["spec"])
        if reason or a.only_dry_run:
            failed += bool(refused)
            ours_text = f"not run here: {reason}" if reason else "dry run only"
            emit({**row, "ours": ours_text, "values": beside_paper(manifest, None, [])})
            continue
        run, notes = scaled(manifest) if a.scaled else (manifest, [])
        status = follow(marked_scaled(run, notes), a.namespace, a.timeout)
        failed += status.get("phase") != "Succeeded"
        emit(
            {
                **row,
                "ours": f"{status.get('phase')}: {ours(status)}",
                "scaled": "; ".join(notes),
                "values": beside_paper(run, status, notes),
            }
        )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
