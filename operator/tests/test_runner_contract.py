"""One contract between the operator and the runner, held in both directions: every command line the
operator writes into a Job (load, run, verify, check, during-run check, ACID tests, change points;
TPC-C and YCSB) is a typed command of tpcc_contract.commands, and the runner's own parser
(tpcc_runner.cli.build_parser) parses its line back into the command's fields: each field is an
option of the command under the same name (its dest) and parses back to the field's value; and every
option the runner offers for a command the operator uses is either a field of the operator's command
(written for some spec below) or named in LEFT_TO_THE_RUNNER with why. A flag renamed on one side,
or added to the runner without the operator deciding about it, fails here."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import pytest
from tpcc_contract.commands import RunnerCommand
from tpcc_operator import plan, runner_jobs, workloads
from tpcc_operator.runspec import RunSpec
from tpcc_runner.cli import build_parser

RUN = plan.Run("bench", "perf", "uid-7", 3)
SETTINGS = plan.Settings(charts_dir=Path(__file__).resolve().parents[2] / "charts")
POD_IPS = {0: "10.0.0.5", 1: "10.0.0.6"}

# Options of the runner's commands the operator never writes: the runner's default is the one a
# benchmark on Kubernetes wants, or the option serves a use outside a Job.
LEFT_TO_THE_RUNNER: dict[str, dict[str, str]] = {
    "common": {"verbose": "debug logging is for a user's own shell"},
    "load": {
        "items": "clause 4.3.3.1's 100,000 items, divided by workload.scaleDown (--scale-down)",
        "customers_per_district": "clause 4.3.3.1's 3,000, divided by workload.scaleDown (--scale-down)",
    },
    "run": {
        "clients": "each pod is told --total-clients and takes its share",
        "processes": "the runner's default spreads terminals over the pod's CPUs",
        "max_retries": "py-tpcc's retry rule as the runner states it",
        "start_at": "a Job is released by the start ConfigMap (--start-configmap), not a fixed time",
        "start_file": "ditto: a file barrier is for runs outside Kubernetes",
        "start_timeout": "the operator fails the run itself after runners.readyTimeoutSeconds",
        "results": "results go into the pod's results ConfigMap (--results-configmap)",
        "verify_ledger": "the verifier Job reads every pod's ledger together, after the faults",
        "check": "the checker Job runs the 12 conditions after the durability verdict",
    },
    "check": {},
    "verify-ledger": {"fetch_timeout": "the runner's default; the Job's deadline bounds the whole"},
    "acid": {"results": "acid.json goes into the check ConfigMap (--results-configmap)"},
    "changepoints": {},
    "ycsb load": {
        "property_file": "workload.ycsb is written as -p properties",
        "processes": "the runner's default",
        "target": "the load is not throttled",
        "duration": "a load ends when its records are in",
        "results": "load.json goes into the check ConfigMap (--results-configmap)",
        "ledger": "a load's writes are verified by the record count, not a ledger",
    },
    "ycsb run": {
        "property_file": "workload.ycsb is written as -p properties",
        "threads": "each pod is told --total-threads and takes its share",
        "processes": "the runner's default (one process: the compiled loop's measured best)",
        "results": "results go into the pod's results ConfigMap (--results-configmap)",
        "start_timeout": "the operator fails the run itself after runners.readyTimeoutSeconds",
    },
    "ycsb verify": {
        "property_file": "workload.ycsb is written as -p properties",
        "seed": "verify reads back what the ledgers hold; it draws nothing",
        "fetch_timeout": "the runner's default; the Job's deadline bounds the whole",
    },
}

# Specs that between them make the operator write every option it decides (a flag written only
# for some specs: --reset, --refuse-existing, --check, --think-time, remote percentages, ...).
SPECS = {
    "tpcc-deployed": {
        "database": {"type": "voltdb", "deploy": {"replicas": 3, "kSafety": 1}},
        "workload": {
            "warehouses": 2,
            "clients": 8,
            "durationSeconds": 120,
            "warmupSeconds": 15,
            "seed": 42,
            "targetTransactionsPerSecond": 400,
            "driverOptions": {"call_timeout": 30},
        },
        "runners": {"parallelism": 2},
        "verify": {"afterLoad": True, "duringRun": True, "acid": {"enabled": True, "tests": ["atomicity"]}},
    },
    "tpcc-external": {
        "database": {
            "type": "mongodb",
            "external": {
                "endpoints": ["db-0.example:27017", "db-1.example:27017"],
                "credentialsSecretRef": {"name": "mongo-user"},
            },
        },
        "workload": {
            "warehouses": 4,
            "clients": 4,
            "pacing": "spec",
            "retryWait": "pytpcc",
            "mix": {"newOrder": 50, "payment": 42, "orderStatus": 4, "delivery": 0, "stockLevel": 4},
            "remotePercent": {"newOrderLines": 5, "payments": 20},
            "scaleDown": 10,
            "driverOptions": {"write_concern": "majority"},
            "connectTimeoutSeconds": 7,
        },
        "runners": {"parallelism": 1},
    },
    "ycsb-deployed": {
        "database": {"type": "voltdb"},
        "workload": {
            "kind": "ycsb",
            "clients": 6,
            "loadWorkers": 3,
            "ycsb": {
                "workload": "b",
                "recordCount": 5000,
                "targetOpsPerSecond": 600,
                "properties": {"fieldcount": "4"},
            },
        },
        "runners": {"parallelism": 2},
    },
    "ycsb-external": {
        "database": {"type": "foundationdb", "external": {"endpoints": ["10.0.0.9:4500"]}},
        "workload": {
            "kind": "ycsb",
            "clients": 2,
            "resetBeforeLoad": True,
            "driverOptions": {"cluster_id": "bench:abc"},
        },
        "runners": {"parallelism": 1},
    },
}


def jobs(spec: RunSpec) -> list[dict]:
    """Every Job the operator would create for the spec."""
    out = [runner_jobs.load_job(RUN, spec, SETTINGS), runner_jobs.run_job(RUN, spec, SETTINGS)]
    out.append(runner_jobs.verifier_job(RUN, spec, SETTINGS, POD_IPS))
    if workloads.checks_consistency(spec):
        out.append(runner_jobs.check_job(RUN, spec, SETTINGS))
    if spec.verify.during_run:
        out.append(runner_jobs.midcheck_job(RUN, spec, SETTINGS))
    if spec.verify.acid_tests is not None:
        out.append(runner_jobs.acid_job(RUN, spec, SETTINGS))
    out.append(runner_jobs.analyzer_job(RUN, spec, SETTINGS, 0.001))
    return out


def commands(spec: RunSpec) -> list[RunnerCommand]:
    """The typed command of each of jobs(spec), in the same order."""
    out = [runner_jobs.load_command(RUN, spec), runner_jobs.run_command(RUN, spec)]
    out.append(runner_jobs.verifier_command(RUN, spec, POD_IPS))
    if workloads.checks_consistency(spec):
        out.append(runner_jobs.check_command(RUN, spec))
    if spec.verify.during_run:
        out.append(runner_jobs.midcheck_command(RUN, spec))
    if spec.verify.acid_tests is not None:
        out.append(runner_jobs.acid_command(RUN, spec))
    out.append(runner_jobs.analyzer_command(RUN, 0.001))
    return out


def pod_zero(args: list[str]) -> list[str]:
    """The arguments as pod 0 of an Indexed Job runs them."""
    return [a.replace("$(JOB_COMPLETION_INDEX)", "0") for a in args]


def args_of(job: dict) -> list[str]:
    return pod_zero(job["spec"]["template"]["spec"]["containers"][0]["args"])


def command_parser(words: tuple[str, ...]) -> argparse.ArgumentParser:
    """The runner's parser of a (sub)command's options."""
    parser = build_parser()
    for word in words:
        (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        parser = sub.choices[word]
    assert not any(isinstance(a, argparse._SubParsersAction) for a in parser._actions), words
    return parser


def fields(command: object) -> dict[str, object]:
    """A command's option fields by name, those of its parts (connection, pod, ycsb) inlined."""
    out: dict[str, object] = {}
    for f in dataclasses.fields(command):
        value = getattr(command, f.name)
        out.update(fields(value) if dataclasses.is_dataclass(value) else {f.name: value})
    return out


