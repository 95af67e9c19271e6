#!/usr/bin/env bash
# Builds every image the e2e suites run on the local node into a version-keyed cache
# ($CAPSTAN_CACHE/images, default ~/.cache/capstan/images), without a registry: each image's build.sh
# skips a tarball that is newer than its inputs, so a warm run only lists them. Prints the tarballs.
#   e2e/images/build-all.sh [--import] [--verify] [IMAGE...]
#     IMAGE      only these (pause busybox etcd prometheus node vault versitygw etcd-operator vault-operator
#                prometheus-operator coredns local-path, and <name>-operator for each operator made by
#                capstan new operator); default all
#     --import   also imports them into the local node (e2e/cluster/local/node.sh import TAR...)
#     --verify   extracts each tarball and runs its entry binary's --version in a chroot (needs root)
# Images: registry.k8s.io/pause:3.10, capstan.local/busybox:1, gcr.io/etcd-development/etcd:v3.6.15 and
# :v3.6.16 (ETCD_IMAGE_VERSIONS), quay.io/prometheus/prometheus:v3.16.0, capstan.local/node:24, and
# registry.k8s.io/coredns/coredns and rancher/local-path-provisioner (the add-ons), hashicorp/vault:1.14.8 and
# :1.14.6 (VAULT_IMAGE_VERSIONS; the Vault upgrade test goes from the second to the first),
# capstan.local/versitygw:v1.8.0 (the Versity S3 Gateway, posix backend: the S3 server of the etcd backup suites),
# ghcr.io/capstan-dev/capstan/etcd-operator:<appVersion> (its chart's default image; on capstan.local/node:24; builds operators/etcd when stale),
# ghcr.io/capstan-dev/capstan/vault-operator:<appVersion> (likewise, from operators/vault),
# ghcr.io/capstan-dev/capstan/prometheus-operator:<appVersion> (likewise, from operators/prometheus),
# quay.io/openbao/openbao only with CAPSTAN_OPENBAO=1 (the Go module proxy refuses its pinned commit today).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${CAPSTAN_CACHE:-$HOME/.cache/capstan}/images"
import=0 verify=0 only=()
all=(pause busybox etcd prometheus node vault versitygw etcd-operator vault-operator prometheus-operator coredns local-path)
# Operators made by `capstan new operator` (their <name>-operator/build.sh) are built like the three above.
generated=()
for f in "$here"/*-operator/build.sh; do
  n="$(basename "$(dirname "$f")")"
  [[ " ${all[*]} " == *" $n "* ]] || generated+=("$n")
done
all+=("${generated[@]}")
for a in "$@"; do
  case "$a" in
    --import) import=1 ;;
    --verify) verify=1 ;;
    -*) echo "usage: $0 [--import] [--verify] [IMAGE...]" >&2; exit 2 ;;
    *) [[ " ${all[*]} " == *" $a "* ]] || { echo "unknown image $a (one of: ${all[*]})" >&2; exit 2; }; only+=("$a") ;;
  esac
done
wanted() { [ "${#only[@]}" = 0 ] || [[ " ${only[*]} " == *" $1 "* ]]; }
mkdir -p "$out"
log() { printf '[images] %s\n' "$*" >&2; }
tars=()

# pause and busybox rebuild unconditionally; skip them here when the tarball is newer than their sources.
fresh() { # TARBALL DIR
  [ -f "$1" ] || return 1
  [ -z "$(find "$2" -type f -newer "$1" -print -quit)" ]
}
for img in pause busybox; do
  wanted "$img" || continue
  if fresh "$out/$img.tar" "$here/$img"; then tars+=("$out/$img.tar"); else
    log "building $img"; tars+=("$("$here/$img/build.sh" "$out" | tail -n 1)")
  fi
done
# Vault's build.sh makes one version per run (VAULT_VERSION); the Vault binaries are cached by version.
build_vault() { # OUT_DIR
  local v
  # shellcheck disable=SC2086
  for v in ${VAULT_IMAGE_VERSIONS:-v1.14.8 v1.14.6}; do VAULT_VERSION="$v" "$here/vault/build.sh" "$1" || return 1; done
}
for img in etcd prometheus node vault versitygw etcd-operator vault-operator prometheus-operator "${generated[@]}"; do
  wanted "$img" || continue
  start=$SECONDS
  if [ "$img" = vault ]; then build=(build_vault); else build=("$here/$img/build.sh"); fi
  "${build[@]}" "$out" >"$out/.$img.list" || { log "$img: build failed"; exit 1; }
  mapfile -t t <"$out/.$img.list" && rm -f "$out/.$img.list"
  tars+=("${t[@]}")
  if [ $((SECONDS - start)) -gt 2 ]; then log "$img: $((SECONDS - start))s"; fi
done
# The cluster add-ons (CoreDNS, local-path-provisioner; built by build.sh addons, packed here when missing).
if wanted coredns || wanted local-path; then "$here/../cluster/local/build.sh" addons >/dev/null; fi
for img in coredns local-path; do
  wanted "$img" && tars+=("$("$here/$img/build.sh" | tail -n 1)")
done
if [ "${CAPSTAN_OPENBAO:-0}" = 1 ]; then
  if ob="$("$here/openbao/build.sh" "$out")"; then tars+=("$ob"); else log "openbao: build failed (skipped)"; fi
fi

if [ "$verify" = 1 ]; then
  for t in "${tars[@]}"; do
    d="$(mktemp -d)"
    tar -xf "$t" -C "$d"
    layer="$d/$(sed -n 's/.*"Layers":\["\([^"]*\)".*/\1/p' "$d/manifest.json")"
    mkdir "$d/rootfs" && tar -xf "$layer" -C "$d/rootfs"
    case "$(basename "$t")" in
      pause.tar) cmd=(/pause) ;;  # runs forever: only checked to be present
      busybox.tar) cmd=(/bin/sh -c 'echo sh ok') ;;
      etcd_*) cmd=(/usr/local/bin/etcd --version) ;;
      prometheus_*) cmd=(/bin/prometheus --version) ;;
      node_*) cmd=(/usr/bin/node -e 'console.log("node", process.version)') ;;
      etcd-operator_* | vault-operator_* | prometheus-operator_*) cmd=(/usr/bin/node -p '"bundle /app/main.js: " + require("fs").statSync("/app/main.js").size + " bytes"') ;;
      openbao_*) cmd=(/usr/bin/bao version) ;;
      vault_*) cmd=(/bin/vault version) ;;
      versitygw_*) cmd=(/usr/local/bin/versitygw --version) ;;
      *) cmd=() ;;
    esac
    if [ "${#cmd[@]}" = 0 ]; then log "unverified $(basename "$t")"
    elif [ "${cmd[0]}" != /pause ]; then
      if res="$(chroot "$d/rootfs" "${cmd[@]}" 2>&1 | head -n 1)"; then log "ok $(basename "$t"): $res"
      else log "FAILED $(basename "$t"): $res"; rm -rf "$d"; exit 1; fi
    else
      if [ -x "$d/rootfs/pause" ]; then log "ok $(basename "$t"): /pause present"; else log "FAILED $(basename "$t"): no /pause"; exit 1; fi
    fi
    rm -rf "$d"
  done
fi

printf '%s\n' "${tars[@]}"
if [ "$import" = 1 ]; then
  "$here/../cluster/local/node.sh" import "${tars[@]}"
fi
