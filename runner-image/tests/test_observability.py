"""Dashboards and rules against real parts: a real Prometheus (Debian, started by
hack/prometheus.sh) scrapes a real `tpcc load` and `tpcc run` against a real VoltDB, then a short
`tpcc ycsb run` as the runner pod of a second run (YCSB_RUN), with the target labels the chart's
PodMonitor relabelings make from the operator's pod labels. Every PromQL
expression of the Grafana dashboard and of the runner rules is evaluated against it, as Grafana
would send it, and must return data.

No operator runs here, so its metrics (tpcc_operator_*) come from a real Pushgateway scraped like
the chart's ServiceMonitor scrapes the operator (honor_labels): the live run's final tpmC and
consistency verdict are its real results; fault injections, baselines and two other runs (one
failed, one slow) are samples. The alert rules are loaded into the same Prometheus (the sample runs
must fire exactly the expected alerts) and unit-tested with promtool (dashboards/rules/*.test.yaml).
"""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from cli_helpers import TPCC
from secantus_server import free_port
from voltdb_server import voltdb  # noqa: F401  (fixture)

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "dashboards"))
import generate  # noqa: E402

pytestmark = pytest.mark.db

SCRIPT = ROOT / "hack" / "prometheus.sh"
RULES = ROOT / "dashboards" / "rules"
NAMESPACE, RUN, DB = "bench", "obs-1", "voltdb"
YCSB_RUN = "obs-ycsb"
# What Grafana sends for the two runs chosen in the multi-select `run` variable.
BOTH_RUNS = f"({RUN}|{YCSB_RUN})"
# The YCSB run: long enough for several 1 s scrapes and a 4 s rate, short for the suite.
YCSB_SECONDS = 8
YCSB = ["--workload", "a", "-p", "recordcount=2000", "-p", "fieldcount=4", "-p", "fieldlength=20"]
RUNNER_SCRAPE_SECONDS = 1
# The loader is scraped more often than the runner so that the load progress panels have
# several points.
LOADER_SCRAPE = "250ms"
# What Grafana substitutes for a 1 s scrape interval and a 1 s step: max(step + scrape, 4 x scrape).
RATE_INTERVAL = "4s"
# One full-size warehouse (about 11 s of load units here): the 1 s steps of a range query only
# see the progress gauge while the loader is up, and a load of 10,000 items and 300 customers
# per district (about 1.5 s since the loader got faster) was missed between two steps in CI.
SCALE = ["--warehouses", "1"]


@dataclass
class Observed:
    prometheus: str
    start: float  # before the load
    end: float  # after the run and the last push
    results: dict  # the run's JSON
    ycsb: dict = field(default_factory=dict)  # the YCSB run's results document
    fault_pushes: list[float] = field(default_factory=list)

    def api(self, path: str, **params) -> dict:
        url = f"{self.prometheus}/api/v1/{path}?{urllib.parse.urlencode(params, doseq=True)}"
        with urllib.request.urlopen(url, timeout=30) as r:
            body = json.load(r)
        assert body["status"] == "success", body
        return body["data"]

    def range(self, expr: str, start: float | None = None, end: float | None = None) -> list[dict]:
        return self.api("query_range", query=expr, start=start or self.start, end=end or self.end, step="1s")["result"]

    def instant(self, expr: str, at: float | None = None) -> list[dict]:
        return self.api("query", query=expr, time=at or self.end)["result"]


def finite(result: list[dict]) -> list[float]:
    """Every finite sample value of a range or instant query result."""
    values = []
    for series in result:
        for _, v in series.get("values", [series["value"]] if "value" in series else []):
            if math.isfinite(float(v)):
                values.append(float(v))
    return values


# ---------------------------------------------------------------------------- the live run


