"""What a tick reads: each stage says it (stages.dispatch.observes), first with nothing seen, then
with what those reads found; kube.observe only carries the reads out, into the World fields they
name. Reads that cost an API call every tick are asked only when they can matter."""

from __future__ import annotations

import dataclasses
import datetime as dt
import typing

import pytest
from status_parts import sweep_status
from test_phases import RUN, T0
from tpcc_operator import failures, kube, plan
from tpcc_operator.databases.mongodb import MONGODB
from tpcc_operator.databases.voltdb import VOLTDB
from tpcc_operator.stages import reads
from tpcc_operator.stages.dispatch import observes
from tpcc_operator.stages.machine import JobState, World
from tpcc_operator.stages.reads import (
    DatabaseImages,
    DatabasePods,
    DatabaseReadiness,
    FailedCreates,
    History,
    Job,
    LargestNode,
    NamedBaseline,
    PodStates,
    Primary,
    ReadyRunners,
    Report,
    Results,
    RunnerPodIps,
    StartAt,
)
from tpcc_operator.timestamps import rfc3339

DB = plan.database_pod_selector(RUN)
START = rfc3339(T0)
# a deployed database's pods, read while the run loads, runs and is verified for their OOM kills
MEMBERS = DatabasePods(DB, VOLTDB.container)


def both(spec, status: dict, seen: World, now: dt.datetime = T0) -> tuple[list[reads.Read], list[reads.Read]]:
    """The reads asked with nothing seen, then those asked after seeing `seen`."""
    return observes(RUN, spec, status, now, None), observes(RUN, spec, status, now, seen)


def test_every_field_a_read_names_is_a_world_field_of_its_kind():
    kinds = {f.name: f.type for f in dataclasses.fields(World)}
    assert {kinds[f] for f in typing.get_args(reads.JobField)} == {"JobState"}
    assert {kinds[f] for f in typing.get_args(reads.ReportField)} == {"dict | None"}


def test_deploying_reads_the_database_pods_and_the_failed_creates_only_while_none_is_ready(spec_of):
    spec = spec_of({"database": {"type": "voltdb"}})
    status = {"phase": "Deploying"}
    first, none_ready = both(spec, status, World(database_ready=0))
    assert first == [DatabaseReadiness(DB), PodStates(DB)]
    assert none_ready == [FailedCreates("bench-g2")]
    assert observes(RUN, spec, status, T0, World(database_ready=1)) == []
    # a pod the scheduler cannot place: the nodes' allocatable, to judge its requests
    unplaced = failures.PodState("bench-g2-0", 30.0, unschedulable="0/1 nodes are available")
    assert observes(RUN, spec, status, T0, World(database_ready=0, pods=[unplaced])) == [
        LargestNode(),
        FailedCreates("bench-g2"),
    ]


def test_loading_reads_the_load_job_and_its_reports_once_it_finished(spec_of):
    spec = spec_of({"database": {"type": "voltdb"}, "verify": {"afterLoad": True}})
    status = {"phase": "Loading"}
    loader = PodStates({"job-name": "bench-g2-loader"})
    first, running = both(spec, status, World(load=JobState(exists=True), pods=[failures.PodState("p", 1.0)]))
    assert first == [loader, MEMBERS, Job("load", "bench-g2-loader")] and running == []
    done = observes(RUN, spec, status, T0, World(load=JobState(True, True), pods=[failures.PodState("p", 1.0)]))
    assert done == [
        Report("load_report", "bench-g2-check", "load.json"),
        Report("load_check_report", "bench-g2-check", "load-check.json"),
    ]
    # no pod of the Job yet: why the Job has none
    assert observes(RUN, spec, status, T0, World()) == [FailedCreates("bench-g2")]


def test_running_reads_ready_runners_at_the_barrier_and_results_after_the_window(spec_of):
    spec = spec_of({"database": {"type": "voltdb"}, "runners": {"parallelism": 2}, "verify": {"duringRun": True}})
    status = {"phase": "Running", "startAt": START}
    pods = [failures.PodState("bench-g2-runner-0", 1.0)]
    first = observes(RUN, spec, status, T0, None)
    assert first == [
        PodStates({"job-name": "bench-g2-runner"}),
        MEMBERS,
        Job("runner", "bench-g2-runner"),
        StartAt("bench-g2-start"),
        Job("midcheck", "bench-g2-midcheck"),
    ]
    assert observes(RUN, spec, status, T0, World(pods=pods)) == []  # no runner Job yet
    barrier = World(runner=JobState(exists=True), pods=pods)
    assert observes(RUN, spec, status, T0, barrier) == [ReadyRunners("bench-g2-runner")]
    released = World(runner=JobState(exists=True), pods=pods, start_at=START)
    window = dt.timedelta(seconds=spec.workload.warmup_seconds + spec.workload.duration_seconds)
    assert observes(RUN, spec, status, T0 + window - dt.timedelta(seconds=1), released) == []
    assert observes(RUN, spec, status, T0 + window, released) == [
        Results(0, "bench-g2-results-0"),
        Results(1, "bench-g2-results-1"),
    ]


def test_an_external_database_s_pods_are_not_read(spec_of):
    spec = spec_of({"database": {"type": "voltdb", "external": {"endpoints": ["voltdb.example:21212"]}}})
    for phase in ("Loading", "Running", "Verifying"):
        assert MEMBERS not in observes(RUN, spec, {"phase": phase, "startAt": START}, T0, None)


