#!/usr/bin/env bash
# Runs every check and test of the repository: type-check, lint, formatting,
# unused or unlisted dependencies (knip), the import graph's layers and cycles
# (.dependency-cruiser.cjs), the API reports of plugins/*,
# the Jest suites of every package, the release tarballs (e2e/release), the
# simulated rack's own tests, every bench's --quick (bench/quick.mjs), the browser
# tests (e2e/tests) and the install guide in a portal made by create-app (e2e/portal).
# Each stage's time is printed, and a table of them at the end.
# Ends with one line "N passed, N failed" totalled over every runner.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
. scripts/toolchain.sh

export CI="${CI:-true}"
OUT="$(mktemp -d "${TMPDIR:-/tmp}/rackside-test.XXXXXX")"
passed=0
failed=0
failures=()

record() { # name status
  if [ "$2" -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); failures+=("$1"); fi
}
add_counts() { # name passed failed
  passed=$((passed + $2)); failed=$((failed + $3))
  [ "$3" -eq 0 ] || failures+=("$1 ($3 failed)")
}
# Each stage's wall-clock time, printed when the next one starts and summed up at the
# end, so a slow run says where its time went.
stage_names=()
stage_seconds=()
stage_started=$SECONDS
stage_current=""
stage_end() {
  [ -n "$stage_current" ] || return 0
  local took=$((SECONDS - stage_started))
  stage_names+=("$stage_current")
  stage_seconds+=("$took")
  echo "--- $stage_current: ${took} s"
  stage_current=""
}
stage() {
  stage_end
  echo; echo "=== $* ==="
  stage_current="$*"
  stage_started=$SECONDS
}

# --- Go-built tools, in the background ----------------------------------------------------
# The simulated rack's binaries (e2e/rack/build.sh) and promtool (scripts/promtool.sh) are
# built from the Go module proxy once per version into ~/.cache/rackside/bin; on a new
# machine that is most of the run's CPU (about 35 minutes on 2 cores). They start here, so
# that on a new machine they overlap the dependency install, the static checks and the
# package build (single-threaded or waiting on the network for much of their time), and
# the stages that need them wait for them first (wait_for_tools). On a machine that has
# them cached this takes a second.
tools_log="$OUT/tools-build.log"
(
  if [ -x e2e/rack/build.sh ]; then
    e2e/rack/build.sh; echo $? > "$OUT/rack-build.status"
  fi
  scripts/promtool.sh >/dev/null; echo $? > "$OUT/promtool.status"
  # The local registries the release and install-guide tests publish to (e2e/lib/registries.mjs).
  { scripts/release/registry.sh >/dev/null \
    && node --input-type=module -e "(await import('./e2e/lib/registries.mjs')).verdaccioBinary()"; } \
    ; echo $? > "$OUT/registries.status"
) > "$tools_log" 2>&1 &
tools_pid=$!
wait_for_tools() {
  [ -n "$tools_pid" ] || return 0
  stage "simulated rack and promtool: wait for their background build (e2e/rack/build.sh, scripts/promtool.sh)"
  wait "$tools_pid"
  tools_pid=""
  cat "$tools_log"
  if [ -x e2e/rack/build.sh ]; then
    record "rack build" "$(cat "$OUT/rack-build.status" 2>/dev/null || echo 1)"
  fi
  record "promtool build" "$(cat "$OUT/promtool.status" 2>/dev/null || echo 1)"
  record "registries build" "$(cat "$OUT/registries.status" 2>/dev/null || echo 1)"
}

stage "install dependencies"
if [ "$CI" = "true" ] && [ -z "${RACKSIDE_ALLOW_LOCKFILE_CHANGE:-}" ]; then
  yarn install --immutable || { echo "yarn install failed"; echo "0 passed, 1 failed"; exit 1; }
else
  yarn install || { echo "yarn install failed"; echo "0 passed, 1 failed"; exit 1; }
fi

stage "type-check (tsc)"
# Not incremental: the declarations it emits into dist-types are what the API reports
# below are compared on, and an incremental build (which computes each file's signature
# as it goes) can order the members of an inferred union differently from the
# non-incremental one `yarn build:api-reports` wrote the reports with.
yarn tsc --incremental false; record "tsc" $?

stage "lint"
yarn backstage-cli repo lint; record "lint" $?

stage "formatting (prettier)"
yarn prettier --check .; record "prettier" $?

stage "dependencies: none unused, none unlisted (knip)"
yarn knip --dependencies --no-progress; record "knip" $?

stage "import graph: no cycle, no import from a lower layer to a higher one (dependency-cruiser)"
yarn deps:check; record "import graph" $?

stage "OpenAPI: plugins/servers-backend/src/schema/openapi.yaml is valid and its generated router is up to date"
(cd plugins/servers-backend && yarn schema:check) && NODE_OPTIONS="--require ./node_modules/@backstage/cli/config/nodeTransform.cjs" yarn backstage-repo-tools repo schema openapi validate plugins/servers-backend; record "openapi schema" $?

