"""Every pod the operator and the charts create passes the `restricted` Pod Security Standard
(pod_security.py): the runner Jobs the operator builds, the operator chart's Deployment and test
pod, and the database charts' StatefulSets and test pods under their defaults and every ci/ value
set. The e2e tests run in namespaces that enforce it (e2e/conftest.py), so the real admission
plugin judges the same pods there."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from pod_security import pod_specs, violations
from test_charts import CHARTS, HELM, VALUE_SET_IDS, VALUE_SETS, render
from tpcc_operator import plan, runner_jobs

RUN = plan.Run(name="bench", namespace="perf", uid="uid-1", generation=3)
SETTINGS = plan.Settings(charts_dir=CHARTS, runner_image="local/tpcc-runner:dev")

OPERATOR_VALUE_SETS = [
    ("tpcc-operator", [*(["-f", str(values)] if values else [])])
    for values in [None, *sorted((CHARTS / "tpcc-operator" / "ci").glob("*-values.yaml"))]
]
OPERATOR_IDS = [
    f"tpcc-operator-{Path(args[1]).name.removesuffix('-values.yaml') if args else 'defaults'}"
    for _, args in OPERATOR_VALUE_SETS
]


@cache
def _rendered(chart: str, values: tuple[str, ...]) -> list[dict]:
    return render(chart, *values)


def rendered(chart: str, *values: str) -> list[dict]:
    """render(), once per chart and values in a session (the callers only read it)."""
    return _rendered(chart, values)


def test_the_check_knows_a_restricted_pod_from_others():
    good = {
        "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [
            {"name": "c", "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}}
        ],
        "volumes": [{"name": "d", "emptyDir": {}}, {"name": "p", "persistentVolumeClaim": {"claimName": "x"}}],
    }
    assert violations(good) == []
    bad = {
        "hostPID": True,
        "securityContext": {"runAsUser": 0},
        "containers": [
            {
                "name": "c",
                "ports": [{"containerPort": 80, "hostPort": 80}],
                "securityContext": {
                    "privileged": True,
                    "capabilities": {"add": ["NET_ADMIN"]},
                    "seccompProfile": {"type": "Unconfined"},
                },
            }
        ],
        "volumes": [{"name": "h", "hostPath": {"path": "/"}}],
    }
    found = "\n".join(violations(bad))
    for field in (
        "hostPID",
        "runAsUser",
        "privileged",
        "hostPort",
        "allowPrivilegeEscalation",
        "capabilities.drop",
        "capabilities.add",
        "runAsNonRoot",
        "seccompProfile",
        "hostPath",
    ):
        assert field in found, field
    # a container may not opt out of what its pod sets
    opted_out = {**good, "containers": [{**good["containers"][0], "securityContext": {"runAsNonRoot": False}}]}
    assert any("runAsNonRoot" in v for v in violations(opted_out))


@pytest.mark.skipif(HELM is None, reason="no helm CLI (hack/local-k8s.sh tools fetches it)")
@pytest.mark.parametrize("chart, values", VALUE_SETS + OPERATOR_VALUE_SETS, ids=VALUE_SET_IDS + OPERATOR_IDS)
def test_every_chart_pod_is_restricted(chart, values):
    """Helm test pods included: a user runs them in the same namespace."""
    pods = dict(pod_specs(rendered(chart, *values)))
    assert pods, f"{chart} renders no pod"
    for name, pod in pods.items():
        assert violations(pod) == [], f"{chart} {name}"


def test_every_runner_job_pod_is_restricted(spec_of):
    for database in ({"type": "voltdb", "deploy": {"replicas": 3, "kSafety": 1}}, {"type": "mongodb"}):
        spec = spec_of(
            {
                "database": database,
                "workload": {"warehouses": 1, "clients": 2, "durationSeconds": 60, "warmupSeconds": 5},
                "verify": {"duringRun": True},
            }
        )
        jobs = [
            runner_jobs.load_job(RUN, spec, SETTINGS),
            runner_jobs.run_job(RUN, spec, SETTINGS),
            runner_jobs.verifier_job(RUN, spec, SETTINGS, {0: "10.0.0.6"}),
            runner_jobs.check_job(RUN, spec, SETTINGS),
            runner_jobs.midcheck_job(RUN, spec, SETTINGS),
            runner_jobs.acid_job(RUN, spec, SETTINGS),
            runner_jobs.analyzer_job(RUN, spec, SETTINGS, 0.001),
        ]
        for name, pod in pod_specs(jobs):
            assert violations(pod) == [], f"{database['type']} {name}"
