#!/bin/bash
# The server's reading, against a real PostgreSQL (UTF8 database):
#   - after its conversion to the server encoding: SHIFT_JIS_2004 81 5f
#     becomes an ASCII backslash, so text escaped by libpq's own
#     PQescapeStringConn / PQescapeLiteral injects with backslash_quote = on;
#   - a SQL_ASCII client's text, which the server checks as its own encoding,
#     and a SQL_ASCII server, which takes only ASCII from SJIS and the like;
#   - pipeline mode, where a SET queued before a statement changes how the
#     server reads it, and a blocked statement in a pipelined transaction
#     must abort it.
# Each attack injects without the shim (its marker in the server log, the
# secrets returned) and is blocked with it (no marker in the log); text of the
# same form that is legitimate passes and reaches the server as sent.
# servers: pg
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/pg.sh

qg_require_build clients/pg_legacy clients/pg_pipeline
pg_available || tap_skip_all "no PostgreSQL server binaries (or not root)"
pg_start || tap_bail "cannot start PostgreSQL"
LEGACY=$QG_BUILD/clients/pg_legacy
PIPELINE=$QG_BUILD/clients/pg_pipeline
pg_psql -c "CREATE TABLE users(name text, secret text);
            INSERT INTO users VALUES ('alice', 'secret_alice'), ('bob', 'secret_bob');
            CREATE TABLE ledger(v text)" || tap_bail "cannot create the tables"
server_log() { cat "$QG_PG_LOG"; }
server_errors() { grep -ac ' ERROR: ' "$QG_PG_LOG"; }
OR_TRUE=27204f5220313d31202d2d20 # ' OR 1=1 --

# Runs "$@" without the shim and with it (enforce); checks the attack injects
# without it and is blocked before the server with it.  $1 names the case,
# $2 the marker its statements carry.
attack_blocked() {
    local name=$1 marker=$2 out log=$QG_PG_DIR/enforce.log
    shift 2
    out=$("${@//MARK/${marker}_off}")
    has "$out" "ROW: secret_bob" "$name: without the shim the attack injects"
    has "$(server_log)" "${marker}_off" "$name: without the shim it reaches the server"
    out=$(with_shim enforce "$log" "${@//MARK/${marker}_on}")
    matches "$out" "^ERROR: ([0-9A-Z]{5}|-) (ERROR:  )?quoteguard: blocked[ :]" "$name: enforce blocks it"
    lacks "$out" "ROW: secret_" "$name: enforce: no secret leaks"
    lacks "$(server_log)" "${marker}_on" "$name: enforce: the statement is not in the server log"
}

# Runs "$@" with the shim; the statement passes and reaches the server as sent.
legit_passes() {
    local name=$1 marker=$2 expect=$3 out log=$QG_PG_DIR/legit.log
    shift 3
    : >"$log"
    out=$(with_shim enforce "$log" "${@//MARK/$marker}")
    lacks "$out" "quoteguard" "$name: passes the shim"
    has "$out" "$expect" "$name: the server runs it"
    has "$(server_log)" "$marker" "$name: it reaches the server"
    lacks "$(cat "$log")" '"action"' "$name: no finding"
}

# --- 1. SHIFT_JIS_2004 81 5f converts to a backslash (server UTF8) ---------
attack_blocked "SHIFT_JIS_2004 81 5f, PQescapeStringConn, scs off" qgm_conv_escape \
    "$LEGACY" --encoding SHIFT_JIS_2004 --scs off --escape conn \
    "SELECT /*MARK*/ secret FROM users WHERE name = '%s'" "815f$OR_TRUE"
attack_blocked "SHIFT_JIS_2004 81 5f, PQescapeLiteral, scs off" qgm_conv_literal \
    "$LEGACY" --encoding SHIFT_JIS_2004 --scs off --escape literal \
    "SELECT /*MARK*/ secret FROM users WHERE name = %s" "815f$OR_TRUE"
attack_blocked "SHIFT_JIS_2004 81 5f swallows the quote between two literals, PQsendQuery" \
    qgm_conv_swallow "$LEGACY" --encoding SHIFT_JIS_2004 --scs off --escape conn --api send \
    "SELECT /*MARK*/ secret FROM users WHERE name = '%s' AND secret = ' OR 1=1 --'" 815f
