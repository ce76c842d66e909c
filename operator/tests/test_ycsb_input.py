"""Bad YCSB input never reaches a Job: the CRD refuses at apply an unknown or spec-set property
name, a distribution YCSB does not have and proportions that do not add up to 1 (its lists held
here to the runner's own); what the CRD cannot express, the runner's parser finds in the Pending
phase, before anything is created, and the run ends Failed naming the property; recordCount (with
the inserts an operationcount bounds) is bounded by the deployed database's capacity before Helm."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from crd_schema import crd_schema, validate
from test_fail_fast import failed_with
from test_phases import RUN, Driver
from tpcc_contract.ycsb.properties import PRESETS, PROPERTY_NAMES, TIMESERIES_PROPERTY_NAMES, PropertyError, resolve
from tpcc_operator import capacity, chart_policy, plan, runner_jobs, sweep_layout
from tpcc_operator.databases.mongodb import MONGODB
from tpcc_operator.databases.voltdb import VOLTDB
from tpcc_operator.runspec import Deploy, RunSpec
from tpcc_operator.stages.actions import CreateLoadJob, CreateRunObjects, InstallDatabase
from tpcc_operator.workloads import ycsb as ycsb_workload
from tpcc_operator.workloads.ycsb import YCSB_WORKLOAD
from tpcc_runner.cli import build_parser
from tpcc_runner.ycsb.command import properties_of

CHARTS = Path(__file__).resolve().parents[2] / "charts"
SETTINGS = plan.Settings(charts_dir=CHARTS, runner_image="local/tpcc-runner:dev")
PROPORTIONS = ("readproportion", "updateproportion", "insertproportion", "scanproportion", "readmodifywriteproportion")


def ycsb_schema() -> dict:
    return crd_schema()["properties"]["spec"]["properties"]["workload"]["properties"]["ycsb"]


def property_rules() -> list[str]:
    return [" ".join(r["rule"].split()) for r in ycsb_schema()["properties"]["properties"]["x-kubernetes-validations"]]


def ycsb_rules() -> list[str]:
    return [" ".join(r["rule"].split()) for r in ycsb_schema()["x-kubernetes-validations"]]


def quoted(listed: str) -> list[str]:
    return re.findall(r"'([^']*)'", listed)


def manifest(ycsb: dict, database: dict | None = None, **workload) -> dict:
    return {
        "apiVersion": "bench.tpcc.dev/v1alpha1",
        "kind": "BenchmarkRun",
        "metadata": {"name": "ycsb"},
        "spec": {"database": database or {"type": "voltdb"}, "workload": {"kind": "ycsb", "ycsb": ycsb, **workload}},
    }


# ---- the CRD's lists are the runner's ------------------------------------------------------------


def test_the_crd_knows_exactly_the_property_names_the_runner_parses():
    known = next(r for r in property_rules() if r.startswith("self.all(k, k in ["))
    assert quoted(known) == list(PROPERTY_NAMES) + list(TIMESERIES_PROPERTY_NAMES)
    timeseries_only = next(r for r in ycsb_rules() if r.startswith("self.workload == 'tsa' ||"))
    assert quoted(timeseries_only)[1:] == list(TIMESERIES_PROPERTY_NAMES)


def test_the_crd_refuses_in_properties_exactly_what_the_spec_sets_itself():
    """recordcount, batchsize and operationspertransaction come from workload.ycsb's fields,
    threadcount, target and maxexecutiontime from the Jobs' flags: a property of the same name
    would be overridden by them (or override the bounded recordCount)."""
    spec = plan_spec({"targetOpsPerSecond": 100})
    from_the_spec = {name for phase in ycsb_workload.PHASES for name in ycsb_workload.job_properties(spec, phase)}
    reserved = next(r for r in property_rules() if r.startswith("!self.exists(k, k in ["))
    assert set(quoted(reserved)) == from_the_spec - {"operationcount"}  # a run's 0 the user may raise


def runner_choices() -> dict[str, set[str]]:
    """Every property the runner takes from a fixed list, with the list (from its error)."""
    out = {}
    for name in PROPERTY_NAMES:
        try:
            resolve("a", {name: "no-such-value"})
        except PropertyError as e:
            listed = re.search(r"must be one of (\S+), got", str(e))
            if listed:
                out[name] = set(listed.group(1).split("|"))
    return out


def test_the_crd_allows_exactly_the_runners_values_of_each_enumerated_property():
    choices = runner_choices()
    assert {"requestdistribution", "fieldlengthdistribution", "scanlengthdistribution"} <= set(choices)
    crd = {
        name: set(quoted(values))
        for rule in property_rules()
        for name, values in re.findall(r"self\['(\w+)'\] in \[([^\]]*)\]", rule)
    }
    assert crd == choices


@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.parametrize(
    "given",
    [
        {},
        {"readproportion": "0.9"},
        {"readproportion": "0.5", "updateproportion": "0.5"},
        {"readproportion": "0.2", "updateproportion": "0.2", "insertproportion": "0.2", "scanproportion": "0.2"},
        {p: "0.2" for p in PROPORTIONS},
        {p: "0.3" for p in PROPORTIONS},
        {"scanproportion": "1", "readproportion": "0", "updateproportion": "0", "insertproportion": "0"},
        {"readmodifywriteproportion": "0.5", "readproportion": ".5", "updateproportion": "0"},
        {"updateproportion": "5e-2", "readproportion": "0.95"},
    ],
    ids=lambda g: ",".join(f"{k[:4]}={v}" for k, v in g.items()) if isinstance(g, dict) else g,
)
def test_the_crd_and_the_runner_agree_on_which_proportions_add_up(preset, given):
    """The CRD's rule has the presets' proportions for those not set: it accepts what the
    runner accepts, with the same tolerance, for every preset."""
    try:
        resolve(preset, {**given, "operationcount": "1000"})
        runner_refuses = False
    except PropertyError as e:
        runner_refuses = "must be 1" in str(e)
    errors = validate(manifest({"workload": preset, "properties": {**given, "operationcount": "1000"}}))
    assert bool(errors) == runner_refuses, errors
    if errors:
        assert any("workload.ycsb.properties: readproportion + updateproportion" in e for e in errors)


# ---- the plan-time check: the runner's own parser, before anything is created -----------------


def plan_spec(ycsb: dict, database: dict | None = None, **workload):
    from tpcc_operator.runspec import RunSpec

    return RunSpec.parse(manifest(ycsb, database, **workload)["spec"])


@pytest.mark.parametrize(
    "ycsb, names",
    [
        # what an older CRD (or one applied without its rules) lets through: the same verdicts
        ({"properties": {"readproportoin": "0.5"}}, "unknown property readproportoin"),
        ({"workload": "b", "properties": {"readproportion": "0.9"}}, "readproportion + updateproportion"),
        ({"properties": {"requestdistribution": "gaussian"}}, "property requestdistribution must be one of"),
        ({"properties": {"scanlengthdistribution": "latest"}}, "property scanlengthdistribution must be one of"),
        ({"properties": {"fieldlengthdistribution": "histogram"}}, "property fieldlengthdistribution must be one of"),
        # what no CRD rule checks: the value of every other property, and the rules across them
        ({"properties": {"fieldcount": "ten"}}, "property fieldcount must be a whole number"),
        ({"properties": {"readallfields": "yes"}}, "property readallfields must be true or false"),
        ({"properties": {"minscanlength": "50", "maxscanlength": "10"}}, "property maxscanlength (10)"),
        ({"properties": {"hotspotdatafraction": "1.5"}}, "property hotspotdatafraction must be between 0 and 1"),
    ],
    ids=lambda x: x if isinstance(x, str) else "",
)
def test_a_property_the_runner_refuses_fails_the_run_before_anything_is_created(ycsb, names):
    d = Driver(plan_spec(ycsb))
    d.tick()  # Pending
    d.tick()
    message = failed_with(d, "InvalidSpec")
    assert message.startswith("spec.workload.ycsb: ") and names in message, message
    assert not {CreateRunObjects(), InstallDatabase(), CreateLoadJob()} & set(d.actions)


def test_a_good_preset_based_workload_has_no_problem_and_goes_on_to_deploy():
    spec = plan_spec({"workload": "b", "properties": {"readproportion": "0.9", "updateproportion": "0.1"}})
    assert YCSB_WORKLOAD.input_problems(spec) == []
    d = Driver(spec)
    d.tick()
    d.tick()
    assert d.phase == "Deploying" and CreateRunObjects() in d.actions


def test_the_check_parses_what_each_job_gives_the_runner():
    """ycsb_job_properties is what `tpcc ycsb` parses from the load, run and verifier Jobs'
    own arguments: the check cannot judge other properties than the pods get."""
    spec = plan_spec(
        {"workload": "d", "recordCount": 500, "targetOpsPerSecond": 300, "properties": {"fieldcount": "4"}},
        clients=6,
        loadWorkers=3,
        durationSeconds=20,
        warmupSeconds=5,
    )
    spec = sweep_layout.cell_spec(spec, None)
    jobs = {
        "load": runner_jobs.load_job(RUN, spec, SETTINGS),
        "run": runner_jobs.run_job(RUN, spec, SETTINGS),
        "verify": runner_jobs.verifier_job(RUN, spec, SETTINGS, {0: "10.0.0.1"}),
    }
    for phase, job in jobs.items():
        # the Job's $(JOB_COMPLETION_INDEX) as Kubernetes expands it for pod 0
        args = [
            a.replace("$(JOB_COMPLETION_INDEX)", "0") for a in job["spec"]["template"]["spec"]["containers"][0]["args"]
        ]
        parsed = properties_of(build_parser().parse_args(args))
        assert parsed == resolve("d", ycsb_workload.job_properties(spec, phase)), phase


# ---- recordCount against the deployed database's capacity ------------------------------------


def test_records_beyond_what_the_deployed_database_holds_are_refused_before_helm():
    spec = plan_spec({"recordCount": 1_000_000})
    with pytest.raises(chart_policy.DatabaseTooSmall) as refused:
        plan.helm_release(RUN, spec, SETTINGS)
    bound = VOLTDB.capacity(
        Deploy("", "", 1, 0), chart_policy.with_defaults("voltdb", "", {}, CHARTS), capacity.ycsb_records(10, 100)
    )
    message = str(refused.value)
    assert message.startswith(
        f"spec.workload.ycsb.recordCount = 1000000: the deployed voltdb holds at most {bound.count} records"
    )
    assert "per record of 10 fields x 100 bytes" in message and "resources.limits.memory" in message
    assert 50_000 < bound.count < 1_000_000  # the chart's 2Gi node: YCSB's default records, ~9 KB each
    plan.helm_release(RUN, plan_spec({"recordCount": bound.count}), SETTINGS)


def test_the_records_shape_and_the_bounded_inserts_count():
    """Fewer, shorter fields fit more records; inserts an operationcount bounds count too."""
    small = plan_spec({"recordCount": 500_000, "properties": {"fieldcount": "1", "fieldlength": "10"}})
    plan.helm_release(RUN, small, SETTINGS)
    inserting = plan_spec(
        {"workload": "d", "recordCount": 1000, "properties": {"operationcount": "40000000"}},
        database={"type": "mongodb", "deploy": {"replicas": 3}},
    )
    with pytest.raises(chart_policy.DatabaseTooSmall, match=r"^spec.workload.ycsb.recordCount \(1000\) \+ inserts"):
        plan.helm_release(RUN, inserting, SETTINGS)
    # a run bounded by its duration alone (operationcount 0) has only the load to count
    plan.helm_release(RUN, plan_spec({"workload": "d", "recordCount": 1000}, database={"type": "mongodb"}), SETTINGS)


def test_the_per_record_figures_are_measured_ones():
    """bench/capacity.py --ycsb printed them; YCSB's default record is about 9 KB in VoltDB
    (a row per field) and 2.6 KB in SecantusDB's WiredTiger files."""
    default = capacity.ycsb_records(10, 100)
    assert 5_000 < default.bytes(VOLTDB.costs) < 15_000 and 1_000 < default.bytes(MONGODB.costs) < 5_000
    voltdb_bytes = [capacity.ycsb_records(1, 10).bytes(VOLTDB.costs), capacity.ycsb_records(10, 10).bytes(VOLTDB.costs)]
    assert voltdb_bytes[0] < voltdb_bytes[1] < default.bytes(VOLTDB.costs)


