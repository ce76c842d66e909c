# Sourced by hack/local-k8s.sh: nodes 2..N of a cluster of several nodes on this one machine.
# Node 1 ("localhost") stays the host-network node the control plane lives on. Node K (2..N) is
#   network   namespace tpcc-node-K; its eth0 (a veth) on the host bridge $NODE_BRIDGE with node IP
#             10.245.0.K; pods on its own bridge lk8s0 (inside the namespace) in 10.244.K.0/24, gateway
#             10.244.K.1; the host routes 10.244.K.0/24 to 10.245.0.K and each node's default route is
#             the host (10.245.0.1), so every pod CIDR, the API server and CoreDNS (10.244.0.1) are reached
#   processes containerd, kubelet and kube-proxy (iptables in the namespace) run in the namespace
#             (nsenter --net only: they share the host's mount namespace, so the kubelet's volume mounts
#             are the ones runc sees), state, sockets, logs and pid files under $RUN/nodes/K
#   cgroups   the kubelet's cgroupRoot /lk8s-node-K: its pods' cgroups apart from other nodes'
#   identity  node name node-K, a client certificate for system:node:node-K (the Node authorizer);
#             the API server reaches the kubelet (logs, exec) by the node's Hostname address, so
#             /etc/hosts gets "10.245.0.K node-K" (tagged, removed by down)
NODE_BRIDGE=lk8sn0 # the nodes' link to the host
NODE_NET_GW=10.245.0.1
HOSTS_TAG="# hack/local-k8s.sh node"
NODES_MAX=50 # 10.244.K.0/24 stays inside 10.244.0.0/16 and 10.245.0.K a host address

node_ns() { echo "tpcc-node-$1"; }
node_ip() { echo "10.245.0.$1"; }
node_in() { # K command...: run in node K's network namespace only
  local k=$1; shift
  nsenter --net="/run/netns/$(node_ns "$k")" "$@"
}

forward_between_nodes() { # the host forwards between node 1's pods and the nodes (LK8S-FORWARD rejects the rest)
  local rule
  for rule in "-i $NODE_BRIDGE -o $NODE_BRIDGE" "-i $NODE_BRIDGE -o $BRIDGE" "-i $BRIDGE -o $NODE_BRIDGE"; do
    # shellcheck disable=SC2086
    iptables -w -C LK8S-FORWARD $rule -j ACCEPT 2>/dev/null || iptables -w -I LK8S-FORWARD 1 $rule -j ACCEPT
  done
  for rule in "-i $NODE_BRIDGE" "-o $NODE_BRIDGE"; do
    # shellcheck disable=SC2086
    iptables -w -C LK8S-FORWARD $rule -j REJECT 2>/dev/null || iptables -w -A LK8S-FORWARD $rule -j REJECT
  done
}

node_net_up() { # K: namespace, veth on the host bridge, routes, sysctls, the kubelet's name in /etc/hosts
  local k=$1 ns ip; ns=$(node_ns "$k"); ip=$(node_ip "$k")
  ip link show "$NODE_BRIDGE" >/dev/null 2>&1 || ip link add "$NODE_BRIDGE" type bridge
  ip addr replace "$NODE_NET_GW/24" dev "$NODE_BRIDGE"
  ip link set "$NODE_BRIDGE" up
  ip netns list | grep -qw "^$ns" || ip netns add "$ns"
  if ! ip link show "$NODE_BRIDGE-$k" >/dev/null 2>&1; then
    ip link add "$NODE_BRIDGE-$k" type veth peer name eth0 netns "$ns"
  fi
  ip link set "$NODE_BRIDGE-$k" master "$NODE_BRIDGE" up
  ip -n "$ns" link set lo up
  ip -n "$ns" addr replace "$ip/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" route replace default via "$NODE_NET_GW"
  ip route replace "10.244.$k.0/24" via "$ip"
  # per namespace: forwarding for the pods, and bridged pod -> ClusterIP -> pod seen by conntrack
  node_in "$k" sysctl -qw net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1
  forward_between_nodes
  grep -q "^$ip node-$k $HOSTS_TAG\$" /etc/hosts || echo "$ip node-$k $HOSTS_TAG" >>/etc/hosts
}

