#!/usr/bin/env bash
# The main job, on a fresh machine too: a real local Kubernetes, the runner and database images built
# here, the operator installed with its chart, a sample BenchmarkRun applied and followed to the
# end; prints its summary and exits 0 only if the run Succeeded. The cluster stays up afterwards
# (`hack/local-k8s.sh down` stops it; `hack/test.sh` reuses it).
#
#   hack/demo.sh [SAMPLE.yaml]      default crds/samples/voltdb-smoke.yaml
#   hack/demo.sh --up               only bring up the cluster and the operator (hack/papers.sh uses it)
#   hack/demo.sh --clean            remove the demo's runs, operator and namespace (the cluster stays)
#   hack/demo.sh --nodes N ...      the same on a cluster of N nodes (hack/local-k8s.sh --nodes N)
#   then:  eval "$(hack/local-k8s.sh env)"; kubectl get br -n tpcc-demo; kubectl describe br -n tpcc-demo voltdb-smoke
# env: TPCC_DEMO_NAMESPACE (tpcc-demo)  TPCC_DEMO_TIMEOUT (1800 s for the run)  NODES (1, as --nodes)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$ROOT/hack/k8s/env.sh"
NS=${TPCC_DEMO_NAMESPACE:-tpcc-demo}
if [ "${1:-}" = --nodes ]; then export NODES=${2:?--nodes N}; shift 2; fi
if [ "${1:-}" = --clean ]; then
  eval "$("$ROOT/hack/local-k8s.sh" env)"
  # the runs first, while the operator still runs: it removes their finalizers
  kubectl delete benchmarkruns --all -n "$NS" --ignore-not-found --timeout=120s >/dev/null 2>&1 || true
  helm uninstall tpcc-operator -n tpcc-system --wait >/dev/null 2>&1 || true
  kubectl delete namespace "$NS" tpcc-system --ignore-not-found --wait=false >/dev/null
  log "demo: removed its runs, the operator and namespaces $NS, tpcc-system"
  exit 0
fi
up_only=
if [ "${1:-}" = --up ]; then up_only=1; shift; fi
sample=${1:-$ROOT/crds/samples/voltdb-smoke.yaml}
[ -f "$sample" ] || { echo "demo.sh: no such file: $sample" >&2; exit 2; }
TIMEOUT=${TPCC_DEMO_TIMEOUT:-1800}
t0=$(date +%s)
stage() { log "demo: $1 done at +$(( $(date +%s) - t0 )) s"; }

# Kubernetes' go build takes both cores for minutes on a fresh machine; the Python env, the VoltDB
# jars and the images download meanwhile (apt first: nothing else may hold the dpkg lock then).
"$ROOT/hack/local-k8s.sh" deps
"$ROOT/hack/local-k8s.sh" build >"$WORK/demo-build.log" 2>&1 &
build=$!
images=(pause base runner voltdb)
if [ -n "$up_only" ] || grep -q 'type: *mongodb' "$sample"; then images+=(secantus); fi
"$ROOT/hack/python-env.sh"
"$ROOT/hack/voltdb.sh" fetch
"$ROOT/hack/voltdb.sh" procs
"$ROOT/hack/local-k8s.sh" tools
"$ROOT/hack/images.sh" "${images[@]}"
stage "python env, VoltDB jars, images"
wait "$build" || { tail -30 "$WORK/demo-build.log" >&2; log "demo: building Kubernetes failed"; exit 1; }
stage "Kubernetes build"
"$ROOT/hack/local-k8s.sh" up node
"$ROOT/hack/images.sh" import
eval "$("$ROOT/hack/local-k8s.sh" env)"
stage "cluster up"

log "installing the operator (chart charts/tpcc-operator, namespace tpcc-system, watching $NS)"
kubectl create namespace "$NS" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
# helm does not upgrade CRDs: a cluster left by an older checkout gets the current ones
kubectl apply -f "$ROOT/crds/" >/dev/null
# the image's input hash as a pod annotation: an image rebuilt under the same tag rolls the operator
helm upgrade --install tpcc-operator "$ROOT/charts/tpcc-operator" -n tpcc-system --create-namespace \
  --set image.tag=dev --set image.pullPolicy=Never --set watchNamespace="$NS" --wait --timeout 180s \
  --set-string "podAnnotations.tpcc\.dev/image-inputs=$(cat "$IMAGES/runner.inputs")" >/dev/null
stage "operator installed"
[ -z "$up_only" ] || exit 0
name=$(kubectl create --dry-run=client -o jsonpath='{.metadata.name}' -f "$sample")
# a re-run of the demo starts the run afresh
kubectl delete benchmarkrun "$name" -n "$NS" --ignore-not-found --timeout=120s >/dev/null
kubectl apply -n "$NS" -f "$sample"

log "following $NS/$name (kubectl get br -n $NS -w shows the same)"
deadline=$(( $(date +%s) + TIMEOUT )); last=
while :; do
  line=$(kubectl get br "$name" -n "$NS" -o jsonpath='{.status.phase}|{.status.message}')
  phase=${line%%|*}
  [ "$line" = "$last" ] || { log "phase: ${phase:-<none>}: ${line#*|}"; last=$line; }
  case $phase in Succeeded | Failed) break ;; esac
  if [ "$(date +%s)" -gt "$deadline" ]; then log "still $phase after ${TIMEOUT}s"; exit 1; fi
  sleep 3
done
stage "run $phase"
# the verdict and the BenchmarkResult come on the operator's pass after the phase's end
for _ in $(seq 20); do
  [ -z "$(kubectl get br "$name" -n "$NS" -o jsonpath='{.status.verdict}')" ] || break
  sleep 3
done
kubectl get br "$name" -n "$NS" -o wide
kubectl get br "$name" -n "$NS" -o json | "$VENV/bin/python" "$ROOT/hack/k8s/run_summary.py"
