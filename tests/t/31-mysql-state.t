#!/bin/bash
# How the MySQL front follows the charset and quoting rules the SERVER lexes
# a connection's queries with.
#
# Probe: the GBK attack (BF 27 escaped byte-wise to BF 5C 27) is blocked
# exactly when the shim believes the connection is gbk — on a latin1
# connection it is harmless and passes.  Each way of switching the charset
# is followed by the probe; so are switches that fail or do not apply to the
# session.  Then ANSI_QUOTES, the CVE-2006-2753 setup (library and server
# disagree), MYSQL_INIT_COMMAND, and the cost: one state query per connect.
# servers: mariadb
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/mariadb.sh

qg_require_build clients/my_legacy
my_available || tap_skip_all "no MariaDB server binaries (or not root)"
my_start || tap_bail "cannot start MariaDB"
LEGACY=$QG_BUILD/clients/my_legacy
my_sql -e "CREATE DATABASE qg;
           CREATE TABLE qg.users (name VARBINARY(64), secret VARCHAR(64));
           INSERT INTO qg.users VALUES ('alice', 'secret_alice'), ('bob', 'secret_bob')" \
    || tap_bail "cannot create the table"

PROBE=input=bf27204f5220313d31202d2d20
LOG=$QG_MY_DIR/state.log
# Under the shim, on a latin1 connection with multi-statements; then PROBE.
probe() { # step…
    with_shim enforce "$LOG" "$LEGACY" "$QG_MY_SOCKET" db=qg charset=latin1 multi "$@" \
        escape=bytewise "$PROBE"
}
BLOCKED_GBK='^ERROR: 1105 42601 quoteguard: blocked structure_mismatch at byte [0-9]+ \(gbk\)'

out=$(probe)
has "$out" "ROWS: 0" "latin1 connection: the probe is harmless and passes"

SWITCHES=(
    "SET NAMES gbk"
    "SET NAMES 'gbk' COLLATE 'gbk_bin'"
    "SET CHARACTER SET gbk"
    "SET CHARSET 'gbk'"
    "SET character_set_client = gbk"
    "SET SESSION character_set_client = 'gbk'"
    "SET LOCAL character_set_client := gbk"
    "SET @@session.character_set_client=gbk"
    'SET @@character_set_client = "gbk"'
    "set names GBK"
    "/*!40101 SET NAMES gbk */"
    "/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;/*!40101 SET NAMES gbk */"
    "SET @a = 1, character_set_client = gbk, @b = 2"
    "SET /* why not */ NAMES -- really
gbk"
    "SET @cs = 'gbk'; SET character_set_client = @cs"
    "/*M!100000 SET NAMES gbk */"
    "/*!100000 SET NAMES gbk */"
    "SET NAMES gbk; SELECT 1"
)
for switch in "${SWITCHES[@]}"; do
    out=$(probe sql="$switch")
    matches "$out" "$BLOCKED_GBK" "after [${switch//$'\n'/ }] the probe is blocked as gbk"
done

out=$(probe via=send set-names=gbk)
matches "$out" "$BLOCKED_GBK" "SET NAMES through mysql_send_query + mysql_read_query_result is followed"
out=$(with_shim enforce "$LOG" "$LEGACY" "$QG_MY_SOCKET" db=qg charset=gbk escape=bytewise "$PROBE")
matches "$out" "$BLOCKED_GBK" "MYSQL_SET_CHARSET_NAME gbk: the probe is blocked as gbk"
out=$(probe init="SET NAMES gbk")
matches "$out" "$BLOCKED_GBK" "MYSQL_INIT_COMMAND SET NAMES gbk: the probe is blocked as gbk"

# The switch and the attack in one multi-statement text: the second
# statement is checked with gbk.
marker=qgm_multi_$$
out=$(probe "sqlhex=$(printf "SET NAMES gbk; SELECT /*$marker*/ secret FROM users WHERE name = '\xbf\\\\' OR 1=1 -- '" |
    od -An -tx1 | tr -d ' \n')")
matches "$out" '^ERROR: 1105 [0-9A-Z]{5} quoteguard: blocked [a-z_]+ at byte [0-9]+ \(gbk\)' \
    "SET NAMES gbk; <attack> in one text: blocked as gbk"
lacks "$(cat "$QG_MY_LOG")" "$marker" "SET NAMES gbk; <attack> in one text: nothing of it reaches the server"

