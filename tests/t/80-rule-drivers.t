#!/bin/bash
# Correctly escaped legitimate statements through real drivers to real
# servers under the shim in enforce mode, on PostgreSQL in 8 client
# encodings x standard_conforming_strings on/off: psycopg2
# (PQescapeStringConn), PHP pg_escape_string and pg_escape_literal with
# pg_query, DBD::Pg quote; on MariaDB in 8 character sets (MariaDB has no
# gb18030) x default / NO_BACKSLASH_ESCAPES / ANSI_QUOTES: MySQLdb
# (mysql_real_escape_string), PHP mysqli_real_escape_string after
# mysqli_set_charset (mysqlnd, through the wire front), DBD::mysql quote.
# The same values and templates for each (tests/measure/drivers.py; PHP and
# Perl escape and send them: drivers.php, drivers.pl).  None may be
# blocked, each must come back byte for byte; and every literal the drivers
# wrote is the byte-identical output of the escaper models the measurement
# uses (tests/measure/escapers.h, measure_rule --verify).  DBD::Pg's quote
# is byte-wise: its statements holding a character with a 0x5c trail byte
# (SJIS, BIG5, GBK, GB18030) are counted apart, as misescaped.
# QG_DRIVER_STATEMENTS sets the statements per dialect and driver program
# (make measure: 20000).
# servers: pg mariadb
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/pg.sh
. tests/lib/mariadb.sh

qg_require_build measure/measure_rule
PY=/usr/bin/python3
"$PY" -c 'import psycopg2, MySQLdb' 2>/dev/null || tap_bail "python3-psycopg2 and python3-mysqldb are needed (scripts/install-deps)"
php -r 'exit(function_exists("pg_escape_literal") && function_exists("mysqli_set_charset") ? 0 : 1);' ||
    tap_bail "php-pgsql and php8.2-mysql are needed (scripts/install-deps)"
perl -MDBD::Pg -MDBD::mysql -e 1 2>/dev/null || tap_bail "libdbd-pg-perl and libdbd-mysql-perl are needed (scripts/install-deps)"
pg_available || tap_skip_all "no PostgreSQL server binaries (or not root)"
my_available || tap_skip_all "no MariaDB server binaries (or not root)"
pg_start || tap_bail "cannot start PostgreSQL"
my_start || tap_bail "cannot start MariaDB"

count=${QG_DRIVER_STATEMENTS:-3000}
work=$(mktemp -d)
qg_at_exit "rm -rf '$work'"
export QG_MY_SOCKET

sum_field() { printf '%s\n' "$1" | awk -v f="$2" '/^driver / { s += $f } END { print s + 0 }'; }
for dialect in pg mysql; do
    "$PY" tests/measure/drivers.py values "$dialect" "$count" >"$work/values-$dialect.txt" ||
        tap_bail "drivers.py values $dialect failed"
    for program in python php perl; do
        case $program in
        python) out=$(with_shim enforce "$work/$dialect.log" "$PY" tests/measure/drivers.py "$dialect" "$count" "$work" 2>&1) ;;
        php) out=$(with_shim enforce "$work/$dialect.log" php tests/measure/drivers.php "$dialect" "$work" <"$work/values-$dialect.txt" 2>&1) ;;
        perl) out=$(with_shim enforce "$work/$dialect.log" perl tests/measure/drivers.pl "$dialect" "$work" <"$work/values-$dialect.txt" 2>&1) ;;
        esac
        drivers=$(printf '%s\n' "$out" | awk '/^driver / { print $2 }' | sort -u | tr '\n' ' ')
        lines=$(printf '%s\n' "$out" | grep -c '^driver ')
        ok "$dialect $program: ${drivers}ran in every setting ($lines)" [ "$lines" -ge 16 ]
        sent=$(sum_field "$out" 6) blocked=$(sum_field "$out" 8) wrong=$(sum_field "$out" 10) other=$(sum_field "$out" 12)
        mis_sent=$(printf '%s\n' "$out" | awk '/^misescaped / { s += $6 } END { print s + 0 }')
        ok "$dialect $program: $sent statements sent, $blocked blocked" \
            [ $((sent + mis_sent)) -ge "$count" -a "$blocked" -eq 0 ]
        ok "$dialect $program: every statement the server ran came back byte for byte ($wrong did not)" [ "$wrong" -eq 0 ]
        tap_diag "$dialect $program: $other statements the server refused itself (a character its conversion lacks)"
        misescaped=$(printf '%s\n' "$out" | awk '/^misescaped / { s += $6; b += $8; w += $10; o += $12 }
            END { if (s) printf "%d sent, %d blocked, %d read otherwise, %d refused by the server", s, b, w, o }')
        [ -z "$misescaped" ] || tap_diag "$dialect $program: misescaped (byte-wise quote, a 0x5c trail byte): $misescaped"
        [ "$blocked" -eq 0 ] && [ "$wrong" -eq 0 ] ||
            tap_diag "$(printf '%s\n' "$out" | grep -E '^#|^driver .*(blocked [1-9]|wrong [1-9])' | head -n 20)"
    done
done

# The escaper models, byte for byte against what the drivers wrote.
mismatch=0 checked=0
for f in "$work"/escaped-*.txt; do
    name=${f##*/escaped-}
    name=${name%.txt}
    IFS=- read -r driver enc mode <<<"$name"
    case $driver in
    psycopg2) d=pg esc=psycopg2 ;;
    pg_escape_string) d=pg esc=PQescapeStringConn ;;
    pg_escape_literal) d=pg esc=PQescapeLiteral ;;
    DBD::Pg) d=pg esc=DBD::Pg ;;
    MySQLdb | mysqli_real_escape_string | DBD::mysql) d=mysql esc=mysql_real_escape ;;
    *) tap_bail "no escaper model for $driver" ;;
    esac
    case $mode in on) flags=1 ;; NBE) flags=2 ;; ANSI_QUOTES) flags=4 ;; *) flags=0 ;; esac
    res=$("$QG_BUILD"/measure/measure_rule --verify "$esc" "$d" "$enc" "$flags" <"$f" 2>"$work/verify.err")
    read -r n bad <<<"$res"
    checked=$((checked + ${n:-0}))
    if [ "${bad:-1}" != 0 ]; then
        mismatch=$((mismatch + 1))
        tap_diag "$name: $res" "$(cat "$work/verify.err")"
    fi
done
ok "the escaper models agree byte for byte with the drivers ($checked literals, $mismatch files differ)" \
    [ "$checked" -gt 0 -a "$mismatch" -eq 0 ]
tap_done
