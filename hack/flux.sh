#!/usr/bin/env bash
# flux.sh - Flux (source-controller + kustomize-controller) in the local cluster of hack/local-k8s.sh,
# built from the Go module proxy like the cluster's own binaries, and a git server on this machine
# for it to reconcile from. No registry, no internet but the Go module proxy.
#
#   build    both controllers from their Go modules (pinned below) into $TPCC_CACHE/flux/bin/VERSION
#            (Go caches shared with hack/local-k8s.sh in $TPCC_CACHE/go): minutes once, then seconds
#   images   local/flux-source-controller:VERSION, local/flux-kustomize-controller:VERSION (the static
#            binary, CA certificates, /tmp; hack/k8s/mkimage.py) imported into every node's containerd
#   git      a git server for the pods: `git http-backend` behind a small Python HTTP server
#            (hack/k8s/git_server.py) on http://10.244.0.1:$FLUX_GIT_PORT/NAME.git, a host process like
#            CoreDNS; pushing to a new NAME.git creates it; repositories under $WORK/k8s/flux-git
#   install  the modules' own config/crd, config/rbac (upstream's source-/kustomize- name prefixes) and
#            config/manager, in namespace flux-system; waits until both controllers are Ready
#   up       build images git install (idempotent: what is current is left alone)
#   stop     stop the git server (hack/test.sh does, with the cluster)
#   down     delete flux-system (the CRDs and cluster roles stay) and stop the git server
#   env      the export lines for eval (the git server's URL)
#
# usage: flux.sh [build|images|git|install|up|stop|down|env]...   (default: up)
# env: FLUX_SOURCE_VERSION (v1.7.3)  FLUX_KUSTOMIZE_VERSION (v1.7.3)  FLUX_GIT_PORT (18080)
# notification-controller is not built: the Go module proxy does not serve it here (403).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$ROOT/hack/k8s/env.sh"

# Flux 2.7's pair. Newer ones do not build here: v1.10 needs go 1.27; source-controller v1.8.5 and
# v1.9.6 need github.com/fluxcd/pkg/artifact v0.8.1 / v0.18.3, which this Go module proxy refuses (403)
FLUX_SOURCE_VERSION=${FLUX_SOURCE_VERSION:-v1.7.3}
FLUX_KUSTOMIZE_VERSION=${FLUX_KUSTOMIZE_VERSION:-v1.7.3}
FLUX_GIT_PORT=${FLUX_GIT_PORT:-18080}
FLUX_NS=flux-system
FLUX_CACHE=$TPCC_CACHE/flux
FLUX_RUN=$RUN/flux
GIT_ROOT=$RUN/flux-git
export GOCACHE=$TPCC_CACHE/go/build GOMODCACHE=$TPCC_CACHE/go/mod GOTOOLCHAIN=local GOFLAGS=-mod=mod
mkdir -p "$FLUX_CACHE" "$FLUX_RUN" "$LOGS"

now() { date +%s; }
version_of() { # controller -> its pinned version
  case $1 in source-controller) echo "$FLUX_SOURCE_VERSION" ;; kustomize-controller) echo "$FLUX_KUSTOMIZE_VERSION" ;; esac
}
bin_of() { echo "$FLUX_CACHE/bin/$(version_of "$1")/$1"; }
module_dir() { # controller -> its module's source in the Go module cache (downloaded once)
  local v; v=$(version_of "$1")
  go mod download -json "github.com/fluxcd/$1@$v" | python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])'
}

