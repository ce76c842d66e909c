"""`tpcc ycsb load|run|verify`: YCSB's CoreWorkload against the runner's databases.

    tpcc ycsb load --db mongodb --endpoints H:P --workload a -p recordcount=100000 --threads 4
    tpcc ycsb run  --db mongodb --endpoints H:P --workload a -p operationcount=0 --duration 60 \
                   --target 5000 --results out.json --ledger run.log
    tpcc ycsb verify --db mongodb --endpoints H:P --workload a -p recordcount=100000 --ledger run.log

load and run print YCSB's own text output on stdout ([OVERALL] RunTime(ms), Throughput(ops/sec),
per operation Operations, AverageLatency(us), MinLatency(us), MaxLatency(us),
50th/95th/99thPercentileLatency(us), Return=STATUS counts) and write the same numbers, with the
HdrHistograms, a summary for a BenchmarkRun's status, the properties and the store's settings, as
JSON to --results. Properties come from
the preset (--workload), then a YCSB property file (-P), then -p name=value, then --threads,
--target and --duration (YCSB's threadcount, target and maxexecutiontime); a run ends when
operationcount operations are done or maxexecutiontime has passed, whichever is first.
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import platform
import random
import sys
import threading
import time
from typing import Any

from tpcc_contract.ycsb.properties import PRESETS, Properties, PropertyError, resolve

from .. import __version__, k8s
from ..drivers.base import ConnectionOptions, NotLoaded, bounded
from ..ledger import LedgerWriter, ended_when_released, hold_ledger, ledger_lines
from ..redact import redact
from ..usage import UsageError, connection_options, parse_time, positive, shard, share_of
from .executor import Outcome, Plan
from .ledger import parse_ledgers, verify
from .measurements import live_counts, overall, status_summary, ycsb_text
from .pool import execute_plan
from .store import KeyValueStore, make_store, store_class, store_module
from .timeseries import TimeSeriesWorkload, workload_for
from .workload import CoreWorkload

log = logging.getLogger("tpcc.ycsb")
# Longest wait for a run's first count before saying `measuring` anyway: client processes
# report every pool.LIVE_SECONDS, the first time possibly before their first operation.
FIRST_COUNT_SECONDS = 5.0


def _property(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return name.strip(), value


def add_parser(sub, common: argparse.ArgumentParser) -> None:
    workload = argparse.ArgumentParser(add_help=False)
    g = workload.add_argument_group("workload")
    g.add_argument(
        "--workload",
        choices=sorted(PRESETS),
        default=None,
        help="YCSB's workload preset (workloads/workloada..f, tsa: tsworkloada); default CoreWorkload's defaults",
    )
    g.add_argument("-P", dest="property_file", metavar="FILE", default=None, help="a YCSB property file")
    g.add_argument(
        "-p",
        dest="properties",
        type=_property,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a workload property, repeatable (e.g. recordcount=100000, requestdistribution=uniform, "
        "workload=site.ycsb.workloads.TimeSeriesWorkload)",
    )
    g.add_argument("--seed", type=int, default=None, help="fixes every thread's draws (default: random)")
    yc = sub.add_parser("ycsb", help="YCSB's CoreWorkload (workloads A-F) and TimeSeriesWorkload: load, run, verify")
    phases = yc.add_subparsers(dest="phase", required=True)
    for phase, text in (("load", "insert the records (YCSB's -load)"), ("run", "run the operations (YCSB's -t)")):
        ph = phases.add_parser(phase, parents=[common, workload], help=text)
        ph.add_argument("--threads", type=int, default=None, help="client threads (YCSB's threadcount)")
        ph.add_argument(
            "--processes",
            type=positive(int),
            default=None,
            help="client processes the threads are split over (default: 1 where VoltDB's compiled loop runs "
            "them, else min(threads, CPUs this process may use))",
        )
        ph.add_argument("--target", type=float, default=None, help="operations per second, all threads (0: no limit)")
        ph.add_argument("--duration", type=float, default=None, metavar="SECONDS", help="YCSB's maxexecutiontime")
        ph.add_argument("--results", default=None, metavar="FILE", help="write the JSON results here")
        ph.add_argument("--ledger", default=None, metavar="FILE", help="append every acknowledged write here")
        if phase == "load":
            ph.add_argument("--reset", action="store_true", help="drop the table's records first")
            ph.add_argument(
                "--results-configmap",
                default=None,
                metavar="NAMESPACE/NAME",
                help="write load.json (records as rows, seconds, rows/s) into this existing ConfigMap",
            )
        else:
            _add_pod_arguments(ph)
    vf = phases.add_parser(
        "verify",
        parents=[common, workload],
        help="every acknowledged write of the ledgers is there; the record count adds up",
    )
    vf.add_argument(
        "--ledger",
        required=True,
        action="append",
        metavar="FILE|URL",
        help="a ledger of tpcc ycsb load or run (a file, or the http URL of a runner pod "
        "holding one), repeatable (all of them since the load)",
    )
    vf.add_argument(
        "--fetch-timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="give up reading a ledger URL after this long (default 60)",
    )
    vf.add_argument(
        "--results-configmap",
        default=None,
        metavar="NAMESPACE/NAME",
        help="write the verdict as durability.json into this existing ConfigMap",
    )


def _add_pod_arguments(ph: argparse.ArgumentParser) -> None:
    """What a runner pod of the operator is given: its shard, the barrier, its results ConfigMap."""
    ph.add_argument(
        "--shard",
        type=shard,
        default=(0, 1),
        metavar="I/N",
        help="runner I of N: its draws are seeded apart (seed + I) and its inserts take "
        "keynums recordcount + I + k*N (a slice of its own)",
    )
    ph.add_argument(
        "--total-threads",
        type=positive(int),
        default=None,
        metavar="N",
        help="client threads of all --shard runners together: this one runs its share (N // COUNT, one "
        "more for the first N %% COUNT; not --threads)",
    )
    ph.add_argument(
        "--start-configmap",
        default=None,
        metavar="NAMESPACE/NAME",
        help="once every thread is connected, wait for key startAt in this ConfigMap and start then",
    )
    ph.add_argument(
        "--start-timeout",
        type=float,
        default=900.0,
        metavar="SECONDS",
        help="how long to wait for startAt (default 900)",
    )
    ph.add_argument(
        "--results-configmap",
        default=None,
        metavar="NAMESPACE/NAME",
        help="write the JSON results as results.json into this existing ConfigMap",
    )
    ph.add_argument(
        "--hold-ledger",
        default=None,
        metavar="NAMESPACE/NAME",
        help="after the results, serve --ledger over HTTP on --ledger-port until key "
        "ledgersVerified appears in this ConfigMap (the operator's verifier reads them); if it "
        "appears while the run measures, the operator has ended the run: stop and exit 0",
    )
    ph.add_argument("--ledger-port", type=int, default=9101)
    ph.add_argument("--hold-timeout", type=float, default=1800.0, metavar="SECONDS")


def properties_of(args) -> Properties:
    given: dict[str, str] = {}
    if args.property_file:
        with open(args.property_file) as f:
            for line in f:
                if line.strip() and not line.lstrip().startswith("#"):
                    name, _, value = line.partition("=")
                    given[name.strip()] = value.strip()
    given.update(dict(args.properties))
    # the flags are YCSB properties given last, checked with the others (operationcount=0 needs
    # maxexecutiontime, which --duration gives)
    for name, flag in (("threadcount", "threads"), ("target", "target"), ("maxexecutiontime", "duration")):
        if getattr(args, flag, None) is not None:
            given[name] = str(getattr(args, flag))
    if getattr(args, "total_threads", None) is not None:
        if args.threads is not None:
            raise UsageError("give --threads (this runner's) or --total-threads (all runners'), not both")
        given["threadcount"] = str(share_of(args.total_threads, args.shard, "--total-threads"))
    props = resolve(args.workload, given)
    if getattr(args, "total_threads", None) and props.timeseries and args.total_threads % args.shard[1]:
        # each pod's threads take series keys by the pod's number times its thread count
        raise UsageError(
            f"--total-threads {args.total_threads} is not a multiple of the {args.shard[1]} runners: "
            "TimeSeriesWorkload gives every runner the same number of threads"
        )
    return props


def connected_store(db: str, options: ConnectionOptions, props: Properties) -> KeyValueStore:

    store = make_store(db, options, props)
    with bounded(options.connect_timeout + 5, f"connecting to {db}"):
        store.connect()
    return store


def require_loaded(store: KeyValueStore, workload: CoreWorkload | TimeSeriesWorkload) -> None:
    """A run against an empty table would only count NOT_FOUND: refuse it, naming the key."""
    key = workload.first_key()
    if store.read(key, None) is None:
        raise NotLoaded(
            f"ycsb: no record {key} in table {workload.props.table}: run `tpcc ycsb load` "
            "with the same properties first"
        )


def refuse_more_threads_than_series(props: Properties, shard: tuple[int, int]) -> None:
    """TimeSeriesWorkload gives each client thread of every runner pod its own series keys: asked
    for the last thread's, it refuses more threads than keys (CoreWorkload has no such bound)."""
    try:
        workload_for(props, shard).for_thread(props.threadcount - 1, props.threadcount)
    except PropertyError as e:
        raise UsageError(str(e)) from None


