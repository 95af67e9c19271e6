#!/usr/bin/env bash
# Builds the local cluster's binaries from the Go module proxy into a cache outside the repo, keyed by
# version (CAPSTAN_CACHE, default ~/.cache/capstan). A second run with the same versions does nothing.
#   e2e/cluster/local/build.sh [all|cluster|kubernetes|etcd|kwok|helm|coredns|local-path|addons|kube-router]
#     cluster  what a cluster with its real node runs (Kubernetes, etcd, Helm, kube-router, the add-ons): npm start
#     all      that and kwok (fake nodes: CAPSTAN_NODE=kwok or CAPSTAN_KWOK_NODE=1; cluster.sh builds it when asked)
#   -> prints the cache directory
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=versions.env
source "$here/versions.env"
cache="${CAPSTAN_CACHE:-$HOME/.cache/capstan}"
# -dwarf=false: no debug information compiled (the links strip it anyway, -ldflags -s -w): the same binaries for
# about 8% less compile CPU (Helm v3.22.0 cold: 230 instead of 249 CPU-s, measured 2026-12-07).
export GOFLAGS="${GOFLAGS:-} -mod=mod -gcflags=all=-dwarf=false" CGO_ENABLED=0 GOTOOLCHAIN=local
log() { printf '[build] %s\n' "$*" >&2; }

# --- Kubernetes: a wrapper module replaces each staging module (v0.0.0) with its published twin. ---
k8s_bin="$cache/kubernetes-$KUBERNETES_VERSION/bin"
k8s_cmds=(kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet kube-proxy)
build_kubernetes() {
  local missing=0
  for c in "${k8s_cmds[@]}"; do [ -x "$k8s_bin/$c" ] || missing=1; done
  [ "$missing" = 0 ] && return 0
  log "building Kubernetes $KUBERNETES_VERSION (cold: several minutes on 2 cores)"
  local work="$cache/kubernetes-$KUBERNETES_VERSION/src"
  mkdir -p "$work" "$k8s_bin"
  local staging="v0${KUBERNETES_VERSION#v1}"
  (
    cd "$work"
    [ -f go.mod ] || go mod init capstan.local/k8s-build >/dev/null 2>&1
    local gomod
    gomod="$(go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
    go mod edit -require="k8s.io/kubernetes@$KUBERNETES_VERSION"
    for m in $(grep -oE '^\s*k8s.io/[a-z0-9-]+ => ./staging' "$gomod" | awk '{print $1}'); do
      go mod edit -replace="$m=$m@$staging"
    done
    cat > tools.go <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
)
GO
    go mod tidy >/dev/null 2>&1 || go mod download all
    local minor="${KUBERNETES_VERSION#v1.}"; minor="${minor%%.*}"
    local date; date="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    local ld=""
    for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
      ld+=" -X $pkg.gitVersion=$KUBERNETES_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
      ld+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$date"
    done
    for c in "${k8s_cmds[@]}"; do
      [ -x "$k8s_bin/$c" ] && continue
      log "  go build $c"
      go build -p "${GO_BUILD_P:-2}" -trimpath -ldflags "-s -w $ld" -o "$k8s_bin/$c.tmp" "k8s.io/kubernetes/cmd/$c"
      mv "$k8s_bin/$c.tmp" "$k8s_bin/$c"
    done
  )
}

