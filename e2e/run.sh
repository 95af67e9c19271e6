#!/usr/bin/env bash
# Runs the integration suites against a real cluster: the one in KUBECONFIG if set and reachable,
# else the local cluster (started here, and stopped again at the end if this script started it).
#   e2e/run.sh [vitest args...]      e.g. e2e/run.sh suites/core, e2e/run.sh suites/vault/lifecycle.test.ts
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cluster="$here/cluster/local/cluster.sh"
started=0
if [ -z "${KUBECONFIG:-}" ]; then
  if ! "$cluster" status >/dev/null 2>&1; then
    started=1
    trap '"$cluster" down' EXIT
  fi
  KUBECONFIG="$("$cluster" up)"
  export KUBECONFIG
fi
export CAPSTAN_CLUSTER_SCRIPT="$cluster"
# shellcheck source=cluster/local/versions.env
source "$here/cluster/local/versions.env"
helm_bin="${CAPSTAN_CACHE:-$HOME/.cache/capstan}/helm-$HELM_VERSION/bin/helm"
if [ -z "${CAPSTAN_HELM:-}" ] && [ -x "$helm_bin" ]; then export CAPSTAN_HELM="$helm_bin"; fi
# The smoke suite needs a node that runs containers: the local cluster has one unless CAPSTAN_NODE=kwok.
state="${CAPSTAN_CLUSTER_DIR:-$(cd "$here/.." && pwd)/.cluster}"
if [ "$KUBECONFIG" = "$state/kubeconfig" ] && [ -f "$state/node-ip" ]; then
  export CAPSTAN_REAL_NODE=1
  # The operator suites run real operands and the operators' own images: build them (cached) and import them.
  # The Vault suites' images (both Vault versions of VAULT_IMAGE_VERSIONS, the reloader sidecar's busybox and
  # the operator) only when they run: no arguments, or an argument naming them (e.g. suites/vault).
  images=(etcd node etcd-operator)
  vault_suites=$(( $# == 0 ))
  for a in "$@"; do case "$a" in *vault*) vault_suites=1 ;; esac; done
  if [ "$vault_suites" = 1 ]; then images+=(busybox vault vault-operator); fi
  echo "[e2e] images: ${images[*]}" >&2
  bash "$here/images/build-all.sh" --import "${images[@]}" >/dev/null
fi
cd "$here"
npx vitest run "$@"
