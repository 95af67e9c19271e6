#!/usr/bin/env bash
# The main job: the example controller on a real cluster with a sample resource.
# Uses the cluster in KUBECONFIG when set; otherwise starts the local cluster built from upstream
# sources (left running afterwards: `npm run cluster:down` stops it).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
if [ -z "${KUBECONFIG:-}" ]; then
  KUBECONFIG="$(bash "$repo/e2e/cluster/local/cluster.sh" up)"
  export KUBECONFIG
  echo "using the local cluster: export KUBECONFIG=$KUBECONFIG" >&2
fi
npm run build --workspace @capstan/core >/dev/null
exec node "$repo/packages/core/examples/configmap-from-cr.ts"
