#!/usr/bin/env bash
# Brings up the Rackside demo: the Backstage portal at http://localhost:3000
# with its backend at http://localhost:7007. Ctrl-C stops everything it started.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/toolchain.sh

echo "demo: installing dependencies (quick when nothing changed)"
yarn install

configs=(--config "$PWD/app-config.yaml")
if [ -f app-config.local.yaml ]; then configs+=(--config "$PWD/app-config.local.yaml"); fi

echo "demo: starting Backstage (app :3000, backend :7007)"
exec yarn backstage-cli repo start "${configs[@]}"
