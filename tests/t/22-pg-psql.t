#!/bin/bash
# psql (an unmodified libpq program) under the shim: a script switches to
# client_encoding SJIS with standard_conforming_strings off and runs a
# statement whose bytes are a byte-wise escaped attack.  The shim blocks that
# statement, honours the SET client_encoding that came before it, and runs
# every ordinary statement unchanged.
# servers: pg
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/pg.sh

qg_require_build
pg_available || tap_skip_all "no PostgreSQL server binaries (or not root)"
pg_start || tap_bail "cannot start PostgreSQL"
pg_psql -c "CREATE TABLE users(name text, secret text);
            INSERT INTO users VALUES ('alice', 'secret_alice'), ('bob', 'secret_bob')" \
    || tap_bail "cannot create the table"

# The script, with RUN standing for a marker unique to each run.  The same
# bytes 0x95 0x5c 0x27 are a correctly escaped literal in LATIN1 (0x95, \')
# and an injection in SJIS (the character 0x95 0x5c, then a closing quote).
# The ';' after each is on its own line: in SJIS the '--' comment runs on.
write_script() { # FILE RUN
    {
        printf "SET standard_conforming_strings = off;\n"
        printf "SET backslash_quote = on;\n"
        printf "SET escape_string_warning = off;\n"
        printf "SET client_encoding = 'LATIN1';\n"
        printf "SELECT /*qgm_latin1_%s*/ 'latin1:\x95\x5c' OR 1=1 --' AS v\n;\n" "$2"
        printf "SET client_encoding = 'SJIS';\n"
        printf "SELECT /*qgm_sjis_%s*/ secret FROM users WHERE name = '\x95\x5c' OR 1=1 --'\n;\n" "$2"
        printf "SELECT 'still_' || 'alive' AS v;\n"
    } >"$1"
}

script=$QG_PG_DIR/plain.sql
write_script "$script" plain_$$
plain=$("$QG_PG_BIN/psql" -X -At -f "$script" 2>&1)
has "$plain" "secret_bob" "without the shim psql sends the SJIS statement and it injects"
has "$(cat "$QG_PG_LOG")" "qgm_sjis_plain_$$" "without the shim the SJIS statement reaches the server"

script=$QG_PG_DIR/shim.sql
log=$QG_PG_DIR/psql.log
write_script "$script" shim_$$
shimmed=$(with_shim enforce "$log" "$QG_PG_BIN/psql" -X -At -f "$script" 2>&1)
matches "$shimmed" "^psql:$script:9: ERROR:  quoteguard: blocked " "psql reports the block as an error of the SJIS statement, worded as a server error"
lacks "$shimmed" "secret_" "no secret leaks"
lacks "$(cat "$QG_PG_LOG")" "qgm_sjis_shim_$$" "the SJIS statement never reaches the server"
has "$(cat "$QG_PG_LOG")" "qgm_latin1_shim_$$" "the LATIN1 statement (same bytes, other encoding) reaches the server"
has "$shimmed" $'latin1:\x95\' OR 1=1 --' "the LATIN1 statement returns what it returns without the shim"
has "$plain" $'latin1:\x95\' OR 1=1 --' "(and without the shim)"
has "$shimmed" "still_alive" "psql goes on with the next statement on the same connection"
ok "the ordinary statements print the same as without the shim" \
    [ "$(printf '%s\n' "$plain" | grep -av secret_)" = "$(printf '%s\n' "$shimmed" | grep -av quoteguard)" ]
has "$(cat "$log")" '"program":"psql","mode":"enforce","action":"blocked","api":"PQsendQuery","dialect":"postgres","encoding":"SJIS"' \
    "the finding is logged with the program, the API psql used and the encoding"
ok "exactly one finding" [ "$(grep -ac '"action"' "$log")" -eq 1 ]

tap_done
