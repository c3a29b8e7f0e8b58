#!/usr/bin/env bash
# Builds promtool (github.com/prometheus/prometheus/cmd/promtool) from the Go module proxy
# into ${RACKSIDE_CACHE:-~/.cache/rackside}/bin/promtool-<version>/promtool, once per
# version, and prints its path last. The chart's alerting rules are checked and unit-tested
# with it (charts/rackside/monitoring, e2e/rack/test/alerts.test.mjs).
#
#   scripts/promtool.sh            build it when missing, print the path
set -euo pipefail
# Prometheus tags its Go module v0.<100*major+minor>.<patch>: v0.316.0 is Prometheus 3.16.0.
PROMTOOL_VERSION="${RACKSIDE_PROMTOOL_VERSION:-0.316.0}"
CACHE="${RACKSIDE_CACHE:-$HOME/.cache/rackside}"
DIR="$CACHE/bin/promtool-$PROMTOOL_VERSION"
if [ -x "$DIR/promtool" ]; then
  echo "$DIR/promtool"
  exit 0
fi
command -v go >/dev/null || { echo "promtool.sh: go is required" >&2; exit 1; }
start=$(date +%s)
echo "promtool.sh: building promtool v$PROMTOOL_VERSION from the Go module proxy (a few minutes)" >&2
rm -rf "$DIR.tmp"; mkdir -p "$DIR.tmp"
# remove_all_sd: Prometheus's own build tag that leaves out every service-discovery plugin
# (the cloud SDKs are about a fifth of promtool's packages); `check rules` and `test rules`,
# all the tests run, need none of them.
GOBIN="$DIR.tmp" GOFLAGS="-buildvcs=false" CGO_ENABLED=0 go install -trimpath -tags remove_all_sd -ldflags "-s -w" \
  "github.com/prometheus/prometheus/cmd/promtool@v$PROMTOOL_VERSION" >&2
rm -rf "$DIR"; mv "$DIR.tmp" "$DIR"
echo "promtool.sh: built in $(( $(date +%s) - start )) s" >&2
echo "$DIR/promtool"
