#!/bin/bash
# Every libmariadb function that carries SQL text reaches the shim's check.
# The wire front lets go of a socket the MySQL front checks, so a function
# that sends SQL text the front does not see would pass it unchecked:
#  - src/front/libmariadb_exports.txt names every function the installed
#    libmariadb exports and what the front does with it; a function missing
#    there fails this test;
#  - a function marked checked or follows is defined by the shim; one marked
#    "via ENTRY" reaches ENTRY through the library's PLT (a JUMP_SLOT
#    relocation), where the shim's ENTRY is the one called;
#  - against MariaDB: mariadb_stmt_execute_direct (COM_STMT_PREPARE and
#    COM_STMT_EXECUTE written together), the non-blocking
#    mysql_real_query_start and an init command (MYSQL_INIT_COMMAND, run
#    inside mysql_real_connect) inject without the shim and are blocked with
#    it, correctly escaped text is unchanged, and the connection stays usable;
#  - so does a query on a connection whose non-blocking call ended while a
#    later one on another connection still waited (my_async_order).
# servers: mariadb
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/mariadb.sh

qg_require_build clients/my_legacy clients/my_async_order
LIB=$(ldd "$QG_BUILD/clients/my_legacy" | sed -n 's/.*libmariadb\.so\.3 => \([^ ]*\).*/\1/p')
[ -n "$LIB" ] || tap_skip_all "my_legacy is not linked to libmariadb.so.3"
LIST=src/front/libmariadb_exports.txt

# ------------------------------------------------------------ the list
exported=$(nm -D --defined-only "$LIB" | awk '$2 ~ /^[TWi]$/ {sub(/@.*/, "", $3); print $3}' | sort -u)
listed=$(sed 's/#.*//' "$LIST" | awk 'NF {print $1}' | sort -u)
missing=$(comm -23 <(printf '%s\n' "$exported") <(printf '%s\n' "$listed"))
ok "every function $LIB exports is in $LIST" [ -z "$missing" ] ||
    tap_diag "not in the list (say what the front does with each):" $missing
ok "the installed library exports functions at all (the comparison saw $(printf '%s\n' "$exported" | grep -c .))" \
    [ "$(printf '%s\n' "$exported" | grep -c .)" -gt 100 ]

shim_defines=$(nm -D --defined-only "$QG_SHIM" | awk '{print $3}' | sort -u)
kind_of() { sed 's/#.*//' "$LIST" | awk -v n="$1" '$1 == n {print $2}'; }
undefined=""
for name in $(sed 's/#.*//' "$LIST" | awk '$2 == "checked" || $2 == "follows" {print $1}'); do
    grep -qx "$name" <<<"$shim_defines" || undefined+=" $name"
done
ok "every function marked checked or follows is defined by the shim" [ -z "$undefined" ] ||
    tap_diag "not defined by $QG_SHIM:$undefined"
plt=$(objdump -R "$LIB" | awk '$2 == "R_X86_64_JUMP_SLOT" {sub(/@.*/, "", $3); print $3}' | sort -u)
bad_via=""
while read -r name via entry; do
    kind=$(kind_of "$entry")
    if [ "$kind" != checked ] && [ "$kind" != follows ]; then
        bad_via+=" $name($entry is $kind)"
    elif ! grep -qx "$entry" <<<"$plt"; then
        bad_via+=" $name($entry is not called through the PLT)"
    fi
done < <(sed 's/#.*//' "$LIST" | awk '$2 == "via" {print $1, $2, $3}')
ok "every function marked via ENTRY reaches an interposed ENTRY through the PLT" [ -z "$bad_via" ] ||
    tap_diag "$bad_via"
for name in mysql_query mysql_real_query mysql_send_query mysql_stmt_prepare mariadb_stmt_execute_direct; do
    ok "$name is marked checked" [ "$(kind_of "$name")" = checked ]
done

