"""node-loss: a whole node cut off the network for durationSeconds (or, forGood, for the rest of
the measured interval), by the fault helper on it.

The helper runs in the node's network namespace (hostNetwork) and there puts DROP rules on every
interface but lo (INPUT, OUTPUT, FORWARD: the node's own traffic and its pods'), commented with
the run's tag so that a heal finds exactly its rules. The node's kubelet then reaches nobody: the
node goes NotReady after the controller manager's node monitor grace period, and its pods are
evicted once their tolerations of not-ready/unreachable run out. The operator cannot exec into a
node it has cut off, so the helper arms the heal itself: a timer in its container removes the
rules after durationSeconds. The operator's own heal (once it reaches the node's helper again)
removes whatever is left and stops the timer: idempotent.

The victim is a database member on a node that hosts neither the operator (NODE_NAME, from the
downward API) nor a runner pod: cutting those off would measure the loss of the benchmark, not of
the database member.
"""

from __future__ import annotations

import dataclasses

from ..runstatus import FaultEntry
from .base import Cluster, DatabasePod, FaultKind, Injection, Kill, Members, Scene

NODE_IPTABLES = "node-iptables"  # a node-loss's method: DROP rules in the node's network namespace

# Run by the fault helper on the victim's node as `sh -c SCRIPT sh TAG [DURATION_SECONDS]`. It runs
# the node's own iptables (entering the kubelet's mount namespace: the node's iptables backend) in
# its own network namespace, which is the node's (hostNetwork). `uncut` deletes the tagged rules;
# `rules` counts them.
_ON_NODE = r"""set -e
TAG=$1; shift
HOST=""
for p in /proc/[0-9]*; do [ "$(cat "$p/comm" 2>/dev/null)" = kubelet ] && HOST=${p#/proc/} && break; done
[ -n "$HOST" ] || { echo "no kubelet process on this node (is the helper's hostPID on?)"; exit 1; }
NODE="nsenter -t $HOST -m -- env PATH=/usr/sbin:/usr/bin:/sbin:/bin"
"""
_RULES = r"""UNCUT="iptables -w -S | grep -e '--comment $TAG ' | sed s/^-A/-D/ |
  while read -r r; do iptables -w \$r; done"
rules() { $NODE sh -c "iptables -w -S" | grep -c -e "--comment $TAG " || true; }
"""
# Arms the fault in one process of its own session in the helper container (its pid, which is its
# process group, in /tmp/TAG.pid; a repeat, after an operator restart, finds it and adds nothing):
# CUT_DELAY_SECONDS later it cuts the node off (the exec's answer must leave the node first), and
# durationSeconds after that it uncuts it. Prints "ok armed" once iptables answers there.
CUT_DELAY_SECONDS = 2
NODE_LOSS_SCRIPT = (
    _ON_NODE
    + _RULES
    + r"""DURATION=$1
CUT="iptables -w -I INPUT ! -i lo -m comment --comment $TAG -j DROP
iptables -w -I OUTPUT ! -o lo -m comment --comment $TAG -j DROP
iptables -w -I FORWARD -m comment --comment $TAG -j DROP"
OUT=$($NODE sh -c "iptables -w -S INPUT" 2>&1 >/dev/null) || { echo "iptables on node: $OUT"; exit 1; }
if ! kill -0 "$(cat /tmp/$TAG.pid 2>/dev/null)" 2>/dev/null; then
  setsid $NODE sh -c "sleep @DELAY@; [ \$(iptables -w -S | grep -c -e '--comment $TAG ') != 0 ] || { $CUT; }
echo cut; sleep $DURATION; $UNCUT; echo uncut" </dev/null >/tmp/$TAG.log 2>&1 &
  echo $! >/tmp/$TAG.pid
fi
echo "ok armed"
""".replace("@DELAY@", str(CUT_DELAY_SECONDS))
)
# Stops the timer (its process group) if it still runs, deletes the tagged rules. Prints "ok 0".
HEAL_NODE_LOSS_SCRIPT = (
    _ON_NODE
    + _RULES
    + r"""kill -TERM -"$(cat /tmp/$TAG.pid 2>/dev/null)" 2>/dev/null || true
rm -f /tmp/$TAG.pid /tmp/$TAG.log
$NODE sh -c "$UNCUT"
echo "ok $(rules)"
"""
)
RULES_PER_NODE = 3  # INPUT, OUTPUT, FORWARD
# The helper container's command (the operator chart's fault-helper.yaml holds it, a test holds
# the two equal): before it idles, it deletes every node-loss rule on its node. A helper restarted
# while its node was cut off lost its timer with its old container, and the operator cannot reach
# the node to heal it: the new container reconnects it.
HELPER_COMMAND = (
    "sh",
    "-c",
    'for p in /proc/[0-9]*; do [ "$(cat $p/comm 2>/dev/null)" = kubelet ] && nsenter -t ${p#/proc/} -m -- '
    "env PATH=/usr/sbin:/usr/bin:/sbin:/bin sh -c \"iptables -w -S | grep -e '--comment tpcc-node-loss-' | "
    'sed s/^-A/-D/ | while read -r r; do iptables -w \\$r; done" && break; done; exec sleep infinity',
)


