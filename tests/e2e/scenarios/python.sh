#!/bin/bash
# Python + psycopg2: bytes %-formatting into cursor.execute, hand-escaped
# input, standard_conforming_strings off, SJIS and GBK.
set -u
. "$(dirname "$0")/../lib.sh"
require "$E2E_PYTHON"
require_shim
"$E2E_PYTHON" -c 'import psycopg2' 2>/dev/null ||
    { fail "python3-psycopg2 is installed (run make deps)"; exit 1; }

pg_start >/dev/null && e2e_load_data || { fail "PostgreSQL started with the application data"; exit 1; }

union='%20UNION%20SELECT%20id,owner,secret%20FROM%20secrets--%20'
app=$E2E_DIR/python/lookup.py

export APP_CHARSET=SJIS
cgi_case legit "psycopg2 SJIS name=日本" "$QG_PG_LOG" 'name=%93%FA%96%7B' "$E2E_PYTHON" "$app"
cgi_case legit "psycopg2 SJIS name=o'brien" "$QG_PG_LOG" 'name=o%27brien' "$E2E_PYTHON" "$app"
cgi_case attack "psycopg2 SJIS 0x95' UNION" "$QG_PG_LOG" "name=%95%27$union" "$E2E_PYTHON" "$app"

export APP_CHARSET=GBK
cgi_case legit "psycopg2 GBK name=中文" "$QG_PG_LOG" 'name=%D6%D0%CE%C4' "$E2E_PYTHON" "$app"
cgi_case attack "psycopg2 GBK 0xbf' UNION" "$QG_PG_LOG" "name=%bf%27$union" "$E2E_PYTHON" "$app"

cgi_summary "python"
exit 0
