"""Spec -> plan of objects: every name and label a BenchmarkRun's objects carry, the Helm release
of its database, its endpoints, and the runner RBAC and ConfigMaps (the Jobs: runner_jobs.py; a
sweep's cells: sweep_layout.py).

Pure functions of (the run's identity, its typed spec (runspec.RunSpec), operator settings). Names carry the
generation, so a retry or an operator restart recreates exactly the same objects (a create
that answers 409 means "already done") and a new generation never collides with the old one.
"""

from __future__ import annotations

import importlib.metadata
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import capacity, chart_policy, databases, workloads
from .runspec import RunSpec

GROUP = "bench.tpcc.dev"
VERSION = "v1alpha1"
PLURAL = "benchmarkruns"
KIND = "BenchmarkRun"

LABEL_MANAGED_BY = "app.kubernetes.io/managed-by"
LABEL_NAME = "app.kubernetes.io/name"
LABEL_INSTANCE = "app.kubernetes.io/instance"
LABEL_VERSION = "app.kubernetes.io/version"
LABEL_COMPONENT = "app.kubernetes.io/component"
LABEL_PART_OF = "app.kubernetes.io/part-of"
LABEL_RUN = f"{GROUP}/run"
LABEL_GENERATION = f"{GROUP}/generation"
LABEL_DB = f"{GROUP}/db"
LABEL_ROLE = f"{GROUP}/role"
LABEL_SCHEDULE = f"{GROUP}/schedule"  # on a run a BenchmarkSchedule made: the schedule's name
LABEL_SERIES = f"{GROUP}/series"  # on a BenchmarkResult: the history it is compared within
MANAGER = "tpcc-operator"
APP_NAME = "tpcc-benchmark"  # app.kubernetes.io/name of a run's Jobs, ConfigMaps and RBAC
try:
    OPERATOR_VERSION = importlib.metadata.version("tpcc-operator")
except importlib.metadata.PackageNotFoundError:  # the source tree on sys.path, not installed
    OPERATOR_VERSION = "unknown"

RUNNER_UID = 1000
CLUSTER_DOMAIN = "cluster.local"
# Where a runner pod serves its durability ledger to the verifier after its window.
LEDGER_PORT = 9101
# How the kill-process fault kills the database process in its container (Database.container):
# the charts write its pid to /tmp/database.pid.
KILL_PROCESS_COMMAND = ("sh", "-c", 'kill -KILL "$(cat /tmp/database.pid)"')
# a pause: the same process stopped, then resumed (signals to it are allowed to the container's
# own user; a stopped process's state is T in /proc/<pid>/stat)
PAUSE_PROCESS_COMMAND = ("sh", "-c", 'kill -STOP "$(cat /tmp/database.pid)"')
RESUME_PROCESS_COMMAND = ("sh", "-c", 'kill -CONT "$(cat /tmp/database.pid)"')

