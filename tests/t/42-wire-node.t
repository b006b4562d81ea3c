#!/bin/bash
# node's own drivers, installed from npm into a temp dir
# (tests/wire/node/package.json): node-postgres with
# standard_conforming_strings off and an escaper that only doubles quotes,
# and mysql2 after a `SET sql_mode = 'NO_BACKSLASH_ESCAPES'` query, with
# the program's own addslashes.  (mysql2's escape() follows the server's
# flags and `SET NAMES` itself, through session tracking: it cannot be made
# to send an attack.)  Both attacks inject without the shim; with it the
# wire front blocks them (an ordinary driver error naming quoteguard, the
# attack absent from the server's log, the connection still usable), and the
# legitimate pages (parameters, escapeLiteral, prepared statements) print the
# same with and without the shim.  Needs the npm registry (npm install).
# servers: pg mariadb
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/pg.sh
. tests/lib/mariadb.sh

qg_require_build
command -v node >/dev/null && command -v npm >/dev/null || tap_bail "node and npm are needed (scripts/install-deps)"
pg_available || tap_skip_all "no PostgreSQL server binaries (or not root)"
my_available || tap_skip_all "no MariaDB server binaries (or not root)"
modules=$(mktemp -d "${TMPDIR:-/tmp}/qg-npm.XXXXXX") || tap_bail "no temp dir"
qg_at_exit "rm -rf '$modules'"
cp tests/wire/node/package.json "$modules/"
(cd "$modules" && npm install --no-audit --no-fund --loglevel=error >npm.log 2>&1) ||
    tap_bail "npm install of pg and mysql2 failed (the npm registry is needed): $(tail -n 3 "$modules/npm.log")"
export NODE_PATH=$modules/node_modules

pg_start || tap_bail "cannot start PostgreSQL"
pg_psql -c "CREATE TABLE users(name text, secret text);
            INSERT INTO users VALUES ('alice', 'secret_alice'), ('bob', 'secret_bob')" ||
    tap_bail "cannot create the PG table"
my_start || tap_bail "cannot start MariaDB"
my_sql -e "CREATE DATABASE qg; CREATE TABLE qg.users (name VARBINARY(64), secret VARCHAR(64));
           INSERT INTO qg.users VALUES ('alice', 'secret_alice'), ('bob', 'secret_bob')" ||
    tap_bail "cannot create the MariaDB table"
secrets() { printf '%s\n' "$1" | grep -ac '^ROW: secret_'; }
W=tests/wire/node

# ------------------------------------------------------------ node-postgres
attack="\\' OR 1=1 -- "
out=$(node $W/node_pg.js "$attack" qgw_node_pg_plain_$$ 2>&1)
ok "pg: without the shim the attack injects (scs off, quotes doubled)" [ "$(secrets "$out")" -eq 2 ]
marker=qgw_node_pg_$$
log=$QG_PG_DIR/node-pg.log
out=$(with_shim enforce "$log" node $W/node_pg.js "$attack" "$marker" 2>&1)
matches "$out" '^ERROR: [0-9A-Z]{5} quoteguard: blocked structure_mismatch' "pg: enforce: a driver error naming quoteguard"
lacks "$out" "ROW: secret_" "pg: enforce: no secret leaks"
has "$out" "ALIVE: alive" "pg: enforce: the connection stays usable"
lacks "$(cat "$QG_PG_LOG")" "$marker" "pg: enforce: the attack never reaches the server"
has "$(cat "$log")" '"action":"blocked","api":"wire:Query"' "pg: blocked at the wire"
plain=$(node $W/node_pg.js - - 2>&1)
shimmed=$(with_shim enforce "$QG_PG_DIR/node-pg-legit.log" node $W/node_pg.js - - 2>&1)
has "$plain" "ROW: true true" "pg legit: a parameter and escapeLiteral round-trip"
ok "pg legit: the same output with the shim" [ "$plain" = "$shimmed" ]

# 8 MiB queries on node's non-blocking socket: short writes and EAGAIN
big_md5=$(head -c $((8 << 20)) /dev/zero | tr '\0' x | md5sum | cut -d' ' -f1)
plain=$(node $W/node_pg_big.js 2>&1)
has "$plain" "BIG: 8388608 $big_md5" "pg big: without the shim the 8 MiB query arrives whole"
out=$(with_shim enforce "$QG_PG_DIR/node-pg-big.log" node $W/node_pg_big.js 2>&1)
has "$out" "BIG: 8388608 $big_md5" "pg big: with the shim the 8 MiB query arrives whole, byte for byte"
has "$out" "ATTACK: quoteguard: blocked structure_mismatch" "pg big: the 8 MiB attack is replaced"
has "$out" "ALIVE: alive" "pg big: the connection stays in step"

# ------------------------------------------------------------ mysql2
attack="' OR 1=1 -- "
out=$(node $W/node_mysql2.js "$QG_MY_SOCKET" "$attack" qgw_node_my_plain_$$ 2>&1)
ok "mysql2: without the shim the attack injects (NO_BACKSLASH_ESCAPES, addslashes)" [ "$(secrets "$out")" -eq 2 ]
marker=qgw_node_my_$$
log=$QG_MY_DIR/node-mysql2.log
out=$(with_shim enforce "$log" node $W/node_mysql2.js "$QG_MY_SOCKET" "$attack" "$marker" 2>&1)
matches "$out" '^ERROR: 1105 45000 quoteguard: blocked structure_mismatch' "mysql2: enforce: a driver error 1105 naming quoteguard"
lacks "$out" "ROW: secret_" "mysql2: enforce: no secret leaks"
has "$out" "ALIVE: alive" "mysql2: enforce: the connection stays usable"
lacks "$(cat "$QG_MY_LOG")" "$marker" "mysql2: enforce: the attack never reaches the server"
has "$(cat "$log")" '"action":"blocked","api":"wire:COM_QUERY","dialect":"mysql"' "mysql2: blocked at the wire"
plain=$(node $W/node_mysql2.js "$QG_MY_SOCKET" - - 2>&1)
shimmed=$(with_shim enforce "$QG_MY_DIR/node-my-legit.log" node $W/node_mysql2.js "$QG_MY_SOCKET" - - 2>&1)
has "$plain" "PREPARED: a'b\\c" "mysql2 legit: escape(), a parameter and a prepared statement work"
ok "mysql2 legit: the same output with the shim" [ "$plain" = "$shimmed" ]

tap_done
