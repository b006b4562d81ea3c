#!/bin/bash
# Every way of changing a connection's character set or sql_mode the MySQL
# front must follow (MariaDB's grammar: SET in its spellings, EXECUTE
# IMMEDIATE, PREPARE / EXECUTE, the prepared-statement API, compound
# statements, procedures and functions, multi-statements, the connect
# options, mysql_set_character_set, mysql_reset_connection,
# mysql_change_user, an application that changes what the server tracks),
# and the client library's automatic reconnect after the server killed the
# connection.
#
# Per way, on a latin1 connection: after the change
#  - the shim's recorded state (its debug event before each query) equals
#    what the server answers to SELECT @@character_set_client, @@sql_mode;
#  - the attack for the new state is blocked: a byte-wise escaped BF 27 in
#    gbk, a byte-wise escaped quote under NO_BACKSLASH_ESCAPES;
#  - text escaped by mysql_real_escape_string passes and the server reads
#    it byte for byte as sent (SELECT HEX(…)).
# servers: mariadb
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/mariadb.sh

qg_require_build clients/my_legacy
my_available || tap_skip_all "no MariaDB server binaries (or not root)"
my_start || tap_bail "cannot start MariaDB"
LEGACY=$QG_BUILD/clients/my_legacy
my_sql --delimiter=// -e "CREATE DATABASE qg//
    CREATE TABLE qg.users (name VARBINARY(64), secret VARCHAR(64))//
    INSERT INTO qg.users VALUES ('alice', 'secret_alice'), ('bob', 'secret_bob')//
    CREATE PROCEDURE qg.p_names() BEGIN SET NAMES gbk; END//
    CREATE PROCEDURE qg.p_at() BEGIN SET @@character_set_client = gbk; END//
    CREATE PROCEDURE qg.p_mode() BEGIN SET sql_mode = 'NO_BACKSLASH_ESCAPES'; END//
    CREATE FUNCTION qg.f_names() RETURNS INT BEGIN SET NAMES gbk; RETURN 1; END//" ||
    tap_bail "cannot create the schema"

USERS="template=SELECT secret FROM users WHERE name = '%s'"
# kind: the steps after the change, and what they must show
#  gbk   the gbk attack is blocked; 95 5C 41 27 escaped for gbk round-trips
#  nbe   the quote attack is blocked; "it's a\b" escaped for the server round-trips
#  same  the state is latin1 without NO_BACKSLASH_ESCAPES: the gbk probe is
#        harmless and passes; "it's a\b" round-trips
declare -A ATTACK=([gbk]='quoteguard: blocked structure_mismatch at byte [0-9]+ \(gbk\)'
    [nbe]='quoteguard: blocked [a-z_]+ at byte [0-9]+ \(latin1\)' [same]='^ROWS: 0$')
declare -A LEGIT=([gbk]='^ROW: 955C4127$' [nbe]='^ROW: 6974277320615C62$' [same]='^ROW: 6974277320615C62$')

# The recorded state before each state query, as "charset|nbe|ansi".
recorded() { # log
    sed -n 's/.*"detail":"charset=\([^ ]*\) no_backslash_escapes=\([01]\) ansi_quotes=\([01]\) check: SELECT @@character_set_client, @@sql_mode \/\*qg-state.*/\1|\2|\3/p' "$1"
}
# The server's answers to the state queries, the same way.
answered() { # output
    printf '%s\n' "$1" | sed -n 's/^ROW: \([a-z0-9_]*\)|\(.*\)$/\1 \2/p' | while read -r cs mode; do
        printf '%s|%d|%d\n' "$cs" "$([[ ,$mode, == *,NO_BACKSLASH_ESCAPES,* ]] && echo 1 || echo 0)" \
            "$([[ ,$mode, == *,ANSI_QUOTES,* ]] && echo 1 || echo 0)"
    done
}

states_agree() { # recorded answered count
    [ -n "$2" ] && [ "$1" = "$2" ] && [ "$(printf '%s\n' "$2" | wc -l)" -eq "$3" ]
}

n=0
way() { # kind step…
    local kind=$1 log out
    shift
    n=$((n + 1))
    log=$QG_MY_DIR/way-$n.log
    local -a after
    case $kind in
    gbk) after=("$USERS" escape=bytewise input=bf27204f5220313d31202d2d20 state
        "template=SELECT HEX(_gbk'%s')" escape=real input=955c4127 state) ;;
    *) after=("$USERS" escape=bytewise input="$([ "$kind" = nbe ] && echo 27204f5220313d31202d2d20 || echo bf27204f5220313d31202d2d20)"
        state "template=SELECT HEX('%s')" escape=real input=6974277320615c62 state) ;;
    esac
    out=$(QUOTEGUARD_VERBOSE=2 with_shim enforce "$log" "$LEGACY" "$QG_MY_SOCKET" db=qg charset=latin1 \
        multi "$@" state "${after[@]}")
    local name="${*//$'\n'/ }"
    local rec ans
    rec=$(recorded "$log")
    ans=$(answered "$out")
    ok "[$name]: the recorded state equals the server's after every step ($(printf '%s' "$ans" | tr '\n' ' '))" \
        states_agree "$rec" "$ans" 3 || tap_diag "recorded: $(printf '%s' "$rec" | tr '\n' ' ')" "output: $out"
    matches "$out" "${ATTACK[$kind]}" "[$name]: $([ "$kind" = same ] && echo "the gbk probe is harmless and passes" || echo "the $kind attack is blocked")"
    lacks "$out" "ROW: secret_" "[$name]: no secret leaks"
    matches "$out" "${LEGIT[$kind]}" "[$name]: correctly escaped text passes and reads back byte for byte"
}

