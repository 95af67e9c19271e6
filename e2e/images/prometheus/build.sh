#!/usr/bin/env bash
# Builds quay.io/prometheus/prometheus:v3.x.y without a registry: cmd/prometheus from the Go module proxy
# (module github.com/prometheus/prometheus, whose v0.3xx.y versions are Prometheus 3.xx.y), static
# (CGO_ENABLED=0, netgo), without the embedded web UI (the API, /metrics and scraping are unaffected), and
# with only the service discovery the operator configures (Prometheus' own build tags remove_all_sd +
# enable_kubernetes_sd; static, file and http SD are always in): the cloud SDKs the other SD plugins pull
# in were most of the compile time. promtool checks a config naming another SD as unknown.
# Laid out like upstream's image: /bin/prometheus, /bin/promtool, /etc/prometheus/prometheus.yml,
# /prometheus (working dir and TSDB), user nobody. Skips the build when the tarball is newer than this
# script. Prints the tarball.
#   e2e/images/prometheus/build.sh OUT_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:?usage: $0 OUT_DIR}"
module_version="${PROMETHEUS_MODULE_VERSION:-v0.316.0}"   # = Prometheus v3.16.0
v="${module_version#v0.}"; version="v3.$(( ${v%%.*} - 300 )).${v#*.}"
ref="${PROMETHEUS_IMAGE:-quay.io/prometheus/prometheus:$version}"
cache="${CAPSTAN_CACHE:-$HOME/.cache/capstan}"
tarball="$out/prometheus_$version.tar"
log() { printf '[prometheus] %s\n' "$*" >&2; }
if [ -f "$tarball" ] && [ "$tarball" -nt "$here/build.sh" ]; then echo "$tarball"; exit 0; fi
# One build per version at a time: CI's background build and the e2e Prometheus lane may both ask for it.
mkdir -p "$cache" && exec 9>"$cache/prometheus-$version.lock"
if ! flock -n 9; then log "waiting for another build of Prometheus $version" && flock 9; fi
if [ -f "$tarball" ] && [ "$tarball" -nt "$here/build.sh" ]; then echo "$tarball"; exit 0; fi

tags="netgo remove_all_sd enable_kubernetes_sd"
build="$cache/prometheus-$version-k8s-sd" bin="$build/bin"   # named by its SD plugins: another set, another dir
if [ ! -x "$bin/prometheus" ] || [ ! -x "$bin/promtool" ]; then
  log "building Prometheus $version ($module_version, tags: $tags) from the Go module proxy (cold: several minutes)"
  work="$build/src"
  mkdir -p "$work" "$bin"
  (
    cd "$work"
    export GOFLAGS="${GOFLAGS:-} -mod=mod -gcflags=all=-dwarf=false" CGO_ENABLED=0 GOTOOLCHAIN=local
    [ -f go.mod ] || go mod init capstan.local/prometheus-build >/dev/null 2>&1
    go mod edit -require="github.com/prometheus/prometheus@$module_version"
    cat > tools.go <<'GO'
//go:build tools

package tools

import (
	_ "github.com/prometheus/prometheus/cmd/prometheus"
	_ "github.com/prometheus/prometheus/cmd/promtool"
)
GO
    go mod tidy >/dev/null 2>&1 || go mod download all
    p=github.com/prometheus/common/version
    ld="-s -w -X $p.Version=${version#v} -X $p.Revision=$module_version -X $p.Branch=HEAD"
    ld+=" -X $p.BuildUser=capstan -X $p.BuildDate=19700101-00:00:00"
    for c in prometheus promtool; do
      nice go build -p "${GO_BUILD_P:-2}" -trimpath -tags "${tags// /,}" -ldflags "$ld" -o "$bin/$c.tmp" "github.com/prometheus/prometheus/cmd/$c"
      mv "$bin/$c.tmp" "$bin/$c"
    done
  )
fi

src="$(cd "$build/src" && GOFLAGS=-mod=mod go list -m -f '{{.Dir}}' github.com/prometheus/prometheus)"
rootfs="$(mktemp -d)" && chmod 0755 "$rootfs"
trap 'rm -rf "$rootfs"' EXIT
mkdir -p "$rootfs/bin" "$rootfs/etc/prometheus" "$rootfs/prometheus" "$rootfs/tmp"
chmod 1777 "$rootfs/tmp"
chmod 0777 "$rootfs/prometheus"   # upstream chowns it to nobody; pack.sh writes every owner as root
cp "$bin/prometheus" "$bin/promtool" "$rootfs/bin/"
cp "$src/documentation/examples/prometheus.yml" "$rootfs/etc/prometheus/prometheus.yml"
chmod 0644 "$rootfs/etc/prometheus/prometheus.yml"
cp "$src/LICENSE" "$rootfs/LICENSE" && chmod 0644 "$rootfs/LICENSE"
printf 'root:x:0:0:root:/root:/bin/false\nnobody:x:65534:65534:nobody:/home:/bin/false\n' >"$rootfs/etc/passwd"
printf 'root:x:0:\nnobody:x:65534:\n' >"$rootfs/etc/group"
"$here/../pack.sh" "$rootfs" "$ref" "$tarball.tmp" \
  '{"User":"nobody","Entrypoint":["/bin/prometheus"],"Cmd":["--config.file=/etc/prometheus/prometheus.yml","--storage.tsdb.path=/prometheus"],"WorkingDir":"/prometheus","ExposedPorts":{"9090/tcp":{}},"Volumes":{"/prometheus":{}},"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]}'
mv "$tarball.tmp" "$tarball"
echo "$tarball"
