"""The operator chart's NOTES say what the chart's values do: which namespaces the operator
watches (its own by default, not all), and what the release installed. Rendered offline by
`helm template` through a copy of the chart whose NOTES.txt is also a ConfigMap's value (helm
template leaves NOTES.txt out)."""

from __future__ import annotations

import shutil

import pytest
import yaml
from test_charts import CHARTS, HELM, helm

pytestmark = pytest.mark.skipif(HELM is None, reason="no helm CLI (hack/local-k8s.sh tools fetches it)")


def notes(tmp_path, *args: str) -> str:
    chart = tmp_path / "tpcc-operator"
    shutil.copytree(CHARTS / "tpcc-operator", chart)
    body = (chart / "templates" / "NOTES.txt").read_text()
    (chart / "templates" / "_notes_under_test.tpl").write_text(
        '{{- define "notes-under-test" -}}' + body + "{{- end }}"
    )
    (chart / "templates" / "notes-under-test.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: notes}\n"
        'data: {notes: {{ include "notes-under-test" . | quote }}}\n'
    )
    out = helm(
        "template",
        "rel",
        str(chart),
        "--namespace",
        "tpcc-system",
        "--show-only",
        "templates/notes-under-test.yaml",
        *args,
    )
    assert out.returncode == 0, out.stderr
    return " ".join(yaml.safe_load(out.stdout)["data"]["notes"].split())


def test_with_default_values_the_notes_say_it_watches_only_its_own_namespace(tmp_path):
    text = notes(tmp_path)
    assert "all namespaces" not in text and "every namespace" not in text
    assert "in namespace tpcc-system only (the release's own" in text
    assert "kubectl apply -n tpcc-system" in text and "kubectl get br -n tpcc-system -w" in text
    assert "ValidatingAdmissionPolicies" in text and "scheduling-reads" in text
    assert "PodMonitor" not in text and "ServiceMonitor" not in text


def test_the_notes_follow_watch_namespace_cluster_wide_and_monitoring(tmp_path):
    text = notes(tmp_path / "a", "--set", "watchNamespace=bench")
    assert "in namespace bench only" in text and "release's own" not in text and "kubectl apply -n bench" in text
    text = notes(tmp_path / "b", "--set", "clusterWide=true", "--set", "monitoring.serviceMonitor.enabled=true")
    assert "in every namespace (clusterWide: true" in text and "only" not in text.split("Installed")[0]
    assert "a ServiceMonitor" in text
    text = notes(tmp_path / "c", "--set", "admissionPolicy.enabled=false", "--set", "schedulingReads=false")
    assert "ValidatingAdmissionPolicies" not in text and "scheduling-reads" not in text