build_one() { # controller: a copy of the module's tree (its go.mod and go.sum: the versions it ships
  # with), its ./api replace pointed at the published api module of the same version, which the
  # module's zip leaves out; CGO off and -trimpath as its Dockerfile builds it
  local c=$1 v out src t; v=$(version_of "$c"); out=$(bin_of "$c")
  [ -x "$out" ] && return
  t=$(now)
  src=$FLUX_CACHE/src/$c@$v
  rm -rf "$src"; mkdir -p "$(dirname "$src")"
  cp -r "$(module_dir "$c")" "$src"; chmod -R u+w "$src"
  sed -i "s#^replace github.com/fluxcd/$c/api => ./api#replace github.com/fluxcd/$c/api => github.com/fluxcd/$c/api $v#" "$src/go.mod"
  mkdir -p "$(dirname "$out")"
  ( cd "$src" && CGO_ENABLED=0 go build -trimpath -gcflags=all=-dwarf=false -ldflags "-s -w" -o "$out.part" . ) \
    >"$LOGS/flux-build-$c.log" 2>&1 || { tail -30 "$LOGS/flux-build-$c.log" >&2; return 1; }
  mv "$out.part" "$out"
  log "flux build: $c $v in $(( $(now) - t ))s"
}

build() { build_one source-controller; build_one kustomize-controller; }

# --- images: the static binary on an almost empty root (CA bundle for HTTPS sources, passwd for
# the user 65534 the manifests run as, /tmp and /data for the emptyDirs), packed like
# hack/images.sh packs its images (hack/k8s/mkimage.py) and imported into every node's containerd
# (label tpcc.inputs: imported again only when the inputs change)
image_ref() { echo "local/flux-$1:$(version_of "$1")"; }
image_one() { # controller
  local c=$1 ref h tar r; ref=$(image_ref "$c"); tar=$FLUX_CACHE/images/$c-$(version_of "$c").tar
  h=$({ sha256sum <"$(bin_of "$c")"; cat "$ROOT/hack/k8s/mkimage.py" "$0"; } | sha256sum | cut -c1-16)
  mkdir -p "$FLUX_CACHE/images"
  if [ ! -f "$tar" ] || [ "$(cat "$tar.inputs" 2>/dev/null)" != "$h" ]; then
    r=$FLUX_RUN/rootfs-$c; rm -rf "$r"; mkdir -p "$r/usr/local/bin" "$r/etc/ssl/certs" "$r/tmp" "$r/data"
    command install -m 755 "$(bin_of "$c")" "$r/usr/local/bin/$c"
    cp /etc/ssl/certs/ca-certificates.crt "$r/etc/ssl/certs/"
    printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n' >"$r/etc/passwd"
    printf 'root:x:0:\nnogroup:x:65534:\n' >"$r/etc/group"
    chmod 1777 "$r/tmp"; chown 65534:65534 "$r/data"
    python3 "$ROOT/hack/k8s/mkimage.py" "$ref" "$r" "$tar" --label "tpcc.inputs=$h" \
      --entrypoint "[\"/usr/local/bin/$c\"]" --user 65534:65534 >/dev/null
    echo "$h" >"$tar.inputs"; rm -rf "$r"
    log "flux images: $ref packed"
  fi
  import_packed "flux images" "$tar" "$ref" "$h"
}
images() { build; image_one source-controller; image_one kustomize-controller; }

# --- git: a host process, like CoreDNS and the storage provisioner of hack/local-k8s.sh
running_git() {
  [ -f "$RUN/flux-git.pid" ] && tr '\0' ' ' <"/proc/$(cat "$RUN/flux-git.pid")/cmdline" 2>/dev/null | grep -q git_server.py
}
git_url() { echo "http://$GATEWAY_IP:$FLUX_GIT_PORT"; }
git_up() {
  mkdir -p "$GIT_ROOT"
  if ! running_git; then
    setsid python3 "$ROOT/hack/k8s/git_server.py" --root "$GIT_ROOT" --bind "$GATEWAY_IP" --port "$FLUX_GIT_PORT" \
      >"$LOGS/flux-git.log" 2>&1 </dev/null &
    echo $! >"$RUN/flux-git.pid"
    log "flux git: started the git server (pid $!) on $(git_url)"
  fi
  local i pid
  pid=$(cat "$RUN/flux-git.pid")
  for ((i = 0; i < 30; i++)); do
    curl -sf "$(git_url)/healthz" >/dev/null 2>&1 && return 0
    # kill -0, not running_git: for its first milliseconds the child is still the forked shell, whose
    # command line does not name git_server.py yet (CI failed on that once)
    kill -0 "$pid" 2>/dev/null || break
    sleep 1
  done
  log "flux git: the server does not answer on $(git_url); the last lines of $LOGS/flux-git.log:"
  tail -20 "$LOGS/flux-git.log" >&2
  return 1
}
git_down() {
  if running_git; then kill "$(cat "$RUN/flux-git.pid")" 2>/dev/null || true; log "flux git: stopped"; fi
  rm -f "$RUN/flux-git.pid"
}

