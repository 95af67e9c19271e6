# Sourced by scripts/start.sh and e2e/run.sh: which cluster `npm start` and `npm test` use. The local cluster
# (its state in CAPSTAN_CLUSTER_DIR, default .cluster) unless CAPSTAN_USE_KUBECONFIG=1, because KUBECONFIG often
# points at a work cluster that a test run must never touch by accident. With CAPSTAN_USE_KUBECONFIG=1: the
# cluster of KUBECONFIG, or of ~/.kube/config when KUBECONFIG is unset.
#   capstan_chosen_kubeconfig STATE_DIR   prints the kubeconfig to use, or nothing for the local cluster
capstan_chosen_kubeconfig() {
  local state="$1"
  if [ "${CAPSTAN_USE_KUBECONFIG:-}" = 1 ]; then
    local chosen="${KUBECONFIG:-$HOME/.kube/config}"
    if [ ! -f "${chosen%%:*}" ]; then
      echo "CAPSTAN_USE_KUBECONFIG=1, but there is no kubeconfig at ${chosen%%:*} (set KUBECONFIG)" >&2
      return 1
    fi
    echo "[capstan] using the cluster of KUBECONFIG=$chosen (CAPSTAN_USE_KUBECONFIG=1)" >&2
    echo "$chosen"
  elif [ -n "${KUBECONFIG:-}" ] && [ "$KUBECONFIG" != "$state/kubeconfig" ]; then
    echo "[capstan] not using KUBECONFIG=$KUBECONFIG: using the local cluster (CAPSTAN_USE_KUBECONFIG=1 to use it)" >&2
  fi
}
