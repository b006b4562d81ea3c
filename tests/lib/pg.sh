# Throwaway PostgreSQL server for tests (source this file from bash).
#
#   . tests/lib/pg.sh
#   pg_start            # initdb + start; exports PGHOST PGPORT PGUSER PGDATABASE QG_PG_LOG
#   pg_psql -c 'SELECT 1'
#   pg_stop             # also run from the EXIT trap pg_start installs
#
# The server runs as the unprivileged user qgtest (initdb refuses root), in a
# fresh temp dir, listening on a unix socket in that dir only.  Clients run as
# the calling user (root in CI) and connect as database user qgtest (trust).
# Every statement that reaches the server is in $QG_PG_LOG (log_statement=all),
# so tests can prove that a blocked statement never left the client.
. "$(dirname "${BASH_SOURCE[0]}")/atexit.sh"

QG_PG_USER=qgtest

# Prints the bin dir of the newest installed server; fails when there is none.
pg_bindir() {
    local dir
    dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    [ -n "$dir" ] && [ -x "$dir/postgres" ] && printf '%s\n' "$dir"
}

# True when a server can be started here (binaries present, we are root or qgtest).
pg_available() {
    pg_bindir >/dev/null && { [ "$(id -u)" -eq 0 ] || [ "$(id -un)" = "$QG_PG_USER" ]; }
}

# Runs a command as the server user.
pg_as_server_user() {
    if [ "$(id -un)" = "$QG_PG_USER" ]; then
        "$@"
    else
        runuser -u "$QG_PG_USER" -- "$@"
    fi
}

pg_start() {
    local bindir
    bindir=$(pg_bindir) || { echo "pg.sh: no PostgreSQL server in /usr/lib/postgresql/*/bin" >&2; return 1; }
    if ! id -u "$QG_PG_USER" >/dev/null 2>&1; then
        useradd -r -m "$QG_PG_USER" || return 1
    fi
    QG_PG_DIR=$(mktemp -d /tmp/qg-pg.XXXXXX) || return 1
    chown "$QG_PG_USER" "$QG_PG_DIR"
    chmod 700 "$QG_PG_DIR"
    qg_at_exit pg_stop

    # The socket lives in our own dir, so any port number is free there; a
    # random one keeps socket names (and SysV keys) of parallel runs apart.
    PGPORT=$((20000 + RANDOM % 40000))
    QG_PG_LOG=$QG_PG_DIR/server.log
    QG_PG_BIN=$bindir

    pg_as_server_user "$bindir/initdb" -D "$QG_PG_DIR/data" -U "$QG_PG_USER" \
        --auth=trust -E UTF8 --locale=C --no-sync --no-instructions \
        >"$QG_PG_DIR/initdb.log" 2>&1 || { cat "$QG_PG_DIR/initdb.log" >&2; return 1; }
    cat >>"$QG_PG_DIR/data/postgresql.conf" <<EOF
listen_addresses = ''
unix_socket_directories = '$QG_PG_DIR'
port = $PGPORT
log_statement = 'all'
logging_collector = off
log_destination = 'stderr'
log_min_messages = warning
fsync = off
synchronous_commit = off
full_page_writes = off
shared_buffers = 16MB
max_connections = 20
EOF
    pg_as_server_user "$bindir/pg_ctl" -D "$QG_PG_DIR/data" -l "$QG_PG_LOG" -w -t 30 start \
        >"$QG_PG_DIR/pg_ctl.log" 2>&1 || { cat "$QG_PG_DIR/pg_ctl.log" "$QG_PG_LOG" >&2; return 1; }

    export PGHOST=$QG_PG_DIR PGPORT PGUSER=$QG_PG_USER PGDATABASE=qgtest QG_PG_LOG
    unset PGPASSWORD PGSERVICE PGOPTIONS PGCLIENTENCODING PGCONNECT_TIMEOUT
    "$bindir/psql" -X -q -d postgres -v ON_ERROR_STOP=1 \
        -c "CREATE DATABASE qgtest TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'" >/dev/null
}

# psql without ~/.psqlrc, stopping at the first error.
pg_psql() {
    "$QG_PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 "$@"
}

pg_stop() {
    [ -n "${QG_PG_DIR:-}" ] || return 0
    if [ -f "$QG_PG_DIR/data/postmaster.pid" ]; then
        pg_as_server_user "$QG_PG_BIN/pg_ctl" -D "$QG_PG_DIR/data" -m immediate -w stop >/dev/null 2>&1
    fi
    rm -rf "$QG_PG_DIR"
    QG_PG_DIR=
}