# --------------------------------------------------- against the server
my_available || { tap_diag "no MariaDB server binaries (or not root): server part skipped"; tap_done; }
my_start || tap_bail "cannot start MariaDB"
LEGACY=$QG_BUILD/clients/my_legacy
my_sql -e "CREATE DATABASE qg;
           CREATE TABLE qg.users (name VARBINARY(64), secret VARCHAR(64));
           INSERT INTO qg.users VALUES ('alice', 'secret_alice'), ('bob', 'secret_bob')" ||
    tap_bail "cannot create the table"
GBK_ATTACK=bf27204f5220313d31202d2d20 # bf ' OR 1=1 --, escaped byte-wise: bf 5c 27 …

# mariadb_stmt_execute_direct after SET NAMES gbk.
direct() { # MARK RUNNER…
    local mark=$1
    shift
    "$@" "$LEGACY" "$QG_MY_SOCKET" db=qg set-names=gbk via=direct \
        "template=SELECT /*$mark*/ secret FROM users WHERE name = '%s'" input=$GBK_ATTACK \
        "sql=SELECT 'alive'"
}
out=$(direct "qgm_direct_plain_$$")
has "$out" "ROW: secret_bob" "mariadb_stmt_execute_direct: without the shim the attack injects"
log=$QG_MY_DIR/direct.log
out=$(direct "qgm_direct_shim_$$" with_shim enforce "$log")
matches "$out" '^ERROR: 1105 [0-9A-Z]{5} quoteguard: blocked structure_mismatch' \
    "mariadb_stmt_execute_direct: blocked with the shim, the statement's error names quoteguard"
lacks "$out" "secret_" "mariadb_stmt_execute_direct: nothing leaks"
has "$out" "ROW: alive" "mariadb_stmt_execute_direct: the connection stays usable"
lacks "$(cat "$QG_MY_LOG")" "qgm_direct_shim_$$" "mariadb_stmt_execute_direct: the attack never reaches the server"
has "$(cat "$log")" '"action":"blocked","api":"mariadb_stmt_execute_direct"' \
    "mariadb_stmt_execute_direct: the finding is logged under its name"
legit=(db=qg set-names=gbk via=direct escape=real "template=SELECT HEX('%s')" input=955c4127)
plain=$("$LEGACY" "$QG_MY_SOCKET" "${legit[@]}")
shimmed=$(with_shim enforce "$QG_MY_DIR/direct-ok.log" "$LEGACY" "$QG_MY_SOCKET" "${legit[@]}")
has "$plain" "ROW: 955C4127" "mariadb_stmt_execute_direct: escaped gbk text round-trips"
ok "mariadb_stmt_execute_direct: correctly escaped text gives identical results with and without the shim" \
    [ "$plain" = "$shimmed" ]

# The non-blocking API: mysql_real_query_start reaches mysql_real_query
# through the PLT, inside the library's coroutine.
async() { # MARK RUNNER…
    local mark=$1
    shift
    "$@" "$LEGACY" "$QG_MY_SOCKET" db=qg via=async set-names=gbk \
        "template=SELECT /*$mark*/ secret FROM users WHERE name = '%s'" input=$GBK_ATTACK \
        "sql=SELECT 'alive'"
}
out=$(async "qgm_async_plain_$$")
has "$out" "ROW: secret_bob" "mysql_real_query_start: without the shim the attack injects"
out=$(async "qgm_async_shim_$$" with_shim enforce "$QG_MY_DIR/async.log")
matches "$out" '^ERROR: 1105 [0-9A-Z]{5} quoteguard: blocked structure_mismatch' \
    "mysql_real_query_start: blocked with the shim, the error names quoteguard"
has "$out" "ROW: alive" "mysql_real_query_start: the connection stays usable"
lacks "$(cat "$QG_MY_LOG")" "qgm_async_shim_$$" "mysql_real_query_start: the attack never reaches the server"
legit=(db=qg via=async set-names=gbk escape=real "template=SELECT HEX('%s')" input=955c4127)
plain=$("$LEGACY" "$QG_MY_SOCKET" "${legit[@]}")
shimmed=$(with_shim enforce "$QG_MY_DIR/async-ok.log" "$LEGACY" "$QG_MY_SOCKET" "${legit[@]}")
has "$plain" "ROW: 955C4127" "mysql_real_query_start: escaped gbk text round-trips"
ok "mysql_real_query_start: identical results with and without the shim" [ "$plain" = "$shimmed" ]

