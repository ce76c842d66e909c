"""The Jobs of a run, each running the runner image's `tpcc` with a command line built here from the
spec as the contract's typed command (tpcc_contract.commands, held to the runner's parser by
operator/tests/test_runner_contract.py): the load, the runner pods behind the barrier, the
durability verifier, the consistency check (after the run and during it), the ACID tests and the
change-point analysis; their pods' resources and security context. Pure functions of (the run's
identity, its typed spec, operator settings)."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import Any

from kubernetes.utils import parse_quantity
from tpcc_contract.commands import Acid, Changepoints, Check, Connection, RunnerCommand, RunnerPod

from . import databases, workloads
from .plan import (
    LEDGER_PORT,
    RUNNER_UID,
    Run,
    Settings,
    check_configmap_name,
    database_pod_selector,
    endpoints,
    job_name,
    metadata,
    service_account_name,
    start_configmap_name,
)
from .runspec import Resources, RunSpec


def connection(run: Run, spec: RunSpec, metrics: bool) -> Connection:
    """The database every command of the run talks to; `metrics`: the pod serves /metrics."""
    w = spec.workload
    return Connection(
        db=spec.database.type,
        endpoints=",".join(endpoints(run, spec)),
        connect_timeout=w.connect_timeout_seconds,
        metrics_port=spec.runners.metrics_port if metrics else 0,
        driver_opt=tuple(f"{key}={value}" for key, value in sorted((w.driver_options or {}).items())),
    )


def _credentials_env(spec: RunSpec) -> list[dict]:
    """The runner's database user from the Secret the database names (Database.credentials:
    external.credentialsSecretRef, or a deployed mongodb's root user)."""
    ref = databases.of(spec).credentials(spec)
    if not ref:
        return []
    return [
        {"name": env, "valueFrom": {"secretKeyRef": {"name": ref.name, "key": key}}}
        for env, key in (("TPCC_DB_USERNAME", ref.username_key), ("TPCC_DB_PASSWORD", ref.password_key))
    ]


def pod_resources(spec: RunSpec, settings: Settings) -> dict:
    """The operator's defaults, overridden value by value by runners.resources; a default
    limit below a request the user raised is raised to it (else the API server refuses the Job)."""
    mine = spec.runners.resources or Resources()
    requests = {**settings.pod_resources.requests, **(mine.requests or {})}
    limits = {**settings.pod_resources.limits, **(mine.limits or {})}
    for resource, request in requests.items():
        user_limit = resource in (mine.limits or {})
        if resource in limits and not user_limit and parse_quantity(request) > parse_quantity(limits[resource]):
            limits[resource] = request
    return {"requests": requests, "limits": limits}


# The verifier, and verify.duringRun's check, run while the run's runner pods are there: once
# their window is over the runners sit idle serving their ledgers until the verifier has read
# them, yet keep their requests. A verifier asking for a runner's CPU found no room on a node the
# runners filled and waited for them while they waited for it, until verify.timeoutSeconds (seen on
# the local 2-core cluster: three runs at once, 1,950m of 2,000m requested). These two ask for
# little CPU (their limit stays the runners'): what they use is what the runners leave. Memory
# stays as asked: the verifier holds every pod's acknowledged keys.
BESIDE_RUNNERS_CPU_REQUEST = "50m"


def beside_runners_resources(spec: RunSpec, settings: Settings) -> dict:
    """pod_resources, with a CPU request of at most BESIDE_RUNNERS_CPU_REQUEST."""
    resources = pod_resources(spec, settings)
    cpu = resources["requests"].get("cpu")
    if cpu is None or parse_quantity(cpu) > parse_quantity(BESIDE_RUNNERS_CPU_REQUEST):
        resources["requests"]["cpu"] = BESIDE_RUNNERS_CPU_REQUEST
    return resources


