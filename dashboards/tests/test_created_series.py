"""No `_created` series in either registry: prometheus_client adds one per counter child (its
creation time) unless turned off, which each metrics module does when imported. Each exposition is
made in an interpreter of its own, since the switch is process-wide: one module's call would hide
the other's missing one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from test_promtool_metrics import families

HERE = Path(__file__).resolve().parent


def exposition_alone(registry: str) -> bytes:
    code = f"import sys, test_promtool_metrics as t; sys.stdout.buffer.write(t.{registry}_exposition())"
    return subprocess.run([sys.executable, "-c", code], cwd=HERE, capture_output=True, check=True, timeout=120).stdout


@pytest.mark.parametrize(
    "registry, counter", [("operator", "tpcc_operator_reconcile_errors_total"), ("runner", "tpcc_load_rows_total")]
)
def test_no_created_series(registry, counter):
    exposition = exposition_alone(registry)
    assert counter in families(exposition)  # a counter with a child: what would have one
    assert [f for f in families(exposition) if f.endswith("_created")] == []