node_cgroup_root() { # K: /lk8s-node-K in every cgroup v1 hierarchy (the kubelet refuses a missing cgroupRoot)
  local h
  for h in /sys/fs/cgroup/*/; do
    mkdir -p "$h/lk8s-node-$1"
    if [ -f "$h/cpuset.cpus" ]; then
      cat "$h/cpuset.cpus" >"$h/lk8s-node-$1/cpuset.cpus"; cat "$h/cpuset.mems" >"$h/lk8s-node-$1/cpuset.mems"
    fi
  done
}

node_pki() { # K: a client certificate for system:node:node-K (group system:nodes) and its kubeconfig
  local d=$PKI/nodes/$1
  [ -f "$d/kubelet.kubeconfig" ] && return
  mkdir -p "$d"
  openssl req -newkey rsa:2048 -nodes -keyout "$d/kubelet.key" -out "$d/kubelet.csr" \
    -subj "/O=system:nodes/CN=system:node:node-$1" 2>/dev/null
  openssl x509 -req -in "$d/kubelet.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
    -out "$d/kubelet.crt" -days 3650 2>/dev/null
  kubeconfig "$d/kubelet.kubeconfig" "node-$1" "client-certificate: \"$d/kubelet.crt\", client-key: \"$d/kubelet.key\""
  chmod 600 "$d/kubelet.key" "$d/kubelet.kubeconfig"
}

# EXTRA_NODE_TAINT=KEY=VALUE:EFFECT keeps nodes 2..N for pods that tolerate it: the kubelet registers
# the node with it (no pod lands there before the taint), and a Node object that already existed gets
# it too. hack/test.sh keeps its extra nodes for the node-loss test this way.
node_taint_config() {
  [ -n "${EXTRA_NODE_TAINT:-}" ] || return 0
  local key=${EXTRA_NODE_TAINT%%=*} rest=${EXTRA_NODE_TAINT#*=}
  echo "registerWithTaints: [{key: \"$key\", value: \"${rest%%:*}\", effect: ${rest##*:}}]"
}

start_extra_node() { # K: containerd + kubelet + kube-proxy of node-K in its namespace
  local k=$1 t n=nodes/$1 d=$RUN/nodes/$1 ip; t=$(now); ip=$(node_ip "$k")
  mkdir -p "$d/cni/net.d" "$d/kubelet" "$d/pod-logs" "$LOGS/$n"
  node_net_up "$k"; node_cgroup_root "$k"; node_pki "$k"
  local sock=$d/containerd/containerd.sock
  containerd_config "$d/containerd" "$d/cni/net.d" | restart_if_changed "$n/containerd" "$d/containerd.toml"
  cni_conflist "10.244.$k.0/24" "10.244.$k.1" "$d/cni/ipam" >"$d/cni/net.d/10-localk8s.conflist"
  start "$n/containerd" nsenter --net="/run/netns/$(node_ns "$k")" containerd --config "$d/containerd.toml"
  wait_ready "$n/containerd" 30 ctr -a "$sock" version
  "$ROOT/hack/images.sh" pause # into every node's containerd
  { kubelet_config "$sock" "$ip" "$d/pod-logs"; echo "cgroupRoot: /lk8s-node-$k"; node_taint_config; } |
    restart_if_changed "$n/kubelet" "$d/kubelet-config.yaml"
  start "$n/kubelet" nsenter --net="/run/netns/$(node_ns "$k")" "$BIN/kubelet" --config="$d/kubelet-config.yaml" \
    --kubeconfig="$PKI/nodes/$k/kubelet.kubeconfig" --hostname-override="node-$k" --node-ip="$ip" \
    --root-dir="$d/kubelet" --cert-dir="$d/kubelet/pki"
  kube_proxy_config "node-$k" 10.244.0.0/16 "$ip" | restart_if_changed "$n/kube-proxy" "$d/kube-proxy.yaml"
  start "$n/kube-proxy" nsenter --net="/run/netns/$(node_ns "$k")" "$BIN/kube-proxy" --config="$d/kube-proxy.yaml"
  wait_ready "$n/kubelet" 60 node_in "$k" curl -sf http://127.0.0.1:20248/healthz
  wait_ready "$n/kubelet" 120 kubectl wait --for=condition=Ready "node/node-$k" --timeout=2s
  wait_ready "$n/kube-proxy" 30 node_in "$k" curl -sf http://127.0.0.1:20256/healthz
  [ -z "${EXTRA_NODE_TAINT:-}" ] || kubectl taint nodes "node-$k" "$EXTRA_NODE_TAINT" --overwrite >/dev/null
  log "node-$k: Ready in $(( $(now) - t ))s${EXTRA_NODE_TAINT:+, tainted $EXTRA_NODE_TAINT}"
}

start_nodes() { # node 1, then nodes 2..$NODES; the Node objects of a larger cluster before go
  start_node
  local k n
  for ((k = 2; k <= NODES; k++)); do start_extra_node "$k"; done
  for n in $(kubectl get nodes -o name | grep -E '^node/node-[0-9]+$' || true); do
    [ "${n#node/node-}" -le "$NODES" ] || kubectl delete "$n" >/dev/null
  done
}

stop_extra_node() { # K: its processes and containers, namespace, cgroups, /etc/hosts line (mounts: down)
  local k=$1 n=nodes/$1 sock=$RUN/nodes/$1/containerd/containerd.sock c p
  stop "$n/kube-proxy"; stop "$n/kubelet"
  if [ -S "$sock" ] && running "$n/containerd"; then
    for c in $(ctr -a "$sock" -n k8s.io tasks ls -q 2>/dev/null); do
      ctr -a "$sock" -n k8s.io tasks kill -s SIGKILL "$c" 2>/dev/null || true; done
    for c in $(ctr -a "$sock" -n k8s.io containers ls -q 2>/dev/null); do
      ctr -a "$sock" -n k8s.io tasks delete -f "$c" >/dev/null 2>&1 || true
      ctr -a "$sock" -n k8s.io containers delete "$c" >/dev/null 2>&1 || true; done
  fi
  stop "$n/containerd"
  for p in $(pgrep -f "containerd-shim.*-address $sock" || true); do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$RUN/nodes/$k/cni/ipam"
}

remove_extra_nodes() { # after down's unmounts: what no process holds any more
  local ns h k
  for ns in $(ip netns list | awk '/^tpcc-node-[0-9]+/ {print $1}'); do ip netns del "$ns"; done
  ip link del "$NODE_BRIDGE" 2>/dev/null || true # the veths went with their namespaces; the routes with it
  for h in /sys/fs/cgroup/*/lk8s-node-*; do [ -d "$h" ] && find "$h" -depth -type d -exec rmdir {} \; 2>/dev/null; done
  if grep -q "$HOSTS_TAG\$" /etc/hosts; then # rewritten in place: /etc/hosts may be a bind mount
    k=$(grep -v "$HOSTS_TAG\$" /etc/hosts); printf '%s\n' "$k" >/etc/hosts
  fi
}

