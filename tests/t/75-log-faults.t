#!/bin/bash
# The log never hurts the program: descriptor 2 closed (the connection takes
# its number), a FIFO as the log, the config or the shapes profile, the
# file-size limit reached, /dev/full, stderr a pipe nobody reads.  Each time
# the program finishes with the right results, enforce still blocks, audit
# still passes, and one line says what was lost.
# servers: pg mariadb
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/pg.sh
. tests/lib/mariadb.sh

qg_require_build clients/pg_legacy clients/my_legacy
TMP=$(mktemp -d /tmp/qg-log-faults.XXXXXX)
qg_at_exit "rm -rf '$TMP'"

pg_available || { ok "PostgreSQL server binaries (and root)" false; tap_done; }
my_available || { ok "MariaDB server binaries (and root)" false; tap_done; }
pg_start || tap_bail "cannot start PostgreSQL"
my_start || tap_bail "cannot start MariaDB"
my_sql -e "CREATE DATABASE qg;
           CREATE TABLE qg.users (name VARBINARY(64), secret VARCHAR(64));
           INSERT INTO qg.users VALUES ('alice', 'secret_alice'), ('bob', 'secret_bob')" ||
    tap_bail "cannot create the MariaDB table"
# ' OR 1=1 -- after the lead byte
TAIL=27204f5220313d31202d2d20

# An SJIS attack, then a clean query on the same connection.
pg_attack() { # MODE LOG [env…] — stdout: the client's output
    local mode=$1 log=$2
    shift 2
    env "$@" bash -c '. tests/lib/shim.sh; with_shim "$@"' _ "$mode" "$log" \
        timeout 60 "$QG_BUILD/clients/pg_legacy" --encoding SJIS --scs off \
        --after "SELECT 'alive'" "SELECT '%s' AS v" "95$TAIL"
}

# What the attack must give in each mode.
pg_right() { # OUT MODE LABEL
    local out=$1 mode=$2 label=$3
    if [ "$mode" = audit ]; then
        lacks "$out" "quoteguard: blocked" "$label, audit: the attack passes"
    else
        has "$out" "ERROR: 42601 quoteguard: blocked" "$label, $mode: the attack is blocked"
    fi
    has "$out" "ROW: alive" "$label, $mode: the connection keeps working"
}

lost_lines() { # FILE — the log_lines_lost lines in it
    grep -a '"event":"log_lines_lost"' "$1"
}

# ------------------------------------------------ descriptor 2 closed
# The connection's socket becomes descriptor 2; nothing may be written there.
for log in stderr default; do
    for mode in enforce audit rewrite; do
        [ $log = default ] && logenv=(-u QUOTEGUARD_LOG) || logenv=()
        out=$(env "${logenv[@]}" bash -c '. tests/lib/shim.sh; with_shim "$@" 2>&-' _ $mode stderr \
            "$QG_BUILD/clients/pg_legacy" --encoding SJIS --scs off \
            --after "SELECT 'alive'" "SELECT '%s' AS v" "95$TAIL" 2>/dev/null)
        pg_right "$out" $mode "pg, fd 2 closed, log $log"
        lacks "$out" "invalid frontend message" "pg, fd 2 closed, log $log, $mode: no JSON in the protocol stream"

        out=$(env "${logenv[@]}" bash -c '. tests/lib/shim.sh; with_shim "$@" 2>&-' _ $mode stderr \
            "$QG_BUILD/clients/my_legacy" "$QG_MY_SOCKET" db=qg set-names=gbk escape=bytewise \
            input="bf$TAIL" sql="SELECT 'alive'" 2>/dev/null)
        if [ $mode = audit ]; then
            lacks "$out" "quoteguard: blocked" "mysql, fd 2 closed, log $log, audit: the attack passes"
        else
            matches "$out" '^ERROR: 1105 [0-9A-Z]{5} quoteguard: blocked' \
                "mysql, fd 2 closed, log $log, $mode: the attack is blocked"
        fi
        has "$out" "ROW: alive" "mysql, fd 2 closed, log $log, $mode: the connection keeps working"
    done