legit_passes "SHIFT_JIS_2004 81 5f in a literal, scs on: a backslash that escapes nothing" \
    qgm_conv_legit_on "ROW: 5c616263" "$LEGACY" --encoding SHIFT_JIS_2004 --scs on --escape conn \
    "SELECT /*MARK*/ encode(convert_to('%s', 'UTF8'), 'hex')" 815f616263
legit_passes "SHIFT_JIS_2004 81 5f before a letter, scs off: an escaped letter" \
    qgm_conv_legit_off "ROW: 616263" "$LEGACY" --encoding SHIFT_JIS_2004 --scs off --escape conn \
    "SELECT /*MARK*/ encode(convert_to('%s', 'UTF8'), 'hex')" 815f616263
legit_passes "SHIFT_JIS_2004 81 5f swallow form with an ordinary character" qgm_conv_legit_two \
    "STATUS: PGRES_TUPLES_OK" "$LEGACY" --encoding SHIFT_JIS_2004 --scs off --escape conn --api send \
    "SELECT /*MARK*/ secret FROM users WHERE name = '%s' AND secret = ' OR 1=1 --'" 8140

# --- 6. a SQL_ASCII client: the server checks the text as UTF8 -------------
errors=$(server_errors)
out=$("$LEGACY" --encoding SQL_ASCII --scs on --escape none "SELECT /*qgm_ascii_off*/ '%s'" c827)
has "$out" "ERROR: 22021 invalid byte sequence for encoding \"UTF8\"" \
    "SQL_ASCII client, c8 27: without the shim the server checks it against UTF8 and refuses it"
errors=$(server_errors)
out=$(with_shim enforce /dev/null "$LEGACY" --encoding SQL_ASCII --scs on --escape none \
    "SELECT /*qgm_ascii_on*/ '%s'" c827)
has "$out" "ERROR: 22021 quoteguard: blocked invalid_sequence" \
    "SQL_ASCII client, c8 27: enforce checks it against UTF8 and blocks it"
ok "SQL_ASCII client: nothing reached the server to refuse" [ "$(server_errors)" -eq "$errors" ]
legit_passes "SQL_ASCII client, UTF-8 text" qgm_ascii_legit "ROW: c3a9" \
    "$LEGACY" --encoding SQL_ASCII --scs on --escape none \
    "SELECT /*MARK*/ encode(convert_to('%s', 'UTF8'), 'hex')" c3a9

# A SQL_ASCII server refuses every byte of 0x80 or more from an encoding it
# cannot convert from (SJIS …): so does the shim, before it leaves.
pg_psql -q -c "CREATE DATABASE qgascii ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0" ||
    tap_bail "cannot create the SQL_ASCII database"
out=$(PGDATABASE=qgascii "$LEGACY" --encoding SJIS --scs on --escape conn "SELECT '%s'" 955c41)
has "$out" "ERROR: 22021 invalid byte value for encoding \"SQL_ASCII\"" \
    "SQL_ASCII server, SJIS client: without the shim the server refuses a high byte"
errors=$(server_errors)
out=$(PGDATABASE=qgascii with_shim enforce /dev/null "$LEGACY" --encoding SJIS --scs on --escape conn \
    "SELECT /*qgm_ascii_server*/ '%s'" 955c41)
has "$out" "ERROR: 22021 quoteguard: blocked invalid_sequence" \
    "SQL_ASCII server, SJIS client: enforce blocks it"
ok "SQL_ASCII server: nothing reached the server to refuse" [ "$(server_errors)" -eq "$errors" ]
legit_passes "SQL_ASCII server, SJIS client, ASCII text" qgm_ascii_server_legit "ROW: abc" \
    env PGDATABASE=qgascii "$LEGACY" --encoding SJIS --scs on --escape conn "SELECT /*MARK*/ '%s'" 616263
legit_passes "SQL_ASCII server, EUC_JP client (verified as EUC_JP)" qgm_ascii_server_eucjp \
    "STATUS: PGRES_TUPLES_OK" env PGDATABASE=qgascii "$LEGACY" --encoding EUC_JP --scs on \
    --escape conn "SELECT /*MARK*/ '%s'" a4a2

# --- 4. pipeline: a SET queued before the statement --------------------------
attack_blocked "pipeline: SET client_encoding SJIS queued before an addslashes literal" qgm_pipe_enc \
    "$PIPELINE" --encoding LATIN1 --scs off --input "95$OR_TRUE" "SET client_encoding TO 'SJIS'" \
    "SELECT /*MARK*/ secret FROM users WHERE name = '%s'"