# ---- TimeSeriesWorkload (workload tsa) -----------------------------------------------------------


def test_the_timeseries_preset_is_accepted_and_plans_its_series_keys():
    ycsb = {"workload": "tsa", "recordCount": 20000, "properties": {"tagcardinality": "1,2", "tagcount": "2"}}
    assert validate(manifest(ycsb)) == []
    spec = plan_spec(ycsb, clients=8)
    assert YCSB_WORKLOAD.input_problems(spec) == []
    field, records, _ = YCSB_WORKLOAD.largest_load(spec)
    assert records == 64 and "fieldcount" in field  # one record per series key, not recordCount
    assert ycsb_workload.workload_options(spec, "run").to_argv()[:2] == ["--workload", "tsa"]


@pytest.mark.parametrize(
    "ycsb, refused",
    [
        ({"workload": "a", "properties": {"tagcount": "2"}}, "a TimeSeriesWorkload property"),
        (
            {"workload": "tsa", "properties": {"requestdistribution": "latest"}},
            "TimeSeriesWorkload (workload tsa) chooses",
        ),
        ({"workload": "tsa", "operationsPerTransaction": 10}, "workload.ycsb.operationsPerTransaction"),
        ({"workload": "tsa", "properties": {"readproportion": "0.5"}}, "readproportion + updateproportion"),
        ({"workload": "tsb"}, "Unsupported value"),
    ],
)
def test_bad_timeseries_input_is_refused_at_apply(ycsb, refused):
    errors = validate(manifest(ycsb))
    assert any(refused in e for e in errors), errors


