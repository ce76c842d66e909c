"""Every database of the registry, deployed and external, with each workload, through every phase
of the stage machine as the operator's timer drives it: the reads the stages ask for
(dispatch.observes, both rounds) answered by a simulated cluster, next_step, the actions carried
out. A database missing from a table, or a read asked of a database that cannot answer it, fails
here rather than in a user's run (an external FoundationDB run once stayed in Loading, its timer
failing every minute with KeyError: 'foundationdb')."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from crd_schema import defaulted_spec, validate
from runner_docs import durability_report, pod_results, ycsb_pod_results
from test_phases import CHECK_OK
from test_ycsb_run import YCSB_VERIFIED
from tpcc_operator import databases, plan, sweep_layout
from tpcc_operator.faults import DatabasePod, measured_end
from tpcc_operator.runspec import RunSpec
from tpcc_operator.stages import actions, reads
from tpcc_operator.stages.dispatch import next_step, observes
from tpcc_operator.stages.generations import active_run
from tpcc_operator.stages.machine import JobState, World, patched
from tpcc_operator.timestamps import parse_time

T0 = dt.datetime(2025, 1, 1, 12, 0, 0, tzinfo=dt.timezone.utc)
RUN = plan.Run("bench", "perf", "uid", 1)
WORKLOADS = {
    "tpcc": {"warehouses": 1, "clients": 4, "durationSeconds": 60, "warmupSeconds": 5},
    "ycsb": {"kind": "ycsb", "clients": 4, "durationSeconds": 60, "ycsb": {"workload": "a", "recordCount": 1000}},
}
ENDPOINTS = {"voltdb": "db.example:21212", "mongodb": "db.example:27017", "foundationdb": "10.0.0.9:4500"}
# The Job each create action makes, by the World field its state fills.
JOB_ACTIONS = {
    actions.CreateLoadJob: "load",
    actions.CreateRunJob: "runner",
    actions.CreateMidcheckJob: "midcheck",
    actions.CreateVerifyJob: "verifier",
    actions.CreateCheckJob: "checker",
    actions.CreateAcidJob: "acid",
    actions.CreateAnalysisJob: "analyzer",
}


CHARTS = Path(__file__).resolve().parents[2] / "charts"
# Every database the operator can run: deployed by its chart (those that have one) or external.
CASES = [
    pytest.param(name, deployed, workload, id=f"{name}-{'deployed' if deployed else 'external'}-{workload}")
    for name, database in databases.REGISTRY.items()
    for deployed in ((True, False) if database.chart else (False,))
    for workload in WORKLOADS
]


def manifest(db: str, deployed: bool, workload: str, **more) -> dict:
    database: dict = {"type": db}
    if deployed:
        database["deploy"] = {"replicas": 1}
    else:
        database["external"] = {"endpoints": [ENDPOINTS[db]]}
    spec = {"database": database, "workload": dict(WORKLOADS[workload]), "runners": {"parallelism": 2}, **more}
    if db == "foundationdb":  # the driver reaches FoundationDB's coordinators by its cluster's ID
        spec["workload"]["driverOptions"] = {"cluster_id": "bench:abc"}
    return {
        "apiVersion": "bench.tpcc.dev/v1alpha1",
        "kind": "BenchmarkRun",
        "metadata": {"name": "bench"},
        "spec": spec,
    }


@dataclass
class Cluster:
    """What a cluster would answer for one run: the run's Jobs exist once created and succeed
    unless `failing` names them (their pod's one-line error then), the database's pods are ready
    once installed. Every read is checked against what the run's database can be asked."""

    spec: RunSpec
    failing: dict[str, str] = field(default_factory=dict)  # World job field -> the pod's error
    created: set[str] = field(default_factory=set)
    installed: bool = False
    start_at: str | None = None
    now: dt.datetime = T0
    replaced: dict[str, int] = field(default_factory=dict)  # a killed pod's name -> its replacements
    asked: list[reads.Read] = field(default_factory=list)

    @property
    def database(self) -> databases.Database:
        return databases.of(self.spec)

    def job(self, into: str) -> JobState:
        if into not in self.created:
            return JobState()
        if into in self.failing:
            return JobState(exists=True, failed=True, message=self.failing[into])
        if into == "runner" and (not self.start_at or self.now < measured_end(self.spec, parse_time(self.start_at))):
            return JobState(exists=True)  # the pods wait at the barrier, then measure
        return JobState(exists=True, succeeded=True)

    def report(self, into: str) -> dict | None:
        if self.job(
            into.removesuffix("_report").replace("durability", "verifier").replace("check", "checker")
        ).succeeded:
            ycsb = self.spec.workload.kind == "ycsb"
            return {
                "load_report": {"rows": 1000, "seconds": 1.0, "rows_per_second": 1000.0},
                "durability_report": YCSB_VERIFIED if ycsb else durability_report(90),
                "check_report": CHECK_OK,
            }.get(into)
        return None

    def read(self, read: reads.Read, world: World) -> None:
        self.asked.append(read)
        deployed = self.spec.database.deployed
        match read:
            case reads.Job(into, _):
                setattr(world, into, self.job(into))
            case reads.Report(into, _, _):
                setattr(world, into, self.report(into))
            case reads.StartAt(_):
                world.start_at = self.start_at
            case reads.ReadyRunners(_):
                world.runners_ready = self.spec.runners.parallelism if "runner" in self.created else 0
            case reads.Results(shard, _):
                if self.job("runner").succeeded:
                    shards = self.spec.runners.parallelism
                    ycsb = self.spec.workload.kind == "ycsb"
                    world.results[shard] = (
                        ycsb_pod_results(shard, shards, 900, 100, 0.002)
                        if ycsb
                        else pod_results(shard, shards, 100, 0.01)
                    )
            case reads.RunnerPodIps(_):
                world.runner_pod_ips = {i: f"10.0.0.{i + 5}" for i in range(self.spec.runners.parallelism)}
            case reads.DatabaseReadiness(_):
                assert deployed, f"the pods of an external {self.database.name} were asked for"
                world.database_ready = self.database.pod_count(self.spec.deploy) if self.installed else 0
            case reads.DatabasePods(_, container):
                assert deployed and container == self.database.container
                count = self.database.pod_count(self.spec.deploy) if self.installed else 0
                names = [f"bench-g1-{i}" for i in range(count)]
                world.database_pods = [DatabasePod(n, f"{n}/{self.replaced.get(n, 0)}", True) for n in names]
            case reads.Primary(name, _):
                assert deployed and name == self.database.name and self.database.has_primary
                world.primary = "bench-g1-0"
            case reads.DatabaseImages(_):
                assert deployed
                world.database_images = [f"local/{self.database.name}:dev"] if self.installed else []
            case reads.PodStates(_) | reads.LargestNode() | reads.FailedCreates(_):
                pass  # every pod starts and is scheduled
            case reads.History(_) | reads.NamedBaseline(_):
                pass  # no earlier results

    def carry_out(self, action: actions.Action) -> None:
        if type(action) in JOB_ACTIONS:
            self.created.add(JOB_ACTIONS[type(action)])
        match action:
            case actions.InstallDatabase():
                assert self.spec.database.deployed and self.database.chart
                plan.helm_release(RUN, self.spec, plan.Settings(charts_dir=CHARTS))
                self.installed = True
            case actions.WriteStartAt(start_at):
                self.start_at = start_at
            case actions.KillPods(kills):  # the StatefulSet replaces each pod at once
                for kill in kills:
                    self.replaced[kill.pod] = self.replaced.get(kill.pod, 0) + 1


def drive(document: dict, cluster: Cluster, ticks: int = 40) -> dict:
    """The operator's timer (handlers.drive) against the simulated cluster, tick by tick (3 s
    apart) until the run is finished and judged; the final status."""
    spec = RunSpec.parse(defaulted_spec(document["spec"]))
    status: dict = {}
    now = T0
    for _ in range(ticks):
        now += dt.timedelta(seconds=5)
        cluster.now = now
        active = active_run(RUN, spec, status)
        world = World()
        if active:
            cell = sweep_layout.current_cell(spec, status)
            under_way, measured = sweep_layout.cell_run(active, cell), sweep_layout.cell_spec(spec, cell)
            for read in observes(under_way, measured, status, now, None):
                cluster.read(read, world)
            for read in observes(under_way, measured, status, now, world):
                cluster.read(read, world)
        step = next_step(RUN, spec, status, world, now)
        for action in step.actions:
            cluster.carry_out(action)
        status = patched(status, step.status)
        if status.get("phase") in ("Succeeded", "Failed") and status.get("verdict"):
            return status
    raise AssertionError(f"not finished after {ticks} ticks: {status.get('phase')}: {status.get('message')}")


@pytest.mark.parametrize(("db", "deployed", "workload"), CASES)
def test_every_database_runs_through_every_phase(db, deployed, workload):
    document = manifest(db, deployed, workload)
    assert validate(document) == [], "the CRD refuses it"
    cluster = Cluster(RunSpec.parse(defaulted_spec(document["spec"])))
    status = drive(document, cluster)
    assert status["phase"] == "Succeeded", status.get("message")
    assert status["verdict"] == "Pass"
    asked = {type(r) for r in cluster.asked}
    assert (reads.DatabaseReadiness in asked) == deployed
    if workload == "tpcc":
        assert status["consistency"]["passed"] and status["durability"]["lost"] == 0
    else:
        assert status["ycsb"]["opsPerSecond"] > 0 and status["durability"]["durable"]


@pytest.mark.parametrize(("db", "deployed", "workload"), CASES)
def test_an_unreachable_database_fails_the_run_with_the_runners_words(db, deployed, workload):
    """The load Job's pod exits with the runner's one-line error (no server answers, no client
    library): the run ends Failed with it, at the load, on the tick after the Job failed."""
    document = manifest(db, deployed, workload)
    error = f"tpcc load: error: cannot connect to {db}"
    cluster = Cluster(RunSpec.parse(defaulted_spec(document["spec"])), failing={"load": error})
    status = drive(document, cluster)
    assert (status["phase"], status["reason"]) == ("Failed", "LoadFailed")
    assert error in status["message"]


@pytest.mark.parametrize("db", [n for n, d in databases.REGISTRY.items() if not d.chart])
def test_a_database_without_a_chart_is_refused_deployed_at_apply(db):
    assert any("has no chart to deploy; set database.external" in v for v in validate(manifest(db, True, "tpcc")))


@pytest.mark.parametrize("db", [n for n, d in databases.REGISTRY.items() if d.chart])
def test_faults_ask_each_deployed_database_for_its_own_pods_and_primary(db):
    """kill-primary on every database that can be deployed: its pods read in its own container,
    the primary asked only of a database that has one; the run is measured and verified."""
    document = manifest(db, True, "tpcc", faults=[{"action": "kill-primary", "afterSeconds": 1}])
    document["spec"]["database"]["deploy"] = {"replicas": 3, "kSafety": 1} if db == "voltdb" else {"replicas": 3}
    assert validate(document) == []
    cluster = Cluster(RunSpec.parse(defaulted_spec(document["spec"])))
    status = drive(document, cluster, ticks=60)
    asked = {type(r) for r in cluster.asked}
    assert reads.DatabasePods in asked
    assert (reads.Primary in asked) == databases.named(db).has_primary
    assert status["phase"] == "Succeeded", status.get("message")
    assert [f["state"] for f in status["faults"]] == ["Recovered"]
    assert sum(cluster.replaced.values()) == 1


def test_the_registry_is_every_database_the_crds_and_the_admission_policy_name():
    """database.type's enum in the CRDs (the run's and the schedule's template), the shipped
    charts, and the charts the admission policy checks values for: all from one registry."""
    import importlib.util

    root = CHARTS.parent
    for crd in ("benchmarkrun.yaml", "benchmarkschedule.yaml"):
        text = (root / "crds" / crd).read_text()
        assert f"enum: [{', '.join(databases.REGISTRY)}]" in text, crd
    shipped = databases.shipped_charts()
    for chart in shipped:
        assert (CHARTS / chart / "values.schema.json").is_file()
        assert (
            f"name: {databases.named(chart).container}"
            in (CHARTS / chart / "templates" / "statefulset.yaml").read_text()
        )
    loader = importlib.util.spec_from_file_location("gen_admission", root / "hack" / "gen-admission.py")
    assert loader and loader.loader
    gen_admission = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(gen_admission)
    assert tuple(gen_admission.CHARTS) == shipped


def test_the_runner_has_a_tpcc_driver_and_a_ycsb_store_for_every_database():
    from tpcc_runner.drivers import DRIVERS
    from tpcc_runner.ycsb.store import STORES

    assert set(DRIVERS) == set(STORES) == set(databases.REGISTRY)