def cmd_ycsb(args, metrics) -> int:

    try:
        props = properties_of(args)
    except PropertyError as e:
        raise UsageError(str(e)) from None
    options = connection_options(args)
    if args.phase == "verify":
        return _verify(args, options, props)
    if getattr(args, "hold_ledger", None) and not args.ledger:
        raise UsageError("--hold-ledger needs --ledger FILE")
    shard = getattr(args, "shard", (0, 1))
    refuse_more_threads_than_series(props, shard)
    store = connected_store(args.db, options, props)
    try:
        if args.phase == "load":
            store.create_schema(args.reset)
        else:
            require_loaded(store, workload_for(props))
    finally:
        store.close()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    # a run connects, then waits at the barrier: measuring from the first operation on (the
    # stall alert reads a runner measuring without successful operations as stalled)
    metrics.set_phase("loading" if args.phase == "load" else "connecting")
    ledger = LedgerWriter(args.ledger) if args.ledger else None
    plan = Plan(
        functools.partial(connected_store, args.db, options, props),
        props,
        args.phase,
        seed + shard[0],
        shard,
        processes=min(props.threadcount, args.processes or store_class(args.db).client_processes(props, args.phase)),
        preload=(__name__, store_module(args.db)),
    )
    window: dict[str, float] = {}
    try:
        with ended_when_released(getattr(args, "hold_ledger", None)):
            outcome = execute_plan(plan, ledger.write if ledger else None, _at_barrier(args, metrics, window))
    finally:
        if ledger:
            ledger.close()
    print(ycsb_text(outcome.operations, outcome.runtime_ms, outcome.measurements), flush=True)
    doc = results_document(args, props, seed, options, outcome)
    if args.phase == "run":
        start = window.get("start", time.time())
        doc.update(
            kind="ycsb",
            shard=f"{shard[0]}/{shard[1]}",
            threads=props.threadcount,
            processes=plan.processes,
            window={"start": start, "end": start + outcome.runtime_ms / 1000},
        )
    _write_results(args, doc, outcome)
    metrics.set_phase("done")
    code = _exit_status(args.phase, outcome)
    if getattr(args, "hold_ledger", None):
        hold_ledger(args.ledger, args.ledger_port, args.hold_ledger, args.hold_timeout)
    return code


