"""conftest.py marks the tests of this directory that start a server as db, by their fixtures;
its hook sees every item of the session, and in one session with the operator's tests (whose
`voltdb` fixture is a spec document) it once marked 63 of them db too, so the unit stage
(`-m "not db"`) deselected them and no stage ran them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def collected(*paths: str) -> list[str]:
    """The unit tests a session of these paths collects (as pytest names them: the operator's
    relative to operator/, whose tests/ the rootdir search stops at)."""
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-m", "not db and not k8s"]
        + [str(ROOT / p) for p in paths],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    ).stdout
    return sorted(line for line in out.splitlines() if "::" in line)


def test_the_operators_unit_tests_are_collected_alike_beside_the_runners():
    alone = collected("operator/tests")
    together = [t for t in collected("runner-image/tests", "operator/tests") if t.startswith("tests/")]
    assert len(alone) > 900 and all(t.startswith("tests/") for t in alone)
    assert together == alone
