#!/usr/bin/env bash
# The main job, on a fresh machine too: a real local Kubernetes, the runner and VoltDB images built
# here, the operator installed with its chart, a sample BenchmarkRun applied and followed to the
# end; prints its results. The cluster stays up afterwards (`hack/local-k8s.sh down` stops it).
#
#   hack/demo.sh [SAMPLE.yaml]      default crds/samples/voltdb-smoke.yaml
#   then:  eval "$(hack/local-k8s.sh env)"; kubectl get br; kubectl describe br voltdb-smoke
set -euo pipefail
. "$(dirname "$0")/lib.sh"
sample=${1:-$ROOT/crds/samples/voltdb-smoke.yaml}
[ -f "$sample" ] || { echo "demo.sh: no such file: $sample" >&2; exit 2; }
NS=${TPCC_DEMO_NAMESPACE:-tpcc-demo}
TIMEOUT=${TPCC_DEMO_TIMEOUT:-1800}

"$ROOT/hack/voltdb.sh" fetch
"$ROOT/hack/voltdb.sh" procs
"$ROOT/hack/local-k8s.sh" all
"$ROOT/hack/images.sh"
eval "$("$ROOT/hack/local-k8s.sh" env)"

log "installing the operator (chart charts/tpcc-operator, namespace tpcc-system, watching $NS)"
kubectl create namespace "$NS" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
helm upgrade --install tpcc-operator "$ROOT/charts/tpcc-operator" -n tpcc-system --create-namespace \
  --set image.pullPolicy=Never --set watchNamespace="$NS" --wait --timeout 180s >/dev/null
name=$(kubectl create --dry-run=client -o jsonpath='{.metadata.name}' -f "$sample")
# a re-run of the demo starts the run afresh
kubectl delete benchmarkrun "$name" -n "$NS" --ignore-not-found --timeout=120s >/dev/null
kubectl apply -n "$NS" -f "$sample"

log "following $NS/$name (kubectl get br -n $NS -w shows the same)"
deadline=$(( $(date +%s) + TIMEOUT )); last=
while :; do
  phase=$(kubectl get br "$name" -n "$NS" -o jsonpath='{.status.phase}')
  [ "$phase" = "$last" ] || { log "phase: ${phase:-<none>}"; last=$phase; }
  case $phase in Succeeded | Failed) break ;; esac
  if [ "$(date +%s)" -gt "$deadline" ]; then log "still $phase after ${TIMEOUT}s"; exit 1; fi
  sleep 3
done
kubectl get br "$name" -n "$NS"
kubectl get br "$name" -n "$NS" -o json | python3 "$ROOT/hack/k8s/run_summary.py"