@pytest.mark.parametrize(
    "ycsb, workload, names",
    [
        (
            {"workload": "tsa", "properties": {"fieldcount": "16"}},
            {"clients": 32},
            "property fieldcount (16: the series keys)",
        ),
        ({"workload": "tsa", "properties": {"tagcardinality": "1,0"}}, {}, "property tagcardinality must be"),
        ({"workload": "tsa", "properties": {"timestampunits": "NANOSECONDS"}}, {}, "property timestampunits must be"),
    ],
)
def test_timeseries_input_the_crd_cannot_judge_fails_the_run_before_anything_is_created(ycsb, workload, names):
    assert validate(manifest(ycsb, **workload)) == []
    d = Driver(plan_spec(ycsb, **workload))
    d.tick()
    d.tick()
    message = failed_with(d, "InvalidSpec")
    assert message.startswith("spec.workload.ycsb: ") and names in message, message


def test_a_time_series_run_needs_as_many_threads_on_every_pod():
    """TimeSeriesWorkload numbers a thread's series keys by its pod's number times the pod's
    thread count: unequal shares would overlap, so the runner refuses them, and so does the
    operator before anything is deployed."""
    ycsb = {"workload": "tsa", "recordCount": 20000, "properties": {"tagcardinality": "1,2", "tagcount": "2"}}
    spec = plan_spec(ycsb, clients=10)
    spec = RunSpec.parse({**spec.document, "runners": {"parallelism": 4}})
    assert YCSB_WORKLOAD.input_problems(spec) == [
        "workload.clients (10) must be a multiple of runners.parallelism (4) for TimeSeriesWorkload: "
        "every runner pod takes the same number of series keys per thread"
    ]