stage "API reports of plugins/* match the code (api-extractor over the declarations tsc emitted above)"
# The type-check above emitted every declaration into dist-types exactly as
# `yarn build:api-reports` does (tsc --incremental false), so the reports are compared
# without a second tsc. Fails when a package's exported API differs from its
# committed report*.api.md; `yarn build:api-reports` rewrites them.
yarn build:api-reports:only --ci; record "api reports" $?

stage "build every package (backstage-cli repo build --all)"
yarn backstage-cli repo build --all; record "build" $?

# Everything below needs the Go-built tools (helm for the release and the chart, the rack
# for the integration tests).
wait_for_tools

# --- Release artifacts (issue 36) --------------------------------------------
# scripts/release.sh packs every publishable package from the build above (no
# versioning: that is a release's own step) with the chart and SHA256SUMS into
# dist/release; e2e/release checks each tarball's manifest and imports against
# its declared dependencies. The create-app install test below installs them.
stage "release: pack the packages and the chart (scripts/release.sh --no-version --no-build)"
scripts/release.sh --no-version --no-build; record "release pack" $?
# -----------------------------------------------------------------------------

# --- Operator image (issue 37) -------------------------------------------------------------
# buildah from Debian's packages (root), a stand-in of node:24.18.0-bookworm-slim built from
# Debian and the npm registry; dist/rackside-operator-<version>.oci.tar, cached by content
# hash under ~/.cache/rackside/images (e2e/rack/test/image.test.mjs runs it with podman).
stage "operator image: scripts/image.sh (buildah) into dist/"
scripts/image.sh; record "operator image" $?
# The image test runs it with Debian's podman and runc (as root).
for pkg in podman runc; do
  command -v "$pkg" >/dev/null || (apt-get install -y "$pkg" >/dev/null 2>&1 \
    || { apt-get update >/dev/null && apt-get install -y "$pkg" >/dev/null; }) \
    || echo "could not install $pkg; the image test will fail"
done

