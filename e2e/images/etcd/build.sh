#!/usr/bin/env bash
# Builds gcr.io/etcd-development/etcd:<v> images without a registry, one per version (upgrade tests need
# two): etcd, etcdctl and etcdutl built static (CGO_ENABLED=0) from the Go module proxy through a wrapper
# module (the server module has replace directives), laid out like upstream's image (distroless static):
# /usr/local/bin/{etcd,etcdctl,etcdutl}, CMD /usr/local/bin/etcd, WORKDIR /var/etcd, root by default with a
# nonroot user (65532) in /etc/passwd. Binaries are cached in $CAPSTAN_CACHE/etcd-<v>/bin, the directory
# e2e/cluster/local/build.sh uses too. Skips a tarball newer than this script. Prints the tarballs.
#   e2e/images/etcd/build.sh OUT_DIR [VERSION...]     (default: $ETCD_IMAGE_VERSIONS or v3.6.15 v3.6.16)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:?usage: $0 OUT_DIR [VERSION...]}"; shift
# shellcheck disable=SC2206
versions=(${@:-${ETCD_IMAGE_VERSIONS:-v3.6.15 v3.6.16}})
cache="${CAPSTAN_CACHE:-$HOME/.cache/capstan}"
log() { printf '[etcd-image] %s\n' "$*" >&2; }
export GOFLAGS="${GOFLAGS:-} -mod=mod -gcflags=all=-dwarf=false" CGO_ENABLED=0 GOTOOLCHAIN=local

build_bins() { # VERSION -> $cache/etcd-VERSION/bin/{etcd,etcdctl,etcdutl}
  local v="$1" bin="$cache/etcd-$1/bin" work="$cache/etcd-$1/src-image" m c
  local -A pkg=([etcd]=go.etcd.io/etcd/server/v3 [etcdctl]=go.etcd.io/etcd/etcdctl/v3 [etcdutl]=go.etcd.io/etcd/etcdutl/v3)
  for c in etcd etcdctl etcdutl; do [ -x "$bin/$c" ] || break; [ "$c" = etcdutl ] && return 0; done
  log "building etcd $v binaries"
  mkdir -p "$work" "$bin"
  (
    cd "$work"
    [ -f go.mod ] || go mod init capstan.local/etcd-image-build >/dev/null 2>&1
    for m in "${pkg[@]}"; do go mod edit -require="$m@$v"; done
    { printf '//go:build tools\n\npackage tools\n\nimport (\n'; for m in "${pkg[@]}"; do printf '\t_ "%s"\n' "$m"; done; printf ')\n'; } >tools.go
    go mod tidy >/dev/null 2>&1 || go mod download all
    for c in etcd etcdctl etcdutl; do
      [ -x "$bin/$c" ] && continue
      nice go build -trimpath -ldflags "-s -w" -o "$bin/$c.tmp" "${pkg[$c]}" && mv "$bin/$c.tmp" "$bin/$c"
    done
  )
}

for v in "${versions[@]}"; do
  tarball="$out/etcd_$v.tar"
  if [ -f "$tarball" ] && [ "$tarball" -nt "$here/build.sh" ]; then echo "$tarball"; continue; fi
  build_bins "$v"
  rootfs="$(mktemp -d)" && chmod 0755 "$rootfs"
  mkdir -p "$rootfs/usr/local/bin" "$rootfs/etc" "$rootfs/tmp" "$rootfs/var/etcd" "$rootfs/var/lib/etcd" "$rootfs/home/nonroot"
  chmod 1777 "$rootfs/tmp"; chmod 0700 "$rootfs/var/lib/etcd"
  cp "$cache/etcd-$v/bin/etcd" "$cache/etcd-$v/bin/etcdctl" "$cache/etcd-$v/bin/etcdutl" "$rootfs/usr/local/bin/"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$rootfs/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n' >"$rootfs/etc/group"
  "$here/../pack.sh" "$rootfs" "${ETCD_IMAGE_REPO:-gcr.io/etcd-development/etcd}:$v" "$tarball.tmp" \
    '{"Cmd":["/usr/local/bin/etcd"],"WorkingDir":"/var/etcd/","ExposedPorts":{"2379/tcp":{},"2380/tcp":{}},"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]}'
  rm -rf "$rootfs"
  mv "$tarball.tmp" "$tarball"
  echo "$tarball"
done
