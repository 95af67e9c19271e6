#!/usr/bin/env bash
# Builds capstan.local/versitygw:<v> without a registry: the Versity S3 Gateway with its posix backend (objects
# are files under a directory; auth on with a root access key), the real S3-compatible server the etcd backup
# suites upload to. Chosen over SeaweedFS, which builds but costs 3x the CPU (measured on this 2-core machine
# from empty Go caches: SeaweedFS 4.53 1243 CPU-s, 481 MB of module zips, a 164 MB binary; versitygw v1.8.0
# 385 CPU-s, 109 MB, 45 MB; see docs/local-cluster.md). `go install module@version` (no replace directives),
# static (CGO_ENABLED=0), version ldflags as upstream's Makefile sets them. Laid out like upstream's image
# (/usr/local/bin/versitygw) without its alpine base and entrypoint script: ENTRYPOINT versitygw, user 1000, a
# world-writable /data (pack.sh writes all owners as root). The binary is cached by version in
# $CAPSTAN_CACHE/versitygw-<v>/bin; a tarball newer than this script is skipped. Prints the tarball.
#   e2e/images/versitygw/build.sh OUT_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:?usage: $0 OUT_DIR}"
version="${VERSITYGW_VERSION:-v1.8.0}"
ref="${VERSITYGW_IMAGE:-capstan.local/versitygw:$version}"
cache="${CAPSTAN_CACHE:-$HOME/.cache/capstan}"
tarball="$out/versitygw_$version.tar"
log() { printf '[versitygw] %s\n' "$*" >&2; }
fresh() { [ -f "$tarball" ] && [ "$tarball" -nt "$here/build.sh" ]; }
if fresh; then echo "$tarball"; exit 0; fi
# One build at a time: CI starts one in the background and the e2e run's etcd lane waits for it here.
mkdir -p "$cache" && exec 9>"$cache/versitygw-$version.lock"
if ! flock -n 9; then log "waiting for another build of versitygw $version" && flock 9; fi
if fresh; then echo "$tarball"; exit 0; fi
mod=github.com/versity/versitygw
bin="$cache/versitygw-$version/bin"
build_id="$(sha256sum "$here/build.sh" | cut -c1-16)"
if [ ! -x "$bin/versitygw" ] || [ "$(cat "$bin/.build" 2>/dev/null)" != "$build_id" ]; then
  log "building versitygw $version from the Go module proxy (cold: about 3 CPU-minutes)"
  mkdir -p "$bin"
  built="$(cd /tmp && GOFLAGS=-mod=mod go list -m -f '{{.Time.UTC.Format "2006-01-02T15:04:05Z"}}' "$mod@$version")"
  (
    cd /tmp
    export CGO_ENABLED=0 GOTOOLCHAIN=local GOBIN="$bin/.gobin"
    nice go install -p "${GO_BUILD_P:-2}" -trimpath \
      -ldflags "-s -w -X main.Version=$version -X main.Build=$version -X main.BuildTime=$built" "$mod/cmd/versitygw@$version"
  )
  mv "$bin/.gobin/versitygw" "$bin/versitygw" && rmdir "$bin/.gobin" && echo "$build_id" >"$bin/.build"
fi
rootfs="$(mktemp -d)" && chmod 0755 "$rootfs"
trap 'rm -rf "$rootfs"' EXIT
mkdir -p "$rootfs"/{usr/local/bin,etc,tmp,data,home/versitygw}
chmod 1777 "$rootfs/tmp"; chmod 0777 "$rootfs/data" "$rootfs/home/versitygw"
cp "$bin/versitygw" "$rootfs/usr/local/bin/versitygw" && chmod 0755 "$rootfs/usr/local/bin/versitygw"
[ -f /etc/ssl/certs/ca-certificates.crt ] && mkdir -p "$rootfs/etc/ssl/certs" && cp -L /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/:/sbin/nologin\nversitygw:x:1000:1000:versitygw:/home/versitygw:/sbin/nologin\n' >"$rootfs/etc/passwd"
printf 'root:x:0:\nnobody:x:65534:\nversitygw:x:1000:\n' >"$rootfs/etc/group"
"$here/../pack.sh" "$rootfs" "$ref" "$tarball.tmp" \
  '{"User":"1000:1000","Entrypoint":["/usr/local/bin/versitygw"],"Cmd":["--port",":7070","posix","/data"],"WorkingDir":"/data","ExposedPorts":{"7070/tcp":{}},"Volumes":{"/data":{}},"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin","HOME=/home/versitygw"]}'
mv "$tarball.tmp" "$tarball"
echo "$tarball"
