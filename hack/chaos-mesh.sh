#!/usr/bin/env bash
# chaos-mesh.sh - Chaos Mesh's controller-manager in the local cluster of hack/local-k8s.sh, built
# from the Go module proxy like hack/flux.sh builds Flux: what a fault with `action: chaos` needs
# to run here. Only the controller-manager: PodChaos's pod-kill and pod-failure go through the API
# server; container-kill and the kinds that act inside a pod (NetworkChaos, StressChaos, IOChaos,
# ...) also need chaos-daemon, which is not installed: their records say "cannot find daemonIP on
# node NODE", and deleting them works.
#
#   build    chaos-controller-manager from its Go module (pinned below) into
#            $TPCC_CACHE/chaos-mesh/bin/VERSION (Go caches shared with hack/local-k8s.sh and
#            hack/flux.sh in $TPCC_CACHE/go): minutes once, then seconds
#   images   local/chaos-controller-manager:VERSION (the static binary, CA certificates, /tmp;
#            hack/k8s/mkimage.py) imported into every node's containerd
#   crds     the module's CRDs (config/crd/bases, all kinds: the controller-manager watches every
#            one), alone: creating and deleting experiments needs no controller
#   install  namespace chaos-mesh: the controller-manager's ServiceAccount, RBAC, Service, webhook
#            certificate and Deployment, and its admission webhooks, as the module's own helm chart
#            (helm/chaos-mesh) renders them; waits until it is Ready
#   up       images crds install (idempotent: what is current is left alone)
#   down     delete namespace chaos-mesh, the webhook configurations and cluster roles (the CRDs
#            stay, as hack/flux.sh leaves Flux's)
#
# usage: chaos-mesh.sh [build|images|crds|install|up|down]...   (default: up)
# env: CHAOS_MESH_VERSION, CHAOS_MESH_API_VERSION (below). The cluster is the one of this clone's
# hack/local-k8s.sh; TPCC_WORK=OTHER_CLONE/.work for another clone's.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$ROOT/hack/k8s/env.sh"

# The Go module proxy serves only pseudo-versions of chaos-mesh (master after v2.8.4); this is the
# newest. Its go.mod replaces the api module with ./api, which the module's zip leaves out, and the
# proxy serves the api module at this one pseudo-version only
CHAOS_MESH_VERSION=${CHAOS_MESH_VERSION:-v0.9.1-0.20260902003049-47411975a8cb}
CHAOS_MESH_API_VERSION=${CHAOS_MESH_API_VERSION:-v0.0.0-20260906172039-d70b66ad97ac}
CM_NS=chaos-mesh
CM_CACHE=$TPCC_CACHE/chaos-mesh
CM_RUN=$RUN/chaos-mesh
CM_BIN=$CM_CACHE/bin/$CHAOS_MESH_VERSION/chaos-controller-manager
CM_IMAGE=local/chaos-controller-manager:$CHAOS_MESH_VERSION
export GOCACHE=$TPCC_CACHE/go/build GOMODCACHE=$TPCC_CACHE/go/mod GOTOOLCHAIN=local GOFLAGS=-mod=mod
mkdir -p "$CM_CACHE" "$CM_RUN" "$LOGS"

now() { date +%s; }
module_dir() { # the module's source in the Go module cache (downloaded once)
  go mod download -json "github.com/chaos-mesh/chaos-mesh@$CHAOS_MESH_VERSION" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])'
}

# --- build: a copy of the module's tree (its go.mod and go.sum: the versions it ships with), its
# ./api replace pointed at the published api module; CGO off as its Makefile builds it, the
# version stamped as its hack/version.sh does, and the time zone database embedded (timetzdata:
# the image has no /usr/share/zoneinfo; Schedules take a time zone)
build() {
  local src t stamp; t=$(now)
  [ -x "$CM_BIN" ] && return
  src=$CM_CACHE/src/chaos-mesh@$CHAOS_MESH_VERSION
  rm -rf "$src"; mkdir -p "$(dirname "$src")" "$(dirname "$CM_BIN")"
  cp -r "$(module_dir)" "$src"; chmod -R u+w "$src"
  ( cd "$src" && go mod edit -replace \
    "github.com/chaos-mesh/chaos-mesh/api=github.com/chaos-mesh/chaos-mesh/api@$CHAOS_MESH_API_VERSION" )
  stamp=github.com/chaos-mesh/chaos-mesh/pkg/version
  ( cd "$src" && CGO_ENABLED=0 go build -trimpath -tags timetzdata -gcflags=all=-dwarf=false \
    -ldflags "-s -w -X $stamp.gitVersion=$CHAOS_MESH_VERSION -X $stamp.gitCommit=${CHAOS_MESH_VERSION##*-}" \
    -o "$CM_BIN.part" ./cmd/chaos-controller-manager ) \
    >"$LOGS/chaos-mesh-build.log" 2>&1 || { tail -30 "$LOGS/chaos-mesh-build.log" >&2; return 1; }
  mv "$CM_BIN.part" "$CM_BIN"
  log "chaos-mesh build: chaos-controller-manager $CHAOS_MESH_VERSION in $(( $(now) - t ))s"
}

