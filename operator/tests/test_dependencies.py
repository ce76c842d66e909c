"""Every third-party import declared in its package's pyproject.toml, and every package the env and
the images install pinned once, in requirements.lock (with hashes) and constraints.txt (its pins
without them), both written by hack/lock.sh: hack/python-env.sh installs the lock with
--require-hashes, hack/images.sh and both Dockerfiles with `pip install -c constraints.txt`, so two
fresh machines get the same versions."""

from __future__ import annotations

import ast
import re
import sys
from importlib import metadata

import pytest
import tomllib
from crd_schema import ROOT
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

CONSTRAINTS = ROOT / "constraints.txt"
NO_DEPS = ROOT / "runner-image" / "requirements-no-deps.txt"
LOCK_IN = ROOT / "hack" / "lock.in"
# What each tree installs: the env's extras (hack/python-env.sh), a superset of the images'.
PACKAGES = {
    "operator": ("tpcc_operator", {"test"}),
    "runner-image": ("tpcc_runner", {"test", "foundationdb", "changepoints"}),
    "runner-image/contract": ("tpcc_contract", set()),
}


def _lines(path) -> list[str]:
    return [line.split("#")[0].strip() for line in path.read_text().splitlines() if line.split("#")[0].strip()]


def pins() -> dict[str, str]:
    """constraints.txt's pins for this Python (a marker where the version differs by Python)."""
    out = {}
    for line in _lines(CONSTRAINTS):
        req = Requirement(line)
        name, specs = canonicalize_name(req.name), list(req.specifier)
        assert len(specs) == 1 and specs[0].operator == "==", f"constraints.txt: {line!r} is not name==version"
        if req.marker is None or req.marker.evaluate():
            assert name not in out, f"constraints.txt: {name} pinned twice for this Python"
            out[name] = specs[0].version
    return out


def declared(tree: str, extras: set[str]) -> list[Requirement]:
    project = tomllib.loads((ROOT / tree / "pyproject.toml").read_text())["project"]
    reqs = [Requirement(r) for r in project["dependencies"]]
    reqs += [Requirement(r) for e in sorted(extras) for r in project["optional-dependencies"][e]]
    if tree == "runner-image":
        reqs += [Requirement(r) for r in _lines(NO_DEPS)]
    return [r for r in reqs if r.marker is None or r.marker.evaluate()]


def _imports(package_dir) -> set[str]:
    out = set()
    for path in package_dir.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                out |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                out.add(node.module.split(".")[0])
    return out - set(sys.stdlib_module_names) - {"__future__"}


@pytest.mark.parametrize("tree", PACKAGES)
def test_every_third_party_import_is_declared_in_its_package(tree):
    package, extras = PACKAGES[tree]
    names = {canonicalize_name(r.name) for r in declared(tree, extras)}
    # The operator and the runner import the contract they share (the result documents' merge, the
    # command lines): it is installed from runner-image/contract beside them by every build;
    # declared by name, pip would fetch whatever PyPI has.
    own = {canonicalize_name("tpcc-contract")}
    by_module = metadata.packages_distributions()
    undeclared = {
        m: by_module.get(m)
        for m in _imports(ROOT / tree / package) - {package}
        if not {canonicalize_name(d) for d in by_module.get(m, [])} & (names | own)
    }
    assert undeclared == {}


# The packages of this repository: each tree's tests may import the others, which
# hack/python-env.sh installs from their directories (never by name from PyPI).
OWN = {canonicalize_name("tpcc-runner"), canonicalize_name("tpcc-operator"), canonicalize_name("tpcc-contract")}


@pytest.mark.parametrize("tree", PACKAGES)
def test_every_third_party_import_of_the_tests_is_declared_in_the_test_extras(tree):
    """scipy, PyYAML, packaging, ...: a test's import is its package's dependency or in an extra
    hack/python-env.sh installs; the tests' own helper modules (files beside them) are not."""
    names = {canonicalize_name(r.name) for r in declared(tree, PACKAGES[tree][1])}
    tests = ROOT / tree / "tests"
    by_module = metadata.packages_distributions()
    helpers = {p.stem for p in (ROOT / tree).rglob("*.py")} | {p.name for p in (ROOT / tree).rglob("*") if p.is_dir()}
    undeclared = {
        m: by_module.get(m)
        for m in _imports(tests) - helpers
        if not {canonicalize_name(d) for d in by_module.get(m, [])} & (names | OWN)
    }
    assert undeclared == {}


@pytest.mark.parametrize("tree", PACKAGES)
def test_each_package_says_it_is_typed(tree):
    """PEP 561: py.typed in the package, and in its package data so an install keeps it."""
    package = PACKAGES[tree][0]
    assert (ROOT / tree / package / "py.typed").is_file()
    data = tomllib.loads((ROOT / tree / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert "py.typed" in data[package]


def _closure() -> dict[str, list[Requirement]]:
    """Every distribution the env installs (pip's resolution as the installed metadata records it),
    each with the requirements that asked for it."""
    asked: dict[str, list[Requirement]] = {}
    todo = [(r, set(r.extras)) for tree, (_, extras) in PACKAGES.items() for r in declared(tree, extras)]
    # and what hack/lock.in adds by name: the editable installs' build backend, pip itself
    todo += [(Requirement(r), set()) for r in _lines(LOCK_IN) if not r.startswith("-e ")]
    no_deps = {canonicalize_name(Requirement(r).name) for r in _lines(NO_DEPS)}
    while todo:
        req, extras = todo.pop()
        name = canonicalize_name(req.name)
        seen = name in asked
        asked.setdefault(name, []).append(req)
        if seen or name in no_deps:
            continue
        for text in metadata.requires(req.name) or []:
            sub = Requirement(text)
            if sub.marker is None or any(sub.marker.evaluate({"extra": e}) for e in extras | {""}):
                todo.append((sub, set(sub.extras)))
    return asked


def test_the_constraints_pin_exactly_what_the_env_installs_at_versions_its_packages_allow():
    pinned, closure = pins(), _closure()
    assert sorted(set(closure) - set(pinned)) == [], "unpinned: run hack/lock.sh"
    assert sorted(set(pinned) - set(closure)) == [], "pinned but installed by nothing: run hack/lock.sh"
    refused = [
        f"{name}=={pinned[name]} against {r}"
        for name, reqs in closure.items()
        for r in reqs
        if not r.specifier.contains(pinned[name], prereleases=True)
    ]
    assert refused == []


def test_the_env_has_the_pinned_versions():
    """hack/python-env.sh installs the lock: a venv that differs was installed otherwise."""
    installed = {name: metadata.version(name) for name in pins()}
    assert {n: v for n, v in installed.items() if v != pins()[n]} == {}


@pytest.mark.parametrize(
    "path", ["hack/python-env.sh", "hack/images.sh", "runner-image/Dockerfile", "operator/Dockerfile"]
)
def test_every_install_is_constrained(path):
    text = (ROOT / path).read_text().replace("\\\n", " ")
    installs = [
        line for line in text.splitlines() if re.search(r"\bpip\"? install\b", line) and "--upgrade pip" not in line
    ]
    # the lock, hashed; or the repository's own packages, editable, whose dependencies are the lock's
    pinned = re.compile(
        r" -c \S*constraints"
        r'|--require-hashes --no-deps -r "\$LOCK"$'
        r'|--no-deps --no-build-isolation( -e "\$ROOT/[^"]+")+$',
        re.IGNORECASE,
    )
    assert installs and all(pinned.search(line.rstrip()) for line in installs), installs
    assert "apache-otava==" not in text  # its version is the constraints'
