#!/bin/bash
# Threads and processes: 32 threads, each with its own connection (libpq,
# then libmariadb), mix attacks and ordinary queries while connections come
# and go, children are forked and one is exec'd (inheriting LD_PRELOAD).
# Every attack must be blocked, every ordinary query answered right, every
# child must finish.  Then the same clients under ThreadSanitizer (shim and
# client built with -fsanitize=thread into build/tsan/) and, smaller, under
# Helgrind: no report that involves the shim.
# servers: pg mariadb
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/pg.sh
. tests/lib/mariadb.sh
. tests/lib/hardening.sh

qg_require_build clients/pg_hammer clients/my_hammer
pg_available || tap_skip_all "no PostgreSQL server binaries (or not root)"
my_available || tap_skip_all "no MariaDB server binaries (or not root)"
pg_start || tap_bail "cannot start PostgreSQL"
pg_more_connections 60 || tap_bail "cannot restart PostgreSQL with more connections"
my_start || tap_bail "cannot start MariaDB"
my_sql -e "SET GLOBAL max_connections = 100" || tap_bail "cannot raise max_connections"

THREADS=32
ROUNDS=50
FORKS=5
TMP=$QG_PG_DIR

# Every line parses as JSON and the finding lines come from N distinct pids.
json_lines_ok() { # LOG
    python3 -c '
import json, sys
for n, line in enumerate(open(sys.argv[1], "rb"), 1):
    json.loads(line)
' "$1"
}
finding_pids() { grep -a '"reason":' "$1" | grep -ao '"pid":[0-9]*' | sort -u | wc -l; }

# ---------------------------------------------------------------- libpq
out=$("$QG_BUILD/clients/pg_hammer" 1 1 2>&1)
has "$out" "attack through PQexec not blocked" "pg: without the shim the attack reaches the server (the check can fail)"

log=$TMP/pg-hammer.log
out=$(with_shim enforce "$log" "$QG_BUILD/clients/pg_hammer" $THREADS $ROUNDS $FORKS 1 2>&1)
tap_diag "$(printf '%s\n' "$out" | grep '^HAMMER')"
has "$out" "HAMMER: $THREADS threads x $ROUNDS rounds: $((THREADS * ROUNDS * 2)) attacks blocked, $((THREADS * ROUNDS * 2)) clean ok, $FORKS forks ok, 1 exec ok, 0 failures" \
    "pg: $THREADS threads x $ROUNDS rounds (reconnecting every 8): every attack blocked, every answer right, $FORKS forked children and an exec'd one passed"
has "$out" "HAMMER: 2 threads x 2 rounds: 8 attacks blocked, 8 clean ok" "pg: the exec'd child inherited LD_PRELOAD and blocked its attacks"
lacks "$out" "FAIL:" "pg: no failure in any thread or child"
blocked=$(grep -ac '"action":"blocked"' "$log")
ok "pg: one finding per blocked call ($blocked = $((THREADS * ROUNDS * 2)) + $FORKS x 2 + 8)" \
    [ "$blocked" -eq $((THREADS * ROUNDS * 2 + FORKS * 2 + 8)) ]
ok "pg: findings from $((FORKS + 2)) processes (parent, forks, exec'd child)" [ "$(finding_pids "$log")" -eq $((FORKS + 2)) ]
ok "pg: every log line of the concurrent writers is whole JSON" json_lines_ok "$log"

# ----------------------------------------------------------- libmariadb
out=$("$QG_BUILD/clients/my_hammer" "$QG_MY_SOCKET" 1 1 2>&1)
has "$out" "attack through mysql_real_query not blocked" "mysql: without the shim the attack reaches the server"

log=$TMP/my-hammer.log
out=$(with_shim enforce "$log" "$QG_BUILD/clients/my_hammer" "$QG_MY_SOCKET" $THREADS $ROUNDS $FORKS 2>&1)
tap_diag "$(printf '%s\n' "$out" | grep '^HAMMER')"
has "$out" "HAMMER: $THREADS threads x $ROUNDS rounds: $((THREADS * ROUNDS * 2)) attacks blocked, $((THREADS * ROUNDS * 2)) clean ok, $FORKS forks ok, 0 failures" \
    "mysql: $THREADS threads x $ROUNDS rounds (reconnecting every 8): every attack blocked, every answer right, $FORKS forked children passed"
lacks "$out" "FAIL:" "mysql: no failure in any thread or child"
blocked=$(grep -ac '"action":"blocked"' "$log")
ok "mysql: one finding per blocked call ($blocked)" [ "$blocked" -eq $((THREADS * ROUNDS * 2 + FORKS * 2)) ]
ok "mysql: findings from $((FORKS + 1)) processes" [ "$(finding_pids "$log")" -eq $((FORKS + 1)) ]
ok "mysql: every log line is whole JSON" json_lines_ok "$log"

