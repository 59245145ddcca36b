#!/usr/bin/env bash
# A throwaway PostgreSQL server on 127.0.0.1 for the tests of tuners sharing one study.
#
#   bash .ci/postgres.sh start    # idempotent; writes .ci/postgres.env and prints its line
#   source .ci/postgres.env       # export GBRANK_TEST_POSTGRES=postgresql://...
#   bash .ci/postgres.sh stop     # stops the server and deletes its data
#   bash .ci/postgres.sh status
#
# From Debian's packages: when initdb/pg_ctl are missing (a fresh machine) and we are
# root, `apt-get install postgresql`. The cluster lives in a temporary directory owned by
# user `postgres` when run as root (initdb refuses root), listens on loopback only, on a
# free port (5432 may be taken), with a random password (scram-sha-256) and durability
# off (fsync, synchronous_commit: test data, speed). Any failure exits non-zero with a
# message, so CI fails loudly.
set -euo pipefail
cd "$(dirname "$0")/.."
ENV_FILE="$PWD/.ci/postgres.env"
DB=gbrank
log() { echo "[postgres] $*" >&2; }
die() { log "error: $*"; exit 1; }

find_bin() {
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  if [[ -n "$d" && -x "$d/initdb" && -x "$d/pg_ctl" ]]; then echo "$d"; return; fi
  if command -v initdb >/dev/null && command -v pg_ctl >/dev/null; then
    dirname "$(command -v initdb)"; return
  fi
  if command -v pg_config >/dev/null; then
    d=$(pg_config --bindir)
    if [[ -x "$d/initdb" && -x "$d/pg_ctl" ]]; then echo "$d"; return; fi
  fi
}

install_postgres() {
  [[ $(id -u) -eq 0 ]] || die "PostgreSQL is not installed and we are not root: install the 'postgresql' package"
  command -v apt-get >/dev/null || die "PostgreSQL is not installed and there is no apt-get"
  log "installing Debian's postgresql package"
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y --no-install-recommends postgresql >/dev/null 2>&1; then
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends postgresql >/dev/null \
      || die "apt-get install postgresql failed"
  fi
}

# as_pg CMD...: run as user postgres when we are root, else as ourselves.
as_pg() {
  if [[ $(id -u) -eq 0 ]]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

running() {  # is the server of $ENV_FILE up?
  [[ -f "$ENV_FILE" ]] || return 1
  # shellcheck disable=SC1090
  source "$ENV_FILE"
  [[ -n "${GBRANK_PG_BIN:-}" && -d "${GBRANK_PG_DIR:-}" ]] || return 1
  "$GBRANK_PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$GBRANK_PG_PORT" -t 2
}

free_port() {
  python3 - <<'PY'
import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
PY
}

stop() {
  [[ -f "$ENV_FILE" ]] || { log "no server recorded in $ENV_FILE"; return 0; }
  # shellcheck disable=SC1090
  source "$ENV_FILE"
  if [[ -n "${GBRANK_PG_DIR:-}" && -d "$GBRANK_PG_DIR/data" ]]; then
    as_pg "$GBRANK_PG_BIN/pg_ctl" -D "$GBRANK_PG_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$GBRANK_PG_DIR"
  fi
  rm -f "$ENV_FILE"
  log "stopped"
}

start() {
  if running; then
    log "already running on 127.0.0.1:$GBRANK_PG_PORT"
    echo "export GBRANK_TEST_POSTGRES=$GBRANK_TEST_POSTGRES"
    return 0
  fi
  [[ -f "$ENV_FILE" ]] && stop  # a dead server left behind
  local bin dir port pw url t0=$SECONDS
  bin=$(find_bin)
  if [[ -z "$bin" ]]; then
    install_postgres
    bin=$(find_bin)
    [[ -n "$bin" ]] || die "postgresql installed but initdb/pg_ctl not found"
  fi
  dir=$(mktemp -d "${TMPDIR:-/tmp}/gbrank-pg.XXXXXX")
  chmod 755 "$dir"
  pw=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
  printf '%s\n' "$pw" >"$dir/pwfile"
  if [[ $(id -u) -eq 0 ]]; then
    id postgres >/dev/null 2>&1 || die "user 'postgres' does not exist (the postgresql package creates it)"
    chown -R postgres: "$dir"
  fi
  as_pg "$bin/initdb" -D "$dir/data" -U postgres --pwfile="$dir/pwfile" \
    --auth-host=scram-sha-256 --auth-local=scram-sha-256 -E UTF8 --no-locale --no-sync \
    >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; die "initdb failed"; }
  rm -f "$dir/pwfile"
  local ok=0
  for _ in 1 2 3; do  # the free port can be taken between the probe and the bind
    port=$(free_port)
    if as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -o \
      "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
      start >/dev/null 2>&1; then
      ok=1; break
    fi
  done
  [[ $ok -eq 1 ]] || { tail -n 20 "$dir/server.log" >&2 || true; die "the server did not start"; }
  PGPASSWORD="$pw" "$bin/psql" -q -h 127.0.0.1 -p "$port" -U postgres -d postgres \
    -c "CREATE DATABASE $DB" >/dev/null || die "CREATE DATABASE failed"
  url="postgresql://postgres:$pw@127.0.0.1:$port/$DB"
  umask 077
  cat >"$ENV_FILE" <<EOF
export GBRANK_TEST_POSTGRES=$url
GBRANK_PG_BIN=$bin
GBRANK_PG_DIR=$dir
GBRANK_PG_PORT=$port
EOF
  log "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port (database $DB, data in $dir) in $((SECONDS - t0)) s; environment in $ENV_FILE"
  echo "export GBRANK_TEST_POSTGRES=$url"
}

case "${1:-start}" in
  start) start ;;
  stop) stop ;;
  status) if running; then log "running on 127.0.0.1:$GBRANK_PG_PORT"; else log "not running"; exit 1; fi ;;
  *) die "usage: $0 [start|stop|status]" ;;
esac
