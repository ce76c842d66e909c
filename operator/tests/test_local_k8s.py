"""hack/local-k8s.sh's own checks, without a cluster: a node is refused on a nearly full disk
before anything starts, and the CoreDNS it builds has every plugin its Corefile names."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOCAL_K8S = ROOT / "hack" / "local-k8s.sh"
COREDNS_MAIN = (ROOT / "hack" / "k8s" / "coredns" / "main.go").read_text()


def test_a_node_on_a_nearly_full_disk_is_refused_with_the_space_and_the_place(tmp_path):
    env = {**os.environ, "TPCC_WORK": str(tmp_path), "NODE_MIN_FREE_GB": str(10**9)}
    p = subprocess.run([str(LOCAL_K8S), "node"], env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 1
    assert re.search(rf"node: only \d+ GB free on \S+ \(under {tmp_path}/k8s\); the node needs {10**9} GB", p.stderr)
    assert not (tmp_path / "k8s" / "containerd.toml").exists()  # nothing was started


def corefile_plugins() -> list[str]:
    script = LOCAL_K8S.read_text()
    corefile = script[script.index('restart_if_changed coredns "$RUN/Corefile" <<EOF') :].split("\nEOF", 1)[0]
    # the server block's top-level lines (4 spaces in): each starts with its plugin's directive
    return re.findall(r"^    (\w+)", corefile, re.MULTILINE)


def directives() -> list[str]:
    listed = re.search(r"dnsserver.Directives = \[\]string\{([^}]*)\}", COREDNS_MAIN).group(1)
    return re.findall(r'"(\w+)"', listed)


def test_the_coredns_build_has_every_plugin_the_corefile_uses():
    imported = re.findall(r'_ "github.com/coredns/coredns/plugin/(\w+)"', COREDNS_MAIN)
    used = corefile_plugins()
    assert set(used) == {"bind", "errors", "health", "ready", "kubernetes", "forward", "cache"}
    assert set(used) == set(directives()) == set(imported)


def test_the_directives_keep_the_order_of_corednss_plugin_cfg():
    """A query passes the plugins in the directives' order: CoreDNS's own (plugin.cfg of the
    version built, from the Go module cache hack/local-k8s.sh build fills)."""
    version = re.search(r"COREDNS_VERSION:-(v[\d.]+)", LOCAL_K8S.read_text()).group(1)
    cache = Path(os.environ.get("TPCC_CACHE", Path.home() / ".cache" / "tpcc-operator"))
    plugin_cfg = cache / "go" / "mod" / "github.com" / "coredns" / f"coredns@{version}" / "plugin.cfg"
    if not plugin_cfg.exists():
        pytest.skip(f"no {plugin_cfg} (hack/local-k8s.sh build downloads it)")
    order = [line.split(":")[0] for line in plugin_cfg.read_text().splitlines() if line and not line.startswith("#")]
    ours = directives()
    assert ours == [d for d in order if d in ours]


@pytest.mark.parametrize("nodes", ["0", "x", "51"])
def test_a_node_count_out_of_range_is_refused_before_any_step(tmp_path, nodes):
    env = {**os.environ, "TPCC_WORK": str(tmp_path)}
    p = subprocess.run([str(LOCAL_K8S), "--nodes", nodes, "node"], env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    assert f"NODES must be 1..50, not '{nodes}'" in p.stderr
    assert not (tmp_path / "k8s" / "containerd.toml").exists()


def test_the_cross_node_smoke_fills_every_node_placeholder_of_its_manifest():
    """smoke_nodes fills the manifest's node placeholders with sed: one left unfilled would leave a
    pod Pending, one pin missing would let a pod land anywhere and the cross-node check prove nothing."""
    manifest = (ROOT / "hack" / "k8s" / "smoke" / "nodes.yaml").read_text()
    body = manifest.split("\napiVersion", 1)[1]  # past the header comment
    placeholders = set(re.findall(r"\b[A-Z]+_NODE\b", body))
    sed = re.search(r'sed -e "([^"]*)"', (ROOT / "hack" / "k8s" / "nodes.sh").read_text()).group(1)
    filled = set(re.findall(r"s/([A-Z]+_NODE)/", sed))
    assert placeholders == filled == {"NEAR_NODE", "FAR_NODE", "MOVER_NODE"}
    assert all(body.count(p) == 1 for p in placeholders)
