#!/usr/bin/env bash
# Builds the pod sandbox ("pause") image without a registry: pause.c compiled static, packed as a docker-save
# tarball named registry.k8s.io/pause:3.10 (what containerd's sandbox_image points at). Prints the tarball.
#   e2e/images/pause/build.sh OUT_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:?usage: $0 OUT_DIR}"
ref="${PAUSE_IMAGE:-registry.k8s.io/pause:3.10}"
rootfs="$out/pause-rootfs"
rm -rf "$rootfs" && mkdir -p "$rootfs"
gcc -Os -static -s -o "$rootfs/pause" "$here/pause.c"
"$here/../pack.sh" "$rootfs" "$ref" "$out/pause.tar" '{"Entrypoint":["/pause"],"User":"65535:65535"}'
rm -rf "$rootfs"
echo "$out/pause.tar"
