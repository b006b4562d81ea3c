#!/bin/bash
# MySQL clients beside the PHP and Python drivers: Ruby's mysql2 gem, which
# goes through libmariadb asynchronously (mysql_send_query, then a wait for
# the socket, then mysql_read_query_result) and drops its connection when a
# send fails — a blocked query must reach it as a server error, and the next
# query on the same connection must work; and the `mariadb` command-line
# client, which carries its own copy of the client library (no libmariadb
# to interpose): its script's attack is blocked at the wire, the rest of the
# script runs, a legitimate script prints the same with and without the shim.
# servers: mariadb
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/mariadb.sh

qg_require_build
my_available || tap_skip_all "no MariaDB server binaries (or not root)"
ruby -e 'require "mysql2"' 2>/dev/null || tap_bail "ruby-mysql2 is not installed (scripts/install-deps installs it)"
my_start || tap_bail "cannot start MariaDB"
my_sql -e "CREATE DATABASE qg;
           CREATE TABLE qg.users (name VARBINARY(64), secret VARCHAR(64));
           INSERT INTO qg.users VALUES ('alice', 'secret_alice'), ('bob', 'secret_bob')" ||
    tap_bail "cannot create the tables"
ATTACK=bf27204f5220313d31202d2d20 # gbk lead byte, then ' OR 1=1 --
general_log() { cat "$QG_MY_LOG"; }
secrets() { printf '%s\n' "$1" | grep -ac '^ROW: secret_\|^secret_'; }

# ------------------------------------------------------------ Ruby mysql2
out=$(ruby tests/wire/mysql_ruby.rb "$QG_MY_SOCKET" gbk "$ATTACK" qgw_rb_plain_$$ 2>&1)
ok "mysql2: without the shim the attack injects" [ "$(secrets "$out")" -eq 2 ]
marker=qgw_rb_enforce_$$
log=$QG_MY_DIR/ruby.log
out=$(with_shim enforce "$log" ruby tests/wire/mysql_ruby.rb "$QG_MY_SOCKET" gbk "$ATTACK" "$marker" 2>&1)
matches "$out" '^ERROR: 1105 quoteguard: blocked structure_mismatch' "mysql2: enforce: an ordinary Mysql2::Error naming quoteguard"
lacks "$out" "ROW: secret_" "mysql2: enforce: no secret leaks"
has "$out" "ALIVE: alive" "mysql2: enforce: the block did not cost the connection"
lacks "$(general_log)" "$marker" "mysql2: enforce: the attack never reaches the server"
has "$(cat "$log")" '"action":"blocked","api":"mysql_send_query"' "mysql2: checked once, by the libmariadb front"
lacks "$(cat "$log")" '"api":"wire:' "mysql2: the wire front leaves libmariadb's connection to it"

# ------------------------------------------------------------ mariadb CLI
cli() { # RUNNER… -- SCRIPT
    local -a runner=()
    while [ "$1" != -- ]; do runner+=("$1"); shift; done
    "${runner[@]}" mariadb --no-defaults --socket="$QG_MY_SOCKET" -uroot --force qg <"$2" 2>&1
}
if ldd "$(command -v mariadb)" | grep -q 'libmariadb\|libmysqlclient'; then
    tap_diag "this mariadb links a client library: the library front guards it"
fi
marker=qgw_cli_$$
printf "SET NAMES gbk;\nSELECT /*%s*/ secret FROM users WHERE name = '\xbf\\\\' OR 1=1 -- ';\nSELECT 'alive';\n" \
    "$marker" >"$QG_MY_DIR/attack.sql"
out=$(cli env -- "$QG_MY_DIR/attack.sql")
ok "mariadb CLI: without the shim the script's attack injects" [ "$(secrets "$out")" -eq 2 ]
marker2=qgw_cli2_$$
sed "s/$marker/$marker2/" "$QG_MY_DIR/attack.sql" >"$QG_MY_DIR/attack2.sql"
log=$QG_MY_DIR/cli.log
out=$(cli with_shim enforce "$log" -- "$QG_MY_DIR/attack2.sql")
matches "$out" '^ERROR 1105 \(45000\) at line 2: quoteguard: blocked structure_mismatch' \
    "mariadb CLI: enforce: the statement fails with an error naming quoteguard"
lacks "$out" "secret_" "mariadb CLI: enforce: no secret leaks"
has "$out" "alive" "mariadb CLI: enforce: the rest of the script runs"
lacks "$(general_log)" "$marker2" "mariadb CLI: enforce: the attack never reaches the server"
has "$(cat "$log")" '"action":"blocked","api":"wire:COM_QUERY"' "mariadb CLI: blocked at the wire"

printf "SET NAMES sjis;\nSELECT HEX('\x95\x5c'), 'a''b', 'c\\\\\\\\d';\nSELECT name FROM users ORDER BY name;\n" >"$QG_MY_DIR/legit.sql"
plain=$(cli env -- "$QG_MY_DIR/legit.sql")
shimmed=$(cli with_shim enforce "$QG_MY_DIR/legit.log" -- "$QG_MY_DIR/legit.sql")
has "$plain" "955C" "mariadb CLI legit: the sjis text reaches the server whole"
ok "mariadb CLI legit: the same output with the shim" [ "$plain" = "$shimmed" ]

tap_done
