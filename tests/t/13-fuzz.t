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
tap_done
