#!/usr/bin/env python3
"""Writes the Grafana dashboard and the Prometheus rules, from the definitions below.

    python dashboards/generate.py           write the files
    python dashboards/generate.py --check   exit 1 if a written file is out of date

Outputs (commit them):
  dashboards/tpcc-benchmark.json                        the dashboard (Grafana schemaVersion 39)
  dashboards/rules/tpcc-rules.yaml                      the rule groups, default thresholds
  charts/tpcc-operator/files/dashboards/*.json          the same dashboard, for the chart's ConfigMap
  charts/tpcc-operator/files/tpcc-rules.yaml            the same groups, thresholds as Helm values
                                                        (rendered with `tpl` by prometheusrule.yaml)

Plain Python (no Grafana SDK): the JSON is small, and the tests import this module to find
every PromQL expression and variable the dashboard uses.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CHART_FILES = ROOT / "charts" / "tpcc-operator" / "files"
DASHBOARD_UID = "tpcc-benchmark"
DASHBOARD_FILE = "tpcc-benchmark.json"
RULES_FILE = "tpcc-rules.yaml"

DS = {"type": "prometheus", "uid": "${datasource}"}
# Every per-run series (runner pods via the PodMonitor, operator via the ServiceMonitor)
# carries namespace, run and db.
SEL = 'namespace=~"$namespace", run=~"$run", db=~"$db"'
# Series that name a run: what the namespace/run/db variables list.
RUN_SERIES = '__name__=~"tpcc_phase|tpcc_operator_run_.+"'
BY_RUN = "namespace, run, db"
RUN_LEGEND = "{{namespace}}/{{run}} ({{db}})"
QUANTILES = (0.5, 0.9, 0.99)


# ---------------------------------------------------------------------------- dashboard


class Layout:
    """Assigns panel ids and grid positions: panels fill 24 columns left to right."""

    def __init__(self) -> None:
        self.panels: list[dict] = []
        self.x = self.y = self.row_h = 0

    def _next_id(self) -> int:
        return len(self.panels) + 1

    def row(self, title: str) -> None:
        self._newline()
        self.panels.append(
            {
                "id": self._next_id(),
                "type": "row",
                "title": title,
                "collapsed": False,
                "panels": [],
                "gridPos": {"h": 1, "w": 24, "x": 0, "y": self.y},
            }
        )
        self.y += 1

    def _newline(self) -> None:
        if self.x:
            self.y += self.row_h
        self.x = self.row_h = 0

    def add(self, panel: dict, w: int, h: int = 8) -> None:
        if self.x + w > 24:
            self._newline()
        panel = {"id": self._next_id(), **panel, "gridPos": {"h": h, "w": w, "x": self.x, "y": self.y}}
        self.panels.append(panel)
        self.x += w
        self.row_h = max(self.row_h, h)


def target(expr: str, legend: str = "", ref: str = "A", instant: bool = False, fmt: str = "time_series") -> dict:
    return {
        "refId": ref,
        "datasource": DS,
        "editorMode": "code",
        "expr": expr,
        "legendFormat": legend or "__auto",
        "range": not instant,
        "instant": instant,
        "format": fmt,
    }


def timeseries(
    title: str,
    description: str,
    targets: list[dict],
    unit: str = "short",
    stack: bool = False,
    calcs=("mean", "max", "lastNotNull"),
    draw: str = "line",
) -> dict:
    custom = {
        "drawStyle": draw,
        "lineWidth": 1,
        "fillOpacity": 10 if not stack else 40,
        "showPoints": "never",
        "spanNulls": False,
        "axisSoftMin": 0,
        "stacking": {"mode": "normal" if stack else "none", "group": "A"},
    }
    if draw == "line" and unit == "none":
        custom["lineInterpolation"] = "stepAfter"
    return {
        "type": "timeseries",
        "title": title,
        "description": description,
        "datasource": DS,
        "targets": targets,
        "fieldConfig": {"defaults": {"unit": unit, "min": 0, "custom": custom}, "overrides": []},
        "options": {
            "legend": {"displayMode": "table", "placement": "bottom", "showLegend": True, "calcs": list(calcs)},
            "tooltip": {"mode": "multi", "sort": "desc"},
        },
    }


def stat(
    title: str, description: str, targets: list[dict], unit: str = "short", thresholds=None, decimals: int | None = None
) -> dict:
    defaults = {
        "unit": unit,
        "mappings": [],
        "thresholds": thresholds or {"mode": "absolute", "steps": [{"color": "blue", "value": None}]},
    }
    if decimals is not None:
        defaults["decimals"] = decimals
    return {
        "type": "stat",
        "title": title,
        "description": description,
        "datasource": DS,
        "targets": targets,
        "fieldConfig": {"defaults": defaults, "overrides": []},
        "options": {
            "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
            "colorMode": "background",
            "graphMode": "none",
            "textMode": "value_and_name",
            "justifyMode": "auto",
            "orientation": "auto",
        },
    }


def steps(*pairs) -> dict:
    return {"mode": "absolute", "steps": [{"color": c, "value": v} for v, c in pairs]}


def value_map(mapping: dict[str, tuple[str, str]]) -> dict:
    return {
        "type": "value",
        "options": {
            k: {"text": text, "color": color, "index": i} for i, (k, (text, color)) in enumerate(mapping.items())
        },
    }


def dashboard() -> dict:
    L = Layout()

    L.row("Throughput")
    L.add(
        timeseries(
            "tpmC",
            "NewOrders committed per minute over the runner's last 10 s, summed over the "
            "runner pods (shards) of each run. Final, measured tpmC is in the Runs section.",
            [target(f"sum by ({BY_RUN}) (tpcc_tpmc{{{SEL}}})", RUN_LEGEND)],
        ),
        w=12,
    )
    L.add(
        timeseries(
            "Transactions/s by type and outcome",
            "Rate of tpcc_transactions_total: committed, "
            "rollbacks (the 1% NewOrder rollbacks of clause 2.4.1.4), errors and unknown outcomes.",
            [
                target(
                    f"sum by (type, outcome) (rate(tpcc_transactions_total{{{SEL}}}[$__rate_interval]))",
                    "{{type}} {{outcome}}",
                )
            ],
            unit="reqps",
        ),
        w=12,
    )
    L.add(
        timeseries(
            "Runner phase",
            "1 while a runner, loader or checker pod is in a phase.",
            [target(f"max by (role, phase) (tpcc_phase{{{SEL}}}) == 1", "{{role}} {{phase}}")],
            unit="none",
            calcs=(),
        ),
        w=12,
    )
    L.add(
        timeseries(
            "Committed transactions/s by type",
            "Committed transactions per second of each type; stacked, so the top line is the total.",
            [
                target(
                    f'sum by (type) (rate(tpcc_transactions_total{{{SEL}, outcome="committed"}}[$__rate_interval]))',
                    "{{type}}",
                )
            ],
            unit="reqps",
            stack=True,
        ),
        w=12,
    )

    L.add(
        {
            "type": "table",
            "title": "Runner pods",
            "description": "Options of each runner pod (tpcc_run_info) seen in the time range.",
            "datasource": DS,
            "targets": [
                target(
                    f"max by ({BY_RUN}, pod, clients, warehouses, shard, version) "
                    f"(last_over_time(tpcc_run_info{{{SEL}}}[$__range]))",
                    "",
                    instant=True,
                    fmt="table",
                )
            ],
            "transformations": [
                {
                    "id": "organize",
                    "options": {"excludeByName": {"Time": True, "Value": True}, "renameByName": {}, "indexByName": {}},
                }
            ],
            "fieldConfig": {"defaults": {"custom": {"align": "auto"}}, "overrides": []},
            "options": {"showHeader": True, "cellHeight": "sm"},
        },
        w=24,
        h=5,
    )

    L.row("Latency")
    for q in QUANTILES:
        L.add(
            timeseries(
                f"Latency p{q * 100:g} by type",
                f"histogram_quantile({q}) over the rate of "
                "tpcc_transaction_duration_seconds_bucket (committed and rolled back transactions).",
                [
                    target(
                        f"histogram_quantile({q}, sum by (type, le) (rate("
                        f"tpcc_transaction_duration_seconds_bucket{{{SEL}}}[$__rate_interval])))",
                        "{{type}}",
                    )
                ],
                unit="s",
                calcs=("mean", "max"),
            ),
            w=8,
        )

    L.row("Retries, rollbacks, errors")
    L.add(
        timeseries(
            "Rollbacks, errors, unknown outcomes /s",
            "Transactions that did not commit, by type "
            "and outcome. `unknown`: the database did not say whether it committed (e.g. a failover).",
            [
                target(
                    f"sum by (type, outcome) (rate(tpcc_transactions_total{{{SEL}, "
                    f'outcome=~"rollbacks|errors|unknown"}}[$__rate_interval]))',
                    "{{type}} {{outcome}}",
                )
            ],
            unit="reqps",
        ),
        w=8,
    )
    L.add(
        timeseries(
            "Retries/s by type",
            "Transaction attempts retried after a retryable error.",
            [target(f"sum by (type) (rate(tpcc_retries_total{{{SEL}}}[$__rate_interval]))", "{{type}}")],
            unit="reqps",
        ),
        w=8,
    )
    L.add(
        timeseries(
            "Reconnects",
            "Connections re-established after a loss, per interval.",
            [target(f"sum by ({BY_RUN}) (increase(tpcc_reconnects_total{{{SEL}}}[$__rate_interval]))", RUN_LEGEND)],
            draw="bars",
        ),
        w=8,
    )

    L.row("YCSB (workload.kind ycsb)")
    L.add(
        timeseries(
            "YCSB operations/s by operation and status",
            "Rate of tpcc_ycsb_operations_total: each "
            "operation as YCSB names it (READ, UPDATE, INSERT, SCAN, READ-MODIFY-WRITE, TRANSACTION) by its "
            "Return status (OK, NOT_FOUND, ERROR, ...), summed over the runner pods.",
            [
                target(
                    f"sum by (operation, status) (rate(tpcc_ycsb_operations_total{{{SEL}}}[$__rate_interval]))",
                    "{{operation}} {{status}}",
                )
            ],
            unit="ops",
        ),
        w=12,
    )
    L.add(
        timeseries(
            "YCSB latency p50 and p99 by operation",
            "histogram_quantile over the rate of "
            "tpcc_ycsb_operation_duration_seconds_bucket, the buckets of the HdrHistograms the results "
            "come from; a failed operation is under its name with -FAILED, as YCSB measures it.",
            [
                target(
                    f"histogram_quantile({q}, sum by (operation, le) (rate("
                    f"tpcc_ycsb_operation_duration_seconds_bucket{{{SEL}}}[$__rate_interval])))",
                    f"{{{{operation}}}} p{q * 100:g}",
                    ref=ref,
                )
                for ref, q in (("A", 0.5), ("B", 0.99))
            ],
            unit="s",
            calcs=("mean", "max"),
        ),
        w=12,
    )

    L.row("Load")
    L.add(
        timeseries(
            "Load progress",
            "Load units done / load units of the run's loader pods.",
            [
                target(
                    f"sum by ({BY_RUN}) (tpcc_load_units_done{{{SEL}}}) / "
                    f"(sum by ({BY_RUN}) (tpcc_load_units_planned{{{SEL}}}) > 0)",
                    RUN_LEGEND,
                )
            ],
            unit="percentunit",
            calcs=("lastNotNull",),
        ),
        w=12,
    )
    L.add(
        timeseries(
            "Rows loaded/s by table",
            "Rate of tpcc_load_rows_total.",
            [target(f"sum by (table) (rate(tpcc_load_rows_total{{{SEL}}}[$__rate_interval]))", "{{table}}")],
            unit="rowsps",
            stack=True,
        ),
        w=12,
    )

    L.row("Faults (operator)")
    L.add(
        timeseries(
            "Fault injections",
            "Failovers the operator injected, cumulative, by action. The red "
            "markers on every time series come from the same series.",
            [
                target(
                    f"sum by ({BY_RUN}, action) (tpcc_operator_fault_injections{{{SEL}}})",
                    RUN_LEGEND + " {{action}}",
                )
            ],
            unit="none",
            calcs=("lastNotNull",),
        ),
        w=12,
    )
    L.add(
        timeseries(
            "Last fault recovery time",
            "Seconds from the last injected fault until the run committed transactions again.",
            [target(f"max by ({BY_RUN}) (tpcc_operator_fault_recovery_seconds{{{SEL}}})", RUN_LEGEND)],
            unit="s",
            calcs=("lastNotNull", "max"),
        ),
        w=12,
    )

    L.row("Runs (operator)")
    L.add(
        {
            "type": "bargauge",
            "title": "Final tpmC per run",
            "description": "Measured tpmC of each finished run (merged over its runner pods); "
            "pick several runs in the `run` variable to compare them.",
            "datasource": DS,
            "targets": [target(f"max by ({BY_RUN}) (tpcc_operator_run_tpmc{{{SEL}}})", RUN_LEGEND, instant=True)],
            "fieldConfig": {
                "defaults": {
                    "unit": "short",
                    "min": 0,
                    "decimals": 0,
                    "color": {"mode": "palette-classic"},
                    "thresholds": steps((None, "green")),
                },
                "overrides": [],
            },
            "options": {
                "orientation": "horizontal",
                "displayMode": "gradient",
                "showUnfilled": True,
                "valueMode": "color",
                "namePlacement": "auto",
                "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
            },
        },
        w=12,
        h=10,
    )
    results = [
        ("tpmC", f"max by ({BY_RUN}) (tpcc_operator_run_tpmc{{{SEL}}})"),
        ("Baseline tpmC", f"max by ({BY_RUN}) (tpcc_operator_run_baseline_tpmc{{{SEL}}})"),
        ("Failed", f"max by ({BY_RUN}) (tpcc_operator_run_failed{{{SEL}}})"),
        ("Consistency passed", f"min by ({BY_RUN}) (tpcc_operator_run_consistency_passed{{{SEL}}})"),
        ("Lost NewOrders", f"max by ({BY_RUN}) (tpcc_operator_run_durability_lost{{{SEL}}})"),
    ]
    refs = "ABCDEFGH"
    L.add(
        {
            "type": "table",
            "title": "Run results",
            "description": "One row per run: final tpmC, its baseline, whether it failed, the "
            "consistency verdict (clause 3.3.2) and acknowledged NewOrders lost.",
            "datasource": DS,
            "targets": [
                target(expr, "", ref=refs[i], instant=True, fmt="table") for i, (_, expr) in enumerate(results)
            ],
            "transformations": [
                {"id": "merge", "options": {}},
                {
                    "id": "organize",
                    "options": {
                        "excludeByName": {"Time": True},
                        "renameByName": {f"Value #{refs[i]}": name for i, (name, _) in enumerate(results)},
                        "indexByName": {},
                    },
                },
            ],
            "fieldConfig": {
                "defaults": {"custom": {"align": "auto"}},
                "overrides": [
                    {
                        "matcher": {"id": "byName", "options": "Failed"},
                        "properties": [
                            {"id": "mappings", "value": [value_map({"0": ("no", "green"), "1": ("FAILED", "red")})]},
                            {"id": "custom.cellOptions", "value": {"type": "color-background"}},
                        ],
                    },
                    {
                        "matcher": {"id": "byName", "options": "Consistency passed"},
                        "properties": [
                            {
                                "id": "mappings",
                                "value": [value_map({"1": ("passed", "green"), "0": ("VIOLATED", "red")})],
                            },
                            {"id": "custom.cellOptions", "value": {"type": "color-background"}},
                        ],
                    },
                    {
                        "matcher": {"id": "byName", "options": "Lost NewOrders"},
                        "properties": [
                            {"id": "thresholds", "value": steps((None, "green"), (1, "red"))},
                            {"id": "custom.cellOptions", "value": {"type": "color-background"}},
                        ],
                    },
                ],
            },
            "options": {"showHeader": True, "cellHeight": "sm", "sortBy": [{"displayName": "tpmC", "desc": True}]},
        },
        w=12,
        h=10,
    )
    verdicts = [
        ("Verdict", f"max by ({BY_RUN}, verdict) (tpcc_operator_run_verdict{{{SEL}}})"),
        (
            "tpmC vs baseline %",
            f'max by ({BY_RUN}) (tpcc_operator_run_regression_delta_ratio{{{SEL}, metric="tpmC"}})',
        ),
        (
            "NewOrder p99 vs baseline %",
            f'max by ({BY_RUN}) (tpcc_operator_run_regression_delta_ratio{{{SEL}, metric="p99Ms/NEW_ORDER"}})',
        ),
    ]
    L.add(
        {
            "type": "table",
            "title": "Regression verdicts",
            "description": "Each finished run judged against its baseline (spec.regression): Pass, "
            "Regressed, Improved, Inconclusive (too little history) or Failed, and how "
            "far tpmC and the NewOrder p99 moved. The history is `kubectl get "
            "benchmarkresults -l bench.tpcc.dev/run=NAME`.",
            "datasource": DS,
            "targets": [
                target(expr, "", ref=refs[i], instant=True, fmt="table") for i, (_, expr) in enumerate(verdicts)
            ],
            "transformations": [
                {"id": "merge", "options": {}},
                {
                    "id": "organize",
                    "options": {
                        "excludeByName": {"Time": True, f"Value #{refs[0]}": True},
                        "renameByName": {f"Value #{refs[i]}": name for i, (name, _) in enumerate(verdicts)},
                        "indexByName": {},
                    },
                },
            ],
            "fieldConfig": {
                "defaults": {"custom": {"align": "auto"}},
                "overrides": [
                    {
                        "matcher": {"id": "byName", "options": "verdict"},
                        "properties": [
                            {
                                "id": "mappings",
                                "value": [
                                    value_map(
                                        {
                                            "Pass": ("Pass", "green"),
                                            "Improved": ("Improved", "blue"),
                                            "Inconclusive": ("Inconclusive", "yellow"),
                                            "Regressed": ("REGRESSED", "red"),
                                            "Failed": ("FAILED", "red"),
                                        }
                                    )
                                ],
                            },
                            {"id": "custom.cellOptions", "value": {"type": "color-background"}},
                        ],
                    },
                    {
                        "matcher": {"id": "byName", "options": "tpmC vs baseline %"},
                        "properties": [{"id": "unit", "value": "percentunit"}, {"id": "decimals", "value": 1}],
                    },
                    {
                        "matcher": {"id": "byName", "options": "NewOrder p99 vs baseline %"},
                        "properties": [{"id": "unit", "value": "percentunit"}, {"id": "decimals", "value": 1}],
                    },
                ],
            },
            "options": {"showHeader": True, "cellHeight": "sm"},
        },
        w=24,
        h=8,
    )
    # a sweep's throughput-vs-clients curves: one bar group per client count, one bar per warehouse count
    L.add(
        {
            "type": "barchart",
            "title": "Sweep: tpmC by clients and warehouses",
            "description": "The measured cells of the selected sweeps (spec.sweep), tpmC averaged over "
            "repetitions: the throughput-vs-clients curves, one series per warehouse count. "
            "Each cell's full results are its BenchmarkResult. A sweep.matrix's values are "
            "averaged together here: each has its own series by the matrix label.",
            "datasource": DS,
            "targets": [
                target(
                    f"avg by (warehouses, clients) (tpcc_operator_sweep_cell_tpmc{{{SEL}}})",
                    "",
                    instant=True,
                    fmt="table",
                )
            ],
            "transformations": [
                {
                    "id": "groupingToMatrix",
                    "options": {
                        "rowField": "clients",
                        "columnField": "warehouses",
                        "valueField": "Value",
                        "emptyValue": "null",
                    },
                },
                {
                    "id": "convertFieldType",
                    "options": {"conversions": [{"targetField": "clients\\warehouses", "destinationType": "number"}]},
                },
                {"id": "sortBy", "options": {"sort": [{"field": "clients\\warehouses"}]}},
            ],
            "fieldConfig": {
                "defaults": {"unit": "short", "displayName": "${__field.name} warehouses"},
                "overrides": [],
            },
            "options": {
                "xField": "clients\\warehouses",
                "orientation": "vertical",
                "showValue": "auto",
                "legend": {"displayMode": "list", "placement": "bottom", "showLegend": True},
            },
        },
        w=24,
        h=8,
    )
    L.add(
        stat(
            "BenchmarkRuns by phase",
            "BenchmarkRun resources per phase (all namespaces the operator watches).",
            [target("sum by (phase) (tpcc_operator_runs)", "{{phase}}", instant=True)],
        ),
        w=12,
        h=5,
    )
    L.add(
        stat(
            "Operator reconcile errors",
            "Reconcile errors in the dashboard's time range.",
            [target("sum(increase(tpcc_operator_reconcile_errors_total[$__range]))", "errors", instant=True)],
            decimals=0,
            thresholds=steps((None, "green"), (1, "red")),
        ),
        w=12,
        h=5,
    )

    fault = f"tpcc_operator_fault_injections{{{SEL}}}"
    return {
        "uid": DASHBOARD_UID,
        "title": "TPC-C benchmark runs",
        "description": "tpcc-operator: throughput, latency, errors, load progress and faults of "
        "BenchmarkRuns, and a comparison of finished runs.",
        "tags": ["tpcc", "benchmark", "tpcc-operator"],
        "schemaVersion": 39,
        "version": 1,
        "editable": True,
        "graphTooltip": 1,
        "refresh": "10s",
        "time": {"from": "now-1h", "to": "now"},
        "timepicker": {},
        "timezone": "",
        "fiscalYearStartMonth": 0,
        "liveNow": False,
        "weekStart": "",
        "links": [],
        "annotations": {
            "list": [
                {
                    "builtIn": 1,
                    "datasource": {"type": "grafana", "uid": "-- Grafana --"},
                    "enable": True,
                    "hide": True,
                    "iconColor": "rgba(0, 211, 255, 1)",
                    "name": "Annotations & Alerts",
                    "type": "dashboard",
                },
                {
                    "name": "Fault injections",
                    "datasource": DS,
                    "enable": True,
                    "hide": False,
                    "iconColor": "red",
                    # changes() misses a series' first increase when the series is born at 1;
                    # `unless ... offset` catches that.
                    "expr": f"sum by ({BY_RUN}, action) (changes({fault}[$__rate_interval]) > 0 "
                    f"or ({fault} unless {fault} offset $__rate_interval))",
                    "step": "",
                    "titleFormat": "fault: {{action}}",
                    "textFormat": RUN_LEGEND,
                    "tagKeys": "action,run",
                    "useValueForTime": False,
                },
            ]
        },
        "templating": {
            "list": [
                {
                    "type": "datasource",
                    "name": "datasource",
                    "label": "Data source",
                    "query": "prometheus",
                    "current": {},
                    "hide": 0,
                    "refresh": 1,
                    "regex": "",
                    "options": [],
                    "includeAll": False,
                    "multi": False,
                },
                query_variable("namespace", "Namespace", f"{{{RUN_SERIES}}}"),
                query_variable("run", "Run", f'{{{RUN_SERIES}, namespace=~"$namespace"}}'),
                query_variable("db", "Database", f'{{{RUN_SERIES}, namespace=~"$namespace", run=~"$run"}}'),
            ]
        },
        "panels": L.panels,
    }


def query_variable(name: str, label: str, selector: str) -> dict:
    q = f"label_values({selector}, {name})"
    return {
        "type": "query",
        "name": name,
        "label": label,
        "datasource": DS,
        "query": {"qryType": 1, "query": q, "refId": "PrometheusVariableQueryEditor-VariableQuery"},
        "definition": q,
        "refresh": 2,
        "sort": 1,
        "multi": True,
        "includeAll": True,
        "allValue": ".*",
        "current": {},
        "options": [],
        "hide": 0,
        "regex": "",
    }


# ---------------------------------------------------------------------------- rules


class Param:
    """A rule threshold: its default in the plain file, a Helm value in the chart's copy."""

    def __init__(self, name: str, default) -> None:
        self.name, self.default = name, default

    def token(self) -> str:
        return f"PARAM_{self.name}_"