# ------------------------------------------------------- ThreadSanitizer
TSAN_BUILD=${BUILD:-build}/tsan
if make -s -j2 BUILD=$TSAN_BUILD CFLAGS="-O1 -g -fsanitize=thread" \
       $TSAN_BUILD/libquoteguard.so $TSAN_BUILD/clients/pg_hammer $TSAN_BUILD/clients/my_hammer \
       >"$TMP/tsan-build.log" 2>&1; then
    tsan_ok=0
else
    tsan_ok=1
fi
ok "tsan: shim and clients build with -fsanitize=thread" [ $tsan_ok -eq 0 ] || tap_diag "$(tail -n 20 "$TMP/tsan-build.log")"
TSAN_SHIM=$PWD/$TSAN_BUILD/libquoteguard.so
export TSAN_OPTIONS="halt_on_error=0 exitcode=66 history_size=4"

# A race on purpose, to show that reports are seen.
racy=$(qg_helper_build tsan_racy tests/clients/ext/tsan_racy.c -fsanitize=thread -O1 -lpthread)
out=$("$racy" 2>&1)
has "$out" "WARNING: ThreadSanitizer: data race" "tsan: a deliberate race is reported (the detector works here)"

tsan_run() { # NAME command…
    local name=$1 status
    shift
    QG_SHIM=$TSAN_SHIM with_shim enforce "$TMP/tsan-$name.log" "$@" >"$TMP/tsan-$name.out" 2>&1
    status=$?
    tap_diag "$name under TSan: exit $status, $(grep -c 'WARNING: ThreadSanitizer' "$TMP/tsan-$name.out") reports" \
        "$(grep '^HAMMER' "$TMP/tsan-$name.out")"
    return $status
}
TSAN_ROUNDS=40
if [ $tsan_ok -eq 0 ]; then
    ok "tsan: pg_hammer $THREADS x $TSAN_ROUNDS exits 0 (no report, no failure)" \
        tsan_run pg $TSAN_BUILD/clients/pg_hammer $THREADS $TSAN_ROUNDS
    lacks "$(cat "$TMP/tsan-pg.out")" "ThreadSanitizer" "tsan: no report in the libpq run"
    has "$(cat "$TMP/tsan-pg.out")" "$((THREADS * TSAN_ROUNDS * 2)) attacks blocked" "tsan: libpq attacks blocked under TSan"
    ok "tsan: my_hammer $THREADS x $TSAN_ROUNDS exits 0 (no report, no failure)" \
        tsan_run my $TSAN_BUILD/clients/my_hammer "$QG_MY_SOCKET" $THREADS $TSAN_ROUNDS
    lacks "$(cat "$TMP/tsan-my.out")" "ThreadSanitizer" "tsan: no report in the libmariadb run" ||
        tap_diag "$(grep -A14 'WARNING: ThreadSanitizer' "$TMP/tsan-my.out" | head -n 40)"
    has "$(cat "$TMP/tsan-my.out")" "$((THREADS * TSAN_ROUNDS * 2)) attacks blocked" "tsan: libmariadb attacks blocked under TSan"
fi
unset TSAN_OPTIONS

# --------------------------------------------------------------- Helgrind
# Helgrind is slow: 4 threads x 6 rounds.  tests/lib/helgrind-classify
# sorts its errors; only errors in the shim's own non-atomic code fail.
if command -v valgrind >/dev/null; then
    for client in pg my; do
        args=(4 6)
        [ $client = my ] && args=("$QG_MY_SOCKET" 4 6)
        with_shim enforce "$TMP/hg-$client.qg.log" valgrind --tool=helgrind --num-callers=40 \
            --log-file="$TMP/hg-$client.log" "$QG_BUILD/clients/${client}_hammer" "${args[@]}" \
            >"$TMP/hg-$client.out" 2>&1
        has "$(cat "$TMP/hg-$client.out")" "0 failures" "helgrind: ${client}_hammer 4 x 6 passes under Helgrind"
        verdict=$(tests/lib/helgrind-classify src/core src/wire src/policy src/front "$TMP/hg-$client.log")
        status=$?
        tap_diag "$(printf '%s\n' "$verdict" | head -n 1)"
        ok "helgrind: ${client}_hammer: no Helgrind error in the shim's own code" [ $status -eq 0 ] ||
            tap_diag "$(printf '%s\n' "$verdict" | head -n 60)"
    done
else
    ok "helgrind: valgrind is installed" false
fi

tap_done
