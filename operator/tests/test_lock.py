"""requirements.lock (written by hack/lock.sh) is current: every requirement of the packages
hack/python-env.sh installs is met by one pin on each Python the lock is for, every pin carries
hashes (pip installs it with --require-hashes), and constraints.txt is the same pins without them.
Offline: no resolver runs here, so a pyproject edit that the lock no longer meets fails until
hack/lock.sh is run."""

from __future__ import annotations

import re

import pytest
import tomllib
from crd_schema import ROOT
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

LOCK = ROOT / "requirements.lock"
LOCK_IN = ROOT / "hack" / "lock.in"
CONSTRAINTS = ROOT / "constraints.txt"
NO_DEPS = ROOT / "runner-image" / "requirements-no-deps.txt"
PYTHON_ENV = ROOT / "hack" / "python-env.sh"
# hack/lock.sh's floor (the operator's kopf needs 3.11) to the newest CPython release
PYTHONS = ["3.11", "3.12", "3.13", "3.14"]
EDITABLE = re.compile(r"^-e \./(?P<tree>[^\[\s]+)(?:\[(?P<extras>[^\]]*)\])?$")


def _lines(path) -> list[str]:
    return [line.split("#")[0].strip() for line in path.read_text().splitlines() if line.split("#")[0].strip()]


def lock_entries() -> list[tuple[Requirement, list[str]]]:
    """Each pin with its hashes, as pip's hash-checking mode reads them: `name==version ; marker \\`
    and then one `--hash=sha256:...` line per file."""
    entries: list[tuple[Requirement, list[str]]] = []
    for line in _lines(LOCK):
        text = line.removesuffix("\\").strip()
        if text.startswith("--hash="):
            entries[-1][1].append(text.removeprefix("--hash="))
        else:
            entries.append((Requirement(text), []))
    return entries


def environment(python: str) -> dict[str, str]:
    """This machine's marker environment, as the given CPython would report it."""
    return {**default_environment(), "python_version": python, "python_full_version": f"{python}.0"}


def pins_for(entries, python: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for req, _ in entries:
        if req.marker is None or req.marker.evaluate(environment(python)):
            name = canonicalize_name(req.name)
            assert name not in out, f"requirements.lock pins {name} twice for Python {python}"
            (spec,) = req.specifier
            assert spec.operator == "==", req
            out[name] = spec.version
    return out


def editable_trees() -> dict[str, set[str]]:
    """hack/lock.in's local packages, each with the extras the lock resolves for it."""
    trees = {}
    for line in _lines(LOCK_IN):
        if m := EDITABLE.match(line):
            trees[m["tree"]] = {e.strip() for e in (m["extras"] or "").split(",") if e.strip()}
    return trees


def requirements() -> list[Requirement]:
    """What the lock must meet: each local package's dependencies and the extras lock.in names, the
    packages installed without their dependencies, and lock.in's own by-name lines."""
    reqs = []
    for tree, extras in editable_trees().items():
        project = tomllib.loads((ROOT / tree / "pyproject.toml").read_text())["project"]
        reqs += [Requirement(r) for r in project.get("dependencies", [])]
        reqs += [Requirement(r) for e in sorted(extras) for r in project["optional-dependencies"][e]]
    reqs += [Requirement(r) for r in _lines(NO_DEPS)]
    reqs += [Requirement(r) for r in _lines(LOCK_IN) if not r.startswith("-e ")]
    return reqs


def test_the_lock_is_for_the_packages_python_env_installs():
    installed = set(re.findall(r'-e "\$ROOT/([^"]+)"', PYTHON_ENV.read_text()))
    assert installed and set(editable_trees()) == installed


@pytest.mark.parametrize("python", PYTHONS)
def test_the_lock_meets_every_requirement_of_the_pyproject_files(python):
    pinned = pins_for(lock_entries(), python)
    env = {**environment(python), "extra": ""}
    unmet = [
        f"{r} (pinned: {pinned.get(canonicalize_name(r.name))})"
        for r in requirements()
        if (r.marker is None or r.marker.evaluate(env))
        and not r.specifier.contains(pinned.get(canonicalize_name(r.name), "0.dev0"), prereleases=True)
    ]
    assert unmet == [], "stale: run hack/lock.sh"


def test_every_pin_is_one_version_with_the_hashes_of_its_files():
    entries = lock_entries()
    assert len(entries) >= 50
    unhashed = [str(req) for req, hashes in entries if not hashes]
    assert unhashed == []
    malformed = [h for _, hashes in entries for h in hashes if not re.fullmatch(r"sha256:[0-9a-f]{64}", h)]
    assert malformed == []


def test_the_constraints_are_the_locks_pins_without_their_hashes():
    locked = sorted(str(req) for req, _ in lock_entries())
    assert sorted(str(Requirement(line)) for line in _lines(CONSTRAINTS)) == locked