PARAMS = {
    p.name: p
    for p in (
        Param("tpmcBelowBaselineRatio", 0.9),
        Param("runnerErrorRatio", 0.05),
        Param("runnerErrorFor", "2m"),
        Param("runnerStalledFor", "2m"),
        Param("reconcileErrorsFor", "15m"),
    )
}
P = {name: p.token() for name, p in PARAMS.items()}


YCSB_OK = 'tpcc_ycsb_operations_total{status="OK"}'


def rule_groups() -> dict:
    run = "{{ $labels.namespace }}/{{ $labels.run }} ({{ $labels.db }})"
    return {
        "groups": [
            {
                "name": "tpcc-runner.rules",
                "rules": [
                    {
                        "record": "tpcc:transactions:rate1m",
                        "expr": f"sum by ({BY_RUN}, type, outcome) (rate(tpcc_transactions_total[1m]))",
                    },
                    {"record": "tpcc:tpmc:sum", "expr": f"sum by ({BY_RUN}) (tpcc_tpmc)"},
                    {
                        "record": "tpcc:transaction_error_ratio:rate1m",
                        "expr": f'sum by ({BY_RUN}) (tpcc:transactions:rate1m{{outcome=~"errors|unknown"}}) '
                        f"/ sum by ({BY_RUN}) (tpcc:transactions:rate1m)",
                    },
                    {
                        "alert": "TpccRunnerErrors",
                        "expr": f"tpcc:transaction_error_ratio:rate1m > {P['runnerErrorRatio']}",
                        "for": P["runnerErrorFor"],
                        "labels": {"severity": "warning"},
                        "annotations": {
                            "summary": f"TPC-C run {run}: {{{{ $value | humanizePercentage }}}} of "
                            "transactions end in errors or unknown outcomes",
                            "description": "The runner pods of this BenchmarkRun see errors or transactions "
                            "whose outcome the database did not report (connection lost, "
                            "failover). See the runner logs and the Faults panels.",
                        },
                    },
                    {
                        "alert": "TpccRunnerStalled",
                        # Over a minute: the runner zeroes tpmC just before it leaves `measuring`. A YCSB
                        # run has no NewOrders (its tpmC gauge stays 0): its successful operations count,
                        # once a counter has two samples to tell an increase by.
                        "expr": f'max by ({BY_RUN}) (tpcc_phase{{phase="measuring"}}) == 1 '
                        f"unless on ({BY_RUN}) (max_over_time(tpcc:tpmc:sum[1m]) > 0) "
                        f"unless on ({BY_RUN}) (sum by ({BY_RUN}) (increase({YCSB_OK}[1m])) > 0 "
                        f"or max by ({BY_RUN}) (count_over_time({YCSB_OK}[1m])) < 2)",
                        "for": P["runnerStalledFor"],
                        "labels": {"severity": "warning"},
                        "annotations": {
                            "summary": f"TPC-C run {run} is measuring but commits no NewOrders "
                            "(YCSB: no operation succeeds)",
                            "description": "A runner pod is in its measured window and no NewOrder has "
                            "committed (in a YCSB run: no operation returned OK) for a minute "
                            "plus the alert's `for` period.",
                        },
                    },
                ],
            },
            {
                "name": "tpcc-operator.rules",
                "rules": [
                    {
                        "alert": "TpccRunFailed",
                        "expr": "tpcc_operator_run_failed == 1",
                        "labels": {"severity": "warning"},
                        "annotations": {
                            "summary": f"BenchmarkRun {run} failed",
                            "description": "See `kubectl describe benchmarkrun` (status.conditions and "
                            "Events) for the reason.",
                        },
                    },
                    {
                        "alert": "TpccConsistencyViolated",
                        "expr": "tpcc_operator_run_consistency_passed == 0",
                        "labels": {"severity": "critical"},
                        "annotations": {
                            "summary": f"BenchmarkRun {run}: TPC-C consistency conditions violated",
                            "description": "At least one consistency condition of clause 3.3.2 does not "
                            "hold after the run; the status lists which.",
                        },
                    },
                    {
                        "alert": "TpccDurabilityLoss",
                        "expr": "tpcc_operator_run_durability_lost > 0",
                        "labels": {"severity": "critical"},
                        "annotations": {
                            "summary": f"BenchmarkRun {run} lost {{{{ $value }}}} acknowledged NewOrders",
                            "description": "NewOrders the database acknowledged as committed are missing "
                            "after the injected faults (durability ledger check).",
                        },
                    },
                    {
                        "alert": "TpccTpmcBelowBaseline",
                        "expr": f"tpcc_operator_run_tpmc < on ({BY_RUN}) "
                        f"(tpcc_operator_run_baseline_tpmc * {P['tpmcBelowBaselineRatio']}) "
                        f"unless on ({BY_RUN}) (tpcc_operator_run_failed == 1)",
                        "labels": {"severity": "warning"},
                        "annotations": {
                            "summary": f"BenchmarkRun {run}: tpmC {{{{ $value | humanize }}}} is below "
                            f"{P['tpmcBelowBaselineRatio']} x its baseline",
                            "description": "The run's final tpmC fell below the configured fraction of "
                            "spec baseline tpmC: a performance regression.",
                        },
                    },
                    {
                        "alert": "TpccRunRegressed",
                        "expr": 'tpcc_operator_run_verdict{verdict="Regressed"} == 1',
                        "labels": {"severity": "warning"},
                        "annotations": {
                            "summary": f"BenchmarkRun {run} regressed against its baseline",
                            "description": "The run is slower than its baseline beyond spec.regression's limits "
                            "(tpmC drop or p99 increase); status.regression lists each metric's "
                            "value, baseline and delta.",
                        },
                    },
                    {
                        "alert": "TpccOperatorReconcileErrors",
                        "expr": "sum by (namespace) (increase(tpcc_operator_reconcile_errors_total[10m])) > 0",
                        "for": P["reconcileErrorsFor"],
                        "labels": {"severity": "warning"},
                        "annotations": {
                            "summary": "tpcc-operator keeps failing to reconcile BenchmarkRuns",
                            "description": "Reconcile errors for the alert's `for` period; see the operator's logs.",
                        },
                    },
                ],
            },
        ]
    }