stop_extra_nodes() {
  local d
  for d in "$RUN"/nodes/*/; do [ -d "$d" ] && stop_extra_node "$(basename "$d")"; done
  return 0
}

smoke_nodes() { # ns: every node Ready; a pod on node-2 reaches one on node-N by pod IP and Service name,
  # and a drain of node-N moves a Deployment's pod to another node
  local ns=$1 far=node-$NODES ready ip pod node d
  [ "$NODES" -gt 2 ] || far=$NODE_NAME
  ready=$(kubectl get nodes -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | grep -c True)
  [ "$ready" -ge "$NODES" ] || { kubectl get nodes; log "smoke: $ready nodes Ready, not $NODES"; return 1; }
  sed -e "s/NEAR_NODE/node-2/; s/FAR_NODE/$far/; s/MOVER_NODE/$far/" "$ROOT/hack/k8s/smoke/nodes.yaml" |
    kubectl -n "$ns" apply -f - >/dev/null
  for d in near far mover; do kubectl -n "$ns" rollout status "deploy/$d" --timeout=120s >/dev/null; done
  kubectl -n "$ns" get pods -l 'app in (near,far,mover)' -o wide
  ip=$(kubectl -n "$ns" get pod -l app=far -o jsonpath='{.items[0].status.podIP}')
  # each URL retried for 30 s: node-2's kube-proxy programs the new Service a moment after the
  # pod is Ready (on a fresh clone the first try was refused, twice; 20 s later it answered)
  kubectl -n "$ns" exec deploy/near -- python3 -c "import time, urllib.request as u
for url in ('http://$ip:8080/id', 'http://far/id'):
    deadline = time.time() + 30
    while True:
        try:
            print('node-2 -> $far:', url, '->', u.urlopen(url, timeout=10).read().decode().strip())
            break
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(1)"
  pod=$(kubectl -n "$ns" get pod -l app=mover -o jsonpath='{.items[0].metadata.name}')
  node=$(kubectl -n "$ns" get pod "$pod" -o jsonpath='{.spec.nodeName}')
  [ "$node" = "$far" ] || { log "smoke: mover on $node, not on $far"; return 1; }
  kubectl drain "$far" --ignore-daemonsets --delete-emptydir-data --timeout=120s >/dev/null
  kubectl -n "$ns" rollout status deploy/mover --timeout=120s >/dev/null
  node=$(kubectl -n "$ns" get pod -l app=mover --field-selector=status.phase=Running -o jsonpath='{.items[0].spec.nodeName}')
  kubectl uncordon "$far" >/dev/null
  [ -n "$node" ] && [ "$node" != "$far" ] || { log "smoke: after draining $far mover runs on '$node'"; return 1; }
  echo "drain $far: mover $pod moved to $node"
}
