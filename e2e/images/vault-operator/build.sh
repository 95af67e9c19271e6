#!/usr/bin/env bash
# Builds the Vault operator's image, capstan.local/vault-operator:<package version> (see ../operator-image.sh).
#   e2e/images/vault-operator/build.sh OUT_DIR
exec "$(dirname "$0")/../operator-image.sh" vault "$@"
