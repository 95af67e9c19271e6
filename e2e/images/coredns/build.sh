#!/usr/bin/env bash
# Builds the CoreDNS image without a registry: the static binary from e2e/cluster/local/build.sh (go install,
# CGO_ENABLED=0, cached by version) alone in a scratch-like rootfs, packed as a docker-save tarball named as
# upstream's, registry.k8s.io/coredns/coredns:<COREDNS_VERSION>. The tarball is cached beside the binary, so a
# second run only prints its path.
#   e2e/images/coredns/build.sh          -> prints the tarball
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=../../cluster/local/versions.env
source "$here/../../cluster/local/versions.env"
cache="${CAPSTAN_CACHE:-$HOME/.cache/capstan}/coredns-$COREDNS_VERSION"
ref="registry.k8s.io/coredns/coredns:$COREDNS_VERSION"
out="$cache/coredns-image.tar"
if [ ! -f "$out" ] || [ "$out" -ot "$cache/bin/coredns" ]; then
  "$here/../../cluster/local/build.sh" coredns >/dev/null
  rootfs="$(mktemp -d)" && chmod 755 "$rootfs"
  trap 'rm -rf "$rootfs"' EXIT
  mkdir -p "$rootfs/etc/coredns" "$rootfs/tmp"
  chmod 1777 "$rootfs/tmp"
  cp "$cache/bin/coredns" "$rootfs/coredns"
  printf 'root:x:0:0:root:/:/coredns\nnonroot:x:65532:65532:nonroot:/:/coredns\n' >"$rootfs/etc/passwd"
  "$here/../pack.sh" "$rootfs" "$ref" "$out.tmp" '{"Entrypoint":["/coredns"],"ExposedPorts":{"53/tcp":{},"53/udp":{}}}'
  mv "$out.tmp" "$out"
fi
echo "$out"
