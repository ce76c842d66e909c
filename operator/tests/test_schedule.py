"""BenchmarkSchedule decisions (tpcc_operator.schedule): cron as CronJob reads it, time zones
across DST, deadlines and missed times, Forbid/Replace, history pruning, idempotent names,
Ready/Stalled."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest
from tpcc_operator.schedule import Cron, InvalidSchedule, OwnedRun, decide, run_name, run_object, template_refused

UTC = dt.timezone.utc
NEW_YORK = ZoneInfo("America/New_York")
CREATED = dt.datetime(2026, 1, 1, tzinfo=UTC)


def t(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).replace(tzinfo=UTC)


def times(cron: str, after: str, until: str, tz=UTC) -> list[str]:
    return [x.strftime("%Y-%m-%dT%H:%M") for x in reversed(list(Cron.parse(cron).times_back(tz, t(after), t(until))))]


# ---- cron ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cron, after, until, want",
    [
        (
            "*/20 * * * *",
            "2026-03-02T10:00",
            "2026-03-02T11:00",
            ["2026-03-02T10:20", "2026-03-02T10:40", "2026-03-02T11:00"],
        ),  # (after, until]
        (
            "0 3 * * *",
            "2026-03-01T00:00",
            "2026-03-03T12:00",
            ["2026-03-01T03:00", "2026-03-02T03:00", "2026-03-03T03:00"],
        ),
        ("@hourly", "2026-03-02T10:30", "2026-03-02T12:30", ["2026-03-02T11:00", "2026-03-02T12:00"]),
        (
            "0 0 * * MON-FRI",
            "2026-03-06T00:00",
            "2026-03-10T00:00",
            ["2026-03-09T00:00", "2026-03-10T00:00"],
        ),  # skips Sat, Sun
        (
            "30 1 1,15 * *",
            "2026-03-01T00:00",
            "2026-04-01T02:00",
            ["2026-03-01T01:30", "2026-03-15T01:30", "2026-04-01T01:30"],
        ),
        (
            "5/20 9 * jan,Mar *",
            "2026-03-02T00:00",
            "2026-03-02T23:59",
            ["2026-03-02T09:05", "2026-03-02T09:25", "2026-03-02T09:45"],
        ),
        # both day fields restricted: either matches (the 13th, or any Friday)
        ("0 0 13 * 5", "2026-03-05T00:00", "2026-03-14T00:00", ["2026-03-06T00:00", "2026-03-13T00:00"]),
        ("0 0 * * 7", "2026-03-01T12:00", "2026-03-08T12:00", ["2026-03-08T00:00"]),  # 7 is Sunday
        ("0 12 29 2 *", "2026-01-01T00:00", "2028-12-31T00:00", ["2028-02-29T12:00"]),
    ],
)
def test_start_times(cron, after, until, want):
    assert times(cron, after, until) == want


@pytest.mark.parametrize(
    "cron, says",
    [
        ("* * * *", "has 4 fields"),
        ("60 * * * *", "minute"),
        ("* 24 * * *", "hour"),
        ("* * 0 * *", "day of month"),
        ("* * * 13 *", "month"),
        ("* * * * 8", "day of week"),
        ("*/0 * * * *", "step"),
        ("5-1 * * * *", "reversed"),
        ("@every 5m", "unknown macro"),
        ("0 0 30 2 *", "no day that exists"),
        ("x * * * *", "not a number"),
        ("", "0 fields"),
    ],
)
def test_invalid_cron_says_why(cron, says):
    with pytest.raises(InvalidSchedule, match=says):
        Cron.parse(cron)


def test_spring_forward_skips_the_missing_wall_time_and_keeps_the_others():
    """New York, 8 March 2026: 02:00-03:00 does not exist. '30 2 * * *' does not run that day
    (as robfig/cron, CronJob's parser); '0 * * * *' runs 23 times, an hour apart in UTC."""
    assert times("30 2 * * *", "2026-03-07T00:00", "2026-03-10T00:00", NEW_YORK) == [
        "2026-03-07T07:30",
        "2026-03-09T06:30",
    ]
    hourly = Cron.parse("0 * * * *").times_back(NEW_YORK, t("2026-03-08T05:00"), t("2026-03-09T04:00"))
    assert len(list(hourly)) == 23


def test_fall_back_runs_the_repeated_wall_time_once():
    """New York, 1 November 2026: 01:00-02:00 happens twice; '30 1 * * *' runs once, the first
    time (EDT, 05:30 UTC), and the day before and after at 01:30 local."""
    assert times("30 1 * * *", "2026-10-31T00:00", "2026-11-03T00:00", NEW_YORK) == [
        "2026-10-31T05:30",
        "2026-11-01T05:30",
        "2026-11-02T06:30",
    ]


def test_next_after_in_a_time_zone():
    cron = Cron.parse("0 3 * * *")
    assert cron.next_after(ZoneInfo("Europe/Berlin"), t("2026-07-01T02:00")) == t("2026-07-02T01:00")
    assert Cron.parse("0 12 29 2 *").next_after(UTC, t("2026-03-01T00:00")) == t("2028-02-29T12:00")


# ---- decide ---------------------------------------------------------------------------------------

SPEC = {"schedule": "*/5 * * * *", "runTemplate": {"spec": {"database": {"type": "voltdb"}}}}


def run(name: str, created: str, phase: str | None = None, completed: str | None = None) -> OwnedRun:
    return OwnedRun(name, t(created), phase, t(completed) if completed else None)


def condition(status: dict, type_: str) -> dict:
    return next(c for c in status["conditions"] if c["type"] == type_)


def test_first_start_time_after_creation_creates_one_named_run():
    d = decide("nightly", SPEC, 1, {}, t("2026-03-02T10:01"), [], t("2026-03-02T10:05:10"))
    minutes = int(t("2026-03-02T10:05").timestamp()) // 60
    assert d.create == f"nightly-{minutes}" and d.scheduled_time == t("2026-03-02T10:05")
    assert d.status["lastScheduleTime"] == "2026-03-02T10:05:00Z" and d.status["active"] == [d.create]
    assert condition(d.status, "Ready")["status"] == "True"
    assert condition(d.status, "Ready")["message"] == "next run at 2026-03-02T10:10:00Z"
    assert condition(d.status, "Stalled")["status"] == "False"
    assert d.status["observedGeneration"] == 1


def test_nothing_before_the_first_start_time_and_nothing_twice():
    assert decide("s", SPEC, 1, {}, t("2026-03-02T10:01"), [], t("2026-03-02T10:04:59")).create is None
    done = decide("s", SPEC, 1, {}, t("2026-03-02T10:01"), [], t("2026-03-02T10:05:10"))
    again = decide(
        "s",
        SPEC,
        1,
        done.status,
        t("2026-03-02T10:01"),
        [run(done.create, "2026-03-02T10:05:11")],
        t("2026-03-02T10:05:20"),
    )
    assert again.create is None and again.status["active"] == [done.create]


def test_a_lost_status_write_makes_the_same_name_again():
    """The run was created but lastScheduleTime was not written: the retry names the same run,
    whose create answers 409 (create-if-absent), so no second run."""
    first = decide("s", SPEC, 1, {}, CREATED, [], t("2026-03-02T10:05:10"))
    retry = decide("s", SPEC, 1, {}, CREATED, [run(first.create, "2026-03-02T10:05:11")], t("2026-03-02T10:05:40"))
    assert retry.create == first.create == run_name("s", t("2026-03-02T10:05"))


def test_a_backlog_creates_only_the_latest_missed_time():
    status = {"lastScheduleTime": "2026-03-02T08:00:00Z"}
    d = decide("s", SPEC, 1, status, CREATED, [], t("2026-03-02T10:07"))
    assert d.scheduled_time == t("2026-03-02T10:05")
    assert [(e.reason, e.message.split()[0]) for e in d.events] == [("MissedTimes", "24")]
    huge = decide("s", SPEC, 1, {"lastScheduleTime": "2026-02-01T00:00:00Z"}, CREATED, [], t("2026-03-02T10:07"))
    assert huge.scheduled_time == t("2026-03-02T10:05") and huge.events[0].reason == "TooManyMissedTimes"


def test_starting_deadline_drops_start_times_too_late_to_start():
    spec = {**SPEC, "startingDeadlineSeconds": 60}
    status = {"lastScheduleTime": "2026-03-02T10:00:00Z"}
    assert decide("s", spec, 1, status, CREATED, [], t("2026-03-02T10:05:59")).create is not None
    late = decide("s", spec, 1, status, CREATED, [], t("2026-03-02T10:06:01"))
    assert late.create is None and late.status["lastScheduleTime"] == "2026-03-02T10:00:00Z"
    assert decide("s", spec, 1, status, CREATED, [], t("2026-03-02T10:10:30")).scheduled_time == t("2026-03-02T10:10")


def test_suspend_creates_nothing_and_resumes_with_the_latest_time():
    spec = {**SPEC, "suspend": True}
    d = decide("s", spec, 2, {"lastScheduleTime": "2026-03-02T10:00:00Z"}, CREATED, [], t("2026-03-02T11:00:30"))
    assert d.create is None and condition(d.status, "Ready")["reason"] == "Suspended"
    resumed = decide("s", SPEC, 3, d.status, CREATED, [], t("2026-03-02T11:01"))
    assert resumed.scheduled_time == t("2026-03-02T11:00")


def test_forbid_waits_for_the_active_run_then_starts_the_pending_time():
    status = {"lastScheduleTime": "2026-03-02T10:00:00Z"}
    busy = [run("s-old", "2026-03-02T10:00:01", "Running")]
    d = decide("s", SPEC, 1, status, CREATED, busy, t("2026-03-02T10:05:10"))
    assert d.create is None and d.delete == [] and d.status["lastScheduleTime"] == "2026-03-02T10:00:00Z"
    assert "s-old still running (Forbid)" in condition(d.status, "Ready")["message"] and not d.events
    busy = [run("s-old", "2026-03-02T10:00:01", "Succeeded", "2026-03-02T10:06:00")]
    after = decide("s", SPEC, 1, d.status, CREATED, busy, t("2026-03-02T10:06:10"))
    assert after.scheduled_time == t("2026-03-02T10:05")
    assert after.status["lastSuccessfulTime"] == "2026-03-02T10:06:00Z"


def test_replace_deletes_the_active_run_and_creates_the_new_one():
    spec = {**SPEC, "concurrencyPolicy": "Replace"}
    busy = [run("s-old", "2026-03-02T10:00:01", "Loading")]
    d = decide("s", spec, 1, {"lastScheduleTime": "2026-03-02T10:00:00Z"}, CREATED, busy, t("2026-03-02T10:05:10"))
    assert d.delete == ["s-old"] and d.create == run_name("s", t("2026-03-02T10:05"))
    assert d.status["active"] == [d.create] and d.events[0].reason == "Replaced"


def test_history_keeps_the_newest_finished_runs_per_outcome():
    spec = {**SPEC, "successfulRunsHistoryLimit": 2, "failedRunsHistoryLimit": 0}
    runs = [
        run("s-1", "2026-03-02T10:00", "Succeeded"),
        run("s-2", "2026-03-02T10:05", "Failed"),
        run("s-3", "2026-03-02T10:10", "Succeeded"),
        run("s-4", "2026-03-02T10:15", "Succeeded"),
        run("s-5", "2026-03-02T10:20", "Running"),
        OwnedRun("s-0", t("2026-03-02T09:00"), "Succeeded", deleting=True),
    ]
    d = decide("s", spec, 1, {"lastScheduleTime": "2026-03-02T10:20:00Z"}, CREATED, runs, t("2026-03-02T10:21"))
    assert d.delete == ["s-1", "s-2"] and d.create is None and d.status["active"] == ["s-5"]


@pytest.mark.parametrize(
    "spec, says",
    [
        ({**SPEC, "schedule": "61 * * * *"}, "minute"),
        ({**SPEC, "timeZone": "Mars/Olympus"}, "timeZone 'Mars/Olympus'"),
    ],
)
def test_an_invalid_schedule_is_not_ready_and_stalled_but_still_prunes(spec, says):
    runs = [run("s-1", "2026-03-02T10:00", "Failed"), run("s-2", "2026-03-02T10:05", "Failed")]
    d = decide("s", spec, 4, {}, CREATED, runs, t("2026-03-02T10:21"))
    ready, stalled = condition(d.status, "Ready"), condition(d.status, "Stalled")
    assert (ready["status"], ready["reason"], stalled["status"]) == ("False", "InvalidSchedule", "True")
    assert says in ready["message"] and d.create is None and d.delete == ["s-1"]
    fixed = decide("s", SPEC, 5, d.status, CREATED, [], t("2026-03-02T10:21"))
    assert condition(fixed.status, "Ready")["status"] == "True"
    assert condition(fixed.status, "Stalled")["status"] == "False"


def test_a_refused_template_stays_not_ready_until_the_next_start_time_or_generation():
    now = t("2026-03-02T10:05:10")
    d = decide("s", SPEC, 1, {}, CREATED, [], now)
    refused = template_refused(d, 1, {}, "BenchmarkRun s-1 rejected by the API server (422 Invalid): x", now)
    assert refused.create is None and refused.status["active"] == []
    assert refused.status["lastScheduleTime"] == "2026-03-02T10:05:00Z"  # this start time is used up
    assert condition(refused.status, "Ready")["reason"] == "InvalidTemplate"
    assert condition(refused.status, "Stalled")["status"] == "True"
    still = decide("s", SPEC, 1, refused.status, CREATED, [], t("2026-03-02T10:07"))
    assert still.create is None and condition(still.status, "Ready")["reason"] == "InvalidTemplate"
    retried = decide("s", SPEC, 1, refused.status, CREATED, [], t("2026-03-02T10:10:05"))
    assert retried.create is not None  # the next start time tries again
    edited = decide("s", SPEC, 2, refused.status, CREATED, [], t("2026-03-02T10:07"))
    assert condition(edited.status, "Ready")["status"] == "True"


def test_the_run_object_carries_the_template_label_and_owner():
    body = {
        "metadata": {
            "name": "nightly",
            "namespace": "perf",
            "uid": "u-1",
            "annotations": {
                "bench.tpcc.dev/git-revision": "abc123",
                "argocd.argoproj.io/tracking-id": "app:bench.tpcc.dev/x",
            },
        },
        "spec": {
            "schedule": "0 3 * * *",
            "runTemplate": {
                "metadata": {"labels": {"team": "db"}, "annotations": {"note": "n"}},
                "spec": {"database": {"type": "voltdb"}},
            },
        },
    }
    obj = run_object(body, "nightly-29000000", t("2026-03-02T03:00"))
    meta = obj["metadata"]
    assert obj["kind"] == "BenchmarkRun" and obj["spec"] == {"database": {"type": "voltdb"}}
    assert meta["labels"] == {"team": "db", "bench.tpcc.dev/schedule": "nightly"}
    # nothing of the schedule's own metadata: Argo CD would prune a run carrying its tracking id
    assert meta["annotations"] == {"note": "n", "bench.tpcc.dev/scheduled-time": "2026-03-02T03:00:00Z"}
    assert meta["ownerReferences"] == [
        {
            "apiVersion": "bench.tpcc.dev/v1alpha1",
            "kind": "BenchmarkSchedule",
            "name": "nightly",
            "uid": "u-1",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
