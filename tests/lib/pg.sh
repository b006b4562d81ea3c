# Throwaway PostgreSQL server for tests (source this file from bash).
#
#   . tests/lib/pg.sh
#   pg_start            # initdb + start; exports PGHOST PGPORT PGUSER PGDATABASE QG_PG_LOG
#                       # ($QG_PG_CONF: more lines for postgresql.conf)
#   pg_psql -c 'SELECT 1'
#   pg_stop             # also run at exit (qg_at_exit, tests/lib/atexit.sh)
#
#   QG_PG_SSL=1 pg_start  # also TLS on TCP 127.0.0.1:$PGPORT (a self-signed
#                         # certificate, tests/lib/tls.sh): clients connect
#                         # with PGHOST=127.0.0.1 PGSSLMODE=require
#
# The server runs as the unprivileged user qgtest (initdb refuses root), in a
# fresh temp dir, listening on a unix socket in that dir only.  Clients run as
# the calling user (root in CI) and connect as database user qgtest (trust).
# Every statement that reaches the server is in $QG_PG_LOG (log_statement=all),
# so tests can prove that a blocked statement never left the client.
. "$(dirname "${BASH_SOURCE[0]}")/atexit.sh"
. "$(dirname "${BASH_SOURCE[0]}")/tls.sh"

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

# Prints the path of a data dir that holds an initdb'ed cluster with the
# UTF8 / locale C database qgtest.  initdb is most of the cost of a start (and
# seconds on a loaded machine), so the cluster is made once per server
# version, in the temp dir, and each start copies it.
pg_template() {
    local bindir=$1 version dir build
    version=$("$bindir/postgres" --version | awk '{ print $3 }') # "postgres (PostgreSQL) 15.20 …"
    dir=${TMPDIR:-/tmp}/qg-pg-template-$version
    if [ ! -f "$dir/PG_VERSION" ]; then
        build=$(mktemp -d "${TMPDIR:-/tmp}/qg-pg-template.XXXXXX") || return 1
        chown "$QG_PG_USER" "$build"
        if pg_as_server_user "$bindir/initdb" -D "$build/data" -U "$QG_PG_USER" \
               --auth=trust -E UTF8 --locale=C --no-sync --no-instructions \
               >"$build/initdb.log" 2>&1 &&
           echo "CREATE DATABASE qgtest TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'" |
               pg_as_server_user "$bindir/postgres" --single -D "$build/data" -c fsync=off postgres \
               >>"$build/initdb.log" 2>&1; then
            # Another test may have won the race; its copy is as good.
            mv -T "$build/data" "$dir" 2>/dev/null
        else
            cat "$build/initdb.log" >&2
        fi
        rm -rf "$build"
    fi
    # Only a cluster the server user made is trusted.
    [ -f "$dir/PG_VERSION" ] && [ "$(stat -c %U "$dir")" = "$QG_PG_USER" ] && printf '%s\n' "$dir"
}

pg_start() {
    local bindir template
    bindir=$(pg_bindir) || { echo "pg.sh: no PostgreSQL server in /usr/lib/postgresql/*/bin" >&2; return 1; }
    if ! id -u "$QG_PG_USER" >/dev/null 2>&1; then
        useradd -r -m "$QG_PG_USER" || return 1
    fi
    template=$(pg_template "$bindir") || { echo "pg.sh: cannot initdb" >&2; return 1; }
    QG_PG_DIR=$(mktemp -d /tmp/qg-pg.XXXXXX) || return 1
    chown "$QG_PG_USER" "$QG_PG_DIR"
    chmod 700 "$QG_PG_DIR"
    qg_at_exit pg_stop
    cp -a "$template" "$QG_PG_DIR/data" || return 1

    # The socket lives in our own dir, so any port number is free there; a
    # random one keeps socket names (and SysV keys) of parallel runs apart.
    PGPORT=$((20000 + RANDOM % 40000))
    QG_PG_LOG=$QG_PG_DIR/server.log
    QG_PG_BIN=$bindir
    local listen=''
    if [ -n "${QG_PG_SSL:-}" ]; then
        # TLS needs TCP: libpq and the server never use it on a unix socket
        PGPORT=$(qg_free_tcp_port) && qg_tls_cert "$QG_PG_DIR" "$QG_PG_USER" || return 1
        listen=127.0.0.1
        cat >>"$QG_PG_DIR/data/postgresql.conf" <<EOF
ssl = on
ssl_cert_file = '$QG_PG_DIR/server.crt'
ssl_key_file = '$QG_PG_DIR/server.key'
EOF
    fi

    cat >>"$QG_PG_DIR/data/postgresql.conf" <<EOF
listen_addresses = '$listen'
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
${QG_PG_CONF:-}
EOF
    pg_as_server_user "$bindir/pg_ctl" -D "$QG_PG_DIR/data" -l "$QG_PG_LOG" -w -t 30 start \
        >"$QG_PG_DIR/pg_ctl.log" 2>&1 || { cat "$QG_PG_DIR/pg_ctl.log" "$QG_PG_LOG" >&2; return 1; }

    export PGHOST=$QG_PG_DIR PGPORT PGUSER=$QG_PG_USER PGDATABASE=qgtest QG_PG_LOG
    unset PGPASSWORD PGSERVICE PGOPTIONS PGCLIENTENCODING PGCONNECT_TIMEOUT
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
