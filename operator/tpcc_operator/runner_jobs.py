"""The Jobs of a run, each running the runner image's `tpcc` with a command line built here from the
spec (the contract with the runner's parser: operator/tests/test_runner_contract.py): the load, the
runner pods behind the barrier, the durability verifier, the consistency check (after the run and
during it), the ACID tests and the change-point analysis; their pods' resources and security
context. Pure functions of (the run's identity, its typed spec, operator settings)."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import Any

from kubernetes.utils import parse_quantity

from . import databases, workloads
from .plan import (
    LEDGER_PORT,
    RUNNER_UID,
    Run,
    Settings,
    check_configmap_name,
    endpoints,
    job_name,
    metadata,
    service_account_name,
    start_configmap_name,
)
from .runspec import Resources, RunSpec


def _common_flags(run: Run, spec: RunSpec, metrics: bool) -> list[str]:
    w = spec.workload
    flags = [
        "--db",
        spec.database.type,
        "--endpoints",
        ",".join(endpoints(run, spec)),
        "--connect-timeout",
        str(w.connect_timeout_seconds),
        "--metrics-port",
        str(spec.runners.metrics_port if metrics else 0),
    ]
    for key, value in sorted((w.driver_options or {}).items()):
        flags += ["--driver-opt", f"{key}={value}"]
    return flags


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


def load_job(run: Run, spec: RunSpec, settings: Settings) -> dict:
    workload = workloads.of(spec)
    command, flags = workload.load_arguments(spec, run_seed(run, spec))
    args = [*command, *_common_flags(run, spec, metrics=True), *flags]
    if reset_before_load(spec):
        args.append("--reset")
    elif not spec.database.deployed and workload.refuses_existing_data:
        args.append("--refuse-existing")
    # load.json (status.load), and with verify.afterLoad load-check.json, into the check ConfigMap
    args += ["--results-configmap", f"{run.namespace}/{check_configmap_name(run)}"]
    if spec.verify.after_load:
        args.append("--check")
    pod = _pod_spec(run, spec, settings, args, api_token=True, metrics=True)
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


def run_job(run: Run, spec: RunSpec, settings: Settings) -> dict:
    """An Indexed Job of `parallelism` pods that all run at once; pod I is shard I/N and writes
    into results ConfigMap I. Each waits for startAt in the start ConfigMap (the barrier)."""
    command, flags = workloads.of(spec).run_arguments(spec, run_seed(run, spec))
    args = [*command, *_common_flags(run, spec, metrics=True), *flags, *_barrier_and_ledger_arguments(run, spec)]
    return _runner_job(run, spec, settings, args)


def _barrier_and_ledger_arguments(run: Run, spec: RunSpec) -> list[str]:
    """What each pod of a runner Job is told: its shard (pod I of N), the start ConfigMap whose
    startAt is the barrier, its results ConfigMap, and the ledger of every acknowledged write it
    holds after the run until the verifier has read the ledgers of all pods (ledgersVerified in
    the start ConfigMap)."""
    ns = run.namespace
    return [
        "--shard",
        f"$(JOB_COMPLETION_INDEX)/{spec.runners.parallelism}",
        "--start-configmap",
        f"{ns}/{start_configmap_name(run)}",
        "--results-configmap",
        f"{ns}/{run.prefix}-results-$(JOB_COMPLETION_INDEX)",
        "--ledger",
        "/tmp/ledger.log",
        "--hold-ledger",
        f"{ns}/{start_configmap_name(run)}",
        "--ledger-port",
        str(LEDGER_PORT),
        "--hold-timeout",
        str(ledger_hold_seconds(spec)),
    ]


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


def verifier_job(run: Run, spec: RunSpec, settings: Settings, pod_ips: dict[int, str]) -> dict:
    """The durability verification: once per run, over the ledgers of all runner pods
    together (a key acknowledged by two pods is a lost order), after the faults are over;
    durability.json goes into the check ConfigMap (the workload's verify_command: YCSB's checks
    every acknowledged write and the record count)."""
    command = workloads.of(spec).verify_command(spec)
    args = [
        *command,
        *_common_flags(run, spec, metrics=False),
        *[a for url in ledger_urls(pod_ips) for a in ("--ledger", url)],
        "--results-configmap",
        f"{run.namespace}/{check_configmap_name(run)}",
    ]
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


def check_job(run: Run, spec: RunSpec, settings: Settings, earlier_cells: tuple[int, ...] = ()) -> dict:
    """The 12 conditions; condition 11 counts the orders delivered since the load from the
    runner pods' acknowledged Deliveries (deliveries.json, which the operator wrote into the
    check ConfigMap before creating this Job), not from ORDERS itself. In a sweep the load is
    shared: the deliveries of the earlier cells on it (their check ConfigMaps) count too."""
    sources = [(run, f"{CHECK_INPUT_DIR}/deliveries.json")]
    sources += [(replace(run, cell=i), f"{CHECK_INPUT_DIR}-c{i}/deliveries.json") for i in earlier_cells]
    args = [
        "check",
        *_common_flags(run, spec, metrics=False),
        "--warehouses",
        str(spec.workload.warehouses),
        *[a for _, path in sources for a in ("--deliveries", path)],
        "--results-configmap",
        f"{run.namespace}/{check_configmap_name(run)}",
    ]
    pod = _pod_spec(run, spec, settings, args, api_token=True, metrics=False)
    for n, (source, path) in enumerate(sources):
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


def midcheck_job(run: Run, spec: RunSpec, settings: Settings) -> dict:
    """verify.duringRun: the 12 conditions read while the runners' transactions commit, each
    warehouse in one snapshot (`tpcc check --snapshot`); condition 11 counts from ORDERS, as the
    runners' Deliveries are not known yet."""
    args = [
        "check",
        "--snapshot",
        *_common_flags(run, spec, metrics=False),
        "--warehouses",
        str(spec.workload.warehouses),
        "--results-configmap",
        f"{run.namespace}/{check_configmap_name(run)}",
        "--results-key",
        MIDCHECK_KEY,
    ]
    pod = _pod_spec(run, spec, settings, args, api_token=True, metrics=False, beside_runners=True)
    return _job(run, spec, "midcheck", pod, spec.verify.timeout_seconds)


def acid_job(run: Run, spec: RunSpec, settings: Settings) -> dict:
    """The ACID tests of clause 3 (`tpcc acid`) against the loaded database, after the
    consistency check; acid.json goes into the check ConfigMap. The run's seed picks the rows."""
    tests = spec.verify.acid_tests
    args = [
        "acid",
        *_common_flags(run, spec, metrics=False),
        *(["--tests", ",".join(tests)] if tests else []),
        "--seed",
        str(run_seed(run, spec)),
        "--results-configmap",
        f"{run.namespace}/{check_configmap_name(run)}",
    ]
    pod = _pod_spec(run, spec, settings, args, api_token=True, metrics=False)
    return _job(run, spec, "acid", pod, spec.verify.timeout_seconds)


ANALYSIS_INPUT_DIR = "/etc/tpcc/analysis"


def analyzer_job(run: Run, spec: RunSpec, settings: Settings, max_pvalue: float) -> dict:
    """E-Divisive change points over the run's comparable history (tpcc changepoints, Apache
    Otava, in the runner image: the operator never loads numpy): history.json, which the
    operator wrote into the check ConfigMap, in; changepoints.json out."""
    args = [
        "changepoints",
        "--history",
        f"{ANALYSIS_INPUT_DIR}/history.json",
        "--max-pvalue",
        repr(max_pvalue),
        "--results-configmap",
        f"{run.namespace}/{check_configmap_name(run)}",
    ]
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