# Switches that do not change the session's charset.
NON_SWITCHES=(
    "SET NAMES gbk, @x = (SELECT 1 FROM no_such_table)" # fails as a whole
    "SET NAMES no_such_charset"
    "SET GLOBAL character_set_client = gbk"
    "SET @@global.character_set_client = gbk"
    "/*!99999 SET NAMES gbk */" # MariaDB skips versions 50700..99999
    "/*!50700 SET NAMES gbk */"
    "SELECT 'SET NAMES gbk'"
    "SELECT 1 /* SET NAMES gbk */"
    "SET @names = 'gbk'"
)
for switch in "${NON_SWITCHES[@]}"; do
    out=$(probe sql="$switch" sql="SELECT @@character_set_client")
    has "$out" "ROW: latin1" "after [$switch] the server still says latin1"
    ok "after [$switch] the probe passes" \
        bash -c '[[ $1 == *"ROWS: 0"* && $1 != *quoteguard:* ]]' _ "$out"
done
my_sql -e "SET GLOBAL character_set_client = DEFAULT"

# 0xc3 is a gbk lead byte and a UTF-8 one: byte-wise escaped before a quote
# it blocks in either set, and the message names the set it was read in.
out=$(with_shim enforce "$LOG" "$LEGACY" "$QG_MY_SOCKET" db=qg charset=gbk sql="SET NAMES DEFAULT" \
    escape=bytewise input=c327204f5220313d31202d2d20)
matches "$out" '^ERROR: 1105 [0-9A-Z]{5} quoteguard: blocked [a-z_]+ at byte [0-9]+ \(utf8mb4\)' \
    "SET NAMES DEFAULT: the shim asks the server and checks as utf8mb4"

# CVE-2006-2753: without session tracking the library does not follow a
# plain SET NAMES, and mysql_real_escape_string escapes as latin1.
CVE=("sql=SET session_track_system_variables = ''" set-names=gbk show-charset escape=real "$PROBE")
out=$("$LEGACY" "$QG_MY_SOCKET" db=qg charset=latin1 "${CVE[@]}")
has "$out" "CHARSET: latin1" "no session tracking: the library still believes latin1 after SET NAMES gbk"
has "$out" "ROW: secret_bob" "no session tracking: without the shim mysql_real_escape_string output injects"
out=$(with_shim enforce "$QG_MY_DIR/cve.log" "$LEGACY" "$QG_MY_SOCKET" db=qg charset=latin1 "${CVE[@]}")
has "$out" "ROWS: 0" "no session tracking: with the shim mysql_real_escape_string escapes for gbk: nothing injected"
has "$out" "SENT: 53454C454354207365637265742046524F4D207573657273205748455245206E616D65203D20275CBF5C27" \
    "no session tracking: the ill-formed gbk lead byte is escaped itself, so the quote stays escaped"
has "$(cat "$QG_MY_DIR/cve.log")" '"event":"mysql_real_escape_string_upgraded","detail":"escaping for charset gbk: the client library escapes as latin1"' \
    "no session tracking: the upgraded escaping is logged"
# The library's charset name, found to be the server's by an escape before
# the SET NAMES, is not taken for the server's after it.
out=$(with_shim enforce "$QG_MY_DIR/cve-after.log" "$LEGACY" "$QG_MY_SOCKET" db=qg charset=latin1 \
    "${CVE[0]}" escape=real input=616c696365 "${CVE[@]:1}")
has "$out" "ROW: secret_alice" "no session tracking: an escape before SET NAMES gbk runs as latin1"
has "$out" "ROWS: 0" "no session tracking: an escape after it is for gbk though latin1 was the server's before: nothing injected"
has "$out" "SENT: 53454C454354207365637265742046524F4D207573657273205748455245206E616D65203D20275CBF5C27" \
    "no session tracking: the escape after SET NAMES gbk escapes the ill-formed lead byte"
out=$(with_shim enforce "$QG_MY_DIR/cve.log" "$LEGACY" "$QG_MY_SOCKET" db=qg charset=latin1 "${CVE[@]:0:2}" \
    escape=bytewise "$PROBE")
matches "$out" "$BLOCKED_GBK" "no session tracking: the byte-wise escaped attack is blocked as gbk"

