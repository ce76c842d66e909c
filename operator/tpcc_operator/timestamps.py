"""The status's timestamps: RFC 3339 in UTC, second precision (as Kubernetes writes them)."""

from __future__ import annotations

import datetime as dt


def rfc3339(t: dt.datetime) -> str:
    return t.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(s: str) -> dt.datetime:
    return dt.datetime.fromisoformat(s.replace("Z", "+00:00"))
