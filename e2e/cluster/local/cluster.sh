#!/usr/bin/env bash
# A real single-node Kubernetes control plane built from upstream sources (see build.sh), run directly
# on this machine: etcd, kube-apiserver (TLS, RBAC, service accounts), kube-controller-manager,
# kube-scheduler, and a real node (node.sh: containerd, kubelet, kube-proxy, kube-router's NetworkPolicy controller,
# CoreDNS, local-path storage).
# CAPSTAN_NODE=kwok runs a kwok fake Node instead (no containers; fast, for API-only work and scale tests);
# CAPSTAN_KWOK_NODE=1 adds the fake node beside the real one.
#   cluster.sh up       start (idempotent: a healthy cluster is left alone, a dead one is cleaned up)
#   cluster.sh down     stop every process it started, by PID, and remove the state
#   cluster.sh status   print what runs
#   cluster.sh restart-apiserver   stop and start kube-apiserver (for tests of clients riding out a restart)
#   cluster.sh stop-apiserver      kill kube-apiserver at once (SIGKILL: an outage, as a crash or a lost control
#                                  plane node is); cluster.sh start-apiserver brings it back
#   cluster.sh etcdctl ARGS...     etcdctl against the cluster's etcd (e.g. `compact`, `endpoint status`)
# State lives in CAPSTAN_CLUSTER_DIR (default <repo>/.cluster, git-ignored); the kubeconfig is
# <state>/kubeconfig. Binaries are cached by version outside the repo (CAPSTAN_CACHE).
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
etcd_bin="$cache/etcd-$ETCD_VERSION/bin"
kwok_dir="$cache/kwok-$KWOK_VERSION"
ETCD_PORT="${CAPSTAN_ETCD_PORT:-12379}"
ETCD_PEER_PORT=$((ETCD_PORT + 1))
KCM_PORT="${CAPSTAN_KCM_PORT:-10257}"
SCHEDULER_PORT="${CAPSTAN_SCHEDULER_PORT:-10259}"
KWOK_PORT="${CAPSTAN_KWOK_PORT:-10247}"
SERVICE_CIDR="10.96.0.0/16"
SERVICE_IP="10.96.0.1"
CLUSTER_CIDR="10.244.0.0/16"
NODE_NAME="${CAPSTAN_FAKE_NODE:-kwok-node-0}"
NODE_MODE="${CAPSTAN_NODE:-real}" # real | kwok
case "$NODE_MODE" in real | kwok) ;; *) echo "CAPSTAN_NODE must be real or kwok, not $NODE_MODE" >&2; exit 2 ;; esac
COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)
# kwok runs only for fake nodes: the cluster's real node does not need it (nor, then, its build).
want_kwok() { [ "$NODE_MODE" = kwok ] || [ "${CAPSTAN_KWOK_NODE:-}" = 1 ]; }
# Real node (node.sh): with CAPSTAN_NODE=real (the default), `up` records a node IP in <state>/node-ip; the apiserver
# then also listens on it and advertises it, since pods reach the `kubernetes` Service through the advertised
# address and 127.0.0.1 is a pod's own loopback. Without it nothing below changes.

log() { printf '[cluster] %s\n' "$*" >&2; }



api_ready() {
  curl -fsS --max-time 2 --cacert "$state/pki/ca.crt" --cert "$state/pki/admin.crt" --key "$state/pki/admin.key" \
    "https://127.0.0.1:$API_PORT/readyz" >/dev/null 2>&1
}

etcd_ready() { curl -fsS --max-time 2 "http://127.0.0.1:$ETCD_PORT/readyz" >/dev/null 2>&1; }


# --- certificates (openssl): one CA, serving and client certs, the service-account key pair ---
cert() { # name CN O [SANs]
  local name="$1" cn="$2" org="$3" sans="${4:-}"
  local ext="$state/pki/$name.ext"
  {
    echo "basicConstraints=CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    if [ -n "$sans" ]; then echo "extendedKeyUsage=serverAuth,clientAuth"; echo "subjectAltName=$sans"; else echo "extendedKeyUsage=clientAuth"; fi
  } >"$ext"
  local subj="/CN=$cn"
  [ -n "$org" ] && subj="/O=$org$subj"
  openssl req -new -newkey rsa:2048 -nodes -keyout "$state/pki/$name.key" -subj "$subj" -out "$state/pki/$name.csr" 2>/dev/null
  openssl x509 -req -in "$state/pki/$name.csr" -CA "$state/pki/ca.crt" -CAkey "$state/pki/ca.key" -CAcreateserial \
    -days 365 -sha256 -extfile "$ext" -out "$state/pki/$name.crt" 2>/dev/null
}

