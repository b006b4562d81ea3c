#!/bin/bash
# Same-run comparison of the checker at another revision and at the working
# tree: builds that revision's bench_checker in a temporary worktree, then
# alternates the two binaries ROUNDS times per corpus and prints the best
# round of each (MB/s).  On a shared machine whose speed drifts, only such
# same-run ratios are worth quoting.
#   bench/compare.sh REV [CORPUS ...]      e.g. bench/compare.sh 7988a8a oltp/pg/SJIS
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:?usage: bench/compare.sh REV [CORPUS ...]}
shift
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

mbps() { # binary corpus -> check MB/s of one run
    "$1" --only "$2" --runs 1 --min-time 0.25 2>/dev/null |
        awk -F'|' '/^(oltp|batch|regress)/ {split($2, f, " "); print f[1]; exit}'
}
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