# A partition, run by the fault helper (a privileged pod with the host's PID namespace on the
# victim's node: the operator chart's faultHelper) as `sh -c SCRIPT sh POD_UID TAG [PEER_IP...]`.
# It finds a process of the victim pod by the pod UID in its cgroup path (any of them: all share
# the pod's network namespace, which outlives a restarted container), and runs the node's own
# iptables (entering the kubelet's mount namespace) inside that network namespace: DROP from and
# to each peer, every rule commented with TAG, so that healing deletes exactly those. Prints
# "ok N" (the rules with TAG now there) on success.
_IN_POD_NETNS = r"""set -e
U=$1; TAG=$2; shift 2
HOST=""
for p in /proc/[0-9]*; do [ "$(cat "$p/comm" 2>/dev/null)" = kubelet ] && HOST=${p#/proc/} && break; done
[ -n "$HOST" ] || { echo "no kubelet process on this node (is the helper's hostPID on?)"; exit 1; }
PID=$(grep -l -e "pod$U" -e "pod$(echo "$U" | tr - _)" /proc/[0-9]*/cgroup 2>/dev/null | head -n1 | cut -d/ -f3)
in_pod() { nsenter -t "$HOST" -m -- env PATH=/usr/sbin:/usr/bin:/sbin:/bin nsenter -t "$PID" -n -- sh -c "$1"; }
"""
PARTITION_SCRIPT = (
    _IN_POD_NETNS
    + r"""[ -n "$PID" ] || { echo "no process of pod $U on this node"; exit 1; }
in_pod "for ip in $*; do
  iptables -w -I INPUT -s \$ip -m comment --comment $TAG -j DROP
  iptables -w -I OUTPUT -d \$ip -m comment --comment $TAG -j DROP
done"
echo "ok $(in_pod "iptables -w -S" | grep -c -e "--comment $TAG ")"
"""
)
HEAL_PARTITION_SCRIPT = (
    _IN_POD_NETNS
    + r"""[ -n "$PID" ] || { echo "ok 0"; exit 0; }
in_pod "iptables -w -S | grep -e '--comment $TAG ' | sed 's/^-A/-D/' | while read -r r; do iptables -w \$r; done"
echo "ok $(in_pod "iptables -w -S" | grep -c -e "--comment $TAG " || true)"
"""
)
# every rule in the pod's network namespace (what a test or a user looks at afterwards)
LIST_RULES_SCRIPT = _IN_POD_NETNS + '[ -n "$PID" ] && in_pod "iptables -w -S"\n'
# A slow network, run the same way as `sh -c SCRIPT sh POD_UID TAG DELAY_MS JITTER_MS
# LOSS_PERCENT NETEM_ARG...`: netem as the root qdisc of the interface of the pod's default route
# (its egress: every round trip with the pod takes the delay once). Where the node's kernel has
# no netem, the same delay and loss by nfqueue_delayer, started here (the helper's own image) in
# the pod's network namespace, fed by an NFQUEUE rule on OUTPUT to that interface commented TAG
# (--queue-bypass: packets pass when it is gone); its pid in /tmp/TAG.pid. Prints "ok N netem|nfqueue" (N: the
# netem qdiscs or tagged rules now there) on success. Healing deletes a netem root qdisc there (a
# qdisc carries no comment: it is the fault's), the tagged rules, and stops the delayer (also
# when the pod is gone: the delayer would keep its network namespace alive).
NFQUEUE_NUM = 7031
_POD_DEV = r"""DEV=$(in_pod "ip -o route show default" | sed -n 's/.* dev \([^ ]*\).*/\1/p' | head -n1)
[ -n "$DEV" ] || { echo "no default route in the network namespace of pod $U"; exit 1; }
netems() { in_pod "tc qdisc show dev $DEV root" | grep -c -w netem || true; }
queued() { in_pod "iptables -w -S OUTPUT" | grep -c -e "--comment $TAG " || true; }
"""
SLOW_NETWORK_SCRIPT = (
    _IN_POD_NETNS
    + r"""[ -n "$PID" ] || { echo "no process of pod $U on this node"; exit 1; }
DELAY=$1; JITTER=$2; LOSS=$3; shift 3
"""
    + _POD_DEV
    + r"""OUT=$(in_pod "tc qdisc replace dev $DEV root netem $*" 2>&1) && { echo "ok $(netems) netem"; exit 0; }
case "$OUT" in
  *"kind is unknown"*) ;;
  *) echo "tc qdisc replace dev $DEV root netem $*: $OUT"; exit 1;;
esac
if ! kill -0 "$(cat /tmp/$TAG.pid 2>/dev/null)" 2>/dev/null; then
  setsid nsenter -t "$PID" -n -- python3 -m tpcc_operator.nfqueue_delayer @QUEUE@ "$DELAY" "$JITTER" "$LOSS" \
    </dev/null >/tmp/$TAG.log 2>&1 &
  echo $! >/tmp/$TAG.pid
  sleep 1
  kill -0 "$(cat /tmp/$TAG.pid)" 2>/dev/null || {
    echo "no netem in the node's kernel, and the NFQUEUE delayer ended: $(tail -n1 /tmp/$TAG.log)"
    exit 1
  }
fi
[ "$(queued)" != 0 ] ||
  in_pod "iptables -w -I OUTPUT -o $DEV -m comment --comment $TAG -j NFQUEUE --queue-num @QUEUE@ --queue-bypass"
echo "ok $(queued) nfqueue"
""".replace("@QUEUE@", str(NFQUEUE_NUM))
)
HEAL_SLOW_NETWORK_SCRIPT = (
    _IN_POD_NETNS
    + r"""kill "$(cat /tmp/$TAG.pid 2>/dev/null)" 2>/dev/null || true
rm -f /tmp/$TAG.pid /tmp/$TAG.log
[ -n "$PID" ] || { echo "ok 0"; exit 0; }
"""
    + _POD_DEV
    + r"""[ "$(netems)" = 0 ] || in_pod "tc qdisc del dev $DEV root"
in_pod "iptables -w -S OUTPUT | grep -e '--comment $TAG ' | sed 's/^-A/-D/' | while read -r r; do iptables -w \$r; done"
echo "ok $(($(netems) + $(queued)))"
"""
)
# every qdisc and rule in the pod's network namespace
LIST_QDISCS_SCRIPT = _IN_POD_NETNS + '[ -n "$PID" ] && in_pod "tc qdisc show; iptables -w -S"\n'
FAULT_HELPER_LABELS = {"app.kubernetes.io/component": "fault-helper"}


