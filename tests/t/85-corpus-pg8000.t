#!/bin/bash
# No false positives at the wire: PostgreSQL's own regression tests
# (../shared/corpus/pg-regress) replayed through pg8000, a driver that speaks
# the protocol itself (every statement a Parse message), with the shim in
# enforce.  The statements are the ones psql sent for each file, as the
# server logged them (psql's variables filled in, its \c sessions kept);
# each file then runs through tests/corpus/replay_driver.py in a fresh
# database made from one that ran test_setup.sql, once on a server without
# the shim and once on an identical fresh server under it.  Every statement
# must get the same answer (ok and its row count, or the same SQLSTATE) and
# the shim must log no finding (psql's describe queries, about 8 % of the
# statements, and statements compared with an OID psql's \gset filled in,
# name objects by the OIDs they had where psql ran: their row counts are left
# out of the comparison).  A last script, an attack a byte-wise
# escaper lets through under SJIS, must be blocked: it proves the shim read
# the driver's messages.
# Sample, to keep the run to a few minutes: every 4th file (QG_CORPUS_EVERY=N
# takes every Nth; 1 is the whole corpus, about 8 minutes).  The WIN1252 file
# (Windows only) is left out.
# Needs ../shared/corpus, the reference material beside the source tree.
# servers: pg
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/pg.sh
. tests/lib/hardening.sh

CORPUS=../shared/corpus/pg-regress
[ -f "$CORPUS/test_setup.sql" ] || tap_bail "needs $CORPUS (the reference material beside the source tree)"
pg_available || tap_skip_all "no PostgreSQL server binaries (or not root)"
PY=/usr/bin/python3
"$PY" -c 'import pg8000' || tap_bail "python3-pg8000 is not installed (scripts/install-deps installs it)"
qg_require_build
EVERY=${QG_CORPUS_EVERY:-4}

WORK=$(mktemp -d /tmp/qg-pg8000.XXXXXX)
qg_at_exit "rm -rf $WORK"
LOG=$WORK/shim.log

# A fresh server with the base database every file starts from.
start_server() {
    pg_start || tap_bail "cannot start PostgreSQL"
    mkdir -p "$QG_PG_DIR/files" && chmod 777 "$QG_PG_DIR/files" # COPY … TO files
    export PG_ABS_SRCDIR=$QG_PG_DIR/files PG_ABS_BUILDDIR=$QG_PG_DIR/files PG_LIBDIR=$QG_PG_DIR/files PG_DLSUFFIX=.so
    admin "ALTER SYSTEM SET statement_timeout = '20s'" && admin "ALTER SYSTEM SET lock_timeout = '10s'" &&
        admin "SELECT pg_reload_conf()" &&
        admin "CREATE DATABASE regress_base TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'" ||
        tap_bail "cannot create the base database"
    env -u LD_PRELOAD "$QG_PG_BIN/psql" -X -q -d regress_base -f "$CORPUS/test_setup.sql" >/dev/null 2>&1
}
admin() { env -u LD_PRELOAD "$QG_PG_BIN/psql" -X -q -d postgres -v ON_ERROR_STOP=1 -c "$1" >/dev/null; }