def node_loss_tag(run_uid: str) -> str:
    """The comment on a node-loss's rules and its timer's pid file: which run cut the node off."""
    return f"tpcc-node-loss-{run_uid}"


def eligible(pods: list[DatabasePod], busy_nodes: frozenset[str]) -> list[DatabasePod]:
    """The members whose node may be lost: on a known node that hosts neither the operator nor
    a runner pod."""
    return [p for p in pods if p.node and p.node not in busy_nodes]


def no_node_to_lose(pods: list[DatabasePod], busy_nodes: frozenset[str]) -> str:
    """Why eligible() found nobody."""
    nodes = sorted({p.node for p in pods if p.node})
    return (
        f"no database member runs on a node without the operator or a runner pod (members on "
        f"{', '.join(nodes) or 'no node yet'}; operator and runners on {', '.join(sorted(busy_nodes)) or 'none'}): "
        "node-loss needs a cluster of several nodes"
    )


class NodeLoss(FaultKind):
    action = "node-loss"
    methods = (NODE_IPTABLES,)
    timed = True
    needs_helper = True
    fails_without_victim = True  # no node to lose here: the fault asked for cannot happen
    spares_busy_nodes = True

    def choose(self, injection: Injection, among: Members) -> list[DatabasePod] | str:
        free = eligible(among.pods, among.busy_nodes)
        if not free:
            return no_node_to_lose(among.pods, among.busy_nodes)
        return super().choose(injection, dataclasses.replace(among, pods=free))

    def impossible(self, pods: list[DatabasePod], busy_nodes: frozenset[str]) -> str | None:
        """Every member scheduled, and each beside the operator or a runner pod."""
        if pods and all(p.node for p in pods) and not eligible(pods, busy_nodes):
            return no_node_to_lose(pods, busy_nodes)
        return None

    def record(self, entry: dict, injection: Injection, chosen: list[DatabasePod], scene: Scene) -> None:
        super().record(entry, injection, chosen, scene)
        entry["node"] = chosen[0].node
        if injection.for_good:
            entry["forGood"] = True

    def kills(self, entry: FaultEntry) -> list[Kill]:
        seconds = entry.duration_seconds or 0
        return [dataclasses.replace(k, node=entry.node or "", duration_seconds=seconds) for k in super().kills(entry)]

    def heals(self, entry: FaultEntry) -> list[Kill]:
        return [dataclasses.replace(k, node=entry.node or "") for k in super().heals(entry)]

    def injected(self, entry: FaultEntry) -> str:
        return f"cut node {entry.node} (with {entry.who}) off the network, every interface but lo (iptables DROP), " + (
            f"for good: the rest of the measured interval ({entry.duration_seconds}s)"
            if entry.for_good
            else f"for {entry.duration_seconds}s"
        )

    def healed(self, entry: FaultEntry) -> str:
        return f"reconnected node {entry.node} (its iptables rules deleted)"

    def inject(self, cluster: Cluster, kill: Kill) -> str:
        """The helper on the victim's node arms the cut and its own heal, if the victim is still
        the pod chosen (else it went, and the node it was on may be another's now)."""
        from .. import kube_actions

        pod = kube_actions.victim(cluster.namespace, kill)
        if pod is None:
            return f"pod {kill.pod} gone"
        node, tag = pod.spec.node_name, node_loss_tag(cluster.run_uid)
        what = f"node-loss of node {node} (pod {kill.pod})"
        args = [tag, str(kill.duration_seconds)]
        kube_actions.on_node_helper(
            cluster.helper_namespace, node, NODE_LOSS_SCRIPT, args, what, ("ok armed",), "FaultNotInjected"
        )
        return f"node {node} of pod {kill.pod} cut off"

    def heal(self, cluster: Cluster, kill: Kill) -> str:
        """Delete the rules and stop the timer once the node's helper answers again (until then a
        transient failure, retried: its helper is not Ready while the node is lost)."""
        from .. import kube_actions

        what, args = f"reconnecting node {kill.node}", [node_loss_tag(cluster.run_uid)]
        kube_actions.on_node_helper(
            cluster.helper_namespace, kill.node, HEAL_NODE_LOSS_SCRIPT, args, what, ("ok 0",), "FaultNotHealed", True
        )
        return f"node {kill.node} reconnected"
