#!/bin/bash
# The wire front follows a PostgreSQL stream however the client splits and
# pipelines it (raw protocol client, tests/wire/pg_raw.py):
#  - a StartupMessage written as its length and then the rest is recognised;
#  - a query written before the answers to earlier messages is checked under
#    every state they may leave: Query(SET client_encoding) and the attack
#    in one write, the SET as Parse/Bind/Execute/Sync before a simple Query,
#    a Query written together with the StartupMessage (under the encoding the
#    startup names; refused when it names none);
#  - writes and reads made with pwritev2/preadv2 at offset -1 (Python's
#    os.pwritev/os.preadv) are followed as writev/readv;
#  - one thread writes 50 queries and the attack while another reads the
#    answers: both take the connection's lock at once.
# Each attack (UTF-8 c3 95 27 escaped to c3 95 5c 27, which SJIS reads as
# a character and a closing quote) injects without the shim; with it the
# server answers an error naming quoteguard, the marker never reaches the
# server and the connection works after it.  Legitimate input gives the same
# output with and without the shim.
# A duplicate (dup, dup2, dup3, F_DUPFD, F_DUPFD_CLOEXEC, a copy received
# with SCM_RIGHTS) of the socket of a
# connection that the libpq front checks: a Query written raw through it
# injects without the shim; with it the write fails (EACCES) and the log
# says once that quoteguard refused it (audit: passes, logged once), and
# the connection still works through libpq.
# The socket itself written through a stdio stream (fdopen) or spliced from
# a pipe: the same.
# servers: pg
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/pg.sh

qg_require_build clients/pg_dup
pg_available || tap_skip_all "no PostgreSQL server binaries (or not root)"
PY=/usr/bin/python3
pg_start || tap_bail "cannot start PostgreSQL"
pg_psql -c "CREATE TABLE users(name text, secret text);
            INSERT INTO users VALUES ('alice', 'secret_alice'), ('bob', 'secret_bob'),
                                     ('o''hara', 'secret_ohara')" \
    || tap_bail "cannot create the table"

TAIL=27204f5220313d31202d2d20 # ' OR 1=1 --
secrets() { printf '%s\n' "$1" | grep -ac '^ROW: secret_'; }
RAW=("$PY" tests/wire/pg_raw.py)
raw() { "${RAW[@]}" "$@" 2>&1; }