def _pod_spec(
    run: Run,
    spec: RunSpec,
    settings: Settings,
    args: list[str],
    *,
    api_token: bool,
    metrics: bool,
    beside_runners: bool = False,
) -> dict:
    """A pod of the runner image; `beside_runners`: one that runs while the run's runner pods
    hold their requests (beside_runners_resources)."""
    r = spec.runners
    container: dict[str, Any] = {
        "name": "tpcc",
        "image": r.image or settings.runner_image,
        "imagePullPolicy": r.image_pull_policy,
        "command": ["tpcc"],
        "args": args,
        "env": [{"name": "HOME", "value": "/tmp"}] + _credentials_env(spec),
        "resources": (beside_runners_resources if beside_runners else pod_resources)(spec, settings),
        # the runner's one-line error becomes the pod's termination message -> status.message
        "terminationMessagePolicy": "FallbackToLogsOnError",
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "runAsNonRoot": True,
            "capabilities": {"drop": ["ALL"]},
        },
        "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}],
    }
    if metrics:
        container["ports"] = [{"name": "metrics", "containerPort": r.metrics_port, "protocol": "TCP"}]
    return {
        **away_from_the_database(run, spec),
        "restartPolicy": "Never",
        "serviceAccountName": service_account_name(run),
        "automountServiceAccountToken": api_token,
        "enableServiceLinks": False,
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": RUNNER_UID,
            "runAsGroup": RUNNER_UID,
            "fsGroup": RUNNER_UID,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": [container],
        "volumes": [{"name": "tmp", "emptyDir": {}}],
    }


def away_from_the_database(run: Run, spec: RunSpec) -> dict:
    """The pods of the runner image prefer nodes without a member of the run's deployed database
    (a client beside a member takes its CPU, and a node lost takes both); preferred, so a cluster
    of one node still runs them."""
    if not spec.database.deployed:
        return {}
    term = {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": database_pod_selector(run)}}
    return {
        "affinity": {
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": term}]
            }
        }
    }


def _job(run: Run, spec: RunSpec, role: str, pod: dict, deadline: int, **job_spec: Any) -> dict:
    meta = metadata(run, job_name(run, role), spec, role)
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta,
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": deadline,
            **job_spec,
            "template": {"metadata": {"labels": meta["labels"]}, "spec": pod},
        },
    }


def load_command(run: Run, spec: RunSpec) -> RunnerCommand:
    """load.json (status.load), and with verify.afterLoad load-check.json, into the check ConfigMap."""
    return workloads.of(spec).load_command(
        spec,
        run_seed(run, spec),
        connection(run, spec, metrics=True),
        reset=reset_before_load(spec),
        results_configmap=f"{run.namespace}/{check_configmap_name(run)}",
    )


def load_job(run: Run, spec: RunSpec, settings: Settings) -> dict:
    pod = _pod_spec(run, spec, settings, load_command(run, spec).to_argv(), api_token=True, metrics=True)
    return _job(run, spec, "loader", pod, load_timeout(spec))


