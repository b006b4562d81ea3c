#!/bin/bash
# The libpq front from several threads at once: each thread's blocked
# results and pending connection messages stay its own while the others
# add and drop theirs, and ordinary queries keep working in between.
# servers: pg
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/pg.sh

qg_require_build clients/pg_threads
pg_available || tap_skip_all "no PostgreSQL server binaries (or not root)"
pg_start || tap_bail "cannot start PostgreSQL"
THREADS=8
ROUNDS=300

out=$("$QG_BUILD/clients/pg_threads" 2 1 2>&1)
has "$out" "FAIL: thread 0 round 0: blocked PQexec" "without the shim the client sees the attacks reach the server"

log=$QG_PG_DIR/threads.log
out=$(with_shim enforce "$log" "$QG_BUILD/clients/pg_threads" "$THREADS" "$ROUNDS" 2>&1)
has "$out" "THREADS: $THREADS x $ROUNDS ok" "$THREADS threads x $ROUNDS rounds: every answer is the thread's own"
lacks "$out" "FAIL:" "no thread saw a wrong answer"
ok "one finding per blocked call" [ "$(grep -ac '"action":"blocked"' "$log")" -eq $((THREADS * ROUNDS * 2)) ]

tap_done
