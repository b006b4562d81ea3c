#!/bin/bash
# Instructions per query on each front, counted by callgrind: what the client
# itself spends and what the shim adds, on real clients against throwaway
# servers.  Counts are deterministic, the same on every run of one build.
#
#   libpq        bench/bench_front.c pg: PQexec of a mixed OLTP corpus
#                (60-250 bytes: ASCII, UTF-8 Chinese and Korean, Shift_JIS
#                with 0x5c trail bytes, escaped by PQescapeStringConn)
#   libmariadb   bench/bench_front.c my: the same corpus, mysql_real_query
#   mysqli       PHP mysqli point selects over the unix socket (mysqlnd: the
#                wire front), bench/bench_mysqli.php
#   pg8000       pg8000 point selects (a Parse each time: the wire front),
#                bench/bench_pg8000.py
#   mysqli-tls   the mysqli point selects over TCP inside TLS
#   mysqli-z     the mysqli point selects over the unix socket, compressed
#                (MYSQLI_CLIENT_COMPRESS: the wire front inflates both ways)
#
# Each client runs Q and 2Q queries, without the shim and with it (enforce),
# under valgrind --tool=callgrind; the difference between the 2Q and the Q
# run is the cost of Q queries, start-up and connection cancelled out.
# "client" is that difference of the whole process without the shim, a query.
# "shim adds" is counted where it happens: for each function the shim
# interposes, its inclusive instructions less those of the function it
# forwards to (libpq's PQexec, the C library's recv, OpenSSL's SSL_write …),
# a query; "whole" is the difference of the whole process's counts with and
# without the shim, which also moves with how often a client polls.
#
# Environment: BUILD (build); BENCH_FRONTS_CLIENT (bench_front built
# elsewhere); BENCH_FRONTS (the fronts to run, default all
# five); BENCH_FRONTS_SHIM_ONLY=1 (only the runs with the shim: "shim adds"
# alone, for tests/t/71-cost-figures.t); BENCH_FRONTS_OUT (a file that gets
# one line "front shim_adds client" a front); BENCH_FRONTS_DETAIL=1 (the
# interposed functions and the shim's own functions, a query);
# BENCH_FRONTS_KEEP=1 (keep the callgrind files in /tmp/qg-fronts.*).
# Not a test: it reports, it does not judge.
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
SHIM=$PWD/$BUILD/libquoteguard.so
CLIENT=${BENCH_FRONTS_CLIENT:-$PWD/$BUILD/bench/bench_front}
FRONTS=${BENCH_FRONTS:-libpq libmariadb mysqli pg8000 mysqli-tls}
SHIM_ONLY=${BENCH_FRONTS_SHIM_ONLY:-0}
OUT=${BENCH_FRONTS_OUT:-}

die() { echo "bench_fronts: $*" >&2; exit 1; }
[ -f "$SHIM" ] && [ -x "$CLIENT" ] || die "run make bench (the shim and $CLIENT)"
command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null || die "valgrind not installed"
[ "$(id -u)" -eq 0 ] || die "needs root (the throwaway servers run as user qgtest)"

. tests/lib/pg.sh
. tests/lib/mariadb.sh
. bench/front_tables.sh
WORK=$(mktemp -d /tmp/qg-fronts.XXXXXX) || exit 1
qg_at_exit "${BENCH_FRONTS_KEEP:+: }rm -rf \"$WORK\""

needs_pg=0 needs_my=0
for front in $FRONTS; do
    case $front in
    libpq | pg8000) needs_pg=1 ;;
    libmariadb | mysqli | mysqli-tls | mysqli-z) needs_my=1 ;;
    *) die "unknown front $front" ;;
    esac
done
if [ "$needs_pg" = 1 ]; then
    pg_start >/dev/null || die "PostgreSQL did not start"
    pg_psql -d postgres -c "ALTER SYSTEM SET log_statement = 'none'" -c "SELECT pg_reload_conf()" \
        >/dev/null || die "cannot switch off log_statement"
    front_tables_pg || die "cannot load the PostgreSQL table"
fi
if [ "$needs_my" = 1 ]; then
    QG_MY_SSL=1 my_start >/dev/null || die "MariaDB did not start"
    front_tables_my || die "cannot load the MariaDB tables"
    my_sql -e "SET GLOBAL general_log = 0; USE bench;
               CREATE TABLE sbtest (id INT PRIMARY KEY, c CHAR(120) NOT NULL);
               INSERT INTO sbtest SELECT seq, REPEAT(CHAR(97 + seq % 26), 120) FROM seq_1_to_10000" ||
        die "cannot load the MariaDB tables"
fi
if [ "$needs_my" = 1 ]; then
    php -r 'exit(extension_loaded("mysqli") ? 0 : 1);' || die "php8.2-mysql is not installed"
fi

# The command of a front for QUERIES queries.
front_command() {
    local front=$1 queries=$2
    case $front in
    libpq) echo "$CLIENT" pg "$queries" ;;
    libmariadb) echo "$CLIENT" my "$queries" "$QG_MY_SOCKET" ;;
    mysqli) echo php bench/bench_mysqli.php "$QG_MY_SOCKET" "$queries" 0 ;;
    mysqli-tls) echo php bench/bench_mysqli.php "tls:$QG_MY_TCP_PORT" "$queries" 0 ;;
    mysqli-z) echo php bench/bench_mysqli.php "z:$QG_MY_SOCKET" "$queries" 0 ;;
    pg8000) echo /usr/bin/python3 bench/bench_pg8000.py "$queries" ;;
    esac
}

