#!/usr/bin/env bash
# Builds Alertmanager (github.com/prometheus/alertmanager/cmd/alertmanager) from the Go module
# proxy into ${RACKSIDE_CACHE:-~/.cache/rackside}/bin/alertmanager-<version>/alertmanager,
# once per version, and prints its path last. The simulated rack (e2e/rack/rack.mjs) and the
# demo start it on loopback; docs/alerts.md says what Rackside asks of it.
#
#   scripts/alertmanager.sh        build it when missing, print the path
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../e2e/rack/versions.env
. "$HERE/../e2e/rack/versions.env"
VERSION="${RACKSIDE_ALERTMANAGER_VERSION:-$ALERTMANAGER_VERSION}"
CACHE="${RACKSIDE_CACHE:-$HOME/.cache/rackside}"
DIR="$CACHE/bin/alertmanager-$VERSION"
if [ -x "$DIR/alertmanager" ]; then
  echo "$DIR/alertmanager"
  exit 0
fi
command -v go >/dev/null || { echo "alertmanager.sh: go is required" >&2; exit 1; }
start=$(date +%s)
echo "alertmanager.sh: building alertmanager v$VERSION from the Go module proxy (a few minutes)" >&2
rm -rf "$DIR.tmp"; mkdir -p "$DIR.tmp"
# The module's ui package embeds ui/app/dist, the web UI's build output, which the module
# zip does not carry (`go install ...@version` stops at "pattern app/dist: no matching
# files"). Rackside uses only the API v2, so the build works on a copy of the module with a
# one-page placeholder where the UI's output would be.
SRC="$DIR.tmp/src"
GOFLAGS="-buildvcs=false" go mod download -json "github.com/prometheus/alertmanager@v$VERSION" \
  > "$DIR.tmp/download.json"
MODDIR=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' "$DIR.tmp/download.json")
[ -d "$MODDIR" ] || { echo "alertmanager.sh: could not download alertmanager v$VERSION" >&2; exit 1; }
cp -r "$MODDIR" "$SRC"; chmod -R u+w "$SRC"
for ui in elm mantine; do
  mkdir -p "$SRC/ui/app/dist/$ui"
  echo '<!doctype html><title>Alertmanager</title><p>API only: this build has no web UI.' \
    > "$SRC/ui/app/dist/$ui/index.html"
done
(cd "$SRC" && GOFLAGS="-buildvcs=false -mod=mod" CGO_ENABLED=0 go build -trimpath \
  -ldflags "-s -w -X github.com/prometheus/common/version.Version=$VERSION" \
  -o "$DIR.tmp/alertmanager" ./cmd/alertmanager) >&2
rm -rf "$SRC" "$DIR.tmp/download.json"
rm -rf "$DIR"; mv "$DIR.tmp" "$DIR"
echo "alertmanager.sh: built in $(( $(date +%s) - start )) s" >&2
echo "$DIR/alertmanager"