# The release tests after the image: publish.test.mjs pushes that image to its registry.
stage "node --test: release tarballs"
node --test --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=tap --test-reporter-destination="$OUT/release.tap" e2e/release/*.test.mjs
release_status=$?
relp=$(grep -E '^# pass ' "$OUT/release.tap" | awk '{print $3}'); relf=$(grep -E '^# fail ' "$OUT/release.tap" | awk '{print $3}')
relp=${relp:-0}; relf=${relf:-0}
echo "node --test: $relp passed, $relf failed"
add_counts "release tests" "$relp" "$relf"
[ "$release_status" -eq 0 ] || [ "$relf" -gt 0 ] || record "release tests (exit $release_status)" 1

# --- Helm chart: lint and package (issue 37) ----------------------------------------------
# dist/rackside-<version>.tgz; e2e/rack/test/chart-install.test.mjs installs a package of it.
if [ -x e2e/rack/build.sh ]; then
  stage "chart: helm lint --strict and helm package into dist/"
  helm_bin="$(node --input-type=module -e "const { helmBinary } = await import('./e2e/rack/lib/chart.mjs'); console.log(helmBinary())")"
  "$helm_bin" lint charts/rackside --strict && "$helm_bin" package charts/rackside --destination dist
  record "chart lint and package" $?
fi


stage "jest: every package"
yarn backstage-cli repo test --json --outputFile="$OUT/jest.json"
jest_status=$?
if [ -f "$OUT/jest.json" ]; then
  read -r jp jf < <(node -e 'const r=require(process.argv[1]);console.log(r.numPassedTests, r.numFailedTests + r.numRuntimeErrorTestSuites)' "$OUT/jest.json")
  echo "jest: $jp passed, $jf failed"
  add_counts "jest" "$jp" "$jf"
  [ "$jest_status" -eq 0 ] || [ "$jf" -gt 0 ] || record "jest (exit $jest_status)" 1
else
  record "jest (no report)" 1
fi

if ls e2e/rack/test/*.test.mjs >/dev/null 2>&1; then
  stage "node --test: simulated rack"
  node --test --test-concurrency=1 --test-reporter=spec --test-reporter-destination=stdout \
    --test-reporter=tap --test-reporter-destination="$OUT/rack.tap" e2e/rack/test/*.test.mjs
  rack_status=$?
  rp=$(grep -E '^# pass ' "$OUT/rack.tap" | awk '{print $3}'); rf=$(grep -E '^# fail ' "$OUT/rack.tap" | awk '{print $3}')
  rp=${rp:-0}; rf=${rf:-0}
  echo "node --test: $rp passed, $rf failed"
  add_counts "rack tests" "$rp" "$rf"
  [ "$rack_status" -eq 0 ] || [ "$rf" -gt 0 ] || record "rack tests (exit $rack_status)" 1
fi

# --- Benches (issue 49) --------------------------------------------------------------------
# Every bench's --quick on one simulated rack: a bench that no longer starts fails here, not
# on the day someone wants its figure. The figures are not judged on a shared machine; each
# must run to its last line (bench/README.md).
stage "benches: every bench's --quick on one simulated rack (bench/quick.mjs)"
node bench/quick.mjs | tee "$OUT/bench.txt"
bench_status=${PIPESTATUS[0]}
read -r bp bf < <(tail -n 1 "$OUT/bench.txt" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p')
add_counts "benches" "${bp:-0}" "${bf:-0}"
[ "$bench_status" -eq 0 ] || [ "${bf:-0}" -gt 0 ] || record "benches (exit $bench_status)" 1

if ls e2e/tests/*.e2e.mjs >/dev/null 2>&1; then
  stage "node --test: browser tests (headless Chromium on a simulated rack)"
  if [ ! -x "${RACKSIDE_E2E_CHROMIUM:-/usr/bin/chromium}" ] && command -v apt-get >/dev/null; then
    echo "installing Debian's chromium for the browser tests"
    (apt-get install -y chromium >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y chromium >/dev/null; }) \
      || echo "could not install chromium; the browser tests will fail"
  fi
  node --test --test-concurrency=1 --test-reporter=spec --test-reporter-destination=stdout \
    --test-reporter=tap --test-reporter-destination="$OUT/e2e.tap" e2e/tests/*.e2e.mjs
  e2e_status=$?
  ep=$(grep -E '^# pass ' "$OUT/e2e.tap" | awk '{print $3}'); ef=$(grep -E '^# fail ' "$OUT/e2e.tap" | awk '{print $3}')
  ep=${ep:-0}; ef=${ef:-0}
  echo "node --test: $ep passed, $ef failed"
  add_counts "browser tests" "$ep" "$ef"
  [ "$e2e_status" -eq 0 ] || [ "$ef" -gt 0 ] || record "browser tests (exit $e2e_status)" 1
fi

# --- The install guide in a portal made by create-app (issues 36, 46) ---------
# e2e/portal: @backstage/create-app (pinned) makes a portal, cached untouched with its
# node_modules under ~/.cache/rackside/create-app-<version>-r<n> (first run about 5
# minutes); the test publishes dist/release (the release stage above) to a Verdaccio it
# starts and runs docs/install.md's marked code blocks word for word, type-checks and
# builds both of its apps, and runs the browser flow in each against a rack.
# install-guide.test.mjs first checks, in a second, that every block of the guide is a
# step the test runs or is marked an example.
if ls e2e/portal/*.e2e.mjs >/dev/null 2>&1; then
  stage "node --test: docs/install.md in a portal made by create-app (e2e/portal)"
  node --test --test-concurrency=1 --test-reporter=spec --test-reporter-destination=stdout \
    --test-reporter=tap --test-reporter-destination="$OUT/portal.tap" e2e/portal/*.test.mjs e2e/portal/*.e2e.mjs
  portal_status=$?
  pp=$(grep -E '^# pass ' "$OUT/portal.tap" | awk '{print $3}'); pf=$(grep -E '^# fail ' "$OUT/portal.tap" | awk '{print $3}')
  pc=$(grep -E '^# cancelled ' "$OUT/portal.tap" | awk '{print $3}')
  pp=${pp:-0}; pf=$(( ${pf:-0} + ${pc:-0} ))
  echo "node --test: $pp passed, $pf failed"
  add_counts "install guide tests" "$pp" "$pf"
  [ "$portal_status" -eq 0 ] || [ "$pf" -gt 0 ] || record "install guide tests (exit $portal_status)" 1
fi
# -----------------------------------------------------------------------------

for mod in e2e/rack/talosemu; do
  [ -f "$mod/go.mod" ] || continue
  stage "go test: $mod"
  (cd "$mod" && go test -count=1 -json ./... > "$OUT/gotest.json"); go_status=$?
  gp=$(grep -c '"Action":"pass","Package":"[^"]*","Test"' "$OUT/gotest.json" || true)
  gf=$(grep -c '"Action":"fail","Package":"[^"]*","Test"' "$OUT/gotest.json" || true)
  grep -h '"Action":"output"' "$OUT/gotest.json" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{for(const l of s.split("\n")){if(!l)continue;const o=JSON.parse(l);if(/^(---|ok|FAIL|PASS|\s+\S+_test\.go)/.test(o.Output))process.stdout.write(o.Output)}})'
  echo "go test: $gp passed, $gf failed"
  add_counts "go test $mod" "$gp" "$gf"
  [ "$go_status" -eq 0 ] || [ "$gf" -gt 0 ] || record "go test $mod (exit $go_status)" 1
done

stage_end
echo
echo "Time per stage (seconds; total ${SECONDS} s):"
for i in "${!stage_names[@]}"; do
  printf '%6d  %s\n' "${stage_seconds[$i]}" "${stage_names[$i]}"
done
echo
if [ "$failed" -gt 0 ]; then
  echo "Failed: ${failures[*]}"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
