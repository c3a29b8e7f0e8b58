#!/usr/bin/env bash
# Makes Rackside's release artifacts in dist/release/ (not in git):
#   - every publishable package (plugins/* that are not private) as an npm
#     tarball, built and packed as `npm publish` would ship it
#     (`yarn workspace NAME pack`, whose prepack/postpack run
#     `backstage-cli package prepack/postpack`), named like npm names them
#     (rackside-plugin-servers-0.1.0.tgz);
#   - the Helm chart (`helm package charts/rackside`);
#   - SHA256SUMS over all of them.
# Then checks every tarball (scripts/release/check-package.mjs): no file the
# manifest names is missing, every package the code and types import is declared.
#
#   scripts/release.sh               versions from changesets first (`changeset version`:
#                                    bumps package.json versions, writes each CHANGELOG.md,
#                                    consumes .changeset/*.md; commit that), then build and pack
#   scripts/release.sh --no-version  pack the versions as they are (what the tests do)
#   scripts/release.sh --no-build    reuse each package's dist/ (after `yarn tsc` and a build)
#   RACKSIDE_RELEASE_DIR=DIR          write the artifacts there instead of dist/release
#
# Publishing is then `npm publish dist/release/<package>.tgz` per package, dependencies
# first (servers-common, servers-node, then the others), and the chart to a chart repository.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
. scripts/toolchain.sh

VERSION=1
BUILD=1
for a in "$@"; do
  case "$a" in
    --no-version) VERSION=0 ;;
    --no-build) BUILD=0 ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
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
  if ls .changeset/*.md 2>/dev/null | grep -qv '/README.md$'; then
    log "versioning from changesets (changeset version)"
    yarn changeset version
    # changeset version keeps `workspace:^` ranges; prettier keeps the CHANGELOGs as the repository formats them.
    yarn prettier --write --log-level warn plugins/*/CHANGELOG.md plugins/*/package.json
  else
    log "no pending changesets: packing the versions as they are"
  fi
fi

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