def load_timeout(spec: RunSpec) -> int:
    """workload.loadTimeoutSeconds, or from the size: 10 minutes plus 5 for each warehouse
    a loader worker has to load."""
    w = spec.workload
    return w.load_timeout_seconds or 600 + 300 * -(-w.warehouses // w.load_workers)


def run_seed(run: Run, spec: RunSpec) -> int:
    """The one seed of a run (clause 2.1.6.1: one C_RUN per run): spec.workload.seed, or one
    derived from the run's UID and generation, so an operator restart gives the same seed and
    a new generation a new one. The loader draws C_LOAD from it; every runner pod draws the
    same C_RUN from it and the load's C_LOAD, and its terminals' inputs. Each cell of a sweep
    is a run of its own (its repetitions draw new inputs)."""
    seed = spec.workload.seed
    if seed is not None:
        return seed
    cell = "" if run.cell is None else f"/{run.cell}"
    digest = hashlib.sha256(f"{run.uid}/{run.generation}{cell}".encode()).digest()
    return int.from_bytes(digest[:4], "big") >> 1  # 31 bits: fits every signed int


def reset_before_load(spec: RunSpec) -> bool:
    """workload.resetBeforeLoad as written; unset: only a database deployed for this run
    (new, empty) is reset, an external one never."""
    reset = spec.workload.reset_before_load
    return spec.database.deployed if reset is None else reset


def run_command(run: Run, spec: RunSpec) -> RunnerCommand:
    """Each pod of the runner Job: shard I/N, writing into results ConfigMap I, waiting for startAt
    in the start ConfigMap (the barrier), holding its ledger after the run until the verifier has
    read the ledgers of all pods (ledgersVerified in the start ConfigMap)."""
    ns, start = run.namespace, f"{run.namespace}/{start_configmap_name(run)}"
    pod = RunnerPod(
        shard=f"$(JOB_COMPLETION_INDEX)/{spec.runners.parallelism}",
        start_configmap=start,
        results_configmap=f"{ns}/{run.prefix}-results-$(JOB_COMPLETION_INDEX)",
        ledger="/tmp/ledger.log",
        hold_ledger=start,
        ledger_port=LEDGER_PORT,
        hold_timeout=ledger_hold_seconds(spec),
    )
    return workloads.of(spec).run_command(spec, run_seed(run, spec), connection(run, spec, metrics=True), pod)


def run_job(run: Run, spec: RunSpec, settings: Settings) -> dict:
    """An Indexed Job of `parallelism` pods that all run at once (run_command)."""
    return _runner_job(run, spec, settings, run_command(run, spec).to_argv())


def _runner_job(run: Run, spec: RunSpec, settings: Settings, args: list[str]) -> dict:
    """The Indexed Job of runner pods (TPC-C's or YCSB's) that all run at once."""
    w, r = spec.workload, spec.runners
    n = r.parallelism
    pod = _pod_spec(run, spec, settings, args, api_token=True, metrics=True)
    pod["containers"][0]["ports"].append({"name": "ledger", "containerPort": LEDGER_PORT, "protocol": "TCP"})
    # Ready = every terminal of the pod connected to the database (not just the HTTP server up)
    pod["containers"][0]["readinessProbe"] = {
        "httpGet": {"path": "/ready", "port": "metrics"},
        "periodSeconds": 2,
        "failureThreshold": 1,
    }
    # Backstop only: the operator fails the run itself when the pods are not Ready in time.
    deadline = (
        r.ready_timeout_seconds
        + r.start_delay_seconds
        + w.warmup_seconds
        + w.duration_seconds
        + ledger_hold_seconds(spec)
        + 300
    )
    return _job(run, spec, "runner", pod, deadline, completionMode="Indexed", completions=n, parallelism=n)


def ledger_hold_seconds(spec: RunSpec) -> int:
    """How long a runner pod holds its ledger after its window: the faults' recovery, then
    the verifier's deadline, then slack for the operator's ticks."""
    return spec.database.ready_timeout_seconds + spec.verify.timeout_seconds + 120


def ledger_urls(pod_ips: dict[int, str]) -> list[str]:
    """Where the verifier reads the ledger of each runner pod (shard -> pod IP)."""
    return [f"http://{pod_ips[shard]}:{LEDGER_PORT}/ledger" for shard in sorted(pod_ips)]


def verifier_command(run: Run, spec: RunSpec, pod_ips: dict[int, str]) -> RunnerCommand:
    """The workload's verification of every runner pod's ledger together; durability.json into the
    check ConfigMap."""
    return workloads.of(spec).verify_command(
        spec,
        connection(run, spec, metrics=False),
        tuple(ledger_urls(pod_ips)),
        f"{run.namespace}/{check_configmap_name(run)}",
    )


def verifier_job(run: Run, spec: RunSpec, settings: Settings, pod_ips: dict[int, str]) -> dict:
    """The durability verification: once per run, over the ledgers of all runner pods
    together (a key acknowledged by two pods is a lost order), after the faults are over
    (the workload's verify_command: YCSB's checks every acknowledged write and the record count)."""
    args = verifier_command(run, spec, pod_ips).to_argv()
    pod = _pod_spec(run, spec, settings, args, api_token=True, metrics=False, beside_runners=True)
    return _job(run, spec, "verifier", pod, spec.verify.timeout_seconds)


def verifying_role(spec: RunSpec, status: dict) -> str:
    """The role of the Job a run in Verifying is at: the check while transactions ran (with
    verify.duringRun, until its report is in), the verifier (durability), then the checker
    (consistency, unless verify.enabled is false), then the ACID tests (with verify.acid; once
    per run, so a sweep's later cells skip them)."""
    if spec.verify.during_run and "consistencyDuringRun" not in status:
        return "midcheck"
    if "durability" not in status:
        return "verifier"
    if workloads.checks_consistency(spec) and "consistency" not in status:
        return "checker"
    return "acid"


CHECK_INPUT_DIR = "/etc/tpcc/check"


def _check_sources(run: Run, earlier_cells: tuple[int, ...]) -> list[tuple[Run, str]]:
    """Whose deliveries.json the check counts, each where its ConfigMap is mounted: the run's, and
    in a sweep those of the earlier cells on the shared load."""
    sources = [(run, f"{CHECK_INPUT_DIR}/deliveries.json")]
    return sources + [(replace(run, cell=i), f"{CHECK_INPUT_DIR}-c{i}/deliveries.json") for i in earlier_cells]


def check_command(run: Run, spec: RunSpec, earlier_cells: tuple[int, ...] = ()) -> Check:
    return Check(
        connection(run, spec, metrics=False),
        warehouses=spec.workload.warehouses,
        results_configmap=f"{run.namespace}/{check_configmap_name(run)}",
        deliveries=tuple(path for _, path in _check_sources(run, earlier_cells)),
    )


def check_job(run: Run, spec: RunSpec, settings: Settings, earlier_cells: tuple[int, ...] = ()) -> dict:
    """The 12 conditions; condition 11 counts the orders delivered since the load from the
    runner pods' acknowledged Deliveries (deliveries.json, which the operator wrote into the
    check ConfigMap before creating this Job), not from ORDERS itself. In a sweep the load is
    shared: the deliveries of the earlier cells on it (their check ConfigMaps) count too."""
    args = check_command(run, spec, earlier_cells).to_argv()
    pod = _pod_spec(run, spec, settings, args, api_token=True, metrics=False)
    for n, (source, path) in enumerate(_check_sources(run, earlier_cells)):
        volume = "check-input" if n == 0 else f"check-input-c{source.cell}"
        pod["volumes"].append(
            {
                "name": volume,
                "configMap": {
                    "name": check_configmap_name(source),
                    "items": [{"key": "deliveries.json", "path": "deliveries.json"}],
                },
            }
        )
        pod["containers"][0]["volumeMounts"].append(
            {"name": volume, "mountPath": path.rsplit("/", 1)[0], "readOnly": True}
        )
    return _job(run, spec, "checker", pod, spec.verify.timeout_seconds)


MIDCHECK_KEY = "midcheck.json"


def midcheck_command(run: Run, spec: RunSpec) -> Check:
    return Check(
        connection(run, spec, metrics=False),
        warehouses=spec.workload.warehouses,
        results_configmap=f"{run.namespace}/{check_configmap_name(run)}",
        snapshot=True,
        results_key=MIDCHECK_KEY,
    )


def midcheck_job(run: Run, spec: RunSpec, settings: Settings) -> dict:
    """verify.duringRun: the 12 conditions read while the runners' transactions commit, each
    warehouse in one snapshot (`tpcc check --snapshot`); condition 11 counts from ORDERS, as the
    runners' Deliveries are not known yet."""
    args = midcheck_command(run, spec).to_argv()
    pod = _pod_spec(run, spec, settings, args, api_token=True, metrics=False, beside_runners=True)
    return _job(run, spec, "midcheck", pod, spec.verify.timeout_seconds)


def acid_command(run: Run, spec: RunSpec) -> Acid:
    """The run's seed picks the rows."""
    tests = spec.verify.acid_tests
    return Acid(
        connection(run, spec, metrics=False),
        seed=run_seed(run, spec),
        results_configmap=f"{run.namespace}/{check_configmap_name(run)}",
        tests=tuple(tests) if tests else None,
    )


def acid_job(run: Run, spec: RunSpec, settings: Settings) -> dict:
    """The ACID tests of clause 3 (`tpcc acid`) against the loaded database, after the
    consistency check; acid.json goes into the check ConfigMap."""
    pod = _pod_spec(run, spec, settings, acid_command(run, spec).to_argv(), api_token=True, metrics=False)
    return _job(run, spec, "acid", pod, spec.verify.timeout_seconds)


ANALYSIS_INPUT_DIR = "/etc/tpcc/analysis"


def analyzer_command(run: Run, max_pvalue: float) -> Changepoints:
    return Changepoints(
        history=f"{ANALYSIS_INPUT_DIR}/history.json",
        max_pvalue=max_pvalue,
        results_configmap=f"{run.namespace}/{check_configmap_name(run)}",
    )


def analyzer_job(run: Run, spec: RunSpec, settings: Settings, max_pvalue: float) -> dict:
    """E-Divisive change points over the run's comparable history (tpcc changepoints, Apache
    Otava, in the runner image: the operator never loads numpy): history.json, which the
    operator wrote into the check ConfigMap, in; changepoints.json out."""
    args = analyzer_command(run, max_pvalue).to_argv()
    pod = _pod_spec(run, spec, settings, args, api_token=True, metrics=False)
    pod["volumes"].append(
        {
            "name": "history",
            "configMap": {
                "name": check_configmap_name(run),
                "items": [{"key": "history.json", "path": "history.json"}],
            },
        }
    )
    pod["containers"][0]["volumeMounts"].append({"name": "history", "mountPath": ANALYSIS_INPUT_DIR, "readOnly": True})
    return _job(run, spec, "analyzer", pod, spec.verify.timeout_seconds)
