#!/bin/bash
# No false positives on SQL nobody here wrote: PostgreSQL's own regression
# tests (../shared/corpus/pg-regress, 228 files) run through psql with the
# shim in enforce mode, each file in a fresh UTF8 database made from one
# that ran test_setup.sql.  collate.windows.win1252.sql only runs on
# Windows; its body (from the SET client_encoding TO WIN1252 on, the skip
# guard left out) runs in a WIN1252 database, so that its raw WIN1252
# bytes reach the shim.  Server errors are expected (no regress.so, no data
# files); what counts is the shim's log: no finding at all.
# QG_CORPUS_FILES=N limits the run to the first N files (quick local runs).
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
qg_require_build
pg_start || tap_bail "cannot start PostgreSQL"

WORK=$QG_PG_DIR/corpus
mkdir -p "$WORK"
chmod 777 "$WORK" # the server writes COPY … TO files here
LOG=$WORK/shim.log
export PG_ABS_SRCDIR=$WORK PG_ABS_BUILDDIR=$WORK PG_LIBDIR=$WORK PG_DLSUFFIX=.so
# No statement may run for long; a file gets at most 120 s.
export PGOPTIONS="-c statement_timeout=20s -c lock_timeout=10s"
PSQL=$QG_PG_BIN/psql
admin() { env -u LD_PRELOAD "$PSQL" -X -q -d postgres -v ON_ERROR_STOP=1 -c "$1" >/dev/null; }

statements_logged() { grep -ac -E 'LOG:  (statement|execute [^:]*):' "$QG_PG_LOG"; }
before=$(statements_logged)

admin "CREATE DATABASE regress_base TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'" ||
    tap_bail "cannot create the base database"
with_shim enforce "$LOG" timeout 120 "$PSQL" -X -q -v ON_ERROR_STOP=0 -d regress_base \
    -f "$CORPUS/test_setup.sql" >"$WORK/test_setup.out" 2>&1
admin_statements=1

# One file: fresh database, psql under the shim, database dropped.
run_file() { # INDEX FILE
    local db=regress_$1 file=$2
    admin "CREATE DATABASE $db TEMPLATE regress_base" || return 1
    with_shim enforce "$LOG" timeout 120 "$PSQL" -X -q -v ON_ERROR_STOP=0 -d "$db" -f "$file" \
        >"$WORK/$1.out" 2>&1
    echo "$? $file" >"$WORK/$1.status"
    admin "DROP DATABASE $db WITH (FORCE)" 2>/dev/null # subscription.sql leaves one that cannot go
}
export -f run_file admin with_shim
export LOG WORK PSQL QG_SHIM

mapfile -t files < <(ls "$CORPUS"/*.sql "$CORPUS"/plpgsql/*.sql | grep -v '/test_setup\.sql$' |
    grep -v '/collate\.windows\.win1252\.sql$')
[ -n "${QG_CORPUS_FILES:-}" ] && files=("${files[@]:0:$QG_CORPUS_FILES}")
start=$SECONDS
for i in "${!files[@]}"; do printf '%s %s\n' "$i" "${files[$i]}"; done |
    xargs -P 2 -L 1 bash -c 'run_file "$0" "$1"'
admin_statements=$((admin_statements + 2 * ${#files[@]}))

# WIN1252: the file's body, in a database of that encoding.
win=$WORK/win1252.sql
sed -n '/^SET client_encoding TO WIN1252;/,$p' "$CORPUS/collate.windows.win1252.sql" >"$win"
admin "CREATE DATABASE regress_win1252 TEMPLATE template0 ENCODING 'WIN1252' LOCALE 'C'" ||
    tap_bail "cannot create the WIN1252 database"
with_shim enforce "$LOG" timeout 120 "$PSQL" -X -q -v ON_ERROR_STOP=0 -d regress_win1252 -f "$win" \
    >"$WORK/win1252.out" 2>&1
admin_statements=$((admin_statements + 1))
elapsed=$((SECONDS - start))

timed_out=$(grep -l '^124 ' "$WORK"/*.status 2>/dev/null | wc -l)
statements=$(($(statements_logged) - before - admin_statements))
findings=$(qg_log_findings "$LOG")
blocked=$(grep -ac '"action":"blocked"' "$LOG" 2>/dev/null)
tap_diag "pg-regress: $((${#files[@]} + 2)) files (test_setup, ${#files[@]} others, the WIN1252 body) in ${elapsed}s" \
    "statements received by the server: $statements; shim findings: $findings; blocked: $blocked; files timed out: $timed_out"

ok "every file ran ($((${#files[@]})) status files)" [ "$(ls "$WORK"/*.status | wc -l)" -eq ${#files[@]} ]
ok "the server received statements through the shim ($statements)" [ "$statements" -gt 1000 ]
has "$(cat "$WORK/win1252.out")" "collation" "the WIN1252 body reached the server (its errors are about collations)"
ok "no shim finding on the PostgreSQL regression corpus ($findings findings, $blocked blocked)" [ "$findings" -eq 0 ] ||
    tap_diag "$(grep -a '"reason":' "$LOG" | head -n 20 | cut -c 1-600)"
tap_done
