"""End to end on a real cluster with a real GitOps controller: Flux's source-controller and
kustomize-controller (built from their Go modules by hack/flux.sh) reconcile a BenchmarkRun from
a git repository served on this machine (hack/k8s/git_server.py), and the Kustomization's Ready
is the pipeline's verdict.

Commits, each pushed and then announced to the GitRepository the way a webhook Receiver would
(the reconcile.fluxcd.io/requestedAt annotation, what `flux reconcile source git` sets):
  1. a BenchmarkRun with a regression policy (onRegression: Fail) and a runToken: the
     Kustomization waits (Ready=Unknown, Progressing) and turns Ready=True when the run succeeds;
     its BenchmarkResult is the baseline (verdict Inconclusive: no history yet);
  2. the database's CPU cut to a tenth of a core (test_regression_e2e's cut) and the token bumped: the run's verdict is
     Regressed and the Kustomization Ready=False (HealthCheckFailed, naming the run);
  3. `git revert` of 2: the spec and the token are commit 1's again (a token reused after a spec
     change): the run runs again (its spec hash differs from the one under way), passes against
     the baseline and the Kustomization is Ready again;
  4. the run deleted from git: Flux prunes it, its three BenchmarkResults stay and
     `tpcc report --history` draws them;
  5. a run the API server refuses: the Kustomization is Ready=False naming the field.
Prints what each commit took from push to Ready, and how much of it was the run.

Needs what test_regression_e2e needs and Flux installed (hack/flux.sh up, which hack/test.sh k8s
runs); TPCC_FLUX_GIT is the git server's URL (hack/flux.sh env; default below). About 3 x
(deploy + load + 20 s) of cluster time.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.request
from datetime import datetime
from pathlib import Path

import pytest
from flux_health import HEALTH_CHECK_EXPRS
from test_benchmarkrun_e2e import ROOT, _unavailable, get_run, kubectl, wait_for
from test_regression_e2e import SLOW_VALUES

pytestmark = pytest.mark.k8s

GIT_URL = os.environ.get("TPCC_FLUX_GIT", "http://10.244.0.1:18080")
RUN_NAME = "nightly-voltdb"
PATH_IN_REPO = "benchmarks/nightly"
# small, as test_regression_e2e's: two equal 20 s runs on the shared 2-core node have differed
# by 36 % in tpmC, so the limit is 60 %; the cut database (SLOW_VALUES) loses far more
RUN_SPEC = {
    "database": {"type": "voltdb"},
    "workload": {"warehouses": 1, "clients": 4, "durationSeconds": 20, "warmupSeconds": 10},
    "runners": {"parallelism": 1},
    "regression": {
        "baseline": {"previous": 2},
        "maxTpmCDropPercent": 60,
        "maxP99IncreasePercent": {"NEW_ORDER": 300},
        "onRegression": "Fail",
    },
    "cleanup": {"policy": "Always"},
    "runToken": "1",
}


@pytest.fixture(scope="module")
def flux(cluster):
    for deploy in ("source-controller", "kustomize-controller"):
        out = kubectl("-n", "flux-system", "get", "deploy", deploy, "-o", "json", check=False)
        if out.returncode != 0 or not json.loads(out.stdout)["status"].get("readyReplicas"):
            _unavailable(f"Flux's {deploy} is not running in flux-system (hack/flux.sh up)")
    try:
        urllib.request.urlopen(f"{GIT_URL}/healthz", timeout=5).read()
    except OSError as e:
        _unavailable(f"no git server at {GIT_URL} (hack/flux.sh git): {e}")


class Repo:
    """A working copy whose pushes go to the git server (a new bare repository on first push)."""

    def __init__(self, path: Path, url: str):
        self.path, self.url = path, url
        path.mkdir(parents=True)
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str) -> str:
        env = {
            **os.environ,
            "GIT_AUTHOR_NAME": "e2e",
            "GIT_AUTHOR_EMAIL": "e2e@tpcc.dev",
            "GIT_COMMITTER_NAME": "e2e",
            "GIT_COMMITTER_EMAIL": "e2e@tpcc.dev",
        }
        out = subprocess.run(["git", *args], cwd=self.path, env=env, capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, f"git {' '.join(args)}: {out.stderr}"
        return out.stdout.strip()

    def write(self, files: dict[str, str | None]) -> None:
        for name, text in files.items():
            f = self.path / name
            if text is None:
                f.unlink()
            else:
                f.parent.mkdir(parents=True, exist_ok=True)
                f.write_text(text)

    def commit(self, message: str) -> str:
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)
        return self.push()

    def push(self) -> str:
        self.git("push", "-q", self.url, "main")
        return self.git("rev-parse", "HEAD")


def run_yaml(spec: dict) -> str:
    run = {"apiVersion": "bench.tpcc.dev/v1alpha1", "kind": "BenchmarkRun", "metadata": {"name": RUN_NAME}}
    return json.dumps({**run, "spec": spec}, indent=2) + "\n"  # YAML is a superset of JSON


def kustomization_yaml(resources: list[str]) -> str:
    return json.dumps(
        {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": resources}
    )


def flux_objects(ns: str, repo_url: str) -> str:
    source = {
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "GitRepository",
        "metadata": {"name": "benchmarks", "namespace": ns},
        "spec": {"interval": "10m", "url": repo_url, "ref": {"branch": "main"}},
    }
    kustomization = {
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": {"name": "nightly-tpcc", "namespace": ns},
        "spec": {
            "interval": "10m",
            "retryInterval": "30s",
            "path": f"./{PATH_IN_REPO}",
            "prune": True,
            "sourceRef": {"kind": "GitRepository", "name": "benchmarks"},
            "targetNamespace": ns,
            "wait": True,
            "timeout": "15m",
            # HEALTH_CHECK_EXPRS (flux_health.py, docs/gitops.md): without them kustomize-controller reads a
            # BenchmarkRun with kstatus's generic rules, and a new run has no status yet when Flux first
            # polls it (right after applying it): kstatus says Current, and the Kustomization turned
            # Ready=True with the run still Pending (observed here, before the operator's first tick).
            "healthCheckExprs": HEALTH_CHECK_EXPRS,
        },
    }
    return "\n---\n".join(json.dumps(o) for o in (source, kustomization))


def get(ns: str, kind: str, name: str) -> dict:
    return json.loads(kubectl("get", kind, name, "-n", ns, "-o", "json").stdout)


def ready_of(obj: dict) -> dict:
    return next((c for c in obj.get("status", {}).get("conditions", []) if c["type"] == "Ready"), {})


def seconds(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def announce(ns: str) -> None:
    """What a webhook Receiver does on a push: ask the GitRepository to fetch now."""
    stamp = f"reconcile.fluxcd.io/requestedAt={time.time()}"
    kubectl("annotate", "--overwrite", "-n", ns, "gitrepository/benchmarks", stamp)


def follow(ns: str, sha: str, want: str, timeout: float = 900) -> tuple[dict, float, list[tuple[float, str]]]:
    """Waits until the Kustomization's Ready is `want` (True/False) for revision sha; returns it,
    the seconds since the push, and the Kustomization's Ready states seen on the way (seconds
    since the push, status/reason). Ready=True at sha after its health check was under way
    (Unknown) is the end of that revision's reconciliation: when False is wanted it fails then,
    with what the run says (a CI once waited out the whole timeout on it)."""
    t0, seen, checking = time.time(), [], False
    deadline = t0 + timeout
    while time.time() < deadline:
        ks = get(ns, "kustomization", "nightly-tpcc")
        ready = ready_of(ks)
        attempted = ks.get("status", {}).get("lastAttemptedRevision", "").endswith(sha)
        state = f"{ready.get('status')}/{ready.get('reason')}"
        if not attempted:
            state += " (earlier revision)"
        if not seen or seen[-1][1] != state:
            seen.append((round(time.time() - t0, 1), state))
        if attempted and ready.get("status") == want:
            return ks, time.time() - t0, seen
        checking = checking or (attempted and ready.get("status") == "Unknown")
        if checking and want == "False" and ready.get("status") == "True":
            run = (get_run(ns, RUN_NAME) or {}).get("status", {})
            said = (run.get("phase"), run.get("verdict"), run.get("regression", {}).get("message"))
            raise AssertionError(f"Ready=True at {sha[:8]}, not {want}: {seen}; the run: {said}")
        time.sleep(1)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for Ready={want} at {sha[:8]}: {seen}")


def timing(label: str, total: float, br: dict | None, seen) -> str:
    """One line: push -> Ready, the run (start -> completion) and its measured part (loaded ->
    run completed: warm-up, duration, the runner pods' start) inside it."""
    line = f"{label}: push -> Ready {total:.0f} s"
    if br:
        st = br["status"]
        conds = {c["type"]: c for c in st.get("conditions", [])}
        if st.get("startTime") and st.get("completionTime"):
            run = seconds(st["completionTime"]) - seconds(st["startTime"])
            line += f"; the run {run:.0f} s (Flux and the operator around it {total - run:.0f} s)"
        if "Loaded" in conds and "RunCompleted" in conds:
            loaded, completed = (conds[t]["lastTransitionTime"] for t in ("Loaded", "RunCompleted"))
            measured = seconds(completed) - seconds(loaded)
            line += f", of which the benchmark {measured:.0f} s"
    return line + f"; Kustomization Ready seen: {seen}"


def results_of(ns: str) -> list[dict]:
    out = kubectl("get", "benchmarkresults", "-n", ns, "-l", f"bench.tpcc.dev/run={RUN_NAME}", "-o", "json")
    return sorted(json.loads(out.stdout)["items"], key=lambda r: r["spec"]["runGeneration"])


def test_flux_applies_runs_and_turns_red_on_a_regression(namespace, operator, flux, tmp_path):
    kubectl("apply", "-f", str(ROOT / "crds" / "benchmarkresult.yaml"))
    repo = Repo(tmp_path / "repo", f"{GIT_URL}/{namespace}-benchmarks.git")
    timings = []

    # commit 1: the baseline
    repo.write(
        {
            f"{PATH_IN_REPO}/kustomization.yaml": kustomization_yaml(["run.yaml"]),
            f"{PATH_IN_REPO}/run.yaml": run_yaml(RUN_SPEC),
        }
    )
    sha1 = repo.commit("nightly TPC-C run on VoltDB, regression policy")
    kubectl("apply", "-f", "-", input=flux_objects(namespace, repo.url))
    ks, took, seen = follow(namespace, sha1, "True")
    first = get_run(namespace, RUN_NAME)
    timings.append(timing("commit 1 (baseline)", took, first, seen))
    assert first["status"]["phase"] == "Succeeded", first["status"].get("message")
    assert first["status"]["verdict"] == "Inconclusive"
    # Ready=True came after the run, not on the first poll of a run without status
    assert any(s.startswith("Unknown/Progressing") for _, s in seen), seen
    assert seconds(ready_of(ks)["lastTransitionTime"]) >= seconds(first["status"]["completionTime"]), (ks, first)
    labels = first["metadata"]["labels"]
    assert labels["kustomize.toolkit.fluxcd.io/name"] == "nightly-tpcc", labels
    [baseline] = results_of(namespace)

    # commit 2: the database's CPU cut, a new token
    slow = json.loads(json.dumps(RUN_SPEC))
    slow["database"]["deploy"] = {"values": SLOW_VALUES}
    slow["runToken"] = "2"
    repo.write({f"{PATH_IN_REPO}/run.yaml": run_yaml(slow)})
    sha2 = repo.commit("voltdb: one site per host, 100m CPU")
    announce(namespace)
    ks, took, seen = follow(namespace, sha2, "False")
    second = get_run(namespace, RUN_NAME)
    timings.append(timing("commit 2 (CPU cut)", took, second, seen))
    status = second["status"]
    assert status["runGeneration"] == first["status"]["runGeneration"] + 1
    assert (status["phase"], status["verdict"]) == ("Succeeded", "Regressed"), status.get("regression")
    assert status["regression"]["baseline"]["results"] == [baseline["metadata"]["name"]]
    run_ready = ready_of(second)
    assert (run_ready["status"], run_ready["reason"]) == ("False", "Regressed")
    message = ready_of(ks)["message"]
    assert ready_of(ks)["reason"] == "HealthCheckFailed", ks["status"]
    assert f"BenchmarkRun/{namespace}/{RUN_NAME}" in message and "Failed" in message, message
    print("commit 2: the Kustomization says:", message, "| the run says:", run_ready["message"])

    # commit 3: git revert: commit 1's spec and token again
    repo.git("revert", "--no-edit", "HEAD")
    sha3 = repo.push()
    announce(namespace)
    ks, took, seen = follow(namespace, sha3, "True")
    third = get_run(namespace, RUN_NAME)
    timings.append(timing("commit 3 (revert)", took, third, seen))
    status = third["status"]
    assert third["spec"]["runToken"] == "1" and "deploy" not in third["spec"]["database"]
    assert status["runGeneration"] == second["status"]["runGeneration"] + 1, "the reverted spec did not run again"
    assert status["verdict"] in ("Pass", "Improved"), status["regression"]["message"]
    # a regressed result is never a baseline
    assert status["regression"]["baseline"]["results"] == [baseline["metadata"]["name"]]

    history = results_of(namespace)
    assert [r["spec"]["verdict"] for r in history] == ["Inconclusive", "Regressed", status["verdict"]]
    tpmcs = [r["spec"]["tpmC"] for r in history]
    # each result names the Kustomization that applied its run (no revision: none was annotated)
    assert all(r["spec"]["git"] == {"tool": "Flux", "source": f"{namespace}/nightly-tpcc"} for r in history), [
        r["spec"].get("git") for r in history
    ]

    # commit 4: the run deleted from git: pruned, its results stay
    repo.write({f"{PATH_IN_REPO}/run.yaml": None, f"{PATH_IN_REPO}/kustomization.yaml": kustomization_yaml([])})
    sha4 = repo.commit("retire the nightly run")
    announce(namespace)
    _, took, seen = follow(namespace, sha4, "True", timeout=300)
    timings.append(timing("commit 4 (run deleted, pruned)", took, None, seen))
    wait_for("the pruned run gone", lambda: get_run(namespace, RUN_NAME) is None, 180)
    assert [r["metadata"]["name"] for r in results_of(namespace)] == [r["metadata"]["name"] for r in history]
    page = tmp_path / "history.html"
    report = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "tpcc"), "report", "--history", RUN_NAME, "-n", namespace, "-o", str(page)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert report.returncode == 0, report.stderr
    html = page.read_text()
    assert all(r["metadata"]["name"] in html for r in history) or html.count("<svg") >= 1, report.stdout

    # commit 5: a run the API server refuses: the Kustomization names the field
    bad = json.loads(json.dumps(RUN_SPEC))
    bad["workload"]["warehouses"] = 0
    repo.write(
        {
            f"{PATH_IN_REPO}/kustomization.yaml": kustomization_yaml(["run.yaml"]),
            f"{PATH_IN_REPO}/run.yaml": run_yaml(bad),
        }
    )
    sha5 = repo.commit("a run with no warehouses")
    announce(namespace)
    ks, _, _ = follow(namespace, sha5, "False", timeout=300)
    message = ready_of(ks)["message"]
    assert ready_of(ks)["reason"] == "ReconciliationFailed", ks["status"]
    assert "spec.workload.warehouses" in message, message
    assert get_run(namespace, RUN_NAME) is None
    print("commit 5: the Kustomization says:", message)

    print("tpmC and verdict of the three runs:", list(zip(tpmcs, [r["spec"]["verdict"] for r in history])))
    for line in timings:
        print(line)
    kubectl("delete", "kustomization,gitrepository", "--all", "-n", namespace, "--timeout=180s", check=False)
