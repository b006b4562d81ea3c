#!/bin/bash
# The instructions the shim adds to one query, counted by callgrind: exact
# and repeatable where timings on a shared guest are not.
#
# pgbench (simple protocol: PQsendQuery, PQgetResult) runs one statement
# (by default 90 bytes of ASCII) N and 2N times with the shim in enforce
# mode, and N and 2N times without it, each under valgrind
# --tool=callgrind. The difference between the 2N and the N run is the
# cost of N queries, start-up and connection cancelled out. What the shim
# adds is counted where it happens: for each function the shim interposes,
# its inclusive instructions less those of the function it forwards to
# (libpq's PQsendQuery, the C library's send …). The client's whole count
# also moves with how often libpq finds the answer not yet there and polls
# again, so the difference of the two whole counts is shown but is the
# rougher figure. Last, the functions of the shim that take the
# instructions, by their own (exclusive) count per query.
#
# Environment: BUILD (build), BENCH_CALLGRIND_QUERIES N (2000),
# BENCH_CALLGRIND_STATEMENT (another statement, UTF-8),
# BENCH_CALLGRIND_SHIM (another build of the library, e.g. of an older
# revision, to compare with),
# BENCH_CALLGRIND_KEEP (keep the callgrind files in /tmp).
# Prints a table; not a test: it reports, it does not judge.
set -u

cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
BUILD=${BUILD:-build}
N=${BENCH_CALLGRIND_QUERIES:-2000}
SHIM=${BENCH_CALLGRIND_SHIM:-$ROOT/$BUILD/libquoteguard.so}

die() { echo "bench_callgrind: $*" >&2; exit 1; }
[ -f "$SHIM" ] || die "$SHIM missing: run make"
command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null || die "valgrind not installed"
[ "$(id -u)" -eq 0 ] || die "needs root (the throwaway server runs as user qgtest)"

. tests/lib/pg.sh
WORK=$(mktemp -d /tmp/qg-callgrind.XXXXXX) || exit 1
qg_at_exit "${BENCH_CALLGRIND_KEEP:+: }rm -rf \"$WORK\""
pg_start || die "PostgreSQL did not start"
pg_psql -d postgres -c "ALTER SYSTEM SET log_statement = 'none'" -c "SELECT pg_reload_conf()" \
    >/dev/null || die "cannot switch off log_statement"

STATEMENT=${BENCH_CALLGRIND_STATEMENT:-"SELECT 'a short literal of plain ASCII text.' AS label, 12345 AS id WHERE 1 = 1 AND 2 > 1;"}
printf '%s\n' "$STATEMENT" >"$WORK/query.sql"

# run NAME QUERIES [LD_PRELOAD]: total instructions of the client process.
run() {
    local name=$1 queries=$2 preload=${3-}
    env -u LD_PRELOAD ${preload:+LD_PRELOAD=$preload} QUOTEGUARD_CONFIG=/dev/null \
        QUOTEGUARD_MODE=enforce QUOTEGUARD_LOG="$WORK/shim.log" \
        valgrind --tool=callgrind --callgrind-out-file="$WORK/$name.out" \
        "$QG_PG_BIN/pgbench" -n -M simple -c 1 -t "$queries" -f "$WORK/query.sql" \
        >"$WORK/$name.txt" 2>&1 || { tail -n 20 "$WORK/$name.txt" >&2; die "$name failed"; }
    sed -n 's/^summary: *//p;s/^totals: *//p' "$WORK/$name.out" | head -n 1
}
echo "bench_callgrind: 4 runs of pgbench under callgrind ($N and $((2 * N)) queries)" >&2
base1=$(run base1 "$N")
base2=$(run base2 $((2 * N)))
shim1=$(run shim1 "$N" "$SHIM")
shim2=$(run shim2 $((2 * N)) "$SHIM")
grep -q '"event":"attached"' "$WORK/shim.log" || die "the shim did not attach to pgbench"
! grep -q '"action"' "$WORK/shim.log" || die "the shim logged a finding: $(head -n 1 "$WORK/shim.log")"

# Exclusive instructions of each function of the shim in one run.
shim_functions() {
    callgrind_annotate --threshold=100 --inclusive=no "$WORK/$1.out" 2>/dev/null |
        awk '/libquoteguard\.so/ { gsub(/,/, "", $1); n = split($0, f, ":"); print $1, f[n] }' |
        sed 's/ (\(.*\))$//' | sort -k2
}
shim_functions shim1 >"$WORK/f1"
shim_functions shim2 >"$WORK/f2"

# added_by_shim RUN: for each function the shim interposes, its inclusive
# instructions less those of the same function in the object it forwards to.
added_by_shim() {
    callgrind_annotate --inclusive=yes --threshold=100 "$WORK/$1.out" 2>/dev/null |
        awk '/\[.*\]$/ { gsub(/,/, "", $1); fn = $0; sub(/ \[[^]]*\]$/, "", fn); sub(/^.*:/, "", fn)
                          if ($NF ~ /libquoteguard\.so/) shim[fn] = $1; else other[fn] += $1 }
             END { for (f in shim) if (f in other) { added += shim[f] - other[f]; print f, shim[f] - other[f] }
                   print "(all)", added }' | sort
}
added_by_shim shim1 >"$WORK/a1"
added_by_shim shim2 >"$WORK/a2"

echo
echo "instructions per query (callgrind, pgbench -M simple, $(wc -c <"$WORK/query.sql")-byte line, enforce)"
join "$WORK/a1" "$WORK/a2" | awk -v n="$N" '$1 == "(all)" {
    printf "  added by the shim %8.0f, in the interposed functions:\n", ($3 - $2) / n }'
join "$WORK/a1" "$WORK/a2" |
    awk -v n="$N" '$1 != "(all)" && $3 - $2 >= n { printf "    %8.0f  %s\n", ($3 - $2) / n, $1 }' | sort -rn
awk -v n="$N" -v b1="$base1" -v b2="$base2" -v s1="$shim1" -v s2="$shim2" 'BEGIN {
    base = (b2 - b1) / n; shim = (s2 - s1) / n
    printf "  the whole client: %.0f without the shim, %.0f with it (difference %.0f)\n", base, shim, shim - base }'
echo "the shim's functions, own instructions per query:"
join -1 2 -2 2 -o 0,1.1,2.1 "$WORK/f1" "$WORK/f2" |
    awk -v n="$N" '{ per = ($3 - $2) / n; if (per >= 1) printf "  %8.1f  %s\n", per, $1 }' | sort -rn