# --- etcd: the server module has replace directives too; a wrapper module builds its main package. etcdutl too:
# the etcd operator's unit tests run the restore Job's `etcdutl snapshot restore` against these binaries, before any
# image (e2e/images/etcd, which shares this directory) is built. ---
etcd_bin="$cache/etcd-$ETCD_VERSION/bin"
build_etcd() {
  [ -x "$etcd_bin/etcd" ] && [ -x "$etcd_bin/etcdctl" ] && [ -x "$etcd_bin/etcdutl" ] && return 0
  log "building etcd $ETCD_VERSION"
  local work="$cache/etcd-$ETCD_VERSION/src"
  mkdir -p "$work" "$etcd_bin"
  (
    cd "$work"
    [ -f go.mod ] || go mod init capstan.local/etcd-build >/dev/null 2>&1
    go mod edit -require="go.etcd.io/etcd/server/v3@$ETCD_VERSION" -require="go.etcd.io/etcd/etcdctl/v3@$ETCD_VERSION" \
      -require="go.etcd.io/etcd/etcdutl/v3@$ETCD_VERSION"
    cat > tools.go <<'GO'
//go:build tools

package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "go.etcd.io/etcd/etcdctl/v3"
	_ "go.etcd.io/etcd/etcdutl/v3"
)
GO
    go mod tidy >/dev/null 2>&1 || go mod download all
    local c p
    for c in etcd:go.etcd.io/etcd/server/v3 etcdctl:go.etcd.io/etcd/etcdctl/v3 etcdutl:go.etcd.io/etcd/etcdutl/v3; do
      p="${c#*:}" && c="${c%%:*}"
      [ -x "$etcd_bin/$c" ] && continue
      go build -trimpath -ldflags "-s -w" -o "$etcd_bin/$c.tmp" "$p" && mv "$etcd_bin/$c.tmp" "$etcd_bin/$c" || exit 1
    done
  )
}

