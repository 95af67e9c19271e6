#!/usr/bin/env bash
# Runs the integration suites against a real cluster: the one in KUBECONFIG if set and reachable,
# else the local cluster (started here, and stopped again at the end if this script started it).
#   e2e/run.sh [vitest args...]      e.g. e2e/run.sh suites/core, e2e/run.sh suites/vault/lifecycle.test.ts
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cluster="$here/cluster/local/cluster.sh"
started=0 marks="" vault=""
killtree() { local p; for p in $(pgrep -P "$1"); do killtree "$p"; done; kill "$1" 2>/dev/null || true; }
cleanup() {
  if [ -n "$vault" ]; then killtree "$vault"; fi
  if [ -n "$marks" ]; then rm -rf "$marks"; fi
  if [ "$started" = 1 ]; then "$cluster" down; fi
}
trap cleanup EXIT
if [ -z "${KUBECONFIG:-}" ]; then
  if ! "$cluster" status >/dev/null 2>&1; then started=1; fi
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
real=0
if [ "$KUBECONFIG" = "$state/kubeconfig" ] && [ -f "$state/node-ip" ]; then real=1 && export CAPSTAN_REAL_NODE=1; fi
# The operator suites run real operands and the operators' own images: built (cached) and imported into the real
# node. Vault's (both versions of VAULT_IMAGE_VERSIONS, the reloader sidecar's busybox, the operator) only when
# its suites run; the build also makes the Vault binary the Vault operator's "real" tests run.
images() { # IMAGE...
  echo "[e2e] images: $*" >&2
  if [ "$real" = 1 ]; then bash "$here/images/build-all.sh" --import "$@" >/dev/null
  else bash "$here/images/build-all.sh" "$@" >/dev/null; fi
}
vault_images=(busybox vault vault-operator)
cd "$here"

if [ "$#" -gt 0 ]; then
  images=(etcd node etcd-operator)
  for a in "$@"; do case "$a" in *vault*) images+=("${vault_images[@]}") ;; esac; done
  if [ "$real" = 1 ]; then images "${images[@]}"; fi
  exec npx vitest run "$@"
fi

# Everything: core and smoke alone (a core suite restarts the API server), then two lanes side by side, as
# they mostly wait on pods: etcd's suites, and Vault's. The Vault lane starts at once, niced: its images (a cold
# Vault build takes half an hour; CI starts it earlier still) and the operator's tests against real Vault
# processes overlap core's suites, then its suites wait for core's to end. Each lane's output is prefixed with
# its name; the run fails if any part does.
if [ "$real" = 1 ]; then images etcd node etcd-operator || { echo "[e2e] the etcd images did not build or import" >&2; exit 1; }; fi
marks="$(mktemp -d)"
lane() { # NAME COMMAND...: COMMAND's output prefixed with [NAME]
  local name="$1"; shift
  { "$@" 2>&1; } | sed -u "s/^/[$name] /"
  return "${PIPESTATUS[0]}"
}
vault_lane() {
  renice -n 5 -p "$BASHPID" >/dev/null # the build and the real-Vault tests yield to core's suites
  # Vault 1.14.8 first: the real tests and every suite but the upgrade need only it. 1.14.6, where the upgrade
  # starts, comes after them (CI's background build makes it meanwhile; warm, it is only found).
  VAULT_IMAGE_VERSIONS=v1.14.8 images "${vault_images[@]}" ||
    { echo "the Vault images did not build or import" >&2; return 1; }
  npm run --silent test:real --workspace @capstan/vault-operator || return 1
  echo "waiting for the core suites" >&2
  until [ -f "$marks/core" ]; do sleep 2; done
  [ "$(cat "$marks/core")" = 0 ] || return 1
  npx vitest run suites/vault --exclude '**/upgrade.test.ts' || return 1
  VAULT_IMAGE_VERSIONS=v1.14.6 images vault || { echo "the Vault 1.14.6 image did not build or import" >&2; return 1; }
  npx vitest run suites/vault/upgrade.test.ts
}
lane vault vault_lane &
vault=$!
code=0 && npx vitest run suites/core suites/smoke || code=$?
echo "$code" >"$marks/core"
if [ "$code" != 0 ]; then exit "$code"; fi
failed=()
lane etcd npx vitest run suites/etcd || failed+=(etcd)
wait "$vault" || failed+=(vault)
vault=""
if [ "${#failed[@]}" -gt 0 ]; then echo "[e2e] failed: ${failed[*]}" >&2; exit 1; fi
