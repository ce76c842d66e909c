#!/usr/bin/env python3
"""Charts whose files changed since their Chart.yaml's `version:` last changed (chart-testing's
version-increment check, against the chart's own history instead of a target branch: a clone
of any branch can run it). Exit 1 naming each chart and its changed files; 0 when every
changed chart was bumped. Uncommitted changes count too, so a change is caught before it is
committed.

    hack/chart-versions.py [REPO]
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

VERSION_LINE = re.compile(r"^version:", re.MULTILINE)


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def last_bump(repo: Path, chart: str) -> str | None:
    """The newest commit whose diff touches the `version:` line of chart/Chart.yaml. A merge is
    diffed against its first parent (-m --first-parent): a bump made on a merged branch counts
    at its merge, and plain `git log -G` shows merges no diff at all (the bump was missed)."""
    first_parent = ("-m", "--first-parent")
    out = _git(repo, "log", "-1", "--format=%H", *first_parent, "-G", VERSION_LINE.pattern, "--", f"{chart}/Chart.yaml")
    return out.strip() or None


def _version_edited_since(repo: Path, chart: str, commit: str) -> bool:
    """Chart.yaml's version line differs between commit and the working tree (a bump not yet committed)."""
    committed = _git(repo, "show", f"{commit}:{chart}/Chart.yaml")
    now = (repo / chart / "Chart.yaml").read_text()
    line = re.compile(r"^version:.*$", re.MULTILINE)
    return line.findall(committed) != line.findall(now)


def changed_since_bump(repo: Path, chart: str) -> list[str]:
    """The chart's files changed (committed or not) since its last version bump; [] when none
    or when the version itself is being bumped in the working tree."""
    bump = last_bump(repo, chart)
    if bump is None:
        return []  # a chart never committed has nothing to compare with
    if _version_edited_since(repo, chart, bump):
        return []
    committed = _git(repo, "diff", "--name-only", bump, "HEAD", "--", chart).split()
    uncommitted = _git(repo, "status", "--porcelain", "--untracked-files=all", "--", chart).splitlines()
    return sorted(set(committed) | {line[3:] for line in uncommitted})


def charts_of(repo: Path) -> list[str]:
    return sorted(str(p.parent.relative_to(repo)) for p in (repo / "charts").glob("*/Chart.yaml"))


def main(argv: list[str]) -> int:
    repo = Path(argv[1] if len(argv) > 1 else Path(__file__).resolve().parents[1])
    failed = False
    for chart in charts_of(repo):
        changed = changed_since_bump(repo, chart)
        if changed:
            failed = True
            print(
                f"{chart}: changed since its last version bump; raise `version:` in {chart}/Chart.yaml "
                f"(changed: {', '.join(changed)})",
                file=sys.stderr,
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
