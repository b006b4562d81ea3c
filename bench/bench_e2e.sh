#!/bin/bash
# End-to-end benchmark: throughput of real clients with and without
# the shim, same machine, same run, configurations alternating round by round.
#
#   pgbench -S -M simple                        PG, unix socket
#   pgbench custom script, 4 KB SJIS literal    PG, client_encoding SJIS
#   sysbench oltp_point_select (pgsql driver)   PG, --db-ps-mode=disable
#   sysbench oltp_point_select / oltp_read_only MariaDB, --db-ps-mode=disable
#
# Configurations: without the shim ("base"), then QUOTEGUARD_MODE enforce,
# audit and (PG only) rewrite; the paired plain-literal query also under
# rewrite with QUOTEGUARD_REWRITE=all ("rewrite-all").  One client, one
# thread: the shim's cost is client CPU on the path of every query, which
# one client shows undiluted.
# Before timing, a sanity run proves the shim intercepts each client (a bad
# query must show up in its log); during timing its log must stay empty.
# Besides QPS it records the client's CPU time per query, which other load on
# a shared machine barely moves, while it makes QPS swing.
#
# Then the paired measure (bench/bench_paired.c; bench/bench_front.c for the
# mixed corpus of the fronts' instruction counts): one process sends the same
# kind of query through the shim and around it (libpq's and libmariadb's own
# functions), alternating query by query, so that the guest's drift cancels
# in each pair; it gives the shim's added latency per query to a fraction of
# a microsecond, where whole runs differ by tens of percent.  Last, the
# checker's share of it (bench/bench_cold.c): one check right after a round
# trip, when the caches have lost the checker's code and data, and again at
# once; and so for a check followed by rewrite mode's rewrite.
#
# With two CPUs or more, the servers are pinned to CPU 0 and the client to
# CPU 1 (taskset), so that the scheduler does not move them between rounds;
# BENCH_E2E_PIN=0 leaves them where the scheduler puts them.
#
# Environment: BUILD (build), BENCH_RUNS rounds (5), BENCH_E2E_SECONDS per run
# (5), BENCH_PAIRS per paired run (10000), BENCH_E2E_JSON
# (build/bench/e2e.json), BENCH_E2E_ONLY (only the benchmarks whose name
# contains it), BENCH_E2E_PIN (1), BENCH_KEEP (keep the work directory,
# /tmp/qg-bench.*, with the clients' outputs and the shim's logs).  Statement logging of the
# throwaway servers is switched off: it would cost both sides the same and
# hide the ratio.  Not a test: it reports, it does not judge.
set -u

cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
BUILD=${BUILD:-build}
RUNS=${BENCH_RUNS:-5}
SECS=${BENCH_E2E_SECONDS:-5}
JSON=${BENCH_E2E_JSON:-$BUILD/bench/e2e.json}
PAIRS=${BENCH_PAIRS:-10000}
SHIM=$ROOT/$BUILD/libquoteguard.so
PAIRED=$ROOT/$BUILD/bench/bench_paired
FRONT=$ROOT/$BUILD/bench/bench_front
COLD=$ROOT/$BUILD/bench/bench_cold
# A run that takes this much longer than asked is killed.
RUN_TIMEOUT=$((SECS + 60))

die() { echo "bench_e2e: $*" >&2; exit 1; }

[ -f "$SHIM" ] || die "$SHIM missing: run make"
[ -x "$PAIRED" ] && [ -x "$FRONT" ] || die "$PAIRED or $FRONT missing: run make bench"
for tool in sysbench python3 iconv; do
    command -v "$tool" >/dev/null || die "$tool not installed"
done
[ "$(id -u)" -eq 0 ] || die "needs root (the throwaway servers run as user qgtest)"

. tests/lib/pg.sh
. tests/lib/mariadb.sh
. bench/front_tables.sh

