#!/usr/bin/env bash
# The local cluster's real node: containerd + runc with bridge CNI, a kubelet and kube-proxy on this
# machine, so pods run for real, and kube-router's NetworkPolicy controller alone (iptables and ipsets; no routing,
# no service proxy), so NetworkPolicies are enforced (CAPSTAN_NETWORK_POLICY=0 leaves it out).
# `cluster.sh up` calls it (unless CAPSTAN_NODE=kwok); by hand:
#   cluster.sh up     a control plane whose apiserver advertises the node IP (see cluster.sh)
#   node.sh up        install what is missing (Debian), start containerd, kubelet, kube-proxy and kube-router;
#                     wait for Ready; then addons.sh up (CoreDNS, local-path storage; CAPSTAN_ADDONS=0 skips it)
#   node.sh down      drain and stop them by PID, unmount, remove the bridge, iptables rules, cgroups and
#                     node state, restore the sysctls they changed
#   node.sh status    print what runs
#   node.sh import TAR...   import docker-save tarballs (e2e/images/*/build.sh) for pods to use
#   node.sh ctr ARGS...     ctr against the node's containerd (e.g. `ctr -n k8s.io images ls`)
# Reads the control plane's state dir (CAPSTAN_CLUSTER_DIR, default <repo>/.cluster) and CAPSTAN_API_PORT.
# Everything the node writes lives in <state>/node: containerd's own config, root, state and socket (a
# system containerd is never touched), CNI config and IPAM data, kubelet dir, pod logs. One real node per
# host: the bridge, the node-IP interface, kube-proxy's and kube-router's iptables chains and ipsets, and kubelet
# ports are host-wide.
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
node="$state/node"
sock="$node/containerd/containerd.sock"
NODE_NAME="${CAPSTAN_NODE_NAME:-capstan-node-0}"
NODE_IF=capstan0            # interface carrying the node IP (<state>/node-ip, written by cluster.sh)
BRIDGE=capstan-cni0         # the CNI bridge (cni0 elsewhere)
NET_NAME=capstan-pods       # CNI network name; the bridge plugin tags its iptables rules with it
POD_SUBNET=10.244.0.0/24
CLUSTER_CIDR=10.244.0.0/16
SERVICE_CIDR=10.96.0.0/16
CGROUP_ROOT=capstan-node    # kubelet cgroupRoot: pod cgroups live under /sys/fs/cgroup/<controller>/capstan-node
PAUSE_IMAGE=registry.k8s.io/pause:3.10
# NetworkPolicy enforcement (kube-router's firewall controller): on unless CAPSTAN_NETWORK_POLICY=0.
NETWORK_POLICY="${CAPSTAN_NETWORK_POLICY:-1}"
case "$NETWORK_POLICY" in 0 | 1) ;; *) echo "CAPSTAN_NETWORK_POLICY must be 0 or 1, not $NETWORK_POLICY" >&2; exit 2 ;; esac
kube_router="$cache/kube-router-$KUBE_ROUTER_VERSION/bin/kube-router"
KUBE_ROUTER_HEALTH_PORT=20244
# Host sysctls the kubelet, the bridge plugin and setup_host set; saved on up, restored on down. Bridged
# pod-to-pod traffic must pass iptables (br_netfilter) for kube-proxy's replies and kube-router's policies.
SYSCTLS=(vm.overcommit_memory kernel.panic kernel.panic_on_oops net.ipv4.ip_forward net.bridge.bridge-nf-call-iptables)
# Host paths used whatever the config (kubelet's log links and device-plugin socket, containerd's shim sockets,
# libcni's result cache, libmount's utab); removed on down if up made them (deepest first).
HOST_DIRS=(/var/log/containers /var/lib/kubelet/device-plugins /var/lib/kubelet /run/containerd/s /run/containerd
  /var/lib/cni/results /var/lib/cni /run/mount)

