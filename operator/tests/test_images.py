"""operator/Dockerfile (for users with a registry) and hack/images.sh (the local cluster, no
Docker engine here) build the same operator image: the same packages, helm, the charts where
the chart's values say they are."""
from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = (ROOT / "operator" / "Dockerfile").read_text()
IMAGES_SH = (ROOT / "hack" / "images.sh").read_text()


def test_the_dockerfile_copies_what_exists_and_installs_both_packages():
    for src in re.findall(r"^COPY (?!--from)(\S+) ", DOCKERFILE, re.MULTILINE):
        assert (ROOT / src).exists(), src
    assert re.search(r"pip install [^\n]*/src/runner-image /src/operator", DOCKERFILE)
    assert 'ENTRYPOINT ["kopf", "run", "--module=tpcc_operator.handlers"' in DOCKERFILE
    assert "USER 1000" in DOCKERFILE


def test_the_local_image_has_the_same_contents():
    runner = IMAGES_SH[IMAGES_SH.index("runner() {"):]
    assert 'srcs=("$ROOT/runner-image")' in runner and 'srcs+=("$ROOT/operator")' in runner
    assert 'cp -r "$ROOT/charts" "$r/opt/tpcc/charts"' in runner
    values = yaml.safe_load((ROOT / "charts" / "tpcc-operator" / "values.yaml").read_text())
    assert f"COPY charts {values['chartsDir']}" in DOCKERFILE
    assert f"TPCC_CHARTS_DIR={values['chartsDir']}" in DOCKERFILE and "TPCC_HELM=/usr/local/bin/helm" in DOCKERFILE


def test_helm_is_the_version_the_local_cluster_uses():
    local = re.search(r"helm (v\d+\.\d+\.\d+)", (ROOT / "hack" / "local-k8s.sh").read_text()).group(1)
    assert f"ARG HELM_VERSION={local}" in DOCKERFILE
