#!/bin/bash
# The libpq front entry by entry: every query API is checked and blocked,
# the synthetic error reads like a server error through every reader, the
# connection stays usable, the state (client_encoding,
# standard_conforming_strings) is read live at each call, nested libpq calls
# are checked once, NULL arguments behave as without the shim, and the modes.
# servers: pg
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/pg.sh

qg_require_build clients/pg_session
pg_available || tap_skip_all "no PostgreSQL server binaries (or not root)"
pg_start || tap_bail "cannot start PostgreSQL"
SESSION=$QG_BUILD/clients/pg_session
pg_psql -c "CREATE TABLE users(name text, secret text);
            INSERT INTO users VALUES ('alice', 'secret_alice'), ('bob', 'secret_bob')" \
    || tap_bail "cannot create the table"

MARK=qgm_api_$$
# Bytes of a byte-wise escaped attack: the SJIS character 0x95 0x5c swallows
# the escaper's backslash, so the quote ends the literal.
ATTACK=$'SELECT /*'$MARK$'*/ secret FROM users WHERE name = \'\x95\x5c\' OR 1=1 --\''
SJIS_OLD_STYLE=("exec:SET client_encoding TO 'SJIS'" "exec:SET standard_conforming_strings TO off"
                "exec:SET backslash_quote TO on" "exec:SET escape_string_warning TO off")
BLOCKED='quoteguard: blocked structure_mismatch'

# The output of step N of a pg_session run.
step() { printf '%s\n' "$out" | awk -v n="$1" '/^STEP: /{on = ($2 == n)} on'; }

# ------------------------------------------------ every API, one connection
log=$QG_PG_DIR/apis.log
out=$(with_shim enforce "$log" "$SESSION" "${SJIS_OLD_STYLE[@]}" \
    "exec:$ATTACK" connerr "exec:SELECT 'after_exec'" connerr \
    "send:$ATTACK" connerr "send:SELECT 'after_send'" \
    "params:$ATTACK" "sendparams:$ATTACK" "prepare:p1:$ATTACK" "sendprepare:p2:$ATTACK" \
    "execprepared:p1" connerr \
    "params1:"$'\x95\x5c'"' OR 1=1 --:SELECT encode(convert_to(\$1::text, 'SJIS'), 'hex')")

has "$(step 5)" "ERROR: 42601 $BLOCKED" "PQexec: blocked; SQLSTATE and primary message from PQresultErrorField"
has "$(step 5)" "STATUS: PGRES_FATAL_ERROR" "PQexec: the result's status is PGRES_FATAL_ERROR"
has "$(step 5)" "SEVERITY: ERROR ERROR" "PQexec: severity fields S and V are ERROR"
has "$(step 5)" "ERRMSG: ERROR:  $BLOCKED" "PQexec: PQresultErrorMessage gives the message"
has "$(step 5)" "VERBOSE: ERROR:  42601: $BLOCKED" "PQexec: PQresultVerboseErrorMessage gives the message"
has "$(step 6)" "CONNERR: ERROR:  $BLOCKED" "PQexec: PQerrorMessage(conn) gives the message"
has "$(step 7)" "ROW: after_exec" "PQexec: the connection stays usable"
ok "PQexec: the message ends with the next query on the connection" \
    [ "$(step 8 | tail -n 1)" = "CONNERR: " ]
has "$(step 9)" "ERROR: - ERROR:  $BLOCKED" "PQsendQuery: returns 0, message in PQerrorMessage"
has "$(step 10)" "CONNERR: ERROR:  $BLOCKED" "PQsendQuery: the message stays until the next query"
has "$(step 11)" "ROW: after_send" "PQsendQuery: the connection stays usable"
has "$(step 12)" "ERROR: 42601 $BLOCKED" "PQexecParams: the text is checked and blocked"
has "$(step 13)" "ERROR: - ERROR:  $BLOCKED" "PQsendQueryParams: the text is checked and blocked"
has "$(step 14)" "ERROR: 42601 $BLOCKED" "PQprepare: the text is checked and blocked"
has "$(step 15)" "ERROR: - ERROR:  $BLOCKED" "PQsendPrepare: the text is checked and blocked"
has "$(step 16)" "ERROR: 26000 " "PQprepare: the blocked statement was never prepared on the server"
has "$(step 17)" 'CONNERR: ERROR:  prepared statement "p1" does not exist' \
    "PQexecPrepared counts as the next query: PQerrorMessage is libpq's again"
has "$(step 18)" "ROW: 955c27204f5220313d31202d2d" "PQexecParams: parameter values are not checked"
lacks "$(cat "$QG_PG_LOG")" "$MARK" "no blocked statement reached the server"

