# Helpers shared by the end-to-end scenarios (source from bash).
#
# A scenario prints "ok - …" / "not ok - …" lines and "# …" comments;
# tests/e2e/run numbers them into one TAP stream.  Every scenario starts its
# own throwaway servers (tests/lib/pg.sh, tests/lib/mariadb.sh) and cleans up
# on exit, so any one of them can run alone.

E2E_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
QG_ROOT=$(cd -- "$E2E_DIR/../.." && pwd)
QG_WRAPPER=$QG_ROOT/scripts/quoteguard
QG_LIB=$QG_ROOT/${BUILD:-build}/libquoteguard.so
# Debian's interpreters: the DBD and psycopg2 packages are installed for these,
# whatever python3/perl comes first in PATH.
E2E_PERL=/usr/bin/perl
E2E_PYTHON=/usr/bin/python3

. "$QG_ROOT/tests/lib/pg.sh"
. "$QG_ROOT/tests/lib/mariadb.sh"

e2e_tmp=$(mktemp -d /tmp/qg-e2e.XXXXXX)
# Servers and helpers started by a scenario; stopped in reverse order on exit.
e2e_cleanups=()

e2e_cleanup() {
    local i
    for ((i = ${#e2e_cleanups[@]} - 1; i >= 0; i--)); do
        eval "${e2e_cleanups[i]}"
    done
    rm -rf "$e2e_tmp"
}
# Exit handlers add up (tests/lib/atexit.sh): pg_start and my_start register
# their own stops, which run before this one.
qg_at_exit e2e_cleanup
# A scenario stopped by its time limit still cleans up.
trap 'exit 143' TERM INT

ok() { # condition-status description
    if [ "$1" -eq 0 ]; then
        echo "ok - $2"
    else
        echo "not ok - $2"
    fi
}
pass() { ok 0 "$1"; }
fail() { ok 1 "$1"; }
note() { sed 's/^/# /'; }
say() { echo "# $*"; }

# Asserts that two files are byte-identical; shows the difference when not.
same_output() { # description expected actual
    if cmp -s "$2" "$3"; then
        pass "$1"
    else
        fail "$1"
        diff -a "$2" "$3" | head -n 20 | note
    fi
}

# Fails the scenario at once (prints a not ok line) when a tool is missing.
require() { # command...
    local c
    for c in "$@"; do
        if ! command -v "$c" >/dev/null 2>&1 && [ ! -x "$c" ]; then
            fail "required program $c is installed (run make deps)"
            exit 1
        fi
    done
}

require_shim() {
    if [ ! -f "$QG_LIB" ]; then
        fail "$QG_LIB is built (run make)"
        exit 1
    fi
}

# Runs a command under the wrapper: e2e_guard MODE LOGFILE COMMAND...
# QG_WRAPPER_OPTS: more wrapper options (e.g. -v for the debug events).
QG_WRAPPER_OPTS=()
e2e_guard() {
    local mode=$1 log=$2
    shift 2
    "$QG_WRAPPER" --mode "$mode" --log "$log" "${QG_WRAPPER_OPTS[@]}" -- "$@"
}

# Lines of a JSON-lines log that are findings with the given action.
count_findings() { # log action
    [ -f "$1" ] || { echo 0; return; }
    grep -c "\"action\":\"$2\"" "$1"
}

# The program names in the shim's start-up lines of a log, one per line.
attached_programs() { # log
    [ -f "$1" ] && grep '"event":"attached"' "$1" | sed -n 's/.*"program":"\([^"]*\)".*/\1/p' | sort -u
}

# Counts the lines of a server log that contain a fixed string.
server_saw() { # logfile string
    grep -caF -- "$2" "$1"
}

# The flag stored in the secrets tables (data/*.sql): seeing it means an attack got through.
E2E_FLAG=qg-e2e-flag-5d1c0a

# Summary counters of the CGI-style cases.
cases_legit=0 cases_legit_same=0 cases_attack=0 leaked_plain=0 leaked_enforce=0
cases_no=0

# Runs one request of a CGI-style script three times: without the shim, under
# enforce, under audit (each with its own log), and checks the outcome.
#   cgi_case legit|attack LABEL SERVERLOG QUERY_STRING COMMAND...
# Attack query strings end with an SQL comment opener ("--%20"); a unique tag
# is appended so the server log shows whether that very statement arrived.
cgi_case() {
    local kind=$1 label=$2 slog=$3 qs=$4
    shift 4
    cases_no=$((cases_no + 1))
    local d=$e2e_tmp/case$cases_no tag=qgcase$cases_no
    mkdir -p "$d"
    [ "$kind" = legit ] || qs=$qs$tag
    QUERY_STRING=$qs env -u LD_PRELOAD "$@" >"$d/plain" 2>"$d/plain.err"
    local seen_plain seen_after
    seen_plain=$(server_saw "$slog" "$tag")
    QUERY_STRING=$qs e2e_guard enforce "$d/enforce.log" "$@" >"$d/enforce" 2>"$d/enforce.err"
    seen_after=$(server_saw "$slog" "$tag")
    QUERY_STRING=$qs e2e_guard audit "$d/audit.log" "$@" >"$d/audit" 2>"$d/audit.err"
    local programs
    programs=$(attached_programs "$d/enforce.log" | paste -sd ' ')
    ok $([ -n "$programs" ]; echo $?) "$label: shim attached under enforce (program ${programs:-none})"
    local blocked logged
    blocked=$(count_findings "$d/enforce.log" blocked)
    logged=$(count_findings "$d/audit.log" logged)
    if [ "$kind" = legit ]; then
        cases_legit=$((cases_legit + 1))
        same_output "$label: same response under enforce" "$d/plain" "$d/enforce"
        same_output "$label: same response under audit" "$d/plain" "$d/audit"
        ok $([ "$blocked" -eq 0 ] && [ "$logged" -eq 0 ]; echo $?) \
            "$label: no findings (enforce $blocked, audit $logged)"
        cmp -s "$d/plain" "$d/enforce" && cases_legit_same=$((cases_legit_same + 1))
    else
        cases_attack=$((cases_attack + 1))
        local leak_plain=1 leak_enforce=1
        grep -qF "$E2E_FLAG" "$d/plain" && [ "$seen_plain" -ge 1 ] && leak_plain=0
        grep -qF "$E2E_FLAG" "$d/enforce" && leak_enforce=0
        [ $leak_plain = 0 ] && leaked_plain=$((leaked_plain + 1))
        [ $leak_enforce = 0 ] && leaked_enforce=$((leaked_enforce + 1))
        ok $leak_plain "$label: without quoteguard the secret leaks (server saw the statement $seen_plain time(s))"
        ok $([ $leak_enforce = 1 ] && [ "$blocked" -ge 1 ] && [ "$seen_after" = "$seen_plain" ]; echo $?) \
            "$label: under enforce no leak, $blocked blocked, statement never reached the server"
        ok $([ "$logged" -ge 1 ] && grep -qF "$E2E_FLAG" "$d/audit"; echo $?) \
            "$label: under audit the query passes and $logged finding(s) are logged"
        if [ $leak_enforce = 0 ] || [ "$blocked" -lt 1 ]; then
            say "enforce response:"; note <"$d/enforce"; note <"$d/enforce.err"
        fi
    fi
}

# Prints the summary line of the CGI-style cases.
cgi_summary() { # what
    say "$1: $cases_attack attack(s): $leaked_plain got through without quoteguard," \
        "$leaked_enforce under enforce; $cases_legit legitimate request(s), $cases_legit_same identical under enforce"
}

# A TCP port on 127.0.0.1 that nothing listens on right now.
free_port() {
    local port i
    for i in $(seq 1 50); do
        port=$((30000 + RANDOM % 30000))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            echo "$port"
            return 0
        fi
    done
    return 1
}

# Loads the application schema and data (as UTF-8, never through the shim).
e2e_load_data() {
    env -u LD_PRELOAD "$QG_PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -f "$E2E_DIR/data/pg.sql" >/dev/null
}

e2e_load_mysql_data() {
    my_sql <"$E2E_DIR/data/mysql.sql"
}

# Starts `php -S` on a free loopback port serving tests/e2e/php, optionally
# under the wrapper.  Sets PHP_PORT, PHP_PID, PHP_URL.
#   php_start none|enforce|audit LOG
php_start() {
    local mode=$1 log=$2 _
    for _ in 1 2 3; do
        PHP_PORT=$(free_port) || return 1
        PHP_URL=http://127.0.0.1:$PHP_PORT
        # Both commands exec php, so $! is php's own pid.
        if [ "$mode" = none ]; then
            env -u LD_PRELOAD php -S "127.0.0.1:$PHP_PORT" -t "$E2E_DIR/php" >"$e2e_tmp/php-$PHP_PORT.log" 2>&1 &
        else
            "$QG_WRAPPER" --mode "$mode" --log "$log" "${QG_WRAPPER_OPTS[@]}" -- \
                php -S "127.0.0.1:$PHP_PORT" -t "$E2E_DIR/php" >"$e2e_tmp/php-$PHP_PORT.log" 2>&1 &
        fi
        PHP_PID=$!
        local i
        for i in $(seq 1 100); do
            if curl -s -o /dev/null "$PHP_URL/index.php"; then
                e2e_cleanups+=("php_stop $PHP_PID")
                return 0
            fi
            kill -0 "$PHP_PID" 2>/dev/null || break
            sleep 0.05
        done
        php_stop "$PHP_PID"
    done
    echo "php -S did not come up" >&2
    cat "$e2e_tmp/php-$PHP_PORT.log" >&2
    return 1
}

php_stop() { # pid
    kill -0 "$1" 2>/dev/null || return 0
    kill "$1" 2>/dev/null
    wait "$1" 2>/dev/null
    return 0
}