# Non-blocking calls that end out of order: mysql_read_query_result_start on
# connection A and mysql_real_query_start on B both wait; A's ends first,
# then a query runs on A while B's call is still in flight.
order_attack() { # MARK
    printf "SELECT /*%s*/ secret FROM users WHERE name = '\xbf\x5c\x27 OR 1=1 -- '" "$1"
}
out=$("$QG_BUILD/clients/my_async_order" "$QG_MY_SOCKET" "$(order_attack "qgm_order_plain_$$")")
has "$out" "ROW: secret_bob" "non-blocking calls ending out of order: without the shim the attack injects"
out=$(with_shim enforce "$QG_MY_DIR/order.log" "$QG_BUILD/clients/my_async_order" "$QG_MY_SOCKET" \
    "$(order_attack "qgm_order_shim_$$")")
matches "$out" '^ERROR: 1105 [0-9A-Z]{5} quoteguard: blocked structure_mismatch' \
    "non-blocking calls ending out of order: the query on A is checked, blocked naming quoteguard"
lacks "$(cat "$QG_MY_LOG")" "qgm_order_shim_$$" "non-blocking calls ending out of order: the attack never reaches the server"
has "$out" "B: done" "non-blocking calls ending out of order: B's call ends"
has "$out" "ROW: alive" "non-blocking calls ending out of order: A stays usable"
plain=$("$QG_BUILD/clients/my_async_order" "$QG_MY_SOCKET" "SELECT HEX(_gbk 0x955c4127)")
shimmed=$(with_shim enforce "$QG_MY_DIR/order-ok.log" "$QG_BUILD/clients/my_async_order" "$QG_MY_SOCKET" \
    "SELECT HEX(_gbk 0x955c4127)")
has "$plain" "ROW: 955C4127" "non-blocking calls ending out of order: a legitimate query on A answers"
ok "non-blocking calls ending out of order: identical results with and without the shim" [ "$plain" = "$shimmed" ]

# An init command, run inside mysql_real_connect on a gbk connection.
init_attack() { # MARK
    printf "SET @leak = (SELECT /*%s*/ secret FROM users WHERE name = '\xbf\x5c' OR 1=1 ORDER BY name DESC LIMIT 1) -- '" "$1"
}
out=$("$LEGACY" "$QG_MY_SOCKET" db=qg charset=gbk "init=$(init_attack "qgm_init_plain_$$")" "sql=SELECT @leak")
has "$out" "ROW: secret_bob" "init command: without the shim the attack injects"
log=$QG_MY_DIR/init.log
out=$(with_shim enforce "$log" "$LEGACY" "$QG_MY_SOCKET" db=qg charset=gbk \
    "init=$(init_attack "qgm_init_shim_$$")" "sql=SELECT @leak")
matches "$out" '^CONNERR: 1105 quoteguard: blocked structure_mismatch' \
    "init command: blocked with the shim, the connect fails with an error naming quoteguard"
lacks "$out" "secret_" "init command: nothing leaks"
lacks "$(cat "$QG_MY_LOG")" "qgm_init_shim_$$" "init command: the attack never reaches the server"
legit=(db=qg charset=gbk "init=SET @v = '"$'\x95\x5c'"A'" "sql=SELECT HEX(@v)")
plain=$("$LEGACY" "$QG_MY_SOCKET" "${legit[@]}")
shimmed=$(with_shim enforce "$QG_MY_DIR/init-ok.log" "$LEGACY" "$QG_MY_SOCKET" "${legit[@]}")
has "$plain" "ROW: 955C41" "init command: gbk text in an init command round-trips"
ok "init command: correct text gives identical results with and without the shim" [ "$plain" = "$shimmed" ]

tap_done
