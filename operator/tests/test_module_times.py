"""hack/module-times.py: what each test module of a share took, read from a real pytest
--junitxml report (setup, call and teardown of each test: a module's fixtures count)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("module_times", ROOT / "hack" / "module-times.py")
assert _spec and _spec.loader
module_times = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(module_times)

SLOW = """
import time
import pytest

@pytest.fixture(scope="module")
def server():
    time.sleep(0.6)  # a module's server starting
    yield
    time.sleep(0.3)  # and stopping

@pytest.mark.parametrize("n", [1, 2])
def test_uses_the_server(server, n):
    time.sleep(0.1)

class TestGrouped:
    def test_in_a_class(self):
        time.sleep(0.2)
"""
FAST = "def test_quick():\n    pass\n"


def test_seconds_by_module_from_a_real_report(tmp_path):
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_slow.py").write_text(SLOW)
    (tests / "test_fast.py").write_text(FAST)
    report = tmp_path / "db-b.xml"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}", str(tests)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    seconds = module_times.module_seconds(report)
    assert set(seconds) == {"test_slow.py", "test_fast.py"}
    # the fixture's 0.9 s, two 0.1 s calls and the class's 0.2 s
    assert 1.3 <= seconds["test_slow.py"] < 2.5
    assert seconds["test_fast.py"] < 0.3


def test_the_printout_names_the_share_and_the_slowest_first(tmp_path, capsys):
    report = tmp_path / "e2e-a.xml"
    report.write_text(
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="tests.e2e.test_b" name="x" time="3.0"/>'
        '<testcase classname="tests.e2e.test_a" name="y" time="10.0"/>'
        '<testcase classname="tests.e2e.test_b" name="z" time="2.5"/>'
        "</testsuite></testsuites>"
    )
    assert module_times.main([str(report), str(tmp_path / "e2e-b.xml")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "share a: 16 s in 2 modules"
    assert "test_a.py" in out[1] and "10.0 s" in out[1] and "test_b.py" in out[2] and "5.5 s" in out[2]
    assert out[3].endswith("e2e-b.xml: no report (the share did not run)")
