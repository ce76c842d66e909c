"""docs/runner.md's "## The runner on its own" block (the README's until the docs moved to docs/),
run as a user runs it: its `tpcc` lines as
written, against a VoltDB of their own, in an empty directory. Only the run is shortened
(--duration/--warmup), the endpoint is the test server's and --metrics-port 0 keeps the
commands off port 9100 (another run or exporter may hold it). If the page's commands stop
working, this fails.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from voltdb_server import ROOT, VoltDBServer, start_voltdb

pytestmark = pytest.mark.db

DOC = ROOT / "docs" / "runner.md"
HEADING = "## The runner on its own"
README_ENDPOINT = "127.0.0.1:21212"
SHORT = {"--duration": "5", "--warmup": "1"}


def readme_block() -> list[str]:
    """The first ```sh block under HEADING, one command per line (continuations joined)."""
    text = DOC.read_text()
    section = text.split(f"\n{HEADING}\n", 1)
    assert len(section) == 2, f"{DOC.name} has no {HEADING!r} section"
    section = re.split(r"\n## ", section[1], maxsplit=1)[0]
    block = re.search(r"^```sh\n(.*?)^```", section, re.S | re.M)
    assert block, f"no ```sh block under {HEADING!r}"
    return [line for line in block.group(1).replace("\\\n", " ").splitlines() if line.strip()]


def tpcc_commands(lines: list[str], endpoint: str) -> list[list[str]]:
    commands = []
    for line in lines:
        argv = shlex.split(line, comments=True)
        if not argv or argv[0] != "tpcc":
            continue
        argv = [endpoint if a == README_ENDPOINT else a for a in argv]
        for flag, value in SHORT.items():
            if flag in argv:
                argv[argv.index(flag) + 1] = value
        commands.append(argv[1:] + ["--metrics-port", "0"])
    return commands


def tpcc_executable() -> list[str]:
    script = Path(sys.executable).parent / "tpcc"  # the console script pip installed
    return [str(script)] if script.is_file() else [sys.executable, "-m", "tpcc_runner.cli"]


@pytest.fixture(scope="module")
def fresh_voltdb(tmp_path_factory) -> VoltDBServer:
    """A just-started node, as `hack/voltdb.sh start` gives the reader (the session's shared
    `voltdb` holds other tests' loads, which the README's load without --reset refuses)."""
    server = start_voltdb(tmp_path_factory.mktemp("voltdb-readme"), 1, 0)
    yield server
    server.script("stop")


def test_readme_setup_builds_the_procedures_before_pip_installs_them():
    """A non-editable `pip install` packs tpcc-procs.jar only if it is built already."""
    lines = readme_block()
    procs = next(i for i, line in enumerate(lines) if "hack/voltdb.sh procs" in line)
    pip = next(i for i, line in enumerate(lines) if line.startswith("pip install"))
    assert procs < pip, lines


def test_readme_runner_commands_work(fresh_voltdb, tmp_path):
    commands = tpcc_commands(readme_block(), fresh_voltdb.endpoints[0])
    assert [c[0] for c in commands] == ["load", "run", "check", "verify-ledger"], commands
    outputs = {}
    for argv in commands:
        done = subprocess.run([*tpcc_executable(), *argv], cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"tpcc {shlex.join(argv)} exited {done.returncode}:\n{done.stderr[-3000:]}"
        outputs[argv[0]] = done.stdout

    results = json.loads((tmp_path / "out.json").read_text())
    assert results["tpmC"] > 0
    assert results["consistency"]["passed"] is True  # run --check
    assert (tmp_path / "acked.log").stat().st_size > 0
    assert json.loads(outputs["check"])["passed"] is True
    ledger = json.loads(outputs["verify-ledger"])
    assert ledger["acknowledged"] > 0 and ledger["lost"] == 0 and ledger["durable"] is True
