#!/usr/bin/env bash
# infra/lib/services.sh — meant to be `source`d.
#
# Makes real PostgreSQL and Redis servers available on 127.0.0.1 for the test
# suite, installing them with apt when needed, and exports TEST_DATABASE_URL /
# TEST_REDIS_URL. Needs root for installing/starting (uses sudo when not root
# and sudo exists). Safe under `set -euo pipefail` and safe to run repeatedly.

_INFRA_APT_UPDATED="${_INFRA_APT_UPDATED:-0}"

# _infra_as_root CMD... — run a command as root.
_infra_as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    echo "[infra] ERROR: need root (or sudo) to run: $*" >&2
    return 1
  fi
}

# _infra_apt_install PACKAGE... — apt-get update (once per run), then install.
_infra_apt_install() {
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "[infra] ERROR: apt-get not found; cannot install $*" >&2
    return 1
  fi
  if [ "$_INFRA_APT_UPDATED" != 1 ]; then
    echo "[infra] apt-get update" >&2
    _infra_as_root apt-get update >&2
    _INFRA_APT_UPDATED=1
  fi
  echo "[infra] apt-get install -y $*" >&2
  _infra_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y "$@" >&2
}

_infra_pg_ready() {
  command -v pg_isready >/dev/null 2>&1 && pg_isready -h 127.0.0.1 -p 5432 >/dev/null 2>&1
}

_infra_pg_has_cluster() {
  command -v pg_lsclusters >/dev/null 2>&1 && [ -n "$(pg_lsclusters -h 2>/dev/null || true)" ]
}

ensure_postgres() {
  if _infra_pg_ready; then
    echo "[infra] PostgreSQL is already accepting connections on 127.0.0.1:5432" >&2
  else
    if ! _infra_pg_has_cluster; then
      echo "[infra] no PostgreSQL cluster found; installing postgresql" >&2
      _infra_apt_install postgresql || return 1
    fi
    if ! _infra_pg_has_cluster; then
      # Package present but its cluster was dropped: create the default one.
      local pgbin_ver
      pgbin_ver="$(ls /usr/lib/postgresql 2>/dev/null | sort -V | tail -1 || true)"
      if [ -z "$pgbin_ver" ]; then
        echo "[infra] ERROR: PostgreSQL is not installed (nothing in /usr/lib/postgresql)" >&2
        return 1
      fi
      echo "[infra] creating PostgreSQL cluster $pgbin_ver/main" >&2
      _infra_as_root pg_createcluster "$pgbin_ver" main >&2 || return 1
    fi
    local ver
    ver="$(ls /etc/postgresql | sort -V | tail -1)"
    echo "[infra] starting PostgreSQL cluster $ver/main" >&2
    # Tolerate "already running"; readiness is checked below.
    _infra_as_root pg_ctlcluster --skip-systemctl-redirect "$ver" main start >&2 \
      || echo "[infra] pg_ctlcluster start returned non-zero; waiting for readiness anyway" >&2
    local i
    for i in $(seq 1 30); do
      _infra_pg_ready && break
      sleep 1
    done
    if ! _infra_pg_ready; then
      echo "[infra] ERROR: PostgreSQL did not become ready on 127.0.0.1:5432 within 30 s" >&2
      return 1
    fi
    echo "[infra] PostgreSQL is ready" >&2
  fi

  # Let the postgres role log in over TCP with password "postgres"
  # (harmless where auth is trust). cd / so psql does not warn about cwd.
  (cd / && _infra_as_root su postgres -c "psql -qAtc \"ALTER USER postgres PASSWORD 'postgres'\"") >&2 \
    || echo "[infra] warning: could not set the postgres role's password" >&2

  export TEST_DATABASE_URL="${TEST_DATABASE_URL:-postgres://postgres:postgres@127.0.0.1:5432/postgres}"
  if ! psql "$TEST_DATABASE_URL" -qAtc 'select 1' >/dev/null 2>&1; then
    echo "[infra] ERROR: cannot connect to PostgreSQL with TEST_DATABASE_URL=$TEST_DATABASE_URL" >&2
    psql "$TEST_DATABASE_URL" -qAtc 'select 1' >&2 || true
    return 1
  fi
  echo "[infra] PostgreSQL OK: $TEST_DATABASE_URL" >&2
}

_infra_redis_ready() {
  [ "$(redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null || true)" = "PONG" ]
}

ensure_redis() {
  if _infra_redis_ready; then
    echo "[infra] Redis is already answering on 127.0.0.1:6379" >&2
  else
    if ! command -v redis-server >/dev/null 2>&1; then
      echo "[infra] redis-server not found; installing it" >&2
      _infra_apt_install redis-server || return 1
    fi
    echo "[infra] starting redis-server on 127.0.0.1:6379" >&2
    _infra_as_root mkdir -p /var/lib/redis /var/log/redis
    _infra_as_root redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 \
      --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log >&2 \
      || echo "[infra] redis-server returned non-zero; waiting for readiness anyway" >&2
    local i
    for i in $(seq 1 15); do
      _infra_redis_ready && break
      sleep 1
    done
    if ! _infra_redis_ready; then
      echo "[infra] ERROR: Redis did not answer PONG on 127.0.0.1:6379 within 15 s (see /var/log/redis/ci.log)" >&2
      return 1
    fi
    echo "[infra] Redis is ready" >&2
  fi
  export TEST_REDIS_URL="${TEST_REDIS_URL:-redis://127.0.0.1:6379}"
  echo "[infra] Redis OK: $TEST_REDIS_URL" >&2
}
