"""One class per fault action (spec.faults[].action), and REGISTRY: the CRD's action enum is held
to it by a test, and nothing outside this module branches on the action.

The kinds carry out their faults through kube_actions, imported where they do (inject, heal):
kube_actions imports the stage machine, whose actions name these kinds' Kill, so a module-level
import would be a cycle."""

from __future__ import annotations

import random

from .. import plan
from ..runstatus import FaultEntry
from .base import (
    CUT_OFF_SIDE,
    HALVES,
    IPTABLES,
    KILL_PROCESS,
    NETEM,
    POD_INDEX,
    PRIMARY,
    RANDOM_MEMBER,
    SIGSTOP,
    Cluster,
    DatabasePod,
    FaultKind,
    Injection,
    Kill,
    Members,
    Netem,
    Scene,
)
from .chaos_mesh import ChaosMesh
from .node_loss import NodeLoss


class _PodKill(FaultKind):
    """A kill: the victim's pod deleted (delete-pod) or its database process SIGKILLed
    (kill-process); it has recovered once a new incarnation of it is ready."""

    def injected(self, entry: FaultEntry) -> str:
        if entry.method == KILL_PROCESS:
            return f"killed the database process of {entry.who} (SIGKILL)"
        return f"deleted {entry.who} with grace period {entry.grace_period_seconds}s"

    def inject(self, cluster: Cluster, kill: Kill) -> str:
        from .. import kube_actions

        if kill.method == KILL_PROCESS:
            assert cluster.container, "faults go into a deployed database only, which runs in its chart's container"
            killed = kube_actions.kill_process(cluster.namespace, kill, cluster.container)
            return f"database process of pod {kill.pod} {'killed' if killed else 'already restarted or gone'}"
        killed = kube_actions.kill_pod(cluster.namespace, kill)
        return f"pod {kill.pod} {'deleted' if killed else 'already gone'}"


class KillPrimary(_PodKill):
    """The member the database names primary (a database without one: a random member)."""

    action = "kill-primary"
    member = PRIMARY


class KillNode(_PodKill):
    """The pod with ordinal podIndex."""

    action = "kill-node"
    member = POD_INDEX


class KillRandomMember(_PodKill):
    action = "kill-random-member"
    member = RANDOM_MEMBER


class KillAll(_PodKill):
    """Every database pod at once (TPC-C clause 3.5.3): all must be ready to choose them."""

    action = "kill-all"
    takes_every_pod = True

    def choose(self, injection: Injection, among: Members) -> list[DatabasePod] | str:
        down = sorted(p.name for p in among.pods if not p.ready)
        if not among.pods or down:
            return f"not every database pod is ready ({', '.join(down) or 'none found'})"
        return sorted(among.pods, key=lambda p: p.name)


class Pause(FaultKind):
    """SIGSTOP to the victim's database process for durationSeconds, then SIGCONT."""

    action = "pause"
    methods = (SIGSTOP,)
    timed = True

    def injected(self, entry: FaultEntry) -> str:
        return f"stopped the database process of {entry.who} (SIGSTOP) for {entry.duration_seconds}s"

    def healed(self, entry: FaultEntry) -> str:
        return f"resumed the database process of {entry.who} (SIGCONT)"

    def inject(self, cluster: Cluster, kill: Kill) -> str:
        from .. import kube_actions

        assert cluster.container, "faults go into a deployed database only, which runs in its chart's container"
        paused = kube_actions.kill_process(cluster.namespace, kill, cluster.container, plan.PAUSE_PROCESS_COMMAND)
        return f"database process of pod {kill.pod} {'stopped' if paused else 'gone'}"

    def heal(self, cluster: Cluster, kill: Kill) -> str:
        from .. import kube_actions

        assert cluster.container, "faults go into a deployed database only, which runs in its chart's container"
        resumed = kube_actions.resume_process(cluster.namespace, kill, cluster.container)
        return f"database process of pod {kill.pod} {'resumed' if resumed else 'restarted or gone'}"


def _runners(entry: FaultEntry) -> str:
    """The runner pods a partition put on its cut-off side, as an event names them ("" for none)."""
    pods = [r.pod for r in entry.runner_targets or ()]
    return f"runner pod{'s' if len(pods) > 1 else ''} {', '.join(pods)}" if pods else ""


