# Sourced by the hack/ scripts: where things live.
# Big downloads and builds (Kubernetes binaries, VoltDB jars, images) go to a cache outside
# the clone so CI and later runs reuse them; a fresh machine fills it on first use.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TPCC_CACHE=${TPCC_CACHE:-$HOME/.cache/tpcc-operator}
# Per-clone scratch space: server data dirs, logs, pid files.
WORK=${TPCC_WORK:-$ROOT/.work}
VENV=${TPCC_VENV:-$ROOT/.venv}
mkdir -p "$TPCC_CACHE" "$WORK"
log() { echo "[$(date +%T)] $*" >&2; }
