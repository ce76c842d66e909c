"""BenchmarkSchedule: CronJob semantics for BenchmarkRuns, decided without I/O.

`decide(...)` takes the schedule's spec and status, the runs it owns and the time, and says which
run to create, which to delete and what the status becomes; handlers.py only fetches and acts.
Cron: 5 fields or a macro, as CronJob (robfig/cron) reads them, in an IANA time zone. Wall times
skipped by a DST jump do not run; wall times repeated when clocks go back run once (the first).
"""

from __future__ import annotations

import copy
import datetime as dt
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from . import plan, runspec
from .stages.machine import SUCCEEDED, TERMINAL, Event, condition_of, set_condition
from .timestamps import parse_time, rfc3339

KIND = "BenchmarkSchedule"
PLURAL = "benchmarkschedules"
LABEL_SCHEDULE = plan.LABEL_SCHEDULE
ANNOTATION_SCHEDULED_TIME = f"{plan.GROUP}/scheduled-time"
FORBID, REPLACE = "Forbid", "Replace"
# CronJob's limit: more missed start times than this say the schedule cannot keep up.
TOO_MANY_MISSED = 100

MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
MONTH_NAMES = {
    m: i + 1 for i, m in enumerate(["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"])
}
DAY_NAMES = {d: i for i, d in enumerate(["sun", "mon", "tue", "wed", "thu", "fri", "sat"])}
# (name, lowest, highest, names) of the five fields
FIELDS: tuple[tuple[str, int, int, dict[str, int]], ...] = (
    ("minute", 0, 59, {}),
    ("hour", 0, 23, {}),
    ("day of month", 1, 31, {}),
    ("month", 1, 12, MONTH_NAMES),
    ("day of week", 0, 7, DAY_NAMES),
)
DAYS_IN_MONTH = {1: 31, 2: 29, 3: 31, 4: 30, 5: 31, 6: 30, 7: 31, 8: 31, 9: 30, 10: 31, 11: 30, 12: 31}
# A satisfiable schedule fires within 8 years (29 February on a given weekday is rarer, but
# then day of month and day of week OR together); searching further would only burn CPU.
SEARCH_DAYS = 366 * 8 + 2


class InvalidSchedule(ValueError):
    pass


def _number(text: str, names: dict[str, int], what: str) -> int:
    if text.lower() in names:
        return names[text.lower()]
    if not text.isdigit():
        raise InvalidSchedule(f"{what}: {text!r} is not a number")
    return int(text)


def _field(text: str, what: str, lo: int, hi: int, names: dict[str, int]) -> tuple[frozenset[int], bool]:
    """The values a field allows, and whether it is a bare '*' or '?' (robfig's star bit)."""
    values: set[int] = set()
    star = False
    for part in text.split(","):
        span, _, step_text = part.partition("/")
        step = _number(step_text, {}, what) if step_text else 1
        if step < 1:
            raise InvalidSchedule(f"{what}: step must be at least 1 in {part!r}")
        if span in ("*", "?"):
            first, last = lo, hi
            star = star or step == 1
        elif "-" in span:
            a, _, b = span.partition("-")
            first, last = _number(a, names, what), _number(b, names, what)
        else:
            first = _number(span, names, what)
            last = hi if step_text else first  # "5/15" means 5-max/15
        if not lo <= first <= last <= hi:
            raise InvalidSchedule(f"{what}: {part!r} is outside {lo}-{hi} or reversed")
        values.update(range(first, last + 1, step))
    return frozenset(values), star


