#!/bin/bash
# QUOTEGUARD_FORCE_VECTORS: a whole process runs the implementation it names
# (the scalar reference or a vector build; the widest the CPU has when that
# one is missing), and that one agrees with the scalar reference on the
# benchmark's OLTP corpora.  In process, every implementation the CPU runs
# is compared by tests/unit and 11-corpora-agree.t.
# Needs ../shared/corpus (bench_checker loads the regression statements),
# the reference material beside the source tree.
# servers: none
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
out=$(make -s build/bench/bench_checker 2>&1) || tap_bail "cannot build bench_checker: $(printf '%s' "$out" | tail -n 5)"

UP_TO='# the reference against every vector build up to '
widest=$(env -u QUOTEGUARD_FORCE_VECTORS build/bench/bench_checker --verify --only oltp/pg/SJIS |
    sed -n "s/^$UP_TO//p")
builds=(reference sse2 avx2 avx512)
ok "unforced, the widest build the CPU has runs ($widest)" [ -n "$widest" ]
for i in "${!builds[@]}"; do
    build=${builds[$i]}
    expect=$build
    [[ " ${builds[*]:0:$((i + 1))} " == *" $widest "* ]] && [ "$widest" != "$build" ] && expect=$widest
    out=$(QUOTEGUARD_FORCE_VECTORS=$build build/bench/bench_checker --verify --only oltp/ 2>&1)
    has "$out" "$UP_TO$expect" "QUOTEGUARD_FORCE_VECTORS=$build: the $expect build runs"
    ok "QUOTEGUARD_FORCE_VECTORS=$build: agrees with the reference on the OLTP corpora" \
        bash -c '[[ $1 == *"1.."* && $1 != *"not ok"* ]]' _ "$out"
done
tap_done
