# Sourced by cluster.sh, node.sh and addons.sh: where things are, shared by every local-cluster script.
# shellcheck shell=bash
here="$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
# shellcheck source=versions.env
source "$here/versions.env"
cache="${CAPSTAN_CACHE:-$HOME/.cache/capstan}"  # version-keyed binaries and images, outside the repo
state="${CAPSTAN_CLUSTER_DIR:-$repo/.cluster}"   # pki, kubeconfigs, etcd data, logs, PIDs, the node
k8s_bin="$cache/kubernetes-$KUBERNETES_VERSION/bin"
API_PORT="${CAPSTAN_API_PORT:-6443}"
kubectl_() { "$k8s_bin/kubectl" --kubeconfig "$state/kubeconfig" "$@"; }

# Each script defines log() with its own prefix; these use it.
die() { log "error: $*"; exit 1; }
pid_alive() { [ -f "$state/pids/$1" ] && kill -0 "$(cat "$state/pids/$1")" 2>/dev/null; }
wait_for() { # description timeout-seconds command...
  local what="$1" t="$2"; shift 2
  for ((i = 0; i < t * 5; i++)); do
    if "$@"; then return 0; fi
    sleep 0.2
  done
  die "$what not ready after ${t}s (logs: $state/logs)"
}
