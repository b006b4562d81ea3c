#!/bin/bash
# The wire front's MySQL session state against MariaDB 10.11, for the
# drivers that speak the protocol themselves: every way a connection's
# character set or sql_mode changes that the protocol shows.
#
# Each case: the attack (a GBK lead byte and a quote escaped by addslashes,
# or addslashes under NO_BACKSLASH_ESCAPES) injects without the shim (both
# secrets, the statement in the general log); with it, enforce blocks it
# (an ordinary server error naming quoteguard, the statement never in the
# general log) and the connection answers the next query; the same path
# with correctly escaped data gives the same output with and without the
# shim.  Paths: EXECUTE IMMEDIATE, PREPARE / EXECUTE, a MariaDB executable
# comment, a back-quoted charset name, SET STATEMENT … FOR, a
# multi-statement text (PyMySQL); PDO_mysql with native and emulated
# prepares; mysqli's change_user (COM_CHANGE_USER's collation); Connector/J
# with server-side prepares after a sql_mode set to an expression; a raw
# protocol client writing SET NAMES and the query in one write, the query in
# the same write as the handshake response, COM_RESET_CONNECTION, and a
# capability the server never offered (CLIENT_QUERY_ATTRIBUTES).  Stored
# procedures: the state after a CALL is the caller's (the server gives it
# back), whatever the procedure set, the session-tracking report from
# inside it (a raw client, the mariadb client, Connector/J) or the
# NO_BACKSLASH_ESCAPES status bit it left (which PyMySQL and mysqli escape
# by); what PyMySQL gets back around CALLs is the same with and without the
# shim.  After a change only the server knows (SET character_set_client =
# @v) the front asks the server (tests/t/38-wire-mysql-probe.t): the attack
# is blocked as read under the charset the server gave; audit asks nothing
# and logs it as state_unknown.
# servers: mariadb
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/mariadb.sh

qg_require_build
my_available || tap_skip_all "no MariaDB server binaries (or not root)"
php -r 'exit(extension_loaded("mysqli") && extension_loaded("pdo_mysql") ? 0 : 1);' ||
    tap_bail "php8.2-mysql is not installed (scripts/install-deps installs it)"
/usr/bin/python3 -c 'import pymysql' || tap_bail "python3-pymysql is not installed"
MY_JAR=/usr/share/java/mariadb-java-client.jar
command -v java >/dev/null && [ -f "$MY_JAR" ] ||
    tap_bail "java and libmariadb-java are needed (scripts/install-deps)"
QG_MY_TCP_PORT=$(qg_free_tcp_port)
export QG_MY_TCP_PORT
my_start || tap_bail "cannot start MariaDB"
my_sql -e "CREATE DATABASE qg;
           CREATE TABLE qg.users (name VARBINARY(64), secret VARCHAR(64));
           INSERT INTO qg.users VALUES ('alice', 'secret_alice'), ('bob', 'secret_bob')" ||
    tap_bail "cannot create the tables"
my_sql <<'SQL' || tap_bail "cannot create the procedures"
DELIMITER //
CREATE PROCEDURE qg.p_latin1() BEGIN SET NAMES latin1; SELECT 1 AS inside; END//
CREATE PROCEDURE qg.p_gbk() BEGIN SET NAMES gbk; SELECT 1 AS inside; END//
CREATE PROCEDURE qg.p_nbe() SET sql_mode = 'NO_BACKSLASH_ESCAPES'//
DELIMITER ;
SQL

W=tests/wire
PY=/usr/bin/python3
JDBC_URL="jdbc:mariadb://127.0.0.1:$QG_MY_TCP_PORT/qg?useServerPrepStmts=true"
secrets() { printf '%s\n' "$1" | grep -ac '^ROW: secret_'; }
n=0

# CASE TAG REASON COMMAND… : the words @WHAT@ and @MARKER@ in COMMAND are
# replaced by attack|legit and a marker of the run.
run_case() {
    local tag=$1 reason=$2
    shift 2
    n=$((n + 1))
    local marker=qgs${n}_plain_$$ out log
    out=$(set -- "${@//@WHAT@/attack}"; "${@//@MARKER@/$marker}" 2>&1)
    ok "$tag: without the shim the attack injects (both secrets)" [ "$(secrets "$out")" -eq 2 ]
    has "$(cat "$QG_MY_LOG")" "$marker" "$tag: without the shim the statement reaches the server"

    marker=qgs${n}_enforce_$$
    log=$QG_MY_DIR/case$n.log
    out=$(set -- "${@//@WHAT@/attack}"; with_shim enforce "$log" "${@//@MARKER@/$marker}" 2>&1)
    has "$out" "quoteguard: blocked $reason" "$tag: enforce blocks it ($reason)"
    lacks "$out" "ROW: secret_" "$tag: enforce: no secret leaks"
    lacks "$(cat "$QG_MY_LOG")" "$marker" "$tag: enforce: the statement never reaches the server"
    matches "$out" "ALIVE: alive|ROW: alive" "$tag: enforce: the connection answers the next query"

    local plain shimmed
    plain=$(set -- "${@//@WHAT@/legit}"; "${@//@MARKER@/qgs${n}_legit}" 2>&1)
    shimmed=$(set -- "${@//@WHAT@/legit}"; with_shim enforce "$QG_MY_DIR/legit$n.log" \
        "${@//@MARKER@/qgs${n}_legit}" 2>&1)
    matches "$plain" "^ROW: " "$tag legit: correctly escaped data comes back"
    ok "$tag legit: the same output with the shim" [ "$plain" = "$shimmed" ]
}

