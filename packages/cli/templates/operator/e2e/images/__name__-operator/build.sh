#!/usr/bin/env bash
# Builds the __name__ operator's image, capstan.local/__name__-operator:<package version> (see ../operator-image.sh).
#   e2e/images/__name__-operator/build.sh OUT_DIR
exec "$(dirname "$0")/../operator-image.sh" __name__ "$@"