# --- images: the static binary on an almost empty root (CA bundle for the cloud kinds' APIs,
# passwd for the user 65534 it runs as, /tmp), packed like hack/images.sh packs its images and
# imported into each node's containerd (label tpcc.inputs: imported again only when the inputs
# change: hack/k8s/env.sh's import_packed)
images() {
  local h tar r
  build
  tar=$CM_CACHE/images/chaos-controller-manager-$CHAOS_MESH_VERSION.tar
  h=$({ sha256sum <"$CM_BIN"; cat "$ROOT/hack/k8s/mkimage.py" "$0"; } | sha256sum | cut -c1-16)
  mkdir -p "$CM_CACHE/images"
  if [ ! -f "$tar" ] || [ "$(cat "$tar.inputs" 2>/dev/null)" != "$h" ]; then
    r=$CM_CACHE/rootfs; rm -rf "$r"; mkdir -p "$r/usr/local/bin" "$r/etc/ssl/certs" "$r/tmp"
    command install -m 755 "$CM_BIN" "$r/usr/local/bin/chaos-controller-manager"
    cp /etc/ssl/certs/ca-certificates.crt "$r/etc/ssl/certs/"
    printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n' >"$r/etc/passwd"
    printf 'root:x:0:\nnogroup:x:65534:\n' >"$r/etc/group"
    chmod 1777 "$r/tmp"
    python3 "$ROOT/hack/k8s/mkimage.py" "$CM_IMAGE" "$r" "$tar" --label "tpcc.inputs=$h" \
      --entrypoint '["/usr/local/bin/chaos-controller-manager"]' --user 65534:65534 >/dev/null
    echo "$h" >"$tar.inputs"; rm -rf "$r"
    log "chaos-mesh images: $CM_IMAGE packed"
  fi
  import_packed "chaos-mesh images" "$tar" "$CM_IMAGE" "$h"
}

# --- crds: server-side (the CRDs are too big for client-side apply's last-applied annotation)
crds() {
  local d; d=$(module_dir)/config/crd/bases
  kubectl apply --server-side --force-conflicts -f "$d" >/dev/null
  kubectl wait --for=condition=Established --timeout=60s -f "$d" >/dev/null
  log "chaos-mesh crds: $(ls "$d" | wc -l) CRDs of $CHAOS_MESH_VERSION established"
}

# --- install: the chart's controller-manager objects only (--show-only; no chaos-daemon, dashboard,
# DNS server), one replica without leader election, the local image, small CPU requests (the
# node's 2 CPUs of requests are what limits the e2e stage) and limits. Webhooks as upstream: the
# chart signs the webhook server's certificate with a CA it generates and puts that CA in the
# webhook configurations (failurePolicy Fail: experiments are refused while it is down). The
# render is kept while its inputs stay the same: a new render has new certificates and a new
# `rollme` annotation, which would restart the pod on every install. pod-failure swaps the
# containers' images for the local pause image (hack/images.sh pause) instead of gcr.io's.
values() {
  cat <<EOF
controllerManager:
  image: {registry: docker.io, repository: local/chaos-controller-manager, tag: "$CHAOS_MESH_VERSION"}
  imagePullPolicy: Never
  leaderElection: {enabled: false}
  chaosdSecurityMode: false
  podChaos: {podFailure: {pauseImage: "local/pause:1"}}
  resources:
    requests: {cpu: 10m, memory: 128Mi}
    limits: {cpu: "1", memory: 512Mi}
chaosDaemon: {mtls: {enabled: false}}
dashboard: {create: false}
enableProfiling: false
EOF
}
render() { # -> $CM_RUN/install.yaml, rendered again only when the chart or the values change
  local chart h f shows=()
  chart=$(module_dir)/helm/chaos-mesh
  h=$({ values; echo "$CHAOS_MESH_VERSION"; } | sha256sum | cut -c1-16)
  [ -f "$CM_RUN/install.yaml" ] && [ "$(cat "$CM_RUN/install.inputs" 2>/dev/null)" = "$h" ] && return
  values >"$CM_RUN/values.yaml"
  for f in controller-manager-rbac controller-manager-service controller-manager-deployment \
    secrets-configuration mutating-admission-webhooks validating-admission-webhooks; do
    shows+=(--show-only "templates/$f.yaml")
  done
  helm template chaos-mesh "$chart" -n "$CM_NS" -f "$CM_RUN/values.yaml" "${shows[@]}" >"$CM_RUN/install.yaml"
  echo "$h" >"$CM_RUN/install.inputs"
}
install_cm() {
  render
  kubectl create namespace "$CM_NS" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  kubectl apply -f "$CM_RUN/install.yaml" >/dev/null
  kubectl -n "$CM_NS" rollout status deploy/chaos-controller-manager --timeout=180s
  log "chaos-mesh install: chaos-controller-manager $CHAOS_MESH_VERSION ready in $CM_NS"
}
down() {
  kubectl delete namespace "$CM_NS" --ignore-not-found --wait=false >/dev/null
  kubectl delete mutatingwebhookconfiguration,validatingwebhookconfiguration,clusterrole,clusterrolebinding \
    -l app.kubernetes.io/instance=chaos-mesh --ignore-not-found >/dev/null
  rm -f "$CM_RUN/install.yaml" "$CM_RUN/install.inputs"
}

timed() { local t; t=$(now); "$@"; log "chaos-mesh $1: $(( $(now) - t ))s"; }

[ $# -gt 0 ] || set -- up
for step in "$@"; do
  case $step in
    build | images | crds | down) timed "$step" ;;
    install) timed install_cm ;;
    up) t0=$(now); for s in images crds install_cm; do timed $s; done; log "chaos-mesh up: $(( $(now) - t0 ))s" ;;
    *) echo "usage: $0 [build|images|crds|install|up|down]..." >&2; exit 2 ;;
  esac
done
