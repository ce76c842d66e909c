"""Every chart whose files changed is version-bumped (hack/chart-versions.py, chart-testing's
version-increment check over the chart's own history)."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

import pytest
from crd_schema import ROOT

_spec = importlib.util.spec_from_file_location("chart_versions", ROOT / "hack" / "chart-versions.py")
chart_versions = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(chart_versions)


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        check=True,
        capture_output=True,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    chart = tmp_path / "charts" / "db"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text('apiVersion: v2\nname: db\nversion: 0.1.0\nappVersion: "1"\n')
    (chart / "values.yaml").write_text("replicas: 1\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "chart")
    return tmp_path


def _bump(repo: Path, version: str) -> None:
    chart_yaml = repo / "charts" / "db" / "Chart.yaml"
    text = chart_yaml.read_text()
    chart_yaml.write_text(
        "\n".join(f"version: {version}" if line.startswith("version:") else line for line in text.splitlines()) + "\n"
    )


def test_an_unchanged_chart_passes(repo):
    assert chart_versions.changed_since_bump(repo, "charts/db") == []


def test_a_change_without_a_bump_is_named_committed_or_not(repo):
    (repo / "charts/db/values.yaml").write_text("replicas: 3\n")
    (repo / "charts/db/templates/new.yaml").write_text("kind: ConfigMap\n")
    assert chart_versions.changed_since_bump(repo, "charts/db") == [
        "charts/db/templates/new.yaml",
        "charts/db/values.yaml",
    ]
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "more replicas")
    assert chart_versions.changed_since_bump(repo, "charts/db") == [
        "charts/db/templates/new.yaml",
        "charts/db/values.yaml",
    ]
    assert chart_versions.main(["chart-versions", str(repo)]) == 1


def test_an_appversion_change_alone_still_needs_a_version_bump(repo):
    chart_yaml = repo / "charts/db/Chart.yaml"
    chart_yaml.write_text(chart_yaml.read_text().replace('appVersion: "1"', 'appVersion: "2"'))
    _git(repo, "commit", "-qam", "new app")
    assert chart_versions.changed_since_bump(repo, "charts/db") == ["charts/db/Chart.yaml"]


def test_a_bump_clears_the_changes_before_it_and_only_those(repo):
    (repo / "charts/db/values.yaml").write_text("replicas: 3\n")
    _git(repo, "commit", "-qam", "more replicas")
    _bump(repo, "0.1.1")  # in the working tree: the change is being bumped
    assert chart_versions.changed_since_bump(repo, "charts/db") == []
    _git(repo, "commit", "-qam", "bump")
    assert chart_versions.changed_since_bump(repo, "charts/db") == []
    (repo / "charts/db/values.yaml").write_text("replicas: 5\n")
    assert chart_versions.changed_since_bump(repo, "charts/db") == ["charts/db/values.yaml"]


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="not a git checkout: no history to compare with")
def test_every_chart_of_this_repository_is_bumped_since_it_changed():
    unbumped = {c: chart_versions.changed_since_bump(ROOT, c) for c in chart_versions.charts_of(ROOT)}
    assert not {c: files for c, files in unbumped.items() if files}, (
        "raise `version:` in each chart's Chart.yaml (hack/chart-versions.py names the files)"
    )


def test_a_bump_made_on_a_merged_branch_counts_at_its_merge_and_later_changes_still_need_one(repo):
    _git(repo, "checkout", "-qb", "side")
    (repo / "charts/db/values.yaml").write_text("replicas: 3\n")
    _bump(repo, "0.1.1")
    _git(repo, "commit", "-qam", "more replicas, bumped")
    _git(repo, "checkout", "-q", "-")
    (repo / "charts/db/templates").joinpath("other.yaml").write_text("kind: Secret\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "unrelated chart change on the main line")
    _git(repo, "merge", "-q", "--no-edit", "side")
    # The main line's change came before the merge that brought the bump: cleared by it.
    assert chart_versions.changed_since_bump(repo, "charts/db") == []
    (repo / "charts/db/values.yaml").write_text("replicas: 5\n")
    _git(repo, "commit", "-qam", "after the merge")
    assert chart_versions.changed_since_bump(repo, "charts/db") == ["charts/db/values.yaml"]