def partition_tag(pod_uid: str) -> str:
    """The comment on a partition's iptables rules: which pod's partition they are."""
    return f"tpcc-partition-{pod_uid}"


def slow_network_tag(pod_uid: str) -> str:
    """The comment on a slow network's NFQUEUE rule, and its delayer's pid file in the helper."""
    return f"tpcc-slow-network-{pod_uid}"


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
    # where the privileged fault helper's pods run (the operator chart's faultHelper.enabled);
    # empty: no helper, so no partition
    fault_helper_namespace: str = ""
    # whether the operator may create Chaos Mesh experiments (the operator chart's chaosMesh.enabled)
    chaos_mesh: bool = False


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


# ---- labels and ownership ------------------------------------------------------------------


def labels(run: Run, spec: RunSpec | None = None, role: str | None = None) -> dict[str, str]:
    """The bench.tpcc.dev labels the operator selects by, and the recommended app.kubernetes.io
    ones: a run's objects are one instance (run.prefix) of the application tpcc-benchmark, its
    roles the components. The database's pods (role "database", the chart's podLabels) keep
    their chart's name, instance, component and version."""
    out = {LABEL_MANAGED_BY: MANAGER, LABEL_RUN: run.name, LABEL_GENERATION: str(run.generation)}
    if role != "database":
        out |= {
            LABEL_NAME: APP_NAME,
            LABEL_INSTANCE: run.prefix,
            LABEL_VERSION: OPERATOR_VERSION,
            LABEL_PART_OF: MANAGER,
        }
        if role is not None:
            out[LABEL_COMPONENT] = role
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


def metadata(run: Run, name: str, spec: RunSpec | None = None, role: str | None = None) -> dict:
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
    values = _deep_merge(deployed_values(spec), {"podLabels": labels(run, spec, "database")})
    chart_policy.check_values(shipped, d.chart, values, settings.charts_dir)
    problem = too_small(spec, values, settings.charts_dir)
    if problem:
        raise chart_policy.DatabaseTooSmall(problem)
    refusal = database.refusal(spec)
    if refusal:
        raise chart_policy.ReleaseRefused(refusal)
    return HelmRelease(name=release_name(run), namespace=run.namespace, chart=chart, version=d.version, values=values)


def too_small(spec: RunSpec, values: dict, charts_dir: Path) -> str | None:
    """Why the deployment the values render cannot hold the most the spec loads (by the
    database's capacity estimate from the chart's values); None when it can, or when the chart
    is one whose defaults the operator does not know."""
    database = databases.of(spec)
    rendered = chart_policy.with_defaults(database.chart, spec.deploy.chart, values, charts_dir)
    if rendered is None:
        return None
    field, wanted, unit = workloads.of(spec).largest_load(spec)
    bound = database.capacity(spec.deploy, rendered, unit, database.load_values(spec))
    return capacity.too_small(database.name, bound, wanted, field)


def deployed_values(spec: RunSpec) -> dict[str, Any]:
    """The chart values of the spec's deployment that decide its size: the user's, then the
    replicas and what the database decides from database.deploy (helm_release adds labels)."""
    d = spec.deploy
    return _deep_merge(dict(d.values or {}), {"replicas": d.replicas, **databases.of(spec).decided_values(d)})


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
    return [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata(run, n), "data": {}} for n in names]


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
            "metadata": metadata(run, sa),
            "automountServiceAccountToken": False,
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": metadata(run, sa),
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
            "metadata": metadata(run, sa),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": sa},
            "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": run.namespace}],
        },
    ]


def run_objects(run: Run, spec: RunSpec) -> list[dict]:
    """Everything created once when a run begins, in creation order."""
    return runner_rbac(run, spec) + configmaps(run, spec)
