"""`tpcc run`'s start-up: the parser of a command the CLI module defines does not import the
modules of the others (report, acid, ycsb), and every command still parses."""

from __future__ import annotations

import subprocess
import sys

import pytest
from tpcc_runner.cli import OWN_COMMANDS, build_parser, named_command

OTHERS = ("tpcc_runner.report", "tpcc_runner.acid.command", "tpcc_runner.ycsb.command")


def imported_after_parsing(argv: list[str]) -> list[str]:
    code = (
        "import sys; from tpcc_runner.cli import build_parser, named_command; "
        f"argv = {argv!r}; build_parser(named_command(argv)).parse_args(argv); "
        f"print(sorted(m for m in {OTHERS!r} if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return eval(done.stdout)


def test_run_parses_without_the_other_commands_modules():
    assert imported_after_parsing(["run", "--db", "mongodb", "--warehouses", "1"]) == []


def test_report_builds_every_parser():
    assert imported_after_parsing(["report", "results.json", "-o", "report.html"]) == sorted(OTHERS)


@pytest.mark.parametrize(
    "argv, command",
    [
        (["run", "--db", "voltdb"], "run"),
        (["--version"], None),
        ([], None),
        (["ycsb", "run", "--db", "voltdb"], "ycsb"),
    ],
)
def test_the_named_command_is_the_first_argument_not_an_option(argv, command):
    assert named_command(argv) == command


def test_a_command_of_another_module_is_refused_by_the_narrow_parser_only():
    """The narrow parser is only for a command it has; any other gets the whole parser."""
    assert "report" not in OWN_COMMANDS
    with pytest.raises(SystemExit):
        build_parser("run").parse_args(["report", "results.json", "-o", "report.html"])
    assert build_parser("report").parse_args(["report", "results.json", "-o", "report.html"]).command == "report"
