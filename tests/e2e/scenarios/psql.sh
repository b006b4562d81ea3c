#!/bin/bash
# Stock psql: a script with multibyte literals in SJIS, GBK, BIG5, GB18030,
# UHC, EUC_JP, LATIN1 and UTF8 (tests/e2e/psql/multibyte.sql.in) gives the
# same output and status with and without quoteguard, and no finding.
set -u
. "$(dirname "$0")/../lib.sh"
require_shim
pg_start >/dev/null || { fail "PostgreSQL started"; exit 1; }
psql=$QG_PG_BIN/psql

script=$e2e_tmp/multibyte.sql
perl -pe 's/\\x([0-9a-fA-F]{2})/chr hex $1/ge' "$E2E_DIR/psql/multibyte.sql.in" >"$script"

env -u LD_PRELOAD "$psql" -X -a -f "$script" >"$e2e_tmp/plain" 2>&1
status_plain=$?
ok $status_plain "psql runs the script without quoteguard"
for mode in enforce audit; do
    log=$e2e_tmp/$mode.log
    "$QG_WRAPPER" --mode "$mode" --log "$log" -- "$psql" -X -a -f "$script" >"$e2e_tmp/$mode" 2>&1
    status=$?
    ok $([ "$status" = "$status_plain" ]; echo $?) "psql exit status under $mode is the same ($status)"
    same_output "psql output under $mode is the same" "$e2e_tmp/plain" "$e2e_tmp/$mode"
    findings=$(grep -c '"reason"' "$log")
    ok $([ "$findings" -eq 0 ]; echo $?) "psql under $mode: $findings finding(s)"
    grep '"reason"' "$log" | head -n 5 | note
    ok $(attached_programs "$log" | grep -qx psql; echo $?) "psql under $mode: the shim's start-up line is in the log"
done
statements=$(grep -c '^\(INSERT\|SELECT\|SET\|RESET\|COPY\|CREATE\|/\*\)' "$script")
say "psql: $statements statements in 8 client encodings, output identical under enforce and audit"
exit 0
