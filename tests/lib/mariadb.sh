# Throwaway MariaDB server for tests (source this file from bash).
#
#   . tests/lib/mariadb.sh
#   my_start            # a copy of a data dir made once (my_template) + start;
#                       # exports QG_MY_SOCKET QG_MY_LOG QG_MY_DIR
#                       # ($QG_MY_ARGS: more server options)
#   my_sql -e 'SELECT 1'
#   my_stop             # also run from the EXIT trap my_start installs
#
# The server runs as the unprivileged user qgtest, in a fresh temp dir, with
# no TCP listener (unless QG_MY_TCP_PORT names a port on 127.0.0.1): clients
# reach it through $QG_MY_SOCKET as database user root with no password.  Every statement that reaches the server is in the
# general query log $QG_MY_LOG, so tests can prove that a blocked statement
# never left the client.  QG_MY_SSL=1 turns TLS on with a self-signed
# certificate (tests/lib/tls.sh) and, unless QG_MY_TCP_PORT names one, picks
# a free port on 127.0.0.1 and exports it as QG_MY_TCP_PORT.
. "$(dirname "${BASH_SOURCE[0]}")/atexit.sh"
. "$(dirname "${BASH_SOURCE[0]}")/tls.sh"

QG_MY_USER=qgtest

# Prints the path of a server binary; fails when there is none.
my_server_bin() {
    local bin
    for bin in /usr/sbin/mariadbd /usr/sbin/mysqld "$(command -v mariadbd 2>/dev/null)"; do
        [ -n "$bin" ] && [ -x "$bin" ] && { printf '%s\n' "$bin"; return 0; }
    done
    return 1
}

# True when a server can be started here (binaries present, we are root or qgtest).
my_available() {
    my_server_bin >/dev/null && command -v mariadb-install-db >/dev/null &&
        { [ "$(id -u)" -eq 0 ] || [ "$(id -un)" = "$QG_MY_USER" ]; }
}

# Prints the path of a data dir mariadb-install-db made.  It is most of the
# cost of a start (seconds on a loaded machine), so it is made once per
# server version and install options, in the temp dir, and each start
# copies it.
my_template() {
    local server=$1 version key dir build
    local -a options=(--auth-root-authentication-method=normal --skip-test-db --skip-name-resolve
        --innodb-buffer-pool-size=16M --innodb-log-file-size=8M)
    version=$("$server" --version | awk '{ print $3 }') # "/usr/sbin/mariadbd  Ver 10.11.19-MariaDB-… for …"
    key=$(printf '%s\n' "$version" "${options[@]}" | md5sum | cut -c1-12)
    dir=${TMPDIR:-/tmp}/qg-my-template-$version-$key
    if [ ! -d "$dir/mysql" ]; then
        build=$(mktemp -d "${TMPDIR:-/tmp}/qg-my-template.XXXXXX") || return 1
        mkdir "$build/data" "$build/tmp"
        [ "$(id -u)" -ne 0 ] || chown "$QG_MY_USER" "$build" "$build/data" "$build/tmp"
        if mariadb-install-db --no-defaults --datadir="$build/data" --tmpdir="$build/tmp" \
               --user="$QG_MY_USER" "${options[@]}" >"$build/install.log" 2>&1; then
            # Another test may have won the race; its copy is as good.
            mv -T "$build/data" "$dir" 2>/dev/null
        else
            cat "$build/install.log" >&2
        fi
        rm -rf "$build"
    fi
    # Only a data dir the server user owns is trusted.
    [ -d "$dir/mysql" ] && [ "$(stat -c %U "$dir")" = "$QG_MY_USER" ] && printf '%s\n' "$dir"
}

