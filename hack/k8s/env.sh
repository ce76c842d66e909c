# Sourced (after hack/lib.sh) by hack/local-k8s.sh, hack/images.sh and the scripts that install into
# the cluster: where the local cluster lives.
K8S_CACHE=$TPCC_CACHE/k8s              # binaries, image tarballs, debootstrap rootfs (reused by CI)
BIN=$K8S_CACHE/bin
IMAGES=$K8S_CACHE/images
RUN=$WORK/k8s                          # runtime state of this clone's cluster
LOGS=$RUN/logs
PKI=$RUN/pki
CSOCK=$RUN/containerd/containerd.sock
BRIDGE=lk8s0
POD_CIDR=10.244.0.0/24
GATEWAY_IP=10.244.0.1                  # on $BRIDGE: pods' default gateway, API server, CoreDNS
SERVICE_CIDR=10.96.0.0/16
APISERVER_PORT=${APISERVER_PORT:-16443}
export KUBECONFIG=$PKI/admin.kubeconfig
export PATH=$BIN:$PATH
mkdir -p "$BIN" "$IMAGES" "$LOGS"
node_sockets() { # the containerd of every node of the cluster: node 1's, then nodes 2..N's (hack/k8s/nodes.sh)
  echo "$CSOCK"
  local s; for s in "$RUN"/nodes/*/containerd/containerd.sock; do [ -S "$s" ] && echo "$s"; done; return 0
}
import_packed() { # who tar ref inputs-hash: a packed image into every node's containerd that lacks this
  # version (the label tpcc.inputs says which); the scheduler may put its pods on any node
  local who=$1 tar=$2 ref=$3 h=$4 sock t
  if ! ctr -a "$CSOCK" version >/dev/null 2>&1; then log "$who: containerd ($CSOCK) is not running"; return 1; fi
  for sock in $(node_sockets); do
    ctr -a "$sock" -n k8s.io images ls "name==docker.io/$ref" 2>/dev/null | grep -q "tpcc.inputs=$h" && continue
    t=$(date +%s)
    ctr -a "$sock" -n k8s.io images import "$tar" >/dev/null
    ctr -a "$sock" -n k8s.io images label "docker.io/$ref" "tpcc.inputs=$h" >/dev/null
    log "$who: imported $ref ($h) into ${sock#"$RUN"/} in $(( $(date +%s) - t ))s"
  done
}