# 1. State changes through statements inside statements (PyMySQL).
run_case "EXECUTE IMMEDIATE 'SET NAMES gbk'" structure_mismatch \
    "$PY" $W/mysql_state_paths.py "$QG_MY_SOCKET" @WHAT@ @MARKER@ "EXECUTE IMMEDIATE 'SET NAMES gbk'"
run_case "PREPARE s FROM 'SET NAMES gbk'; EXECUTE s" structure_mismatch \
    "$PY" $W/mysql_state_paths.py "$QG_MY_SOCKET" @WHAT@ @MARKER@ \
    "PREPARE s FROM 'SET NAMES gbk'" "EXECUTE s"
run_case "/*M!100000 SET NAMES gbk */" structure_mismatch \
    "$PY" $W/mysql_state_paths.py "$QG_MY_SOCKET" @WHAT@ @MARKER@ "/*M!100000 SET NAMES gbk */"
run_case "a multi-statement text that ends in SET NAMES gbk" structure_mismatch \
    "$PY" $W/mysql_state_paths.py "$QG_MY_SOCKET" @WHAT@ @MARKER@ "multi:SELECT 1; SET NAMES gbk"
run_case 'SET NAMES `gbk`' structure_mismatch \
    "$PY" $W/mysql_state_paths.py "$QG_MY_SOCKET" @WHAT@ @MARKER@ 'SET NAMES `gbk`'
run_case "SET STATEMENT max_statement_time=1 FOR SET NAMES gbk" structure_mismatch \
    "$PY" $W/mysql_state_paths.py "$QG_MY_SOCKET" @WHAT@ @MARKER@ \
    "SET STATEMENT max_statement_time=1 FOR SET NAMES gbk"

# 2. PDO_mysql: SET NAMES gbk prepared and executed, then the query prepared.
run_case "PDO native prepares (COM_STMT_PREPARE / EXECUTE)" structure_mismatch \
    php $W/mysql_php_paths.php "$QG_MY_SOCKET" pdo_native @WHAT@ @MARKER@
run_case "PDO emulated prepares" structure_mismatch \
    php $W/mysql_php_paths.php "$QG_MY_SOCKET" pdo_emulated @WHAT@ @MARKER@

# 3. COM_CHANGE_USER and COM_RESET_CONNECTION take the session back to a
# character set no statement named.
run_case "mysqli change_user (COM_CHANGE_USER's collation gbk)" structure_mismatch \
    php $W/mysql_php_paths.php "$QG_MY_SOCKET" change_user @WHAT@ @MARKER@
run_case "COM_RESET_CONNECTION (back to the handshake's gbk)" structure_mismatch \
    "$PY" $W/mysql_pipeline.py "$QG_MY_SOCKET" reset @WHAT@ @MARKER@

# 4. Connector/J, server-side prepares, sql_mode set to an expression.
run_case "Connector/J useServerPrepStmts after sql_mode = CONCAT(…NO_BACKSLASH_ESCAPES)" \
    structure_mismatch java -cp "$MY_JAR" $W/JdbcServerPrep.java "$JDBC_URL" @WHAT@ @MARKER@

# 5. Pipelining at the wire (a raw protocol client).
run_case "SET NAMES gbk and the query in one write" structure_mismatch \
    "$PY" $W/mysql_pipeline.py "$QG_MY_SOCKET" pipeline @WHAT@ @MARKER@
run_case "the query in the same write as the handshake response" state_unknown \
    "$PY" $W/mysql_pipeline.py "$QG_MY_SOCKET" early @WHAT@ @MARKER@

# 6. A capability the server never offered does not turn the front off.
run_case "CLIENT_QUERY_ATTRIBUTES asked, not offered" structure_mismatch \
    "$PY" $W/mysql_pipeline.py "$QG_MY_SOCKET" attributes @WHAT@ @MARKER@

# 7. Stored procedures: when one returns, the server gives its caller the
# character set and sql_mode back (a SET NAMES or SET sql_mode inside ends
# with it), but not the status bits, nor a report of the return.
run_case "CALL of a procedure that runs SET NAMES latin1 and a SELECT, on gbk" structure_mismatch \
    "$PY" $W/mysql_state_paths.py "$QG_MY_SOCKET" @WHAT@ @MARKER@ "SET NAMES gbk" "CALL p_latin1()"
run_case "the same where the client asked for session tracking (latin1 reported from inside)" \
    structure_mismatch "$PY" $W/mysql_pipeline.py "$QG_MY_SOCKET" tracked-call @WHAT@ @MARKER@
