"""Issue 40's size bounds on the operator's code: no module over 500 lines, no function over 60.
A module or function that outgrows them has more than one job; split it where it reads better."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "tpcc_operator"
MODULE_LINES = 500
FUNCTION_LINES = 60


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_the_package_is_found():
    assert len(modules()) > 20


def test_no_module_is_over_500_lines():
    long = {str(p.relative_to(PACKAGE)): n for p in modules() if (n := len(p.read_text().splitlines())) > MODULE_LINES}
    assert long == {}


def test_no_function_is_over_60_lines():
    long = {}
    for path in modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > FUNCTION_LINES:
                    long[f"{path.relative_to(PACKAGE)}:{node.name}"] = lines
    assert long == {}
