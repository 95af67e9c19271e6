#!/usr/bin/env bash
# Builds the vault operator's image, tagged as its chart runs it by default (see ../operator-image.sh).
#   e2e/images/vault-operator/build.sh OUT_DIR
exec "$(dirname "$0")/../operator-image.sh" vault "$@"
