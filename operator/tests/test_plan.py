"""spec -> plan of objects: names, Jobs on the runner's CLI contract, RBAC, Helm values."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from specs import edited
from tpcc_operator import plan, runner_jobs
from tpcc_operator.databases import mongodb

RUN = plan.Run(name="bench", namespace="perf", uid="uid-1", generation=3)
CHARTS = Path(__file__).resolve().parents[2] / "charts"
SETTINGS = plan.Settings(charts_dir=CHARTS, runner_image="local/tpcc-runner:dev")


@pytest.fixture
def voltdb(spec_of):
    return spec_of(
        {
            "database": {"type": "voltdb", "deploy": {"replicas": 3, "kSafety": 1}},
            "workload": {
                "warehouses": 2,
                "clients": 8,
                "durationSeconds": 60,
                "warmupSeconds": 5,
                "driverOptions": {"schema": "normalized"},
            },
            "runners": {"parallelism": 2},
        }
    )


@pytest.fixture
def external_mongo(spec_of):
    return spec_of(
        {
            "database": {
                "type": "mongodb",
                "external": {
                    "endpoints": ["m-0.db:27017", "m-1.db:27017"],
                    "credentialsSecretRef": {"name": "mongo-creds"},
                },
            },
            "workload": {"driverOptions": {"write_concern": "majority", "find_and_modify": "true"}},
        }
    )


def container(job: dict) -> dict:
    return job["spec"]["template"]["spec"]["containers"][0]


def flag(args: list[str], name: str) -> str:
    return args[args.index(name) + 1]


def test_names_carry_the_generation():
    assert plan.release_name(RUN) == "bench-g3"
    assert plan.job_name(RUN, "runner") == "bench-g3-runner"
    assert plan.results_configmap_name(RUN, 1) == "bench-g3-results-1"
    assert plan.is_release_of("bench", "bench-g3") and plan.is_release_of("bench", "bench-g12")
    assert not plan.is_release_of("bench", "bench-other-g3")
    assert not plan.is_release_of("bench", "benchx-g3")


def test_longest_allowed_name_fits_kubernetes_limits(voltdb):
    run = plan.Run(name="r" * 40, namespace="ns", uid="u", generation=123456)
    assert len(plan.job_name(run, "checker")) <= 63  # Job names become pod label values
    assert len(plan.release_name(run)) <= 53  # Helm's release name limit


def test_voltdb_endpoints_are_pod_dns_names(voltdb):
    assert plan.endpoints(RUN, voltdb) == [f"bench-g3-{i}.bench-g3-hl.perf.svc.cluster.local:21212" for i in range(3)]


def test_helm_release_values(voltdb):
    voltdb = edited(
        voltdb, "database.deploy.values", {"replicas": 99, "image": {"repository": "x"}, "podLabels": {"team": "db"}}
    )
    rel = plan.helm_release(RUN, voltdb, SETTINGS)
    assert rel.name == "bench-g3" and rel.namespace == "perf" and rel.chart == str(CHARTS / "voltdb")
    assert rel.values["replicas"] == 3 and rel.values["kfactor"] == 1  # the spec decides
    assert rel.values["image"] == {"repository": "x"}  # user values pass through
    assert rel.values["podLabels"]["team"] == "db"
    assert rel.values["podLabels"][plan.LABEL_RUN] == "bench"
    assert rel.values["podLabels"][plan.LABEL_ROLE] == "database"


def test_custom_chart_reference(spec_of):
    spec = spec_of({"database": {"type": "mongodb", "deploy": {"chart": "oci://r/mongo", "version": "1.2.3"}}})
    rel = plan.helm_release(RUN, spec, replace(SETTINGS, allowed_charts=("oci://r/mongo",)))
    assert (rel.chart, rel.version) == ("oci://r/mongo", "1.2.3")
    assert "kfactor" not in rel.values


def test_run_job_is_an_indexed_barrier_job(voltdb):
    job = runner_jobs.run_job(RUN, voltdb, SETTINGS)
    s = job["spec"]
    assert s["completionMode"] == "Indexed" and s["completions"] == 2 and s["parallelism"] == 2
    assert s["backoffLimit"] == 0 and s["activeDeadlineSeconds"] > 60 + 5
    c = container(job)
    args = c["args"]
    assert c["command"] == ["tpcc"] and args[0] == "run"
    assert flag(args, "--db") == "voltdb"
    assert flag(args, "--total-clients") == "8"  # shared out over the 2 pods by the runner
    assert flag(args, "--warehouses") == "2"
    assert flag(args, "--duration") == "60" and flag(args, "--warmup") == "5"
    assert flag(args, "--mix") == "45,43,4,4,4"
    assert flag(args, "--shard") == "$(JOB_COMPLETION_INDEX)/2"
    assert flag(args, "--start-configmap") == "perf/bench-g3-start"
    assert flag(args, "--results-configmap") == "perf/bench-g3-results-$(JOB_COMPLETION_INDEX)"
    assert flag(args, "--driver-opt") == "schema=normalized"
    assert flag(args, "--metrics-port") == "9100"
    assert c["ports"] == [
        {"name": "metrics", "containerPort": 9100, "protocol": "TCP"},
        {"name": "ledger", "containerPort": plan.LEDGER_PORT, "protocol": "TCP"},
    ]
    # each pod keeps its ledger after its window until the verifier has read all of them
    assert flag(args, "--ledger") == "/tmp/ledger.log" and "--verify-ledger" not in args
    assert flag(args, "--hold-ledger") == "perf/bench-g3-start"
    assert flag(args, "--ledger-port") == str(plan.LEDGER_PORT)
    hold = int(flag(args, "--hold-timeout"))
    assert hold == runner_jobs.ledger_hold_seconds(voltdb) > voltdb.verify.timeout_seconds
    assert s["activeDeadlineSeconds"] > hold + 60 + 5
    # Ready = all its terminals connected (the runner's /ready), not merely the server up
    assert c["readinessProbe"]["httpGet"] == {"path": "/ready", "port": "metrics"}
    assert flag(args, "--seed") == str(runner_jobs.run_seed(RUN, voltdb)) and "--think-time" not in args
    labels = s["template"]["metadata"]["labels"]
    assert labels[plan.LABEL_ROLE] == "runner" and labels[plan.LABEL_DB] == "voltdb"
    assert labels[plan.LABEL_RUN] == "bench" and labels[plan.LABEL_MANAGED_BY] == "tpcc-operator"
    assert job["metadata"]["ownerReferences"][0]["uid"] == "uid-1"


def test_one_seed_for_the_loader_and_every_runner_pod(voltdb, spec_of):
    seed = runner_jobs.run_seed(RUN, voltdb)
    assert flag(container(runner_jobs.load_job(RUN, voltdb, SETTINGS))["args"], "--seed") == str(seed)
    # stable across operator restarts (a function of UID and generation), new per run
    assert runner_jobs.run_seed(plan.Run("bench", "perf", "uid-1", 3), voltdb) == seed
    assert runner_jobs.run_seed(plan.Run("bench", "perf", "uid-1", 4), voltdb) != seed
    assert runner_jobs.run_seed(plan.Run("bench", "perf", "uid-2", 3), voltdb) != seed
    assert 0 <= seed < 2**31
    chosen = spec_of({"database": {"type": "voltdb"}, "workload": {"seed": 1234, "pacing": "spec"}})
    assert runner_jobs.run_seed(RUN, chosen) == 1234
    args = container(runner_jobs.run_job(RUN, chosen, SETTINGS))["args"]
    assert flag(args, "--seed") == "1234" and "--think-time" in args
    assert flag(container(runner_jobs.load_job(RUN, chosen, SETTINGS))["args"], "--seed") == "1234"


def test_remote_percents_reach_the_runners_only_when_given(voltdb, spec_of):
    assert "--remote-line-percent" not in container(runner_jobs.run_job(RUN, voltdb, SETTINGS))["args"]
    study = spec_of({"database": {"type": "voltdb"}, "workload": {"remotePercent": {"newOrderLines": 0}}})
    args = container(runner_jobs.run_job(RUN, study, SETTINGS))["args"]
    assert flag(args, "--remote-line-percent") == "0" and "--remote-payment-percent" not in args


def test_pods_run_as_non_root(voltdb):
    for job in (
        runner_jobs.load_job(RUN, voltdb, SETTINGS),
        runner_jobs.run_job(RUN, voltdb, SETTINGS),
        runner_jobs.check_job(RUN, voltdb, SETTINGS),
    ):
        pod = job["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["securityContext"]["runAsUser"] == 1000
        sc = pod["containers"][0]["securityContext"]
        assert sc["readOnlyRootFilesystem"] and not sc["allowPrivilegeEscalation"]
        assert sc["capabilities"] == {"drop": ["ALL"]}
        assert pod["serviceAccountName"] == "bench-g3-runner"


def test_loader_resets_and_writes_what_it_loaded_into_the_check_configmap(voltdb):
    job = runner_jobs.load_job(RUN, voltdb, SETTINGS)
    args = container(job)["args"]
    assert args[0] == "load" and "--reset" in args and flag(args, "--workers") == "4"
    # load.json for status.load: the token of the runner service account, which may patch only
    # the run's own ConfigMaps
    assert flag(args, "--results-configmap") == "perf/bench-g3-check"
    assert job["spec"]["template"]["spec"]["automountServiceAccountToken"] is True
    assert job["spec"]["activeDeadlineSeconds"] == 900  # from the size: 1 warehouse
    voltdb = edited(voltdb, "workload.resetBeforeLoad", False)
    assert "--reset" not in container(runner_jobs.load_job(RUN, voltdb, SETTINGS))["args"]


def test_check_job_writes_its_configmap(voltdb):
    args = container(runner_jobs.check_job(RUN, voltdb, SETTINGS))["args"]
    assert args[0] == "check" and flag(args, "--results-configmap") == "perf/bench-g3-check"
    assert flag(args, "--metrics-port") == "0"


def test_external_credentials_come_from_the_secret(external_mongo):
    c = container(runner_jobs.run_job(RUN, external_mongo, SETTINGS))
    env = {e["name"]: e for e in c["env"]}
    assert env["TPCC_DB_USERNAME"]["valueFrom"]["secretKeyRef"] == {"name": "mongo-creds", "key": "username"}
    assert env["TPCC_DB_PASSWORD"]["valueFrom"]["secretKeyRef"] == {"name": "mongo-creds", "key": "password"}
    assert flag(c["args"], "--endpoints") == "m-0.db:27017,m-1.db:27017"
    opts = [c["args"][i + 1] for i, a in enumerate(c["args"]) if a == "--driver-opt"]
    assert opts == ["find_and_modify=true", "write_concern=majority"]
    assert not external_mongo.database.deployed


def test_runner_rbac_is_limited_to_its_configmaps(voltdb):
    sa, role, binding = plan.runner_rbac(RUN, voltdb)
    assert sa["kind"] == "ServiceAccount" and role["kind"] == "Role" and binding["kind"] == "RoleBinding"
    rules = role["rules"]
    assert all(r["resources"] == ["configmaps"] for r in rules)
    by_verbs = {tuple(r["verbs"]): r["resourceNames"] for r in rules}
    assert by_verbs[("get",)] == ["bench-g3-start"]
    assert by_verbs[("get", "patch")] == ["bench-g3-results-0", "bench-g3-results-1", "bench-g3-check"]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "bench-g3-runner", "namespace": "perf"}]


def test_one_results_configmap_per_runner_pod(voltdb):
    names = [cm["metadata"]["name"] for cm in plan.configmaps(RUN, voltdb)]
    assert names == ["bench-g3-start", "bench-g3-results-0", "bench-g3-results-1", "bench-g3-check"]
    kinds = [o["kind"] for o in plan.run_objects(RUN, voltdb)]
    assert kinds.index("ServiceAccount") < kinds.index("ConfigMap")


# ---- what a BenchmarkRun may install: refused before Helm runs ---------------------------------


@pytest.mark.parametrize(
    "chart",
    [
        "https://evil.example/charts/miner-1.0.0.tgz",
        "/etc",
        "../../charts/voltdb",
        "oci://r/mongo",
        "mongodb",
        "bitnami/voltdb",
    ],
)
def test_a_foreign_chart_is_refused(spec_of, chart):
    spec = spec_of({"database": {"type": "voltdb", "deploy": {"chart": chart}}})
    with pytest.raises(plan.chart_policy.ReleaseRefused, match="database.deploy.chart .* is not allowed"):
        plan.helm_release(RUN, spec, SETTINGS)


def test_the_shipped_chart_by_name_is_the_shipped_chart(spec_of):
    spec = spec_of({"database": {"type": "mongodb", "deploy": {"chart": "mongodb"}}})
    assert plan.helm_release(RUN, spec, SETTINGS).chart == str(CHARTS / "mongodb")


@pytest.mark.parametrize(
    "db, values, says",
    [
        (
            "voltdb",
            {"podSecurityContext": {"runAsNonRoot": True, "runAsUser": 0}},
            "database.deploy.values.podSecurityContext.runAsUser: must be at least 1",
        ),
        (
            "voltdb",
            {"podSecurityContext": {"runAsNonRoot": False}},
            "podSecurityContext.runAsNonRoot: must be one of true",
        ),
        ("voltdb", {"privileged": True}, "database.deploy.values.privileged: not a value of this chart"),
        ("mongodb", {"hostNetwork": True}, "database.deploy.values.hostNetwork: not a value of this chart"),
        ("mongodb", {"serviceAccountName": "admin"}, "serviceAccountName: not a value of this chart"),
        (
            "voltdb",
            {"podSecurityContext": {"runAsNonRoot": True, "privileged": True}},
            "podSecurityContext.privileged: not a value of this chart",
        ),
        (
            "voltdb",
            {"dataVolume": {"sizeLimit": "1Gi}\n      - name: host\n        hostPath: {path: /"}},
            "database.deploy.values.dataVolume.sizeLimit",
        ),
        ("voltdb", {"heap": "512m -Dx=$(id)"}, "database.deploy.values.heap"),
        ("mongodb", {"extraArgs": ["--quiet; rm -rf /"]}, "database.deploy.values.extraArgs[0]"),
        ("mongodb", {"resources": {"limits": {"memory": "lots"}}}, "database.deploy.values.resources.limits.memory"),
        ("mongodb", {"podLabels": {"bad key!": "x"}}, "database.deploy.values.podLabels: key"),
    ],
)
def test_values_the_chart_does_not_expose_are_refused(spec_of, db, values, says):
    spec = spec_of({"database": {"type": db, "deploy": {"replicas": 3, "values": values}}})
    with pytest.raises(plan.chart_policy.ReleaseRefused) as refused:
        plan.helm_release(RUN, spec, SETTINGS)
    assert says in str(refused.value)


def test_values_the_chart_exposes_pass(spec_of):
    values = {
        "image": {"repository": "registry.example:5000/db/voltdb", "tag": "10.1.1", "pullPolicy": "Never"},
        "heap": "2g",
        "resources": {"requests": {"cpu": "1", "memory": "3Gi"}, "limits": {"memory": "4Gi"}},
        "dataVolume": {"sizeLimit": "8Gi"},
        "podSecurityContext": {"runAsNonRoot": True, "runAsUser": 2000},
    }
    spec = spec_of({"database": {"type": "voltdb", "deploy": {"values": values}}})
    assert plan.helm_release(RUN, spec, SETTINGS).values["heap"] == "2g"


def test_an_allowlisted_chart_is_installed_as_written(spec_of):
    spec = spec_of({"database": {"type": "voltdb", "deploy": {"chart": "oci://r/voltdb", "values": {"any": 1}}}})
    rel = plan.helm_release(RUN, spec, replace(SETTINGS, allowed_charts=("oci://r/voltdb",)))
    assert rel.chart == "oci://r/voltdb" and rel.values["any"] == 1


# ---- resources and resets -----------------------------------------------------------------------


def test_every_pod_gets_default_requests_and_limits(voltdb):
    for job in (
        runner_jobs.load_job(RUN, voltdb, SETTINGS),
        runner_jobs.run_job(RUN, voltdb, SETTINGS),
        runner_jobs.check_job(RUN, voltdb, SETTINGS),
    ):
        resources = container(job)["resources"]
        assert resources == {"requests": {"cpu": "250m", "memory": "256Mi"}, "limits": {"cpu": "2", "memory": "2Gi"}}


def test_spec_resources_override_the_defaults_value_by_value(voltdb):
    voltdb = edited(voltdb, "runners.resources", {"requests": {"memory": "3Gi"}, "limits": {"cpu": "4"}})
    settings = replace(
        SETTINGS,
        pod_resources=plan.PodResources.parse(
            '{"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": "1", "memory": "1Gi"}}'
        ),
    )
    resources = container(runner_jobs.run_job(RUN, voltdb, settings))["resources"]
    # the default memory limit (1Gi) is below the 3Gi request: raised to it, never a Job the API refuses
    assert resources == {"requests": {"cpu": "100m", "memory": "3Gi"}, "limits": {"cpu": "4", "memory": "3Gi"}}


def test_the_pods_beside_held_runners_ask_for_little_cpu(voltdb):
    """The runners hold their requests until the verifier has read their ledgers: a verifier
    asking for as much could not be scheduled on a node they fill, and both would wait."""
    voltdb = edited(voltdb, "verify.duringRun", True)
    for job in (
        runner_jobs.verifier_job(RUN, voltdb, SETTINGS, {0: "10.0.0.6"}),
        runner_jobs.midcheck_job(RUN, voltdb, SETTINGS),
    ):
        resources = container(job)["resources"]
        assert resources == {"requests": {"cpu": "50m", "memory": "256Mi"}, "limits": {"cpu": "2", "memory": "2Gi"}}
    # a user's memory and limits are theirs; a CPU request already below 50m is kept
    voltdb = edited(voltdb, "runners.resources", {"requests": {"cpu": "20m", "memory": "1Gi"}, "limits": {"cpu": "1"}})
    resources = container(runner_jobs.verifier_job(RUN, voltdb, SETTINGS, {0: "10.0.0.6"}))["resources"]
    assert resources == {"requests": {"cpu": "20m", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "2Gi"}}
    voltdb = edited(voltdb, "runners.resources", {"requests": {"cpu": "2"}})
    assert (
        container(runner_jobs.verifier_job(RUN, voltdb, SETTINGS, {0: "10.0.0.6"}))["resources"]["requests"]["cpu"]
        == "50m"
    )


def test_an_external_database_is_never_reset_unless_asked(external_mongo):
    args = container(runner_jobs.load_job(RUN, external_mongo, SETTINGS))["args"]
    assert "--reset" not in args and "--refuse-existing" in args
    external_mongo = edited(external_mongo, "workload.resetBeforeLoad", False)
    args = container(runner_jobs.load_job(RUN, external_mongo, SETTINGS))["args"]
    assert "--reset" not in args and "--refuse-existing" in args
    external_mongo = edited(external_mongo, "workload.resetBeforeLoad", True)
    args = container(runner_jobs.load_job(RUN, external_mongo, SETTINGS))["args"]
    assert "--reset" in args and "--refuse-existing" not in args


def test_a_deployed_database_is_reset_unless_told_to_resume(voltdb):
    assert "--reset" in container(runner_jobs.load_job(RUN, voltdb, SETTINGS))["args"]
    voltdb = edited(voltdb, "workload.resetBeforeLoad", False)
    args = container(runner_jobs.load_job(RUN, voltdb, SETTINGS))["args"]
    assert "--reset" not in args and "--refuse-existing" not in args


def test_the_verifier_reads_every_runner_pods_ledger(voltdb):
    job = runner_jobs.verifier_job(RUN, voltdb, SETTINGS, {1: "10.0.0.7", 0: "10.0.0.6"})
    c = container(job)
    args = c["args"]
    assert args[0] == "verify-ledger" and flag(args, "--db") == "voltdb"
    ledgers = [args[i + 1] for i, a in enumerate(args) if a == "--ledger"]
    assert ledgers == [f"http://10.0.0.6:{plan.LEDGER_PORT}/ledger", f"http://10.0.0.7:{plan.LEDGER_PORT}/ledger"]
    assert flag(args, "--results-configmap") == "perf/bench-g3-check"
    assert job["metadata"]["name"] == "bench-g3-verifier"
    assert job["spec"]["activeDeadlineSeconds"] == voltdb.verify.timeout_seconds
    assert job["spec"]["template"]["spec"]["automountServiceAccountToken"] is True


def test_the_checker_counts_deliveries_from_the_runners(voltdb):
    job = runner_jobs.check_job(RUN, voltdb, SETTINGS)
    c = container(job)
    assert flag(c["args"], "--deliveries") == f"{runner_jobs.CHECK_INPUT_DIR}/deliveries.json"
    volume = next(v for v in job["spec"]["template"]["spec"]["volumes"] if v["name"] == "check-input")
    assert volume["configMap"] == {
        "name": "bench-g3-check",
        "items": [{"key": "deliveries.json", "path": "deliveries.json"}],
    }
    assert {"name": "check-input", "mountPath": runner_jobs.CHECK_INPUT_DIR, "readOnly": True} in c["volumeMounts"]


@pytest.fixture
def sharded_mongo(spec_of):
    return spec_of(
        {
            "database": {
                "type": "mongodb",
                "deploy": {
                    "replicas": 3,
                    "values": {
                        "topology": "sharded",
                        "sharded": {"shards": 3, "mongos": {"replicas": 2}},
                        "auth": {"enabled": True, "existingSecret": "mongo-root", "usernameKey": "user"},
                    },
                },
            }
        }
    )


def test_a_sharded_mongodb_is_reached_through_every_mongos_by_name(sharded_mongo, spec_of):
    """Not the shard members and not one Service VIP: each router, so a transaction stays on
    the mongos it started on."""
    assert plan.endpoints(RUN, sharded_mongo) == [
        f"bench-g3-mongos-{i}.bench-g3-hl.perf.svc.cluster.local:27017" for i in range(2)
    ]
    # the operator waits for every pod: 3 config servers, 3 shards of 3, 2 routers
    assert plan.database_pod_count(sharded_mongo) == 3 + 3 * 3 + 2
    replica_set = spec_of({"database": {"type": "mongodb", "deploy": {"replicas": 3}}})
    assert plan.endpoints(RUN, replica_set) == [
        f"bench-g3-{i}.bench-g3-hl.perf.svc.cluster.local:27017" for i in range(3)
    ]
    assert plan.database_pod_count(replica_set) == 3
    defaults = spec_of({"database": {"type": "mongodb", "deploy": {"values": {"topology": "sharded"}}}})
    assert mongodb.topology(defaults.deploy) == mongodb.Topology(True, 1, 2, 3, 2)
    assert len(plan.endpoints(RUN, defaults)) == 2 and plan.database_pod_count(defaults) == 3 + 2 + 2


def test_faults_on_a_sharded_mongodb_are_refused_before_the_install(sharded_mongo):
    kill = {"action": "kill-primary", "afterSeconds": 10, "everySeconds": 10, "count": 1}
    assert plan.helm_release(RUN, sharded_mongo, SETTINGS).values["topology"] == "sharded"
    sharded_mongo = edited(sharded_mongo, "faults", [kill])
    with pytest.raises(plan.chart_policy.ReleaseRefused, match="spec.faults are not supported on a sharded mongodb"):
        plan.helm_release(RUN, sharded_mongo, SETTINGS)
    sharded_mongo = edited(sharded_mongo, "database.deploy.values.topology", "replicaset")
    assert plan.helm_release(RUN, sharded_mongo, SETTINGS).values["topology"] == "replicaset"


def test_sharded_defaults_are_the_charts():
    values = yaml.safe_load((CHARTS / "mongodb" / "values.yaml").read_text())["sharded"]
    assert mongodb.SHARDED_DEFAULTS == {
        "shards": values["shards"],
        "configServers": values["configServers"],
        "mongos": values["mongos"]["replicas"],
    }


def test_a_deployed_mongodb_with_auth_gives_the_runners_the_charts_root_user(sharded_mongo, spec_of):
    env = {e["name"]: e for e in container(runner_jobs.run_job(RUN, sharded_mongo, SETTINGS))["env"]}
    assert env["TPCC_DB_USERNAME"]["valueFrom"]["secretKeyRef"] == {"name": "mongo-root", "key": "user"}
    assert env["TPCC_DB_PASSWORD"]["valueFrom"]["secretKeyRef"] == {"name": "mongo-root", "key": "password"}
    no_auth = spec_of({"database": {"type": "mongodb", "deploy": {"replicas": 3}}})
    assert "TPCC_DB_USERNAME" not in {e["name"] for e in container(runner_jobs.run_job(RUN, no_auth, SETTINGS))["env"]}
    # the values the operator installs pass the chart's schema
    release = plan.helm_release(RUN, sharded_mongo, SETTINGS)
    assert release.values["topology"] == "sharded" and release.values["replicas"] == 3
