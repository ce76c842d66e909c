"""The conventions chart users check for: Chart.yaml's metadata, image.tag defaulting to the
chart's appVersion, the recommended app.kubernetes.io labels on every object the charts and the
operator make (pod templates included; selectors unchanged), a `helm test` and ci/ values for
every chart, and NOTES that say what was installed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from pod_security import TEMPLATE_PATHS
from test_charts import CHARTS, HELM, VALUE_SET_IDS, VALUE_SETS, by_kind, helm, render
from test_pod_security import OPERATOR_IDS, OPERATOR_VALUE_SETS, rendered
from tpcc_operator import plan, runner_jobs

pytestmark = pytest.mark.skipif(HELM is None, reason="no helm CLI (hack/local-k8s.sh tools fetches it)")

RECOMMENDED = ("name", "instance", "version", "component", "part-of", "managed-by")
CHART_NAMES = ("tpcc-operator", "voltdb", "mongodb")
RUN = plan.Run(name="bench", namespace="perf", uid="uid-1", generation=3)
SETTINGS = plan.Settings(charts_dir=CHARTS, runner_image="local/tpcc-runner:dev")
# every optional object of the operator chart
EVERYTHING = [
    *("--set", "monitoring.podMonitor.enabled=true", "--set", "monitoring.serviceMonitor.enabled=true"),
    *("--set", "monitoring.prometheusRule.enabled=true", "--set", "monitoring.dashboards.enabled=true"),
]


def chart_yaml(chart: str) -> dict:
    return yaml.safe_load((CHARTS / chart / "Chart.yaml").read_text())


def missing(labels: dict | None) -> list[str]:
    return [k for k in RECOMMENDED if not (labels or {}).get(f"app.kubernetes.io/{k}")]


@pytest.mark.parametrize("chart", CHART_NAMES)
def test_chart_yaml_names_its_maintainers_keywords_and_where_it_comes_from(chart):
    meta = chart_yaml(chart)
    assert meta["maintainers"] and all(m["name"] for m in meta["maintainers"])
    assert len(meta["keywords"]) >= 3
    assert meta["sources"] and all(s.startswith("https://") for s in meta["sources"])
    if chart != "tpcc-operator":  # the database's own home (the operator's: once it is published)
        assert meta["home"].startswith("https://")


@pytest.mark.parametrize("chart", CHART_NAMES)
def test_the_image_tag_defaults_to_the_charts_app_version(chart):
    values = yaml.safe_load((CHARTS / chart / "values.yaml").read_text())
    assert values["image"]["tag"] == ""
    images = {
        c["image"]
        for _, pod in _pods(rendered(chart))
        for c in pod["containers"]
        if c["image"].startswith(values["image"]["repository"] + ":")
    }
    assert images == {f"{values['image']['repository']}:{chart_yaml(chart)['appVersion']}"}
    tagged = {c["image"] for _, pod in _pods(render(chart, "--set", "image.tag=9.9")) for c in pod["containers"]}
    assert f"{values['image']['repository']}:9.9" in tagged


def _pods(docs):
    for doc in docs:
        path = TEMPLATE_PATHS.get(doc["kind"])
        if path:
            node = doc
            for key in path:
                node = node[key]
            yield doc, node


@pytest.mark.parametrize(
    "chart, values",
    VALUE_SETS + OPERATOR_VALUE_SETS + [("tpcc-operator", EVERYTHING)],
    ids=VALUE_SET_IDS + OPERATOR_IDS + ["tpcc-operator-everything"],
)
def test_every_chart_object_and_pod_carries_the_recommended_labels(chart, values):
    docs = rendered(chart, *values)
    for doc in docs:
        where = f"{chart} {doc['kind']}/{doc['metadata']['name']}"
        assert missing(doc["metadata"].get("labels")) == [], where
        template = (doc.get("spec") or {}).get("template")
        if template and doc["kind"] in TEMPLATE_PATHS:
            assert missing(template["metadata"]["labels"]) == [], f"{where} pod template"
            # the selector is what it was (a changed StatefulSet/Deployment selector fails an upgrade)
            assert set(doc["spec"]["selector"]["matchLabels"]) <= {
                "app.kubernetes.io/name",
                "app.kubernetes.io/instance",
                "app.kubernetes.io/component",
            }
            assert doc["spec"]["selector"]["matchLabels"].items() <= template["metadata"]["labels"].items()


def test_the_database_pods_keep_the_operators_labels_over_the_charts():
    """The operator finds a run's database pods by podLabels (managed-by tpcc-operator among them)."""
    pod_labels = plan.labels(RUN, None, "database")
    for chart in ("voltdb", "mongodb"):
        args = ["--set-json", f"podLabels={json.dumps(pod_labels)}"]
        for doc, _ in _pods(render(chart, "--skip-tests", *args)):
            labels = doc["spec"]["template"]["metadata"]["labels"]
            assert pod_labels.items() <= labels.items() and labels["app.kubernetes.io/name"] == chart
            assert not missing(labels)


