#!/bin/bash
# Stock pgbench: initialisation and short runs in simple, extended and
# prepared query modes behave the same with and without quoteguard (same
# counts, no failed transactions, no finding).  Timings are left out of the
# comparison; everything else pgbench prints is compared.
set -u
. "$(dirname "$0")/../lib.sh"
require_shim
pg_start >/dev/null || { fail "PostgreSQL started"; exit 1; }
pgbench=$QG_PG_BIN/pgbench
psql=$QG_PG_BIN/psql

# pgbench's report without the lines and figures that depend on timing.
stable_report() {
    grep -vE 'latency|tps|initial connection time|done in|elapsed|remaining|^pgbench \(' "$1"
}

# Row counts of the pgbench tables, read without the shim.
table_counts() {
    env -u LD_PRELOAD "$psql" -X -A -t -c "SELECT (SELECT count(*) FROM pgbench_accounts),
        (SELECT count(*) FROM pgbench_branches), (SELECT count(*) FROM pgbench_tellers),
        (SELECT count(*) FROM pgbench_history)"
}

# Runs the whole workload; $1 is empty (no shim) or a wrapper mode; output in $e2e_tmp/$2.*
workload() { # mode label
    local run=() qmode
    [ -z "$1" ] || run=("$QG_WRAPPER" --mode "$1" --log "$e2e_tmp/$2.log" --)
    [ -n "$1" ] || run=(env -u LD_PRELOAD)
    # Every initialisation starts from no tables, so the reports compare.
    env -u LD_PRELOAD "$pgbench" -i -I d -q >/dev/null 2>&1
    "${run[@]}" "$pgbench" -i -s 1 -q >"$e2e_tmp/$2.init" 2>&1
    echo "init status $?" >"$e2e_tmp/$2.status"
    for qmode in simple extended prepared; do
        "${run[@]}" "$pgbench" -n -c 2 -j 2 -t 150 -M "$qmode" >"$e2e_tmp/$2.$qmode" 2>&1
        echo "$qmode status $?" >>"$e2e_tmp/$2.status"
    done
    table_counts >>"$e2e_tmp/$2.status"
}

workload "" plain
ok $(grep -qv ' status [^0]' "$e2e_tmp/plain.status"; echo $?) "pgbench -i and three runs succeed without quoteguard"
for mode in enforce audit; do
    workload "$mode" "$mode"
    same_output "pgbench under $mode: same statuses and table counts" "$e2e_tmp/plain.status" "$e2e_tmp/$mode.status"
    stable_report "$e2e_tmp/plain.init" >"$e2e_tmp/plain.init.stable"
    stable_report "$e2e_tmp/$mode.init" >"$e2e_tmp/$mode.init.stable"
    same_output "pgbench -i under $mode: same report" "$e2e_tmp/plain.init.stable" "$e2e_tmp/$mode.init.stable"
    for qmode in simple extended prepared; do
        stable_report "$e2e_tmp/plain.$qmode" >"$e2e_tmp/plain.$qmode.stable"
        stable_report "$e2e_tmp/$mode.$qmode" >"$e2e_tmp/$mode.$qmode.stable"
        same_output "pgbench -M $qmode under $mode: same report" "$e2e_tmp/plain.$qmode.stable" "$e2e_tmp/$mode.$qmode.stable"
    done
    findings=$(grep -c '"reason"' "$e2e_tmp/$mode.log")
    ok $([ "$findings" -eq 0 ]; echo $?) "pgbench under $mode: $findings finding(s)"
    ok $(grep '"event":"attached"' "$e2e_tmp/$mode.log" | grep '"program":"pgbench"' | grep -q 'libpq'; echo $?) \
        "pgbench under $mode: the shim's start-up line names pgbench and libpq"
done
say "pgbench: $(sed -n 's/^number of transactions actually processed: //p' "$e2e_tmp/plain.simple") transactions per mode;" \
    "$(tail -n 1 "$e2e_tmp/plain.status" | tr '|' ' ') rows (accounts branches tellers history)"
exit 0
