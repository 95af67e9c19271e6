#!/usr/bin/env bash
# Packs a root filesystem directory into a docker-save tarball (manifest.json + config JSON + one layer tar),
# which `ctr -n k8s.io images import` and `docker load` take: images for the local node need no registry.
# The output is reproducible (sorted entries, mtime 0, uid/gid 0).
#   pack.sh ROOTFS NAME:TAG OUT.tar CONFIG   CONFIG is the image config object, e.g. '{"Cmd":["sh"]}'
set -euo pipefail
[ $# -eq 4 ] || { echo "usage: $0 ROOTFS NAME:TAG OUT.tar CONFIG-JSON" >&2; exit 2; }
rootfs="$1" ref="$2" out="$3" config="$4"
case "$(uname -m)" in x86_64) arch=amd64 ;; aarch64) arch=arm64 ;; *) arch="$(uname -m)" ;; esac
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
tarc() { tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner "$@"; }

tarc -C "$rootfs" -cf "$work/layer.tar" .
layer="$(sha256sum "$work/layer.tar" | cut -d' ' -f1)"
mkdir "$work/$layer" && mv "$work/layer.tar" "$work/$layer/layer.tar"
printf '{"architecture":"%s","os":"linux","created":"1970-01-01T00:00:00Z","config":%s,"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
  "$arch" "$config" "$layer" >"$work/config.json"
cfg="$(sha256sum "$work/config.json" | cut -d' ' -f1)"
mv "$work/config.json" "$work/$cfg.json"
printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["%s/layer.tar"]}]' "$cfg" "$ref" "$layer" >"$work/manifest.json"
tarc -C "$work" -cf "$out" manifest.json "$cfg.json" "$layer"