# Queries of the shorter run: the interpreters' start-up is slow under valgrind.
front_queries() {
    case $1 in
    libpq | libmariadb) echo 400 ;; # ten passes of the corpus
    mysqli | mysqli-tls | mysqli-z) echo 200 ;;
    pg8000) echo 100 ;;
    esac
}

# run NAME QUERIES FRONT base|shim: the whole count of the run.
run() {
    local name=$1 queries=$2 front=$3 way=$4
    local -a env=(env -u LD_PRELOAD)
    [ "$way" = shim ] && env=(env QUOTEGUARD_CONFIG=/dev/null QUOTEGUARD_MODE=enforce
        QUOTEGUARD_LOG="$WORK/shim.log" LD_PRELOAD="$SHIM")
    # shellcheck disable=SC2046 # the command is words
    "${env[@]}" valgrind --tool=callgrind --callgrind-out-file="$WORK/$name.out" \
        $(front_command "$front" "$queries") >"$WORK/$name.txt" 2>&1 ||
        { tail -n 20 "$WORK/$name.txt" >&2; die "$name failed"; }
    sed -n 's/^summary: *//p;s/^totals: *//p' "$WORK/$name.out" | head -n 1
}

# added_by_shim RUN: "function instructions" for each function the shim
# interposes (its inclusive count less that of the same name elsewhere),
# then "(all) total".  Read from /: where the sources resolve by a relative
# name, callgrind_annotate lists a function whose code is partly put in
# line from other files (headers) twice, and the entry with the object
# leaves those parts out.
added_by_shim() {
    (cd / && callgrind_annotate --inclusive=yes --threshold=100 "$WORK/$1.out") 2>/dev/null |
        awk '/\[.*\]$/ { gsub(/,/, "", $1); fn = $0; sub(/ \[[^]]*\]$/, "", fn); sub(/^.*:/, "", fn)
                          if ($NF ~ /libquoteguard\.so/) shim[fn] = $1; else other[fn] += $1 }
             END { for (f in shim) if (f in other) { added += shim[f] - other[f]; print f, shim[f] - other[f] }
                   print "(all)", added }' | sort
}

# The shim's own functions, exclusive instructions of one run.
shim_functions() {
    callgrind_annotate --threshold=100 --inclusive=no "$WORK/$1.out" 2>/dev/null |
        awk '/libquoteguard\.so/ { gsub(/,/, "", $1); n = split($0, f, ":"); print $1, f[n] }' |
        sed 's/ (\(.*\))$//; s/ \[.*//' | sort -k2
}

[ -z "$OUT" ] || : >"$OUT"
printf '%-12s %10s %10s %7s %10s\n' front client "shim adds" share whole
for front in $FRONTS; do
    q=$(front_queries "$front")
    echo "bench_fronts: $front under callgrind ($q and $((2 * q)) queries)" >&2
    client=- whole=-
    s1=$(run "$front-shim1" "$q" "$front" shim) || exit 1
    s2=$(run "$front-shim2" $((2 * q)) "$front" shim) || exit 1
    ! grep -q '"action"' "$WORK/shim.log" 2>/dev/null ||
        die "the shim logged a finding: $(grep '"action"' "$WORK/shim.log" | head -n 1)"
    added_by_shim "$front-shim1" >"$WORK/$front.a1"
    added_by_shim "$front-shim2" >"$WORK/$front.a2"
    adds=$(join "$WORK/$front.a1" "$WORK/$front.a2" | awk -v n="$q" '$1 == "(all)" { printf "%.0f", ($3 - $2) / n }')
    if [ "$SHIM_ONLY" != 1 ]; then
        b1=$(run "$front-base1" "$q" "$front" base) || exit 1
        b2=$(run "$front-base2" $((2 * q)) "$front" base) || exit 1
        client=$(awk -v n="$q" -v a="$b1" -v b="$b2" 'BEGIN { printf "%.0f", (b - a) / n }')
        whole=$(awk -v n="$q" -v a="$s1" -v b="$s2" -v c="$client" 'BEGIN { printf "%.0f", (b - a) / n - c }')
    fi
    share=$(awk -v a="$adds" -v c="$client" 'BEGIN { if (c + 0 > 0) printf "%+.0f%%", 100 * a / c; else print "-" }')
    printf '%-12s %10s %10s %7s %10s\n' "$front" "$client" "$adds" "$share" "$whole"
    [ -z "$OUT" ] || echo "$front $adds $client" >>"$OUT"
    if [ "${BENCH_FRONTS_DETAIL:-0}" = 1 ]; then
        echo "  interposed functions, added a query:"
        join "$WORK/$front.a1" "$WORK/$front.a2" |
            awk -v n="$q" '$1 != "(all)" && ($3 - $2) / n >= 1 { printf "    %8.0f  %s\n", ($3 - $2) / n, $1 }' |
            sort -rn
        echo "  the shim's functions, own instructions a query:"
        shim_functions "$front-shim1" >"$WORK/$front.f1"
        shim_functions "$front-shim2" >"$WORK/$front.f2"
        join -1 2 -2 2 -o 0,1.1,2.1 "$WORK/$front.f1" "$WORK/$front.f2" |
            awk -v n="$q" '{ per = ($3 - $2) / n; if (per >= 5) printf "    %8.1f  %s\n", per, $1 }' |
            sort -rn
    fi
done
