#!/bin/bash
# The fast checker (every vector build the CPU runs) and the scalar reference give
# the same verdict and findings on every query of the benchmark's corpora:
# OLTP statements, 1 MiB batches and statements with one 4 KB literal, ASCII
# and multibyte (UTF-8, SJIS, GBK, BIG5, GB18030), both dialects, and
# PostgreSQL's regression statements and files.  And the benchmark's strings
# floor (bench/strings_floor.h), in each vector build the CPU runs, reads the
# MySQL ASCII corpora as a byte loop does.  bench_checker --verify prints one TAP line per corpus and check.
# Needs ../shared/corpus (the regression statements), the reference
# material beside the source tree.
# servers: none
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
out=$(make -s build/bench/bench_checker 2>&1) || tap_bail "cannot build bench_checker: $(printf '%s' "$out" | tail -n 5)"
build/bench/bench_checker --verify
