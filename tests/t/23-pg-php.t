#!/bin/bash
# PHP's pgsql extension under the shim.  PHP 8 loads extensions with
# dlopen(RTLD_DEEPBIND), which binds pgsql.so straight to libpq and would
# skip the preloaded shim; the dlopen front clears the flag for objects that
# need a client library.  addslashes() + pg_query() is the legacy pattern.
# servers: pg
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/pg.sh

qg_require_build
command -v php >/dev/null || tap_skip_all "no php"
php -r 'exit(function_exists("pg_connect") ? 0 : 1);' || tap_skip_all "php has no pgsql extension"
pg_available || tap_skip_all "no PostgreSQL server binaries (or not root)"
pg_start || tap_bail "cannot start PostgreSQL"
pg_psql -c "CREATE TABLE users(name text, secret text);
            INSERT INTO users VALUES ('alice', 'secret_alice'), ('bob', 'secret_bob')" \
    || tap_bail "cannot create the table"

# argv[1]: a marker for the statement.  Prints ROW:/ERROR: lines.
script=$QG_PG_DIR/legacy.php
cat >"$script" <<'PHP'
<?php
$db = pg_connect("");
foreach (["SET client_encoding TO SJIS", "SET standard_conforming_strings TO off",
          "SET backslash_quote TO on", "SET escape_string_warning TO off"] as $set)
    pg_query($db, $set);
$name = addslashes("\x95' OR 1=1 -- ");
$result = @pg_query($db, "SELECT /*{$argv[1]}*/ secret FROM users WHERE name = '$name'");
if ($result === false)
    echo "ERROR: ", trim(pg_last_error($db)), "\n";
else
    while ($row = pg_fetch_row($result))
        echo "ROW: ", $row[0], "\n";
$name = pg_escape_string($db, "\x95\x5c's \\ note");
$result = pg_query($db, "SELECT encode(convert_to('$name', 'SJIS'), 'hex')");
echo "ESCAPED: ", pg_fetch_row($result)[0], "\n";
PHP

out=$(php "$script" qgm_php_plain_$$ 2>&1)
has "$out" "ROW: secret_bob" "without the shim addslashes + pg_query injects"

log=$QG_PG_DIR/php.log
out=$(QUOTEGUARD_VERBOSE=2 with_shim enforce "$log" php "$script" qgm_php_shim_$$ 2>&1)
has "$out" "ERROR: ERROR:  quoteguard: blocked structure_mismatch" "with the shim pg_query fails; pg_last_error gives the quoteguard message as libpq words a server error"
lacks "$out" "ROW: secret_" "no secret leaks"
lacks "$(cat "$QG_PG_LOG")" "qgm_php_shim_$$" "the statement never reaches the server"
has "$out" "ESCAPED: 955c2773205c206e6f7465" "pg_escape_string text runs on the same connection and round-trips"
has "$(cat "$log")" '"action":"blocked","api":"PQexec","dialect":"postgres","encoding":"SJIS"' "the finding is logged"
matches "$(cat "$log")" '"event":"dlopen_deepbind_cleared","detail":"[^"]*/pgsql\.so"' \
    "PHP asked for RTLD_DEEPBIND on pgsql.so and the shim cleared it"
cleared=$(grep -a '"event":"dlopen_deepbind_cleared"' "$log")
lacks "$(printf '%s\n' "$cleared" | grep -av 'pgsql\.so"')" '"event"' \
    "extensions that need no client library keep RTLD_DEEPBIND"
ok "exactly one finding" [ "$(grep -ac '"action"' "$log")" -eq 1 ]

tap_done
