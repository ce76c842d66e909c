#!/usr/bin/env bash
# The four studies' experiments (crds/samples/papers/<study>/), as docs/papers.md reports them:
# brings up the local cluster and the operator (hack/demo.sh --up), has the API server dry-run
# every manifest as written, runs those this cluster can run and prints, per manifest, the
# figure it reproduces, the paper's number and ours, and per value the study prints for it
# (bench.tpcc.dev/paper-values) the paper's, ours at that point and the ratio (one JSON line
# each; exit 1 if one failed).
#
#   hack/papers.sh [--scaled] [--only-dry-run] [STUDY ...]    studies: vldb2019 sharded voltdb fdb-ycsb
#
# --scaled: each run shrunk to a minute or two (30 s measured, 1-2 warehouses, a sweep's shape axes
# to one small deployment: 1 host, k=0, at most 2 sites, no instance sizes or shard counts; SecantusDB in place
# of mongod; what was changed is printed with it): what CI runs. Without it the manifests run as
# written, which takes hours and a cluster the size of the papers' (mongod images included).
# env: TPCC_PAPERS_NAMESPACE (tpcc-papers)  TPCC_PAPERS_TIMEOUT (per manifest, 3600 s)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
NS=${TPCC_PAPERS_NAMESPACE:-tpcc-papers}
t0=$(date +%s)
TPCC_DEMO_NAMESPACE=$NS "$ROOT/hack/demo.sh" --up
eval "$("$ROOT/hack/local-k8s.sh" env)"
log "papers: cluster and operator up at +$(( $(date +%s) - t0 )) s"
rc=0
"$VENV/bin/python" "$ROOT/hack/k8s/papers.py" --namespace "$NS" --timeout "${TPCC_PAPERS_TIMEOUT:-3600}" "$@" || rc=$?
log "papers: done in $(( $(date +%s) - t0 )) s"
exit $rc