def _at_barrier(args, metrics, window: dict[str, float]):
    """execute's on_connected: /ready and the operation counters, as tpcc run's; then the
    barrier (startAt in the start ConfigMap); window["start"] when operations begin."""

    def connected(counts) -> None:
        metrics.ycsb.source = counts
        metrics.ready.set()
        if getattr(args, "start_configmap", None):
            metrics.set_phase("waiting")
            start_at = parse_time(k8s.wait_for_key(args.start_configmap, "startAt", args.start_timeout))
            time.sleep(max(0.0, start_at - time.time()))
        if args.phase == "run":
            threading.Thread(target=_measuring_once_counted, args=(metrics, counts), daemon=True).start()
        window["start"] = time.time()

    return connected


def _measuring_once_counted(metrics, counts) -> None:
    """Say `measuring` once the first operation's count can reach /metrics, or after
    FIRST_COUNT_SECONDS if none does. The runner-stalled rule reads a runner measuring without
    successful operations as stalled, and client processes report their counts a poll after
    they start (CI15 saw the rule's expression true for that moment); a database that answers
    nothing must still show as measuring, and so stall."""
    deadline = time.monotonic() + FIRST_COUNT_SECONDS
    while not live_counts(counts()) and time.monotonic() < deadline:
        time.sleep(0.01)
    metrics.set_phase("measuring", only_from=("connecting", "waiting"))