def _yaml(doc: dict) -> str:
    return yaml.safe_dump(doc, sort_keys=False, width=1000, default_flow_style=False)


def plain_rules() -> str:
    text = _yaml(rule_groups())
    for p in PARAMS.values():
        text = text.replace(p.token(), str(p.default))
    return text


def chart_rules() -> str:
    """The same groups for `tpl`: Prometheus templates escaped, thresholds from values."""
    text = _yaml(rule_groups()).replace("{{", '{{ "{{" }}')
    for p in PARAMS.values():
        text = text.replace(p.token(), f"{{{{ .Values.monitoring.prometheusRule.{p.name} }}}}")
    return text


# ---------------------------------------------------------------------------- outputs

HEADER = "# Generated by dashboards/generate.py; edit that, then run it.\n"
CHART_HEADER = "# Generated by dashboards/generate.py; rendered with `tpl` by templates/prometheusrule.yaml.\n"


def outputs() -> dict[Path, str]:
    board = json.dumps(dashboard(), indent=2) + "\n"
    return {
        HERE / DASHBOARD_FILE: board,
        CHART_FILES / "dashboards" / DASHBOARD_FILE: board,
        HERE / "rules" / RULES_FILE: HEADER + plain_rules(),
        CHART_FILES / RULES_FILE: CHART_HEADER + chart_rules(),
    }


