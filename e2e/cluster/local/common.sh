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
