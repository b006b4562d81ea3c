#!/bin/bash
# What preloading the shim costs a process that never opens a database
# connection, part of `make bench`: /bin/true (or the command given) run
# without a preload, with an empty shared object preloaded (what the loader
# alone costs for any preload) and with the shim preloaded:
#  - system calls, counted by strace -f -c;
#  - instructions, counted by callgrind;
#  - time, BENCH_STARTUP_ROUNDS (200) rounds of the three in turn
#    (bench/bench_startup.c): medians of wall-clock and of the child's CPU
#    time, and of each round's differences.
#   bench/bench_startup.sh [command args…]
# Environment: BUILD (build), BENCH_STARTUP_ROUNDS (0: counts only),
# BENCH_STARTUP_EMPTY (the empty object built elsewhere), BENCH_STARTUP_OUT (a file
# that gets the lines "startup-syscalls N" and "startup-instructions N": the
# shim's, beyond the empty object's).  Not a test: it reports, it does not judge.
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
SHIM=$PWD/$BUILD/libquoteguard.so
EMPTY=${BENCH_STARTUP_EMPTY:-$PWD/$BUILD/bench/libempty.so}
TIMER=$PWD/$BUILD/bench/bench_startup
ROUNDS=${BENCH_STARTUP_ROUNDS:-200}
[ $# -gt 0 ] || set -- /bin/true
die() { echo "bench_startup: $*" >&2; exit 1; }
[ -f "$SHIM" ] && [ -f "$EMPTY" ] || die "run make bench"
[ "$ROUNDS" -eq 0 ] || [ -x "$TIMER" ] || die "run make bench"
WORK=$(mktemp -d /tmp/qg-startup.XXXXXX) || exit 1
trap 'rm -rf "$WORK"' EXIT

# with PRELOAD command…: the command under LD_PRELOAD=PRELOAD ("" for none).
with() {
    local preload=$1
    shift
    env -u LD_PRELOAD ${preload:+LD_PRELOAD=$preload} QUOTEGUARD_CONFIG=/dev/null "$@"
}

# System calls of the command: strace's total ("calls" is its fourth column).
syscalls() {
    strace -f -c -o "$WORK/strace" -E "LD_PRELOAD=$1" -- "${@:2}" >/dev/null 2>&1 ||
        die "strace failed"
    awk '$NF == "total" { print $4 }' "$WORK/strace"
}

# Instructions of the command, counted by callgrind.
instructions() {
    with "$1" valgrind --tool=callgrind --callgrind-out-file="$WORK/callgrind" "${@:2}" \
        >/dev/null 2>&1 || die "valgrind failed"
    sed -n 's/^summary: *//p;s/^totals: *//p' "$WORK/callgrind" | head -n 1
}

declare -A calls count
for way in none empty shim; do
    case $way in none) so= ;; empty) so=$EMPTY ;; shim) so=$SHIM ;; esac
    calls[$way]=$(syscalls "$so" "$@")
    count[$way]=$(instructions "$so" "$@")
done
echo "== start-up of $*: without a preload / an empty object preloaded / the shim preloaded"
echo "system calls (strace -f -c): ${calls[none]} / ${calls[empty]} / ${calls[shim]}:" \
    "the preload adds $((calls[shim] - calls[none])), the shim beyond the empty object" \
    "$((calls[shim] - calls[empty]))"
echo "instructions (callgrind): ${count[none]} / ${count[empty]} / ${count[shim]}:" \
    "the preload adds $((count[shim] - count[none])), the shim beyond the empty object" \
    "$((count[shim] - count[empty]))"
if [ -n "${BENCH_STARTUP_OUT:-}" ]; then
    printf 'startup-syscalls %s\nstartup-instructions %s\n' "$((calls[shim] - calls[none]))" \
        "$((count[shim] - count[empty]))" >"$BENCH_STARTUP_OUT"
fi
[ "$ROUNDS" -eq 0 ] || "$TIMER" "$EMPTY" "$SHIM" "$ROUNDS" "$@"
