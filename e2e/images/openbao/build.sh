#!/usr/bin/env bash
# Builds quay.io/openbao/openbao:<v> without a registry. OpenBao's module path lacks /v2, so its v2 tags are
# not valid module versions: a wrapper module requires the release commit by pseudo-version and repeats
# upstream's replace directives (api/v2, sdk/v2, the api/auth modules and boltdb/bolt => local dirs of the
# OpenBao module), pointing them at the same dirs inside the module cache. bao is built static without
# the web UI. Laid out like upstream's default image: /usr/bin/bao (+ vault link), /openbao/{config,file,
# logs}, user openbao, ENTRYPOINT docker-entrypoint.sh (upstream's script, from the module) run by a static
# busybox (Debian's busybox-static) as /bin/sh. pack.sh writes all owners as root, so the image sets
# SKIP_CHOWN=1 and the /openbao dirs are world-writable. Skips a tarball newer than this script.
#   e2e/images/openbao/build.sh OUT_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:?usage: $0 OUT_DIR}"
version="${OPENBAO_VERSION:-v2.6.2}"
# v2.6.2 = commit dd9c19c37a878cf4a81b18efb8d6f0599c7da923, committed 2026-08-18T15:43:05Z
pseudo="${OPENBAO_PSEUDO_VERSION:-v0.0.0-20260818154305-dd9c19c37a87}"
ref="${OPENBAO_IMAGE:-quay.io/openbao/openbao:${version#v}}"
cache="${CAPSTAN_CACHE:-$HOME/.cache/capstan}"
tarball="$out/openbao_${version#v}.tar"
log() { printf '[openbao] %s\n' "$*" >&2; }
if [ -f "$tarball" ] && [ "$tarball" -nt "$here/build.sh" ]; then echo "$tarball"; exit 0; fi
export GOFLAGS="${GOFLAGS:-} -mod=mod" CGO_ENABLED=0 GOTOOLCHAIN=local
mod=github.com/openbao/openbao
work="$cache/openbao-$version/src" bin="$cache/openbao-$version/bin"
# (On 2026-11-29 proxy.golang.org answered 403 "This module version is not available." for this
# pseudo-version, so this script stops here; build-all.sh runs it only with CAPSTAN_OPENBAO=1.)
info="$(cd /tmp; go mod download -json "$mod@$pseudo" 2>&1 || true)"
src="$(printf '%s\n' "$info" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
if [ ! -d "$src" ]; then
  echo "the Go module proxy did not serve $mod@$pseudo:" >&2
  printf '%s\n' "$info" | sed -n 's/.*"Error": "\(.*\)".*/  \1/p' >&2
  exit 1
fi
mkdir -p "$work" "$bin"
if [ ! -x "$bin/bao" ]; then
  log "building OpenBao $version ($mod@$pseudo)"
  (
    cd "$work"
    [ -f go.mod ] || go mod init capstan.local/openbao-build >/dev/null 2>&1
    go mod edit -require="$mod@$pseudo"
    # upstream's own replace directives, with ./dir resolved inside the downloaded module
    grep -E '^replace .* => \./' "$src/go.mod" | while read -r _ m _ dir; do
      go mod edit -replace="$m=$src/${dir#./}"
    done
    printf '//go:build tools\n\npackage tools\n\nimport _ "%s"\n' "$mod" >tools.go
    go mod tidy >/dev/null 2>&1 || go mod download all
    p=$mod/version
    nice go build -p "${GO_BUILD_P:-2}" -trimpath \
      -ldflags "-s -w -X $p.fullVersion=${version#v} -X $p.GitCommit=${pseudo##*-} -X $p.BuildDate=2026-08-18T15:43:05Z" \
      -o "$bin/bao.tmp" "$mod"
    mv "$bin/bao.tmp" "$bin/bao"
  )
fi
if ! dpkg -s busybox-static >/dev/null 2>&1; then
  apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y busybox-static >/dev/null
fi
rootfs="$(mktemp -d)" && chmod 0755 "$rootfs"
trap 'rm -rf "$rootfs"' EXIT
mkdir -p "$rootfs"/{bin,usr/bin,usr/local/bin,etc,tmp,home/openbao,licenses} "$rootfs"/openbao/{config,file,logs}
chmod 1777 "$rootfs/tmp"; chmod 0777 "$rootfs"/openbao/{config,file,logs} "$rootfs/home/openbao"
cp "$bin/bao" "$rootfs/usr/bin/bao" && ln -s bao "$rootfs/usr/bin/vault"
cp /bin/busybox "$rootfs/bin/busybox"
for a in $("$rootfs/bin/busybox" --list); do [ -e "$rootfs/bin/$a" ] || ln -s busybox "$rootfs/bin/$a"; done
cp "$src/.release/docker/docker-entrypoint.sh" "$rootfs/usr/local/bin/docker-entrypoint.sh"
cp "$src/LICENSE" "$rootfs/licenses/mozilla.txt"
[ -f /etc/ssl/certs/ca-certificates.crt ] && mkdir -p "$rootfs/etc/ssl/certs" && cp -L /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/"
chmod -R go+rX,u+w "$rootfs"; chmod 0555 "$rootfs/usr/local/bin/docker-entrypoint.sh" "$rootfs/usr/bin/bao"
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\nopenbao:x:100:1000:openbao:/home/openbao:/bin/false\n' >"$rootfs/etc/passwd"
printf 'root:x:0:\nnobody:x:65534:\nopenbao:x:1000:openbao\n' >"$rootfs/etc/group"
"$here/../pack.sh" "$rootfs" "$ref" "$tarball.tmp" \
  '{"User":"openbao","Entrypoint":["docker-entrypoint.sh"],"Cmd":["server","-dev","-dev-no-store-token"],"ExposedPorts":{"8200/tcp":{}},"Volumes":{"/openbao/logs":{},"/openbao/file":{}},"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin","SKIP_CHOWN=1","HOME=/home/openbao"]}'
mv "$tarball.tmp" "$tarball"
echo "$tarball"
