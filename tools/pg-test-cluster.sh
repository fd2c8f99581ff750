#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the PostgreSQL backend's tests, in a directory of its own and
# on a loopback port, so it never touches a system cluster. Used by .ci/run, by the server-kill
# test (postgres_kill_test) and by developers:
#
#   tools/pg-test-cluster.sh start DIR PORT   initdb DIR/data when missing, start the server on
#                                             127.0.0.1:PORT, print its libpq connection string
#   tools/pg-test-cluster.sh stop DIR         stop it (fast shutdown; no error when not running)
#   tools/pg-test-cluster.sh check            exit 0 when a cluster can be made here, else 3
#
#   export ROLLY_TEST_PG="$(tools/pg-test-cluster.sh start /tmp/rolly-pg 55432)"
#   make test
#   tools/pg-test-cluster.sh stop /tmp/rolly-pg && rm -rf /tmp/rolly-pg
#
# The server's binaries are found through PG_BINDIR, else the newest /usr/lib/postgresql/*/bin
# (Debian's postgresql package), else PATH. PostgreSQL refuses to run as root: as root the server
# runs as the `postgres` user (DIR is handed to it), as anyone else as that user. Connections are
# trusted from loopback only, as the superuser `postgres`, database `rolly_test`. A start on a
# data directory whose server was killed (SIGKILL) waits for its old processes to go and lets
# the server recover. Exit codes: 0 done, 2 usage, 3 no PostgreSQL binaries, 1 anything else.
set -euo pipefail

usage() {
  echo "usage: $0 start DIR PORT | stop DIR | check" >&2
  exit 2
}

find_bindir() {
  if [ -n "${PG_BINDIR:-}" ] && [ -x "$PG_BINDIR/pg_ctl" ]; then
    echo "$PG_BINDIR"
    return
  fi
  local newest=""
  local dir
  for dir in /usr/lib/postgresql/*/bin; do
    [ -x "$dir/pg_ctl" ] && [ -x "$dir/initdb" ] && newest=$dir
  done
  if [ -z "$newest" ] && command -v pg_ctl >/dev/null 2>&1; then
    newest=$(dirname "$(command -v pg_ctl)")
  fi
  if [ -z "$newest" ]; then
    echo "pg-test-cluster: no PostgreSQL server binaries (apt-get install postgresql, or set" \
         "PG_BINDIR)" >&2
    exit 3
  fi
  echo "$newest"
}

# Runs a command as the server's owner: `postgres` when we are root, ourselves otherwise. As
# `postgres` it runs from / , since the caller's folder may be closed to that user.
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    (cd / && runuser -u postgres -- "$@")
  else
    "$@"
  fi
}

check() {
  find_bindir >/dev/null
  if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
    echo "pg-test-cluster: running as root needs a 'postgres' user to run the server" >&2
    exit 3
  fi
}

# Removes each lock file whose first line names a process that is gone or a zombie.
drop_stale_locks() {
  local lock pid state
  for lock in "$@"; do
    [ -f "$lock" ] || continue
    pid=$(head -n 1 "$lock" 2>/dev/null | tr -d ' -') || continue
    [[ $pid =~ ^[0-9]+$ ]] || continue
    state=$(ps -o stat= -p "$pid" 2>/dev/null || true)
    if [ -z "$state" ] || [[ $state == Z* ]]; then
      rm -f "$lock"
    fi
  done
}

start() {
  local dir=$1 port=$2
  [[ $port =~ ^[0-9]+$ ]] || usage
  check
  local bindir
  bindir=$(find_bindir)
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres "$dir"
    chmod 755 "$dir"
  fi
  local data=$dir/data
  if [ ! -f "$data/PG_VERSION" ]; then
    as_owner "$bindir/initdb" -D "$data" -U postgres -A trust -E UTF8 --locale=C \
      --no-sync >"$dir/initdb.log" 2>&1 || {
      cat "$dir/initdb.log" >&2
      exit 1
    }
    # Loopback and this directory's socket only; enough connections for the tests' writers.
    as_owner tee -a "$data/postgresql.conf" >/dev/null <<EOF
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir'
max_connections = 300
log_min_messages = warning
EOF
    # After a crash the server flushes its whole directory before recovering, file by file
    # (seconds); one syncfs is enough and far quicker (Linux only).
    if [ "$(uname -s)" = Linux ]; then
      echo "recovery_init_sync_method = syncfs" | as_owner tee -a "$data/postgresql.conf" >/dev/null
    fi
  fi
  # A server killed with SIGKILL leaves its lock files behind, naming a process that may linger
  # as a zombie until init reaps it (the new postmaster takes a zombie for a live server); and
  # its processes hold its shared memory for a moment. Drop lock files of dead or zombie
  # processes, and try again for up to 30 s.
  local tries=0
  drop_stale_locks "$data/postmaster.pid" "$dir/.s.PGSQL.$port.lock"
  until { as_owner "$bindir/pg_ctl" -D "$data" status >/dev/null 2>&1 &&
          "$bindir/pg_isready" -q -h 127.0.0.1 -p "$port"; } ||
        as_owner "$bindir/pg_ctl" -D "$data" -l "$dir/server.log" -w -t 60 \
          -o "-p $port" start >/dev/null 2>&1; do
    tries=$((tries + 1))
    if tail -n 3 "$dir/server.log" 2>/dev/null | grep -q "could not create any TCP/IP sockets"; then
      echo "pg-test-cluster: port $port is taken; the end of $dir/server.log:" >&2
      tail -n 6 "$dir/server.log" >&2
      exit 1
    fi
    if [ "$tries" -ge 60 ]; then
      echo "pg-test-cluster: the server did not start; the end of $dir/server.log:" >&2
      tail -n 20 "$dir/server.log" >&2 || true
      exit 1
    fi
    sleep 0.5
    drop_stale_locks "$data/postmaster.pid" "$dir/.s.PGSQL.$port.lock"
  done
  if ! as_owner "$bindir/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -qtAX \
         -c "SELECT 1 FROM pg_database WHERE datname = 'rolly_test'" | grep -q 1; then
    as_owner "$bindir/createdb" -h 127.0.0.1 -p "$port" -U postgres rolly_test
  fi
  echo "host=127.0.0.1 port=$port user=postgres dbname=rolly_test"
}

stop() {
  local dir=$1
  [ -d "$dir" ] || return 0
  dir=$(cd "$dir" && pwd)
  local data=$dir/data
  [ -f "$data/PG_VERSION" ] || return 0
  local bindir
  bindir=$(find_bindir)
  if as_owner "$bindir/pg_ctl" -D "$data" status >/dev/null 2>&1; then
    as_owner "$bindir/pg_ctl" -D "$data" -m fast -w -t 60 stop >/dev/null
  fi
}

[ $# -ge 1 ] || usage
case "$1" in
  check) [ $# -eq 1 ] || usage; check ;;
  start) [ $# -eq 3 ] || usage; start "$2" "$3" ;;
  stop) [ $# -eq 2 ] || usage; stop "$2" ;;
  *) usage ;;
esac