# --- kwok: fake nodes (no replace directives; go install works). Its stage configs ship in the module. ---
kwok_dir="$cache/kwok-$KWOK_VERSION"
build_kwok() {
  [ -x "$kwok_dir/bin/kwok" ] && [ -d "$kwok_dir/stages" ] && return 0
  # One build at a time (CI builds it in the background while a suite's cluster.sh may ask for it).
  mkdir -p "$cache"
  exec 8>"$kwok_dir.lock" && flock 8
  [ -x "$kwok_dir/bin/kwok" ] && [ -d "$kwok_dir/stages" ] && return 0
  log "building kwok $KWOK_VERSION"
  mkdir -p "$kwok_dir/bin"
  GOBIN="$kwok_dir/bin" go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
  local src
  src="$(go mod download -json "sigs.k8s.io/kwok@$KWOK_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
  rm -rf "$kwok_dir/stages.tmp" && mkdir -p "$kwok_dir/stages.tmp"
  for f in "$src"/kustomize/stage/node/fast/*.yaml "$src"/kustomize/stage/pod/fast/*.yaml; do
    case "$(basename "$f")" in kustomization.yaml) ;; *) cp "$f" "$kwok_dir/stages.tmp/" ;; esac
  done
  chmod -R u+w "$kwok_dir/stages.tmp" && mv "$kwok_dir/stages.tmp" "$kwok_dir/stages"
}

# --- Helm: no replace directives; `go install` works. The ldflags are those of Helm's Makefile (version,
# and the Kubernetes version its client-go twin targets, which .Capabilities.KubeVersion defaults to). ---
helm_dir="$cache/helm-$HELM_VERSION"
build_helm() {
  [ -x "$helm_dir/bin/helm" ] && return 0
  log "building Helm $HELM_VERSION"
  mkdir -p "$helm_dir/bin"
  local major="${HELM_VERSION%%.*}" gomod cg
  gomod="$(go mod download -json "helm.sh/helm/$major@$HELM_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
  cg="$(awk '$1 == "k8s.io/client-go" {print $2}' "$gomod")"; cg="${cg#v0.}"
  local p="helm.sh/helm/$major" k8s_major=1 k8s_minor="${cg%%.*}"
  local ld="-s -w -X $p/internal/version.version=$HELM_VERSION -X $p/internal/version.gitTreeState=clean"
  ld+=" -X $p/pkg/lint/rules.k8sVersionMajor=$k8s_major -X $p/pkg/lint/rules.k8sVersionMinor=$k8s_minor"
  ld+=" -X $p/pkg/chartutil.k8sVersionMajor=$k8s_major -X $p/pkg/chartutil.k8sVersionMinor=$k8s_minor"
  GOBIN="$helm_dir/bin" go install -trimpath -ldflags "$ld" "$p/cmd/helm@$HELM_VERSION"
}

# --- cluster add-ons (addons.sh): CoreDNS and local-path-provisioner; no replace directives, go install works. ---
coredns_dir="$cache/coredns-$COREDNS_VERSION"
build_coredns() {
  [ -x "$coredns_dir/bin/coredns" ] && return 0
  log "building CoreDNS $COREDNS_VERSION"
  mkdir -p "$coredns_dir/bin"
  GOBIN="$coredns_dir/bin" go install -trimpath -ldflags "-s -w" "github.com/coredns/coredns@$COREDNS_VERSION"
}
lpp_dir="$cache/local-path-provisioner-$LOCAL_PATH_PROVISIONER_VERSION"
build_local_path() {
  [ -x "$lpp_dir/bin/local-path-provisioner" ] && return 0
  log "building local-path-provisioner $LOCAL_PATH_PROVISIONER_VERSION"
  mkdir -p "$lpp_dir/bin"
  GOBIN="$lpp_dir/bin" go install -trimpath -ldflags "-s -w -X main.VERSION=$LOCAL_PATH_PROVISIONER_VERSION" \
    "github.com/rancher/local-path-provisioner@$LOCAL_PATH_PROVISIONER_VERSION"
}

# --- kube-router: only its NetworkPolicy controller runs (node.sh), so pods' NetworkPolicies are enforced with
# iptables + ipsets. The proxy serves v2.1.0 only; a wrapper module builds it with the dependencies that have
# published security fixes bumped to fixed versions that still compile with it (KUBE_ROUTER_BUMPS). ---
kr_dir="$cache/kube-router-$KUBE_ROUTER_VERSION"
build_kube_router() {
  [ -x "$kr_dir/bin/kube-router" ] && return 0
  log "building kube-router $KUBE_ROUTER_VERSION"
  local work="$kr_dir/src" p=github.com/cloudnativelabs/kube-router/v2
  mkdir -p "$work" "$kr_dir/bin"
  (
    cd "$work"
    [ -f go.mod ] || go mod init capstan.local/kube-router-build >/dev/null 2>&1
    go mod edit -require="$p@$KUBE_ROUTER_VERSION"
    for m in $KUBE_ROUTER_BUMPS; do go mod edit -require="$m"; done
    cat > tools.go <<'GO'
//go:build tools

package tools

import _ "github.com/cloudnativelabs/kube-router/v2/cmd/kube-router"
GO
    go mod tidy >/dev/null 2>&1 || go mod download all
    go build -trimpath -ldflags "-s -w -X $p/pkg/version.Version=$KUBE_ROUTER_VERSION" \
      -o "$kr_dir/bin/kube-router.tmp" "$p/cmd/kube-router"
    mv "$kr_dir/bin/kube-router.tmp" "$kr_dir/bin/kube-router"
  )
}

what="${1:-all}"
case "$what" in
  kubernetes) build_kubernetes ;;
  kwok) build_kwok ;;
  helm) build_helm ;;
  coredns) build_coredns ;;
  local-path) build_local_path ;;
  addons) build_coredns; build_local_path ;;
  etcd) build_etcd ;;
  kube-router) build_kube_router ;;
  all | cluster)
    # Kubernetes, the longest build, beside the others (which include the add-ons, so the cluster's start finds them):
    # its module download and its six links leave a core idle that they use. Cold on 2 cores, one after the other,
    # these took 11 (etcd, kwok, Helm), 28 (Kubernetes), 2 (kube-router) and 4.5 (add-ons) minutes (2026-12-07).
    # kwok only for `all`: a cluster with its real node does not run it, and cold it took 11 of npm start's minutes
    # beside Kubernetes (2026-12-07).
    build_kubernetes &
    k8s=$!
    killtree() { local c; for c in $(pgrep -P "$1"); do killtree "$c"; done; kill "$1" 2>/dev/null || true; }
    trap 'killtree "$k8s"' EXIT
    build_etcd; build_helm; build_kube_router; build_coredns; build_local_path
    if [ "$what" = all ]; then build_kwok; fi
    wait "$k8s" # its failure fails this script (set -e)
    trap - EXIT
    ;;
  *) echo "usage: $0 [all|cluster|kubernetes|etcd|kwok|helm|coredns|local-path|addons|kube-router]" >&2; exit 2 ;;
esac
echo "$cache"
