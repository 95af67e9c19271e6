#!/usr/bin/env bash
# Builds capstan.local/seaweedfs:<v> without a registry: SeaweedFS's `weed` (one binary: master, volume, filer
# and the S3 gateway), the real S3-compatible server the etcd backup suites upload to. The Go module proxy
# serves SeaweedFS only as a pseudo-version (SEAWEEDFS_MODULE_VERSION; its go.mod says which release it is, read
# here from weed/util/version and checked against SEAWEEDFS_VERSION so the image tag cannot drift). Its go.mod
# has a replace directive, so `go install module@version` is refused: a wrapper module repeats upstream's
# require and replace lists (every dependency at upstream's version) and builds ./weed static (CGO_ENABLED=0).
# The tag is capstan.local/…, not upstream's chrislusf/seaweedfs: the layout is ours (no entrypoint.sh, no
# shell). /usr/bin/weed, /data (world-writable: pack.sh writes all owners as root), /etc/seaweedfs, user
# seaweed (uid 1000), ENTRYPOINT weed, CMD server -dir=/data -s3. The binary is cached by module version in
# $CAPSTAN_CACHE/seaweedfs-<module version>/bin with what built it ($bin/.build); a tarball newer than this
# script is skipped. Prints the tarball.
#   e2e/images/seaweedfs/build.sh OUT_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:?usage: $0 OUT_DIR}"
module_version="${SEAWEEDFS_MODULE_VERSION:-v0.0.0-20261109003541-7506e5f91cd6}"
version="${SEAWEEDFS_VERSION:-4.53}" # what that module version's weed/util/version/constants.go says
ref="${SEAWEEDFS_IMAGE:-capstan.local/seaweedfs:$version}"
cache="${CAPSTAN_CACHE:-$HOME/.cache/capstan}"
tarball="$out/seaweedfs_$version.tar"
log() { printf '[seaweedfs] %s\n' "$*" >&2; }
fresh() { [ -f "$tarball" ] && [ "$tarball" -nt "$here/build.sh" ]; }
if fresh; then echo "$tarball"; exit 0; fi
# One build at a time: CI starts one in the background and the e2e run's etcd lane waits for it here.
mkdir -p "$cache" && exec 9>"$cache/seaweedfs-$module_version.lock"
if ! flock -n 9; then log "waiting for another build of SeaweedFS $version" && flock 9; fi
if fresh; then echo "$tarball"; exit 0; fi
export GOFLAGS="${GOFLAGS:-} -mod=mod" CGO_ENABLED=0 GOTOOLCHAIN=local
mod=github.com/seaweedfs/seaweedfs
work="$cache/seaweedfs-$module_version/src" bin="$cache/seaweedfs-$module_version/bin"
build_id="$(sha256sum "$here/build.sh" | cut -c1-16)"
if [ ! -x "$bin/weed" ] || [ "$(cat "$bin/.build" 2>/dev/null)" != "$build_id" ]; then
  log "building SeaweedFS $version ($module_version) from the Go module proxy"
  info="$(cd /tmp && go mod download -json "$mod@$module_version")"
  dir="$(printf '%s\n' "$info" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
  gomod="$(printf '%s\n' "$info" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
  have="$(sed -n 's/.*\(MAJOR\|MINOR\)_VERSION *= *int32(\([0-9]*\)).*/\2/p' "$dir/weed/util/version/constants.go" |
    paste -sd' ' | awk '{ printf "%d.%02d", $1, $2 }')"
  if [ "$have" != "$version" ]; then
    log "$mod@$module_version is SeaweedFS $have, not $version: set SEAWEEDFS_VERSION (and the e2e fixture's image tag, e2e/suites/etcd/fixtures/s3.ts) to $have"
    exit 1
  fi
  goversion="$(awk '$1 == "go" { print $2; exit }' "$gomod")"
  mkdir -p "$bin" && rm -rf "$work" && mkdir -p "$work"
  (
    cd "$work"
    # Upstream's require blocks and its module replace (go-bip39 => cosmos/go-bip39); comments and all.
    { printf 'module capstan.local/seaweedfs-build\n\ngo %s\n\nrequire %s %s\n\n' "$goversion" "$mod" "$module_version"
      sed -n '/^require/,$p' "$gomod"; } >go.mod
    printf '//go:build tools\n\npackage tools\n\nimport _ "%s/weed"\n' "$mod" >tools.go
    # No `go mod tidy` (every platform's and test's modules); go build -mod=mod fetches what ./weed imports.
    nice go build -p "${GO_BUILD_P:-2}" -trimpath -ldflags "-s -w" -o "$bin/weed.tmp" "$mod/weed"
    mv "$bin/weed.tmp" "$bin/weed" && echo "$build_id" >"$bin/.build"
  )
fi
rootfs="$(mktemp -d)" && chmod 0755 "$rootfs"
trap 'rm -rf "$rootfs"' EXIT
mkdir -p "$rootfs"/{usr/bin,etc/seaweedfs,tmp,data,home/seaweed}
chmod 1777 "$rootfs/tmp"; chmod 0777 "$rootfs/data" "$rootfs/home/seaweed"
cp "$bin/weed" "$rootfs/usr/bin/weed" && chmod 0755 "$rootfs/usr/bin/weed"
[ -f /etc/ssl/certs/ca-certificates.crt ] && mkdir -p "$rootfs/etc/ssl/certs" && cp -L /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/:/sbin/nologin\nseaweed:x:1000:1000:seaweed:/home/seaweed:/sbin/nologin\n' >"$rootfs/etc/passwd"
printf 'root:x:0:\nnobody:x:65534:\nseaweed:x:1000:\n' >"$rootfs/etc/group"
"$here/../pack.sh" "$rootfs" "$ref" "$tarball.tmp" \
  '{"User":"1000:1000","Entrypoint":["/usr/bin/weed"],"Cmd":["server","-dir=/data","-s3"],"WorkingDir":"/data","ExposedPorts":{"8333/tcp":{},"9333/tcp":{},"8888/tcp":{},"8080/tcp":{}},"Volumes":{"/data":{}},"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin","HOME=/home/seaweed"]}'
mv "$tarball.tmp" "$tarball"
echo "$tarball"