def parsed_back(action: argparse.Action, value: object) -> object:
    """What the runner's parser makes of a field's value as the line writes it: a repeated option
    as a list (of values the field holds already parsed, as -p's (name, value)), a tuple of one
    option joined by commas (--mix, --tests), a text through the option's type (pod 0's shard)."""

    def text(written: str) -> object:
        (written,) = pod_zero([written])
        return written if action.type is None else action.type(written)

    if isinstance(value, tuple) and isinstance(action, argparse._AppendAction):
        return [text(v) if isinstance(v, str) else v for v in value]
    if isinstance(value, tuple):
        return text(",".join(str(v) for v in value))
    return text(value) if isinstance(value, str) else value


def offered(parser: argparse.ArgumentParser) -> set[str]:
    return {a.dest for a in parser._actions if a.option_strings and a.dest != "help"}


def test_each_command_parses_back_into_its_fields():
    """Runner -> operator: each field of each command the operator writes is an option of the
    runner's command under the same dest, and the runner reads the line back as the field's value."""
    for name, document in SPECS.items():
        spec = RunSpec.parse(document)
        built = commands(spec)
        assert [args_of(job) for job in jobs(spec)] == [pod_zero(c.to_argv()) for c in built], name
        for command in built:
            parser = command_parser(command.words)
            actions = {a.dest: a for a in parser._actions}
            parsed = vars(build_parser().parse_args(pod_zero(command.to_argv())))
            for field, value in fields(command).items():
                assert field in offered(parser), f"`tpcc {' '.join(command.words)}` has no option {field}"
                if value in (None, ()):  # not written: the runner's default
                    assert parsed[field] == actions[field].default, (name, field)
                else:
                    assert parsed[field] == parsed_back(actions[field], value), (name, field)