@dataclass(frozen=True)
class Cron:
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday
    any_day: bool  # day of month is '*': the day matches on the weekday alone
    any_weekday: bool

    @classmethod
    def parse(cls, text: str) -> Cron:
        expanded = MACROS.get(text.strip().lower(), text) if text.strip().startswith("@") else text
        if expanded.startswith("@"):
            raise InvalidSchedule(f"unknown macro {text!r} (one of {', '.join(sorted(MACROS))})")
        parts = expanded.split()
        if len(parts) != 5:
            raise InvalidSchedule(
                f"{text!r} has {len(parts)} fields, a cron schedule has 5 (minute hour day-of-month month day-of-week)"
            )
        (minutes, _), (hours, _), (days, any_day), (months, _), (weekdays, any_weekday) = (
            _field(p, name, lo, hi, names) for p, (name, lo, hi, names) in zip(parts, FIELDS)
        )
        weekdays = frozenset(d % 7 for d in weekdays)  # 7 is Sunday too
        cron = cls(minutes, hours, days, months, weekdays, any_day, any_weekday)
        if (any_weekday or any_day) and not any(d <= DAYS_IN_MONTH[m] for m in months for d in days):
            raise InvalidSchedule(f"{text!r} names no day that exists (e.g. 30 February)")
        return cron

    def matches_day(self, day: dt.date) -> bool:
        if day.month not in self.months:
            return False
        dom, dow = day.day in self.days, (day.isoweekday() % 7) in self.weekdays
        # as cron: with both fields restricted a day matches either one
        return dom and dow if (self.any_day or self.any_weekday) else dom or dow

    def _on(self, day: dt.date, tz: ZoneInfo, newest_first: bool) -> Iterator[dt.datetime]:
        """The day's start times in UTC. A wall time the clocks skip does not exist and does not
        run; one they repeat runs once, at its first occurrence (fold=0)."""
        for hour in sorted(self.hours, reverse=newest_first):
            for minute in sorted(self.minutes, reverse=newest_first):
                wall = dt.datetime(day.year, day.month, day.day, hour, minute, tzinfo=tz)
                utc = wall.astimezone(dt.timezone.utc)
                if utc.astimezone(tz).replace(tzinfo=None) == wall.replace(tzinfo=None):
                    yield utc

    def times_back(self, tz: ZoneInfo, after: dt.datetime, until: dt.datetime) -> Iterator[dt.datetime]:
        """Start times in (after, until], newest first."""
        day, first = until.astimezone(tz).date(), after.astimezone(tz).date()
        while day >= first:
            if self.matches_day(day):
                for t in self._on(day, tz, newest_first=True):
                    if after < t <= until:
                        yield t
                    elif t <= after:
                        return
            day -= dt.timedelta(days=1)

    def next_after(self, tz: ZoneInfo, after: dt.datetime) -> dt.datetime | None:
        day = after.astimezone(tz).date()
        for _ in range(SEARCH_DAYS):
            if self.matches_day(day):
                for t in self._on(day, tz, newest_first=False):
                    if t > after:
                        return t
            day += dt.timedelta(days=1)
        return None


@dataclass(frozen=True)
class TemplateMetadata:
    labels: Mapping[str, str] | None = None
    annotations: Mapping[str, str] | None = None


@dataclass(frozen=True)
class RunTemplate:
    # the BenchmarkRun's spec as written: the API server defaults each run made from it
    spec: Mapping[str, Any]
    metadata: TemplateMetadata | None = None  # what each run carries besides the schedule's label


@dataclass(frozen=True)
class ScheduleSpec:
    """A BenchmarkSchedule's spec as types, read once with the CRD's defaults (as runspec reads
    a BenchmarkRun's); a field is `X | None` exactly when the CRD neither requires nor defaults
    it (test_schedule_crd holds the two to each other)."""

    schedule: str  # cron, 5 fields or a macro: Timing.of reads it
    time_zone: str
    suspend: bool
    concurrency_policy: str  # Forbid | Replace
    successful_runs_history_limit: int
    failed_runs_history_limit: int
    run_template: RunTemplate
    starting_deadline_seconds: int | None = None

    @classmethod
    def parse(cls, spec: Mapping[str, Any]) -> ScheduleSpec:
        """The schema already checked types and bounds; its defaults are applied here as the API
        server applies them, to the schedule's own fields (the run template stays as written)."""
        schema = runspec.crd_spec_schema(crd="benchmarkschedule.yaml")
        own = {**schema, "properties": {k: v for k, v in schema["properties"].items() if k != "runTemplate"}}
        return runspec.build(cls, runspec.apply_defaults(own, copy.deepcopy(dict(spec))))


@dataclass(frozen=True)
class Timing:
    """When a schedule's runs start: its cron in its time zone (the schema cannot check either)."""

    cron: Cron
    tz: ZoneInfo

    @classmethod
    def of(cls, spec: ScheduleSpec) -> Timing:
        try:
            tz = ZoneInfo(spec.time_zone)
        except (ZoneInfoNotFoundError, ValueError) as e:
            raise InvalidSchedule(f"timeZone {spec.time_zone!r} is not an IANA time zone") from e
        return cls(Cron.parse(spec.schedule), tz)


