#!/bin/bash
# No false positives on what pg_dump writes: a UTF8 and an EUC_JP database
# holding Japanese text (SJIS trail bytes 0x5c included, next to quotes,
# backslashes and newlines, in every order over three columns) are dumped
# with --inserts and with --column-inserts in the client encodings SJIS,
# UTF8 and EUC_JP, and restored through psql under the shim in enforce
# mode.  The restored database must dump byte-identical to the original,
# and the shim must not find anything.  Then pgbench -i and a short pgbench
# run under the shim.
# servers: pg
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/pg.sh
. tests/lib/hardening.sh

pg_available || tap_skip_all "no PostgreSQL server binaries (or not root)"
qg_require_build
pg_start || tap_bail "cannot start PostgreSQL"
WORK=$QG_PG_DIR/dump
mkdir -p "$WORK"
PSQL=$QG_PG_BIN/psql
DUMP=$QG_PG_BIN/pg_dump
plain() { env -u LD_PRELOAD "$@"; }
admin() { plain "$PSQL" -X -q -d postgres -v ON_ERROR_STOP=1 -c "$1" >/dev/null; }
# pg_dump's \restrict key is random per dump (15.14 and later): left out of the comparison.
same_dump() { cmp -s <(grep -av '^\\\(un\)\?restrict ' "$1") <(grep -av '^\\\(un\)\?restrict ' "$2"); }

# Values (UTF-8 here): ソ 表 能 十 予 申 end in 0x5c in SJIS.
values=("'ソ'" "'表x'" "'x'" "'It''s 十'" "'a\\b\\'" "'予申'" "E'line1\\nline2 能'" "NULL")
{
    echo "SET standard_conforming_strings = on;"
    echo "CREATE TABLE t (id int PRIMARY KEY, a text, b text, c text);"
    id=0
    for a in "${values[@]}"; do for b in "${values[@]}"; do for c in "${values[@]}"; do
        id=$((id + 1))
        echo "INSERT INTO t VALUES ($id, $a, $b, $c);"
    done; done; done
} >"$WORK/data.sql"
ROWS=$id

for enc in UTF8 EUC_JP; do
    admin "CREATE DATABASE src_${enc,,} TEMPLATE template0 ENCODING '$enc' LOCALE 'C'" ||
        tap_bail "cannot create the $enc database"
    PGCLIENTENCODING=UTF8 plain "$PSQL" -X -q -v ON_ERROR_STOP=1 -d "src_${enc,,}" -f "$WORK/data.sql" >/dev/null ||
        tap_bail "cannot load the $enc database"
done
ok "source databases hold $ROWS rows each" \
    [ "$(plain "$PSQL" -X -A -t -d src_euc_jp -c 'SELECT count(*) FROM t')" -eq $ROWS ]

LOG=$WORK/shim.log
restores=0
inserts=0
for src in UTF8 EUC_JP; do
    for format in --inserts --column-inserts; do
        plain "$DUMP" -E UTF8 "$format" -d "src_${src,,}" >"$WORK/ref.sql"
        for client in SJIS UTF8 EUC_JP; do
            tag="$src database, pg_dump $format -E $client"
            file=$WORK/$src$format-$client.sql
            plain "$DUMP" -E "$client" "$format" -d "src_${src,,}" >"$file"
            target=dst_${src}_${format#--}_$client
            target=${target//-/_}
            target=${target,,}
            admin "CREATE DATABASE $target TEMPLATE template0 ENCODING '$src' LOCALE 'C'"
            with_shim enforce "$LOG" "$PSQL" -X -q -v ON_ERROR_STOP=1 -d "$target" -f "$file" \
                >"$WORK/restore.out" 2>&1
            status=$?
            restores=$((restores + 1))
            inserts=$((inserts + $(grep -ac '^INSERT INTO' "$file")))
            ok "$tag: psql restores it under the shim" [ $status -eq 0 ] || tap_diag "$(head -n 5 "$WORK/restore.out")"
            plain "$DUMP" -E UTF8 "$format" -d "$target" >"$WORK/back.sql"
            ok "$tag: the restored database dumps byte-identical" same_dump "$WORK/ref.sql" "$WORK/back.sql"
        done
    done
done
findings=$(qg_log_findings "$LOG")
tap_diag "pg_dump/restore: $restores restores, $inserts INSERT statements, shim findings: $findings"
ok "no shim finding in $restores restores ($inserts INSERTs)" [ "$findings" -eq 0 ] ||
    tap_diag "$(grep -a '"reason":' "$LOG" | head -n 10 | cut -c 1-600)"

# ------------------------------------------------------------- pgbench
BENCH_LOG=$WORK/pgbench.log
out=$(with_shim enforce "$BENCH_LOG" "$QG_PG_BIN/pgbench" -i -s 1 -q 2>&1)
ok "pgbench -i -s 1 under the shim" [ $? -eq 0 ] || tap_diag "$out"
for qmode in simple extended; do
    out=$(with_shim enforce "$BENCH_LOG" "$QG_PG_BIN/pgbench" -n -c 4 -j 2 -T 3 -M $qmode 2>&1)
    processed=$(printf '%s\n' "$out" | sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p')
    failed=$(printf '%s\n' "$out" | sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p')
    tap_diag "pgbench -M $qmode -c 4 -T 3: ${processed:-?} transactions, ${failed:-0} failed"
    ok "pgbench -M $qmode under the shim: transactions processed, none failed" \
        test "${processed:-0}" -gt 0 -a "${failed:-0}" -eq 0
done
findings=$(qg_log_findings "$BENCH_LOG")
ok "pgbench: no shim finding ($findings)" [ "$findings" -eq 0 ]
tap_done