# --- install: the modules' own config/ (crd, rbac, manager) under one kustomization that puts
# them in flux-system, points them at the local images and lowers their CPU requests (the node's
# 2 CPUs of requests are what limits the e2e stage); kustomize-controller keeps upstream's
# cluster-admin binding (cluster-reconciler), as `flux install` gives it
install_flux() {
  local d=$FLUX_RUN/install c
  rm -rf "$d"; mkdir -p "$d"
  for c in source-controller kustomize-controller; do
    cp -r "$(module_dir "$c")/config" "$d/$c"; chmod -R u+w "$d/$c"
  done
  cat >"$d/kustomization.yaml" <<EOF
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: $FLUX_NS
resources:
- namespace.yaml
- source-controller/crd
- source-controller/rbac
- source-controller/manager
- kustomize-controller/crd
- kustomize-controller/rbac
- kustomize-controller/manager
images:
- {name: fluxcd/source-controller, newName: local/flux-source-controller, newTag: "$FLUX_SOURCE_VERSION"}
- {name: fluxcd/kustomize-controller, newName: local/flux-kustomize-controller, newTag: "$FLUX_KUSTOMIZE_VERSION"}
patches:
- target: {kind: Deployment}
  patch: |-
    - {op: replace, path: /spec/template/spec/containers/0/imagePullPolicy, value: Never}
    - {op: replace, path: /spec/template/spec/containers/0/resources/requests/cpu, value: 10m}
EOF
  printf 'apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n' "$FLUX_NS" >"$d/namespace.yaml"
  kubectl kustomize "$d" >"$FLUX_RUN/install.yaml"
  # server-side: the CRDs are too big for client-side apply's last-applied annotation
  kubectl apply --server-side --force-conflicts -f "$FLUX_RUN/install.yaml" >/dev/null
  kubectl wait --for=condition=Established --timeout=60s \
    crd/gitrepositories.source.toolkit.fluxcd.io crd/kustomizations.kustomize.toolkit.fluxcd.io >/dev/null
  kubectl -n "$FLUX_NS" rollout status deploy/source-controller --timeout=180s
  kubectl -n "$FLUX_NS" rollout status deploy/kustomize-controller --timeout=180s
  log "flux install: source-controller $FLUX_SOURCE_VERSION, kustomize-controller $FLUX_KUSTOMIZE_VERSION ready in $FLUX_NS"
}
down() {
  kubectl delete namespace "$FLUX_NS" --ignore-not-found --wait=false >/dev/null
  git_down
}

print_env() { echo "export TPCC_FLUX_GIT=$(git_url)"; }

timed() { local t; t=$(now); "$@"; log "flux $1: $(( $(now) - t ))s"; }

[ $# -gt 0 ] || set -- up
for step in "$@"; do
  case $step in
    build | images | down) timed "$step" ;;
    install) timed install_flux ;;
    git) timed git_up ;;
    stop) git_down ;;
    up) t0=$(now); for s in images git_up install_flux; do timed $s; done; log "flux up: $(( $(now) - t0 ))s" ;;
    env) print_env ;;
    *) echo "usage: $0 [build|images|git|install|up|stop|down|env]..." >&2; exit 2 ;;
  esac
done