attack_blocked "pipeline: SET client_encoding SJIS, its name in Unicode escapes, queued before it" \
    qgm_pipe_uescape "$PIPELINE" --encoding LATIN1 --scs off --input "95$OR_TRUE" \
    "SET U&\"\\0063lient_encoding\" TO 'SJIS'" "SELECT /*MARK*/ secret FROM users WHERE name = '%s'"
attack_blocked "pipeline: SET standard_conforming_strings on queued before it" qgm_pipe_scs \
    "$PIPELINE" --scs off --input "$OR_TRUE" "SET standard_conforming_strings = on" \
    "SELECT /*MARK*/ secret FROM users WHERE name = '%s'"
attack_blocked "pipeline: set_config('standard_conforming_strings', 'on') queued before it" \
    qgm_pipe_config "$PIPELINE" --scs off --input "$OR_TRUE" \
    "SELECT set_config('standard_conforming_strings', 'on', false)" \
    "SELECT /*MARK*/ secret FROM users WHERE name = '%s'"
attack_blocked "pipeline: a prepared SET standard_conforming_strings on executed before it" \
    qgm_pipe_prepared "$PIPELINE" --scs off --input "$OR_TRUE" \
    --prepare "SET standard_conforming_strings = on" "@prepared" \
    "SELECT /*MARK*/ secret FROM users WHERE name = '%s'"
legit_passes "pipeline: after SET client_encoding SJIS, plain text" qgm_pipe_legit_enc "ROW: alice" \
    "$PIPELINE" --encoding LATIN1 --scs off --input 616c696365 "SET client_encoding TO 'SJIS'" \
    "SELECT /*MARK*/ name FROM users WHERE name = '%s'"
legit_passes "pipeline: after SET standard_conforming_strings on, plain text" qgm_pipe_legit_scs \
    "ROW: alice" "$PIPELINE" --scs off --input 616c696365 "SET standard_conforming_strings = on" \
    "SELECT /*MARK*/ name FROM users WHERE name = '%s'"
out=$(with_shim enforce /dev/null "$PIPELINE" --input 616c696365 \
    "SELECT set_config('client_encoding', (SELECT 'SJIS'), false)" \
    "SELECT /*qgm_pipe_unknown*/ name FROM users WHERE name = '%s'")
has "$out" "quoteguard: blocked: unknown client encoding \"not yet known: set in the pipeline or not reported yet\"" \
    "pipeline: after a statement that sets the encoding to a value not known in advance, blocked with that reason"
lacks "$(server_log)" qgm_pipe_unknown "pipeline: that statement is not in the server log"

# --- 5. a blocked statement aborts the pipeline's transaction ---------------
# (The encoding is SJIS from the start: libpq's own state blocks the attack.)
out=$(with_shim enforce /dev/null "$PIPELINE" --encoding SJIS --scs off --input "95$OR_TRUE" \
    --after "ROLLBACK" --after "SELECT /*qgm_txn_count*/ count(*) FROM ledger WHERE v = 'blocked_txn'" \
    "BEGIN" "INSERT INTO ledger VALUES ('blocked_txn')" \
    "SELECT /*qgm_txn_attack*/ secret FROM users WHERE name = '%s'" "COMMIT")
has "$out" "quoteguard: blocked structure_mismatch" "pipelined transaction: the attack gets a quoteguard error"
has "$out" "STATUS: PGRES_PIPELINE_ABORTED" "pipelined transaction: the COMMIT queued after it is not run"
has "$(sed -n '/qgm_txn_count/,$p' <<<"$out"; tail -n 2 <<<"$out")" "ROW: 0" \
    "pipelined transaction: the INSERT before the blocked statement is not committed"
lacks "$(server_log)" qgm_txn_attack "pipelined transaction: the attack is not in the server log"
out=$(with_shim enforce /dev/null "$PIPELINE" --after "SELECT count(*) FROM ledger WHERE v = 'clean_txn'" \
    "BEGIN" "INSERT INTO ledger VALUES ('clean_txn')" "SELECT /*qgm_txn_clean*/ 1" "COMMIT")
has "$(tail -n 2 <<<"$out")" "ROW: 1" "pipelined transaction without a blocked statement: committed"

tap_done