def test_every_runner_option_is_a_field_or_left_to_the_runner():
    """Operator -> runner: every option of a runner command the operator uses is a field of its
    command, written for some spec here, or named in LEFT_TO_THE_RUNNER with why."""
    written: dict[tuple[str, ...], set[str]] = {}
    for document in SPECS.values():
        for command in commands(RunSpec.parse(document)):
            parser = command_parser(command.words)
            args = command.to_argv()
            seen = {parser._option_string_actions[a].dest for a in args if a in parser._option_string_actions}
            written.setdefault(command.words, set()).update(seen)
            unwritten = {f for f, v in fields(command).items() if v not in (None, False, ())} - seen
            assert not unwritten, f"`tpcc {' '.join(command.words)}` fields {sorted(unwritten)} not on its line"
    names = {" ".join(words) for words in written}
    assert names == set(LEFT_TO_THE_RUNNER) - {"common"}, "a runner command the operator uses is not listed"
    for words, seen in written.items():
        parser, command = command_parser(words), " ".join(words)
        left = set(LEFT_TO_THE_RUNNER[command])
        if set(COMMON) <= offered(parser):
            left |= set(LEFT_TO_THE_RUNNER["common"])
        undecided = offered(parser) - seen - left
        assert not undecided, f"`tpcc {command}` offers {sorted(undecided)}: write it from the spec or say why not"
        stale = left & seen
        assert not stale, f"`tpcc {command}`: the operator writes {sorted(stale)}, listed as left to the runner"
        gone = left - offered(parser)
        assert not gone, f"`tpcc {command}` no longer offers {sorted(gone)}"


COMMON = ("db", "endpoints", "driver_opt", "connect_timeout", "metrics_port")