findings=$(grep -a '"action"' "$log")
for api in PQexec PQsendQuery PQexecParams PQsendQueryParams PQprepare PQsendPrepare; do
    ok "$api: exactly one finding logged (a nested libpq call is not checked again)" \
        [ "$(printf '%s\n' "$findings" | grep -c "\"action\":\"blocked\",\"api\":\"$api\",")" -eq 1 ]
done
ok "six blocked calls, six findings" [ "$(printf '%s\n' "$findings" | grep -c .)" -eq 6 ]
matches "$(cat "$log")" '^\{.*"event":"attached".*"libraries":"libpq\.so\.5"' \
    "the start-up line names the loaded client library"

# --------------------------------------------- a pending message and PQfinish
out=$(with_shim enforce "$QG_PG_DIR/reconnect.log" "$SESSION" "${SJIS_OLD_STYLE[@]}" \
    "exec:$ATTACK" reconnect connerr)
has "$(step 5)" "ERROR: 42601 $BLOCKED" "reconnect: blocked first"
ok "reconnect: a new connection has no message left from the finished one" \
    [ "$(step 7 | tail -n 1)" = "CONNERR: " ]

# ---------------------- a reset or new connection may meet another database
# The server encoding is kept per connection and backend: after PQreset,
# PQresetStart or a new connection it is the new backend's.  The database is
# made again between the steps, SQL_ASCII or UTF8, and a SQL_ASCII server
# takes no SJIS character (the shim blocks one, as the server refuses it).
SJIS_SELECT=$'exec:SELECT \'\x95\x5cA\''
remake_db() {
    printf 'shell:env -u LD_PRELOAD %q -X -q -v ON_ERROR_STOP=1 -d postgres -c %q -c %q' \
        "$QG_PG_BIN/psql" "DROP DATABASE IF EXISTS qgreset WITH (FORCE)" \
        "CREATE DATABASE qgreset ENCODING '$1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0"
}
utf8_db() {
    pg_psql -d postgres -c "SET client_min_messages = warning" \
        -c "DROP DATABASE IF EXISTS qgreset WITH (FORCE)" \
        -c "CREATE DATABASE qgreset ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0" ||
        tap_bail "cannot create the database qgreset"
}
reset_steps=("$SJIS_SELECT" "$(remake_db SQL_ASCII)" reset "$SJIS_SELECT"
             "$(remake_db UTF8)" resetstart "$SJIS_SELECT"
             "$(remake_db SQL_ASCII)" reconnect "$SJIS_SELECT")
utf8_db
out=$(PGDATABASE=qgreset PGCLIENTENCODING=SJIS "$SESSION" "${reset_steps[@]}")
has "$(step 4)" 'ERROR: 22021 invalid byte value for encoding "SQL_ASCII"' \
    "PQreset onto a SQL_ASCII database: without the shim the server refuses the SJIS character"
utf8_db
out=$(PGDATABASE=qgreset PGCLIENTENCODING=SJIS with_shim enforce "$QG_PG_DIR/reset.log" "$SESSION" \
    "${reset_steps[@]}")
has "$(step 1)" "ROW: " "UTF8 database: the SJIS character passes"
has "$(step 3)" "RESET: ok" "PQreset reconnects"
has "$(step 4)" "ERROR: 22021 quoteguard: blocked invalid_sequence" \
    "after PQreset onto a SQL_ASCII database: checked against it, blocked before the server"
has "$(step 6)" "RESET: ok" "PQresetStart and PQresetPoll reconnect"
has "$(step 7)" "ROW: " "after PQresetStart onto a UTF8 database again: the SJIS character passes"
has "$(step 10)" "ERROR: 22021 quoteguard: blocked invalid_sequence" \
    "a new connection to a SQL_ASCII database: blocked"

# --------------------------- client_encoding and scs are read at every call
log=$QG_PG_DIR/live.log
out=$(with_shim enforce "$log" "$SESSION" "${SJIS_OLD_STYLE[@]}" \
    "setenc:LATIN1" "exec:$ATTACK" \
    "exec:SET client_encoding TO 'SJIS'" "exec:$ATTACK" \
    "exec:SET client_encoding TO 'LATIN1'" "exec:SET standard_conforming_strings TO on" "exec:$ATTACK" \
    "exec:SET standard_conforming_strings TO off" "exec:$ATTACK" \
    "exec:SET client_encoding TO 'SQL_ASCII'" "exec:$ATTACK" \
    "exec:SET client_encoding TO 'SJIS'" "exec:$ATTACK")