def test_faults_read_the_database_pods_and_the_primary_only_when_a_kill_primary_is_due(spec_of):
    spec = spec_of(
        {
            "database": {"type": "mongodb", "deploy": {"replicas": 3}},
            "workload": {"warmupSeconds": 10, "durationSeconds": 120},
            "faults": [{"action": "kill-primary", "afterSeconds": 20}],
        }
    )
    status = {"phase": "Running", "startAt": START}
    members = DatabasePods(DB, MONGODB.container)
    before = observes(RUN, spec, status, T0 + dt.timedelta(seconds=29), None)
    assert members in before and not any(isinstance(r, Primary) for r in before)
    due = observes(RUN, spec, status, T0 + dt.timedelta(seconds=30), None)
    assert members in due and Primary("mongodb", tuple(plan.endpoints(RUN, spec))) in due


def test_verifying_reads_the_job_of_the_check_under_way_then_what_it_needs(spec_of):
    spec = spec_of({"database": {"type": "voltdb"}, "runners": {"parallelism": 2}})
    status = {"phase": "Verifying", "startAt": START}
    pods = [failures.PodState("p", 1.0)]
    first, not_started = both(spec, status, World(pods=pods))
    assert first == [PodStates({"job-name": "bench-g2-verifier"}), MEMBERS, Job("verifier", "bench-g2-verifier")]
    # before the verifier: the database whole again, and the pods that hold the ledgers
    assert not_started == [DatabaseReadiness(DB), RunnerPodIps("bench-g2-runner")]
    assert observes(RUN, spec, status, T0, World(pods=pods, verifier=JobState(exists=True))) == []
    done = World(pods=pods, verifier=JobState(True, False, True, "exit 1"))
    assert observes(RUN, spec, status, T0, done) == [Report("durability_report", "bench-g2-check", "durability.json")]
    checking = {**status, "durability": {"durable": True}}
    assert observes(RUN, spec, checking, T0, None)[2] == Job("checker", "bench-g2-checker")
    checked = World(pods=pods, checker=JobState(True, True))
    assert observes(RUN, spec, checking, T0, checked) == [Report("check_report", "bench-g2-check", "check.json")]


def test_a_finished_run_reads_what_its_verdict_needs_once(spec_of):
    spec = spec_of(
        {
            "database": {"type": "voltdb"},
            "runners": {"parallelism": 2},
            "regression": {"baseline": {"result": "golden"}, "changePoints": {"minHistory": 3}},
        }
    )
    status = {"phase": "Succeeded"}
    first, analysing = both(spec, status, World(analyzer=JobState(exists=True)))
    assert first == [
        Results(0, "bench-g2-results-0"),
        Results(1, "bench-g2-results-1"),
        History("bench"),
        NamedBaseline("golden"),
        Job("analyzer", "bench-g2-analyzer"),
        DatabaseImages(DB),
    ]
    assert analysing == []
    analysed = observes(RUN, spec, status, T0, World(analyzer=JobState(True, True)))
    assert analysed == [Report("change_points", "bench-g2-check", "changepoints.json")]
    assert both(spec, {**status, "verdict": "Pass"}, World()) == ([], [])  # judged: nothing more


def test_a_sweep_cell_awaiting_its_verdict_reads_for_it_besides_its_phase(spec_of):
    spec = spec_of({"database": {"type": "voltdb"}})
    cells = sweep_status([{"warehouses": 1, "clients": 1, "repetition": 1, "state": "Succeeded"}])
    wanted = observes(RUN, spec, {"phase": "Verifying", "durability": {}, "sweep": cells}, T0, None)
    assert History("bench") in wanted and Results(0, "bench-g2-results-0") in wanted
    assert len(wanted) == len(set(map(repr, wanted)))  # each read once


@pytest.mark.parametrize("phase", ["Pending", None])
def test_nothing_is_read_before_the_run_has_objects(spec_of, phase):
    assert both(spec_of({"database": {"type": "voltdb"}}), {"phase": phase}, World()) == ([], [])


def test_kube_reads_first_what_is_asked_then_what_follows_from_it(spec_of, monkeypatch):
    """kube.observe carries out the reads, feeding the second question with the first answers."""
    jobs = {"bench-g2-loader": JobState(True, True)}
    maps = {"bench-g2-check": {"load.json": '{"rows": 10, "seconds": 2}'}}
    monkeypatch.setattr(kube, "job_state", lambda ns, name: jobs.get(name, JobState()))
    monkeypatch.setattr(kube, "configmap_data", lambda ns, name: maps.get(name, {}))
    monkeypatch.setattr(kube, "pod_states", lambda ns, labels, now: [failures.PodState("bench-g2-loader-x", 1.0)])
    monkeypatch.setattr(kube, "pods_of", lambda ns, labels, container: [])
    spec = spec_of({"database": {"type": "voltdb"}})
    world = kube.observe("perf", T0, lambda seen: observes(RUN, spec, {"phase": "Loading"}, T0, seen))
    assert world.load == JobState(True, True) and world.load_report == {"rows": 10, "seconds": 2}
    assert world.load_check_report is None and world.failed_creates == []
