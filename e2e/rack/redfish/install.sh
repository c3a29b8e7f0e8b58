#!/usr/bin/env bash
# Installs sushy-tools (Redfish BMC emulator, PyPI) plus bcrypt into a cached venv.
# Idempotent: a venv whose marker matches the pinned version is reused.
# Prints the venv path on stdout (last line).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck disable=SC1091
. "$here/../versions.env"
SUSHY_TOOLS_VERSION="${SUSHY_TOOLS_VERSION:-2.2.0}"
cache="${RACKSIDE_CACHE:-$HOME/.cache/rackside}"
venv="$cache/venv-sushy-$SUSHY_TOOLS_VERSION"
marker="$venv/.rackside-installed"
python="${PYTHON:-python3}"

if [ -f "$marker" ] && [ -x "$venv/bin/sushy-emulator" ] && "$venv/bin/python" -c 'import bcrypt, sushy_tools' 2>/dev/null; then
  echo "$venv"
  exit 0
fi

echo "redfish: installing sushy-tools==$SUSHY_TOOLS_VERSION into $venv" >&2
rm -rf "$venv"
mkdir -p "$cache"
if ! "$python" -m venv "$venv" >&2 2>/dev/null; then
  # Debian's python3 without ensurepip: build the venv without pip, then bootstrap pip via
  # the system's pip module if present.
  echo "redfish: python3 -m venv failed (python3-venv missing?); trying apt-get install python3-venv" >&2
  if command -v apt-get >/dev/null 2>&1; then
    apt-get install -y python3-venv >&2 || { apt-get update >&2 && apt-get install -y python3-venv >&2; }
  fi
  rm -rf "$venv"
  "$python" -m venv "$venv" >&2
fi
"$venv/bin/python" -m pip install --disable-pip-version-check --quiet --upgrade pip >&2 || true
"$venv/bin/python" -m pip install --disable-pip-version-check --quiet \
  "sushy-tools==$SUSHY_TOOLS_VERSION" bcrypt >&2
"$venv/bin/python" -c 'import bcrypt, sushy_tools' >&2
touch "$marker"
echo "$venv"
