#!/bin/bash
# Correctly escaped legitimate statements through real drivers to real
# servers under the shim in enforce mode: psycopg2 (PQescapeStringConn) on
# PostgreSQL in 8 client encodings x standard_conforming_strings on/off,
# MySQLdb (mysql_real_escape_string) on MariaDB in 8 character sets (MariaDB
# has no gb18030) x
# default / NO_BACKSLASH_ESCAPES / ANSI_QUOTES.  None may be blocked, each
# must come back byte for byte; and every literal the drivers wrote is the
# byte-identical output of the escaper models the measurement uses
# (tests/measure/escapers.h, measure_rule --verify).
# QG_DRIVER_STATEMENTS sets the statements per dialect (make measure: 20000).
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/pg.sh
. tests/lib/mariadb.sh

qg_require_build measure/measure_rule
PY=/usr/bin/python3
"$PY" -c 'import psycopg2, MySQLdb' 2>/dev/null || tap_bail "python3-psycopg2 and python3-mysqldb are needed (scripts/install-deps)"
pg_available || tap_skip_all "no PostgreSQL server binaries (or not root)"
my_available || tap_skip_all "no MariaDB server binaries (or not root)"
pg_start || tap_bail "cannot start PostgreSQL"
my_start || tap_bail "cannot start MariaDB"

count=${QG_DRIVER_STATEMENTS:-3000}
work=$(mktemp -d)
qg_at_exit "rm -rf '$work'"
export QG_MY_SOCKET

for dialect in pg mysql; do
    out=$(with_shim enforce "$work/$dialect.log" "$PY" tests/measure/drivers.py "$dialect" "$count" "$work" 2>&1)
    lines=$(printf '%s\n' "$out" | grep -c '^driver ')
    ok "$dialect: the drivers ran in every setting ($lines)" [ "$lines" -ge 16 ]
    sent=$(printf '%s\n' "$out" | awk '/^driver / { s += $6 } END { print s + 0 }')
    blocked=$(printf '%s\n' "$out" | awk '/^driver / { s += $8 } END { print s + 0 }')
    wrong=$(printf '%s\n' "$out" | awk '/^driver / { s += $10 } END { print s + 0 }')
    other=$(printf '%s\n' "$out" | awk '/^driver / { s += $12 } END { print s + 0 }')
    ok "$dialect: $sent statements sent, $blocked blocked" [ "$sent" -ge "$count" -a "$blocked" -eq 0 ]
    ok "$dialect: every statement the server ran came back byte for byte ($wrong did not)" [ "$wrong" -eq 0 ]
    tap_diag "$dialect: $other statements the server refused itself (a character its conversion lacks)"
    [ "$blocked" -eq 0 ] && [ "$wrong" -eq 0 ] || tap_diag "$(printf '%s\n' "$out" | grep -A3 -E 'blocked [1-9]|wrong [1-9]' | head -n 20)"
done

# The escaper models, byte for byte against what the drivers wrote.
mismatch=0 checked=0
for f in "$work"/escaped-*.txt; do
    name=${f##*/escaped-}
    name=${name%.txt}
    IFS=- read -r driver enc mode <<<"$name"
    case $driver in
    psycopg2) d=pg esc=psycopg2 flags=$([ "$mode" = on ] && echo 1 || echo 0) ;;
    MySQLdb) d=mysql esc=mysql_real_escape
             case $mode in NBE) flags=2 ;; ANSI_QUOTES) flags=4 ;; *) flags=0 ;; esac ;;
    esac
    res=$("$QG_BUILD"/measure/measure_rule --verify "$esc" "$d" "$enc" "$flags" <"$f" 2>"$work/verify.err")
    read -r n bad <<<"$res"
    checked=$((checked + ${n:-0}))
    if [ "${bad:-1}" != 0 ]; then
        mismatch=$((mismatch + 1))
        tap_diag "$name: $res" "$(cat "$work/verify.err")"
    fi
done
ok "the escaper models agree byte for byte with psycopg2 and MySQLdb ($checked literals, $mismatch files differ)" \
    [ "$checked" -gt 0 -a "$mismatch" -eq 0 ]
tap_done