mapfile -t all < <(ls "$CORPUS"/*.sql "$CORPUS"/plpgsql/*.sql | grep -v '/test_setup\.sql$' |
    grep -v '/collate\.windows\.win1252\.sql$')
files=()
for i in "${!all[@]}"; do ((i % EVERY == 0)) && files+=("${all[$i]}"); done
start=$SECONDS

# What psql sends: each file in a database of its own, every statement logged
# with its session, user and database.
start_server
admin "ALTER SYSTEM SET log_line_prefix = '@@qgrec %c %u %d@@ '" && admin "ALTER SYSTEM SET log_min_messages = 'log'" &&
    admin "SELECT pg_reload_conf()" || tap_bail "cannot set the server's log"
: >"$WORK/order"
for i in "${!files[@]}"; do
    admin "CREATE DATABASE harvest_$i TEMPLATE regress_base" || tap_bail "cannot create a database"
    env -u LD_PRELOAD timeout 120 "$QG_PG_BIN/psql" -X -q -d "harvest_$i" -f "${files[$i]}" >/dev/null 2>&1
    echo "harvest_$i $(basename "${files[$i]}" .sql)" >>"$WORK/order"
    admin "DROP DATABASE harvest_$i WITH (FORCE)" 2>/dev/null
done
"$PY" tests/corpus/pg_log_records.py "$QG_PG_LOG" "$WORK/order" >"$WORK/records" ||
    tap_bail "cannot read the statements from the server's log"
pg_stop

# The canary: client_encoding SJIS and standard_conforming_strings off set by
# queries, and a quote escaped byte-wise after the lead byte 0x95, which
# takes the backslash as its trail byte: the quote closes the literal.
canary() { printf 'S canary:%d %s\n' "$1" "$(printf '%s' "$2" | od -An -v -tx1 | tr -d ' \n')"; }
{
    echo "F canary"
    canary 1 "SET client_encoding TO 'SJIS'"
    canary 2 "SET standard_conforming_strings TO off"
    canary 3 "SELECT relname FROM pg_class WHERE relname = '"$'\x95\\\''" OR 1=1 -- '"
} >>"$WORK/records"
statements=$(grep -c '^S ' "$WORK/records")

replay() { # RUNNER…
    start_server
    "$@" "$PY" tests/corpus/replay_driver.py pg8000 "$QG_PG_DIR" "$PGPORT" "$PGUSER" <"$WORK/records"
    pg_stop
}
replay env >"$WORK/plain"
replay with_shim enforce "$LOG" >"$WORK/shim"
tap_diag "pg-regress through pg8000: ${#files[@]} of ${#all[@]} files (every ${EVERY}th), $statements statements, in $((SECONDS - start))s" \
    "without the shim: $(awk '{ print $2 }' "$WORK/plain" | sort | uniq -c | awk '{ printf "%s %s, ", $2, $1 }')" \
    "under the shim: $(awk '{ print $2 }' "$WORK/shim" | sort | uniq -c | awk '{ printf "%s %s, ", $2, $1 }')"

ok "the statements psql sent were read from the server's log (> 5000)" [ "$statements" -gt 5000 ]
ok "every statement was replayed, without and under the shim" \
    [ "$(wc -l <"$WORK/plain") $(wc -l <"$WORK/shim")" = "$statements $statements" ]
ok "the server accepted most of them (> 70 %)" [ "$(grep -c ' ok ' "$WORK/plain")" -gt $((statements * 7 / 10)) ]
# psql's describe queries and statements with an OID from \gset (marked ~)
# name objects by OIDs of the server that ran the files, and the stats file reads the statistics counters,
# which move with the server's timing: their row counts do not compare,
# their outcome does.
answers() { grep -v '^canary:' "$1" | sed -E 's/^([^ ]*~ ok|stats:[0-9]+ ok) [0-9]+/\1/'; }
differing() { diff <(answers "$WORK/plain") <(answers "$WORK/shim"); }
diffs=$(differing | grep -c '^[<>]')
ok "every corpus statement gets the same answer and no finding under the shim ($diffs lines differ)" [ "$diffs" -eq 0 ] ||
    tap_diag "$(differing | head -n 20)"
findings=$(qg_log_findings "$LOG")
ok "no finding but the canary's ($findings findings)" [ "$findings" -eq 1 ] ||
    tap_diag "$(grep -a '"reason":' "$LOG" | head -n 10 | cut -c 1-600)"
matches "$(grep '^canary:3 ' "$WORK/plain")" '^canary:3 ok ([2-9]|[0-9]{2,})' \
    "the canary injects without the shim (every row of pg_class)"
has "$(grep '^canary:3 ' "$WORK/shim")" "canary:3 blocked" "the canary is blocked under the shim"
has "$(cat "$LOG")" '"api":"wire:Parse"' "the shim read pg8000's Parse messages at the wire"
tap_done
