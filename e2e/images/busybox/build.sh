#!/usr/bin/env bash
# Builds a small busybox image without a registry, from Debian's busybox-static (installed if missing):
# /bin/busybox plus a link per applet, packed as a docker-save tarball named capstan.local/busybox:1
# (pods use it with imagePullPolicy: IfNotPresent after `node.sh import`). Prints the tarball.
#   e2e/images/busybox/build.sh OUT_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:?usage: $0 OUT_DIR}"
ref="${BUSYBOX_IMAGE:-capstan.local/busybox:1}"
if ! dpkg -s busybox-static >/dev/null 2>&1; then
  sudo=() && if [ "$(id -u)" != 0 ]; then sudo=(sudo); fi # e.g. a CI runner's user
  "${sudo[@]}" apt-get update >/dev/null && "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y busybox-static >/dev/null
fi
rootfs="$out/busybox-rootfs"
rm -rf "$rootfs" && mkdir -p "$rootfs/bin" "$rootfs/etc" "$rootfs/tmp" "$rootfs/root"
chmod 1777 "$rootfs/tmp"
cp /bin/busybox "$rootfs/bin/busybox"
for applet in $("$rootfs/bin/busybox" --list); do [ -e "$rootfs/bin/$applet" ] || ln -s busybox "$rootfs/bin/$applet"; done
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$rootfs/etc/passwd"
printf 'root:x:0:\nnobody:x:65534:\n' >"$rootfs/etc/group"
"$here/../pack.sh" "$rootfs" "$ref" "$out/busybox.tar" '{"Cmd":["sh"],"Env":["PATH=/bin"]}'
rm -rf "$rootfs"
echo "$out/busybox.tar"
