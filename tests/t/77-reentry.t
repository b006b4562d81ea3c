#!/bin/bash
# A query sent while another is in flight on the same thread is another
# query, and is checked: from a signal handler and from a libpq notice
# processor (PostgreSQL, SJIS), and from a MariaDB LOAD DATA LOCAL INFILE
# callback (gbk).  Enforce blocks the attack before it reaches the server
# and logs it; audit lets it through and logs it.  The outer query (the one
# in flight) runs as usual.
# servers: pg mariadb
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/pg.sh
. tests/lib/mariadb.sh

qg_require_build clients/pg_reenter clients/my_reenter
TMP=$(mktemp -d /tmp/qg-reentry.XXXXXX)
qg_at_exit "rm -rf '$TMP'"

pg_available || { ok "PostgreSQL server binaries (and root)" false; tap_done; }
my_available || { ok "MariaDB server binaries (and root)" false; tap_done; }
pg_start || tap_bail "cannot start PostgreSQL"
my_start || tap_bail "cannot start MariaDB"
my_sql -e "CREATE DATABASE qg;
           CREATE TABLE qg.users (name VARBINARY(64), secret VARCHAR(64));
           INSERT INTO qg.users VALUES ('alice', 'secret_alice'), ('bob', 'secret_bob')" ||
    tap_bail "cannot create the MariaDB table"

# What a byte-wise escaper makes of lead byte + "' OR 1=1 -- ": the lead
# byte and the added backslash are one character to the server, and the
# quote closes the string.
for path in signal notice; do
    for mode in enforce audit; do
        marker=qg_reentry_${path}_${mode}_$$
        sql=$(printf "SELECT /*$marker*/ 'x\x95\\\\' OR 1=1 -- ' AS v")
        log=$TMP/pg-$path-$mode.log
        out=$(with_shim $mode "$log" "$QG_BUILD/clients/pg_reenter" $path SJIS "$sql" 2>&1)
        has "$out" "FIRED: 1" "pg $path, $mode: the query ran from inside the outer PQexec"
        matches "$out" '^STATUS: PGRES_(TUPLES|COMMAND)_OK' "pg $path, $mode: the outer query runs"
        if [ $mode = enforce ]; then
            has "$out" "ERROR: 42601 quoteguard: blocked structure_mismatch" \
                "pg $path, enforce: the re-entrant SJIS attack is blocked"
            lacks "$(cat "$QG_PG_LOG")" "$marker" "pg $path, enforce: it never reaches the server"
            has "$(cat "$log")" '"action":"blocked","api":"PQexec","dialect":"postgres","encoding":"SJIS"' \
                "pg $path, enforce: the block is logged"
        else
            has "$(cat "$QG_PG_LOG")" "$marker" "pg $path, audit: the query reaches the server"
            has "$(cat "$log")" '"action":"logged","api":"PQexec","dialect":"postgres","encoding":"SJIS"' \
                "pg $path, audit: the finding is logged"
        fi
    done
done

for mode in enforce audit; do
    marker=qg_reentry_infile_${mode}_$$
    sql=$(printf "SELECT /*$marker*/ secret FROM users WHERE name = '\xbf\\\\' OR 1=1 -- '")
    log=$TMP/my-infile-$mode.log
    out=$(with_shim $mode "$log" "$QG_BUILD/clients/my_reenter" "$QG_MY_SOCKET" qg gbk "$sql" 2>&1)
    has "$out" "FIRED: 1" "mysql LOAD DATA LOCAL callback, $mode: the query ran from inside the outer mysql_query"
    has "$out" "OK: 1" "mysql LOAD DATA LOCAL callback, $mode: the outer LOAD DATA loads its row"
    if [ $mode = enforce ]; then
        matches "$out" '^ERROR: 1105 [0-9A-Z]{5} quoteguard: blocked' \
            "mysql LOAD DATA LOCAL callback, enforce: the re-entrant gbk attack is blocked"
        lacks "$out" "ROW: secret_" "mysql LOAD DATA LOCAL callback, enforce: no secret leaks"
        lacks "$(cat "$QG_MY_LOG")" "$marker" "mysql LOAD DATA LOCAL callback, enforce: it never reaches the server"
        has "$(cat "$log")" '"action":"blocked","api":"mysql_real_query","dialect":"mysql","encoding":"gbk"' \
            "mysql LOAD DATA LOCAL callback, enforce: the block is logged"
    else
        has "$(cat "$QG_MY_LOG")" "$marker" "mysql LOAD DATA LOCAL callback, audit: the query reaches the server"
        has "$(cat "$log")" '"action":"logged","api":"mysql_real_query","dialect":"mysql","encoding":"gbk"' \
            "mysql LOAD DATA LOCAL callback, audit: the finding is logged"
    fi
done

tap_done