my_start() {
    local server template
    server=$(my_server_bin) || { echo "mariadb.sh: no mariadbd" >&2; return 1; }
    if [ "$(id -u)" -eq 0 ] && ! id -u "$QG_MY_USER" >/dev/null 2>&1; then
        useradd -r -m "$QG_MY_USER" || return 1
    fi
    template=$(my_template "$server") || { echo "mariadb.sh: cannot install a data dir" >&2; return 1; }
    QG_MY_DIR=$(mktemp -d /tmp/qg-my.XXXXXX) || return 1
    chmod 755 "$QG_MY_DIR"
    mkdir "$QG_MY_DIR/tmp"
    [ "$(id -u)" -eq 0 ] && chown "$QG_MY_USER" "$QG_MY_DIR/tmp" "$QG_MY_DIR"
    qg_at_exit my_stop
    cp -a "$template" "$QG_MY_DIR/data" || return 1

    QG_MY_SOCKET=$QG_MY_DIR/mysqld.sock
    QG_MY_LOG=$QG_MY_DIR/general.log
    # a temporary directory of its own: servers started at once in a shared
    # /tmp may pick the same temporary file names
    local -a common=(--no-defaults --datadir="$QG_MY_DIR/data" --tmpdir="$QG_MY_DIR/tmp"
        --user="$QG_MY_USER")

    # QG_MY_TCP_PORT: listen on 127.0.0.1 too (clients that cannot use the socket: JDBC)
    local -a tls=()
    if [ -n "${QG_MY_SSL:-}" ]; then
        qg_tls_cert "$QG_MY_DIR" "$QG_MY_USER" || return 1
        tls=(--ssl-cert="$QG_MY_DIR/server.crt" --ssl-key="$QG_MY_DIR/server.key")
        [ -n "${QG_MY_TCP_PORT:-}" ] || QG_MY_TCP_PORT=$(qg_free_tcp_port) || return 1
        export QG_MY_TCP_PORT
    fi
    local -a network=(--skip-networking)
    [ -z "${QG_MY_TCP_PORT:-}" ] || network=(--bind-address=127.0.0.1 --port="$QG_MY_TCP_PORT")
    "$server" "${common[@]}" "${network[@]}" "${tls[@]}" --socket="$QG_MY_SOCKET" \
        --pid-file="$QG_MY_DIR/mysqld.pid" --log-error="$QG_MY_DIR/error.log" \
        --general-log=1 --general-log-file="$QG_MY_LOG" \
        --character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci \
        --innodb-buffer-pool-size=16M --innodb-log-file-size=8M \
        --innodb-flush-log-at-trx-commit=0 --skip-log-bin --max-connections=30 ${QG_MY_ARGS:-} \
        >/dev/null 2>&1 &
    QG_MY_PID=$!

    local i
    for i in $(seq 1 200); do
        if [ -S "$QG_MY_SOCKET" ] && my_sql -e 'SELECT 1' >/dev/null 2>&1; then
            export QG_MY_SOCKET QG_MY_LOG QG_MY_DIR
            return 0
        fi
        if ! kill -0 "$QG_MY_PID" 2>/dev/null; then
            break
        fi
        sleep 0.05
    done
    echo "mariadb.sh: server did not come up" >&2
    cat "$QG_MY_DIR/error.log" >&2
    return 1
}

# The command-line client without option files, as root over the socket,
# never through the shim.
my_sql() {
    env -u LD_PRELOAD mariadb --no-defaults --socket="$QG_MY_SOCKET" -uroot \
        --batch --skip-column-names "$@"
}

my_stop() {
    [ -n "${QG_MY_DIR:-}" ] || return 0
    if [ -n "${QG_MY_PID:-}" ] && kill -0 "$QG_MY_PID" 2>/dev/null; then
        kill "$QG_MY_PID" 2>/dev/null
        local i
        for i in $(seq 1 100); do
            kill -0 "$QG_MY_PID" 2>/dev/null || break
            sleep 0.05
        done
        kill -9 "$QG_MY_PID" 2>/dev/null
        wait "$QG_MY_PID" 2>/dev/null
    fi
    rm -rf "$QG_MY_DIR"
    QG_MY_DIR=
    QG_MY_PID=
}
