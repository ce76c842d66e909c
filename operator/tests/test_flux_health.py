"""The healthCheckExprs docs/gitops.md gives a Flux Kustomization for BenchmarkRuns, evaluated
with cel-python the way kustomize-controller does (flux_health.py) over the statuses the
operator's state machine builds (fixtures/gitops/) and those a real cluster produced
(fixtures/gitops/e2e/): they read as kstatus reads them, except a run without status, which
they leave Unknown (Flux waits) where kstatus says Current (Flux passed such a run at once in
the Flux e2e, test_gitops_flux_e2e.py). The docs' YAML and the e2e's expressions are these."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from flux_health import HEALTH_CHECK_EXPRS, flux_status
from gitops_fixtures import E2E_EXPECTED, E2E_FIXTURES, EXPECTED, FIXTURES

ROOT = Path(__file__).resolve().parents[2]
# where Flux's reading differs from kstatus's (EXPECTED's second column)
FLUX_EXPECTED = {name: kstatus for name, (_, kstatus) in EXPECTED.items()} | {"created": "Unknown"}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_reads_as_expected(name):
    obj = json.loads((FIXTURES / f"{name}.json").read_text())
    assert flux_status(obj) == FLUX_EXPECTED[name], obj.get("status")


@pytest.mark.parametrize("path", sorted(E2E_FIXTURES.glob("*.json")), ids=lambda p: p.stem)
def test_e2e_capture_reads_as_expected(path):
    obj = json.loads(path.read_text())
    assert flux_status(obj) == E2E_EXPECTED[path.stem.split("-", 1)[0]][1], obj["status"]


def test_a_run_without_conditions_is_in_progress_and_a_stale_generation_too():
    run = {"metadata": {"generation": 2}, "status": {"observedGeneration": 2, "phase": "Pending"}}
    assert flux_status({**run, "status": {**run["status"], "conditions": []}}) == "InProgress"
    stale = json.loads((FIXTURES / "succeeded.json").read_text())
    stale["metadata"]["generation"] = stale["status"]["observedGeneration"] + 1
    assert flux_status(stale) == "InProgress"


def test_docs_give_these_expressions():
    text = (ROOT / "docs" / "gitops.md").read_text()
    block = next(b for b in re.findall(r"```yaml\n(.*?)```", text, re.S) if "healthCheckExprs" in b)
    kustomization = next(d for d in yaml.safe_load_all(block) if d["kind"] == "Kustomization")
    assert kustomization["spec"]["healthCheckExprs"] == HEALTH_CHECK_EXPRS
