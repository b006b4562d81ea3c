#!/bin/bash
# Bounded libFuzzer runs of every target (make fuzz) under ASan + UBSan:
# one TAP line per target, failing on any crash, leak, timeout or broken
# invariant.  QG_FUZZ_SECONDS sets the time per target (default 30).
# servers: none
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
command -v clang >/dev/null || tap_skip_all "clang is not installed"

seconds=${QG_FUZZ_SECONDS:-30}
out=$(make -s fuzz FUZZ_SECONDS="$seconds" 2>&1)
status=$?
table=$(printf '%s\n' "$out" | sed -n '/^target /,/^fuzz: /p')
[ -n "$table" ] || tap_bail "make fuzz printed no result table: $(printf '%s' "$out" | tail -n 20)"
while read -r name execs _rate findings state; do
    case $name in fuzz_*) ;; *) continue ;; esac
    ok "$name: $execs executions in ${seconds}s, $findings findings" test "$findings" = 0 -a "$state" = ok
done <<<"$table"
tap_diag "$(printf '%s\n' "$table" | tail -n 1)"
ok "make fuzz exits 0" [ "$status" -eq 0 ]

# fuzz/run refuses what it cannot run, saying why, before it runs anything.
refused() { # WHY ARGS…: exit status 2 and WHY on stderr
    local why=$1 err
    shift
    err=$(fuzz/run "$@" 2>&1 >/dev/null)
    [ $? -eq 2 ] && [[ $err == *"$why"* ]] || { tap_diag "fuzz/run $*: $err"; return 1; }
}
ok "fuzz/run: an unknown option is refused" refused "unknown option '--bogus'" --bogus
ok "fuzz/run: a count that is not a number is refused" refused "not 'x'" --seconds x build-fuzz/fuzz_wire
ok "fuzz/run: an option without its value is refused" refused "--jobs needs a value" --jobs
ok "fuzz/run: a target that is not built is refused" refused "'nothing' is not a built fuzz target" nothing
ok "fuzz/run: no target is refused" refused "no target given" --keep
tap_done
