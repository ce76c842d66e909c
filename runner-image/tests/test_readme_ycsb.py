"""docs/workloads.md's "## YCSB" commands (the README's until the docs moved to docs/), run as
written against a real VoltDB in an empty directory
(only the endpoint, --duration and --metrics-port change, as in test_readme_runner.py). If the
page's YCSB commands stop working, this fails."""

from __future__ import annotations

import json
import re
import shlex
import subprocess

import pytest
from test_readme_runner import tpcc_commands, tpcc_executable
from voltdb_server import ROOT, voltdb  # noqa: F401  (fixture)

pytestmark = pytest.mark.db


DOC = ROOT / "docs" / "workloads.md"


def ycsb_block(heading: str = "## YCSB") -> list[str]:
    section = DOC.read_text().split(f"\n{heading}\n", 1)
    assert len(section) == 2, f"{DOC.name} has no {heading} section"
    block = re.search(r"^```sh\n(.*?)^```", re.split(r"\n##+ ", section[1], maxsplit=1)[0], re.S | re.M)
    assert block, f"no ```sh block under {heading}"
    return [line for line in block.group(1).replace("\\\n", " ").splitlines() if line.strip()]


def _run_block(block: list[str], endpoint: str, tmp_path) -> dict[str, str]:
    """Each `tpcc ycsb load|run|verify` of a README block as written: its stdout by phase."""
    commands = tpcc_commands(block, endpoint)
    assert [c[:2] for c in commands] == [["ycsb", "load"], ["ycsb", "run"], ["ycsb", "verify"]], commands
    outputs = {}
    for argv in commands:
        done = subprocess.run([*tpcc_executable(), *argv], cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"tpcc {shlex.join(argv)} exited {done.returncode}:\n{done.stderr[-3000:]}"
        outputs[argv[1]] = done.stdout
    return outputs


def test_readme_ycsb_commands_work(voltdb, tmp_path):  # noqa: F811
    outputs = _run_block(ycsb_block(), voltdb.endpoints[0], tmp_path)
    results = json.loads((tmp_path / "ycsb-a.json").read_text())
    assert results["status"]["opsPerSecond"] > 0 and results["errors"] == 0
    assert 4 <= results["OVERALL"]["RunTime(ms)"] / 1000 <= 7  # --duration 5
    assert outputs["run"].startswith("[OVERALL], RunTime(ms), ")
    verdict = json.loads(outputs["verify"])
    assert verdict["durable"] is True and verdict["records"] == 10000 and verdict["acknowledged_updates"] > 0


def test_readme_ycsb_timeseries_commands_work(voltdb, tmp_path):  # noqa: F811
    outputs = _run_block(ycsb_block("### YCSB TimeSeries"), voltdb.endpoints[0], tmp_path)
    results = json.loads((tmp_path / "ts-a.json").read_text())
    assert results["errors"] == 0 and set(results["operations"]) == {"INSERT", "READ"}
    assert results["properties"]["workload"] == "site.ycsb.workloads.TimeSeriesWorkload"
    verdict = json.loads(outputs["verify"])
    assert verdict["durable"] is True and verdict["records"] == 64 and verdict["acknowledged_updates"] == 64
