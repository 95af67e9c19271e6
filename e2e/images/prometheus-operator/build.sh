#!/usr/bin/env bash
# Builds the prometheus operator's image, tagged as its chart runs it by default (see ../operator-image.sh).
#   e2e/images/prometheus-operator/build.sh OUT_DIR
exec "$(dirname "$0")/../operator-image.sh" prometheus "$@"
