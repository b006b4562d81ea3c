#!/bin/bash
# valgrind memcheck on the integration clients under the shim (enforce):
# pg_legacy and my_legacy each run a blocked attack and ordinary queries.
# No memory error, no definite/indirect/possible leak, and no suppression
# file.  Still-reachable
# blocks are not counted: they are the libraries' own caches (libpq's and
# libmariadb's, libc's, OpenSSL's) and the shim's pinned library handles.
# servers: pg mariadb
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/pg.sh
. tests/lib/mariadb.sh

qg_require_build clients/pg_legacy clients/my_legacy
command -v valgrind >/dev/null || tap_skip_all "no valgrind"
pg_available || tap_skip_all "no PostgreSQL server binaries (or not root)"
my_available || tap_skip_all "no MariaDB server binaries (or not root)"
pg_start || tap_bail "cannot start PostgreSQL"
my_start || tap_bail "cannot start MariaDB"
my_sql -e "CREATE DATABASE qg; CREATE TABLE qg.users (name VARBINARY(64), secret VARCHAR(64));
           INSERT INTO qg.users VALUES ('alice', 'secret_alice')" || tap_bail "cannot create the table"
TAIL=27204f5220313d31202d2d20
TMP=$QG_PG_DIR

memcheck() { # NAME command…
    local name=$1
    shift
    with_shim enforce "$TMP/$name.qg.log" valgrind --tool=memcheck --leak-check=full \
        --errors-for-leak-kinds=definite,indirect,possible --show-leak-kinds=definite,indirect,possible \
        --error-exitcode=99 --log-file="$TMP/$name.vg" "$@" >"$TMP/$name.out" 2>&1
}

for api in exec send params prepare; do
    memcheck pg-$api "$QG_BUILD/clients/pg_legacy" --encoding SJIS --scs off --api $api \
        --after "SELECT 'alive'" --after "SELECT 'ソ表'" "SELECT '%s' AS v" "95$TAIL"
    status=$?
    summary=$(grep -E 'ERROR SUMMARY|definitely lost|indirectly lost|possibly lost' "$TMP/pg-$api.vg" | sed 's/^==[0-9]*== *//')
    tap_diag "pg_legacy --api $api: $(printf "%s" "$summary" | tr "\n" ";")"
    ok "memcheck pg_legacy --api $api (attack blocked, ordinary queries): no error, no leak" [ $status -eq 0 ] ||
        tap_diag "$(grep -A20 -E 'Invalid|uninitialised|lost in' "$TMP/pg-$api.vg" | head -n 40)"
    has "$(cat "$TMP/pg-$api.out")" "quoteguard: blocked" "pg_legacy --api $api under valgrind: the attack was blocked"
    has "$(cat "$TMP/pg-$api.out")" "ROW: alive" "pg_legacy --api $api under valgrind: ordinary queries answered"
done

for via in real query send; do
    memcheck my-$via "$QG_BUILD/clients/my_legacy" "$QG_MY_SOCKET" db=qg via=$via set-names=gbk \
        escape=bytewise input="bf$TAIL" sql="SELECT 'alive'" escape=real set-charset=gbk input="bf$TAIL"
    status=$?
    summary=$(grep -E 'ERROR SUMMARY|definitely lost|indirectly lost|possibly lost' "$TMP/my-$via.vg" | sed 's/^==[0-9]*== *//')
    tap_diag "my_legacy via=$via: $(printf "%s" "$summary" | tr "\n" ";")"
    ok "memcheck my_legacy via=$via (attack blocked, ordinary queries): no error, no leak" [ $status -eq 0 ] ||
        tap_diag "$(grep -A20 -E 'Invalid|uninitialised|lost in' "$TMP/my-$via.vg" | head -n 40)"
    has "$(cat "$TMP/my-$via.out")" "quoteguard: blocked" "my_legacy via=$via under valgrind: the attack was blocked"
    has "$(cat "$TMP/my-$via.out")" "ROW: alive" "my_legacy via=$via under valgrind: ordinary queries answered"
done
tap_done