way gbk "sql=SET NAMES gbk"
way gbk "sql=SET NAMES 'gbk' COLLATE 'gbk_bin'"
way gbk "sql=SET CHARACTER SET gbk"
way gbk "sql=SET CHAR SET gbk"
way gbk "sql=SET CHARSET gbk"
way gbk "sql=set names GBK"
way gbk "sql=SET character_set_client = gbk"
way gbk "sql=SET SESSION character_set_client = gbk"
way gbk "sql=SET LOCAL character_set_client := gbk"
way gbk "sql=SET @@character_set_client = gbk"
way gbk 'sql=SET @@character_set_client = "gbk"'
way gbk "sql=SET @@session.character_set_client = gbk"
way gbk "sql=SET @@local.character_set_client = gbk"
way gbk "sql=SET @@SESSION . character_set_client = gbk"
way gbk "sql=SET \`character_set_client\` = gbk"
way gbk "sql=SET @@session.\`character_set_client\` = gbk"
way gbk "sql=SET@@character_set_client=gbk"
way gbk "sql=SET/**/NAMES/**/gbk"
way gbk "sql=/*!40101 SET NAMES gbk */"
way gbk "sql=SET @a = 1, character_set_client = gbk"
way gbk "sql=SET @cs = 'gbk'" "sql=SET character_set_client = @cs"
way gbk "sql=SET character_set_client = (SELECT 'gbk')"
way gbk "sql=EXECUTE IMMEDIATE 'SET NAMES gbk'"
way gbk "sql=EXECUTE IMMEDIATE 'SET @@character_set_client = gbk'"
way gbk "sql=EXECUTE IMMEDIATE CONCAT('SET NAMES ', 'gbk')"
way gbk "sql=PREPARE s FROM 'SET NAMES gbk'" "sql=EXECUTE s"
way gbk "sql=PREPARE s FROM 'SET @@character_set_client = gbk'" "sql=EXECUTE s"
way gbk "sql=/* c */ EXECUTE IMMEDIATE CONCAT('SET @', '@character_set_client = gbk')"
way gbk "sql=SELECT 1; EXECUTE IMMEDIATE CONCAT('SET @', '@character_set_client = gbk')"
way gbk "stmt=SET NAMES gbk"
way gbk "stmt=SET @@character_set_client = gbk"
way gbk "sql=BEGIN NOT ATOMIC SET NAMES gbk; END"
way gbk "sql=BEGIN NOT ATOMIC SET @@character_set_client = gbk; END"
way gbk "sql=IF 1 THEN SET NAMES gbk; END IF"
way gbk "sql=SET NAMES gbk; SELECT 1"
way gbk "sql=SELECT 1; SET @@character_set_client = gbk"
way gbk "sql=SET STATEMENT sql_mode = '' FOR SELECT 1" "sql=SET NAMES gbk"
way gbk set-charset=gbk
way gbk charset=gbk
way gbk "init=SET NAMES gbk"
way gbk "init=SET @@character_set_client = gbk"
way gbk "sql=SET session_track_system_variables = ''" "sql=SET @@character_set_client = gbk"
way gbk "sql=SET session_track_system_variables = 'autocommit'" "sql=SET NAMES gbk"
way gbk "sql=SET CHARACTER SET cp1251_koi8" "sql=SET NAMES gbk"

way nbe "sql=SET sql_mode = 'NO_BACKSLASH_ESCAPES'"
way nbe "sql=SET @@sql_mode = 'NO_BACKSLASH_ESCAPES'"
way nbe "sql=SET @@session.sql_mode = 'no_backslash_escapes'"
way nbe "sql=SET sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')"
way nbe "sql=SET SESSION sql_mode = 'MYSQL40,NO_BACKSLASH_ESCAPES'"
way nbe "sql=SET sql_mode = 'MYSQL323,NO_BACKSLASH_ESCAPES,ANSI'"
way nbe "sql=EXECUTE IMMEDIATE 'SET @@sql_mode = \"NO_BACKSLASH_ESCAPES\"'"
way nbe "sql=PREPARE s FROM 'SET sql_mode = ''NO_BACKSLASH_ESCAPES'''" "sql=EXECUTE s"
way nbe "stmt=SET sql_mode = 'NO_BACKSLASH_ESCAPES'"
way nbe "sql=SET sql_mode = 'NO_BACKSLASH_ESCAPES'; SELECT 1"
way nbe "sql=SET session_track_system_variables = ''" "sql=SET sql_mode = 'NO_BACKSLASH_ESCAPES'"

