"""spec -> plan of objects: names, Jobs on the runner's CLI contract, RBAC, Helm values."""
from __future__ import annotations

from pathlib import Path

import pytest

from tpcc_operator import plan

RUN = plan.Run(name="bench", namespace="perf", uid="uid-1", generation=3)
SETTINGS = plan.Settings(charts_dir=Path("/charts"), runner_image="local/tpcc-runner:dev")


@pytest.fixture
def voltdb(spec_of):
    return spec_of({"database": {"type": "voltdb", "deploy": {"replicas": 3, "kSafety": 1}},
                    "workload": {"warehouses": 2, "clients": 8, "durationSeconds": 60,
                                 "warmupSeconds": 5, "driverOptions": {"schema": "normalized"}},
                    "runners": {"parallelism": 2}})


@pytest.fixture
def external_mongo(spec_of):
    return spec_of({"database": {"type": "mongodb", "external": {
        "endpoints": ["m-0.db:27017", "m-1.db:27017"],
        "credentialsSecretRef": {"name": "mongo-creds"}}},
        "workload": {"driverOptions": {"write_concern": "majority", "find_and_modify": "true"}}})


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
    assert len(plan.release_name(run)) <= 53           # Helm's release name limit


def test_voltdb_endpoints_are_pod_dns_names(voltdb):
    assert plan.endpoints(RUN, voltdb) == [
        f"bench-g3-{i}.bench-g3-hl.perf.svc.cluster.local:21212" for i in range(3)]


def test_helm_release_values(voltdb):
    voltdb["database"]["deploy"]["values"] = {"replicas": 99, "image": {"repository": "x"},
                                              "podLabels": {"team": "db"}}
    rel = plan.helm_release(RUN, voltdb, SETTINGS)
    assert rel.name == "bench-g3" and rel.namespace == "perf" and rel.chart == "/charts/voltdb"
    assert rel.values["replicas"] == 3 and rel.values["kfactor"] == 1  # the spec decides
    assert rel.values["image"] == {"repository": "x"}                  # user values pass through
    assert rel.values["podLabels"]["team"] == "db"
    assert rel.values["podLabels"][plan.LABEL_RUN] == "bench"
    assert rel.values["podLabels"][plan.LABEL_ROLE] == "database"


def test_custom_chart_reference(spec_of):
    spec = spec_of({"database": {"type": "mongodb", "deploy": {"chart": "oci://r/mongo", "version": "1.2.3"}}})
    rel = plan.helm_release(RUN, spec, SETTINGS)
    assert (rel.chart, rel.version) == ("oci://r/mongo", "1.2.3")
    assert "kfactor" not in rel.values


def test_run_job_is_an_indexed_barrier_job(voltdb):
    job = plan.run_job(RUN, voltdb, SETTINGS)
    s = job["spec"]
    assert s["completionMode"] == "Indexed" and s["completions"] == 2 and s["parallelism"] == 2
    assert s["backoffLimit"] == 0 and s["activeDeadlineSeconds"] > 60 + 5
    c = container(job)
    args = c["args"]
    assert c["command"] == ["tpcc"] and args[0] == "run"
    assert flag(args, "--db") == "voltdb"
    assert flag(args, "--clients") == "4"  # 8 clients over 2 pods
    assert flag(args, "--warehouses") == "2"
    assert flag(args, "--duration") == "60" and flag(args, "--warmup") == "5"
    assert flag(args, "--mix") == "45,43,4,4,4"
    assert flag(args, "--shard") == "$(JOB_COMPLETION_INDEX)/2"
    assert flag(args, "--start-configmap") == "perf/bench-g3-start"
    assert flag(args, "--results-configmap") == "perf/bench-g3-results-$(JOB_COMPLETION_INDEX)"
    assert flag(args, "--driver-opt") == "schema=normalized"
    assert flag(args, "--metrics-port") == "9100"
    assert c["ports"] == [{"name": "metrics", "containerPort": 9100, "protocol": "TCP"}]
    assert c["readinessProbe"]["httpGet"] == {"path": "/metrics", "port": "metrics"}
    labels = s["template"]["metadata"]["labels"]
    assert labels[plan.LABEL_ROLE] == "runner" and labels[plan.LABEL_DB] == "voltdb"
    assert labels[plan.LABEL_RUN] == "bench" and labels[plan.LABEL_MANAGED_BY] == "tpcc-operator"
    assert job["metadata"]["ownerReferences"][0]["uid"] == "uid-1"


def test_pods_run_as_non_root(voltdb):
    for job in (plan.load_job(RUN, voltdb, SETTINGS), plan.run_job(RUN, voltdb, SETTINGS),
                plan.check_job(RUN, voltdb, SETTINGS)):
        pod = job["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["securityContext"]["runAsUser"] == 1000
        sc = pod["containers"][0]["securityContext"]
        assert sc["readOnlyRootFilesystem"] and not sc["allowPrivilegeEscalation"]
        assert sc["capabilities"] == {"drop": ["ALL"]}
        assert pod["serviceAccountName"] == "bench-g3-runner"


def test_loader_has_no_api_token_and_resets(voltdb):
    job = plan.load_job(RUN, voltdb, SETTINGS)
    args = container(job)["args"]
    assert args[0] == "load" and "--reset" in args and flag(args, "--workers") == "4"
    assert job["spec"]["template"]["spec"]["automountServiceAccountToken"] is False
    assert job["spec"]["activeDeadlineSeconds"] == 3600
    voltdb["workload"]["resetBeforeLoad"] = False
    assert "--reset" not in container(plan.load_job(RUN, voltdb, SETTINGS))["args"]


def test_check_job_writes_its_configmap(voltdb):
    args = container(plan.check_job(RUN, voltdb, SETTINGS))["args"]
    assert args[0] == "check" and flag(args, "--results-configmap") == "perf/bench-g3-check"
    assert flag(args, "--metrics-port") == "0"


def test_external_credentials_come_from_the_secret(external_mongo):
    c = container(plan.run_job(RUN, external_mongo, SETTINGS))
    env = {e["name"]: e for e in c["env"]}
    assert env["TPCC_DB_USERNAME"]["valueFrom"]["secretKeyRef"] == {"name": "mongo-creds", "key": "username"}
    assert env["TPCC_DB_PASSWORD"]["valueFrom"]["secretKeyRef"] == {"name": "mongo-creds", "key": "password"}
    assert flag(c["args"], "--endpoints") == "m-0.db:27017,m-1.db:27017"
    opts = [c["args"][i + 1] for i, a in enumerate(c["args"]) if a == "--driver-opt"]
    assert opts == ["find_and_modify=true", "write_concern=majority"]
    assert not plan.is_deployed(external_mongo)


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
