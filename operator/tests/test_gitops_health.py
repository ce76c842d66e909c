"""What GitOps tools make of our resources: the Argo CD health checks (charts/tpcc-operator/
argocd/*.lua) run in real Lua interpreters (5.1, whose semantics Argo CD's gopher-lua has, and
5.4, both from the lupa wheel), and the kstatus rules Flux's `wait` applies, both over
BenchmarkRun statuses built by the operator's state machine (fixtures/gitops/) and, when present,
those a real cluster produced (fixtures/gitops/e2e/, written by the e2e)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import gitops_fixtures
import kstatus_rules
import lupa.lua51
import lupa.lua54
import pytest
import yaml
from gitops_fixtures import E2E_EXPECTED, E2E_FIXTURES, EXPECTED, FIXTURES

ROOT = Path(__file__).resolve().parents[2]
ARGOCD = ROOT / "charts" / "tpcc-operator" / "argocd"
HEALTH_KEY = "resource.customizations.health.bench.tpcc.dev_{kind}"
ARGO_STATUSES = {"Healthy", "Progressing", "Degraded", "Suspended", "Missing"}
INTERPRETERS = {"lua5.1": lupa.lua51, "lua5.4": lupa.lua54}


def lua_literal(value) -> str:
    """A JSON value as a Lua constructor, the way Argo CD hands `obj` to the script (null: nil)."""
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"no JSON number: {value}")
        return repr(value)
    if isinstance(value, str):
        return '"' + re.sub(r'[\\"\x00-\x1f]', lambda m: f"\\{ord(m.group()):03d}", value) + '"'
    if isinstance(value, list):
        return "{" + ", ".join(lua_literal(v) for v in value) + "}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"[{lua_literal(str(k))}] = {lua_literal(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def argo_health(interpreter: str, kind: str, obj: dict) -> tuple[str, str]:
    """Runs <kind>.lua as Argo CD does: `obj` global, the chunk returns hs."""
    lua = INTERPRETERS[interpreter].LuaRuntime(unpack_returned_tuples=True)
    status, message = lua.execute(
        f"obj = {lua_literal(obj)}\n"
        f"local hs = dofile({lua_literal(str(ARGOCD / (kind + '.lua')))})\n"
        "return tostring(hs.status), tostring(hs.message)"
    )
    assert status in ARGO_STATUSES and message not in ("", "nil"), (status, message)
    return status, message


def fixture_files() -> list[Path]:
    return sorted(FIXTURES.glob("*.json")) + sorted(E2E_FIXTURES.glob("*.json"))


def expected(path: Path) -> tuple[str, str]:
    if path.parent == E2E_FIXTURES:
        return E2E_EXPECTED[path.stem.partition("-")[0]]
    return EXPECTED[path.stem]


def test_every_committed_fixture_is_there():
    assert {p.stem for p in FIXTURES.glob("*.json")} == set(EXPECTED)


@pytest.mark.parametrize("interpreter", INTERPRETERS)
@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_argo_health_of_captured_runs(path, interpreter):
    obj = json.loads(path.read_text())
    status, message = argo_health(interpreter, "BenchmarkRun", obj)
    assert status == expected(path)[0], message
    if status == "Degraded" and obj["status"]["phase"] == "Failed":
        assert obj["status"]["reason"] in message  # the reason shows in the Argo CD UI


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_kstatus_of_captured_runs(path):
    reading = kstatus_rules.compute(json.loads(path.read_text()))
    assert reading.status == expected(path)[1], reading.message


def test_statuses_the_state_machine_builds_now_read_the_same():
    """The committed fixtures may lag behind the phase machine (stages/): the same readings from a fresh build."""
    for name, obj in gitops_fixtures.build().items():
        argo, kstatus = EXPECTED[name]
        assert argo_health("lua5.4", "BenchmarkRun", obj)[0] == argo, name
        assert kstatus_rules.compute(obj).status == kstatus, name


def test_healthy_message_carries_tpmc_and_a_failure_its_cause():
    ok = json.loads((FIXTURES / "succeeded.json").read_text())
    status, message = argo_health("lua5.4", "BenchmarkRun", ok)
    assert status == "Healthy" and message.startswith("Succeeded: tpmC 180.0"), message
    failed = json.loads((FIXTURES / "failed-durability.json").read_text())
    _, message = argo_health("lua5.4", "BenchmarkRun", failed)
    assert message.startswith("DurabilityLost: 3 of 90 acknowledged NewOrders lost"), message
    ycsb = json.loads((E2E_FIXTURES / "succeeded-voltdb-ycsb.json").read_text())
    assert argo_health("lua5.4", "BenchmarkRun", ycsb) == (
        "Healthy",
        "Succeeded: YCSB a 26421.7 operations/s, verdict Pass",
    )
    regressed = json.loads((FIXTURES / "regressed.json").read_text())
    assert argo_health("lua5.1", "BenchmarkRun", regressed) == (
        "Degraded",
        "Regressed: tpmC -25.0% (limit -10%) against the median of 2 previous results",
    )


@pytest.mark.parametrize(
    "verdict, want",
    [
        ("Pass", "Healthy"),
        ("Improved", "Healthy"),
        ("Inconclusive", "Healthy"),
        ("Regressed", "Degraded"),
        ("Failed", "Degraded"),
        (None, "Progressing"),
    ],
)
def test_argo_health_of_a_result(verdict, want):
    """A BenchmarkResult (history.py's record): its verdict in spec."""
    obj = {
        "apiVersion": "bench.tpcc.dev/v1alpha1",
        "kind": "BenchmarkResult",
        "metadata": {"name": "r-g1-abcde"},
        "spec": {
            "run": "r",
            "phase": "Failed" if verdict == "Failed" else "Succeeded",
            "regression": {"message": "tpmC -31.2% (limit -10%)"},
            **({"verdict": verdict} if verdict else {}),
            **({"reason": "DurabilityLost"} if verdict == "Failed" else {}),
        },
    }
    for interpreter in INTERPRETERS:
        status, message = argo_health(interpreter, "BenchmarkResult", obj)
        assert status == want, message
    if verdict == "Failed":
        assert message == "Failed: DurabilityLost"


def test_a_stale_success_is_not_healthy():
    """A run that succeeded for generation 2, whose spec is now at 3: the operator has not
    started the new measurement yet, so neither Argo CD nor kstatus may call it done."""
    obj = json.loads((FIXTURES / "succeeded.json").read_text())
    obj["metadata"]["generation"] = 3
    assert argo_health("lua5.1", "BenchmarkRun", obj)[0] == "Progressing"
    assert kstatus_rules.compute(obj).status == "InProgress"


# BenchmarkSchedule: its CronJob-like status (spec.suspend, Ready, Stalled), by hand and as
# tpcc_operator.schedule.decide writes it.
SCHEDULE = {
    "apiVersion": "bench.tpcc.dev/v1alpha1",
    "kind": "BenchmarkSchedule",
    "metadata": {"name": "nightly", "generation": 1},
    "spec": {"schedule": "0 3 * * *"},
}


@pytest.mark.parametrize(
    "status, suspend, want",
    [
        (None, False, "Progressing"),
        (
            {"observedGeneration": 1, "conditions": [{"type": "Ready", "status": "True", "message": "next run 03:00"}]},
            False,
            "Healthy",
        ),
        (
            {
                "observedGeneration": 1,
                "conditions": [
                    {"type": "Ready", "status": "False", "reason": "InvalidSchedule", "message": "bad cron"}
                ],
            },
            False,
            "Degraded",
        ),
        (
            {
                "observedGeneration": 1,
                "conditions": [
                    {"type": "Stalled", "status": "True", "reason": "InvalidTemplate", "message": "x"},
                    {"type": "Ready", "status": "Unknown"},
                ],
            },
            False,
            "Degraded",
        ),
        ({"observedGeneration": 0, "conditions": [{"type": "Ready", "status": "True"}]}, False, "Progressing"),
        ({"observedGeneration": 1, "conditions": [{"type": "Ready", "status": "True"}]}, True, "Suspended"),
    ],
)
def test_argo_health_of_a_schedule(status, suspend, want):
    obj = {**SCHEDULE, "spec": {**SCHEDULE["spec"], "suspend": suspend}}
    if status is not None:
        obj["status"] = status
    for interpreter in INTERPRETERS:
        assert argo_health(interpreter, "BenchmarkSchedule", obj)[0] == want


@pytest.mark.parametrize(
    "spec, want_argo, want_kstatus",
    [
        ({"schedule": "0 3 * * *"}, "Healthy", "Current"),
        ({"schedule": "0 3 * * *", "suspend": True}, "Suspended", "Current"),
        ({"schedule": "61 3 * * *"}, "Degraded", "Failed"),
        ({"schedule": "0 3 * * *", "timeZone": "Nowhere/Else"}, "Degraded", "Failed"),
    ],
)
def test_schedule_statuses_the_operator_writes(spec, want_argo, want_kstatus):
    """A regression of a run never reaches the schedule's health: only the schedule itself does."""
    import datetime as dt

    from tpcc_operator import schedule

    now = dt.datetime(2026, 3, 2, 10, 0, tzinfo=dt.timezone.utc)
    runs = [schedule.OwnedRun("nightly-1", now - dt.timedelta(days=1), "Succeeded")]
    template = {"runTemplate": {"spec": {"database": {"type": "voltdb"}}}}  # the CRD requires one
    decision = schedule.decide("nightly", {**spec, **template}, 3, {}, now - dt.timedelta(days=2), runs, now)
    obj = {**SCHEDULE, "metadata": {"name": "nightly", "generation": 3}, "spec": spec, "status": decision.status}
    for interpreter in INTERPRETERS:
        assert argo_health(interpreter, "BenchmarkSchedule", obj)[0] == want_argo
    assert kstatus_rules.compute(obj).status == want_kstatus


def test_argocd_snippets_hold_the_lua_files_unchanged():
    """hack/argocd-health.py writes them; an edited .lua without regenerating fails here."""
    scripts = {p.stem: p.read_text() for p in sorted(ARGOCD.glob("*.lua"))}
    assert set(scripts) == {"BenchmarkRun", "BenchmarkResult", "BenchmarkSchedule"}
    values = yaml.safe_load((ARGOCD / "argocd-cm-values.yaml").read_text())["configs"]["cm"]
    patch = yaml.safe_load((ARGOCD / "argocd-cm-patch.yaml").read_text())["data"]
    want = {HEALTH_KEY.format(kind=kind): text for kind, text in scripts.items()}
    assert values == want and patch == want


@pytest.mark.parametrize("lua", ["lua5.1", "lua5.4"])
def test_a_working_run_shows_argo_cd_what_it_waits_for(lua):
    loading = json.loads((FIXTURES / "loading.json").read_text())
    status, message = argo_health(lua, "BenchmarkRun", loading)
    assert status == "Progressing"
    assert message == f"Loading: {loading['status']['message']}"
    assert message.startswith("Loading: since ") and "waiting for load job bench-g2-loader" in message