way same "sql=SET CHARACTER SET cp1251_koi8"
way same "sql=CALL p_names()"
way same "sql=CALL p_at()"
way same "sql=SELECT f_names()"
way same "sql=CALL p_mode()"
way same "sql=BEGIN NOT ATOMIC SET sql_mode = 'NO_BACKSLASH_ESCAPES'; END"
way same "sql=SET STATEMENT sql_mode = 'NO_BACKSLASH_ESCAPES' FOR SELECT 1"
way same "sql=SET GLOBAL character_set_client = gbk"
way same "sql=SET NAMES gbk" reset
way same "sql=SET sql_mode = 'NO_BACKSLASH_ESCAPES'" reset
way same "sql=SET NAMES gbk" change-user
way same "sql=SET NAMES gbk" "sql=SET NAMES DEFAULT" "sql=SET NAMES latin1"
my_sql -e "SET GLOBAL character_set_client = DEFAULT"

# The prepared-statement API is checked like mysql_real_query: the attack
# in mysql_stmt_prepare is blocked (mysql_stmt_error says so) and never
# reaches the server; a clean statement is prepared and runs.
marker=qgm_stmt_$$
out=$(with_shim enforce "$QG_MY_DIR/stmt.log" "$LEGACY" "$QG_MY_SOCKET" db=qg charset=latin1 "sql=SET NAMES gbk" \
    "stmt=SELECT /*$marker*/ secret FROM users WHERE name = '"$'\xbf'"\\' OR 1=1 -- '" "stmt=SELECT 1")
matches "$out" '^ERROR: 1105 42601 quoteguard: blocked structure_mismatch at byte [0-9]+ \(gbk\)' \
    "mysql_stmt_prepare: the attack is blocked, mysql_stmt_errno / _sqlstate / _error say so"
lacks "$(cat "$QG_MY_LOG")" "$marker" "mysql_stmt_prepare: the blocked statement never reaches the server"
has "$out" "OK: stmt" "mysql_stmt_prepare: a clean statement is prepared and runs"

# Automatic reconnect.  The server's global sql_mode has NO_BACKSLASH_ESCAPES;
# the session clears it.  After KILL the library reconnects and resends the
# next query into a fresh session, which has NO_BACKSLASH_ESCAPES again: there
# the byte-wise escaped quote ends the literal.
my_sql -e "SET GLOBAL sql_mode = 'NO_BACKSLASH_ESCAPES'"
RECONNECT=(reconnect "sql=SET sql_mode = ''" "$USERS" escape=bytewise kill)
out=$("$LEGACY" "$QG_MY_SOCKET" db=qg charset=latin1 "${RECONNECT[@]}" input=27204f5220313d31202d2d20)
has "$out" "OK: killed" "reconnect: the connection is killed from another session"
has "$out" "ROW: secret_bob" "reconnect: without the shim the resent query injects in the fresh session"
out=$(with_shim enforce "$QG_MY_DIR/reconnect.log" "$LEGACY" "$QG_MY_SOCKET" db=qg charset=latin1 \
    "${RECONNECT[@]}" input=27204f5220313d31202d2d20)
matches "$out" "quoteguard: blocked structure_mismatch at byte [0-9]+ \(latin1\)" \
    "reconnect: with the shim the query is checked with the fresh session's state too, and blocked"
lacks "$out" "ROW: secret_" "reconnect: nothing injected"
log=$QG_MY_DIR/reconnect-plain.log
out=$(QUOTEGUARD_VERBOSE=2 with_shim enforce "$log" "$LEGACY" "$QG_MY_SOCKET" db=qg charset=latin1 \
    "${RECONNECT[@]}" input=616c696365 state)
has "$out" "ROW: secret_alice" "reconnect: plain text passes and is resent into the fresh session"
rec=$(recorded "$log")
ans=$(answered "$out")
ok "reconnect: the recorded state equals the fresh session's ($ans)" states_agree "$rec" "$ans" 1 ||
    tap_diag "recorded: $rec" "output: $out"
has "$ans" "latin1|1|0" "reconnect: the fresh session has NO_BACKSLASH_ESCAPES"
# The reconnect's socket is handed over to the library front as the first
# one was: in audit both attacks (the one resent into the fresh session and
# one after it) are checked there, once each, and not again at the wire.
log=$QG_MY_DIR/reconnect-audit.log
out=$(with_shim audit "$log" "$LEGACY" "$QG_MY_SOCKET" db=qg charset=latin1 "${RECONNECT[@]}" \
    input=27204f5220313d31202d2d20 input=27204f5220313d31202d2d20)
has "$out" "ROW: secret_bob" "reconnect, audit: the attacks are sent"
ok "reconnect, audit: each attack is logged once, by the library front" \
    [ "$(grep -ac '"action":"logged","api":"mysql_real_query"' "$log")" -eq 2 ] ||
    tap_diag "$(cat "$log")"
lacks "$(cat "$log")" '"api":"wire:' "reconnect, audit: the new socket is not checked again at the wire"
lacks "$(cat "$log")" "wire_unguarded" "reconnect, audit: nothing said to be unread at the wire"
my_sql -e "SET GLOBAL sql_mode = DEFAULT"

tap_done