@pytest.mark.parametrize("name", SPECS)
def test_each_line_carries_the_specs_values(name):
    spec = RunSpec.parse(SPECS[name])
    w, seed = spec.workload, runner_jobs.run_seed(RUN, spec)
    endpoints = ",".join(plan.endpoints(RUN, spec))
    for typed in commands(spec):
        command = " ".join(typed.words)
        parsed = vars(build_parser().parse_args(pod_zero(typed.to_argv())))
        if command == "changepoints":
            assert parsed["max_pvalue"] == 0.001
            continue
        assert (parsed["db"], parsed["endpoints"]) == (spec.database.type, endpoints), command
        assert parsed["connect_timeout"] == w.connect_timeout_seconds
        options = dict(o.split("=", 1) for o in parsed["driver_opt"] or [])
        assert options == {k: str(v) for k, v in (w.driver_options or {}).items()}, command
        if command in ("load", "run", "check"):
            assert parsed["warehouses"] == w.warehouses
        if command in ("load", "ycsb load"):
            assert parsed["reset"] == runner_jobs.reset_before_load(spec)
            assert (parsed["workers"] if command == "load" else parsed["threads"]) == w.load_workers
        if command in ("load", "run", "acid", "ycsb load", "ycsb run"):
            assert parsed["seed"] == seed, command
        if command in ("run", "ycsb run"):
            assert parsed["shard"] == (0, spec.runners.parallelism)
            # every pod is told the total; each takes its share (test_total_clients.py in the runner)
            assert parsed["total_clients" if command == "run" else "total_threads"] == w.clients
        if command == "run":
            mix = w.mix
            assert parsed["mix"] == (mix.new_order, mix.payment, mix.order_status, mix.delivery, mix.stock_level)
            assert (parsed["duration"], parsed["warmup"]) == (w.duration_seconds, w.warmup_seconds)
            assert parsed["think_time"] == (w.pacing == "spec")
            assert parsed["retry_wait"] == (w.retry_wait or "backoff")  # absent: the runner's default
            assert parsed["target_tps"] == w.target_transactions_per_second
            remote = w.remote_percent
            if remote is not None:
                assert (parsed["remote_line_percent"], parsed["remote_payment_percent"]) == (
                    remote.new_order_lines,
                    remote.payments,
                )
        if command == "ycsb run":
            assert parsed["duration"] == w.warmup_seconds + w.duration_seconds
            target = w.ycsb_or_defaults.target_ops_per_second
            assert parsed["target"] == (target / spec.runners.parallelism if target else None)
        if command.startswith("ycsb"):
            assert parsed["workload"] == w.ycsb_or_defaults.workload


def test_clients_that_are_no_multiple_of_the_pods_are_shared_out_by_the_runner():
    """94 terminals over 4 pods (the VLDB study's M80 ran 94 threads): every pod is told the
    total, each runs its share, and the run's event says which."""
    from test_phases import Driver
    from tpcc_operator.stages.actions import CreateRunJob
    from tpcc_operator.stages.machine import World

    document = {"database": {"type": "voltdb"}, "workload": {"clients": 94}, "runners": {"parallelism": 4}}
    spec = RunSpec.parse(document)
    assert workloads.client_shares(spec) == [24, 24, 23, 23]
    shares = []
    for pod in range(4):
        job_args = runner_jobs.run_job(RUN, spec, SETTINGS)["spec"]["template"]["spec"]["containers"][0]["args"]
        args = [a.replace("$(JOB_COMPLETION_INDEX)", str(pod)) for a in job_args]
        from tpcc_runner.cli import _run_plan
        from tpcc_runner.drivers.base import ConnectionOptions, LoadMeta

        meta = LoadMeta(1, 100_000, 10, 3_000, 3_000, 900, 1, 2, 3, "stored-procedures", "2026-01-01T00:00:00Z", True)
        shares.append(_run_plan(build_parser().parse_args(args), ConnectionOptions(["db:21212"]), meta).clients)
    assert shares == [24, 24, 23, 23]
    d = Driver(document)
    d.status = {"phase": "Running", "observedGeneration": 2, "conditions": []}
    assert d.tick(World()).actions == [CreateRunJob()]
    assert any(e.message.endswith("4 pods, 24, 24, 23, 23 clients") for e in d.events)