@dataclass(frozen=True)
class OwnedRun:
    """A BenchmarkRun carrying this schedule's label, as the handler listed it."""

    name: str
    created: dt.datetime
    phase: str | None = None
    completed: dt.datetime | None = None
    deleting: bool = False

    @property
    def finished(self) -> bool:
        return self.phase in TERMINAL

    @classmethod
    def from_object(cls, obj: dict) -> OwnedRun:
        meta, status = obj["metadata"], obj.get("status") or {}
        done = status.get("completionTime")
        return cls(
            meta["name"],
            parse_time(meta["creationTimestamp"]),
            status.get("phase"),
            parse_time(done) if done else None,
            bool(meta.get("deletionTimestamp")),
        )


@dataclass
class Decision:
    create: str | None = None  # the run to create (if absent)
    scheduled_time: dt.datetime | None = None  # with create
    delete: list[str] = field(default_factory=list)  # Replace's victims, then history beyond the limits
    status: dict = field(default_factory=dict)  # the whole new status
    events: list[Event] = field(default_factory=list)


def run_name(schedule: str, scheduled: dt.datetime) -> str:
    """Deterministic: a retry or a restarted operator finds the run it already made (409)."""
    return f"{schedule}-{int(scheduled.timestamp()) // 60}"


def _conditions(status: dict, generation: int, now: dt.datetime, ready: bool, reason: str, message: str) -> list[dict]:
    conditions = set_condition(status.get("conditions") or [], "Ready", ready, reason, message, generation, now)
    return set_condition(conditions, "Stalled", not ready, reason, "" if ready else message, generation, now)


def _pruned(runs: list[OwnedRun], successful_limit: int, failed_limit: int) -> list[str]:
    """The oldest finished runs beyond each history limit (their BenchmarkResults stay)."""
    out = []
    for succeeded, limit in ((True, successful_limit), (False, failed_limit)):
        kept = sorted(
            (r for r in runs if r.finished and not r.deleting and (r.phase == SUCCEEDED) == succeeded),
            key=lambda r: (r.created, r.name),
        )
        out += [r.name for r in kept[: max(0, len(kept) - limit)]]
    return out


def decide(
    name: str, spec: dict, generation: int, status: dict, created: dt.datetime, runs: list[OwnedRun], now: dt.datetime
) -> Decision:
    """What the schedule `name` does now: the run to create, the runs to delete, its status."""
    d = Decision()
    live = sorted((r for r in runs if not r.deleting), key=lambda r: (r.created, r.name))
    active = [r.name for r in live if not r.finished]
    last_success = _last_success(live, status)
    d.status = {
        "observedGeneration": generation,
        "active": active,
        "lastScheduleTime": status.get("lastScheduleTime"),
        "lastSuccessfulTime": rfc3339(last_success) if last_success else None,
    }
    sched = ScheduleSpec.parse(spec)
    # the history limits apply even to a schedule whose cron text is invalid
    d.delete = _pruned(live, sched.successful_runs_history_limit, sched.failed_runs_history_limit)
    try:
        timing = Timing.of(sched)
    except InvalidSchedule as e:
        d.status["conditions"] = _conditions(status, generation, now, False, "InvalidSchedule", str(e))
        return d

    last = status.get("lastScheduleTime")
    earliest = parse_time(last) if last else created
    if sched.starting_deadline_seconds is not None:
        earliest = max(earliest, now - dt.timedelta(seconds=sched.starting_deadline_seconds))
    missed = [] if sched.suspend else _take(timing.cron.times_back(timing.tz, earliest, now), TOO_MANY_MISSED + 1)
    # A refused template stays Ready=False until the next start time or a new generation.
    refused = _refused(status, generation)
    if not missed and refused:
        d.status["conditions"] = status["conditions"]
        return d
    upcoming = timing.cron.next_after(timing.tz, now)
    ready_message = (
        "suspended"
        if sched.suspend
        else f"next run at {rfc3339(upcoming)}"
        if upcoming
        else "no start time in the next 8 years"
    )
    if missed:
        d.events.extend(_missed_events(missed))
        ready_message = _start(d, name, sched, missed[0], active) or ready_message
    d.status["conditions"] = _conditions(
        status, generation, now, True, "Suspended" if sched.suspend else "Scheduled", ready_message
    )
    return d


