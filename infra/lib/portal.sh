#!/usr/bin/env bash
# infra/lib/portal.sh — meant to be `source`d after infra/lib/node.sh.
#
# ensure_portal_build: builds the portal (`react-router build portal`, ~3 s)
# when portal/build/server/index.js is missing or any portal source
# (portal/app, portal/server, portal/public, portal/*.config.ts) is newer.

: "${ROOT:?[infra] ROOT is not set; source infra/lib/node.sh first}"

_infra_portal_stale() {
  local built="$ROOT/portal/build/server/index.js"
  [ -f "$built" ] || return 0
  [ -n "$(find "$ROOT/portal/app" "$ROOT/portal/server" "$ROOT/portal/public" "$ROOT"/portal/*.config.ts \
    -newer "$built" -not -path '*/+types/*' -print -quit 2>/dev/null)" ] && return 0
  return 1
}

ensure_portal_build() {
  if ! _infra_portal_stale; then
    echo "[infra] the portal build is up to date" >&2
    return 0
  fi
  echo "[infra] building the portal" >&2
  (cd "$ROOT" && npx react-router build portal >&2)
}

# ensure_chromium: Debian's Chromium for the browser tests (test/browser/),
# installed with apt-get when /usr/bin/chromium is absent.
ensure_chromium() {
  [ -x /usr/bin/chromium ] && return 0
  echo "[infra] installing chromium (browser tests)" >&2
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >&2
}