done

# The same under the wire front: drivers that speak the protocol themselves.
if /usr/bin/python3 -c 'import pg8000, pymysql' 2>/dev/null; then
    for mode in enforce audit; do
        out=$(bash -c '. tests/lib/shim.sh; with_shim "$@" 2>&-' _ $mode stderr \
            /usr/bin/python3 tests/wire/pg_clients.py pg8000 SJIS "95$TAIL" qg_fd2_wire_$$ 2>/dev/null)
        if [ $mode = enforce ]; then
            has "$out" "quoteguard: blocked" "wire pg8000, fd 2 closed, enforce: the attack is blocked"
        else
            lacks "$out" "quoteguard: blocked" "wire pg8000, fd 2 closed, audit: the attack passes"
        fi
        has "$out" "ALIVE: alive" "wire pg8000, fd 2 closed, $mode: the connection keeps working"
        out=$(bash -c '. tests/lib/shim.sh; with_shim "$@" 2>&-' _ $mode stderr \
            /usr/bin/python3 tests/wire/mysql_pymysql.py "$QG_MY_SOCKET" gbk "bf$TAIL" qg_fd2_wire_$$ 2>/dev/null)
        if [ $mode = enforce ]; then
            has "$out" "quoteguard: blocked" "wire PyMySQL, fd 2 closed, enforce: the attack is blocked"
        else
            lacks "$out" "quoteguard: blocked" "wire PyMySQL, fd 2 closed, audit: the attack passes"
        fi
        has "$out" "ALIVE: alive" "wire PyMySQL, fd 2 closed, $mode: the connection keeps working"
    done
else
    ok "python3-pg8000 and python3-pymysql (scripts/install-deps installs them)" false
fi

# ---------------------------------------------------- FIFO as the log
mkfifo "$TMP/log.fifo"
for mode in enforce audit; do
    out=$(QUOTEGUARD_VERBOSE=0 pg_attack $mode "$TMP/log.fifo" 2>"$TMP/fifo-$mode.err")
    pg_right "$out" $mode "log a FIFO without a reader"
    ok "log a FIFO, $mode: one line says the line was lost and why" \
        [ "$(lost_lines "$TMP/fifo-$mode.err" | grep -c 'not a regular file or character device; 1 log line lost')" = 1 ] ||
        tap_diag "$(cat "$TMP/fifo-$mode.err")"
done

# ------------------------------------------------- FIFO as the config
# A configuration problem makes the mode enforce whatever was asked for.
mkfifo "$TMP/conf.fifo"
out=$(QUOTEGUARD_CONFIG=$TMP/conf.fifo QUOTEGUARD_MODE=audit QUOTEGUARD_LOG=stderr QUOTEGUARD_VERBOSE=0 \
    LD_PRELOAD=$QG_SHIM timeout 60 "$QG_BUILD/clients/pg_legacy" --encoding SJIS --scs off \
    --after "SELECT 'alive'" "SELECT '%s' AS v" "95$TAIL" 2>"$TMP/conf-fifo.err")
ok "config a FIFO without a writer: the program finishes" [ $? -ne 124 ]
pg_right "$out" enforce "config a FIFO (audit asked, enforce because of the problem)"
has "$(cat "$TMP/conf-fifo.err")" "config file $TMP/conf.fifo: not a regular file; not read; using mode enforce" \
    "config a FIFO: one line says it was not read"

# ------------------------------------------- FIFO as the shapes profile
mkfifo "$TMP/shapes.fifo"
out=$(QUOTEGUARD_VERBOSE=0 pg_attack enforce "$TMP/shapes.log" QUOTEGUARD_SHAPES=learn \
    QUOTEGUARD_SHAPES_FILE="$TMP/shapes.fifo" 2>/dev/null)
pg_right "$out" enforce "shapes profile a FIFO"
has "$(cat "$TMP/shapes.log")" "shapes profile cannot be read: $TMP/shapes.fifo: not a regular file or character device" \
    "shapes profile a FIFO: not opened, and said so"

