#!/bin/bash
# The attacks the rule measurement counts are attacks for the real servers:
# a sample of measure_rule's effective attacks (about 300 a dialect, the
# first of each encoding and quoting mode) is sent without the shim to
# PostgreSQL and MariaDB, which must read each otherwise than its template
# (other statements by PostgreSQL's query ids or MariaDB's statement
# digests, a syntax error, another error or other results:
# tests/measure/attacks_on_servers.py); and with the shim in enforce mode
# every one must be blocked and never reach the server's log.  And a quote
# doubler's breakout whose witness lies in a later statement of a MySQL
# multi-statement text than the one the shim splits the text at (a SET
# NAMES, or a statement whose effect only the server knows) is blocked.
# QG_ATTACK_SAMPLE sets the sample a dialect (default 300).
# servers: pg mariadb
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
# query ids of the statements PostgreSQL ran; MariaDB's statement digests
QG_PG_CONF="shared_preload_libraries = 'pg_stat_statements'
compute_query_id = on
pg_stat_statements.track_utility = off"
QG_MY_ARGS="--performance-schema=ON"
pg_start || tap_bail "cannot start PostgreSQL"
my_start || tap_bail "cannot start MariaDB"

sample=${QG_ATTACK_SAMPLE:-300}
work=$(mktemp -d)
qg_at_exit "rm -rf '$work'"
export QG_MY_SOCKET

"$QG_BUILD"/measure/measure_rule --per-dialect $((sample * 200)) --sample "$work/sample.txt" "$sample" >"$work/measure.out" 2>&1 ||
    tap_bail "measure_rule failed: $(tail -n 3 "$work/measure.out")"
plain=$("$PY" tests/measure/attacks_on_servers.py plain "$work/sample.txt" 2>&1)
shim=$(with_shim enforce "$work/shim.log" "$PY" tests/measure/attacks_on_servers.py shim "$work/sample.txt" 2>&1)
field() { printf '%s\n' "$1" | awk -v k="$2" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }'; }

for dialect in pg mysql; do
    line=$(printf '%s\n' "$plain" | grep "^plain $dialect ")
    [ -n "$line" ] || tap_bail "no result for $dialect: $(printf '%s\n' "$plain" | tail -n 5)"
    n=$(field "$line" sample) confirmed=$(field "$line" confirmed) refused=$(field "$line" refused)
    unconfirmed=$(field "$line" unconfirmed)
    ok "$dialect: a sample of $n effective attacks" [ "$n" -ge $((sample * 3 / 4)) ]
    tap_diag "$line"
    # At most 1 in 100 reads alike for the server: where the injected
    # reading drops code that changes nothing (a cast to the type the
    # literal takes anyway); each is printed.
    ok "$dialect: the server confirmed $confirmed, refused $refused before reading them, $unconfirmed read alike" \
        [ $((confirmed + refused + unconfirmed)) -eq "$n" -a $((unconfirmed * 100)) -le "$n" ]
    printf '%s\n' "$plain" | grep -E "^(unconfirmed|refused) $dialect " | cut -c1-300 | while read -r l; do tap_diag "$l"; done

    line=$(printf '%s\n' "$shim" | grep "^shim $dialect ")
    sent=$(field "$line" sent) blocked=$(field "$line" blocked)
    ok "$dialect: under the shim $blocked of $sent blocked" [ "${sent:-0}" -eq "$n" -a "${blocked:-0}" -eq "${sent:-0}" ]
    printf '%s\n' "$shim" | grep "^not blocked qgv-$dialect" | head -n 5 | while read -r l; do tap_diag "$l"; done
    server_log=$([ "$dialect" = pg ] && echo "$QG_PG_LOG" || echo "$QG_MY_LOG")
    markers=$(printf '%s\n' "$shim" | awk -v p="qgv-$dialect-" '$1 == "marker" && index($2, p) == 1 { print $2 }')
    reached=$(printf '%s\n' "$markers" | grep -c -F -f - "$server_log")
    ok "$dialect: none of the $(printf '%s\n' "$markers" | grep -c .) reached the server's log ($reached did)" \
        [ -n "$markers" -a "$reached" -eq 0 ]
done

# A doubler's '\'' closes the literal for a server that takes backslash
# escapes; the text goes on with a statement at which the shim reads the
# rest with a new state.
for split in "SET NAMES latin1" "SET NAMES gbk" "DO 1"; do
    marker=qgv_split_$RANDOM
    my_sql -e "CREATE TABLE IF NOT EXISTS qgv.$marker (x int)"
    attack=$(printf "SELECT * FROM t WHERE a = '\\\\''; %s; DROP TABLE %s; #'" "$split" "$marker" | xxd -p | tr -d '\n')
    printf 'mysql latin1 0 doubler %s %s\n' "$attack" "$attack" >"$work/split.txt"
    out=$(with_shim enforce "$work/split.log" "$PY" tests/measure/attacks_on_servers.py shim "$work/split.txt" 2>&1)
    matches "$out" '^shim mysql sent 1 blocked 1' "a doubler's breakout split at '$split': blocked"
    lacks "$(cat "$QG_MY_LOG")" "DROP TABLE $marker" "a doubler's breakout split at '$split': never reaches the server"
    "$PY" tests/measure/attacks_on_servers.py shim "$work/split.txt" >/dev/null 2>&1
    ok "a doubler's breakout split at '$split': without the shim it drops the table" \
        [ -z "$(my_sql -e "SHOW TABLES FROM qgv LIKE '$marker'")" ]
done

# An escaper that believes a double-byte encoding (here one where fb 5c is a
# character) on a cp1251 connection: it steps over fb alone before a quote
# (fb 27 is no character) and escapes the quote, but copies fb 5c whole.
# The literal it wrote mixes both; the byte-wise reading agrees with the
# server's, and the rule's encoding-aware reading follows both steps.
attack=$(printf "SELECT * FROM t WHERE a = 'alice' AND b = 'John\xfb\\\\'\xfb\\\\\x99\\\\\\\\\\\\'
  AND name = ' OR 1=1 -- '" | xxd -p | tr -d '\n')
template=$(printf "SELECT * FROM t WHERE a = 'alice' AND b = 'x'\n  AND name = 'x'" | xxd -p | tr -d '\n')
printf 'mysql cp1251 0 wrong-multibyte %s %s\n' "$attack" "$template" >"$work/mixed.txt"
matches "$("$PY" tests/measure/attacks_on_servers.py plain "$work/mixed.txt" 2>&1)" '^plain mysql sample 1 confirmed 1' \
    "a wrong-encoding escaper's mixed literal injects without the shim"
out=$(with_shim enforce "$work/mixed.log" "$PY" tests/measure/attacks_on_servers.py shim "$work/mixed.txt" 2>&1)
matches "$out" '^shim mysql sent 1 blocked 1' "a wrong-encoding escaper's mixed literal is blocked"
tap_done