make_pki() {
  mkdir -p "$state/pki"
  openssl req -x509 -new -newkey rsa:2048 -nodes -keyout "$state/pki/ca.key" -subj "/CN=capstan-local-ca" \
    -days 3650 -sha256 -out "$state/pki/ca.crt" 2>/dev/null
  local node_san=""
  if [ -f "$state/node-ip" ]; then node_san=",IP:$(cat "$state/node-ip")"; fi
  cert apiserver kube-apiserver "" \
    "DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost,IP:127.0.0.1,IP:$SERVICE_IP$node_san"
  cert admin capstan-admin system:masters
  cert controller-manager system:kube-controller-manager ""
  cert scheduler system:kube-scheduler ""
  cert kwok kwok-controller system:masters
  cert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters
  openssl genrsa -out "$state/pki/sa.key" 2048 2>/dev/null
  openssl rsa -in "$state/pki/sa.key" -pubout -out "$state/pki/sa.pub" 2>/dev/null
}

kubeconfig() { # file user
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: capstan-local
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority: $state/pki/ca.crt
users:
- name: $2
  user:
    client-certificate: $state/pki/$2.crt
    client-key: $state/pki/$2.key
contexts:
- name: capstan-local
  context: { cluster: capstan-local, user: $2 }
current-context: capstan-local
EOF
}

start() { # name command...
  local name="$1"; shift
  setsid "$@" >"$state/logs/$name.log" 2>&1 < /dev/null &
  echo $! >"$state/pids/$name"
}

stop_all() {
  if [ -f "$state/node-ip" ]; then "$here/node.sh" down || true; fi
  [ -d "$state/pids" ] || return 0
  local order=(kwok kube-scheduler kube-controller-manager kube-apiserver etcd)
  for name in "${order[@]}"; do
    [ -f "$state/pids/$name" ] || continue
    local pid; pid="$(cat "$state/pids/$name")"
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$state/pids/$name"
  done
}

start_apiserver() {
  log "starting kube-apiserver $KUBERNETES_VERSION"
  local net=(--bind-address 127.0.0.1 --advertise-address 127.0.0.1)
  if [ -f "$state/node-ip" ]; then
    net=(--bind-address 0.0.0.0 --advertise-address "$(cat "$state/node-ip")" --kubelet-preferred-address-types "InternalIP,Hostname")
  fi
  start kube-apiserver "$k8s_bin/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$ETCD_PORT" --secure-port "$API_PORT" "${net[@]}" \
    --service-cluster-ip-range "$SERVICE_CIDR" \
    --tls-cert-file "$state/pki/apiserver.crt" --tls-private-key-file "$state/pki/apiserver.key" \
    --client-ca-file "$state/pki/ca.crt" \
    --kubelet-client-certificate "$state/pki/apiserver-kubelet-client.crt" \
    --kubelet-client-key "$state/pki/apiserver-kubelet-client.key" \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$state/pki/sa.pub" --service-account-signing-key-file "$state/pki/sa.key" \
    --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
    --allow-privileged=true --enable-aggregator-routing=true --profiling=false \
    --watch-cache=true --storage-media-type application/json
}

