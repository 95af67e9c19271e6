#!/usr/bin/env bash
# Runs the integration suites against a real cluster: the local cluster (started here, and stopped again at the end
# if this script started it), or with CAPSTAN_USE_KUBECONFIG=1 the one in KUBECONFIG (see cluster/local/kubeconfig.sh).
#   e2e/run.sh [vitest args...]      e.g. e2e/run.sh suites/core, e2e/run.sh suites/vault/lifecycle.test.ts
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cluster="$here/cluster/local/cluster.sh"
started=0 marks="" lanes=()
killtree() { local p; for p in $(pgrep -P "$1"); do killtree "$p"; done; kill "$1" 2>/dev/null || true; }
cleanup() {
  local l; for l in "${lanes[@]}"; do killtree "$l"; done
  if [ -n "$marks" ]; then rm -rf "$marks"; fi
  if [ "$started" = 1 ]; then "$cluster" down; fi
}
trap cleanup EXIT
# shellcheck source=cluster/local/kubeconfig.sh
source "$here/cluster/local/kubeconfig.sh"
state="${CAPSTAN_CLUSTER_DIR:-$(cd "$here/.." && pwd)/.cluster}"
chosen="$(capstan_chosen_kubeconfig "$state")"
if [ -n "$chosen" ]; then
  export KUBECONFIG="$chosen"
else
  if ! "$cluster" status >/dev/null 2>&1; then started=1; fi
  KUBECONFIG="$("$cluster" up)"
  export KUBECONFIG
fi
export CAPSTAN_CLUSTER_SCRIPT="$cluster"
# Helm by the one rule every tool follows (packages/cli/src/find-helm.ts: CAPSTAN_HELM, else the local cluster's
# cached build of versions.env's HELM_VERSION, else PATH), exported for the suites and what they start.
if helm_bin="$("$here/../node_modules/node/bin/node" "$here/../packages/cli/src/find-helm-main.ts")"; then
  export CAPSTAN_HELM="$helm_bin"
fi
# The smoke suite needs a node that runs containers: the local cluster has one unless CAPSTAN_NODE=kwok.
real=0
if [ "$KUBECONFIG" = "$state/kubeconfig" ] && [ -f "$state/node-ip" ]; then real=1 && export CAPSTAN_REAL_NODE=1; fi
# The operator suites run real operands and the operators' own images: built (cached) and imported into the real
# node. Vault's (both versions of VAULT_IMAGE_VERSIONS, the reloader sidecar's busybox, the operator) only when
# its suites run; the build also makes the Vault binary the Vault operator's "real" tests run. Likewise
# Prometheus's (Prometheus, which also makes the promtool its operator's "real" tests run). The operators' images
# and busybox (Vault's and Prometheus's reloader sidecars) are quick: every run imports them.
images() { # IMAGE...
  echo "[e2e] images: $*" >&2
  if [ "$real" = 1 ]; then bash "$here/images/build-all.sh" --import "$@" >/dev/null
  else bash "$here/images/build-all.sh" "$@" >/dev/null; fi
}
# Quick to build (the operators' bundles, busybox); Vault and Prometheus are Go builds, each in its own lane.
base_images=(etcd node etcd-operator busybox vault-operator prometheus-operator)
cd "$here"

