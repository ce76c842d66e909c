"""What every fault kind shares: the states of an injection, the pods it sees, the victims it
hands to the cluster, and the interface each kind implements (kinds.py, one class per action)."""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field

from ..databases import Database
from ..runspec import Chaos, Fault
from ..runstatus import ChaosExperiment, FaultEntry, RunnerTarget

INJECTING, INJECTED, HEALED, RECOVERED, SKIPPED = "Injecting", "Injected", "Healed", "Recovered", "Skipped"
DELETE_POD, KILL_PROCESS = "delete-pod", "kill-process"
SIGSTOP = "sigstop"  # a pause's method: SIGSTOP, then SIGCONT
IPTABLES = "iptables"  # a partition's: DROP rules in the victim's network namespace, then deleted
NETEM = "netem"  # a slow network's: a netem root qdisc on the victim's interface, then deleted
CHAOS_MESH = "chaos-mesh"  # a chaos fault's: a Chaos Mesh experiment created, then deleted
ISOLATE, HALVES = "isolate", "halves"  # a partition's split: one member off, or half of them
# where a partition leaves the runner pods: reaching every member, or only the members cut off
EVERYWHERE, CUT_OFF_SIDE = "everywhere", "cut-off-side"
RANDOM_MEMBER, PRIMARY, POD_INDEX = "random-member", "primary", "pod-index"  # which member a fault takes


@dataclass(frozen=True)
class Netem:
    """A slow network: each outgoing packet delayed delay_ms (give or take jitter_ms, uniformly),
    loss_percent of them dropped."""

    delay_ms: int = 0
    jitter_ms: int = 0
    loss_percent: float = 0

    def status(self) -> dict:
        """Its fields in a status.faults entry (those set)."""
        fields = {"delayMs": self.delay_ms, "jitterMs": self.jitter_ms, "lossPercent": self.loss_percent}
        return {k: v for k, v in fields.items() if v}

    @classmethod
    def of_status(cls, entry: dict) -> Netem:
        return cls(entry.get("delayMs", 0), entry.get("jitterMs", 0), entry.get("lossPercent", 0))

    def __str__(self) -> str:
        return f"netem {' '.join(netem_args(self))}"


def netem_args(netem: Netem) -> tuple[str, ...]:
    """The arguments of `tc qdisc replace dev DEV root netem ...` that make it so."""
    args: tuple[str, ...] = ()
    if netem.delay_ms:
        args += ("delay", f"{netem.delay_ms}ms") + ((f"{netem.jitter_ms}ms",) if netem.jitter_ms else ())
    if netem.loss_percent:
        args += ("loss", f"{netem.loss_percent:g}%")
    return args


@dataclass(frozen=True)
class Injection:
    number: int  # 1-based, in schedule order across all of spec.faults
    action: str  # a key of kinds.REGISTRY
    due: dt.datetime
    grace_seconds: int
    pod_index: int  # kill-node's victim ordinal
    method: str = DELETE_POD
    duration_seconds: int = 0  # a timed fault: how long it lasts
    victim: str = RANDOM_MEMBER  # a timed fault: random-member | primary | pod-index
    netem: Netem | None = None  # slow-network: what it does to the victim's packets
    split: str = ISOLATE  # partition: isolate | halves
    runners: str = EVERYWHERE  # partition: everywhere | cut-off-side
    chaos: Chaos | None = None  # chaos: the experiment asked for
    spec_index: int = 0  # its position in spec.faults (what a failure names)
    for_good: bool = False  # node-loss: its duration is the rest of the measured interval


@dataclass(frozen=True)
class DatabasePod:
    name: str
    uid: str
    ready: bool
    restarts: int = 0  # restartCount of its database container
    node: str = ""  # the node it runs on (empty: not scheduled yet)
    # when that container last ended killed by the kernel at its memory limit (its lastState:
    # reason OOMKilled, finishedAt), and the limit it has: what a failed run's message names
    oom_killed_at: str = ""
    memory_limit: str = ""


@dataclass
class Kill:
    pod: str
    uid: str
    grace_seconds: int
    method: str = DELETE_POD
    restarts: int = 0  # kill-process, pause: the restartCount the container must still have
    netem: Netem | None = None  # slow-network: what it does to the victim's packets
    side: tuple[str, ...] = ()  # partition: the UIDs of the pods cut off together (the rest: peers)
    node: str = ""  # node-loss: the node cut off
    duration_seconds: int = 0  # node-loss: how long (the helper heals it itself)
    experiment: ChaosExperiment | None = None  # chaos: the experiment to create, or delete


@dataclass(frozen=True)
class Cluster:
    """Where a kind carries out its injections and heals: the run's namespace, the fault helper's
    (empty: none installed), the database's container, the labels of its pods, the run's UID
    (what tags the changes a fault makes outside a pod) and name (with the UID: the owner of
    what a fault creates)."""

    namespace: str
    helper_namespace: str
    container: str | None
    members: dict[str, str] = field(default_factory=dict)
    run_uid: str = ""
    run_name: str = ""


@dataclass(frozen=True)
class Scene:
    """What a kind may record beside its victims when one is due: the database's Helm release and
    the runner pods running then (a partition that puts them on the cut-off side)."""

    release: str
    runner_pods: tuple[RunnerTarget, ...] = ()


@dataclass(frozen=True)
class Capabilities:
    """What the operator may do on this cluster: run the privileged fault helper (the operator
    chart's faultHelper.enabled), create Chaos Mesh experiments (chaosMesh.enabled), and which
    Chaos Mesh kinds the API server serves."""

    fault_helper: bool = False
    chaos_mesh: bool = False
    chaos_kinds: frozenset[str] = frozenset()