cmd_up() {
  if [ -f "$state/kubeconfig" ] && api_ready && pid_alive etcd && pid_alive kube-apiserver; then
    log "already running"
    if [ -f "$state/node-ip" ]; then "$here/node.sh" up >&2; fi # restarts a node that died, else no-op
    echo "$state/kubeconfig"
    return 0
  fi
  if [ -d "$state" ]; then
    log "cleaning up state left by an earlier run"
    stop_all
    rm -rf "$state"
  fi
  "$here/build.sh" cluster >/dev/null
  if want_kwok; then "$here/build.sh" kwok >/dev/null; fi
  command -v openssl >/dev/null || die "openssl is required"
  command -v curl >/dev/null || die "curl is required"
  mkdir -p "$state/pids" "$state/logs" "$state/etcd"
  if [ "$NODE_MODE" = real ]; then echo "${CAPSTAN_NODE_IP:-10.246.0.1}" >"$state/node-ip"; fi
  make_pki
  kubeconfig "$state/kubeconfig" admin
  kubeconfig "$state/controller-manager.kubeconfig" controller-manager
  kubeconfig "$state/scheduler.kubeconfig" scheduler
  kubeconfig "$state/kwok.kubeconfig" kwok

  log "starting etcd $ETCD_VERSION"
  start etcd "$etcd_bin/etcd" --name capstan --data-dir "$state/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "capstan=http://127.0.0.1:$ETCD_PEER_PORT" --listen-metrics-urls "" \
    --quota-backend-bytes 4294967296 --auto-compaction-mode revision --auto-compaction-retention 0
  wait_for etcd 30 etcd_ready

  start_apiserver
  wait_for kube-apiserver 90 api_ready

  log "starting kube-controller-manager and kube-scheduler"
  start kube-controller-manager "$k8s_bin/kube-controller-manager" \
    --kubeconfig "$state/controller-manager.kubeconfig" \
    --authentication-kubeconfig "$state/controller-manager.kubeconfig" \
    --authorization-kubeconfig "$state/controller-manager.kubeconfig" \
    --bind-address 127.0.0.1 --secure-port "$KCM_PORT" \
    --service-account-private-key-file "$state/pki/sa.key" --root-ca-file "$state/pki/ca.crt" \
    --cluster-signing-cert-file "$state/pki/ca.crt" --cluster-signing-key-file "$state/pki/ca.key" \
    --use-service-account-credentials --controllers '*' --leader-elect=false \
    --cluster-cidr "$CLUSTER_CIDR" --service-cluster-ip-range "$SERVICE_CIDR"
  start kube-scheduler "$k8s_bin/kube-scheduler" --kubeconfig "$state/scheduler.kubeconfig" \
    --authentication-kubeconfig "$state/scheduler.kubeconfig" --authorization-kubeconfig "$state/scheduler.kubeconfig" \
    --bind-address 127.0.0.1 --secure-port "$SCHEDULER_PORT" --leader-elect=false

  if want_kwok; then
    log "starting kwok $KWOK_VERSION"
    local stage_args=()
    for f in "$kwok_dir"/stages/*.yaml; do stage_args+=(--config "$f"); done
    start kwok "$kwok_dir/bin/kwok" --kubeconfig "$state/kwok.kubeconfig" \
      --manage-all-nodes=false --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake \
      --cidr 10.245.0.0/16 --node-ip 10.245.255.1 --server-address "127.0.0.1:$KWOK_PORT" "${stage_args[@]}"
  fi

  wait_for "default service account" 60 sa_exists
  if want_kwok; then add_fake_node; fi
  if [ "$NODE_MODE" = real ]; then "$here/node.sh" up >&2; fi
  log "ready: export KUBECONFIG=$state/kubeconfig"
  echo "$state/kubeconfig"
}

add_fake_node() {
  kubectl_ apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata:
  name: $NODE_NAME
  annotations: { kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: "0" }
  labels: { type: kwok, kubernetes.io/hostname: $NODE_NAME, kubernetes.io/os: linux, kubernetes.io/arch: amd64 }
spec: {}
EOF
  wait_for "fake node $NODE_NAME" 60 node_ready
}

node_ready() {
  [ "$(kubectl_ get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = "True" ]
}

sa_exists() { kubectl_ -n default get serviceaccount default >/dev/null 2>&1; }

cmd_down() {
  stop_all
  rm -rf "$state"
  log "stopped"
}

cmd_status() {
  local rc=0
  for name in "${COMPONENTS[@]}"; do
    if [ "$name" = kwok ] && [ -d "$state/pids" ] && [ ! -f "$state/pids/kwok" ]; then
      printf '%-24s not started (no fake node: CAPSTAN_NODE=kwok or CAPSTAN_KWOK_NODE=1 start it)\n' kwok
    elif pid_alive "$name"; then printf '%-24s running (pid %s)\n' "$name" "$(cat "$state/pids/$name")"
    else printf '%-24s stopped\n' "$name"; rc=1; fi
  done
  if [ -f "$state/kubeconfig" ] && api_ready; then
    printf '%-24s ready at https://127.0.0.1:%s (KUBECONFIG=%s)\n' "api" "$API_PORT" "$state/kubeconfig"
  else
    printf '%-24s not ready\n' "api"; rc=1
  fi
  if [ -f "$state/node-ip" ]; then "$here/node.sh" status || rc=1; fi
  return $rc
}

cmd_stop_apiserver() {
  pid_alive kube-apiserver || die "kube-apiserver is not running"
  local pid; pid="$(cat "$state/pids/kube-apiserver")"
  kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid"
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  log "kube-apiserver killed"
}

cmd_start_apiserver() {
  pid_alive kube-apiserver && die "kube-apiserver is already running"
  mv "$state/logs/kube-apiserver.log" "$state/logs/kube-apiserver.$(date +%s).log"
  start_apiserver
  wait_for kube-apiserver 90 api_ready
  log "kube-apiserver started again"
}

cmd_restart_apiserver() {
  pid_alive kube-apiserver || die "kube-apiserver is not running"
  local pid; pid="$(cat "$state/pids/kube-apiserver")"
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid"
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL -- "-$pid" 2>/dev/null || true
  mv "$state/logs/kube-apiserver.log" "$state/logs/kube-apiserver.$(date +%s).log"
  start_apiserver
  wait_for kube-apiserver 90 api_ready
  log "kube-apiserver restarted"
}

case "${1:-}" in
  up) cmd_up ;;
  restart-apiserver) cmd_restart_apiserver ;;
  stop-apiserver) cmd_stop_apiserver ;;
  start-apiserver) cmd_start_apiserver ;;
  etcdctl) shift; "$etcd_bin/etcdctl" --endpoints "http://127.0.0.1:$ETCD_PORT" "$@" ;;
  down) cmd_down ;;
  status) cmd_status ;;
  *) echo "usage: $0 up|down|status|restart-apiserver|stop-apiserver|start-apiserver|etcdctl ARGS..." >&2; exit 2 ;;
esac