# ---------------------------------------------------------------------------- for the tests


def queries(board: dict) -> list[tuple[str, str]]:
    """(where, expr) of every PromQL expression: panel targets and Prometheus annotations."""
    found = []
    for p in board["panels"]:
        for t in p.get("targets", []):
            found.append((f"panel {p['id']} {p['title']!r} {t['refId']}", t["expr"]))
    for a in board["annotations"]["list"]:
        if "expr" in a:
            found.append((f"annotation {a['name']!r}", a["expr"]))
    return found


def expand(expr: str, variables: dict[str, str]) -> str:
    """What Grafana sends: $name / ${name} replaced by the variables' values."""

    def sub(m: re.Match) -> str:
        name = m.group(1) or m.group(2)
        if name not in variables:
            raise KeyError(f"undefined variable ${name} in {expr!r}")
        return variables[name]

    return re.sub(r"\$\{(\w+)\}|\$(\w+)", sub, expr)


def podmonitor_relabelings() -> list[dict]:
    """The relabelings of templates/podmonitor.yaml, read from the template text (the block has
    no template actions), so a test can give a plain Prometheus the same target labels."""
    text = (ROOT / "charts" / "tpcc-operator" / "templates" / "podmonitor.yaml").read_text()
    block = re.search(r"^( +)relabelings:\n((?:\1 .*\n)+)", text, re.M)
    if not block:
        raise ValueError("no relabelings block in templates/podmonitor.yaml")
    return yaml.safe_load(block.group(2))


def relabel_configs(relabelings: list[dict]) -> list[dict]:
    """prometheus-operator's relabelings as Prometheus relabel_configs (camelCase -> snake_case)."""
    return [
        {re.sub(r"(?<!^)([A-Z])", lambda m: "_" + m.group(1).lower(), k): v for k, v in r.items()} for r in relabelings
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="fail if a written file is out of date")
    args = ap.parse_args()
    stale = []
    for path, text in outputs().items():
        if path.exists() and path.read_text() == text:
            continue
        if args.check:
            stale.append(str(path.relative_to(ROOT)))
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            print(f"wrote {path.relative_to(ROOT)}")
    if stale:
        print(f"out of date (run dashboards/generate.py): {', '.join(stale)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