def victims_of(entry: dict) -> list[dict]:
    """The pods an entry kills, each {pod, uid, restarts}: kill-all's targets, or its one target."""
    if "targets" in entry:
        return entry["targets"]
    return [{"pod": entry["target"], "uid": entry["targetUID"], "restarts": entry.get("targetRestarts", 0)}]


@dataclass(frozen=True)
class Members:
    """What a due fault's victims are chosen among: the database, its Helm release and pods, the
    pod that says it is the primary, the run's seed (its UID: a repeated decision picks the same
    pods) and the nodes of the operator and the runner pods (busy_nodes, which a node-loss
    spares)."""

    database: Database
    release: str
    pods: list[DatabasePod]
    primary: str | None
    seed: str
    busy_nodes: frozenset[str] = frozenset()


def choose_member(which: str, injection: Injection, among: Members) -> DatabasePod | str:
    """The member `which` names (pod-index, primary or random-member), or why there is none.
    Deterministic for a given seed (the run's UID), so a repeated decision picks the same pod."""
    by_name = {p.name: p for p in among.pods}
    ready = sorted((p for p in among.pods if p.ready), key=lambda p: p.name)
    if which == POD_INDEX:
        name = f"{among.release}-{injection.pod_index}"
        pod = by_name.get(name)
        return pod if pod and pod.ready else f"pod {name} is not running and ready"
    if which == PRIMARY and among.database.has_primary:
        if not among.primary:
            return f"no {among.database.name} member names a primary"
        pod = by_name.get(among.primary)
        return pod if pod and pod.ready else f"primary {among.primary} is not a ready pod of {among.release}"
    if not ready:
        return "no database pod is ready"
    return random.Random(f"{among.seed}/{injection.number}").choice(ready)


class FaultKind:
    """One spec.faults action: how it picks its victims, what it records in its status.faults
    entry, what it does to them through kube_actions and how that is undone. The kill kinds end
    with the victim back (Recovered); a timed kind lasts durationSeconds, is then healed, and
    recovers once the database has settled."""

    action: str
    # the ways it can be carried out (a status entry's method); the first is the default
    methods: tuple[str, ...] = (DELETE_POD, KILL_PROCESS)
    timed = False  # lasts durationSeconds, then healed
    needs_helper = False  # carried out by the operator's privileged fault helper on the victim's node
    takes_every_pod = False  # its victims are every database pod at once
    fails_without_victim = False  # no victim fails the run (else the injection is skipped)
    spares_busy_nodes = False  # chooses among members on nodes without the operator or a runner pod
    member: str | None = None  # the member it always takes; None: the injection's victim field

    def method(self, asked: str) -> str:
        """The method of an injection the spec asks for with method `asked` (its default on the
        kinds that have one way)."""
        return asked if asked in self.methods else self.methods[0]

    def which(self, injection: Injection) -> str:
        """The member it takes: pod-index, primary or random-member."""
        return self.member or injection.victim

    def choose(self, injection: Injection, among: Members) -> list[DatabasePod] | str:
        """Its victims (one, unless the kind takes several), or why there are none."""
        victim = choose_member(self.which(injection), injection, among)
        return victim if isinstance(victim, str) else [victim]

    def refusal(self, fault: Fault, can: Capabilities) -> str | None:
        """Why this operator cannot inject it on this cluster (asked before anything is installed),
        if so, beginning with the field of spec.faults[i] it names: a kind that needs the
        privileged fault helper, where the operator chart installed none."""
        if self.needs_helper and not can.fault_helper:
            return (
                f"action: {self.action} needs the operator's fault helper, a privileged pod per node that puts "
                "iptables rules or a netem qdisc into the victim's network namespace; install the operator "
                "chart with faultHelper.enabled=true (docs/faults-and-durability.md)"
            )
        return None

    def needs_runner_pods(self, injection: Injection) -> bool:
        """Whether choosing it needs the runner pods running (Scene.runner_pods)."""
        return False

    def impossible(self, pods: list[DatabasePod], busy_nodes: frozenset[str]) -> str | None:
        """Why it cannot be injected into these pods at all (whatever their readiness), if so."""
        return None

    def record(self, entry: dict, injection: Injection, chosen: list[DatabasePod], scene: Scene) -> None:
        """The kind's own fields in the INJECTING status entry of its chosen victims."""
        if self.timed:
            entry["durationSeconds"] = injection.duration_seconds

    def kills(self, entry: FaultEntry) -> list[Kill]:
        """What the cluster is to do to each victim of an entry being injected."""
        method, grace = entry.method or DELETE_POD, entry.grace_period_seconds or 0
        return [Kill(t.pod, t.uid, grace, method, t.restarts) for t in entry.victims]

    def heals(self, entry: FaultEntry) -> list[Kill]:
        """What the cluster is to undo on each victim of an entry being healed (timed kinds)."""
        return [Kill(t.pod, t.uid, 0, entry.method or "", t.restarts) for t in entry.victims]

    def injected(self, entry: FaultEntry) -> str:
        """What it did, for the FaultInjected event."""
        raise NotImplementedError

    def healed(self, entry: FaultEntry) -> str:
        """What its heal did, for the FaultHealed event (timed kinds)."""
        raise NotImplementedError

    def inject(self, cluster: Cluster, kill: Kill) -> str:
        """Carry it out on one victim; what happened, for the operator's log."""
        raise NotImplementedError

    def heal(self, cluster: Cluster, kill: Kill) -> str:
        """Undo it on one victim (timed kinds; idempotent); what happened, for the log."""
        raise NotImplementedError