def _pod_target(port: int, role: str, run: str = RUN) -> dict:
    """A static target carrying the Kubernetes SD labels of the operator's pod for `role`."""
    from tpcc_operator.plan import Run, labels
    from tpcc_operator.runspec import RunSpec

    meta = {"__meta_kubernetes_namespace": NAMESPACE, "__meta_kubernetes_pod_name": f"{run}-1-{role}-0"}
    for k, v in labels(Run(run, NAMESPACE, "uid", 1), RunSpec.parse({"database": {"type": DB}}), role).items():
        meta["__meta_kubernetes_pod_label_" + re.sub(r"[^a-zA-Z0-9_]", "_", k)] = v
    return {"targets": [f"127.0.0.1:{port}"], "labels": meta}


def _prometheus_config(loader: int, runner: int, ycsb_runner: int, pushgateway: int) -> dict:
    relabel = generate.relabel_configs(generate.podmonitor_relabelings())
    return {
        "global": {"scrape_interval": f"{RUNNER_SCRAPE_SECONDS}s", "evaluation_interval": "1s"},
        "rule_files": [str(RULES / generate.RULES_FILE)],
        "scrape_configs": [
            {
                "job_name": "tpcc-loader",
                "scrape_interval": LOADER_SCRAPE,
                "scrape_timeout": LOADER_SCRAPE,
                "static_configs": [_pod_target(loader, "loader")],
                "relabel_configs": relabel,
            },
            {"job_name": "tpcc-runner", "static_configs": [_pod_target(runner, "runner")], "relabel_configs": relabel},
            {
                "job_name": "tpcc-ycsb-runner",
                "relabel_configs": relabel,
                "static_configs": [_pod_target(ycsb_runner, "runner", YCSB_RUN)],
            },
            # The operator, as the ServiceMonitor scrapes it: its per-run series keep their
            # namespace label; the target's namespace is the operator's.
            {
                "job_name": "tpcc-operator",
                "honor_labels": True,
                "static_configs": [{"targets": [f"127.0.0.1:{pushgateway}"], "labels": {"namespace": "tpcc-system"}}],
            },
        ],
    }


class OperatorMetrics:
    """The operator's metrics, pushed whole to the Pushgateway on every change."""

    def __init__(self, url: str) -> None:
        self.url = f"{url}/metrics/job/tpcc-operator"
        self.series: dict[str, dict[tuple, float]] = {}

    def set(self, name: str, value: float, **labels: str) -> None:
        self.series.setdefault(name, {})[tuple(sorted(labels.items()))] = value

    def run(self, run: str, db: str, **values: float) -> None:
        for name, value in values.items():
            self.set(f"tpcc_operator_run_{name}", value, namespace=NAMESPACE, run=run, db=db)

    def push(self) -> None:
        lines = []
        for name, series in self.series.items():
            kind = "counter" if name.endswith("_total") else "gauge"
            lines.append(f"# TYPE {name} {kind}")
            for labels, value in series.items():
                text = ",".join(f'{k}="{v}"' for k, v in labels)
                lines.append(f"{name}{{{text}}} {value}")
        req = urllib.request.Request(self.url, data=("\n".join(lines) + "\n").encode(), method="PUT")
        with urllib.request.urlopen(req, timeout=10) as r:
            assert r.status in (200, 202), r.status


def _script(*args: str) -> str:
    done = subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _wait(what: str, predicate, timeout: float) -> None:
    deadline = time.time() + timeout
    while not predicate():
        assert time.time() < deadline, f"timed out waiting for {what}"
        time.sleep(0.25)


