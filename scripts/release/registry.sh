#!/usr/bin/env bash
# Builds the CNCF Distribution registry (github.com/distribution/distribution/v3/cmd/registry)
# from the Go module proxy into ${RACKSIDE_CACHE:-~/.cache/rackside}/bin/registry-<version>/registry,
# once per version, and prints its path last. The release tests (e2e/release/) and the portal
# test (e2e/portal/) start it on a loopback port as the OCI registry the chart and the
# operator image are pushed to (e2e/lib/registries.mjs).
#
#   scripts/release/registry.sh    the pinned version (below), built once
#   RACKSIDE_REGISTRY_VERSION=X.Y.Z scripts/release/registry.sh    another version
#
# Pinned, so that a test run on a machine that has it built never asks the proxy and never
# rebuilds because a newer version appeared (3.1.2 was the newest the proxy served on
# 2026-12-07; `go list -m -versions github.com/distribution/distribution/v3` lists them).
set -euo pipefail
CACHE="${RACKSIDE_CACHE:-$HOME/.cache/rackside}"
MODULE=github.com/distribution/distribution/v3
VERSION="${RACKSIDE_REGISTRY_VERSION:-3.1.2}"

DIR="$CACHE/bin/registry-$VERSION"
if [ -x "$DIR/registry" ]; then
  echo "$DIR/registry"
  exit 0
fi
command -v go >/dev/null || { echo "registry.sh: go is required" >&2; exit 1; }
start=$(date +%s)
echo "registry.sh: building $MODULE/cmd/registry v$VERSION from the Go module proxy (a few minutes)" >&2
# A build directory of this process's own, moved into place whole (a concurrent first run
# builds its own and keeps whichever landed first).
TMP="$DIR.tmp.$$"
rm -rf "$TMP"; mkdir -p "$TMP"
trap 'rm -rf "$TMP"' EXIT
GOBIN="$TMP" GOFLAGS=-buildvcs=false CGO_ENABLED=0 go install -trimpath \
  -ldflags "-s -w -X $MODULE/version.version=v$VERSION" "$MODULE/cmd/registry@v$VERSION" >&2
mv -T "$TMP" "$DIR" 2>/dev/null || [ -x "$DIR/registry" ]
echo "registry.sh: built in $(( $(date +%s) - start )) s" >&2
echo "$DIR/registry"