def _last_success(live: list[OwnedRun], status: dict) -> dt.datetime | None:
    """The latest completion of a Succeeded run, or the recorded one if later (its run may be
    pruned by now)."""
    succeeded = [r.completed for r in live if r.phase == SUCCEEDED and r.completed]
    last_success = max(succeeded, default=None)
    old_success = status.get("lastSuccessfulTime")
    if old_success and (last_success is None or parse_time(old_success) > last_success):
        last_success = parse_time(old_success)
    return last_success


def _missed_events(missed: list[dt.datetime]) -> list[Event]:
    """Start times missed before the latest (missed[0]), which is the only one that runs."""
    scheduled = missed[0]
    if len(missed) > TOO_MANY_MISSED:
        return [
            Event(
                "Warning",
                "TooManyMissedTimes",
                f"more than {TOO_MANY_MISSED} start times missed: only the latest, "
                f"{rfc3339(scheduled)}, runs (set or lower startingDeadlineSeconds)",
            )
        ]
    if len(missed) > 1:
        return [
            Event(
                "Normal",
                "MissedTimes",
                f"{len(missed) - 1} earlier start time(s) missed: only the latest, {rfc3339(scheduled)}, runs",
            )
        ]
    return []


def _start(d: Decision, name: str, sched: ScheduleSpec, scheduled: dt.datetime, active: list[str]) -> str | None:
    """The run of start time `scheduled` into d, per the concurrency policy; the Ready message
    when the start waits (Forbid), else None."""
    target = run_name(name, scheduled)
    others = [r for r in active if r != target]
    if others and sched.concurrency_policy == FORBID:
        # as CronJob: the start time stays pending until the active run ends (or its deadline)
        d.events.clear()
        return f"{rfc3339(scheduled)} waits: {', '.join(others)} still running (Forbid)"
    if others:  # Replace
        d.delete = others + d.delete
        d.events.append(Event("Normal", "Replaced", f"{', '.join(others)} replaced by {target}"))
        d.status["active"] = []
    d.create, d.scheduled_time = target, scheduled
    d.status["lastScheduleTime"] = rfc3339(scheduled)
    if target not in d.status["active"]:
        d.status["active"] = d.status["active"] + [target]
    return None


def template_refused(decision: Decision, generation: int, status: dict, message: str, now: dt.datetime) -> Decision:
    """The API server refused the run the template makes: Ready=False until the next start time
    (which tries again) or a new generation; the start time counts as used."""
    decision.status["active"] = [r for r in decision.status["active"] if r != decision.create]
    decision.status["conditions"] = _conditions(status, generation, now, False, "InvalidTemplate", message)
    decision.events.append(Event("Warning", "InvalidTemplate", message))
    decision.create = None
    return decision


def _refused(status: dict, generation: int) -> bool:
    ready = condition_of(status, "Ready")
    return (
        status.get("observedGeneration") == generation
        and ready is not None
        and ready.get("reason") == "InvalidTemplate"
    )


def _take(it: Iterator[dt.datetime], n: int) -> list[dt.datetime]:
    out = []
    for t in it:
        out.append(t)
        if len(out) == n:
            break
    return out


def run_object(schedule: dict, run: str, scheduled: dt.datetime) -> dict:
    """The BenchmarkRun of one start time: the template's labels, annotations and spec, the
    schedule's label and owner reference (deleting the schedule deletes its runs). Nothing of the
    schedule's own metadata: Argo CD would take its tracking id for a run it should prune."""
    meta, template = schedule["metadata"], ScheduleSpec.parse(schedule["spec"]).run_template
    tmeta = template.metadata or TemplateMetadata()
    annotations = {**(tmeta.annotations or {}), ANNOTATION_SCHEDULED_TIME: rfc3339(scheduled)}
    return {
        "apiVersion": f"{plan.GROUP}/{plan.VERSION}",
        "kind": plan.KIND,
        "metadata": {
            "name": run,
            "namespace": meta["namespace"],
            "labels": {**(tmeta.labels or {}), LABEL_SCHEDULE: meta["name"]},
            "annotations": annotations,
            "ownerReferences": [
                {
                    "apiVersion": f"{plan.GROUP}/{plan.VERSION}",
                    "kind": KIND,
                    "name": meta["name"],
                    "uid": meta["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": dict(template.spec),
    }
