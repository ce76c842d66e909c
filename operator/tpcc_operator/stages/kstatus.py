"""The kstatus conditions (Ready, Reconciling, Stalled) that Flux, Argo CD and cli-utils read,
kept for the phase a Step leaves; a Regressed verdict under onRegression: Fail counts as failed.

Observes: the status as the Step leaves it. Does: rewrites only conditions that changed.
"""

from __future__ import annotations

import datetime as dt

from .. import regression
from .machine import FAILED, SUCCEEDED, Step, patched, set_condition


def regression_fails(status: dict) -> bool:
    """A Regressed verdict under onRegression: Fail (the default) is a failed verdict."""
    return (
        status.get("verdict") == regression.REGRESSED
        and (status.get("regression") or {}).get("onRegression", "Fail") != "Warn"
    )


def with_kstatus(step: Step, status: dict, generation: int, now: dt.datetime) -> Step:
    """Adds the kstatus conditions (as Flux and cli-utils read them) for the phase the step
    leaves (see _wanted). Unchanged conditions are not rewritten, so an idle tick patches
    nothing."""
    after = patched(status, step.status)
    conditions = after.get("conditions") or []
    current = {c["type"]: c for c in conditions}
    value = {True: "True", False: "False", None: "Unknown"}
    for type_, (ok, why, text) in _wanted(after).items():
        c = current.get(type_)
        if c and (c["status"], c.get("reason"), c.get("message"), c.get("observedGeneration")) == (
            value[ok],
            why,
            text,
            generation,
        ):
            continue
        conditions = set_condition(conditions, type_, ok, why, text, generation, now)
    if conditions != (after.get("conditions") or []):
        step.status["conditions"] = conditions
    return step


def _wanted(after: dict) -> dict[str, tuple[bool | None, str, str]]:
    """Condition type -> (status, reason, message) for the status `after` a step: working:
    Reconciling=True, Ready=Unknown; Succeeded: Ready=True once judged (Regressed under
    onRegression: Fail: Ready=False, Stalled=True, reason Regressed); Failed: Ready=False and
    Stalled=True with the reason."""
    phase, reason, message = after.get("phase"), after.get("reason", ""), after.get("message", "")
    verdict = after.get("verdict")
    verdict_message = (after.get("regression") or {}).get("message", "")
    if phase == SUCCEEDED and verdict is None:  # one tick: the verdict comes with the result
        return {
            "Ready": (None, "Judging", "run complete; judging it against its baseline"),
            "Reconciling": (True, "Judging", "run complete; judging it against its baseline"),
        }
    if phase == SUCCEEDED and regression_fails(after):
        return {
            "Ready": (False, regression.REGRESSED, verdict_message),
            "Reconciling": (False, regression.REGRESSED, verdict_message),
            "Stalled": (True, regression.REGRESSED, verdict_message),
        }
    if phase == SUCCEEDED:
        why, text = (
            ("Succeeded", "run complete")
            if verdict in (regression.PASS, None)
            else (verdict, f"run complete; {verdict_message}")
        )
        return {"Ready": (True, why, text), "Reconciling": (False, why, text), "Stalled": (False, why, text)}
    if phase == FAILED:
        return {
            "Ready": (False, reason, message),
            "Reconciling": (False, reason, message),
            "Stalled": (True, reason, message),
        }
    return {"Ready": (None, str(phase), f"phase {phase}"), "Reconciling": (True, str(phase), f"phase {phase}")}