def half(injection: Injection, pods: list[DatabasePod], seed: str) -> list[DatabasePod] | str:
    """Jepsen's random halves: every pod ready, shuffled (deterministic for the seed), the first
    len // 2 of them: the minority, or with an even count one of two equal halves."""
    down = sorted(p.name for p in pods if not p.ready)
    if len(pods) < 2 or down:
        return f"not every database pod is ready ({', '.join(down) or 'fewer than two found'})"
    shuffled = sorted(pods, key=lambda p: p.name)
    random.Random(f"{seed}/{injection.number}").shuffle(shuffled)
    return sorted(shuffled[: len(pods) // 2], key=lambda p: p.name)


class Partition(FaultKind):
    """The victim (or a random half) cut off from the other members, both ways, by iptables DROP
    rules in its network namespace, for durationSeconds; with runners cut-off-side the runner
    pods too (DROP rules for the other side's members in theirs): they reach only the cut-off
    members, as clients stuck with the minority."""

    action = "partition"
    methods = (IPTABLES,)
    timed = True
    needs_helper = True

    def choose(self, injection: Injection, among: Members) -> list[DatabasePod] | str:
        if injection.split == HALVES:
            return half(injection, among.pods, among.seed)
        return super().choose(injection, among)

    def needs_runner_pods(self, injection: Injection) -> bool:
        return injection.runners == CUT_OFF_SIDE

    def record(self, entry: dict, injection: Injection, chosen: list[DatabasePod], scene: Scene) -> None:
        super().record(entry, injection, chosen, scene)
        entry["split"] = injection.split
        if injection.runners == CUT_OFF_SIDE:
            entry["runners"] = CUT_OFF_SIDE
            entry["runnerTargets"] = [{"pod": r.pod, "uid": r.uid} for r in scene.runner_pods]

    def kills(self, entry: FaultEntry) -> list[Kill]:
        """Each victim with its side: the pods cut off together, which keep reaching each other;
        and each runner pod put on that side: cut off from the members that are not on it."""
        kills = super().kills(entry)
        side = tuple(k.uid for k in kills)
        runners = [Kill(r.pod, r.uid, 0, IPTABLES, side=side) for r in entry.runner_targets or ()]
        return [Kill(k.pod, k.uid, k.grace_seconds, k.method, k.restarts, side=side) for k in kills] + runners

    def heals(self, entry: FaultEntry) -> list[Kill]:
        return super().heals(entry) + [Kill(r.pod, r.uid, 0, IPTABLES) for r in entry.runner_targets or ()]

    def injected(self, entry: FaultEntry) -> str:
        runners = _runners(entry)
        return (
            f"cut {entry.who} off from the other members, both ways (iptables DROP), for {entry.duration_seconds}s"
            + (f", with {runners} on its side (they reach only it)" if runners else "")
        )

    def healed(self, entry: FaultEntry) -> str:
        runners = _runners(entry)
        rejoined = f"{entry.who} and {runners}" if runners else entry.who
        return f"rejoined {rejoined} to the other members (the iptables rules deleted)"

    def inject(self, cluster: Cluster, kill: Kill) -> str:
        from .. import kube_actions

        cut = kube_actions.partition(cluster.namespace, cluster.helper_namespace, kill, cluster.members)
        return f"pod {kill.pod} {'cut off from the other members' if cut else 'gone'}"

    def heal(self, cluster: Cluster, kill: Kill) -> str:
        from .. import kube_actions

        healed = kube_actions.heal_partition(cluster.namespace, cluster.helper_namespace, kill)
        return f"partition of pod {kill.pod} {'healed' if healed else 'gone with its pod'}"


class SlowNetwork(FaultKind):
    """What the victim sends delayed (netem, or the NFQUEUE delayer) for durationSeconds."""

    action = "slow-network"
    methods = (NETEM,)
    timed = True
    needs_helper = True

    def record(self, entry: dict, injection: Injection, chosen: list[DatabasePod], scene: Scene) -> None:
        super().record(entry, injection, chosen, scene)
        entry.update((injection.netem or Netem()).status())

    def kills(self, entry: FaultEntry) -> list[Kill]:
        netem = Netem.of_status(entry.to_json())
        return [Kill(k.pod, k.uid, k.grace_seconds, k.method, k.restarts, netem) for k in super().kills(entry)]

    def injected(self, entry: FaultEntry) -> str:
        netem = Netem.of_status(entry.to_json())
        return f"slowed the packets {entry.who} sends ({netem}) for {entry.duration_seconds}s"

    def healed(self, entry: FaultEntry) -> str:
        return f"restored the network of {entry.who} (its netem qdisc or NFQUEUE delayer removed)"

    def inject(self, cluster: Cluster, kill: Kill) -> str:
        from .. import kube_actions

        by = kube_actions.slow_network(cluster.namespace, cluster.helper_namespace, kill)
        return f"pod {kill.pod} {f'slowed ({kill.netem}) by {by}' if by else 'gone'}"

    def heal(self, cluster: Cluster, kill: Kill) -> str:
        from .. import kube_actions

        healed = kube_actions.heal_slow_network(cluster.namespace, cluster.helper_namespace, kill)
        return f"network of pod {kill.pod} {'restored' if healed else 'gone with its pod'}"


REGISTRY: dict[str, FaultKind] = {
    k.action: k
    for k in (
        KillPrimary(),
        KillNode(),
        KillRandomMember(),
        KillAll(),
        Pause(),
        Partition(),
        SlowNetwork(),
        NodeLoss(),
        ChaosMesh(),
    )
}
# Who carries out a Kill of each method: a kill's pod delete or process kill is the same whichever
# kill action chose the victim, and each timed kind has a method of its own.
BY_METHOD: dict[str, FaultKind] = {m: k for k in REGISTRY.values() for m in k.methods}
