"""operator/Dockerfile (for users with a registry) and hack/images.sh (the local cluster, no
Docker engine here) build the same operator image: the same packages, helm, the charts where
the chart's values say they are."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml
from test_runner_contract import SPECS

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = (ROOT / "operator" / "Dockerfile").read_text()
IMAGES_SH = (ROOT / "hack" / "images.sh").read_text()


def test_the_dockerfile_copies_what_exists_and_installs_the_operator_and_the_contract_only():
    copied = re.findall(r"^COPY (?!--from)(\S+) ", DOCKERFILE, re.MULTILINE)
    for src in copied:
        assert (ROOT / src).exists(), src
    assert "runner-image" not in copied and not any(src.startswith("runner-image/tpcc_runner") for src in copied)
    assert re.search(r"pip install [^\n]*-c /src/constraints.txt /src/contract /src/operator", DOCKERFILE)
    assert "runner-image/contract /src/contract" in DOCKERFILE
    assert 'ENTRYPOINT ["kopf", "run", "--module=tpcc_operator.handlers"' in DOCKERFILE
    assert "USER 1000" in DOCKERFILE


def test_the_local_image_has_the_same_contents():
    runner = IMAGES_SH[IMAGES_SH.index("runner() {") :]
    assert 'srcs=("$ROOT/runner-image")' in runner and 'srcs+=("$ROOT/operator")' in runner
    assert "names+=(/tmp/src/runner-image/contract)" in runner
    assert 'cp -r "$ROOT/charts" "$r/opt/tpcc/charts"' in runner
    values = yaml.safe_load((ROOT / "charts" / "tpcc-operator" / "values.yaml").read_text())
    assert f"COPY charts {values['chartsDir']}" in DOCKERFILE
    assert f"TPCC_CHARTS_DIR={values['chartsDir']}" in DOCKERFILE and "TPCC_HELM=/usr/local/bin/helm" in DOCKERFILE


def test_helm_is_the_version_the_local_cluster_uses():
    local = re.search(r"helm (v\d+\.\d+\.\d+)", (ROOT / "hack" / "local-k8s.sh").read_text()).group(1)
    assert f"ARG HELM_VERSION={local}" in DOCKERFILE


# Python as in the image: it writes .pyc files, and no SOURCE_DATE_EPOCH makes them hash-based
PYTHON_ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "SOURCE_DATE_EPOCH")}


def _import(pkg_dir: Path, code: str = "import mod") -> str:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=pkg_dir, env=PYTHON_ENV, capture_output=True, text=True, check=True
    ).stdout.strip()


def _import_rewrites_pyc(pkg_dir: Path) -> bool:
    """Import the module in a fresh interpreter: does Python recompile it (a stale .pyc)?"""
    pyc = next((pkg_dir / "__pycache__").glob("mod.*.pyc"))
    before = pyc.read_bytes()
    _import(pkg_dir)
    return pyc.read_bytes() != before


def test_pycs_stay_valid_when_the_image_zeroes_every_mtime(tmp_path):
    """mkimage.py writes every file with mtime 0: a .pyc compiled at build time is then stale
    and Python recompiles its module at every start (the operator's RSS paid ~60 MB for
    kubernetes.client); hash-pycs.py makes them checked-hash, valid whatever the mtime."""
    src = tmp_path / "mod.py"
    src.write_text("VALUE = 1\n")

    def built_then_packed():  # a .pyc written at build time, then the image's zero mtimes
        os.utime(src, (1_700_000_000, 1_700_000_000))
        _import(tmp_path)
        os.utime(src, (0, 0))

    built_then_packed()
    assert _import_rewrites_pyc(tmp_path)  # stale: compiled again
    built_then_packed()
    subprocess.run([sys.executable, str(ROOT / "hack" / "k8s" / "hash-pycs.py"), str(tmp_path)], check=True)
    assert not _import_rewrites_pyc(tmp_path)
    src.write_text("VALUE = 2\n")  # same size, same zero mtime: only the hash sees the edit
    os.utime(src, (0, 0))
    assert _import(tmp_path, "import mod; print(mod.VALUE)") == "2"


def test_every_image_gets_hash_based_pycs():
    finish = IMAGES_SH[IMAGES_SH.index("finish_rootfs() {") :]
    assert "hash-pycs.py /usr/lib /opt" in finish[: finish.index("\n}")]
    assert '"$HASH_PYCS"' in IMAGES_SH[IMAGES_SH.index("script_hash() {") :].splitlines()[0]


# What the operator image leaves out (operator/Dockerfile installs the operator and tpcc_contract):
# the runner itself and its dependencies
NOT_IN_THE_OPERATOR_IMAGE = ("tpcc_runner", "voltdbclient", "numpy", "fdb", "scipy", "otava", "secantusdb")


def test_the_operator_runs_without_the_runner():
    """Imports every operator module with the runner (tpcc_runner) and its own dependencies made
    unimportable, merges a TPC-C and a YCSB results document and builds every Job's command line,
    as the operator image (no runner package, no voltdbclient, numpy, ...) must."""
    blocker = f"""
import importlib.abc, sys
class Missing(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {NOT_IN_THE_OPERATOR_IMAGE!r}:
            raise ImportError(f"{{name}} is not in the operator image")
sys.meta_path.insert(0, Missing())
import pkgutil, tpcc_operator
for m in pkgutil.iter_modules(tpcc_operator.__path__):
    __import__("tpcc_operator." + m.name)
for absent in ("numpy", "tpcc_runner"):
    try:
        __import__(absent)
        raise SystemExit(f"the blocker let {{absent}} in")
    except ImportError:
        pass
sys.path.insert(0, "tests")
from pathlib import Path
from runner_docs import pod_results, ycsb_pod_results
from tpcc_operator import plan, runner_jobs, workloads
from tpcc_operator.results import run_status
from tpcc_operator.runspec import RunSpec
assert run_status([pod_results(0, 2, 100, 0.01), pod_results(1, 2, 80, 0.01)]).tpm_c == 180.0
ycsb = [ycsb_pod_results(0, 2, 30, 10, 0.001), ycsb_pod_results(1, 2, 10, 10, 0.001)]
assert workloads.of(RunSpec.parse({SPECS["ycsb-deployed"]!r})).merge(ycsb)["opsPerSecond"] == 3.0
run, settings = plan.Run("bench", "perf", "uid-7", 3), plan.Settings(charts_dir=Path("../charts"))
for document in {list(SPECS.values())!r}:
    spec = RunSpec.parse(document)
    for job in (runner_jobs.load_job(run, spec, settings), runner_jobs.run_job(run, spec, settings),
                runner_jobs.verifier_job(run, spec, settings, {{0: "10.0.0.5"}}),
                runner_jobs.check_job(run, spec, settings), runner_jobs.midcheck_job(run, spec, settings),
                runner_jobs.acid_job(run, spec, settings), runner_jobs.analyzer_job(run, spec, settings, 0.001)):
        assert job["spec"]["template"]["spec"]["containers"][0]["args"]
leaked = sorted(m for m in sys.modules if m.split(".")[0] in {NOT_IN_THE_OPERATOR_IMAGE!r})
assert not leaked, leaked
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", blocker], capture_output=True, text=True, cwd=ROOT / "operator")
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
