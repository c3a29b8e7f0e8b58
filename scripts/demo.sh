#!/usr/bin/env bash
# Brings up the Rackside demo: the simulated rack (cluster plant-a on
# loopback), the Rackside operator with its own ServiceAccount, and the
# Backstage portal at http://localhost:3000 with its backend at
# http://localhost:7007, reaching plant-a with a ServiceAccount token.
# Ctrl-C stops everything it started.
#
#   scripts/demo.sh                  sign in as the plant admin (user:default/guest)
#   scripts/demo.sh --user engineer  sign in as another user of examples/org.yaml
#                                    (engineer, viewer, contractor); also RACKSIDE_DEMO_USER
set -euo pipefail
DEMO_USER="${RACKSIDE_DEMO_USER:-}"
while [ $# -gt 0 ]; do
  case "$1" in
    --user) DEMO_USER="${2:?--user needs a user name}"; shift 2 ;;
    --user=*) DEMO_USER="${1#--user=}"; shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "demo.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
if [ -n "$DEMO_USER" ] && ! printf '%s' "$DEMO_USER" | grep -Eq '^[a-z0-9][a-z0-9._-]*$'; then
  echo "demo.sh: --user must be a user name of examples/org.yaml, got \"$DEMO_USER\"" >&2
  exit 2
fi
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

# The rack's Alertmanager (docs/alerts.md): a maintenance silences its node's alerts there.
ALERTMANAGER_URL="$(node -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); process.stdout.write(r.alertmanager?.url ?? "")' "$RACK_DIR/rack.json")"
if [ -n "$ALERTMANAGER_URL" ]; then
  # The operator's --alertmanager-url (packages/operator/README.md); the lease flags keep
  # their defaults (30 min, renewed every 10, at most 24 h, 5 min return grace).
  export RACKSIDE_ALERTMANAGER_URL="$ALERTMANAGER_URL"
  # A silence's comment links the maintenance's page in the demo portal.
  export RACKSIDE_MAINTENANCE_URL='http://localhost:3000/servers/maintenances/plant-a/{{name}}'
  echo "demo: Alertmanager at $ALERTMANAGER_URL (silences: $ALERTMANAGER_URL/api/v2/silences)"
fi

WEBHOOK_PORT="${RACKSIDE_DEMO_WEBHOOK_PORT:-9443}"
rm -f "$RACK_DIR/webhook-ca.crt"
echo "demo: starting the operator (probes on :8081, webhook on :$WEBHOOK_PORT, log $RACK_DIR/logs/operator.log)"
# Text logs: the demo's log is read by people; the chart's default is JSON.
KUBECONFIG="$RACK_DIR/operator.kubeconfig" RACKSIDE_OPERATOR_NAMESPACE=rackside-system RACKSIDE_LOG_FORMAT=text \
  RACKSIDE_OPERATOR_WEBHOOK_PORT="$WEBHOOK_PORT" RACKSIDE_OPERATOR_WEBHOOK_HOST=127.0.0.1 \
  RACKSIDE_OPERATOR_WEBHOOK_CA_OUT="$RACK_DIR/webhook-ca.crt" \
  yarn workspace @rackside/operator start > "$RACK_DIR/logs/operator.log" 2>&1 &
operator_pid=$!
# The reclaim webhook: registered once the operator has written its self-signed CA.
for _ in $(seq 1 120); do [ -s "$RACK_DIR/webhook-ca.crt" ] && break; sleep 0.5; done
if [ -s "$RACK_DIR/webhook-ca.crt" ]; then
  node scripts/register-webhook.mjs "$RACK_DIR" "$RACK_DIR/webhook-ca.crt" "$WEBHOOK_PORT"
else
  echo "demo: the operator wrote no webhook CA in 60 s (see $RACK_DIR/logs/operator.log); reclaims are not checked by the webhook" >&2
fi

configs=(--config "$ROOT/app-config.yaml" --config "$ROOT/app-config.rack.local.yaml")
if [ -f app-config.local.yaml ]; then configs+=(--config "$ROOT/app-config.local.yaml"); fi
if [ -n "$DEMO_USER" ]; then
  # The guest sign-in becomes that user, with that user's groups and permissions.
  printf 'auth:\n  providers:\n    guest:\n      userEntityRef: user:default/%s\n' "$DEMO_USER" \
    > "$ROOT/app-config.user.local.yaml"
  configs+=(--config "$ROOT/app-config.user.local.yaml")
  echo "demo: signing in as user:default/$DEMO_USER"
fi

echo "demo: starting Backstage (app http://localhost:3000, backend :7007)"
yarn backstage-cli repo start "${configs[@]}"
