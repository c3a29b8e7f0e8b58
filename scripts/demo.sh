#!/usr/bin/env bash
# Brings up the Rackside demo: the simulated rack (cluster plant-a on
# loopback), the Rackside operator with its own ServiceAccount, and the
# Backstage portal at http://localhost:3000 with its backend at
# http://localhost:7007, reaching plant-a with a ServiceAccount token.
# Ctrl-C stops everything it started.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
. scripts/toolchain.sh

RACK_DIR="${RACKSIDE_DEMO_RACK:-$RACKSIDE_CACHE/racks/demo}"

echo "demo: installing dependencies (quick when nothing changed)"
yarn install

echo "demo: building the simulated rack's binaries (cached after the first run)"
e2e/rack/build.sh

if node e2e/rack/rack.mjs status --dir "$RACK_DIR" >/dev/null 2>&1; then
  echo "demo: a rack is already running in $RACK_DIR; restarting it"
  node e2e/rack/rack.mjs down --dir "$RACK_DIR"
fi
echo "demo: starting the simulated rack in $RACK_DIR"
node e2e/rack/rack.mjs up --detach --dir "$RACK_DIR" --net 0
operator_pid=""
cleanup() {
  if [ -n "$operator_pid" ]; then
    echo "demo: stopping the operator"
    kill -TERM "$operator_pid" 2>/dev/null || true
    wait "$operator_pid" 2>/dev/null || true
  fi
  echo "demo: stopping the rack"
  node "$ROOT/e2e/rack/rack.mjs" down --dir "$RACK_DIR" >/dev/null 2>&1 || true
}
trap cleanup EXIT

# CRDs, the operator's and the backend's ServiceAccounts, and the app-config
# block that points the backend at plant-a.
node scripts/demo-access.mjs "$RACK_DIR" "$ROOT/app-config.rack.local.yaml"

echo "demo: starting the operator (probes on :8081, log $RACK_DIR/logs/operator.log)"
KUBECONFIG="$RACK_DIR/operator.kubeconfig" RACKSIDE_OPERATOR_NAMESPACE=rackside-system \
  yarn workspace @rackside/operator start > "$RACK_DIR/logs/operator.log" 2>&1 &
operator_pid=$!

configs=(--config "$ROOT/app-config.yaml" --config "$ROOT/app-config.rack.local.yaml")
if [ -f app-config.local.yaml ]; then configs+=(--config "$ROOT/app-config.local.yaml"); fi

echo "demo: starting Backstage (app http://localhost:3000, backend :7007)"
yarn backstage-cli repo start "${configs[@]}"
