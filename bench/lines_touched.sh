#!/bin/bash
# The cache lines one check touches, counted in a trace of its memory
# accesses: the measure behind the checker's cost right after a round trip
# (bench/bench_cold.c), where each line it touches comes back from further
# away than the first-level caches.  Counts, where the times spread: the
# same on every run of one build in one environment (the stack's lines move
# by one or two with the size of the environment).
#
#   bench/lines_touched.sh    (BUILD: the build directory, default build;
#                             BENCH_LINES_OUT: also "lines-GROUP N" there,
#                             N a check's lines of all three kinds, rounded,
#                             for tests/t/79-cost-figures.t)
#
# Runs `bench_cold --trace` under valgrind --tool=lackey: the fronts'
# corpus (bench/front_corpus.h) checked once for the warm-up, then each
# group's statements once more, each after a store to a marker.  For each
# check, the distinct 64-byte lines of code it runs and of data it reads or
# writes outside the stack and outside the texts (the program writes a text
# just before it sends it), and of stack, and the 4 KiB pages of code and of
# data those lines lie on (each one more TLB entry); a group's means a
# check.  Code and data are the shim's, the C library's and the loop's
# around each check (a few lines, the same in every group).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) COLD=$BUILD/bench/bench_cold ;; *) COLD=$ROOT/$BUILD/bench/bench_cold ;; esac
die() { echo "lines_touched.sh: $*" >&2; exit 1; }
[ -x "$COLD" ] || die "$COLD is not built (make $BUILD/bench/bench_cold)"
command -v valgrind >/dev/null || die "valgrind is not installed"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
valgrind --tool=lackey --trace-mem=yes --log-file="$WORK/trace" "$COLD" --trace >"$WORK/order"
python3 - "$WORK/order" "$WORK/trace" "${BENCH_LINES_OUT:-}" <<'PY'
import sys
order = open(sys.argv[1]).read().split("\n")
fields = {l.split()[0]: l.split()[1:] for l in order if l and not l.startswith("check ")}
marker = int(fields["marker"][0], 16)
texts = int(fields["texts"][0], 16)
texts_end = texts + int(fields["texts"][1])
stack = int(fields["stack"][0], 16)
checks = [l.split()[1] for l in order if l.startswith("check ")]
sums, counts, current, seen = {}, {}, None, 0
def close():
    if current is None:
        return
    group = checks[seen - 1]
    s = sums.setdefault(group, [0] * 5)
    for k in range(3):
        s[k] += len(current[k])
    s[3] += len({line >> 6 for line in current[0]})
    s[4] += len({line >> 6 for line in current[1] | current[2]})
    counts[group] = counts.get(group, 0) + 1
for line in open(sys.argv[2]):
    if line.startswith("=="):
        continue
    kind, _, where = line.strip().partition(" ")
    if not where:
        continue
    address = int(where.strip().split(",")[0], 16)
    if kind in ("S", "M") and address == marker:
        close()
        seen += 1
        current = (set(), set(), set()) if seen <= len(checks) else None
        continue
    if current is None:
        continue
    if kind == "I":
        current[0].add(address >> 6)
    elif texts <= address < texts_end:
        pass
    elif abs(address - stack) < (1 << 20):
        current[2].add(address >> 6)
    else:
        current[1].add(address >> 6)
if seen != len(checks) + 1:
    sys.exit(f"lines_touched.sh: {seen} marks for {len(checks)} checks")
print(f"{'group':<18} {'checks':>6} {'code lines':>10} {'data lines':>10} {'stack lines':>11}"
      f" {'code pages':>10} {'data pages':>10}")
for group in dict.fromkeys(checks):
    s, n = sums[group], counts[group]
    print(f"{group:<18} {n:>6} {s[0] / n:>10.1f} {s[1] / n:>10.1f} {s[2] / n:>11.1f}"
          f" {s[3] / n:>10.1f} {s[4] / n:>10.1f}")
if sys.argv[3]:
    with open(sys.argv[3], "w") as out:
        for group in dict.fromkeys(checks):
            s, n = sums[group], counts[group]
            name = group.replace("front_", "lines-", 1).replace("_", "-")
            out.write(f"{name} {round((s[0] + s[1] + s[2]) / n)}\n")
PY