if [ "$#" -gt 0 ]; then
  images=("${base_images[@]}")
  for a in "$@"; do
    case "$a" in
      *vault*) images+=(vault) ;;
      *prometheus*) images+=(prometheus vault) ;; # its operators suite runs a VaultCluster
    esac
    # The etcd suites that talk S3 (fixtures/s3.ts) run versitygw: the etcd directory, or a file about S3/backups.
    case "$a" in suites/etcd | suites/etcd/ | *etcd*s3* | *etcd*backup* | *etcd*restore*) images+=(versitygw) ;; esac
    # So does the Vault snapshot suite (its snapshots go to versitygw too).
    case "$a" in suites/vault | suites/vault/ | *vault*snapshot*) images+=(versitygw) ;; esac
    # An operator made by `capstan new operator` (suites/<name>/...): its suite runs its image.
    n="${a#suites/}" && n="${n%%/*}"
    if [ -f "$here/images/$n-operator/build.sh" ] && [[ " ${images[*]} " != *" $n-operator "* ]]; then images+=("$n-operator"); fi
  done
  if [ "$real" = 1 ]; then images "${images[@]}"; fi
  # Not exec: the EXIT trap must still stop a cluster this script started.
  npx vitest run "$@"
  exit 0
fi

# Everything: core and smoke alone (a core suite restarts the API server), then four lanes side by side, as
# they mostly wait on pods: etcd's suites in two, Vault's and Prometheus's. The Vault and Prometheus lanes start at once,
# niced: their images (cold, Go builds of a cut-down Vault and of Prometheus with only Kubernetes discovery; CI
# starts them earlier still) and the operators' tests against real Vault processes and the real promtool overlap core's suites, then
# their suites wait for core's to end. Each lane's output is prefixed with its name; the run fails if any part
# does.
if [ "$real" = 1 ]; then images "${base_images[@]}" || { echo "[e2e] the operator images did not build or import" >&2; exit 1; }; fi
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
  if ! VAULT_IMAGE_VERSIONS=v1.14.8 images vault; then
    echo failed >"$marks/vault-image"
    echo "the Vault images did not build or import" >&2 && return 1
  fi
  echo ok >"$marks/vault-image" # the Prometheus lane's operators suite runs a VaultCluster too
  npm run --silent test:real --workspace @capstan/vault-operator || return 1
  wait_core || return 1
  npx vitest run suites/vault --exclude '**/upgrade.test.ts' --exclude '**/apiserver-outage.test.ts' \
    --exclude '**/snapshot.test.ts' || return 1
  # Its snapshots go to versitygw: after the versitygw lane made the image.
  wait_versitygw || return 1
  npx vitest run suites/vault/snapshot.test.ts || return 1
  VAULT_IMAGE_VERSIONS=v1.14.6 images vault || { echo "the Vault 1.14.6 image did not build or import" >&2; return 1; }
  npx vitest run suites/vault/upgrade.test.ts
}
prometheus_lane() {
  renice -n 5 -p "$BASHPID" >/dev/null
  images prometheus || { echo "the Prometheus image did not build or import" >&2; return 1; }
  # promtool 3.5.0 too: the real tests check the PromQL table's 3.5 rows with it (CI's background chain builds it
  # early; cached by version, so this only finds it then).
  bash "$here/images/prometheus/build-promtool.sh" >/dev/null || { echo "promtool 3.5.0 did not build" >&2; return 1; }
  npm run --silent test:real --workspace @capstan/prometheus-operator || return 1
  wait_core || return 1
  # Its operators suite scrapes a VaultCluster: wait for the Vault lane's image (one import at a time).
  until [ -f "$marks/vault-image" ]; do sleep 2; done
  [ "$(cat "$marks/vault-image")" = ok ] || { echo "no Vault image (the Vault lane failed to make it)" >&2; return 1; }
  npx vitest run suites/prometheus || return 1
  # This lane ends first: it takes etcd suites off the second etcd lane (see etcd_in_prometheus_lane), then runs
  # each chart's install with its monitoring values on a control plane of its own (suites/charts) and the README's
  # commands, each from a fresh copy of the checkout with nothing built (suites/readme).
  npx vitest run "${etcd_in_prometheus_lane[@]/#/suites/etcd/}" || return 1
  npx vitest run suites/charts suites/readme
}
wait_core() {
  echo "waiting for the core suites" >&2
  until [ -f "$marks/core" ]; do sleep 2; done
  [ "$(cat "$marks/core")" = 0 ]
}
# versitygw (the etcd suites' S3 server; a Go build, cold or found in CI's background build) from the start, so
# the second etcd lane's S3 suites wait the least.
versitygw_lane() {
  renice -n 5 -p "$BASHPID" >/dev/null
  if images versitygw; then echo ok >"$marks/versitygw-image"; else
    echo failed >"$marks/versitygw-image"
    echo "the versitygw image did not build or import" >&2 && return 1
  fi
}
wait_versitygw() {
  until [ -f "$marks/versitygw-image" ]; do sleep 2; done
  [ "$(cat "$marks/versitygw-image")" = ok ] || { echo "no versitygw image (its lane failed to make it)" >&2; return 1; }
}
# etcd suites run at the end of the Prometheus lane, which ends long before the etcd lanes (set before the lanes
# start: each runs in its own subshell): the upgrade, and recovery-judgement (about 15 minutes: the operator shut out
# for longer than afterSeconds, a survivor recovery fenced by a pod stuck Terminating).
etcd_in_prometheus_lane=(upgrade.test.ts recovery-judgement.test.ts)
lane versitygw versitygw_lane &
lanes+=($!)
lane vault vault_lane &
lanes+=($!)
lane prometheus prometheus_lane &
lanes+=($!)
code=0 && npx vitest run suites/core suites/smoke || code=$?
echo "$code" >"$marks/core"
if [ "$code" != 0 ]; then exit "$code"; fi
failed=()
# etcd's suites in two lanes side by side (each suite installs its own namespace-scoped operator), about 30 minutes
# each in the full run. The first runs lifecycle, failures (about 15 minutes alone), invalid-spec, tls (about 7) and
# network-policy (about 3; the node's NetworkPolicy enforcer, which node.sh starts, makes it meaningful; it joined the
# first lane because the second also waits for the versitygw image when that is cold);
# the second every other etcd suite (a new one joins it; restore is about 10 minutes), those that talk S3 last, after the versitygw image, then `capstan new operator` end to end: generated into a
# scratch directory, built, unit-tested, its image imported, its chart installed and its sample reconciled by its own
# suite (about a minute and a half; skipped on kwok).
etcd_first=(lifecycle.test.ts failures.test.ts invalid-spec.test.ts tls.test.ts network-policy.test.ts)
etcd_s3=(s3-server.test.ts backup.test.ts)
# Suites left out of the full run (none now: tls.test.ts's learner churn of 2026-12-02 was a stale "cannot fetch
# cluster info" in a restarted learner's lastState, taken for lost data; fixed in reconcile/observe.ts).
etcd_skip=()
etcd_second_lane() {
  npx vitest run suites/etcd "${etcd_first[@]/#/--exclude=**/}" "${etcd_s3[@]/#/--exclude=**/}" \
    "${etcd_in_prometheus_lane[@]/#/--exclude=**/}" \
    "${etcd_skip[@]/#/--exclude=**/}" || return 1
  wait_versitygw || return 1
  npx vitest run "${etcd_s3[@]/#/suites/etcd/}" || return 1
  npx vitest run suites/scaffold
}
lane etcd npx vitest run "${etcd_first[@]/#/suites/etcd/}" &
lanes+=($!)
lane etcd-2 etcd_second_lane || failed+=(etcd-2)
wait "${lanes[3]}" || failed+=(etcd)
wait "${lanes[0]}" || failed+=(versitygw)
wait "${lanes[1]}" || failed+=(vault)
wait "${lanes[2]}" || failed+=(prometheus)
lanes=()
if [ "${#failed[@]}" -gt 0 ]; then echo "[e2e] failed: ${failed[*]}" >&2; exit 1; fi
# Last and alone: suites that stop the API server for a while (every other suite would see the outage too).
lane outage npx vitest run suites/vault/apiserver-outage.test.ts || { echo "[e2e] failed: outage" >&2; exit 1; }
