#!/bin/bash
# make bench's end-to-end script runs through on real servers: every
# throughput benchmark gives a figure in each configuration, every paired
# shape (the mixed corpus of the fronts' counts included) in each mode, the
# cold check for each statement, and the shim logs nothing but its
# attachment on their legitimate queries (pgbench, sysbench's PostgreSQL and
# MariaDB drivers, the paired clients).  The figures are not judged: one
# round of a second and 100 pairs, for the run itself.
# servers: pg mariadb
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh

qg_require_build bench/bench_paired bench/bench_front bench/bench_cold
[ "$(id -u)" -eq 0 ] || tap_skip_all "needs root (the throwaway servers run as user qgtest)"
command -v sysbench >/dev/null || tap_skip_all "sysbench is not installed"
WORK=$(mktemp -d /tmp/qg-bench-e2e.XXXXXX) || exit 1
trap 'rm -rf "$WORK"' EXIT

BENCH_RUNS=1 BENCH_E2E_SECONDS=1 BENCH_PAIRS=100 BENCH_E2E_JSON=$WORK/e2e.json \
    bench/bench_e2e.sh >"$WORK/out.txt" 2>&1
status=$?
ok "bench_e2e.sh ran to its end" [ "$status" -eq 0 ]
[ "$status" -eq 0 ] || tap_diag "$(tail -n 15 "$WORK/out.txt")"

# One line a finding: what is missing or wrong in the report.
/usr/bin/python3 - "$WORK/e2e.json" >"$WORK/missing.txt" 2>&1 <<'PY'
import json, sys
try:
    report = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    sys.exit(f"no report: {e}")
throughput = {
    "pgbench_select": "base enforce audit rewrite",
    "pgbench_sjis": "base enforce audit rewrite",
    "sysbench_pg_point_select": "base enforce audit rewrite",
    "sysbench_my_point_select": "base enforce audit",
    "sysbench_my_read_only": "base enforce audit",
}
paired = {
    "paired_pg_select": "enforce audit rewrite",
    "paired_pg_string": "enforce audit rewrite rewrite-all",
    "paired_pg_quoted": "enforce audit rewrite",
    "paired_pg_sjis": "enforce audit rewrite",
    "paired_pg_mixed": "enforce audit",
    "paired_my_select": "enforce audit",
    "paired_my_string": "enforce audit",
    "paired_my_mixed": "enforce audit",
}
seen = {b["name"]: b["configs"] for b in report.get("benchmarks", [])}
for name, configs in throughput.items():
    for config in configs.split():
        if config not in seen.get(name, {}):
            print(f"throughput {name} {config}: missing")
got = {(p["name"], p["mode"]): p for p in report.get("paired", [])}
for name, modes in paired.items():
    for mode in modes.split():
        p = got.get((name, mode))
        if p is None:
            print(f"paired {name} {mode}: missing")
        elif not (p["direct_median_us"] > 0 and p["runs"][0]["pairs"] == 100):
            print(f"paired {name} {mode}: no latency from 100 pairs")
if len(report.get("cold_check", [])) == 0:
    print("cold check: missing")
if report.get("shim_log_lines_besides_attach") != 0:
    print(f"the shim logged {report.get('shim_log_lines_besides_attach')} lines besides attaching")
PY
ok "the report holds every benchmark, paired shape and mode; the shim logged nothing" \
    [ ! -s "$WORK/missing.txt" ]
[ -s "$WORK/missing.txt" ] && tap_diag "$(head -n 20 "$WORK/missing.txt")"
lacks "$(cat "$WORK/e2e-shim.log" 2>/dev/null)" '"action"' "no finding in the shim's logs of the timed runs"
tap_done
