#!/bin/bash
# Differential test: literal, delimited-identifier and comment spans of the
# checker's PostgreSQL lexer (UTF8, standard_conforming_strings on) against
# libpg_query's pg_query_scan on every statement of ../shared/corpus/pg-regress
# (psql meta-command lines and COPY data dropped).  Every disagreement must
# fall into a named category; the counts are printed.
# Needs ../shared/corpus, the reference material beside the source tree.
# servers: none
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
helper=$BUILD/diff/pgquery_spans
corpus=../shared/corpus/pg-regress

if [ ! -d "$corpus" ]; then
    echo "Bail out! needs $corpus (the reference material beside the source tree)"
    exit 1
fi
make -s "$helper" >/dev/null || { echo "Bail out! cannot build $helper"; exit 1; }
echo "1..3"

out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$helper" "$corpus"/*.sql "$corpus"/plpgsql/*.sql >"$out"
status=$?

statements=$(sed -n 's/.* statements \([0-9]*\) .*/\1/p' "$out")
agreeing=$(sed -n 's/^agreeing spans: //p' "$out")
sed -n '/^files /p; /^agreeing /p; /^disagreements /p; /^category /p' "$out" | sed 's/^/# /'
echo "# scanner errors by message (statements libpg_query 15 cannot lex):"
sed -n 's/^SCAN-ERROR [^ ]*: //p' "$out" | sed 's/ at or near .*//' | sort | uniq -c | sed 's/^/#   /'

[ "${statements:-0}" -gt 40000 ] && ok=ok || ok="not ok"
echo "$ok - $statements statements read by both lexers"
strings=$(sed -n 's/^agreeing spans: strings \([0-9]*\) .*/\1/p' "$out")
[ "${strings:-0}" -gt 25000 ] && ok=ok || ok="not ok"
echo "$ok - spans agree: $agreeing"
if [ "$status" -eq 0 ] && ! grep -q '^DISAGREE' "$out"; then
    echo "ok - every disagreement is explained"
else
    echo "not ok - unexplained disagreements (helper exit $status):"
    grep '^DISAGREE' "$out" | head -n 20 | sed 's/^/# /'
fi
