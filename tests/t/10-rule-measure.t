#!/bin/bash
# The detection rule's error rates on generated statements, bounded
# (`make measure` runs a million a dialect): correctly escaped legitimate
# statements blocked and effective attacks passed, per dialect, both 0
# (tests/measure/measure_rule.c, docs/DETECTION.md "Measured error rates");
# text that is both (PostgreSQL) and a wrong-encoding escaper's input with
# a step (MySQL) generated and counted apart; and both
# error rates were a blocked statement to pass where its call site sent its
# shape before.
# servers: none
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
BIN=${BUILD:-build}/measure/measure_rule
[ -x "$BIN" ] || tap_bail "$BIN is not built (make unit)"

per_dialect=${QG_MEASURE_PER_DIALECT:-200000}
out=$("$BIN" --per-dialect "$per_dialect" --show 5 2>&1)
status=$?
for dialect in pg mysql; do
    line=$(printf '%s\n' "$out" | awk -v d="$dialect" '$1 == d && $2 == "all"')
    [ -n "$line" ] || tap_bail "no summary line for $dialect: $(printf '%s' "$out" | tail -n 5)"
    read -r _ _ _ legit blocked _logged attacks passed _refused _ <<<"$line"
    ok "$dialect: $legit legitimate statements, $blocked blocked" [ "$blocked" -eq 0 ]
    ok "$dialect: $attacks effective attacks, $passed passed" [ "$passed" -eq 0 ]
    ok "$dialect: the generator made at least $per_dialect legitimate statements and 5000 effective attacks" \
        [ "$legit" -ge "$per_dialect" -a "$attacks" -ge 5000 ]
    history=$(printf '%s\n' "$out" | grep "^$dialect  *with the call site's history:")
    # What a call site's history would do (docs/DETECTION.md): measured, not
    # used by the shim, since it lets attacks through that keep their
    # template's shape (rows added to a VALUES list).
    ok "$dialect: both error rates measured were the call site's history to pass a blocked statement of a shape the site sent (${history#*: })" \
        [ -n "$history" ]
done
# Text that is both (docs/DETECTION.md): counted apart, blocked by the rule.
both=$(printf '%s\n' "$out" | awk '$1 == "pg" && $2 == "both" { print $4, $5 }')
read -r both_n both_blocked <<<"$both"
ok "pg: text that is both generated (${both_n:-0}, ${both_blocked:-0} blocked)" [ "${both_n:-0}" -gt 0 -a "${both_blocked:-0}" -gt 0 ]
# A wrong-encoding escaper's input with a step (a lead byte of its encoding
# before a quote, docs/DETECTION.md): generated apart, none passes.
stepped=$(printf '%s\n' "$out" | awk '$1 == "mysql" && $2 == "stepped" { print $4, $5 }')
read -r stepped_n stepped_passed <<<"$stepped"
ok "mysql: ${stepped_n:-0} effective attacks by a wrong-encoding escaper whose input has a step, ${stepped_passed:-none} passed" \
    [ "${stepped_n:-0}" -ge 1000 -a "${stepped_passed:-1}" -eq 0 ]
ok "measure_rule exits 0" [ "$status" -eq 0 ]
[ "$status" -eq 0 ] || tap_diag "$(printf '%s\n' "$out" | grep -E 'blocked|passed|differ' | head -n 12)"
tap_diag "$(printf '%s\n' "$out" | tail -n 1)"
tap_done