log() { printf '[node] %s\n' "$*" >&2; }
ctr_() { timeout 10 ctr --address "$sock" "$@"; } # a hung containerd must not hang down
api_ready() { kubectl_ get --raw /readyz >/dev/null 2>&1; }
node_ready() {
  [ "$(kubectl_ get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]
}
# The node-IP interface carries the state dir as its alias: down removes host-wide pieces only if they are its own.
owner() { cat "/sys/class/net/$NODE_IF/ifalias" 2>/dev/null || true; }
# A node whose state dir is gone (a CI clone deleted after a killed run), or whose processes all died with the
# session or machine that ran them (its interface and alias outlive it), cannot be stopped from there: stop it
# from here, as that state dir (its processes and mounts are found by path), and clear the ownership.
# A node that still runs is another checkout's cluster: it is left alone, and `up` refuses.
node_runs_at() { # state dir: any of its node's processes is alive (PID file and command line agree)
  local name pid
  for name in containerd kubelet kube-proxy kube-router; do
    pid="$(cat "$1/pids/$name" 2>/dev/null)" || continue
    [ -n "$pid" ] && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$name" && return 0
  done
  return 1
}
reap_orphan() { # owner
  local other="$1"
  [ -n "$other" ] && [ "$other" != "$state" ] || return 0
  if [ ! -d "$other" ]; then
    log "a real node of $other (state dir gone) was left on this host: stopping it"
    mkdir -p "$other/node"
    CAPSTAN_CLUSTER_DIR="$other" CAPSTAN_ADDONS=0 bash "$0" down || true
    rm -rf "$other"
  elif ! node_runs_at "$other"; then
    log "a real node of $other whose processes are all gone was left on this host: clearing it"
    CAPSTAN_CLUSTER_DIR="$other" CAPSTAN_ADDONS=0 bash "$0" down || true
  else
    return 0
  fi
  [ "$(owner)" != "$other" ] || { ip link del "$BRIDGE" 2>/dev/null || true; ip link del "$NODE_IF" 2>/dev/null || true; }
}


start() { # name command... (as cluster.sh: own session, log in <state>/logs, PID in <state>/pids)
  local name="$1"; shift
  setsid "$@" >"$state/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$state/pids/$name"
}

stop() { # name
  [ -f "$state/pids/$1" ] || return 0
  local pid; pid="$(cat "$state/pids/$1")"
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$state/pids/$1"
}

install_packages() {
  local need=()
  command -v containerd >/dev/null || need+=(containerd)
  command -v runc >/dev/null || need+=(runc)
  [ -x /usr/lib/cni/bridge ] || need+=(containernetworking-plugins)
  command -v iptables >/dev/null || need+=(iptables)
  command -v conntrack >/dev/null || need+=(conntrack)
  [ "$NETWORK_POLICY" = 0 ] || command -v ipset >/dev/null || need+=(ipset)
  command -v gcc >/dev/null || need+=(gcc)
  [ -n "$(find /usr/lib -name libc.a -print -quit)" ] || need+=(libc6-dev)
  [ ${#need[@]} -eq 0 ] && return 0
  log "installing ${need[*]} (Debian)"
  apt-get update >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${need[@]}" >/dev/null
}

cert() { # name CN O SANs -- client+server cert signed by the cluster CA (as cluster.sh's cert())
  local name="$1" org="$3" sans="$4" ext="$node/pki/$1.ext" subj="/CN=$2"
  [ -n "$org" ] && subj="/O=$org$subj"
  printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n' >"$ext"
  if [ -n "$sans" ]; then printf 'extendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=%s\n' "$sans" >>"$ext"
  else echo "extendedKeyUsage=clientAuth" >>"$ext"; fi
  openssl req -new -newkey rsa:2048 -nodes -keyout "$node/pki/$name.key" -subj "$subj" -out "$node/pki/$name.csr" 2>/dev/null
  openssl x509 -req -in "$node/pki/$name.csr" -CA "$state/pki/ca.crt" -CAkey "$state/pki/ca.key" \
    -CAserial "$node/pki/ca.srl" -CAcreateserial -days 365 -sha256 -extfile "$ext" -out "$node/pki/$name.crt" 2>/dev/null
}

kubeconfig() { # file name
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: capstan-local
  cluster: { server: "https://127.0.0.1:$API_PORT", certificate-authority: "$state/pki/ca.crt" }
users:
- name: $2
  user: { client-certificate: "$node/pki/$2.crt", client-key: "$node/pki/$2.key" }
contexts:
- name: capstan-local
  context: { cluster: capstan-local, user: $2 }
current-context: capstan-local
EOF
}

write_configs() {
  cat >"$node/containerd/config.toml" <<EOF
version = 2
root = "$node/containerd/root"
state = "$node/containerd/state"
[grpc]
  address = "$sock"
[plugins."io.containerd.internal.v1.opt"]
  path = "$node/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$node/containerd/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$node/cni/net.d"
EOF
  cat >"$node/cni/net.d/10-$NET_NAME.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "$NET_NAME",
  "plugins": [
    { "type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": true, "hairpinMode": true,
      "ipam": { "type": "host-local", "ranges": [[{ "subnet": "$POD_SUBNET" }]], "routes": [{ "dst": "0.0.0.0/0" }],
                "dataDir": "$node/cni/ipam" } },
    { "type": "portmap", "capabilities": { "portMappings": true } }
  ]
}
EOF
  cat >"$node/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
containerRuntimeEndpoint: unix://$sock
cgroupDriver: cgroupfs
cgroupRoot: /$CGROUP_ROOT
failSwapOn: false
address: $NODE_IP
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
tlsCertFile: $node/pki/kubelet.crt
tlsPrivateKeyFile: $node/pki/kubelet.key
authentication:
  anonymous: { enabled: false }
  webhook: { enabled: true }
  x509: { clientCAFile: $state/pki/ca.crt }
authorization: { mode: Webhook }
clusterDNS: [10.96.0.10]
clusterDomain: cluster.local
podLogsDir: $node/pod-logs
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: { memory.available: 50Mi, nodefs.available: 1%, nodefs.inodesFree: 1%, imagefs.available: 1% }
makeIPTablesUtilChains: false # no KUBE-FIREWALL/canary chains: kube-proxy --cleanup would leave them behind
EOF
  cat >"$node/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: { kubeconfig: $node/kube-proxy.kubeconfig }
hostnameOverride: $NODE_NAME
mode: iptables
clusterCIDR: $CLUSTER_CIDR
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
iptables: { localhostNodePorts: false }
conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s }
EOF
}

setup_host() {
  # The node IP on an interface of its own: apiserver -> kubelet and pods -> `kubernetes` Service reach it.
  # A bridge without ports stands in for a dummy interface (kernels without the dummy driver have bridges).
  # Service and cluster CIDRs route there too, so traffic to a ClusterIP or pod IP that no rule rewrote is
  # dropped on it, never sent out of the machine.
  ip link add "$NODE_IF" type bridge
  ip link set "$NODE_IF" alias "$state" up
  ip addr add "$NODE_IP/32" dev "$NODE_IF"
  ip route add "$SERVICE_CIDR" dev "$NODE_IF"
  ip route add "$CLUSTER_CIDR" dev "$NODE_IF"
  [ -e /proc/sys/net/bridge/bridge-nf-call-iptables ] || modprobe br_netfilter 2>/dev/null ||
    die "no br_netfilter (net.bridge.bridge-nf-call-iptables): pods on one bridge would bypass iptables"
  for s in "${SYSCTLS[@]}"; do echo "$s=$(sysctl -n "$s")"; done >"$node/sysctl.orig"
  sysctl -qw net.bridge.bridge-nf-call-iptables=1
  for d in "${HOST_DIRS[@]}"; do [ -e "$d" ] || echo "$d"; done >"$node/host-dirs.created"
  # cgroupRoot must exist in every hierarchy; cpuset children start empty, so copy the parent's sets.
  for c in /sys/fs/cgroup/*/; do mkdir -p "$c$CGROUP_ROOT"; done
  for f in cpuset.cpus cpuset.mems; do cat "/sys/fs/cgroup/cpuset/$f" >"/sys/fs/cgroup/cpuset/$CGROUP_ROOT/$f"; done
}

cmd_up() {
  [ "$(id -u)" = 0 ] || die "run as root"
  if [ ! -f "$state/kubeconfig" ] || ! api_ready; then die "no control plane at $state: run cluster.sh up first"; fi
  [ -f "$state/node-ip" ] || die "start the control plane with CAPSTAN_NODE=real (its apiserver must advertise the node IP)"
  if pid_alive containerd && pid_alive kubelet && pid_alive kube-proxy && node_ready &&
    { [ "$NETWORK_POLICY" = 0 ] || pid_alive kube-router; }; then
    log "already running"
    [ "${CAPSTAN_ADDONS:-1}" = 0 ] || "$here/addons.sh" up
    return 0
  fi
  local other; other="$(owner)"
  reap_orphan "$other" && other="$(owner)"
  [ -z "$other" ] || [ "$other" = "$state" ] || die "a real node of $other runs on this host: node.sh down there first"
  if [ -d "$node" ] || [ -n "$other" ]; then log "cleaning up a node left by an earlier run"; cmd_down; fi
  install_packages
  "$here/build.sh" kubernetes >/dev/null
  [ "$NETWORK_POLICY" = 0 ] || "$here/build.sh" kube-router >/dev/null
  NODE_IP="$(cat "$state/node-ip")"
  mkdir -p "$node"/{pki,containerd,cni/net.d,kubelet,pod-logs,images} "$state/pids" "$state/logs"
  setup_host
  cert kubelet "system:node:$NODE_NAME" system:nodes "DNS:$NODE_NAME,IP:$NODE_IP,IP:127.0.0.1"
  cert kube-proxy system:kube-proxy "" ""
  cert kube-router capstan:kube-router "" ""
  kubeconfig "$node/kubelet.kubeconfig" kubelet
  kubeconfig "$node/kube-proxy.kubeconfig" kube-proxy
  kubeconfig "$node/kube-router.kubeconfig" kube-router
  write_configs
  echo "$NETWORK_POLICY" >"$node/network-policy" # what `status` expects to run

  log "starting containerd $(containerd --version | awk '{print $3}') (socket $sock)"
  start containerd containerd --config "$node/containerd/config.toml"
  wait_for containerd 30 containerd_ready
  ctr_ -n k8s.io images import "$("$repo/e2e/images/pause/build.sh" "$node/images")" >/dev/null
  log "imported $PAUSE_IMAGE"

  log "starting kubelet and kube-proxy $KUBERNETES_VERSION (node $NODE_NAME, $NODE_IP)"
  start kubelet "$k8s_bin/kubelet" --config "$node/kubelet.yaml" --kubeconfig "$node/kubelet.kubeconfig" \
    --root-dir "$node/kubelet" --cert-dir "$node/kubelet/pki" --node-ip "$NODE_IP" --hostname-override "$NODE_NAME"
  start kube-proxy "$k8s_bin/kube-proxy" --config "$node/kube-proxy.yaml"
  wait_for "node $NODE_NAME" 120 node_ready
  [ "$NETWORK_POLICY" = 0 ] || start_kube_router
  log "ready: node $NODE_NAME"
  [ "${CAPSTAN_ADDONS:-1}" = 0 ] || "$here/addons.sh" up # CoreDNS and local-path storage; CAPSTAN_ADDONS=0 skips
}

# kube-router reads pods, namespaces and NetworkPolicies (and caches services, endpoints and nodes, which its
# informers start whatever runs); it finds the node by --hostname-override and takes its InternalIP (the node IP).
start_kube_router() {
  kubectl_ apply -f - >/dev/null <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: { name: "capstan:kube-router" }
rules:
- apiGroups: [""]
  resources: [pods, namespaces, nodes, services, endpoints]
  verbs: [get, list, watch]
- apiGroups: [networking.k8s.io]
  resources: [networkpolicies]
  verbs: [get, list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: "capstan:kube-router" }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "capstan:kube-router" }
subjects: [{ apiGroup: rbac.authorization.k8s.io, kind: User, name: "capstan:kube-router" }]
EOF
  log "starting kube-router $KUBE_ROUTER_VERSION (NetworkPolicy only)"
  start kube-router "$kube_router" --kubeconfig "$node/kube-router.kubeconfig" --hostname-override "$NODE_NAME" \
    --run-firewall=true --run-router=false --run-service-proxy=false --enable-cni=false \
    --service-cluster-ip-range "$SERVICE_CIDR" --health-port "$KUBE_ROUTER_HEALTH_PORT" --metrics-port 0
  wait_for kube-router 60 kube_router_ready
}
kube_router_ready() {
  pid_alive kube-router && iptables -S KUBE-ROUTER-FORWARD >/dev/null 2>&1 &&
    curl -fsS --max-time 2 "http://127.0.0.1:$KUBE_ROUTER_HEALTH_PORT/healthz" >/dev/null 2>&1
}

containerd_ready() { ctr_ version >/dev/null 2>&1; }
kubelet_ready() { curl -fsS --max-time 2 http://127.0.0.1:10248/healthz >/dev/null 2>&1; }
pods_gone() { # no container runs and no pod volume is mounted
  [ -z "$(ctr_ -n k8s.io tasks ls -q 2>/dev/null)" ] && [ -z "$(findmnt -rn -o TARGET | grep -F "$node/kubelet/pods/" || true)" ]
}

drain() { # pods go away through the kubelet, so CNI DEL and volume teardown run as usual
  kubelet_ready && containerd_ready && api_ready || return 0
  log "removing the pods on $NODE_NAME"
  # NoSchedule keeps DaemonSets from recreating them; NoExecute would evict with the pods' own grace period.
  kubectl_ taint node "$NODE_NAME" capstan.dev/node-down=:NoSchedule --overwrite >/dev/null 2>&1 || true
  kubectl_ delete pods -A --field-selector "spec.nodeName=$NODE_NAME" --grace-period=1 --wait=false >/dev/null 2>&1 || true
  for _ in $(seq 1 150); do pods_gone && break; sleep 0.2; done
}

sweep() { # whatever a drain left (kubelet or containerd gone): processes, mounts, iptables rules, cgroups
  # Every process in the node's cgroups, then containerd's shims (their command line names our socket), by PID.
  local p socks ipt table rule chain chains
  socks="$(sed -n 's|^unix://||p' "$node"/containerd/state/io.containerd.runtime.v2.task/*/*/address 2>/dev/null || true)"
  for p in $(find /sys/fs/cgroup/*/"$CGROUP_ROOT" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u); do
    kill -KILL "$p" 2>/dev/null || true
  done
  # and containerd, kubelet and kube-proxy themselves when their PID files are gone (their flags name $node).
  for p in /proc/[0-9]*; do
    [[ "$(tr '\0' ' ' 2>/dev/null <"$p/cmdline")" == *"-address $sock"* || "$(tr '\0' ' ' 2>/dev/null <"$p/cmdline")" == *" $node/"* ]] &&
      kill -KILL "${p#/proc/}" 2>/dev/null || true
  done
  sleep 0.5
  for p in $socks; do rm -f "$p"; done # shims remove their sockets only when they exit cleanly
  for m in $(findmnt -rn -o TARGET | grep -F "$node/" | sort -r || true); do umount -l "$m" 2>/dev/null || true; done
  if [ -f "$node/kube-proxy.yaml" ] || [ "$(owner)" = "$state" ]; then
    "$k8s_bin/kube-proxy" --cleanup >>"$state/logs/kube-proxy-cleanup.log" 2>&1 || true
    # kube-proxy also makes the kubelet's KUBE-FIREWALL chain (anti-martian rule) but leaves it on --cleanup.
    for ipt in iptables ip6tables; do
      $ipt -D INPUT -j KUBE-FIREWALL 2>/dev/null || true
      $ipt -D OUTPUT -j KUBE-FIREWALL 2>/dev/null || true
      $ipt -F KUBE-FIREWALL 2>/dev/null && $ipt -X KUBE-FIREWALL 2>/dev/null || true
    done
    for table in nat filter; do
      chains=""
      while read -r rule; do
        chain="$(sed -n 's/.* -j \(CNI-[A-Za-z0-9-]*\).*/\1/p' <<<"$rule")"
        eval "iptables -t $table -D ${rule#-A }" 2>/dev/null || true
        chains+=" $chain"
      done < <(iptables -t "$table" -S 2>/dev/null | grep -F "name: \\\"$NET_NAME\\\"" | grep '^-A ' || true)
      for chain in $chains; do iptables -t "$table" -F "$chain" 2>/dev/null && iptables -t "$table" -X "$chain" 2>/dev/null || true; done
    done
    sweep_kube_router
    # portmap's shared chains, once no port mapping is left in them
    if [ -z "$(iptables -t nat -S CNI-HOSTPORT-DNAT 2>/dev/null | grep '^-A' || true)" ]; then
      while read -r rule; do eval "iptables -t nat -D ${rule#-A }" 2>/dev/null || true; done \
        < <(iptables -t nat -S 2>/dev/null | grep -E '^-A (PREROUTING|OUTPUT|POSTROUTING) .*-j CNI-HOSTPORT-' || true)
      for chain in CNI-HOSTPORT-DNAT CNI-HOSTPORT-SETMARK CNI-HOSTPORT-MASQ; do
        iptables -t nat -F "$chain" 2>/dev/null && iptables -t nat -X "$chain" 2>/dev/null || true
      done
    fi
  fi
  for c in /sys/fs/cgroup/*/"$CGROUP_ROOT"; do
    [ -d "$c" ] && find "$c" -depth -type d -exec rmdir {} + 2>/dev/null || true
    if [ -d "$c" ]; then log "warning: $c is still there (a process in it?)"; fi
  done
}

# kube-router's filter rules (jumps from INPUT, FORWARD and OUTPUT to its KUBE-ROUTER-* chains, which lead to
# KUBE-NWPLCY-* and KUBE-POD-FW-* chains), then its ipsets (KUBE-SRC-*, KUBE-DST-*), once no rule refers to them.
sweep_kube_router() {
  local rule chain chains
  command -v iptables >/dev/null || return 0
  while read -r rule; do eval "iptables -D ${rule#-A }" 2>/dev/null || true; done \
    < <(iptables -S 2>/dev/null | grep -E '^-A (INPUT|FORWARD|OUTPUT) .*-j KUBE-ROUTER-' || true)
  chains="$(iptables -S 2>/dev/null | sed -n 's/^-N \(KUBE-ROUTER-.*\|KUBE-NWPLCY-.*\|KUBE-POD-FW-.*\)$/\1/p')"
  for chain in $chains; do iptables -F "$chain" 2>/dev/null || true; done
  for chain in $chains; do iptables -X "$chain" 2>/dev/null || true; done
  command -v ipset >/dev/null || return 0
  for chain in $(ipset list -n 2>/dev/null | grep -E '^KUBE-(SRC|DST)-' || true); do ipset destroy "$chain" 2>/dev/null || true; done
}

cmd_down() {
  local other; other="$(owner)"
  if [ -n "$other" ] && [ "$other" != "$state" ]; then # the host-wide pieces are another node's: leave them
    stop kube-router; stop kube-proxy; stop kubelet; stop containerd; rm -rf "$node"
    return 0
  fi
  drain
  stop kube-router
  stop kube-proxy
  stop kubelet
  stop containerd
  [ -d "$node" ] || [ -n "$other" ] || return 0
  sweep
  if [ "$(owner)" = "$state" ]; then
    ip link del "$BRIDGE" 2>/dev/null || true
    ip link del "$NODE_IF" 2>/dev/null || true
  fi
  if [ -f "$node/sysctl.orig" ]; then sysctl -q -p "$node/sysctl.orig" >/dev/null || true; fi
  find /var/log/containers -maxdepth 1 -lname "$node/*" -delete 2>/dev/null || true
  rm -f /var/lib/kubelet/device-plugins/kubelet.sock
  for f in /var/lib/cni/results/"$NET_NAME"-*-eth0; do # left by pods that got no CNI DEL
    [ -e "$f" ] || continue
    f="${f#/var/lib/cni/results/"$NET_NAME"-}"
    rm -f "/var/lib/cni/results/$NET_NAME-$f" "/var/lib/cni/results/cni-loopback-${f%-eth0}-lo"
  done
  if [ -f "$node/host-dirs.created" ]; then
    while read -r d; do rmdir "$d" 2>/dev/null || true; done <"$node/host-dirs.created"
  fi
  if [ -d "$node" ] && [ -f "$state/kubeconfig" ] && api_ready; then # pods a drain missed would rerun on the next up
    kubectl_ delete pods -A --field-selector "spec.nodeName=$NODE_NAME" --force --grace-period=0 >/dev/null 2>&1 || true
    kubectl_ delete node "$NODE_NAME" --wait=false >/dev/null 2>&1 || true
  fi
  rm -rf "$node"
  log "stopped"
}

cmd_status() {
  local rc=0
  local names=(containerd kubelet kube-proxy)
  [ "$(cat "$node/network-policy" 2>/dev/null || echo "$NETWORK_POLICY")" = 0 ] || names+=(kube-router)
  for name in "${names[@]}"; do
    if pid_alive "$name"; then printf '%-24s running (pid %s)\n' "$name" "$(cat "$state/pids/$name")"
    else printf '%-24s stopped\n' "$name"; rc=1; fi
  done
  if node_ready; then printf '%-24s Ready (%s)\n' "node $NODE_NAME" "$(cat "$state/node-ip")"
  else printf '%-24s not ready\n' "node $NODE_NAME"; rc=1; fi
  return $rc
}

case "${1:-}" in
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  # An import takes longer than the 10 s other ctr calls get: a Vault image under load took more (and failed).
  import) shift; for f in "$@"; do
      timeout 600 ctr --address "$sock" -n k8s.io images import "$f" >/dev/null ||
        { echo "[node] importing $f failed" >&2; exit 1; }
      echo "[node] imported $(basename "$f")" >&2
    done ;;
  ctr) shift; ctr_ "$@" ;;
  *) echo "usage: $0 up|down|status|import TAR...|ctr ARGS..." >&2; exit 2 ;;
esac