# ANSI_QUOTES: "..." is an identifier, where a backslash escapes nothing.
# Read as a string, this query would run to the end unterminated.
ANSI_QUERY='sql=SELECT 1 AS "a\", 2 AS "b"'
out=$(probe "$ANSI_QUERY")
matches "$out" '^ERROR: 1105 [0-9A-Z]{5} quoteguard: blocked unterminated' \
    "without ANSI_QUOTES the identifier query reads as an unterminated string"
for mode in "SET sql_mode = 'ANSI_QUOTES'" "SET SESSION sql_mode = 'STRICT_ALL_TABLES,ANSI'" \
    "SET sql_mode = CONCAT(@@sql_mode, ',ANSI_QUOTES')" "SET @@sql_mode = 'ORACLE'"; do
    out=$(probe sql="$mode" "$ANSI_QUERY")
    has "$out" "ROW: 1|2" "after [$mode] the shim follows ANSI_QUOTES"
done
out=$(probe sql="SET sql_mode = 'ANSI_QUOTES'" sql="SET sql_mode = ''" "$ANSI_QUERY")
matches "$out" '^ERROR: 1105 [0-9A-Z]{5} quoteguard: blocked unterminated' \
    "after SET sql_mode = '' the shim drops ANSI_QUOTES again"

# The question leaves what the program reads as it was: after a statement
# whose effect only the server knows (EXECUTE), a query that reads alike in
# every state is checked without it, and where the state is needed the
# question is a VALUES, which keeps FOUND_ROWS() (a SELECT sets it to 1).
my_sql -e "CREATE TABLE qg.five (id INT); INSERT INTO qg.five VALUES (1),(2),(3),(4),(5)" ||
    tap_bail "cannot create the table"
AROUND=("sql=PREPARE s FROM 'SET @x = 1'"
    "sql=SELECT SQL_CALC_FOUND_ROWS id FROM five ORDER BY id LIMIT 2" "sql=EXECUTE s"
    "sql=SELECT FOUND_ROWS()" "sql=EXECUTE s" "sql=SELECT ROW_COUNT()"
    "sql=SELECT SQL_CALC_FOUND_ROWS id FROM five ORDER BY id LIMIT 2" "sql=EXECUTE s"
    "sqlhex=$(printf "SELECT FOUND_ROWS(), '\xc3\xa9'" | od -An -tx1 | tr -d ' \n')")
state_queries() { grep -ac '@@session.sql_mode' "$QG_MY_LOG"; }
without=$("$LEGACY" "$QG_MY_SOCKET" db=qg charset=utf8mb4 "${AROUND[@]}")
before=$(state_queries)
with=$(with_shim enforce "$LOG" "$LEGACY" "$QG_MY_SOCKET" db=qg charset=utf8mb4 "${AROUND[@]}")
has "$without" 'ROW: 5|\xc3\xa9' "without the shim: FOUND_ROWS() 5 after EXECUTE"
ok "FOUND_ROWS() and ROW_COUNT() after EXECUTE: the same with the shim" [ "$with" = "$without" ] ||
    tap_diag "without: $without" "with: $with"
ok "after EXECUTE: asked only before the query that does not read alike" \
    [ "$(state_queries)" -eq $((before + 2)) ]
has "$(grep -a '@@session.sql_mode' "$QG_MY_LOG" | tail -n 1)" "VALUES (@@character_set_client" \
    "the question is a VALUES"
out=$(probe "sql=PREPARE g FROM 'SET NAMES gbk'" sql="EXECUTE g")
matches "$out" "$BLOCKED_GBK" "SET NAMES gbk through EXECUTE: asked, the probe is blocked as gbk"

# Cost: one state query per connection, none per query; none when off.
before=$(state_queries)
with_shim enforce "$LOG" "$LEGACY" "$QG_MY_SOCKET" db=qg sql="SELECT 1" sql="SELECT 2" \
    set-names=gbk sql="SELECT 3" >/dev/null
ok "one state query per connection, none per query" [ "$(state_queries)" -eq $((before + 1)) ]
before=$(state_queries)
out=$(with_shim off "$LOG" "$LEGACY" "$QG_MY_SOCKET" db=qg set-names=gbk escape=bytewise "$PROBE")
ok "mode off: no state query" [ "$(state_queries)" -eq "$before" ]
has "$out" "ROW: secret_bob" "mode off: the attack goes through as without the shim"

tap_done
