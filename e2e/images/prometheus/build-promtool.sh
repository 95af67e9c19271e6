#!/usr/bin/env bash
# Builds promtool alone for older Prometheus releases, so the Prometheus operator's "real" tests check its PromQL
# version table against each release's own promtool, not only the newest (whose promtool comes with the image,
# build.sh). From the Go module proxy (module github.com/prometheus/prometheus, v0.3xx.y = Prometheus 3.xx.y), static,
# with the same build tags as the image. Cached by version in $CAPSTAN_CACHE/promtool-v3.x.y/promtool (default
# ~/.cache/capstan), one build per version at a time. Prints each binary.
#   e2e/images/prometheus/build-promtool.sh [MODULE_VERSION ...]   (default: PROMTOOL_MODULE_VERSIONS, else the list below)
set -euo pipefail
# 3.5.0, the first LTS release (OLDER_PROMTOOL_RELEASES in operators/prometheus/src/prometheus-binaries.ts). A cold
# build is about 8 CPU-minutes (measured 2026-12-07), so CI builds only this one.
read -r -a versions <<<"${*:-${PROMTOOL_MODULE_VERSIONS:-v0.305.0}}"
cache="${CAPSTAN_CACHE:-$HOME/.cache/capstan}"
log() { printf '[promtool] %s\n' "$*" >&2; }
mkdir -p "$cache"
for module_version in "${versions[@]}"; do
  v="${module_version#v0.}"; version="v3.$(( ${v%%.*} - 300 )).${v#*.}"
  dir="$cache/promtool-$version" bin="$cache/promtool-$version/promtool"
  if [ ! -x "$bin" ]; then
    exec 9>"$cache/promtool-$version.lock"
    if ! flock -n 9; then log "waiting for another build of promtool $version" && flock 9; fi
    if [ ! -x "$bin" ]; then
      log "building promtool $version ($module_version) from the Go module proxy (cold: a few minutes)"
      work="$dir/src"
      mkdir -p "$work"
      (
        cd "$work"
        export GOFLAGS="${GOFLAGS:-} -mod=mod -gcflags=all=-dwarf=false" CGO_ENABLED=0 GOTOOLCHAIN=local
        [ -f go.mod ] || go mod init capstan.local/promtool-build >/dev/null 2>&1
        go mod edit -require="github.com/prometheus/prometheus@$module_version"
        printf '//go:build tools\n\npackage tools\n\nimport _ "github.com/prometheus/prometheus/cmd/promtool"\n' >tools.go
        go mod tidy >/dev/null 2>&1 || go mod download all
        p=github.com/prometheus/common/version
        ld="-s -w -X $p.Version=${version#v} -X $p.Revision=$module_version -X $p.Branch=HEAD"
        ld+=" -X $p.BuildUser=capstan -X $p.BuildDate=19700101-00:00:00"
        nice go build -p "${GO_BUILD_P:-2}" -trimpath -tags netgo,remove_all_sd,enable_kubernetes_sd -ldflags "$ld" \
          -o "$bin.tmp" github.com/prometheus/prometheus/cmd/promtool
        mv "$bin.tmp" "$bin"
      )
      rm -rf "$dir/src"
    fi
    exec 9>&-
  fi
  echo "$bin"
done