has "$(step 5)" "SETENC: 0" "PQsetClientEncoding (libpq's own SET through PQexec) works under the shim"
has "$(step 6)" "STATUS: PGRES_TUPLES_OK" "LATIN1: the same bytes are one correctly escaped literal and pass"
has "$(step 8)" "ERROR: 42601 $BLOCKED" "SET client_encoding SJIS mid-session: now blocked"
has "$(step 11)" "ERROR: 42601 $BLOCKED" "SET standard_conforming_strings on mid-session: the backslash no longer escapes, blocked"
has "$(step 13)" "STATUS: PGRES_TUPLES_OK" "SET standard_conforming_strings off again: passes again"
# libpq numbers SQL_ASCII 0, as it does a name it does not know: the shim
# reads this one's name as the server reported it.  The server checks a
# SQL_ASCII client's text against its own encoding (UTF8), and so does the
# shim: the bytes never leave.
has "$(step 15)" "ERROR: 22021 quoteguard: blocked invalid_sequence" "SQL_ASCII: checked against the server encoding, blocked before the server sees it"
has "$(step 17)" "ERROR: 42601 $BLOCKED" "from SQL_ASCII back to SJIS: blocked again"
has "$(grep -a '"action"' "$log")" '"encoding":"LATIN1"' "the scs=on finding names the live encoding"

# ------------------------------------------- results left unread before a query
# A query sent while the results of an earlier one are unread meets the
# state those results leave: PQexec, PQexecParams and PQprepare read them
# first (that is when libpq learns of a SET client_encoding), then send.
OLD_STYLE_UTF8=("exec:SET standard_conforming_strings TO off" "exec:SET backslash_quote TO on"
                "exec:SET escape_string_warning TO off" "params:SELECT 'params'")
SJIS_CHAR=$'SELECT encode(convert_to(\'\x95\x5c\', \'SJIS\'), \'hex\')'
# Clean UTF-8 (c3 95 is one character, then an escaped quote) that SJIS
# reads as c3, [95 5c] and a quote that ends the literal.
attack_utf8() { printf 'SELECT /*%s*/ secret FROM users WHERE name = '"'\xc3\x95\x5c' OR 1=1 --'" "$1"; }
unread_run() { # RUNNER… -- STEPS…
    local -a runner=()
    while [ "$1" != -- ]; do runner+=("$1"); shift; done
    shift
    "${runner[@]}" "$SESSION" "${OLD_STYLE_UTF8[@]}" "$@"
}
for way in "unread" "unreadparams"; do
    for api in exec params; do
        tag="$way then $api"
        steps=("$way:SET client_encoding TO 'SJIS'" "$api:$(attack_utf8 "${MARK}_plain")"
               "exec:SELECT 'after_unread'")
        out=$(unread_run -- "${steps[@]}")
        has "$(step 6)" "ROW: secret_bob" "$tag: without the shim the attack injects"
        log=$QG_PG_DIR/unread-$way-$api.log
        mark=${MARK}_${way}_$api
        steps[1]="$api:$(attack_utf8 "$mark")"
        out=$(unread_run with_shim enforce "$log" -- "${steps[@]}")
        has "$(step 6)" "ERROR: 42601 $BLOCKED" "$tag: blocked under the state the unread SET leaves"
        lacks "$out" "secret_" "$tag: nothing leaks"
        lacks "$(cat "$QG_PG_LOG")" "$mark" "$tag: the attack never reaches the server"
        has "$(step 7)" "ROW: after_unread" "$tag: the connection stays usable"
        ok "$tag: one finding" [ "$(grep -ac '"action":"blocked"' "$log")" -eq 1 ]
        # The inner call checks it (deferred): logged under the outer call.
        outer=PQexec
        [ "$api" = params ] && outer=PQexecParams
        has "$(cat "$log")" "\"action\":\"blocked\",\"api\":\"$outer\"" \
            "$tag: logged under the outer call's name"
        steps=("$way:SET client_encoding TO 'SJIS'" "$api:$SJIS_CHAR")
        plain=$(unread_run -- "${steps[@]}")
        out=$(unread_run with_shim enforce "$QG_PG_DIR/unread-ok.log" -- "${steps[@]}")
        has "$(step 6)" "ROW: 955c" "$tag: an SJIS character after the unread SET passes"
        ok "$tag: correctly written text gives identical results with and without the shim" \
            [ "$plain" = "$out" ]
    done
done

# A prepared statement that sets the encoding, executed with its results unread.
steps=("prepare:setenc:SELECT set_config('client_encoding', 'SJIS', false)"
       "unreadprepared:setenc" "exec:$(attack_utf8 "${MARK}_prepared_plain")" "exec:SELECT 'after_unread'")
