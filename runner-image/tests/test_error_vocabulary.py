"""One error vocabulary (drivers/base.py): a row a transaction needs and does not find is NotLoaded
in every driver (the db tests of each driver break a row and see it); here, statically, no driver,
ACID test or YCSB store raises Python's own lookup errors for it instead."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "tpcc_runner"
LOOKUP_ERRORS = {"LookupError", "KeyError", "IndexError"}


def raised_names(path: Path) -> list[tuple[str, int]]:
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Raise) and node.exc is not None:
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(exc, ast.Name):
                out.append((exc.id, node.lineno))
    return out


def test_no_driver_raises_a_builtin_lookup_error_for_a_missing_row():
    modules = [p for folder in ("drivers", "acid", "ycsb") for p in (PACKAGE / folder).rglob("*.py")]
    assert len(modules) > 20
    found = [
        f"{p.relative_to(PACKAGE)}:{line} {name}"
        for p in modules
        for name, line in raised_names(p)
        if name in LOOKUP_ERRORS
    ]
    assert found == []


def test_the_scan_sees_a_raise(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f(d):\n    raise LookupError(f'no row {d}')\n")
    assert raised_names(module) == [("LookupError", 2)]
