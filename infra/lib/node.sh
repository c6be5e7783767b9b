#!/usr/bin/env bash
# infra/lib/node.sh — meant to be `source`d (by infra/start, infra/test, ...).
#
# Ensures a Node.js >= 22.22 is first on PATH and exports ROOT (the
# repository root). If the `node` already on PATH is new enough, nothing is
# changed. Otherwise Node 22 is installed from the npm registry (the `node`
# npm package ships a platform binary) into "$ROOT/.tools/node22" and that
# folder's bin directory is prepended to PATH.
#
# Safe under `set -euo pipefail` and safe to source more than once. It does
# not change the caller's shell options; the calling scripts set them.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export ROOT

INFRA_NODE_MIN_MAJOR=22
INFRA_NODE_MIN_MINOR=22

# _infra_node_ok NODE_BINARY — succeeds when the binary runs and is >= 22.22.
_infra_node_ok() {
  local bin="$1"
  [ -x "$bin" ] || command -v "$bin" >/dev/null 2>&1 || return 1
  "$bin" -e '
    const [maj, min] = process.versions.node.split(".").map(Number);
    const [wantMaj, wantMin] = [Number(process.argv[1]), Number(process.argv[2])];
    process.exit(maj > wantMaj || (maj === wantMaj && min >= wantMin) ? 0 : 1);
  ' "$INFRA_NODE_MIN_MAJOR" "$INFRA_NODE_MIN_MINOR" >/dev/null 2>&1
}

_infra_ensure_node() {
  local want="${INFRA_NODE_MIN_MAJOR}.${INFRA_NODE_MIN_MINOR}"
  local prefix="$ROOT/.tools/node22"
  local bindir="$prefix/node_modules/.bin"

  if command -v node >/dev/null 2>&1 && _infra_node_ok node; then
    return 0
  fi

  if command -v node >/dev/null 2>&1; then
    echo "[infra] node on PATH is $(node --version 2>/dev/null || echo unknown); need >= $want" >&2
  else
    echo "[infra] no node on PATH; need >= $want" >&2
  fi

  if ! _infra_node_ok "$bindir/node"; then
    if ! command -v npm >/dev/null 2>&1; then
      echo "[infra] ERROR: npm is not available, so Node 22 cannot be installed into $prefix" >&2
      return 1
    fi
    echo "[infra] installing Node 22 from the npm registry into $prefix" >&2
    mkdir -p "$prefix"
    if ! npm install --no-save --no-package-lock --prefix "$prefix" node@22 >&2; then
      echo "[infra] ERROR: npm install node@22 into $prefix failed" >&2
      return 1
    fi
    if ! _infra_node_ok "$bindir/node"; then
      echo "[infra] ERROR: $bindir/node is missing or older than $want after install" >&2
      return 1
    fi
  fi

  case ":$PATH:" in
    *":$bindir:"*) ;;
    *) PATH="$bindir:$PATH" ;;
  esac
  export PATH
  hash -r
  # The bin dir may already have been on PATH but behind an older node.
  if ! _infra_node_ok node; then
    PATH="$bindir:$PATH"
    export PATH
    hash -r
  fi
  echo "[infra] using node $(node --version) from $bindir" >&2
}

_infra_ensure_node
