#!/bin/bash
# Same-run comparison of the checker at another revision and at the working
# tree: builds that revision's bench_checker in a temporary worktree, then
# alternates the two binaries ROUNDS times per corpus and prints the best
# round of each (MB/s).  On a shared machine whose speed drifts, only such
# same-run ratios are worth quoting.
#   bench/compare.sh REV [CORPUS ...]      e.g. bench/compare.sh 7988a8a oltp/pg/SJIS
# With --instructions, the instructions per query of the fast checker
# instead, counted by callgrind: exact and the same on every run, where
# timings on a shared guest are not (calls of qg_check from the bench's
# fast pass only, everything they run included).
#   bench/compare.sh --instructions REV [CORPUS ...]
set -euo pipefail
cd "$(dirname "$0")/.."
instructions=false
if [ "${1-}" = --instructions ]; then
    instructions=true
    shift
fi
rev=${1:?usage: bench/compare.sh [--instructions] REV [CORPUS ...]}
shift
git rev-parse --quiet --verify "$rev^{commit}" >/dev/null ||
    { echo "compare.sh: '$rev' names no commit" >&2; exit 2; }
corpora=("$@")
[ ${#corpora[@]} -gt 0 ] || corpora=(oltp/pg/UTF8/ascii batch-1MiB/pg/UTF8/ascii oltp/pg/UTF8/multi
                                     oltp/pg/SJIS batch-1MiB/pg/SJIS oltp/mysql/gbk)
rounds=${ROUNDS:-6}
build=${BUILD:-build}
work=$(mktemp -d)
trap 'git worktree remove --force "$work/tree" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git worktree add --detach "$work/tree" "$rev" >/dev/null 2>&1
make -C "$work/tree" -s "$build/bench/bench_checker" >/dev/null
make -s "$build/bench/bench_checker" >/dev/null
old="$work/tree/$build/bench/bench_checker" new="$build/bench/bench_checker"
for c in "${corpora[@]}"; do # a name that matches no corpus would count 0
    err=$("$new" --only "$c" --runs 1 --min-time 0.000001 2>&1 >/dev/null) ||
        { echo "compare.sh: $err" >&2; exit 2; }
done

mbps() { # binary corpus -> check MB/s of one run
    "$1" --only "$2" --runs 1 --min-time 0.25 2>/dev/null |
        awk -F'|' '/^(oltp|batch|regress)/ {split($2, f, " "); print f[1]; exit}'
}
# binary corpus -> instructions per query of the fast qg_check calls
per_query() {
    local out
    out=$(mktemp)
    valgrind --tool=callgrind --separate-callers=3 --compress-strings=no --compress-pos=no \
        --callgrind-out-file="$out" "$1" --only "$2" --runs 1 --min-time 0.01 >/dev/null 2>&1
    # A call record is "cfn=qg_check'<callers>", "calls=N …", then its cost.
    awk '/^cfn=qg_check\x27pass_check\x27run_measures/ {take = 2; next}
         take == 2 {split($1, c, "="); calls += c[2]; take = 1; next}
         take == 1 {cost += $2; take = 0}
         END {if (calls) printf "%.0f\n", cost / calls; else print 0}' "$out"
    rm -f "$out"
}
if $instructions; then
    command -v valgrind >/dev/null || { echo "compare.sh: valgrind not installed" >&2; exit 1; }
    printf '%-32s %10s %10s %6s\n' 'corpus (instructions/query)' "$rev" tree ratio
    for c in "${corpora[@]}"; do
        o=$(per_query "$old" "$c") n=$(per_query "$new" "$c")
        awk -v c="$c" -v o="$o" -v n="$n" \
            'BEGIN { printf "%-32s %10d %10d %6.3f\n", c, o, n, o ? n / o : 0 }'
    done
    exit 0
fi
printf '%-32s %10s %10s %6s\n' corpus "$rev" tree ratio
for c in "${corpora[@]}"; do
    best_old=0 best_new=0
    for _ in $(seq "$rounds"); do
        v=$(mbps "$old" "$c"); [ "${v:-0}" -gt "$best_old" ] && best_old=$v
        v=$(mbps "$new" "$c"); [ "${v:-0}" -gt "$best_new" ] && best_new=$v
    done
    awk -v c="$c" -v o="$best_old" -v n="$best_new" \
        'BEGIN { printf "%-32s %10d %10d %6.2f\n", c, o, n, o ? n / o : 0 }'
done
