#!/usr/bin/env bash
# Makes Rackside's release artifacts in dist/release/ (not in git), all of one version:
#   - every publishable package (plugins/* that are not private) as an npm
#     tarball, built and packed as `npm publish` would ship it
#     (`yarn workspace NAME pack`, whose prepack/postpack run
#     `backstage-cli package prepack/postpack`), named like npm names them
#     (rackside-plugin-servers-0.2.0.tgz);
#   - the Helm chart (`helm package charts/rackside`: rackside-0.2.0.tgz);
#   - SHA256SUMS over all of them.
# Then checks every tarball (scripts/release/check-package.mjs): no file the
# manifest names is missing, every package the code and types import is declared.
#
# One version: the six packages and the operator are one changesets `fixed` group
# (.changeset/config.json; the operator is private, versioned through `privatePackages`, and
# its version tags the image scripts/image.sh builds), and the chart's version and
# appVersion are written from it (scripts/release/version.mjs).
#
#   scripts/release.sh               versions from changesets first (`changeset version`:
#                                    bumps the group's package.json versions, writes each
#                                    CHANGELOG.md, consumes .changeset/*.md, sets the chart's
#                                    version; commit that), then build and pack
#   scripts/release.sh --no-version  pack the versions as they are (what the tests do)
#   scripts/release.sh --no-build    reuse each package's dist/ (after `yarn tsc` and a build)
#   scripts/release.sh --publish     then publish what was packed (scripts/release/publish.mjs):
#                                    the packages to the npm registry, the operator image
#                                    (scripts/image.sh, cached by its inputs; needs root)
#                                    and the chart, naming the image by its digest, to the
#                                    OCI registry. Environment:
#     RACKSIDE_NPM_REGISTRY          npm registry URL (default: .yarnrc.yml's
#                                    npmScopes.rackside.npmPublishRegistry or npmRegistryServer)
#     RACKSIDE_NPM_TOKEN             its token (default: npmScopes.rackside.npmAuthToken, or
#                                    npm's own configuration)
#     RACKSIDE_OCI_REGISTRY          host[:port] of the container registry: the image goes to
#                                    HOST/rackside/operator, the chart to oci://HOST/charts/rackside
#     RACKSIDE_OCI_PLAIN_HTTP=1      plain HTTP (the default for a loopback host)
#   RACKSIDE_RELEASE_DIR=DIR          write the artifacts there instead of dist/release
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
. scripts/toolchain.sh

VERSION=1
BUILD=1
PUBLISH=0
for a in "$@"; do
  case "$a" in
    --no-version) VERSION=0 ;;
    --no-build) BUILD=0 ;;
    --publish) PUBLISH=1 ;;
    -h|--help) sed -n '2,37p' "$0"; exit 0 ;;
    *) echo "release.sh: unknown argument $a" >&2; exit 2 ;;
  esac
done

OUT="${RACKSIDE_RELEASE_DIR:-$ROOT/dist/release}"
log() { echo "release: $*" >&2; }