out=$(unread_run -- "${steps[@]}")
has "$(step 7)" "ROW: secret_bob" "unread prepared set_config: without the shim the attack injects"
steps[2]="exec:$(attack_utf8 "${MARK}_prepared")"
out=$(unread_run with_shim enforce "$QG_PG_DIR/unread-prepared.log" -- "${steps[@]}")
has "$(step 7)" "ERROR: 42601 $BLOCKED" "unread prepared set_config: blocked under the state it leaves"
has "$(step 8)" "ROW: after_unread" "unread prepared set_config: the connection stays usable"

# The first PQexec of a program, with results unread: checked under every
# state the unread text may leave (the SJIS one among them).
out=$(with_shim enforce "$QG_PG_DIR/unread-first.log" "$SESSION" \
    "unread:SET client_encoding TO 'SJIS'; SET standard_conforming_strings TO off; SET backslash_quote TO on; SET escape_string_warning TO off" \
    "exec:$(attack_utf8 "${MARK}_first")" "exec:SELECT 'after_unread'")
has "$(step 2)" "quoteguard: blocked" "the first PQexec, results unread: blocked under the states they may leave"
has "$(step 3)" "ROW: after_unread" "the first PQexec, results unread: the block discards them as PQexec would; the connection stays usable"
lacks "$(cat "$QG_PG_LOG")" "${MARK}_prepared*/" "unread prepared set_config: the attack never reaches the server"
lacks "$(cat "$QG_PG_LOG")" "${MARK}_first*/" "the first PQexec's attack never reached the server"

# ---------------------------------------------------------------- the modes
out=$(with_shim off "$QG_PG_DIR/off.log" "$SESSION" "${SJIS_OLD_STYLE[@]}" "exec:$ATTACK")
has "$(step 5)" "ROW: secret_bob" "mode off: the attack goes through untouched (and injects)"
ok "mode off: nothing logged, not even the start-up line" [ ! -s "$QG_PG_DIR/off.log" ]

out=$(with_shim rewrite "$QG_PG_DIR/rewrite.log" "$SESSION" "${SJIS_OLD_STYLE[@]}" "exec:$ATTACK" \
    "exec:SELECT 'after_rewrite'")
has "$(step 5)" "ERROR: 42601 $BLOCKED" "mode rewrite: blocking findings are blocked as in enforce"
has "$(step 6)" "ROW: after_rewrite" "mode rewrite: the connection stays usable"

log=$QG_PG_DIR/audit-send.log
out=$(with_shim audit "$log" "$SESSION" "${SJIS_OLD_STYLE[@]}" "send:$ATTACK")
has "$(step 5)" "ROW: secret_bob" "mode audit: PQsendQuery sends the query as it is"
has "$(cat "$log")" '"action":"logged","api":"PQsendQuery"' "mode audit: the finding is logged"

# --------------------------------------------------------- NULL arguments
plain=$("$SESSION" null nullconn 2>&1)
shimmed=$(with_shim enforce "$QG_PG_DIR/null.log" "$SESSION" null nullconn 2>&1)
has "$plain" "NULL-PQexec: NULL" "without the shim libpq refuses a NULL query"
ok "NULL query and NULL connection: the same answers under the shim" [ "$plain" = "$shimmed" ]

# ------------------------------------------- a block inside a transaction
# A statement that fails aborts the transaction; a blocked one must as well,
# or a program that ignores the error and commits would commit the rest.
pg_psql -c "CREATE TABLE ledger(entry text)" || tap_bail "cannot create ledger"
log=$QG_PG_DIR/txn.log
for api in exec send; do
    out=$(with_shim enforce "$log" "$SESSION" "${SJIS_OLD_STYLE[@]}" "exec:BEGIN" \
        "exec:INSERT INTO ledger VALUES ('$api')" "$api:$ATTACK" "exec:SELECT 'inside'" \
        "exec:COMMIT")
    has "$(step 8)" "ERROR: 25P02" "$api blocked in a transaction: the transaction is aborted, as after a server error"
    has "$(step 9)" "STATUS: PGRES_COMMAND_OK" "$api: COMMIT then ends it"
    ok "$api: nothing of the aborted transaction was committed" \
        [ "$(pg_psql -At -c "SELECT count(*) FROM ledger WHERE entry = '$api'")" = 0 ]
done
has "$(cat "$QG_PG_LOG")" "quoteguard blocked a statement in this transaction" \
    "the server log says why the transaction failed"
out=$(with_shim enforce "$log" "$SESSION" "${SJIS_OLD_STYLE[@]}" "exec:$ATTACK" \
    "exec:INSERT INTO ledger VALUES ('outside')")
has "$(step 6)" "STATUS: PGRES_COMMAND_OK" "outside a transaction nothing else is sent"
ok "no abort statement outside a transaction" \
    [ "$(grep -c 'ERROR:  quoteguard blocked a statement' "$QG_PG_LOG")" = 2 ]

tap_done
