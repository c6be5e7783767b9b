#!/usr/bin/env bash
# infra/lib/deps.sh — meant to be `source`d after infra/lib/node.sh.
#
# ensure_npm_deps: runs `npm install` in $ROOT when node_modules is missing or
# when package.json / package-lock.json is newer than
# node_modules/.package-lock.json. Never uses `npm ci` (it fails against this
# registry). Safe under `set -euo pipefail`; npm failures are fatal.

: "${ROOT:?[infra] ROOT is not set; source infra/lib/node.sh first}"

_infra_deps_stale() {
  local marker="$ROOT/node_modules/.package-lock.json"
  [ -d "$ROOT/node_modules" ] || return 0
  [ -f "$marker" ] || return 0
  [ "$ROOT/package.json" -nt "$marker" ] && return 0
  [ -f "$ROOT/package-lock.json" ] && [ "$ROOT/package-lock.json" -nt "$marker" ] && return 0
  return 1
}

ensure_npm_deps() {
  if ! _infra_deps_stale; then
    echo "[infra] npm dependencies are up to date" >&2
    return 0
  fi
  echo "[infra] running npm install in $ROOT" >&2
  local status=0
  # grep -v exits 1 when it prints nothing, hence `|| true` inside the group;
  # with pipefail the pipeline's status is then npm's.
  (cd "$ROOT" && npm install 2>&1) \
    | { grep -v 'npm warn Unknown user config "nodedir"' || true; } >&2 \
    || status=$?
  if [ "$status" -ne 0 ]; then
    echo "[infra] ERROR: npm install failed (exit $status)" >&2
    return "$status"
  fi
  # npm does not always rewrite the marker when nothing changed (and may
  # rewrite package-lock.json); touch it so the next run does not reinstall.
  if [ -f "$ROOT/node_modules/.package-lock.json" ]; then
    touch "$ROOT/node_modules/.package-lock.json"
  fi
  echo "[infra] npm install done" >&2
}