mkdir -p "$BUILD/bench" || exit 1
WORK=$(mktemp -d /tmp/qg-bench.XXXXXX) || exit 1
RAW=$WORK/raw.tsv
: >"$RAW"
# Exit handlers add up (tests/lib/atexit.sh): pg_start and my_start register
# the servers' stops, we the work dir.
qg_at_exit "${BENCH_KEEP:+: }rm -rf \"$WORK\""
trap 'exit 130' INT TERM

# ---------------------------------------------------------------- servers

echo "bench_e2e: starting PostgreSQL and MariaDB" >&2
pg_start || die "PostgreSQL did not start"
my_start || die "MariaDB did not start"
PGBENCH=$QG_PG_BIN/pgbench

pg_psql -d postgres -c "ALTER SYSTEM SET log_statement = 'none'" -c "SELECT pg_reload_conf()" \
    >/dev/null || die "cannot switch off log_statement"
my_sql -e "SET GLOBAL general_log = 0; CREATE DATABASE sbtest" || die "MariaDB setup failed"

# Every server process, and the backends they fork later, on CPU 0.
CLIENT_PIN=()
if [ "${BENCH_E2E_PIN:-1}" = 1 ] && [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
    for pid in $(pgrep -u "$QG_PG_USER") $(pgrep -u "$QG_MY_USER"); do
        taskset -a -p -c 0 "$pid" >/dev/null || die "cannot pin server process $pid"
    done
    CLIENT_PIN=(taskset -c 1)
    echo "bench_e2e: servers on CPU 0, clients on CPU 1" >&2
fi

echo "bench_e2e: loading data" >&2
"$PGBENCH" -i -q -s 1 >"$WORK/pgbench-init.log" 2>&1 || { cat "$WORK/pgbench-init.log" >&2; die "pgbench -i failed"; }
front_tables_pg || die "cannot load the PostgreSQL table of the mixed corpus"
front_tables_my || die "cannot load the MariaDB table of the mixed corpus"

SB_PG=(--db-driver=pgsql --pgsql-host="$PGHOST" --pgsql-port="$PGPORT" --pgsql-user="$PGUSER"
       --pgsql-db="$PGDATABASE")
SB_MY=(--db-driver=mysql --mysql-socket="$QG_MY_SOCKET" --mysql-user=root --mysql-db=sbtest)
SB_TABLE=(--tables=1 --table-size=10000)
sysbench oltp_point_select "${SB_PG[@]}" "${SB_TABLE[@]}" prepare >"$WORK/sb-pg-prepare.log" 2>&1 ||
    { cat "$WORK/sb-pg-prepare.log" >&2; die "sysbench prepare (pgsql) failed"; }
sysbench oltp_point_select "${SB_MY[@]}" "${SB_TABLE[@]}" prepare >"$WORK/sb-my-prepare.log" 2>&1 ||
    { cat "$WORK/sb-my-prepare.log" >&2; die "sysbench prepare (mysql) failed"; }

# pgbench script: a point select carrying a 2000-character Shift_JIS literal
# in which 表 能 十 予 ソ have the trail byte 0x5c (the checker's slow path:
# a byte-wise reader sees a backslash there).  Ends in ASCII so that no 0x5c
# byte sits right before the closing quote.
phrase='表示能力十分予定ソフト日本語のデータ検索'
literal=$(for _ in $(seq 100); do printf '%s' "$phrase"; done)
{
    printf '\\set aid random(1, 100000 * :scale)\n'
    printf "SELECT abalance FROM pgbench_accounts WHERE aid = :aid AND filler <> '%sx';\n" "$literal"
} | iconv -f UTF-8 -t SHIFT_JIS >"$WORK/sjis-literal.sql" || die "iconv to SHIFT_JIS failed"
MB_SCRIPT_BYTES=$(wc -c <"$WORK/sjis-literal.sql")

# ---------------------------------------------------------------- running

# run_client CONFIG LOGFILE command…: without the shim for "base", else with
# it in that mode, settings from the environment only.  Last on stderr: the
# client's CPU time (user, system), wall-clock load on a shared machine does
# not change it.
run_client() {
    local config=$1 log=$2
    shift 2
    local TIMEFORMAT='qg-bench-cpu %U %S'
    # rewrite-all: mode rewrite with every literal a parameter (QUOTEGUARD_REWRITE=all)
    local mode=${config%-all} rewrite=needed
    [ "$mode" = "$config" ] || rewrite=all
    if [ "$config" = base ]; then
        time timeout "$RUN_TIMEOUT" "${CLIENT_PIN[@]}" env -u LD_PRELOAD "$@"
    else
        time timeout "$RUN_TIMEOUT" "${CLIENT_PIN[@]}" env -u QUOTEGUARD_ALLOW -u QUOTEGUARD_ONLY_PROGRAMS \
            -u QUOTEGUARD_SKIP_PROGRAMS QUOTEGUARD_CONFIG=/dev/null QUOTEGUARD_MODE="$mode" \
            QUOTEGUARD_REWRITE="$rewrite" QUOTEGUARD_LOG="$log" QUOTEGUARD_VERBOSE=1 \
            LD_PRELOAD="$SHIM" "$@"
    fi
}

# Parsers print "tps qps queries cpu_seconds" from one run's output.
pgbench_parse() {
    awk '/^tps = / { tps = $3 }
         /^number of transactions actually processed:/ { n = $6 }
         /^qg-bench-cpu / { cpu = $2 + $3 }
         END { if (tps == "" || n == "" || cpu == "") exit 1; print tps, tps, n, cpu }'
}
sysbench_parse() {
    awk '/transactions:/ { gsub(/\(/, "", $3); tps = $3 }
         /queries:/ && /per sec/ { gsub(/\(/, "", $3); qps = $3; n = $2 }
         /^qg-bench-cpu / { cpu = $2 + $3 }
         END { if (tps == "" || qps == "" || cpu == "") exit 1; print tps, qps, n, cpu }'
}

bench_pgbench_select() {
    run_client "$1" "$2" "$PGBENCH" -n -S -M simple -c 1 -j 1 -T "$SECS"
}
bench_pgbench_sjis() {
    PGCLIENTENCODING=SJIS run_client "$1" "$2" "$PGBENCH" -n -M simple -c 1 -j 1 -T "$SECS" \
        -f "$WORK/sjis-literal.sql"
}
bench_sysbench_pg_point_select() {
    run_client "$1" "$2" sysbench oltp_point_select "${SB_PG[@]}" "${SB_TABLE[@]}" \
        --db-ps-mode=disable --threads=1 --time="$SECS" --report-interval=0 run
}
bench_sysbench_my_point_select() {
    run_client "$1" "$2" sysbench oltp_point_select "${SB_MY[@]}" "${SB_TABLE[@]}" \
        --db-ps-mode=disable --threads=1 --time="$SECS" --report-interval=0 run
}
bench_sysbench_my_read_only() {
    run_client "$1" "$2" sysbench oltp_read_only "${SB_MY[@]}" "${SB_TABLE[@]}" \
        --db-ps-mode=disable --threads=1 --time="$SECS" --report-interval=0 run
}

# name | parser | configurations | what
BENCHES=(
    "pgbench_select|pgbench_parse|base enforce audit rewrite|pgbench -S -M simple, 1 client"
    "pgbench_sjis|pgbench_parse|base enforce audit rewrite|pgbench custom script, ${MB_SCRIPT_BYTES}-byte SJIS point select, 1 client"
    "sysbench_pg_point_select|sysbench_parse|base enforce audit rewrite|sysbench oltp_point_select, pgsql driver, ps-mode disable, 1 thread"
    "sysbench_my_point_select|sysbench_parse|base enforce audit|sysbench oltp_point_select, MariaDB, ps-mode disable, 1 thread"
    "sysbench_my_read_only|sysbench_parse|base enforce audit|sysbench oltp_read_only, MariaDB, ps-mode disable, 1 thread"
)

# ------------------------------------------------------------------ sanity

# The shim must see the clients' queries: in audit mode a query with an
# invalid byte must leave a finding in its log.
sanity_lua=$WORK/sanity.lua
cat >"$sanity_lua" <<'EOF'
function event()
   local con = sysbench.sql.driver():connect()
   pcall(function() con:query("SELECT 'x\200'") end)
   con:disconnect()
end
EOF
printf "SELECT 'x\xffy';\n" >"$WORK/sanity.sql"
sanity_ok() { [ -s "$1" ] && grep -q 'illformed\|invalid_sequence' "$1"; }
run_client audit "$WORK/sanity-pgbench.log" "$PGBENCH" -n -M simple -t 1 -f "$WORK/sanity.sql" >/dev/null 2>&1
sanity_ok "$WORK/sanity-pgbench.log" || die "the shim did not see pgbench's queries (log: $(cat "$WORK/sanity-pgbench.log" 2>/dev/null))"
run_client audit "$WORK/sanity-sb-pg.log" sysbench "$sanity_lua" "${SB_PG[@]}" --events=1 run >/dev/null 2>&1
sanity_ok "$WORK/sanity-sb-pg.log" || die "the shim did not see sysbench's pgsql queries"
run_client audit "$WORK/sanity-sb-my.log" sysbench "$sanity_lua" "${SB_MY[@]}" --events=1 run >/dev/null 2>&1
sanity_ok "$WORK/sanity-sb-my.log" || die "the shim did not see sysbench's MariaDB queries"
echo "bench_e2e: sanity: the shim intercepts pgbench, sysbench/pgsql and sysbench/mysql" >&2

# ------------------------------------------------------------------ timing

# BENCH_E2E_ONLY: run only the benchmarks whose name contains it.
selected() { [[ "$1" == *"${BENCH_E2E_ONLY:-}"* ]]; }

# run_failed NAME CONFIG ROUND OUTPUT: shows the run's output and stops.
run_failed() {
    echo "bench_e2e: $1/$2 round $3 failed:" >&2
    tail -n 20 "$4" >&2
    exit 1
}

# record FILE NAME CONFIG ROUND RESULT: one row of FILE (RESULT's fields
# tab-separated), and a progress line.
record() {
    printf '%s\t%s\t%s\t%s\n' "$2" "$3" "$4" "${5// /$'\t'}" >>"$1"
    printf '%s %s #%s: %s\n' "$2" "$3" "$4" "$5" >&2
}
total_runs=0
for spec in "${BENCHES[@]}"; do
    IFS='|' read -r name _ configs _ <<<"$spec"
    selected "$name" || continue
    set -- $configs
    total_runs=$((total_runs + RUNS * $#))
done
echo "bench_e2e: $total_runs runs of ${SECS}s (about $((total_runs * (SECS + 1) / 60 + 1)) min)" >&2

for spec in "${BENCHES[@]}"; do
    IFS='|' read -r name parser configs _ <<<"$spec"
    read -r -a cfg <<<"$configs"
    selected "$name" || continue
    for round in $(seq 1 "$RUNS"); do
        # Rotate the order each round so that no configuration always runs first.
        for i in "${!cfg[@]}"; do
            config=${cfg[$(((i + round - 1) % ${#cfg[@]}))]}
            log=$WORK/shim-$name-$config.log
            out=$WORK/out-$name-$config-$round.txt
            "bench_$name" "$config" "$log" >"$out" 2>&1
            result=$($parser <"$out") || run_failed "$name" "$config" "$round" "$out"
            record "$RAW" "$name" "$config" "$round" "$result"
        done
    done
done

# ------------------------------------------------------------------ paired

# name | client arguments | modes.  The mixed corpus (bench/bench_front.c):
# ASCII, UTF-8 and Shift_JIS literals, the workload of the fronts' counts.
PAIRED_BENCHES=(
    "paired_pg_select|pg select|enforce audit rewrite"
    "paired_pg_string|pg string|enforce audit rewrite rewrite-all"
    "paired_pg_quoted|pg quoted|enforce audit rewrite"
    "paired_pg_sjis|pg sjis|enforce audit rewrite"
    "paired_pg_mixed|pg-paired|enforce audit"
    "paired_my_select|mysql select|enforce audit"
    "paired_my_string|mysql string|enforce audit"
    "paired_my_mixed|my-paired|enforce audit"
)
PAIRED_RAW=$WORK/paired.tsv
: >"$PAIRED_RAW"
for round in $(seq 1 "$RUNS"); do
    for spec in "${PAIRED_BENCHES[@]}"; do
        IFS='|' read -r name args modes <<<"$spec"
        selected "$name" || continue
        read -r -a how <<<"$args"
        client=$PAIRED
        [[ ${how[0]} == *-paired ]] && client=$FRONT
        [[ ${how[0]} == my* ]] && how+=("$PAIRS" "$QG_MY_SOCKET") || how+=("$PAIRS")
        for mode in $modes; do
            out=$WORK/out-$name-$mode-$round.txt
            run_client "$mode" "$WORK/shim-$name-$mode.log" "$client" "${how[@]}" >"$out" 2>&1 &&
                line=$(grep -E '^(pg|mysql) ' "$out") || run_failed "$name" "$mode" "$round" "$out"
            record "$PAIRED_RAW" "$name" "$mode" "$round" "$line"
        done
    done
done

# ------------------------------------------------------------------- cold

COLD_RAW=$WORK/cold.tsv
: >"$COLD_RAW"
if selected cold; then
    for round in $(seq 1 "$RUNS"); do
        out=$WORK/out-cold-$round.txt
        run_client base /dev/null "$COLD" "$PAIRS" >"$out" 2>&1 || run_failed cold base "$round" "$out"
        grep '^cold ' "$out" | while read -r line; do record "$COLD_RAW" cold base "$round" "$line"; done
    done
fi

# What the shim logged during the timed runs, kept for reading.  Every query
# is legitimate: apart from one "attached" line per process there should be
# nothing.
SHIM_LOG=${JSON%.json}-shim.log
cat "$WORK"/shim-*.log >"$SHIM_LOG" 2>/dev/null
shim_log_lines=$(grep -vc '"event":"attached"' "$SHIM_LOG")

# ------------------------------------------------------------------ report

CPU=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)
CORES=$(nproc)
PGVER=$("$QG_PG_BIN/postgres" --version)
MYVER=$(my_sql -e 'SELECT VERSION()')
mkdir -p "$(dirname "$JSON")"
specs=$(printf '%s\n' "${BENCHES[@]}")
PINNED=$([ ${#CLIENT_PIN[@]} -gt 0 ] && echo 1 || echo 0)
python3 - "$RAW" "$JSON" "$CPU" "$CORES" "$RUNS" "$SECS" "$PGVER" "$MYVER" "$shim_log_lines" \
    "$specs" "$PINNED" "$PAIRED_RAW" "$PAIRS" "$COLD_RAW" <<'EOF'
import json, statistics, sys

(raw, out, cpu, cores, runs, secs, pgver, myver, log_lines, specs, pinned, paired_raw,
 pairs, cold_raw) = sys.argv[1:]
pinned = pinned == "1"
rows = {}
for line in open(raw):
    name, config, rnd, tps, qps, n, cpu_s = line.rstrip("\n").split("\t")
    rows.setdefault(name, {}).setdefault(config, []).append(
        {"round": int(rnd), "tps": float(tps), "qps": float(qps),
         "cpu_us_per_query": float(cpu_s) / int(n) * 1e6})

med = statistics.median
report = {
    "machine": {"cpu": cpu, "cores": int(cores), "postgres": pgver, "mariadb": myver},
    "settings": {"rounds": int(runs), "seconds_per_run": int(secs), "clients": 1, "pinned": pinned,
                 "statistic": "median", "order": "configurations alternate, rotated each round"},
    "shim_log_lines_besides_attach": int(log_lines),
    "benchmarks": [],
}
print(f"\nquoteguard end-to-end benchmark: {cpu}, {cores} cores; {pgver}; MariaDB {myver}")
print(f"median of {runs} alternating rounds of {secs} s per configuration, 1 client"
      + (", servers on CPU 0 and client on CPU 1\n" if pinned else "\n"))
fmt = "{:<25} {:<8} {:>8} {:>9} {:>13} {:>8} {:>10} {:>9} {:>10}"
print(fmt.format("benchmark", "config", "QPS", "QPS ratio", "paired ratios", "added",
                 "client CPU", "added CPU", "ratio from"))
print(fmt.format("", "", "median", "shim/base", "min..max", "us/query", "us/query", "us/query",
                 "added CPU"))
for spec in specs.splitlines():
    name, _, configs, what = spec.split("|")
    if name not in rows:
        continue
    by = rows[name]
    base_qps = med(r["qps"] for r in by["base"])
    base_cpu = med(r["cpu_us_per_query"] for r in by["base"])
    base_by_round = {r["round"]: r["qps"] for r in by["base"]}
    spread = (max(r["qps"] for r in by["base"]) - min(r["qps"] for r in by["base"])) / base_qps
    entry = {"name": name, "what": what, "base_qps_spread": spread, "configs": {}}
    for config in configs.split():
        rs = sorted(by[config], key=lambda r: r["round"])
        qps = med(r["qps"] for r in rs)
        cpu_q = med(r["cpu_us_per_query"] for r in rs)
        e = {"runs": rs, "tps_median": med(r["tps"] for r in rs), "qps_median": qps,
             "client_cpu_us_per_query": cpu_q}
        if config == "base":
            print(fmt.format(name, config, f"{qps:.0f}", "", f"spread {spread * 100:.0f}%", "",
                             f"{cpu_q:.2f}", "", ""))
        else:
            paired = [r["qps"] / base_by_round[r["round"]] for r in rs
                      if r["round"] in base_by_round]
            added_cpu = cpu_q - base_cpu
            e.update({"qps_ratio": qps / base_qps, "paired_ratio_min": min(paired),
                      "paired_ratio_max": max(paired),
                      "added_us_per_query": (1 / qps - 1 / base_qps) * 1e6,
                      "added_client_cpu_us_per_query": added_cpu,
                      "ratio_from_added_cpu": 1 / (1 + added_cpu * 1e-6 * base_qps)})
            print(fmt.format("", config, f"{qps:.0f}", f"{e['qps_ratio']:.3f}",
                             f"{min(paired):.2f}..{max(paired):.2f}",
                             f"{e['added_us_per_query']:.1f}", f"{cpu_q:.2f}",
                             f"{added_cpu:+.2f}", f"{e['ratio_from_added_cpu']:.3f}"))
        entry["configs"][config] = e
    report["benchmarks"].append(entry)
print("\nQPS ratio = median QPS with the shim / without; paired = the same per round;")
print("added us/query = 1/QPS(shim) - 1/QPS(base); client CPU = user+system CPU time of the")
print("client per query; ratio from added CPU = 1 / (1 + added CPU x base QPS): the QPS ratio if")
print("the shim's CPU adds serially to each query, robust to load from other processes.")

def client_lines(path):
    """Lines of a client's key=value output as recorded: name, config, the
    line's second word (shape or statement), and its values with the round."""
    for line in open(path):
        name, config, rnd, _, second, *kvs = line.rstrip("\n").split("\t")
        fields = {k: float(v) for k, v in (kv.split("=") for kv in kvs)}
        fields["round"] = int(rnd)
        yield name, config, second, fields

paired = {}
for name, mode, _, fields in client_lines(paired_raw):
    paired.setdefault(name, {}).setdefault(mode, []).append(fields)
if paired:
    print(f"\npaired: {pairs} pairs per run, shim and direct alternating query by query in one"
          f" process; median of {runs} runs")
    pfmt = "{:<18} {:<11} {:>10} {:>10} {:>14} {:>9} {:>13} {:>12} {:>11}"
    print(pfmt.format("benchmark", "mode", "direct us", "added us", "added min..max",
                      "ratio", "ratio min..max", "protocol us", "padding us"))
    report["paired"] = []
    for name, modes in paired.items():
        for mode, rs in modes.items():
            added = [r["added_us"] for r in rs]
            ratio = [r["ratio"] for r in rs]
            e = {"name": name, "mode": mode, "runs": rs,
                 "direct_median_us": med(r["direct_median_us"] for r in rs),
                 "added_us_median": med(added), "ratio_median": med(ratio)}
            protocol = padding = ""
            if "protocol_us" in rs[0]:
                e["protocol_us_median"] = med(r["protocol_us"] for r in rs)
                e["padding_us_median"] = med(r["padding_us"] for r in rs)
                protocol = f"{e['protocol_us_median']:.2f}"
                padding = f"{e['padding_us_median']:.2f}"
            report["paired"].append(e)
            print(pfmt.format(name, mode, f"{e['direct_median_us']:.1f}",
                              f"{e['added_us_median']:.2f}",
                              f"{min(added):.2f}..{max(added):.2f}", f"{e['ratio_median']:.4f}",
                              f"{min(ratio):.4f}..{max(ratio):.4f}", protocol, padding))
    print("direct us = median latency of a query around the shim; added us = mean of the pair")
    print("differences (5 % trimmed each side); ratio = one client's throughput with the shim /")
    print("without (summed latencies of the pairs kept); protocol us = what the same query costs")
    print("sent directly with its literal as a parameter (PQsendQueryParams), more than as text:")
    print("the extended protocol's share of rewrite mode's cost, measured in the same rounds;")
    print("padding us = what that statement costs more with \"$1\" padded to the literal's length")
    print("in characters, as rewrite mode sends it to keep error positions.")
cold = {}
for _, _, statement, fields in client_lines(cold_raw):
    cold.setdefault(statement, []).append(fields)
if cold:
    print(f"\ncold: one check as the guard makes it, right after a round trip and again at"
          f" once; {pairs} rounds per run, median of {runs} runs")
    cfmt = "{:<17} {:>6} {:>9} {:>9} {:>9} {:>9}"
    print(cfmt.format("statement", "bytes", "cold ns", "p90 ns", "warm ns", "timer ns"))
    report["cold_check"] = []
    for statement, rs in cold.items():
        e = {"statement": statement, "bytes": int(rs[0]["bytes"]), "runs": rs}
        for key in ("cold_median_ns", "cold_p90_ns", "warm_median_ns", "timer_ns"):
            e[key] = med(r[key] for r in rs)
        report["cold_check"].append(e)
        print(cfmt.format(statement, e["bytes"], f"{e['cold_median_ns']:.0f}",
                          f"{e['cold_p90_ns']:.0f}", f"{e['warm_median_ns']:.0f}",
                          f"{e['timer_ns']:.0f}"))
    print("cold and warm include the timer's own cost (timer ns: two clock readings);")
    print("pg_quoted_rewrite, pg_sjis_rewrite: the check and then rewrite mode's rewrite, the")
    print("literal a parameter (pg_sjis_rewrite: pgbench_sjis's 4 KB Shift_JIS literal).")
print(f"Shim log lines during timed runs besides one 'attached' per process: {log_lines}")
with open(out, "w") as f:
    json.dump(report, f, indent=2)
    f.write("\n")
EOF