for scenario in split-startup pipeline-simple pipeline-extended with-startup pwritev threads; do
    input=c395$TAIL
    [ $scenario = with-startup ] && input=95$TAIL # SJIS from the start
    marker=qgs_plain_${scenario//-/_}_$$
    out=$(raw $scenario "$input" "$marker")
    ok "$scenario: without the shim the attack injects" [ "$(secrets "$out")" -eq 3 ]
    has "$(cat "$QG_PG_LOG")" "$marker" "$scenario: without the shim the marker reaches the server"

    marker=qgs_enforce_${scenario//-/_}_$$
    log=$QG_PG_DIR/$scenario.log
    out=$(with_shim enforce "$log" "${RAW[@]}" $scenario "$input" "$marker")
    has "$out" "ERROR: quoteguard: blocked" "$scenario: enforce: an error naming quoteguard"
    ok "$scenario: enforce: no secret leaks" [ "$(secrets "$out")" -eq 0 ]
    lacks "$(cat "$QG_PG_LOG")" "$marker" "$scenario: enforce: the attack never reaches the server"
    has "$out" "ROW: alive" "$scenario: enforce: the connection works after the block"
    [ $scenario != threads ] ||
        ok "threads: enforce: every answer read while the other thread writes" \
            [ "$(printf '%s\n' "$out" | grep -c '^ROW: r')" -eq 50 ]

    for legit in 616c696365 6f27686172615c; do # alice, o'hara\ (a quote, a backslash)
        plain=$(raw $scenario $legit qgs_legit_$$)
        shimmed=$(with_shim enforce "$QG_PG_DIR/legit.log" "${RAW[@]}" $scenario $legit qgs_legit_$$)
        ok "$scenario: legitimate $legit: the same output with the shim" [ "$plain" = "$shimmed" ]
    done
    has "$plain$(raw $scenario 616c696365 qgs_legit_$$)" "ROW: secret_alice" "$scenario: legitimate input finds its row"
done

# Thousands of queries written by one thread while another reads their
# answers: the server stops reading once its answers fill the socket, so
# the writer waits for room that only the reader makes, and a waiting write
# must leave the connection to the reader.
plain=$(QG_RAW_THREAD_QUERIES=5000 raw threads 616c696365 qgs_many_$$)
ok "threads, 5000 queries: without the shim every answer is read" \
    [ "$(printf '%s\n' "$plain" | grep -c '^ROW: r')" -eq 5000 ]
shimmed=$(QG_RAW_THREAD_QUERIES=5000 with_shim enforce "$QG_PG_DIR/many.log" "${RAW[@]}" threads 616c696365 qgs_many_$$)
lacks "$shimmed" HANG "threads, 5000 queries: with the shim the writer and the reader do not wait for each other"
ok "threads, 5000 queries: the same output with the shim" [ "$plain" = "$shimmed" ]

# A blocking write waits as the kernel's would: SO_SNDTIMEO ends it.
stopped_within_timeout() {
    local seconds
    seconds=$(printf '%s\n' "$1" | sed -n 's/^STOPPED after \([0-9]*\)\..*/\1/p')
    [ -n "$seconds" ] && [ "$seconds" -ge 1 ] && [ "$seconds" -le 5 ]
}
plain=$(raw send-timeout 616c696365 qgs_timeout_$$)
ok "send-timeout: without the shim the write stops after its 1 s timeout" \
    stopped_within_timeout "$plain" || tap_diag "$plain"
shimmed=$(with_shim enforce "$QG_PG_DIR/timeout.log" "${RAW[@]}" send-timeout 616c696365 qgs_timeout_$$)
ok "send-timeout: with the shim the write stops after its 1 s timeout too" \
    stopped_within_timeout "$shimmed" || tap_diag "$shimmed"

# A Query written with a StartupMessage that names no client_encoding: the
# encoding is the database's, which the server names only in its answer.
out=$(with_shim enforce "$QG_PG_DIR/default.log" "${RAW[@]}" with-startup-default 616c696365 qgs_default_$$)
has "$out" "ERROR: quoteguard: blocked: unknown client encoding \"not yet known" \
    "with-startup-default: enforce: refused, naming the encoding as not yet known"
lacks "$(cat "$QG_PG_LOG")" qgs_default_$$ "with-startup-default: enforce: the query never reaches the server"
has "$out" "ROW: alive" "with-startup-default: enforce: the connection works after the block"
out=$(with_shim audit "$QG_PG_DIR/default-audit.log" "${RAW[@]}" with-startup-default 616c696365 qgs_default_audit_$$)
has "$out" "ROW: secret_alice" "with-startup-default: audit: the query runs"

attack_sql() { printf 'SELECT /*%s*/ secret FROM users WHERE name = '"'"'\xc3\x95\x5c\x27 OR 1=1 -- '"'"'' "$1"; }
for how in dup dup2 dup3 F_DUPFD F_DUPFD_CLOEXEC SCM_RIGHTS fdopen splice; do
    marker=qgs_dup_plain_${how}_$$
    out=$("$QG_BUILD/clients/pg_dup" $how "$(attack_sql $marker)" 2>&1)
    ok "$how of libpq's socket: without the shim the raw attack injects" [ "$(secrets "$out")" -eq 3 ]
    marker=qgs_dup_enforce_${how}_$$
    log=$QG_PG_DIR/dup-$how.log
    out=$(with_shim enforce "$log" "$QG_BUILD/clients/pg_dup" $how "$(attack_sql $marker)" 2>&1)
    has "$out" "WRITE-FAILED: Permission denied" "$how: enforce: the raw write fails"
    ok "$how: enforce: no secret leaks" [ "$(secrets "$out")" -eq 0 ]
    lacks "$(cat "$QG_PG_LOG")" "$marker" "$how: enforce: the attack never reaches the server"
    case $how in
    fdopen) refusal="quoteguard: refused (EACCES): stdio (fdopen) on the socket" ;;
    splice) refusal="quoteguard: refused (EACCES): bytes moved by splice into a database connection's socket" ;;
    *) refusal="quoteguard: refused (EACCES): bytes written through a duplicate of the socket" ;;
    esac
    has "$(cat "$log")" "$refusal" "$how: enforce: the log names quoteguard and the refusal"
    has "$out" "ROW: alive" "$how: enforce: the connection works through libpq"
done
log=$QG_PG_DIR/dup-audit.log
out=$(with_shim audit "$log" "$QG_BUILD/clients/pg_dup" dup "$(attack_sql qgs_dup_audit_$$)" 2>&1)
ok "dup: audit: the raw write passes" [ "$(secrets "$out")" -eq 3 ]
ok "dup: audit: logged once" [ "$(grep -c '"wire_write_refused"' "$log")" -eq 1 ]

tap_done