run_case "PyMySQL escaping by the NO_BACKSLASH_ESCAPES bit a procedure left" structure_mismatch \
    "$PY" $W/mysql_state_paths.py "$QG_MY_SOCKET" @WHAT@-escaped @MARKER@ "CALL p_nbe()"
run_case "mysqli real_escape_string by the NO_BACKSLASH_ESCAPES bit a procedure left" \
    structure_mismatch php $W/mysql_php_routines.php "$QG_MY_SOCKET" @WHAT@ @MARKER@
# The mariadb client asks for session tracking: UTF-8 text after a CALL of a
# procedure that ran SET NAMES gbk and a SELECT reads as UTF-8.
call_gbk="CALL p_gbk(); SELECT HEX('"$'\xe4\xb8\xbf\\\''"x')"
plain=$(my_sql qg -e "$call_gbk" 2>&1)
shimmed=$(with_shim enforce "$QG_MY_DIR/call-gbk.log" mariadb --no-defaults --socket="$QG_MY_SOCKET" \
    -uroot --batch --skip-column-names qg -e "$call_gbk" 2>&1)
has "$plain" "E4B8BF2778" "mariadb client: CALL p_gbk() then UTF-8 text: the server reads it as UTF-8"
ok "mariadb client: the same output with the shim" [ "$plain" = "$shimmed" ]
# So does Connector/J, with OK packets in place of EOF: the end of the
# procedure's SELECT reports gbk from inside it.
jdbc_call=(java -cp "$MY_JAR" $W/JdbcRoutine.java "jdbc:mariadb://127.0.0.1:$QG_MY_TCP_PORT/qg")
plain=$("${jdbc_call[@]}" qgs_jdbc_call 2>&1)
shimmed=$(with_shim enforce "$QG_MY_DIR/jdbc-call.log" "${jdbc_call[@]}" qgs_jdbc_call 2>&1)
has "$plain" "ROW: E4B8BF2778" "Connector/J: CALL p_gbk() then UTF-8 text: the server reads it as UTF-8"
ok "Connector/J: the same output with the shim" [ "$plain" = "$shimmed" ] ||
    tap_diag "with the shim: $shimmed"

# What PyMySQL gets back around CALLs (rows, affected rows, insert ids, info
# strings, SHOW WARNINGS, ROW_COUNT() and FOUND_ROWS(), UTF-8 and GBK text)
# is the same with and without the shim.
plain=$("$PY" $W/mysql_answers.py "$QG_MY_SOCKET" 2>&1)
shimmed=$(with_shim enforce "$QG_MY_DIR/answers.log" "$PY" $W/mysql_answers.py "$QG_MY_SOCKET" 2>&1)
has "$plain" "ROW: 'E4B8BF2778'" "PyMySQL around CALLs: the UTF-8 text after CALL p_gbk() comes back"
has "$plain" "Rows matched: 1  Changed: 1" "PyMySQL around CALLs: an UPDATE's info string"
has "$plain" "ROW: 'Warning' 1264" "PyMySQL around CALLs: SHOW WARNINGS"
ok "PyMySQL around CALLs: everything the same with the shim" [ "$plain" = "$shimmed" ] ||
    tap_diag "$(diff <(printf '%s\n' "$plain") <(printf '%s\n' "$shimmed") | head -n 10)"

# A change only the server knows: the server is asked; in audit logged.
paths=("$PY" $W/mysql_state_paths.py "$QG_MY_SOCKET")
setup=("SET @v = 'gbk'" "SET character_set_client = @v")
out=$("${paths[@]}" attack qgs_var_plain_$$ "${setup[@]}" 2>&1)
ok "SET character_set_client = @v: without the shim the attack injects" [ "$(secrets "$out")" -eq 2 ]
log=$QG_MY_DIR/var.log
out=$(with_shim enforce "$log" "${paths[@]}" attack qgs_var_$$ "${setup[@]}" 2>&1)
has "$out" "quoteguard: blocked structure_mismatch" \
    "SET character_set_client = @v: enforce: blocked as read under the server's charset"
lacks "$(cat "$QG_MY_LOG")" qgs_var_$$ "SET character_set_client = @v: the statement never reaches the server"
has "$out" "ALIVE: alive" "SET character_set_client = @v: the connection answers ASCII queries"
has "$(cat "$log")" '"action":"blocked","api":"wire:COM_QUERY","dialect":"mysql","encoding":"gbk"' \
    "SET character_set_client = @v: logged blocked, under gbk"
log=$QG_MY_DIR/var-audit.log
out=$(with_shim audit "$log" "${paths[@]}" attack qgs_var_audit_$$ "${setup[@]}" 2>&1)
ok "SET character_set_client = @v: audit sends it" [ "$(secrets "$out")" -eq 2 ]
has "$(cat "$log")" '"action":"logged","api":"wire:COM_QUERY"' "SET character_set_client = @v: audit logs it"
out=$(with_shim enforce "$QG_MY_DIR/var-names.log" "${paths[@]}" legit qgs_var_names_$$ \
    "${setup[@]}" "SET NAMES gbk" 2>&1)
has "$out" "ROW: BF5C2778" "a SET NAMES after it makes the state known again"

tap_done
