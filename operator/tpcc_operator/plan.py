"""Spec -> plan of objects: every name, label, manifest and Helm release a BenchmarkRun needs.

Pure functions of (the run's identity, its typed spec (runspec.RunSpec), operator settings). Names carry the
generation, so a retry or an operator restart recreates exactly the same objects (a create
that answers 409 means "already done") and a new generation never collides with the old one.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kubernetes.utils import parse_quantity

from . import capacity, chart_policy, databases, workloads
from .runspec import MatrixAxis, Resources, RunSpec, Saturation, charts_dir_of_image, crd_spec_schema

GROUP = "bench.tpcc.dev"
VERSION = "v1alpha1"
PLURAL = "benchmarkruns"
KIND = "BenchmarkRun"

LABEL_MANAGED_BY = "app.kubernetes.io/managed-by"
LABEL_RUN = f"{GROUP}/run"
LABEL_GENERATION = f"{GROUP}/generation"
LABEL_DB = f"{GROUP}/db"
LABEL_ROLE = f"{GROUP}/role"
LABEL_SCHEDULE = f"{GROUP}/schedule"  # on a run a BenchmarkSchedule made: the schedule's name
LABEL_SERIES = f"{GROUP}/series"  # on a BenchmarkResult: the history it is compared within
MANAGER = "tpcc-operator"

RUNNER_UID = 1000
CLUSTER_DOMAIN = "cluster.local"
# Where a runner pod serves its durability ledger to the verifier after its window.
LEDGER_PORT = 9101
# How the kill-process fault kills the database process in its container (Database.container):
# the charts write its pid to /tmp/database.pid.
KILL_PROCESS_COMMAND = ("sh", "-c", 'kill -KILL "$(cat /tmp/database.pid)"')


@dataclass(frozen=True)
class Run:
    """Identity of one generation of a BenchmarkRun."""

    name: str
    namespace: str
    uid: str
    generation: int
    # the history this run's results belong to: its own name, or for a run a BenchmarkSchedule
    # made, the schedule's (each scheduled run is a new object with a new name)
    series: str = ""
    # with spec.sweep: the cell under way, whose Jobs, ConfigMaps and result carry its index
    cell: int | None = None
    # with sweep.matrix axes over database.deploy: the deployment of the cell under way (0: the first)
    deployment: int = 0

    @property
    def sweep_cell(self) -> int:
        """The index of the sweep cell this run measures (only a sweep's cells have one)."""
        if self.cell is None:
            raise ValueError(f"{self.name}: not a sweep's cell")
        return self.cell

    @property
    def prefix(self) -> str:
        return f"{self.name}-g{self.generation}" + ("" if self.cell is None else f"-c{self.cell}")

    @property
    def history_series(self) -> str:
        return self.series or self.name


@dataclass(frozen=True)
class PodResources:
    """Default requests and limits of every pod the operator creates (loader, runner,
    verifier, checker); runners.resources overrides them value by value."""

    requests: dict[str, str] = field(default_factory=lambda: {"cpu": "250m", "memory": "256Mi"})
    limits: dict[str, str] = field(default_factory=lambda: {"cpu": "2", "memory": "2Gi"})

    @classmethod
    def parse(cls, text: str) -> PodResources:
        """From JSON {"requests": {...}, "limits": {...}} (the chart's podResources)."""
        doc = json.loads(text)
        return cls(requests=dict(doc.get("requests") or {}), limits=dict(doc.get("limits") or {}))


@dataclass(frozen=True)
class Settings:
    """Operator-wide settings (from its Deployment's environment)."""

    charts_dir: Path
    runner_image: str = "local/tpcc-runner:dev"
    pod_resources: PodResources = field(default_factory=PodResources)
    # chart references database.deploy.chart may name besides the shipped charts
    allowed_charts: tuple[str, ...] = ()


@dataclass(frozen=True)
class HelmRelease:
    name: str
    namespace: str
    chart: str
    version: str
    values: dict[str, Any] = field(default_factory=dict)


# ---- names -------------------------------------------------------------------------------


def release_name(run: Run) -> str:
    """One database for every cell of a sweep that shares its deployment; each later deployment
    (a sweep.matrix value of database.deploy) is a release of its own, so its StatefulSet's
    volume claims are new and it starts empty, whatever the previous one left on its volumes."""
    return f"{run.name}-g{run.generation}" + (f"-d{run.deployment}" if run.deployment else "")


def is_release_of(run_name: str, release: str) -> bool:
    """Whether a Helm release was made by (any generation, any deployment of) the named run."""
    return re.fullmatch(re.escape(run_name) + r"-g[0-9]+(-d[0-9]+)?", release) is not None


def service_account_name(run: Run) -> str:
    return f"{run.prefix}-runner"


def start_configmap_name(run: Run) -> str:
    return f"{run.prefix}-start"


def results_configmap_name(run: Run, shard: int) -> str:
    return f"{run.prefix}-results-{shard}"


def check_configmap_name(run: Run) -> str:
    return f"{run.prefix}-check"


def job_name(run: Run, role: str) -> str:
    """role: loader | runner | midcheck | verifier | checker | acid | analyzer (also the pods'
    bench.tpcc.dev/role label)."""
    return f"{run.prefix}-{role}"


# ---- sweeps ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    """One measurement of a sweep: a (warehouses, clients, matrix values) point, repeated
    `repetitions` times."""

    index: int
    warehouses: int
    clients: int
    repetition: int  # 1-based
    loads: bool  # the first cell of its load shape: it loads the database (again)
    # the cell's sweep.matrix values, (field, value) in the matrix's order
    matrix: tuple[tuple[str, str], ...] = ()
    deployment: int = 0  # which deployment of the sweep it runs on (0: the first)
    deploys: bool = False  # the first cell of a later deployment: it deploys the database anew


# sweep.matrix fields that change the database's shape: a value of one of these is a deployment
# of its own (every database.deploy field), or a load of its own (the MongoDB schema: the load's
# reset drops every schema's collections, so the one deployment serves them all)
DEPLOYMENT_AXIS_PREFIX = "database.deploy."
LOAD_AXES = ("workload.driverOptions.schema",)


def is_deployment_axis(field: str) -> bool:
    return field.startswith(DEPLOYMENT_AXIS_PREFIX)


def sweep_cells(spec: RunSpec) -> list[Cell]:
    """spec.sweep's cells in the order they run, so that each shape is deployed once and loaded
    once: the deployments (the matrix's database.deploy axes) outer, then the loads (its schema
    axis, then warehouses), then clients, then the matrix's other combinations (its first axis
    outer; with a saturation search the other way round: each combination's ladder of clients),
    then repetitions. A list the sweep leaves out is the workload's one value; a
    deployment with kSafety not below replicas is left out (plan.invalid_deployments)."""
    sweep, w = spec.sweep, spec.workload
    if not sweep:
        return []
    axes = sweep.matrix or ()
    deployment_axes = [a for a in axes if is_deployment_axis(a.field)]
    load_axes = [a for a in axes if a.field in LOAD_AXES]
    cell_axes = [a for a in axes if a not in deployment_axes and a not in load_axes]
    cells: list[Cell] = []
    for deployment, shape in enumerate(valid_deployments(spec)):
        for loaded in _combinations(load_axes):
            for warehouses in sweep.warehouses or [w.warehouses]:
                first_of_load = True
                # a saturation search raises the clients within each matrix combination; a list
                # of clients runs every combination at each count
                counts = sweep.clients or saturation_ladder(sweep.saturation) or [w.clients]
                combinations = _combinations(cell_axes)
                order = (
                    [(c, v) for v in combinations for c in counts]
                    if sweep.saturation
                    else [(c, v) for c in counts for v in combinations]
                )
                for clients, values in order:
                    matrix = dict((*shape, *loaded, *values))
                    for repetition in range(1, sweep.repetitions + 1):
                        deploys = deployment > 0 and (not cells or cells[-1].deployment != deployment)
                        cells.append(
                            Cell(
                                len(cells),
                                warehouses,
                                clients,
                                repetition,
                                loads=first_of_load,
                                matrix=tuple((a.field, matrix[a.field]) for a in axes),
                                deployment=deployment,
                                deploys=deploys,
                            )
                        )
                        first_of_load = False
    return cells


def _combinations(axes: list[MatrixAxis]) -> list[tuple[tuple[str, str], ...]]:
    """Every combination of the axes' values, the first axis outer, an axis paired with another
    (pairedWith) taking its value with that one's; one empty combination without axes."""
    paired = [a for a in axes if a.paired_with]
    choices = [
        [
            ((axis.field, value), *((p.field, p.values[i]) for p in paired if p.paired_with == axis.field))
            for i, value in enumerate(axis.values)
        ]
        for axis in axes
        if not axis.paired_with
    ]
    return [tuple(pair for group in combination for pair in group) for combination in itertools.product(*choices)]


def valid_deployments(spec: RunSpec) -> list[tuple[tuple[str, str], ...]]:
    """The combinations of the matrix's database.deploy axes a sweep deploys, in order: those
    whose kSafety (VoltDB's copies beyond the first) is below their replicas."""
    axes = [a for a in (spec.sweep.matrix or ()) if is_deployment_axis(a.field)] if spec.sweep else []
    return [shape for shape in _combinations(axes) if _deployable(spec, dict(shape))]


def invalid_deployments(spec: RunSpec) -> list[str]:
    """The combinations of database.deploy values a sweep leaves out, as "replicas=1 kSafety=1"."""
    axes = [a for a in (spec.sweep.matrix or ()) if is_deployment_axis(a.field)] if spec.sweep else []
    return [
        " ".join(f"{field.rpartition('.')[2]}={value}" for field, value in shape)
        for shape in _combinations(axes)
        if not _deployable(spec, dict(shape))
    ]


def _deployable(spec: RunSpec, shape: dict[str, str]) -> bool:
    replicas = int(shape.get(f"{DEPLOYMENT_AXIS_PREFIX}replicas", spec.deploy.replicas))
    k_safety = int(shape.get(f"{DEPLOYMENT_AXIS_PREFIX}kSafety", spec.deploy.k_safety))
    return k_safety < replicas


def saturation_ladder(search: Saturation | None) -> tuple[int, ...]:
    """The client counts a sweep.saturation search may run, in order: startClients, then
    + step (or x factor) while within maxClients; () without a search."""
    if search is None:
        return ()
    counts = [search.start_clients]
    while True:
        following = counts[-1] + search.step if search.step else counts[-1] * (search.factor or 2)
        if following > search.max_clients:
            return tuple(counts)
        counts.append(following)


# What retiring one deployment and making the next ready takes, as an estimate: Helm uninstall,
# its pods gone, Helm install, the new pods Ready. In the VoltDB e2e sweep over replicas 1 -> 2
# on this project's one-node cluster, the second cell took 79 s with all of that plus its load,
# 16 s of measuring and its checks (the first, deploy included, 72 s); a larger database or a
# busier cluster takes longer.
REDEPLOY_ESTIMATE_SECONDS = 90


@dataclass(frozen=True)
class SweepPlan:
    """What a sweep will do, known before anything starts (status.sweep.plan)."""

    cells: int
    loads: int
    deployments: int
    # the cells' measuring, plus each later deployment's REDEPLOY_ESTIMATE_SECONDS (a
    # saturation search: all its steps); the first deployment, the loads and checks come on top
    estimated_seconds: int
    left_out: tuple[str, ...] = ()  # database.deploy combinations not deployed (kSafety >= replicas)

    def to_status(self) -> dict[str, Any]:
        return {
            "cells": self.cells,
            "loads": self.loads,
            "deployments": self.deployments,
            "estimatedSeconds": self.estimated_seconds,
            **({"leftOut": list(self.left_out)} if self.left_out else {}),
        }


def sweep_plan(spec: RunSpec, cells: list[Cell]) -> SweepPlan:
    """A deployment per combination of the matrix's database.deploy values (one without such
    axes; none for an external database), a load per warehouse count and schema in each; each
    cell waits runners.startDelaySeconds, warms up and measures."""
    w = spec.workload
    per_cell = spec.runners.start_delay_seconds + w.warmup_seconds + w.duration_seconds
    deployments = len({c.deployment for c in cells}) if spec.database.deployed else 0
    return SweepPlan(
        cells=len(cells),
        loads=sum(c.loads for c in cells),
        deployments=deployments,
        estimated_seconds=per_cell * len(cells) + REDEPLOY_ESTIMATE_SECONDS * max(deployments - 1, 0),
        left_out=tuple(invalid_deployments(spec)),
    )


def cell_spec(spec: RunSpec, cell: Cell | None) -> RunSpec:
    """The spec one cell measures: the workload with the cell's warehouses, clients and matrix
    values, no sweep. A later size's load replaces what the sweep itself loaded before, so it
    resets even an external database (its first load still refuses a user's data unless
    resetBeforeLoad)."""
    if cell is None:
        return spec
    document = copy.deepcopy(dict(spec.document))
    workload = {**document["workload"], "warehouses": cell.warehouses, "clients": cell.clients}
    if cell.loads and cell.index > 0:
        workload["resetBeforeLoad"] = True
    document.pop("sweep")
    document["workload"] = workload
    chart = databases.of(spec).chart
    values_schema = chart_policy.values_schema(chart, charts_dir_of_image()) if chart else {}
    for path, value in cell.matrix:
        _set_field(document, path, value, values_schema)
    return RunSpec.parse(document)


def _set_field(document: dict, path: str, text: str, values_schema: dict) -> None:
    """Sets spec field `path` (dotted, under spec) to a sweep.matrix value, converted to the
    type the CRD gives the field (a percent is an integer; driver options are strings), or under
    database.deploy.values, which the CRD leaves to the chart, the type the chart's values
    schema gives it (sitesPerHost, sharded.shards: integers)."""
    *parents, leaf = path.split(".")
    schema, node = crd_spec_schema(), document
    for depth, key in enumerate(parents):
        if parents[: depth + 1] == ["database", "deploy", "values"]:
            schema = values_schema
        else:
            schema = (schema.get("properties") or {}).get(key) or schema.get("additionalProperties") or {}
        node = node.setdefault(key, {})
    leaf_schema = (schema.get("properties") or {}).get(leaf) or schema.get("additionalProperties") or {}
    if leaf_schema.get("type") == "object":  # workload.mix: its properties' values in order, "45/43/4/4/4"
        node[leaf] = dict(zip(leaf_schema["properties"], (int(p) for p in text.split("/")), strict=True))
    else:
        node[leaf] = int(text) if leaf_schema.get("type") == "integer" else text


def current_cell(spec: RunSpec, status: dict) -> Cell | None:
    """The sweep cell under way (status.sweep.current; the first before it is set)."""
    cells = sweep_cells(spec)
    if not cells:
        return None
    return cells[min((status.get("sweep") or {}).get("current", 0), len(cells) - 1)]


def cell_run(run: Run, cell: Cell | None) -> Run:
    return run if cell is None else replace(run, cell=cell.index, deployment=cell.deployment)


def load_cells(cells: list[Cell], cell: Cell) -> list[Cell]:
    """The cells since the load `cell` runs on, up to and including it: their Deliveries all
    count for consistency condition 11."""
    first = max(c.index for c in cells[: cell.index + 1] if c.loads)
    return cells[first : cell.index + 1]


# ---- labels and ownership ------------------------------------------------------------------


def labels(run: Run, spec: RunSpec | None = None, role: str | None = None) -> dict[str, str]:
    out = {LABEL_MANAGED_BY: MANAGER, LABEL_RUN: run.name, LABEL_GENERATION: str(run.generation)}
    if spec is not None:
        out[LABEL_DB] = spec.database.type
    if role is not None:
        out[LABEL_ROLE] = role
    return out


def owner_reference(run: Run) -> dict:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": KIND,
        "name": run.name,
        "uid": run.uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _metadata(run: Run, name: str, spec: RunSpec | None = None, role: str | None = None) -> dict:
    return {
        "name": name,
        "namespace": run.namespace,
        "labels": labels(run, spec, role),
        "ownerReferences": [owner_reference(run)],
    }


# ---- the database ------------------------------------------------------------------------


def _deep_merge(base: dict, top: dict) -> dict:
    out = dict(base)
    for k, v in top.items():
        out[k] = _deep_merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def helm_release(run: Run, spec: RunSpec, settings: Settings) -> HelmRelease:
    """The release of the database: the user's values, then what the spec decides on top.
    Raises chart_policy.ReleaseRefused for a chart or values the operator will not install."""
    database = databases.of(spec)
    d = spec.deploy
    shipped = database.chart
    chart = chart_policy.chart_reference(database.name, shipped, d.chart, settings.charts_dir, settings.allowed_charts)
    decided: dict[str, Any] = {"replicas": d.replicas, "podLabels": labels(run, spec, "database")}
    values = _deep_merge(dict(d.values or {}), {**decided, **database.decided_values(d)})
    chart_policy.check_values(shipped, d.chart, values, settings.charts_dir)
    rendered = chart_policy.with_defaults(shipped, d.chart, values, settings.charts_dir)
    if rendered is not None:
        field, wanted, unit = workloads.of(spec).largest_load(spec)
        problem = capacity.too_small(database.name, database.capacity(d, rendered, unit), wanted, field)
        if problem:
            raise chart_policy.DatabaseTooSmall(problem)
    refusal = database.refusal(spec)
    if refusal:
        raise chart_policy.ReleaseRefused(refusal)
    return HelmRelease(name=release_name(run), namespace=run.namespace, chart=chart, version=d.version, values=values)


def refuse_undeployable(run: Run, spec: RunSpec, settings: Settings) -> None:
    """Each deployment of a sweep, checked as its own install will check it, with the most
    any of its cells loads, before the first install: a later deployment (or a later, larger
    load on this one) that cannot hold its data fails the run now, not after the earlier cells
    ran. Raises chart_policy.ReleaseRefused (DatabaseTooSmall) naming the cell."""
    if spec.sweep is None or not spec.database.deployed:
        return
    most: dict[int, tuple[int, Cell, RunSpec]] = {}
    for cell in sweep_cells(spec):
        if cell.deployment in most and not cell.loads:
            continue  # the same data as the load before it
        measured = cell_spec(spec, cell)
        wanted = workloads.of(measured).largest_load(measured)[1]
        if cell.deployment not in most or wanted > most[cell.deployment][0]:
            most[cell.deployment] = (wanted, cell, measured)
    for _, cell, measured in most.values():
        try:
            helm_release(cell_run(run, cell), measured, settings)
        except chart_policy.ReleaseRefused as e:
            shape = " ".join(f"{f.rpartition('.')[2]}={v}" for f, v in cell.matrix if is_deployment_axis(f))
            where = f"sweep cell {cell.index} (deployment {cell.deployment}{': ' + shape if shape else ''})"
            raise type(e)(f"{where}: {e}") from None


def database_pod_count(spec: RunSpec) -> int:
    """How many pods a deployed database runs when all are up (the readiness the operator
    waits for): its Database.pod_count."""
    return databases.of(spec).pod_count(spec.deploy)


def database_pod_selector(run: Run) -> dict[str, str]:
    """Labels of the database pods a deployed release runs (the charts apply podLabels)."""
    return {LABEL_RUN: run.name, LABEL_GENERATION: str(run.generation), LABEL_ROLE: "database"}


def endpoints(run: Run, spec: RunSpec) -> list[str]:
    """host:port of every database node: the pods' stable DNS names behind the chart's
    headless Service `<release>-hl` (no Service VIP needed), or the external endpoints. The
    pods are those the database's clients connect to (Database.client_pods: a sharded
    mongodb's routers)."""
    if spec.database.external is not None:
        return list(spec.database.external.endpoints)
    rel = release_name(run)
    database = databases.of(spec)
    port = database.client_port
    pods, count = database.client_pods(rel, spec.deploy)
    return [f"{pods}-{i}.{rel}-hl.{run.namespace}.svc.{CLUSTER_DOMAIN}:{port}" for i in range(count)]


# ---- runner RBAC and ConfigMaps -------------------------------------------------------------


def configmaps(run: Run, spec: RunSpec) -> list[dict]:
    """The start ConfigMap (the barrier: the operator adds startAt) and one results ConfigMap
    per runner pod plus one for the check: the runners patch their JSON into them, so the
    results outlive the pods."""
    names = [start_configmap_name(run)]
    names += [results_configmap_name(run, i) for i in range(spec.runners.parallelism)]
    names.append(check_configmap_name(run))
    return [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": _metadata(run, n), "data": {}} for n in names]


def runner_rbac(run: Run, spec: RunSpec) -> list[dict]:
    """ServiceAccount + Role + RoleBinding: the runner pods may read the start ConfigMap and
    read/patch their results ConfigMaps, nothing else."""
    sa = service_account_name(run)
    writable = [results_configmap_name(run, i) for i in range(spec.runners.parallelism)]
    writable.append(check_configmap_name(run))
    return [
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": _metadata(run, sa),
            "automountServiceAccountToken": False,
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": _metadata(run, sa),
            "rules": [
                {
                    "apiGroups": [""],
                    "resources": ["configmaps"],
                    "verbs": ["get"],
                    "resourceNames": [start_configmap_name(run)],
                },
                {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "patch"], "resourceNames": writable},
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": _metadata(run, sa),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": sa},
            "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": run.namespace}],
        },
    ]


def run_objects(run: Run, spec: RunSpec) -> list[dict]:
    """Everything created once when a run begins, in creation order."""
    return runner_rbac(run, spec) + configmaps(run, spec)


# ---- Jobs ------------------------------------------------------------------------------------


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
    meta = _metadata(run, job_name(run, role), spec, role)
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
