#!/usr/bin/env bash
# Cluster add-ons for the real node (node.sh), as kind installs them: CoreDNS (Service kube-dns at the kubelet's
# clusterDNS 10.96.0.10) and rancher's local-path-provisioner (StorageClass `standard`, default,
# WaitForFirstConsumer). Images are built from the Go module proxy (build.sh, cached by version in
# versions.env) and imported under upstream's names, so the manifests are upstream's and need no registry.
#   addons.sh up       build and import what is missing, apply the manifests, wait for the Deployments' pods
#   addons.sh down     delete what up applied (claims and volumes of the `standard` class are left alone)
#   addons.sh status   print the Deployments' availability
# Reads CAPSTAN_CLUSTER_DIR (default <repo>/.cluster) and the node name (CAPSTAN_NODE_NAME) as node.sh does.
# Both are idempotent: up on a cluster where all is in place only re-applies the (unchanged) manifests.
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
images="$repo/e2e/images"
node="$state/node"
NODE_NAME="${CAPSTAN_NODE_NAME:-capstan-node-0}"
COREDNS_IMAGE="registry.k8s.io/coredns/coredns:$COREDNS_VERSION"
LOCAL_PATH_IMAGE="rancher/local-path-provisioner:$LOCAL_PATH_PROVISIONER_VERSION"
BUSYBOX_IMAGE="${BUSYBOX_IMAGE:-capstan.local/busybox:1}"
LOCAL_PATH_DIR="$node/local-path"   # where volumes live on the node (node.sh down removes it)

log() { printf '[addons] %s\n' "$*" >&2; }
node_sh() { "$here/node.sh" "$@"; }

full_ref() { # what containerd calls an image: docker.io/ (and library/) for names without a registry
  local r="$1" first="${1%%/*}"
  if [[ "$r" != */* ]]; then r="docker.io/library/$r"
  elif [[ "$first" != *.* && "$first" != *:* && "$first" != localhost ]]; then r="docker.io/$r"; fi
  echo "$r"
}

import() { # ref tarball: imports unless containerd has the image from this very tarball already
  local ref="$1" tar="$2" stamp have
  stamp="$node/images/$(basename "$2").imported"
  have="$(node_sh ctr -n k8s.io images ls -q)" # not piped into grep -q: SIGPIPE under pipefail
  if [ -f "$stamp" ] && ! [ "$stamp" -ot "$tar" ] && grep -qxF "$(full_ref "$ref")" <<<"$have"; then
    return 0
  fi
  node_sh import "$tar" >/dev/null
  mkdir -p "$node/images" && touch "$stamp"
  log "imported $ref"
}

render() { # the manifests with the placeholders filled in
  sed -e "s|@IMAGE@|$COREDNS_IMAGE|g" -e "s|@NODE@|$NODE_NAME|g" "$images/coredns/coredns.yaml"
  echo "---"
  sed -e "s|@IMAGE@|$LOCAL_PATH_IMAGE|g" -e "s|@HELPER_IMAGE@|$BUSYBOX_IMAGE|g" -e "s|@NODE@|$NODE_NAME|g" \
    -e "s|@PATH@|$LOCAL_PATH_DIR|g" "$images/local-path/local-path-storage.yaml"
}

cmd_up() {
  if [ ! -f "$state/kubeconfig" ] || ! kubectl_ get --raw /readyz >/dev/null 2>&1; then die "no control plane at $state"; fi
  node_sh status >/dev/null 2>&1 || die "no real node: run node.sh up first"
  local t0=$SECONDS coredns_tar lpp_tar busybox_tar
  coredns_tar="$("$images/coredns/build.sh")"
  lpp_tar="$("$images/local-path/build.sh")"
  mkdir -p "$node/images" "$LOCAL_PATH_DIR"
  busybox_tar="$node/images/busybox.tar"
  if [ ! -f "$busybox_tar" ]; then BUSYBOX_IMAGE="$BUSYBOX_IMAGE" "$images/busybox/build.sh" "$node/images" >/dev/null; fi
  import "$COREDNS_IMAGE" "$coredns_tar"
  import "$LOCAL_PATH_IMAGE" "$lpp_tar"
  import "$BUSYBOX_IMAGE" "$busybox_tar"
  render | kubectl_ apply -f - >/dev/null
  # rollout status, not `wait --for=condition=Available`: with one replica and maxUnavailable 1 (upstream's
  # CoreDNS strategy) a Deployment is Available before its pod is ready.
  kubectl_ -n kube-system rollout status deployment/coredns --timeout=180s >/dev/null \
    || die "CoreDNS is not available (kubectl -n kube-system describe pods -l k8s-app=kube-dns)"
  kubectl_ -n local-path-storage rollout status deployment/local-path-provisioner --timeout=180s >/dev/null \
    || die "local-path-provisioner is not available (kubectl -n local-path-storage describe pods)"
  log "ready: CoreDNS $COREDNS_VERSION (kube-dns 10.96.0.10), local-path-provisioner $LOCAL_PATH_PROVISIONER_VERSION (StorageClass standard) in $((SECONDS - t0))s"
}

cmd_down() {
  if [ ! -f "$state/kubeconfig" ] || ! kubectl_ get --raw /readyz >/dev/null 2>&1; then return 0; fi
  render | kubectl_ delete -f - --ignore-not-found --wait=true --timeout=60s >/dev/null 2>&1 || true
  log "removed CoreDNS and local-path-provisioner"
}

cmd_status() {
  local rc=0 ns d s
  for nd in kube-system/coredns local-path-storage/local-path-provisioner; do
    ns="${nd%/*}" d="${nd#*/}"
    s="$(kubectl_ -n "$ns" get deployment "$d" -o jsonpath='{.status.conditions[?(@.type=="Available")].status}' 2>/dev/null || true)"
    if [ "$s" = True ]; then printf '%-24s Available\n' "$d"; else printf '%-24s not available\n' "$d"; rc=1; fi
  done
  return $rc
}

case "${1:-}" in
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  *) echo "usage: $0 up|down|status" >&2; exit 2 ;;
esac
