"""The fault kinds' registry against the CRDs and the code: every action the CRD admits has one
class (faults.kinds), its timed kinds are the ones the CRD's rules ask a durationSeconds of, and
no module outside the faults package branches on an action's name."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from pathlib import Path

import pytest
import yaml
from test_status_types import mismatches
from tpcc_operator import faults
from tpcc_operator.faults import DatabasePod
from tpcc_operator.runspec import RunSpec
from tpcc_operator.runstatus import FaultEntry

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "operator" / "tpcc_operator"


def fault_schema(crd: str) -> dict:
    """spec.faults[] of the run CRD, or of the schedule's run template."""
    doc = yaml.safe_load((ROOT / "crds" / crd).read_text())
    spec = doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    if crd == "benchmarkschedule.yaml":
        spec = spec["properties"]["runTemplate"]["properties"]["spec"]
    return spec["properties"]["faults"]["items"]


def test_the_crds_admit_exactly_the_registry_s_actions_in_its_order():
    for crd in ("benchmarkrun.yaml", "benchmarkschedule.yaml"):
        assert fault_schema(crd)["properties"]["action"]["enum"] == list(faults.REGISTRY), crd


def test_every_method_the_crd_admits_is_carried_out_by_a_kind():
    methods = fault_schema("benchmarkrun.yaml")["properties"]["method"]["enum"]
    assert set(methods) <= set(faults.BY_METHOD)
    for kind in faults.REGISTRY.values():
        assert all(faults.BY_METHOD[m].inject.__func__ is type(kind).inject for m in kind.methods), kind.action


def test_the_timed_kinds_are_those_the_crd_asks_a_duration_of():
    text = (ROOT / "crds" / "benchmarkrun.yaml").read_text()
    rule = re.search(r"\(f\.action in \[([^\]]*)\]\) == \(has\(f\.durationSeconds\) \|\|", text)
    assert rule, "the CRD's durationSeconds rule"
    named = [a.strip().strip("'") for a in rule.group(1).split(",")]
    assert named == [a for a, k in faults.REGISTRY.items() if k.timed]


def test_no_module_outside_the_faults_package_branches_on_an_action():
    actions = "|".join(re.escape(a) for a in faults.REGISTRY)
    named = re.compile(rf"""["']({actions})["']""")
    compared = re.compile(r"""(\.action\b|\["action"\])\s*(==|!=|in\b|not in\b)""")
    found = []
    for path in PACKAGE.rglob("*.py"):
        if "faults" in path.relative_to(PACKAGE).parts[:1]:
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#")[0]
            if compared.search(code) or (named.search(code) and "==" in code):
                found.append(f"{path.relative_to(PACKAGE)}:{n}: {line.strip()}")
    assert not found, "\n".join(found)


def test_a_status_faults_entry_is_its_crd_schema_field_by_field():
    status = yaml.safe_load((ROOT / "crds" / "benchmarkrun.yaml").read_text())["spec"]["versions"][0]
    faults_schema = status["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]["faults"]
    assert mismatches(FaultEntry, faults_schema["items"], "status.faults[]") == []


T0 = dt.datetime(2025, 1, 1, 12, 0, 0, tzinfo=dt.timezone.utc)
# each action with the fields it needs; the kill-all needs allowDataLoss on VoltDB
FAULT_OF = {
    "kill-primary": {},
    "kill-node": {"podIndex": 1},
    "kill-random-member": {"method": "kill-process"},
    "kill-all": {"allowDataLoss": True},
    "pause": {"durationSeconds": 20},
    "partition": {"durationSeconds": 20, "split": "halves"},
    "slow-network": {"durationSeconds": 20, "delayMs": 100, "jitterMs": 10, "lossPercent": 2.5},
    "node-loss": {"durationSeconds": 20},
    "chaos": {"durationSeconds": 20, "chaos": {"kind": "NetworkChaos", "spec": {"action": "delay", "target": {}}}},
}


def test_every_kind_is_exercised_here():
    assert set(FAULT_OF) == set(faults.REGISTRY)


@pytest.mark.parametrize("action", FAULT_OF)
def test_every_entry_a_kind_writes_reads_back_as_a_fault_entry_unchanged(action, document_of):
    """Each kind's fault through its states to Recovered, the database pods coming back as the
    cluster would bring them; every status.faults the decisions write reads as FaultEntry and
    writes the same JSON again."""
    spec = RunSpec.parse(
        document_of(
            {
                "database": {"type": "voltdb", "deploy": {"replicas": 3, "kSafety": 1}},
                "workload": {"warmupSeconds": 10, "durationSeconds": 120},
                "faults": [{"action": action, "afterSeconds": 20, **FAULT_OF[action]}],
            }
        )
    )
    pods = [DatabasePod(f"bench-g2-{i}", f"u{i}", True, node=f"node-{i}") for i in range(3)]
    entries: list[dict] = []
    for second in range(0, 100):
        now = T0 + dt.timedelta(seconds=second)
        d = faults.decide(spec, entries, T0, now, "bench-g2", pods, None, "uid-1", frozenset({"node-0"}))
        entries = d.faults if d.faults is not None else entries
        for e in entries:
            assert FaultEntry.from_json(e).to_json() == e
        killed = {k.pod for k in d.kills if k.method in (faults.DELETE_POD, faults.KILL_PROCESS)}
        pods = [  # a deleted pod comes back with a new UID, a killed process as a restarted container
            dataclasses.replace(p, uid=p.uid + "'", restarts=p.restarts + 1) if p.name in killed else p for p in pods
        ]
    assert [e["state"] for e in entries] == [faults.RECOVERED]
