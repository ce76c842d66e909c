"""Fault injection during the measured interval: the schedule, the choice of the victim pod and
the life of one injection in status.faults. Pure: the timer observes the database pods (and,
for MongoDB, the replica set's `hello`), asks `decide`, kills what it says, records the entries.

Two ways to kill (a fault's `method`):
  delete-pod    the pod is deleted; the StatefulSet makes a new one, which mounts the member's
                PersistentVolumeClaim again (an emptyDir is gone with the old pod);
  kill-process  the database process gets SIGKILL inside its container (pods/exec; the charts
                write its pid to /tmp/database.pid); the kubelet restarts the container in the
                same pod, on the same volume: a crash-restart.

An injection lives through three ticks so that an operator restart never kills twice:
  Injecting  the victim (pod name, UID and its database container's restartCount) is chosen
             and recorded;
  Injected   the pod was deleted with a UID precondition (a repeat after a restart answers
             404/409 and kills nothing more), or its process killed if the pod still has that
             UID and restartCount (a repeat finds the count gone up), injectedTime recorded;
  Recovered  delete-pod: a new pod of that name (another UID) is Ready; kill-process: the
             container restarted (restartCount above the recorded one) and is Ready; and all
             other pods are Ready; recoverySeconds = recoveredTime - injectedTime.
An injection that finds no victim is Skipped with a message. Injections never overlap: the
next one waits until the previous has recovered (killing a second node of a k=1 cluster
while the first is still down would take the database down, which is another test).

kill-all kills every database pod at once (the loss of the whole system, clause 3.5.3): all
must be ready to choose them; it has recovered when every one has come back. On a database that
keeps its data in memory only (VoltDB CE: no command log) that loses everything acknowledged,
which the durability verdict then counts: the finding, not a test failure.

pause (a gray failure: the member stops, nothing crashes) lives one state longer:
  Injected   its database process got SIGSTOP inside its container (pods/exec, the pid the
             charts write to /tmp/database.pid, as kill-process): it takes no CPU time and
             answers nothing, while its sockets stay open and the kernel still accepts
             connections on them;
  Healed     durationSeconds after injectedTime the process got SIGCONT (healedTime);
  Recovered  SETTLE_SECONDS after the heal, every database pod is Ready: what the database did
             about the stopped member shows by then (VoltDB with a heartbeat timeout shorter
             than the pause dropped it; the resumed node finds itself cut off, stops itself and
             its container restarts and rejoins: restartCount above targetRestarts).
A pause still in force when the run ends any other way (failed) is healed by the finished
stage (`unhealed`), and by the deletion finalizer.

partition lives through the same states: Injected when the victim is cut off from the other
database members in both directions (iptables DROP rules, tagged with the victim pod's UID, in its
network namespace, put there by the operator's privileged fault helper on its node: see kube.py),
Healed when the rules are deleted, Recovered as a pause. Its clients (the runners) still reach it:
Jepsen's "isolate one node". With split halves, Jepsen's "random halves": with every pod ready,
half of them (rounded down: a minority, or one of two equal halves) chosen at random are cut off
from the others together, each keeping its own side.

slow-network too: Injected when the victim's outgoing packets go through a netem queueing
discipline (delayMs, with jitterMs, and lossPercent of them dropped: `netem_args`) put as the
root qdisc of its network interface by the same fault helper, so every round trip with it, to
the other members and to its clients, takes delayMs longer; on a node whose kernel has no netem,
through the helper's NFQUEUE delayer (nfqueue_delayer.py) instead. Healed when that qdisc, or the
delayer and its rule, are removed.

What "primary" means is the database's (`Database.has_primary`, `primary`): MongoDB, the member
the replica set names primary in `hello`; VoltDB has none (every node leads some partitions,
k-safety keeps copies on the others), so kill-primary kills a random member, as
kill-random-member does.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from dataclasses import dataclass, field

from .. import databases
from ..runspec import RunSpec
from ..runstatus import FaultEntry, RunnerTarget
from ..timestamps import parse_time, rfc3339
from .base import (
    EVERYWHERE,
    HEALED,
    INJECTED,
    INJECTING,
    ISOLATE,
    KILL_PROCESS,
    RECOVERED,
    SIGSTOP,
    SKIPPED,
    DatabasePod,
    Injection,
    Kill,
    Members,
    Netem,
    Scene,
    choose_member,
    victims_of,
)
from .kinds import REGISTRY

# how long after a heal the database has to show what it did about it before recovery is judged
SETTLE_SECONDS = 10


@dataclass
class Decision:
    faults: list[dict] | None = None  # the new status.faults (None: unchanged)
    kills: list[Kill] = field(default_factory=list)  # one victim, or every pod (kill-all)
    heals: list[Kill] = field(default_factory=list)  # a timed fault: the victim to restore
    events: list[tuple[str, str, str]] = field(default_factory=list)  # (type, reason, message)
    failure: str | None = None  # why the run fails: a fault that cannot be injected here


def measured_end(spec: RunSpec, start_at: dt.datetime) -> dt.datetime:
    """The end of the measured interval of runners released at start_at."""
    return start_at + dt.timedelta(seconds=spec.workload.warmup_seconds + spec.workload.duration_seconds)


def schedule(spec: RunSpec, start_at: dt.datetime) -> list[Injection]:
    """Every injection of spec.faults, timed from the start of the measured interval
    (startAt + warmup), in order of due time."""
    measure = start_at + dt.timedelta(seconds=spec.workload.warmup_seconds)
    out = []
    for index, f in enumerate(spec.faults or ()):
        slowed = f.delay_ms or f.jitter_ms or f.loss_percent  # the CRD admits them on a slow-network only
        netem = Netem(f.delay_ms or 0, f.jitter_ms or 0, f.loss_percent or 0) if slowed else None
        for k in range(f.count):
            due = measure + dt.timedelta(seconds=f.after_seconds + k * f.every_seconds)
            method = REGISTRY[f.action].method(f.method)
            # a node-loss for good lasts to the end of the measured interval (the CRD allows it once)
            timed = spec.workload.duration_seconds - f.after_seconds if f.for_good else f.duration_seconds or 0
            inj = Injection(0, f.action, due, f.grace_period_seconds, f.pod_index, method, timed, f.victim, netem)
            split, runners = f.split or ISOLATE, f.runners or EVERYWHERE
            out.append(
                dataclasses.replace(
                    inj, split=split, runners=runners, chaos=f.chaos, spec_index=index, for_good=bool(f.for_good)
                )
            )
    out.sort(key=lambda i: i.due)
    return [dataclasses.replace(inj, number=n) for n, inj in enumerate(out, 1)]


def outside_window(spec: RunSpec) -> list[int]:
    """Numbers of the injections due at or after the end of the measured interval: they are
    never injected."""
    zero = dt.datetime(2000, 1, 1, tzinfo=dt.timezone.utc)
    end = measured_end(spec, zero)
    return [i.number for i in schedule(spec, zero) if i.due >= end]


def choose_victims(injection: Injection, among: Members) -> list[DatabasePod] | str:
    """The pods to kill (every one for kill-all, a partition's half, else one), or why there are
    none: its kind's choice."""
    return REGISTRY[injection.action].choose(injection, among)


def choose_victim(injection: Injection, among: Members) -> DatabasePod | str:
    """The one pod to kill (or pause), or why there is none: the member its kind takes."""
    return choose_member(REGISTRY[injection.action].which(injection), injection, among)


def decide(
    spec: RunSpec,
    faults: list[dict],
    start_at: dt.datetime,
    now: dt.datetime,
    release: str,
    pods: list[DatabasePod],
    primary: str | None,
    seed: str,
    busy_nodes: frozenset[str] = frozenset(),
    runner_pods: tuple[RunnerTarget, ...] = (),
) -> Decision:
    """The next move of fault injection while the runners measure: the last fault's next state
    (killed, skipped, recovered), or the next fault due (busy_nodes: the nodes of the operator and
    the runner pods, which a node-loss spares; runner_pods: those running, which a partition may
    put on its cut-off side)."""
    entries = [dict(e) for e in faults]
    last = entries[-1] if entries else None
    d = Decision()
    if last and last["state"] == INJECTING and now >= measured_end(spec, start_at):
        last.update(state=SKIPPED, message="the measured interval ended before the kill")
        d.events.append(("Warning", "FaultSkipped", f"fault {last['number']}: {last['message']}"))
    elif last and last["state"] == INJECTING:
        _inject(d, last, now, measured_end(spec, start_at))
    elif last and last["state"] == INJECTED and REGISTRY[last["action"]].timed:
        if now < parse_time(last["injectedTime"]) + dt.timedelta(seconds=last["durationSeconds"]):
            return d
        _heal(d, last, now, f"after {last['durationSeconds']}s")
    elif last and last["state"] == HEALED:
        if not _settled(d, last, pods, now):
            return d
    elif last and last["state"] == INJECTED:
        if not _recovered(d, last, pods, now):
            return d
    else:
        d.failure = impossible(spec, entries, start_at, pods, busy_nodes)
        nxt = next_due(spec, entries, start_at, now)
        if nxt is None or d.failure:
            return d
        chosen = choose_victims(nxt, Members(databases.of(spec), release, pods, primary, seed, busy_nodes))
        entries.append(_due_entry(d, nxt, chosen, Scene(release, runner_pods)))
    d.faults = entries
    return d


def _inject(d: Decision, entry: dict, now: dt.datetime, end: dt.datetime) -> None:
    """The kill of an INJECTING entry: its victims into d.kills, the entry INJECTED."""
    entry.update(state=INJECTED, injectedTime=rfc3339(now))
    if entry.get("forGood"):  # lost until the measured interval ends, however late it came
        entry["durationSeconds"] = max(1, int((end - now).total_seconds()))
    kind, typed = REGISTRY[entry["action"]], FaultEntry.from_json(entry)
    d.kills = kind.kills(typed)
    d.events.append(
        ("Warning", "FaultInjected", f"fault {entry['number']} ({entry['action']}): {kind.injected(typed)}")
    )


def _recovered(d: Decision, entry: dict, pods: list[DatabasePod], now: dt.datetime) -> bool:
    """Whether an INJECTED entry's victims came back and every database pod is ready; if so the
    entry is RECOVERED with its recovery time."""
    by_name = {p.name: p for p in pods}
    victims = victims_of(entry)
    back = [by_name.get(t["pod"]) for t in victims]
    if not (all(p and came_back(entry, t, p) for t, p in zip(victims, back)) and all(p.ready for p in pods)):
        return False
    seconds = round((now - parse_time(entry["injectedTime"])).total_seconds(), 1)
    entry.update(state=RECOVERED, recoveredTime=rfc3339(now), recoverySeconds=seconds)
    if entry.get("method") == KILL_PROCESS and back[0] is not None:
        entry["restartCount"] = back[0].restarts
    d.events.append(
        ("Normal", "FaultRecovered", f"fault {entry['number']}: {entry['target']} is back and ready after {seconds}s")
    )
    return True


def _heal(d: Decision, entry: dict, now: dt.datetime, when: str) -> None:
    """Undo an INJECTED timed fault (a pause: SIGCONT): its victim into d.heals, the entry HEALED."""
    entry.update(state=HEALED, healedTime=rfc3339(now))
    kind, typed = REGISTRY[entry["action"]], FaultEntry.from_json(entry)
    d.heals = kind.heals(typed)
    what = kind.healed(typed)
    d.events.append(("Normal", "FaultHealed", f"fault {entry['number']} ({entry['action']}): {what} {when}"))


def _settled(d: Decision, entry: dict, pods: list[DatabasePod], now: dt.datetime) -> bool:
    """Whether a HEALED entry's database is whole again: SETTLE_SECONDS after the heal (what the
    database does about the resumed member shows by then), its victims and every other pod
    Ready; if so the entry is RECOVERED, with a single victim's restartCount (above
    targetRestarts: the database restarted it)."""
    if now < parse_time(entry["healedTime"]) + dt.timedelta(seconds=SETTLE_SECONDS):
        return False
    by_name = {p.name: p for p in pods}
    if any(t["pod"] not in by_name for t in victims_of(entry)) or not all(p.ready for p in pods):
        return False
    seconds = round((now - parse_time(entry["injectedTime"])).total_seconds(), 1)
    entry.update(state=RECOVERED, recoveredTime=rfc3339(now), recoverySeconds=seconds)
    restarted = ""
    victim = by_name[entry["target"]] if "targets" not in entry else None  # a partition's half: none
    if victim and victim.uid != entry["targetUID"]:
        restarted = " (a new pod)"
    elif victim:
        entry["restartCount"] = victim.restarts
        before = entry.get("targetRestarts", 0)
        if victim.restarts > before:
            restarted = f" (its container restarted: restartCount {before} -> {victim.restarts})"
    d.events.append(
        (
            "Normal",
            "FaultRecovered",
            f"fault {entry['number']}: {entry['target']} is back and ready after {seconds}s{restarted}",
        )
    )
    return True


def throughput_recovery(
    spec: RunSpec, start_at: dt.datetime, injected: dt.datetime, timeline: list[dict]
) -> float | None:
    """Seconds from a fault to the start of the first 10-second step of the results' timeline
    (t: seconds from the start of the measured interval, tpmC) that begins at or after it with
    throughput back within 10 % of before: the mean tpmC of the measured steps that ended before
    the fault. None without such steps before it (no level to come back to) or when it never came
    back within the measured interval."""
    at = (injected - start_at).total_seconds() - spec.workload.warmup_seconds
    before = [s["tpmC"] for s in timeline if s["t"] >= 0 and s["t"] + 10 <= at]
    if not before:
        return None
    level = sum(before) / len(before)
    back = next((s["t"] for s in timeline if s["t"] >= at and s["tpmC"] >= 0.9 * level), None)
    return None if back is None else round(back - at, 1)


def with_throughput_recovery(
    spec: RunSpec, faults: list[dict], start_at: dt.datetime, timeline: list[dict]
) -> list[dict] | None:
    """status.faults with throughputRecoverySeconds on every Recovered entry that has none yet
    and has a figure (see throughput_recovery); None when nothing is added."""
    entries, added = [dict(e) for e in faults], False
    for e in entries:
        if e["state"] != RECOVERED or "throughputRecoverySeconds" in e or "injectedTime" not in e:
            continue
        seconds = throughput_recovery(spec, start_at, parse_time(e["injectedTime"]), timeline)
        if seconds is not None:
            e["throughputRecoverySeconds"], added = seconds, True
    return entries if added else None


def unhealed(faults: list[dict], now: dt.datetime) -> tuple[list[dict] | None, list[Kill]]:
    """A timed fault still in force (a pause INJECTED, or INJECTING: its kill may have been
    sent) when the run ends otherwise: the entries with it HEALED, and the victims to resume;
    (None, []) when there is none."""
    entries = [dict(e) for e in faults]
    last = entries[-1] if entries else None
    if not last or not REGISTRY[last["action"]].timed or last["state"] not in (INJECTING, INJECTED):
        return None, []
    d = Decision()
    _heal(d, last, now, "at the end of the run")
    return entries, d.heals


def _due_entry(d: Decision, nxt: Injection, chosen: list[DatabasePod] | str, scene: Scene) -> dict:
    """The status entry of the fault now due: INJECTING its chosen victims, or SKIPPED (chosen is
    then why)."""
    entry: dict = {
        "number": nxt.number,
        "action": nxt.action,
        "method": nxt.method,
        "dueTime": rfc3339(nxt.due),
        "gracePeriodSeconds": nxt.grace_seconds,
    }
    kind = REGISTRY[nxt.action]
    if isinstance(chosen, str):
        entry.update(state=SKIPPED, message=chosen)
        d.events.append(("Warning", "FaultSkipped", f"fault {nxt.number} ({nxt.action}): {chosen}"))
        if kind.fails_without_victim:
            d.failure = f"spec.faults[{nxt.spec_index}].action: {nxt.action}: {chosen}"
        return entry
    if kind.takes_every_pod or len(chosen) > 1:
        every = "all " if kind.takes_every_pod else ""
        entry.update(
            state=INJECTING,
            target=f"{every}{len(chosen)} pods: {', '.join(v.name for v in chosen)}",
            targets=[{"pod": v.name, "uid": v.uid, "restarts": v.restarts} for v in chosen],
        )
    else:
        entry.update(state=INJECTING, target=chosen[0].name, targetUID=chosen[0].uid)
        if nxt.method in (KILL_PROCESS, SIGSTOP):
            entry["targetRestarts"] = chosen[0].restarts
    kind.record(entry, nxt, chosen, scene)
    return entry


def came_back(entry: dict, victim: dict, pod: DatabasePod) -> bool:
    """Whether a victim of an Injected entry is a new incarnation: a new pod after a delete;
    after a process kill, its container restarted (or the pod was replaced after all)."""
    if pod.uid != victim["uid"]:
        return True
    return entry.get("method") == KILL_PROCESS and pod.restarts > victim["restarts"]


def next_due(spec: RunSpec, faults: list[dict], start_at: dt.datetime, now: dt.datetime) -> Injection | None:
    """The injection whose victim is to be chosen now: the next in the schedule, once due,
    while the measured interval lasts and no other injection is in progress."""
    plan = schedule(spec, start_at)
    if in_progress(faults) or len(faults) >= len(plan):
        return None
    nxt = plan[len(faults)]
    return nxt if nxt.due <= now < measured_end(spec, start_at) else None


def pending(spec: RunSpec, faults: list[dict], start_at: dt.datetime) -> list[Injection]:
    """The injections of the schedule not begun yet."""
    return schedule(spec, start_at)[len(faults) :]


def impossible(
    spec: RunSpec, faults: list[dict], start_at: dt.datetime, pods: list[DatabasePod], busy_nodes: frozenset[str]
) -> str | None:
    """Why an injection still to come cannot be made on this cluster (a node-loss with no node to
    lose), naming its spec.faults entry: the run fails now rather than when it is due."""
    for inj in pending(spec, faults, start_at):
        why = REGISTRY[inj.action].impossible(pods, busy_nodes)
        if why:
            return f"spec.faults[{inj.spec_index}].action: {inj.action}: {why}"
    return None


def in_progress(faults: list[dict]) -> bool:
    """Whether a pod was chosen or killed (or paused) and has not come back yet."""
    return bool(faults) and faults[-1]["state"] in (INJECTING, INJECTED, HEALED)