def _write_results(args, doc: dict[str, Any], outcome: Outcome) -> None:
    """The results document to --results and --results-configmap (a load's summary as
    load.json), redacted; a one-line summary to the log."""
    text = redact(json.dumps(doc, indent=2))
    if args.results:
        with open(args.results, "w") as f:
            f.write(text + "\n")
    if getattr(args, "results_configmap", None):
        if args.phase == "load":
            k8s.write_configmap_key(args.results_configmap, "load.json", json.dumps(load_summary(outcome)))
        else:
            k8s.write_configmap_key(args.results_configmap, "results.json", text)
    log.info(
        "ycsb %s: %d operations in %.1f s, %.1f ops/sec, %d errors",
        args.phase,
        outcome.operations,
        outcome.runtime_ms / 1000,
        doc["OVERALL"]["Throughput(ops/sec)"],
        outcome.error_count,
    )


def load_summary(outcome: Outcome) -> dict[str, Any]:
    """What the operator puts in status.load, in the shape of `tpcc load`'s load.json."""
    seconds = outcome.runtime_ms / 1000
    inserted = outcome.operations - outcome.error_count
    return {"rows": inserted, "seconds": round(seconds, 1), "rows_per_second": round(inserted / max(seconds, 1e-9), 1)}


def _exit_status(phase: str, outcome: Outcome) -> int:
    """A load that lost a batch is incomplete (the run's reads would miss records): a failure.
    A run's errors are results, as in YCSB, unless nothing succeeded (the database went away).
    A client thread that stopped the run on a bug fails it."""
    if outcome.aborted:
        print(f"tpcc ycsb {phase}: error: {redact(outcome.aborted)}", file=sys.stderr)
        return 1
    if outcome.error_count and (phase == "load" or outcome.error_count >= outcome.operations):
        print(
            f"tpcc ycsb {phase}: error: {outcome.error_count} failed; first: {redact(outcome.errors[0])}",
            file=sys.stderr,
        )
        return 1
    return 0


def results_document(
    args, props: Properties, seed: int, options: ConnectionOptions, outcome: Outcome
) -> dict[str, Any]:
    """YCSB's numbers under YCSB's names, the HdrHistograms to merge runners exactly, the few
    numbers for a BenchmarkRun's status (`status`), and what shaped the run."""
    return {
        "command": f"ycsb {args.phase}",
        "db": args.db,
        "workload": args.workload,
        "seed": seed,
        "properties": props.to_ycsb(),
        "driver_options": options.extra,
        "driver": outcome.described,
        "OVERALL": overall(outcome.operations, outcome.runtime_ms),
        "operations": outcome.measurements.to_json(),
        "status": status_summary(outcome.operations, outcome.runtime_ms, outcome.measurements),
        "errors": outcome.error_count,
        "error_examples": outcome.errors,
        "versions": {"runner": __version__, "python": platform.python_version()},
    }


def _verify(args, options, props: Properties) -> int:
    sources = {source: list(ledger_lines(source, args.fetch_timeout)) for source in args.ledger}
    writes = parse_ledgers(sources)
    loaded: set[str] = set()  # a time series load writes its keys as updates (U lines)
    if not props.timeseries:
        workload = CoreWorkload(props)
        loaded = {workload.key_name(n) for n in range(props.insertstart, props.insertstart + props.records_to_load)}
    store = connected_store(args.db, options, props)
    try:
        verdict = verify(store, writes, loaded, props.fieldcount, props.fieldcount if props.timeseries else None)
    finally:
        store.close()
    verdict["ledgers"] = len(sources)
    text = json.dumps(verdict, indent=2)
    print(text)
    if args.results_configmap:
        k8s.write_configmap_key(args.results_configmap, "durability.json", text)
    for example in verdict["lost_examples"]:
        log.error("ycsb verify: lost %s", example)
    return 0 if verdict["durable"] else 1
