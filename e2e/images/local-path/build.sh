#!/usr/bin/env bash
# Builds rancher's local-path-provisioner image without a registry: the static binary from
# e2e/cluster/local/build.sh (go install, CGO_ENABLED=0, cached by version) at /usr/bin in a scratch-like rootfs,
# packed as a docker-save tarball named as upstream's, rancher/local-path-provisioner:<version> (containerd
# stores it as docker.io/rancher/…). The tarball is cached beside the binary. Its helper pods (mkdir/rm of the
# volume directory) use the busybox image (e2e/images/busybox).
#   e2e/images/local-path/build.sh       -> prints the tarball
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=../../cluster/local/versions.env
source "$here/../../cluster/local/versions.env"
v="$LOCAL_PATH_PROVISIONER_VERSION"
cache="${CAPSTAN_CACHE:-$HOME/.cache/capstan}/local-path-provisioner-$v"
ref="rancher/local-path-provisioner:$v"
out="$cache/local-path-provisioner-image.tar"
if [ ! -f "$out" ] || [ "$out" -ot "$cache/bin/local-path-provisioner" ]; then
  "$here/../../cluster/local/build.sh" local-path >/dev/null
  rootfs="$(mktemp -d)" && chmod 755 "$rootfs"
  trap 'rm -rf "$rootfs"' EXIT
  mkdir -p "$rootfs/usr/bin" "$rootfs/etc" "$rootfs/tmp"
  chmod 1777 "$rootfs/tmp"
  cp "$cache/bin/local-path-provisioner" "$rootfs/usr/bin/local-path-provisioner"
  printf 'root:x:0:0:root:/:/usr/bin/local-path-provisioner\n' >"$rootfs/etc/passwd"
  "$here/../pack.sh" "$rootfs" "$ref" "$out.tmp" \
    '{"Cmd":["local-path-provisioner"],"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]}'
  mv "$out.tmp" "$out"
fi
echo "$out"
