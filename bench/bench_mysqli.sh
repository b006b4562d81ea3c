#!/bin/bash
# A PHP mysqli point select (bench/bench_mysqli.php: mysqlnd speaks the
# protocol itself, so the shim's wire front is what guards it) with and
# without the shim, part of `make bench`.  One throwaway MariaDB server (its
# general log off), one PHP process a run, BENCH_MYSQLI_QUERIES queries a run
# timed inside PHP (the connection and a warm-up left out).  Runs come in
# pairs, one without the shim and one under it in enforce, the order
# alternating pair by pair so that drift cancels; each pair gives a ratio.
# Printed: each pair (wall and PHP's CPU time a query, ns), then for both
# the median ratio shim/base, the spread of the ratios (lowest–highest) and
# the median ns a query of each side.  The CPU ratio is what the shim adds
# to the client; wall time also carries the server and the machine's load.
# With two CPUs or more the server runs on CPU 0 and PHP on CPU 1 (taskset).
# Environment: BUILD (build), BENCH_MYSQLI_PAIRS (10), BENCH_MYSQLI_QUERIES
# (20000), BENCH_MYSQLI_TLS=1 (over TCP inside TLS, where the wire front
# reads the queries in OpenSSL's SSL_write).  Not a test: it reports, it does
# not judge.
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
PAIRS=${BENCH_MYSQLI_PAIRS:-10}
QUERIES=${BENCH_MYSQLI_QUERIES:-20000}
SHIM=$PWD/$BUILD/libquoteguard.so
die() { echo "bench_mysqli: $*" >&2; exit 1; }
[ -f "$SHIM" ] || die "$SHIM missing: run make"
php -r 'exit(extension_loaded("mysqli") ? 0 : 1);' || die "php8.2-mysql is not installed"
. tests/lib/mariadb.sh
TLS=${BENCH_MYSQLI_TLS:-0}
[ "$TLS" = 1 ] && export QG_MY_SSL=1
my_start >/dev/null || die "cannot start MariaDB"
TARGET=$QG_MY_SOCKET
[ "$TLS" = 1 ] && TARGET=tls:$QG_MY_TCP_PORT
my_sql -e "SET GLOBAL general_log = 0; CREATE DATABASE bench; USE bench;
           CREATE TABLE bench.sbtest (id INT PRIMARY KEY, c CHAR(120) NOT NULL);
           INSERT INTO bench.sbtest SELECT seq, REPEAT(CHAR(97 + seq % 26), 120) FROM seq_1_to_10000" ||
    die "cannot load the table"
PIN=()
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
    taskset -a -p -c 0 "$QG_MY_PID" >/dev/null && PIN=(taskset -c 1)
fi
run() { # base|shim
    local -a env=(env -u LD_PRELOAD)
    [ "$1" = shim ] && env=(env QUOTEGUARD_CONFIG=/dev/null QUOTEGUARD_MODE=enforce LD_PRELOAD="$SHIM")
    "${PIN[@]}" "${env[@]}" php bench/bench_mysqli.php "$TARGET" "$QUERIES" | awk '{ print $2, $3 }'
}
WHAT="mysqli point select"
[ "$TLS" = 1 ] && WHAT="mysqli point select inside TLS"
echo "== PHP $WHAT, without and with the shim (enforce), paired: ns a query"
echo "pair base-wall shim-wall base-cpu shim-cpu"
results=()
for i in $(seq 1 "$PAIRS"); do
    if ((i % 2)); then base=$(run base); shim=$(run shim); else shim=$(run shim); base=$(run base); fi
    [ -n "$base" ] && [ -n "$shim" ] || die "a run failed"
    read -r bw bc <<<"$base"
    read -r sw sc <<<"$shim"
    echo "$i $bw $sw $bc $sc"
    results+=("$bw $sw $bc $sc")
done
printf '%s\n' "${results[@]}" | awk -v name="$WHAT" '
    function median(a, n,  i, j, t) {
        for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    function report(what, b, s, r,  i, lo, hi) {
        lo = hi = r[1]; for (i = 2; i <= n; i++) { if (r[i] < lo) lo = r[i]; if (r[i] > hi) hi = r[i] }
        printf "%s, %s: shim/base median %.4f (%+.2f %%), pairs %.4f-%.4f; base %d ns, shim %d ns a query\n",
            name, what, median(r, n), (median(r, n) - 1) * 100, lo, hi, median(b, n), median(s, n)
    }
    { n++; bw[n] = $1; sw[n] = $2; rw[n] = $2 / $1; bc[n] = $3; sc[n] = $4; rc[n] = $4 / $3 }
    END { report("wall", bw, sw, rw); report("PHP CPU", bc, sc, rc); printf "(medians of %d pairs)\n", n }'