# The publishable workspaces, dependencies before dependents: "dir name version" lines.
packages() {
  node -e '
    const fs = require("fs"), path = require("path");
    const dirs = fs.readdirSync("plugins").map(d => path.join("plugins", d))
      .filter(d => fs.existsSync(path.join(d, "package.json")));
    const pkgs = dirs.map(dir => ({ dir, m: JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")) }))
      .filter(p => !p.m.private);
    const names = new Set(pkgs.map(p => p.m.name));
    const done = new Set(), order = [];
    const visit = p => {
      if (done.has(p.m.name)) return;
      done.add(p.m.name);
      for (const d of Object.keys(p.m.dependencies ?? {})) {
        if (names.has(d)) visit(pkgs.find(q => q.m.name === d));
      }
      order.push(p);
    };
    pkgs.sort((a, b) => a.m.name.localeCompare(b.m.name)).forEach(visit);
    for (const p of order) console.log(p.dir, p.m.name, p.m.version);
  '
}

if [ "$VERSION" = 1 ]; then
  # changeset version keeps `workspace:^` ranges (`yarn pack` turns them into the version).
  node scripts/release/version.mjs >/dev/null
fi
# The fixed group's one version (fails when its packages disagree); the chart must carry it.
RELEASE_VERSION="$(node --input-type=module -e '
  const { groupVersion } = await import("./scripts/release/version.mjs");
  console.log(groupVersion(process.cwd()));
')"
CHART_VERSION="$(sed -n "s/^version: *//p" charts/rackside/Chart.yaml)"
CHART_APP_VERSION="$(sed -n "s/^appVersion: *['\"]\{0,1\}\([^'\"]*\).*/\1/p" charts/rackside/Chart.yaml)"
if [ "$CHART_VERSION" != "$RELEASE_VERSION" ] || [ "$CHART_APP_VERSION" != "$RELEASE_VERSION" ]; then
  echo "release.sh: the chart is $CHART_VERSION (appVersion $CHART_APP_VERSION), the packages $RELEASE_VERSION: run node scripts/release/version.mjs" >&2
  exit 1
fi
log "version $RELEASE_VERSION"

if [ "$BUILD" = 1 ]; then
  # Type declarations come from the repository-wide tsc (dist-types), which the
  # package builds bundle into each dist/index.d.ts.
  log "type-checking and emitting declarations (tsc)"
  yarn tsc --incremental false
  while read -r dir name _; do
    log "building $name"
    (cd "$dir" && yarn backstage-cli package build)
  done < <(packages)
fi

rm -rf "$OUT"
mkdir -p "$OUT"
copied=()
tarballs=()
cleanup() { for f in "${copied[@]}"; do rm -f "$f"; done; }
trap cleanup EXIT
while read -r dir name version; do
  if [ "$version" != "$RELEASE_VERSION" ]; then
    echo "release.sh: $name is $version, not the release's $RELEASE_VERSION (is it in the fixed group of .changeset/config.json?)" >&2
    exit 1
  fi
  file="$(echo "${name#@}" | tr '/' '-')-$version.tgz"
  # The licence ships in every tarball (npm always packs a LICENSE it finds beside package.json).
  if [ ! -e "$dir/LICENSE" ]; then cp LICENSE "$dir/LICENSE"; copied+=("$dir/LICENSE"); fi
  log "packing $name@$version -> $file"
  yarn workspace "$name" pack --out "$OUT/$file" >/dev/null
  tarballs+=("$OUT/$file")
done < <(packages)

HELM="${RACKSIDE_HELM:-$(ls -d "$RACKSIDE_CACHE"/bin/helm-*/helm 2>/dev/null | sort -V | tail -n 1)}"
if [ -z "$HELM" ] || [ ! -x "$HELM" ]; then
  echo "release.sh: no helm (run e2e/rack/build.sh, which builds it into $RACKSIDE_CACHE/bin, or set RACKSIDE_HELM)" >&2
  exit 1
fi
log "packaging the chart (helm package charts/rackside)"
"$HELM" package charts/rackside --destination "$OUT" >/dev/null

(cd "$OUT" && sha256sum -- *.tgz > SHA256SUMS)
log "checking the tarballs"
node scripts/release/check-package.mjs "${tarballs[@]}"
log "artifacts in $OUT:"
(cd "$OUT" && cat SHA256SUMS) >&2

if [ "$PUBLISH" = 1 ]; then
  # The image of these sources: image.sh reuses its cached archive when nothing it is made
  # of changed, and builds it otherwise (an older dist/ archive of the same version is not
  # trusted).
  log "the operator image (scripts/image.sh)"
  ARCHIVE="$(scripts/image.sh)"
  [ "$ARCHIVE" = "dist/rackside-operator-$RELEASE_VERSION.oci.tar" ] || {
    echo "release.sh: scripts/image.sh made $ARCHIVE, not the release's $RELEASE_VERSION" >&2
    exit 1
  }
  log "publishing $RELEASE_VERSION"
  RACKSIDE_RELEASE_DIR="$OUT" node scripts/release/publish.mjs >/dev/null
fi