def test_every_object_the_operator_makes_for_a_run_carries_the_recommended_labels(spec_of):
    spec = spec_of({"database": {"type": "voltdb"}, "workload": {"warehouses": 1, "durationSeconds": 60}})
    jobs = [
        runner_jobs.load_job(RUN, spec, SETTINGS),
        runner_jobs.run_job(RUN, spec, SETTINGS),
        runner_jobs.check_job(RUN, spec, SETTINGS),
    ]
    for obj in [*jobs, *plan.configmaps(RUN, spec), *plan.runner_rbac(RUN, spec)]:
        labels = obj["metadata"]["labels"]
        assert missing(labels) == (["component"] if obj["kind"] != "Job" else []), obj["metadata"]["name"]
        assert labels["app.kubernetes.io/instance"] == "bench-g3"
    for job in jobs:
        labels = job["spec"]["template"]["metadata"]["labels"]
        assert not missing(labels) and labels["app.kubernetes.io/component"] == labels[plan.LABEL_ROLE]


@pytest.mark.parametrize("values", [[]] + [a for _, a in OPERATOR_VALUE_SETS[1:]], ids=OPERATOR_IDS)
def test_the_operator_chart_lints_with_every_ci_value_set_and_has_a_helm_test(values):
    out = helm("lint", "--strict", str(CHARTS / "tpcc-operator"), *values)
    assert out.returncode == 0, out.stdout + out.stderr
    (pod,) = [d for d in rendered("tpcc-operator", *values) if d["metadata"].get("annotations", {}).get("helm.sh/hook")]
    assert pod["metadata"]["annotations"]["helm.sh/hook"] == "test"
    assert "http://rel.ns.svc:9090/metrics" in pod["spec"]["containers"][0]["command"][-1]
    assert not [d for d in render("tpcc-operator", "--set", "metricsPort=0") if d["kind"] == "Pod"]


def notes(tmp_path: Path, chart: str, *args: str) -> str:
    """The chart's NOTES.txt rendered offline (as test_chart_notes.py: a copy whose NOTES are a
    ConfigMap's value)."""
    copy = tmp_path / chart
    shutil.copytree(CHARTS / chart, copy)
    body = (copy / "templates" / "NOTES.txt").read_text()
    (copy / "templates" / "_notes_under_test.tpl").write_text('{{- define "nut" -}}' + body + "{{- end }}")
    (copy / "templates" / "nut.yaml").write_text(
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: n}\ndata: {notes: {{ include "nut" . | quote }}}\n'
    )
    out = helm("template", "rel", str(copy), "-n", "ns", "--show-only", "templates/nut.yaml", *args)
    assert out.returncode == 0, out.stderr
    return " ".join(yaml.safe_load(out.stdout)["data"]["notes"].split())


def test_the_database_charts_notes_say_what_was_installed(tmp_path):
    text = notes(tmp_path / "v", "voltdb")
    assert "Installed: StatefulSet rel (1 pod(s) of local/voltdb:10.1.1" in text
    assert "2Gi PersistentVolumeClaim" in text and "ConfigMap rel-config" in text and "uid 1000" in text
    assert "emptyDir of 2Gi" in notes(tmp_path / "v2", "voltdb", "--set", "persistence.enabled=false")
    text = notes(tmp_path / "m", "mongodb", "-f", str(CHARTS / "mongodb" / "ci" / "sharded-values.yaml"))
    assert "StatefulSets rel-cfg, rel-shard<i> and rel-mongos (image mongo:7.0" in text
    assert "PodDisruptionBudget per replica set and for the routers" in text and "uid 999" in text
    text = notes(tmp_path / "a", "mongodb", "-f", str(CHARTS / "mongodb" / "ci" / "replica-set-auth-values.yaml"))
    assert "Secret rel-keyfile" in text


def test_every_chart_has_ci_values_and_a_test_pod():
    for chart in CHART_NAMES:
        assert sorted((CHARTS / chart / "ci").glob("*-values.yaml")), chart
        docs = rendered(chart)
        assert [d for d in docs if d["metadata"].get("annotations", {}).get("helm.sh/hook") == "test"], chart
    assert by_kind(rendered("tpcc-operator"), "Deployment")


def test_the_operator_logs_json_lines_when_asked():
    def command(*args: str) -> list[str]:
        return by_kind(render("tpcc-operator", *args), "Deployment")[0]["spec"]["template"]["spec"]["containers"][0][
            "command"
        ]

    assert "--log-format=plain" in command()
    assert "--log-format=json" in command("--set", "logFormat=json")
    bad = helm("template", "rel", str(CHARTS / "tpcc-operator"), "--set", "logFormat=xml")
    assert bad.returncode != 0 and "logFormat" in bad.stderr
