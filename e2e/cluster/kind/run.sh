#!/usr/bin/env bash
# The kind path (needs Docker and kind; cannot run on machines without a container registry):
# creates a kind cluster, builds the suites' local images with Docker tooling, loads them into kind,
# and runs the same integration and smoke suites as the local cluster.
#   npm run e2e:kind            KEEP=1 keeps the cluster afterwards
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
name=capstan
for tool in docker kind kubectl; do command -v "$tool" >/dev/null || { echo "$tool is required for the kind path" >&2; exit 1; }; done

if ! kind get clusters | grep -qx "$name"; then
  kind create cluster --config "$here/kind-config.yaml" --wait 120s
fi
if [ "${KEEP:-}" != 1 ]; then trap 'kind delete cluster --name "$name"' EXIT; fi
export KUBECONFIG="$repo/.cluster-kind/kubeconfig"
mkdir -p "$(dirname "$KUBECONFIG")"
kind get kubeconfig --name "$name" >"$KUBECONFIG"

# Images the suites use that no registry serves: built as docker-save tarballs, loaded into the node.
# (Upstream operand images, e.g. gcr.io/etcd-development/etcd, are pulled from their registries on kind.)
cd "$repo"
npm run build
images="${CAPSTAN_CACHE:-$HOME/.cache/capstan}/images"
# The operators' images (their bundles on capstan.local/node:24), busybox (the reloader sidecars of Vault and
# Prometheus) and capstan.local/versitygw (the etcd backup suites' S3 server: its tag is ours, no registry has it);
# the operands (etcd, hashicorp/vault, quay.io/prometheus/prometheus) come from their registries.
bash e2e/images/build-all.sh busybox versitygw etcd-operator vault-operator prometheus-operator | while read -r tar; do
  kind load image-archive "$tar" --name "$name"
done
# The operator suites install charts with Helm, found by the one rule every tool follows
# (packages/cli/src/find-helm.ts: CAPSTAN_HELM, else the local cluster's cached build, else PATH).
if helm_bin="$(node_modules/node/bin/node packages/cli/src/find-helm-main.ts)"; then export CAPSTAN_HELM="$helm_bin"; fi
# Suites that restart the API server or compact etcd need the local cluster's script and skip here.
# cert-manager can run here (its images come from quay.io): the etcd cert-manager suite installs its published chart.
CAPSTAN_CERT_MANAGER="${CAPSTAN_CERT_MANAGER:-install}" \
  CAPSTAN_REAL_NODE=1 CAPSTAN_NODE_NAME="$name-control-plane" npx --prefix e2e vitest run --root e2e