def _ycsb_run(endpoint: str, metrics_port: int, tmp: Path) -> dict:
    """A short `tpcc ycsb load` and `run` (workload A), the run's metrics on metrics_port."""
    common = ["--db", "voltdb", "--endpoints", endpoint, *YCSB]
    load = subprocess.run(
        [*TPCC, "ycsb", "load", *common, "--reset", "--threads", "2", "-p", "batchsize=100", "--metrics-port", "0"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert load.returncode == 0, load.stderr
    results = tmp / "ycsb.json"
    run = subprocess.run(
        [
            *TPCC,
            "ycsb",
            "run",
            *common,
            "--threads",
            "2",
            "-p",
            "operationcount=0",
            "--duration",
            str(YCSB_SECONDS),
            "--metrics-port",
            str(metrics_port),
            "--results",
            str(results),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    return json.loads(results.read_text())


@pytest.fixture(scope="module")
def observed(voltdb, tmp_path_factory):  # noqa: F811  (fixture)
    tmp = tmp_path_factory.mktemp("observability")
    endpoint = voltdb.endpoints[0]
    loader_port, runner_port, ycsb_port, prom_port, pg_port = (free_port() for _ in range(5))
    config = tmp / "prometheus.yml"
    config.write_text(yaml.safe_dump(_prometheus_config(loader_port, runner_port, ycsb_port, pg_port)))
    pushgateway = _script("pushgateway-start", "--port", str(pg_port), "--dir", str(tmp))
    procs: list[subprocess.Popen] = []
    try:
        prom_url = _script("start", str(config), "--port", str(prom_port), "--dir", str(tmp))
        obs = Observed(prom_url, time.time(), 0.0, {})
        operator = OperatorMetrics(pushgateway)
        operator.set("tpcc_operator_reconcile_errors_total", 0)
        for phase, n in (("Succeeded", 1), ("Failed", 1), ("Running", 1)):
            operator.set("tpcc_operator_runs", n, phase=phase)
        operator.run(
            "sample-failed", "voltdb", tpmc=0, baseline_tpmc=1000, failed=1, consistency_passed=0, durability_lost=2
        )
        operator.run(
            "sample-slow", "mongodb", tpmc=500, baseline_tpmc=1000, failed=0, consistency_passed=1, durability_lost=0
        )
        operator.push()
        # Prometheus applies new targets at most every 5 s: wait until all four are up or down.
        _wait("Prometheus to pick up its targets", lambda: len(obs.api("targets")["activeTargets"]) == 4, 20)

        load = subprocess.run(
            [
                *TPCC,
                "load",
                "--db",
                "voltdb",
                "--endpoints",
                endpoint,
                *SCALE,
                "--workers",
                "1",
                "--reset",
                "--metrics-port",
                str(loader_port),
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert load.returncode == 0, load.stderr

        run = subprocess.Popen(
            [
                *TPCC,
                "run",
                "--db",
                "voltdb",
                "--endpoints",
                endpoint,
                "--warehouses",
                "1",
                "--duration",
                "40",
                "--warmup",
                "5",
                "--check",
                "--metrics-port",
                str(runner_port),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        procs.append(run)
        started = time.time()
        # The operator kills a node twice during the measured window (sample fault injections).
        for n, at in ((1, 15), (2, 27)):
            time.sleep(max(0.0, started + at - time.time()))
            operator.set("tpcc_operator_fault_injections", n, namespace=NAMESPACE, run=RUN, db=DB, action="kill-node")
            operator.set("tpcc_operator_fault_recovery_seconds", 2.5 * n, namespace=NAMESPACE, run=RUN, db=DB)
            # the time before the push: Prometheus may scrape the new value before push() returns
            # (and, on a busy machine, before this process runs again)
            obs.fault_pushes.append(time.time())
            operator.push()
        out, err = run.communicate(timeout=180)
        assert run.returncode == 0, err
        obs.results = json.loads(out)
        obs.ycsb = _ycsb_run(endpoint, ycsb_port, tmp)

        # What the operator reports once the run is over: its real results.
        operator.run(
            RUN,
            DB,
            tpmc=obs.results["tpmC"],
            baseline_tpmc=obs.results["tpmC"] / 2,
            failed=0,
            consistency_passed=int(obs.results["consistency"]["passed"]),
            durability_lost=0,
        )
        operator.set("tpcc_operator_runs", 2, phase="Succeeded")
        operator.set("tpcc_operator_runs", 0, phase="Running")
        # and its regression verdict against the run's baseline (here half its tpmC)
        operator.set("tpcc_operator_run_verdict", 1, namespace=NAMESPACE, run=RUN, db=DB, verdict="Improved")
        for metric, delta in (("tpmC", 1.0), ("p99Ms/NEW_ORDER", -0.05)):
            operator.set(
                "tpcc_operator_run_regression_delta_ratio", delta, namespace=NAMESPACE, run=RUN, db=DB, metric=metric
            )
        # as the first cell of a sweep (warehouses 1 x clients 1, 2): its tpmC and a sample's
        for clients, tpmc in ((1, obs.results["tpmC"]), (2, obs.results["tpmC"] * 1.8)):
            operator.set(
                "tpcc_operator_sweep_cell_tpmc",
                tpmc,
                namespace=NAMESPACE,
                run=RUN,
                db=DB,
                warehouses="1",
                clients=str(clients),
                repetition="1",
            )
        operator.push()
        _wait(
            "Prometheus to scrape the final operator metrics",
            lambda: obs.instant(f'tpcc_operator_run_tpmc{{run="{RUN}"}}', time.time()),
            10,
        )
        _wait(
            "the alert rules to evaluate the final metrics",
            lambda: len(obs.instant('ALERTS{alertstate="firing"}', time.time())) >= 4,
            10,
        )
        obs.end = time.time()
        yield obs
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        subprocess.run([str(SCRIPT), "stop", "--dir", str(tmp)], capture_output=True, timeout=60)
        subprocess.run([str(SCRIPT), "pushgateway-stop", "--dir", str(tmp)], capture_output=True, timeout=60)


BOARD = json.loads((ROOT / "dashboards" / generate.DASHBOARD_FILE).read_text())


def _grafana_variables(obs: Observed, **overrides: str) -> dict[str, str]:
    return {
        "namespace": NAMESPACE,
        "run": RUN,
        "db": DB,
        "datasource": "prometheus",
        "__rate_interval": RATE_INTERVAL,
        "__interval": "1s",
        "__range": f"{int(obs.end - obs.start) + 1}s",
        **overrides,
    }


def _targets() -> list[tuple[str, str, bool]]:
    """(where, expr, instant) of every dashboard query, annotations included."""
    found = []
    for p in BOARD["panels"]:
        for t in p.get("targets", []):
            found.append((f"panel {p['title']!r} {t['refId']}", t["expr"], t["instant"]))
    for a in BOARD["annotations"]["list"]:
        if "expr" in a:
            found.append((f"annotation {a['name']!r}", a["expr"], False))
    assert len(found) == len(generate.queries(BOARD))
    return found


def _source(expr: str) -> str:
    return "pushgateway (operator samples)" if "tpcc_operator_" in expr else "runner"


# ---------------------------------------------------------------------------- tests


def test_every_dashboard_query_returns_data(observed):
    """Both runs chosen: the TPC-C run's series and the YCSB run's (the YCSB row) each have data."""
    variables = _grafana_variables(observed, run=BOTH_RUNS)
    empty = []
    for where, expr, instant in _targets():
        sent = generate.expand(expr, variables)
        result = observed.instant(sent) if instant else observed.range(sent)
        if not finite(result):
            empty.append(f"{where} [{_source(expr)}]: {sent}")
    assert not empty, "no data:\n" + "\n".join(empty)


def _variable_values(obs: Observed, variable: dict, chosen: dict[str, str]) -> list[str]:
    """What Grafana lists for a label_values(selector, label) variable."""
    selector, label = re.fullmatch(r"label_values\((\{.*\}), (\w+)\)", variable["definition"]).groups()
    return obs.api(
        f"label/{label}/values", start=obs.start, end=obs.end, **{"match[]": generate.expand(selector, chosen)}
    )


def test_variables_list_the_run(observed):
    chosen = {"namespace": NAMESPACE, "run": RUN, "db": DB}
    variables = BOARD["templating"]["list"][1:]
    for v in variables:
        assert chosen[v["name"]] in _variable_values(observed, v, chosen), v["name"]
    (run_variable,) = [v for v in variables if v["name"] == "run"]
    everything = {"namespace": ".*", "run": ".*", "db": ".*"}
    assert set(_variable_values(observed, run_variable, everything)) == {RUN, YCSB_RUN, "sample-failed", "sample-slow"}


def test_the_runner_is_labelled_as_the_podmonitor_labels_it(observed):
    (up,) = observed.instant('up{job="tpcc-runner"}', observed.start + 20)
    labels = up["metric"]
    assert labels == {
        "__name__": "up",
        "job": "tpcc-runner",
        "instance": labels["instance"],
        "namespace": NAMESPACE,
        "run": RUN,
        "db": DB,
        "role": "runner",
        "pod": f"{RUN}-1-runner-0",
    }


def test_tpmc_panel_agrees_with_the_runs_result(observed):
    """The live 10 s-window gauge, averaged over the measured window, is near the run's tpmC."""
    (panel,) = [p for p in BOARD["panels"] if p["title"] == "tpmC"]
    expr = generate.expand(panel["targets"][0]["expr"], _grafana_variables(observed))
    start = _epoch(observed.results["start"]) + 10  # the first full 10 s window
    end = _epoch(observed.results["end"])
    values = finite(observed.range(expr, start, end))
    assert values and observed.results["tpmC"] > 0
    mean = sum(values) / len(values)
    assert 0.5 * observed.results["tpmC"] < mean < 1.5 * observed.results["tpmC"], (mean, observed.results["tpmC"])


def _epoch(rfc3339: str) -> float:
    import datetime as dt

    return dt.datetime.fromisoformat(rfc3339.replace("Z", "+00:00")).timestamp()


def test_committed_transactions_match_the_run(observed):
    """Committed transactions Prometheus counted (whole run, warm-up included) >= the measured ones."""
    expr = (
        f'sum(max_over_time(tpcc_transactions_total{{run="{RUN}", outcome="committed"}}'
        f"[{int(observed.end - observed.start) + 1}s]))"
    )
    (counted,) = finite(observed.instant(expr))
    assert counted >= observed.results["totals"]["committed"] > 0


def test_ycsb_panels_agree_with_the_ycsb_run(observed):
    """The operations Prometheus counted (scraped each second, so up to the last second's short)
    against the run's own count; the p50 panel near the run's own p50 (its buckets are 1.5-2.5x
    apart, so within a factor of 3)."""
    doc = observed.ycsb
    done = sum(doc["status"]["operations"][name]["count"] for name in ("READ", "UPDATE"))
    expr = (
        f'sum(max_over_time(tpcc_ycsb_operations_total{{run="{YCSB_RUN}", operation=~"READ|UPDATE"}}'
        f"[{int(observed.end - observed.start) + 1}s]))"
    )
    (counted,) = finite(observed.instant(expr))
    assert 0.7 * done <= counted <= done, (counted, done)
    (panel,) = [p for p in BOARD["panels"] if p["title"] == "YCSB latency p50 and p99 by operation"]
    expr = generate.expand(panel["targets"][0]["expr"], _grafana_variables(observed, run=YCSB_RUN))
    p50 = [
        float(v)
        for series in observed.range(expr)
        if series["metric"]["operation"] == "READ"
        for _, v in series["values"]
        if math.isfinite(float(v))
    ]
    run_p50 = doc["status"]["operations"]["READ"]["p50Ms"] / 1000
    assert p50 and run_p50 / 3 <= sorted(p50)[len(p50) // 2] <= 3 * run_p50, (p50, run_p50)


def test_load_progress_is_seen_between_0_and_100_percent(observed):
    (load_panel,) = [p for p in BOARD["panels"] if p["title"] == "Load progress"]
    values = finite(observed.range(generate.expand(load_panel["targets"][0]["expr"], _grafana_variables(observed))))
    assert values and all(0 < v <= 1 for v in values)


def test_fault_markers_appear_at_both_injections(observed):
    (annotation,) = [a for a in BOARD["annotations"]["list"] if "expr" in a]
    result = observed.range(generate.expand(annotation["expr"], _grafana_variables(observed)))
    times = [float(t) for s in result for t, _ in s["values"]]
    assert {s["metric"]["action"] for s in result} == {"kill-node"}
    for pushed in observed.fault_pushes:
        assert any(pushed <= t <= pushed + 6 for t in times), (pushed, times)
    # ... and nowhere else: markers last at most the rate interval after each injection.
    elsewhere = [t for t in times if not any(p <= t <= p + 6 for p in observed.fault_pushes)]
    assert not elsewhere, (observed.fault_pushes, elsewhere)


def test_comparison_panel_shows_every_finished_run_with_its_final_tpmc(observed):
    (panel,) = [p for p in BOARD["panels"] if p["title"] == "Final tpmC per run"]
    expr = generate.expand(panel["targets"][0]["expr"], _grafana_variables(observed, namespace=".*", run=".*", db=".*"))
    got = {s["metric"]["run"]: float(s["value"][1]) for s in observed.instant(expr)}
    assert got == {RUN: pytest.approx(observed.results["tpmC"]), "sample-failed": 0, "sample-slow": 500}


def test_runner_rules_record_the_live_run(observed):
    groups = observed.api("rules")["groups"]
    rules = {r["name"]: r for g in groups for r in g["rules"]}
    assert all(r["health"] == "ok" for r in rules.values()), {
        n: r.get("lastError") for n, r in rules.items() if r["health"] != "ok"
    }
    (runner_group,) = [g for g in groups if g["name"] == "tpcc-runner.rules"]
    for rule in runner_group["rules"]:
        if rule["type"] == "recording":
            assert finite(observed.range(f'{rule["name"]}{{run="{RUN}"}}')), rule["name"]
            assert finite(observed.range(rule["query"])), rule["query"]


def test_runner_alerts_stay_quiet_on_a_healthy_run_and_their_signals_have_data(observed):
    plain = yaml.safe_load((RULES / generate.RULES_FILE).read_text())
    (runner_group,) = [g for g in plain["groups"] if g["name"] == "tpcc-runner.rules"]
    for rule in runner_group["rules"]:
        if "alert" not in rule:
            continue
        # The signal the threshold is applied to: left of `unless` or of the final comparison.
        signal = re.split(r" unless | > [\d.]+$", rule["expr"])[0]
        assert finite(observed.range(signal)), (rule["alert"], signal)
        assert not observed.range(rule["expr"]), rule["alert"]
    assert not observed.range('ALERTS{alertname=~"TpccRunner.*"}')


def test_operator_alerts_fire_for_the_bad_sample_runs_only(observed):
    firing = {
        (a["metric"]["alertname"], a["metric"].get("run")) for a in observed.instant('ALERTS{alertstate="firing"}')
    }
    assert firing == {
        ("TpccRunFailed", "sample-failed"),
        ("TpccConsistencyViolated", "sample-failed"),
        ("TpccDurabilityLoss", "sample-failed"),
        ("TpccTpmcBelowBaseline", "sample-slow"),
    }


# ---------------------------------------------------------------------------- promtool


def _promtool(*args: str, cwd: Path = RULES) -> subprocess.CompletedProcess:
    subprocess.run([str(SCRIPT), "install"], check=True, timeout=600)
    return subprocess.run(
        [shutil.which("promtool") or "promtool", *args], capture_output=True, text=True, cwd=cwd, timeout=120
    )


def test_promtool_checks_the_rules():
    done = _promtool("check", "rules", generate.RULES_FILE)
    assert done.returncode == 0 and "SUCCESS: 11 rules found" in done.stdout, done.stdout + done.stderr


def test_promtool_unit_tests_of_the_alerts_pass():
    done = _promtool("test", "rules", "tpcc-rules.test.yaml")
    assert done.returncode == 0, done.stdout + done.stderr


def test_promtool_unit_tests_catch_a_wrong_threshold(tmp_path):
    rules = (RULES / generate.RULES_FILE).read_text()
    assert "tpcc_operator_run_baseline_tpmc * 0.9)" in rules
    (tmp_path / generate.RULES_FILE).write_text(rules.replace("baseline_tpmc * 0.9)", "baseline_tpmc * 0.8)"))
    shutil.copy(RULES / "tpcc-rules.test.yaml", tmp_path)
    done = _promtool("test", "rules", "tpcc-rules.test.yaml", cwd=tmp_path)
    assert done.returncode != 0 and "TpccTpmcBelowBaseline" in done.stdout + done.stderr