# --------------------------------------------------- ulimit -f reached
# The next line does not fit under the limit (bash counts ulimit -f in
# KiB): it is lost whole (no half line, no SIGXFSZ), and the loss is told on
# stderr.
for mode in enforce audit; do
    log=$TMP/full-$mode.log
    head -c $((4 * 1024 - 100)) /dev/zero | tr '\0' '#' >"$log"
    echo >>"$log"
    size_before=$(stat -c %s "$log")
    out=$(ulimit -f 4; QUOTEGUARD_VERBOSE=0 pg_attack $mode "$log" 2>"$TMP/fsize-$mode.err")
    status=$?
    ok "ulimit -f, $mode: the program is not killed (status $status)" [ $status -eq 0 ]
    pg_right "$out" $mode "ulimit -f"
    ok "ulimit -f, $mode: the log file is as it was (no half line)" [ "$(stat -c %s "$log")" = "$size_before" ]
    ok "ulimit -f, $mode: one line says the line was lost and why" \
        [ "$(lost_lines "$TMP/fsize-$mode.err" | grep -c 'file size limit.*; 1 log line lost')" = 1 ] ||
        tap_diag "$(cat "$TMP/fsize-$mode.err")"
done

# ---------------------------------------- counters under ulimit -f 0
# The counters file cannot take a byte: counting stops and says so once;
# the program is not killed.  stderr is the pipe stdout is (a file could
# not take the line either).
for mode in enforce audit; do
    mkdir "$TMP/counters-$mode"
    out=$( (ulimit -f 0; QUOTEGUARD_VERBOSE=0 QUOTEGUARD_COUNTERS_DIR="$TMP/counters-$mode" \
        pg_attack $mode stderr; echo "EXIT: $?") 2>&1)
    ok "counters under ulimit -f 0, $mode: the program is not killed" \
        [ "$(grep -a '^EXIT: ' <<<"$out")" = "EXIT: 0" ] || tap_diag "$out"
    pg_right "$out" $mode "counters under ulimit -f 0"
    ok "counters under ulimit -f 0, $mode: one line says counting stopped and why" \
        [ "$(grep -ac '"counters_error".*file size limit' <<<"$out")" = 1 ] || tap_diag "$out"
done

# --------------------------------------------------------- /dev/full
for mode in enforce audit; do
    out=$(QUOTEGUARD_VERBOSE=0 pg_attack $mode /dev/full 2>"$TMP/devfull-$mode.err")
    pg_right "$out" $mode "log /dev/full"
    ok "log /dev/full, $mode: one line says the line was lost and why" \
        [ "$(lost_lines "$TMP/devfull-$mode.err" | grep -c 'No space left on device; 1 log line lost')" = 1 ] ||
        tap_diag "$(cat "$TMP/devfull-$mode.err")"
done

# ------------------------------------------- stderr a pipe nobody reads
# Writing there raises SIGPIPE, which would kill the program.
for mode in enforce audit; do
    out=$(python3 - "$mode" "$QG_SHIM" "$QG_BUILD/clients/pg_legacy" "95$TAIL" <<'EOF'
import os, subprocess, sys
mode, shim, client, attack = sys.argv[1:]
r, w = os.pipe()
os.close(r)
env = dict(os.environ, QUOTEGUARD_CONFIG="/dev/null", QUOTEGUARD_MODE=mode, QUOTEGUARD_LOG="stderr",
           QUOTEGUARD_VERBOSE="1", LD_PRELOAD=shim)
p = subprocess.run([client, "--encoding", "SJIS", "--scs", "off", "--after", "SELECT 'alive'",
                    "SELECT '%s' AS v", attack], env=env, stderr=w, stdout=subprocess.PIPE, timeout=60)
sys.stdout.write(p.stdout.decode("latin-1"))
print("EXIT:", p.returncode)
EOF
)
    has "$out" "EXIT: 0" "stderr a pipe without a reader, $mode: no SIGPIPE, the program exits 0"
    pg_right "$out" $mode "stderr a pipe without a reader"
done

tap_done
