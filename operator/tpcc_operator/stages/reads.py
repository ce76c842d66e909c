"""What a tick asks the cluster to read: one small frozen object per read, naming what it reads
(a Job, a ConfigMap's file, the pods with some labels) and, where several reads share a kind,
the World field it fills. The stage modules say which reads they need (their `observes`);
kube.observe carries them out and decides nothing.

A stage asks twice: first with nothing seen (`seen` is None), then with the World those reads
filled, for what follows from them (a finished Job's report, the nodes when a pod is not
scheduled): reads that would cost an API call every tick are made only when they can matter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# The World fields a Job's state and a report fill (a test holds them to World's fields).
JobField = Literal["load", "runner", "midcheck", "verifier", "checker", "acid", "analyzer"]
ReportField = Literal[
    "load_report",
    "load_check_report",
    "midcheck_report",
    "durability_report",
    "check_report",
    "acid_report",
    "change_points",
]


@dataclass(frozen=True)
class Job:
    """A Job's state (exists, succeeded, failed with its pod's one-line error)."""

    into: JobField
    name: str


@dataclass(frozen=True)
class Report:
    """A JSON document a Job wrote into a ConfigMap (None when absent or unreadable)."""

    into: ReportField
    configmap: str
    key: str


@dataclass(frozen=True)
class StartAt:
    """startAt in the run's start ConfigMap -> World.start_at."""

    configmap: str


@dataclass(frozen=True)
class ReadyRunners:
    """How many pods of the runner Job are Ready -> World.runners_ready."""

    job: str


@dataclass(frozen=True)
class Results:
    """A runner pod's results.json in its results ConfigMap -> World.results[shard]."""

    shard: int
    configmap: str


@dataclass(frozen=True)
class RunnerPodIps:
    """Shard -> IP of each running pod of the runner Job -> World.runner_pod_ips."""

    job: str


@dataclass(frozen=True)
class RunnerPods:
    """The running pods of the runner Job, each with its UID -> World.runner_pods (what a partition
    puts on its cut-off side)."""

    job: str


@dataclass(frozen=True)
class BusyNodes:
    """The nodes of the operator's pod and of the runner Job's pods -> World.busy_nodes (what a
    node-loss spares)."""

    job: str


@dataclass(frozen=True)
class DatabaseReadiness:
    """Ready database pods and why the first other one is not -> World.database_ready,
    World.database_waiting."""

    labels: dict[str, str]


@dataclass(frozen=True)
class DatabasePods:
    """The database pods with their container's restartCount -> World.database_pods."""

    labels: dict[str, str]
    container: str


@dataclass(frozen=True)
class Primary:
    """The pod the database names primary (Database.primary, asked of its members) -> World.primary."""

    database: str  # database.type
    endpoints: tuple[str, ...]


@dataclass(frozen=True)
class DatabaseImages:
    """The images of the database pods' containers -> World.database_images."""

    labels: dict[str, str]


@dataclass(frozen=True)
class PodStates:
    """Each pod's first waiting container, and for a pod not scheduled its requests and claims
    -> World.pods."""

    labels: dict[str, str]


@dataclass(frozen=True)
class LargestNode:
    """The largest allocatable cpu and memory of any node -> World.largest_node."""


@dataclass(frozen=True)
class FailedCreates:
    """The FailedCreate Events of the controllers whose names start with `prefix` ->
    World.failed_creates."""

    prefix: str


@dataclass(frozen=True)
class History:
    """The BenchmarkResults of a history series -> World.history."""

    series: str


@dataclass(frozen=True)
class NamedBaseline:
    """One BenchmarkResult's summary, the spec's named baseline -> World.named_baseline."""

    name: str


Read = (
    Job
    | Report
    | StartAt
    | ReadyRunners
    | Results
    | RunnerPodIps
    | BusyNodes
    | RunnerPods
    | DatabaseReadiness
    | DatabasePods
    | Primary
    | DatabaseImages
    | PodStates
    | LargestNode
    | FailedCreates
    | History
    | NamedBaseline
)


def once(wanted: list[Read]) -> list[Read]:
    """Each read once, in the order first asked (two concerns may ask for the same)."""
    out: list[Read] = []
    for read in wanted:
        if read not in out:
            out.append(read)
    return out
