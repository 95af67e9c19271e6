#!/usr/bin/env bash
# Builds the Prometheus operator's image, capstan.local/prometheus-operator:<package version> (see ../operator-image.sh).
#   e2e/images/prometheus-operator/build.sh OUT_DIR
exec "$(dirname "$0")/../operator-image.sh" prometheus "$@"
