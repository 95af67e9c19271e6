#!/usr/bin/env bash
# The main job: the etcd operator installed by its Helm chart on a real cluster, with a sample EtcdCluster.
# Uses the cluster in KUBECONFIG when set (its nodes must be able to pull the images, see docs/operators/etcd.md);
# otherwise builds (once, cached by version) and starts the local cluster from upstream sources with a real node,
# and imports the operator and etcd images into it. The cluster is left running: `npm run cluster:down` stops it.
#   npm start                       SAMPLE_NAMESPACE (default "default") holds the sample; SAMPLE=false skips it
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
local_cluster="$repo/e2e/cluster/local"
# shellcheck source=../e2e/cluster/local/versions.env
source "$local_cluster/versions.env"
cache="${CAPSTAN_CACHE:-$HOME/.cache/capstan}"
log() { printf '[start] %s\n' "$*" >&2; }

bash "$local_cluster/build.sh" all >&2 # Kubernetes, etcd, Helm... (a no-op when cached)
if [ -z "${KUBECONFIG:-}" ]; then
  KUBECONFIG="$(bash "$local_cluster/cluster.sh" up)"
  export KUBECONFIG
  log "using the local cluster: export KUBECONFIG=$KUBECONFIG"
  imported=1
fi
kubectl="$cache/kubernetes-$KUBERNETES_VERSION/bin/kubectl"
helm="$cache/helm-$HELM_VERSION/bin/helm"

log "building the operator"
npm run build --workspace @capstan/core --workspace @capstan/etcd-operator >/dev/null
if [ "${imported:-0}" = 1 ]; then
  log "building and importing the images (etcd, node, etcd-operator)"
  bash "$repo/e2e/images/build-all.sh" --import etcd node etcd-operator >/dev/null
fi

log "installing charts/etcd-operator (release etcd-operator in namespace etcd-operator)"
"$helm" upgrade --install etcd-operator "$repo/charts/etcd-operator" --take-ownership \
  --namespace etcd-operator --create-namespace --wait --timeout 5m >/dev/null
"$kubectl" -n etcd-operator get deploy,pods -l app.kubernetes.io/instance=etcd-operator >&2

if [ "${SAMPLE:-true}" != false ]; then
  ns="${SAMPLE_NAMESPACE:-default}"
  log "applying the sample EtcdCluster $ns/demo (operators/etcd/samples/etcdcluster.yaml)"
  "$kubectl" apply -n "$ns" -f "$repo/operators/etcd/samples/etcdcluster.yaml" >&2
  log "waiting for it to become Available (3 members: about 1-2 minutes)"
  "$kubectl" -n "$ns" wait etcdcluster/demo --for=condition=Available --timeout=10m >&2
  "$kubectl" -n "$ns" wait etcdcluster/demo --for=jsonpath='{.status.readyReplicas}'=3 --timeout=10m >&2
  "$kubectl" -n "$ns" get etcdcluster demo -o wide
  cat >&2 <<MSG

The etcd operator is running and demo is served at $("$kubectl" -n "$ns" get etcdcluster demo -o jsonpath='{.status.clientEndpoint}').
Try:  export KUBECONFIG=$KUBECONFIG
      $kubectl -n $ns scale etcdcluster demo --replicas=5
      $kubectl -n $ns patch etcdcluster demo --type merge -p '{"spec":{"version":"3.6.16"}}'
      $kubectl -n $ns get etcdcluster demo -w
      $kubectl -n etcd-operator logs deploy/etcd-operator -f
Docs: docs/operators/etcd.md.  Stop the local cluster: npm run cluster:down
MSG
fi
