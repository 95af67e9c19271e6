#!/usr/bin/env bash
# Builds the etcd operator's image, capstan.local/etcd-operator:<package version> (see ../operator-image.sh).
#   e2e/images/etcd-operator/build.sh OUT_DIR
exec "$(dirname "$0")/../operator-image.sh" etcd "$@"
