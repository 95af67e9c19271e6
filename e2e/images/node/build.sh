#!/usr/bin/env bash
# Builds the Node.js base image for operator images, capstan.local/node:<major>, without a registry: the
# node binary the repo pins (npm package node, at node_modules/node/bin/node) with its debug info stripped,
# plus exactly the glibc/libstdc++ libraries `ldd` lists for it, copied from this Debian 12 machine (node is
# dynamically linked to glibc), a merged-/usr layout, CA certificates, and /etc/passwd with user node (1000).
# No shell and no package manager. CMD ["node"], like upstream's node image. Skips a tarball newer than
# this script and the node binary. Prints the tarball.
#   e2e/images/node/build.sh OUT_DIR       (NODE_BIN overrides the binary)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:?usage: $0 OUT_DIR}"
node_bin="${NODE_BIN:-$here/../../../node_modules/node/bin/node}"
[ -x "$node_bin" ] || { echo "no node binary at $node_bin (run npm ci first or set NODE_BIN)" >&2; exit 1; }
full="$("$node_bin" --version)"; full="${full#v}"
ref="${NODE_IMAGE:-capstan.local/node:${full%%.*}}"
tarball="$out/node_${full%%.*}.tar"
if [ -f "$tarball" ] && [ "$tarball" -nt "$here/build.sh" ] && [ "$tarball" -nt "$node_bin" ]; then echo "$tarball"; exit 0; fi

rootfs="$(mktemp -d)" && chmod 0755 "$rootfs"
trap 'rm -rf "$rootfs"' EXIT
mkdir -p "$rootfs"/usr/{bin,lib,lib64,sbin} "$rootfs"/{etc/ssl/certs,tmp,home/node,root,app}
for d in bin lib lib64 sbin; do ln -s "usr/$d" "$rootfs/$d"; done
chmod 1777 "$rootfs/tmp"; chmod 0700 "$rootfs/root"
cp "$node_bin" "$rootfs/usr/bin/node"
strip --strip-debug "$rootfs/usr/bin/node"
# Every library the dynamic loader needs, at the path ldd resolves it to (/lib -> /usr/lib in the image too).
for lib in $(ldd "$node_bin" | grep -oE '/[^ ]+'); do
  mkdir -p "$rootfs$(dirname "$lib")"
  cp -L "$lib" "$rootfs$lib"
done
cp -L /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"
printf 'root:x:0:0:root:/root:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\nnode:x:1000:1000::/home/node:/usr/sbin/nologin\n' >"$rootfs/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\nnode:x:1000:\n' >"$rootfs/etc/group"
printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$rootfs/etc/nsswitch.conf"
chown 1000:1000 "$rootfs/home/node"   # (pack.sh writes owners as root; the mode keeps it usable)
chmod 0777 "$rootfs/home/node"
chmod -R go+rX "$rootfs"
# Smoke test before packing (needs root for chroot).
if [ "$(id -u)" = 0 ]; then
  [ "$(chroot "$rootfs" /usr/bin/node -e 'console.log(1)')" = 1 ] || { echo "node does not run in the image rootfs" >&2; exit 1; }
fi
"$here/../pack.sh" "$rootfs" "$ref" "$tarball.tmp" \
  "{\"Cmd\":[\"node\"],\"WorkingDir\":\"/app\",\"Env\":[\"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\",\"NODE_VERSION=$full\",\"SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt\"]}"
mv "$tarball.tmp" "$tarball"
echo "$tarball"
