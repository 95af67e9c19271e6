#!/usr/bin/env bash
# Builds an operator's image without Docker or a registry, tagged with the reference its chart runs by default
# (`capstan chart image charts/<name>-operator`: for the three operators ghcr.io/capstan-dev/capstan/<name>-operator:
# <appVersion>, the name each release pushes; capstan.local/<name>-operator:<package version> without a chart):
# the capstan.local/node:24 root filesystem (node/build.sh's tarball) plus /app/main.js, the operator's
# self-contained bundle (operators/<name>/dist/main.js, built first when missing or older than its sources), and
# /app/chunks/ (dist/chunks/: the code the bundle loads only when first used),
# run as user 1000 with ENTRYPOINT ["node","--max-semi-space-size=4","--wasm-tiering-budget=2147483647","/app/main.js"],
# like the root Dockerfile. <NAME>_OPERATOR_IMAGE
# overrides the reference. Skips a tarball newer than its inputs (these scripts, the node tarball, the bundle).
# Prints the tarball. Each operator's <name>-operator/build.sh calls it.
#   e2e/images/operator-image.sh OPERATOR OUT_DIR      e.g. operator-image.sh vault ~/.cache/capstan/images
#   e2e/images/operator-image.sh --ref OPERATOR        prints the image reference only
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
ref_only=0
if [ "${1:-}" = --ref ]; then ref_only=1 && shift; fi
name="${1:?usage: $0 OPERATOR OUT_DIR | --ref OPERATOR}"
op="$repo/operators/$name"
[ -d "$op" ] || { echo "no operator at $op" >&2; exit 2; }
node_bin="$repo/node_modules/node/bin/node"
log() { printf '[%s-operator] %s\n' "$name" "$*" >&2; }
[ -x "$node_bin" ] || { echo "no node binary at $node_bin (run npm ci first)" >&2; exit 1; }
version="$("$node_bin" -p 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).version' "$op/package.json")"
override="$(tr "[:lower:]-" "[:upper:]_" <<<"$name")_OPERATOR_IMAGE" # e.g. ETCD_OPERATOR_IMAGE
chart="$repo/charts/$name-operator"
if [ -n "${!override:-}" ]; then ref="${!override}"
elif [ -f "$chart/values.yaml" ]; then
  # What `capstan chart image` prints, from the CLI's source (Node.js strips the types): no build needed first.
  ref="$("$node_bin" --input-type=module -e 'const { chartImage } = await import(process.argv[1]);
    console.log(chartImage(process.argv[2]));' "$repo/packages/cli/src/chart-image.ts" "$chart")"
else ref="capstan.local/$name-operator:$version"; fi
if [ "$ref_only" = 1 ]; then echo "$ref"; exit 0; fi
out="${2:?usage: $0 OPERATOR OUT_DIR}"
tarball="$out/$name-operator_$version.tar"
mkdir -p "$out"

# Is any file under PATH... newer than FILE (or FILE missing)?
stale() { # FILE PATH...
  [ -f "$1" ] || return 0
  [ -n "$(find "${@:2}" -type f ! -name '*.test.ts' -newer "$1" -print -quit)" ]
}

# The bundle: rebuilt (with @capstan/core, through turbo) when older than the sources it is made from.
bundle="$op/dist/main.js"
if stale "$bundle" "$op/src" "$op/package.json" "$op/tsup.config.ts" "$repo/packages/core/src" \
  "$repo/packages/core/package.json" "$repo/packages/backup/src" "$repo/packages/promql/src" "$repo/packages/cli/src" "$repo/package-lock.json"; then
  log "building $bundle"
  (cd "$repo" && npm exec -- turbo run build --filter="@capstan/$name-operator" --output-logs=errors-only) >&2
  # turbo may restore dist/ from its cache with the cached files' times: mark the bundle as built now.
  touch "$bundle" "$bundle.map"
fi

base="$("$here/node/build.sh" "$out" | tail -n 1)"
if ! stale "$tarball" "$here/operator-image.sh" "$here/$name-operator/build.sh" "$base" "$bundle" \
  "$chart/values.yaml" "$chart/Chart.yaml" && grep -qF "\"$ref\"" <(tar -xOf "$tarball" manifest.json 2>/dev/null); then
  echo "$tarball"; exit 0
fi

log "packing $ref"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir "$work/image" "$work/rootfs" && chmod 0755 "$work/rootfs"
tar -xf "$base" -C "$work/image"
layer="$(sed -n 's/.*"Layers":\["\([^"]*\)".*/\1/p' "$work/image/manifest.json")"
tar -xf "$work/image/$layer" -C "$work/rootfs"
install -m 0644 "$bundle" "$bundle.map" "$work/rootfs/app/"
install -d -m 0755 "$work/rootfs/app/chunks"
install -m 0644 "$op/dist/chunks/"* "$work/rootfs/app/chunks/"
# Smoke test before packing (needs root for chroot): the bundle parses under the image's node.
if [ "$(id -u)" = 0 ]; then
  chroot "$work/rootfs" /usr/bin/node --check /app/main.js || { echo "/app/main.js does not parse in the image" >&2; exit 1; }
fi
# The base image's Env, with NODE_ENV added.
node_version="$(sed -n 's/.*"NODE_VERSION=\([^"]*\)".*/\1/p' "$work/image"/*.json | head -n 1)"
"$here/pack.sh" "$work/rootfs" "$ref" "$tarball.tmp" \
  "{\"Entrypoint\":[\"node\",\"--max-semi-space-size=4\",\"--wasm-tiering-budget=2147483647\",\"/app/main.js\"],\"User\":\"1000:1000\",\"WorkingDir\":\"/app\",\"Env\":[\"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\",\"NODE_VERSION=$node_version\",\"SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt\",\"NODE_ENV=production\"],\"ExposedPorts\":{\"8080/tcp\":{},\"8081/tcp\":{}}}"
mv "$tarball.tmp" "$tarball"
echo "$tarball"
