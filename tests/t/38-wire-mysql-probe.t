#!/bin/bash
# The wire front asks MariaDB 10.11 for the connection's state itself when a
# statement left it for the server alone to know (SET character_set_client =
# @v, SET NAMES DEFAULT, what mysqldump writes around every CREATE TABLE)
# and the next query needs it: PyMySQL and PHP mysqli, a raw protocol client
# with CLIENT_DEPRECATE_EOF, and node mysql2 (a non-blocking socket) after
# sql_mode set through EXECUTE (the attack blocked under
# NO_BACKSLASH_ESCAPES, text with a backslash identical).
#  - The GBK attack after SET character_set_client = @v (@v = 'gbk') injects
#    without the shim and is blocked with it as what it is, read under gbk
#    (structure_mismatch, not state_unknown), never reaching the server; the
#    connection answers the next query; correctly escaped GBK text comes back
#    the same with and without the shim.
#  - A real mariadb-dump of tables with CJK, Latin-1 and GBK text, quotes and
#    backslashes, restored statement by statement through each client under
#    enforce: zero blocks, the same table contents as without the shim.
#  - SET NAMES DEFAULT, then UTF-8 text: the same with and without the shim.
#  - Inside TLS (PyMySQL, mysqli), the question through the program's SSL
#    object: the attack blocked under gbk, what the client reads the same.
#  - The question is invisible: affected rows, insert ids, warning counts,
#    info strings, ROW_COUNT(), FOUND_ROWS(), LAST_INSERT_ID(), SHOW WARNINGS
#    read around it are the same with and without the shim (the question did
#    run: it is in the server's general log and the debug log).
#  - Not asked, the query refused as before (state_unknown): SET
#    character_set_client = @v and the query in one write (pipelined); a
#    query that reads ROW_COUNT(); a compressed connection; audit mode
#    (which asks nothing and only logs).  A connection the server killed:
#    the client sees the same error as without the shim, at once.  A server
#    stopped while the question waits: after 10 s the client's write fails
#    and the connection is given up, its late answer read by no one.
# servers: mariadb
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/mariadb.sh

qg_require_build
my_available || tap_skip_all "no MariaDB server binaries (or not root)"
php -r 'exit(extension_loaded("mysqli") ? 0 : 1);' ||
    tap_bail "php8.2-mysql is not installed (scripts/install-deps installs it)"
/usr/bin/python3 -c 'import pymysql' || tap_bail "python3-pymysql is not installed"
command -v mariadb-dump >/dev/null || tap_skip_all "no mariadb-dump"
command -v openssl >/dev/null || tap_bail "openssl is not installed (scripts/install-deps installs it)"
QG_MY_SSL=1 my_start || tap_bail "cannot start MariaDB"
my_sql -e "CREATE DATABASE qg;
           CREATE TABLE qg.users (name VARBINARY(64), secret VARCHAR(64));
           INSERT INTO qg.users VALUES ('alice', 'secret_alice'), ('bob', 'secret_bob')" ||
    tap_bail "cannot create the tables"

W=tests/wire
PY=/usr/bin/python3
secrets() { printf '%s\n' "$1" | grep -ao 'secret_[a-z]*' | wc -l; }
probes() { grep -c '"event":"wire_probe"' "$1"; }
# the shim with its debug events (the question's answers) in the log
traced() { QUOTEGUARD_VERBOSE=2 with_shim "$@"; }

declare -A CLIENT=([pymysql]="$PY $W/mysql_probe.py" [mysqli]="php $W/mysql_probe.php")

for name in pymysql mysqli; do
    read -ra run <<<"${CLIENT[$name]}"
    # 1. SET character_set_client = @v, @v = 'gbk': the attack
    marker=qgp_${name}_plain_$$
    out=$(timeout 60 "${run[@]}" "$QG_MY_SOCKET" var attack "$marker" 2>&1)
    ok "$name, @v = 'gbk': without the shim the attack injects" [ "$(secrets "$out")" -eq 2 ]
    has "$(cat "$QG_MY_LOG")" "$marker" "$name, @v = 'gbk': without the shim it reaches the server"
    marker=qgp_${name}_enforce_$$
    log=$QG_MY_DIR/$name-var.log
    out=$(traced enforce "$log" timeout 60 "${run[@]}" "$QG_MY_SOCKET" var attack "$marker" 2>&1)
    matches "$out" "quoteguard: blocked structure_mismatch at byte [0-9]+ \\(gbk\\)" \
        "$name, @v = 'gbk': enforce blocks the attack read under gbk, which the server gave"
    lacks "$out" "secret_" "$name, @v = 'gbk': no secret leaks"
    lacks "$(cat "$QG_MY_LOG")" "$marker" "$name, @v = 'gbk': the statement never reaches the server"
    has "$out" "ALIVE: 1" "$name, @v = 'gbk': the connection answers the next query"
    has "$(cat "$log")" '"encoding":"gbk","conn"' "$name, @v = 'gbk': logged as blocked under gbk"
    ok "$name, @v = 'gbk': the server was asked once" [ "$(probes "$log")" -eq 1 ]
    plain=$(timeout 60 "${run[@]}" "$QG_MY_SOCKET" var legit qgp_legit 2>&1)
    shimmed=$(with_shim enforce "$QG_MY_DIR/$name-var-legit.log" timeout 60 "${run[@]}" \
        "$QG_MY_SOCKET" var legit qgp_legit 2>&1)
    has "$plain" "E7B8972778" "$name, @v = 'gbk' legit: the GBK text comes back"
    ok "$name, @v = 'gbk' legit: the same with the shim" [ "$plain" = "$shimmed" ] ||
        tap_diag "$shimmed"

    # 3. SET NAMES DEFAULT, then UTF-8 text with quotes and a backslash
    plain=$(timeout 60 "${run[@]}" "$QG_MY_SOCKET" names-default qgp_default 2>&1)
    log=$QG_MY_DIR/$name-default.log
    shimmed=$(traced enforce "$log" timeout 60 "${run[@]}" "$QG_MY_SOCKET" names-default \
        qgp_default 2>&1)
    has "$plain" "636166C3A920E8A1A8" "$name, SET NAMES DEFAULT: the UTF-8 text comes back"
    ok "$name, SET NAMES DEFAULT: the same with the shim" [ "$plain" = "$shimmed" ] ||
        tap_diag "$shimmed"
    ok "$name, SET NAMES DEFAULT: the server was asked" [ "$(probes "$log")" -eq 1 ]

    # what the client reads around the question
    plain=$(timeout 60 "${run[@]}" "$QG_MY_SOCKET" diag 2>&1)
    log=$QG_MY_DIR/$name-diag.log
    shimmed=$(traced enforce "$log" timeout 60 "${run[@]}" "$QG_MY_SOCKET" diag 2>&1)
    matches "$plain" 'AFTER: 1 .*[[(]"?2"?, ?"?5"?, ?"?6"?, ?"?1"?[])]' \
        "$name diag: ROW_COUNT() 2, FOUND_ROWS() 5, LAST_INSERT_ID() 6, one warning after the INSERT"
    has "$plain" "Data truncated for column 'b'" "$name diag: SHOW WARNINGS after a query that uses no table"
    ok "$name diag: everything the client reads is the same with the shim" [ "$plain" = "$shimmed" ] ||
        tap_diag "$(diff <(printf '%s\n' "$plain") <(printf '%s\n' "$shimmed") | head -n 10)"
    ok "$name diag: the server was asked before each query after SET character_set_client = @v" \
        [ "$(probes "$log")" -ge 3 ]
done
has "$(cat "$QG_MY_LOG")" "VALUES (@@character_set_client, @@sql_mode)" \
    "the question is in the server's general log"

# Inside TLS: the question goes through the program's SSL object.
for name in pymysql mysqli; do
    read -ra run <<<"${CLIENT[$name]}"
    out=$(timeout 60 "${run[@]}" "tls:$QG_MY_TCP_PORT" var attack qgp_${name}_tls_plain_$$ 2>&1)
    has "$out" "TLS: TLSv1" "$name over TLS: the connection is inside TLS"
    ok "$name over TLS, @v = 'gbk': without the shim the attack injects" [ "$(secrets "$out")" -eq 2 ]
    log=$QG_MY_DIR/$name-tls.log
    out=$(traced enforce "$log" timeout 60 "${run[@]}" "tls:$QG_MY_TCP_PORT" var attack \
        qgp_${name}_tls_$$ 2>&1)
    matches "$out" "quoteguard: blocked structure_mismatch at byte [0-9]+ \\(gbk\\)" \
        "$name over TLS, @v = 'gbk': blocked under gbk, which the server gave"
    lacks "$(cat "$QG_MY_LOG")" qgp_${name}_tls_$$ "$name over TLS: the statement never reaches the server"
    has "$out" "ALIVE: 1" "$name over TLS: the connection answers the next query"
    ok "$name over TLS: the server was asked once" [ "$(probes "$log")" -eq 1 ]
    plain=$(timeout 60 "${run[@]}" "tls:$QG_MY_TCP_PORT" diag 2>&1)
    log=$QG_MY_DIR/$name-tls-diag.log
    shimmed=$(traced enforce "$log" timeout 60 "${run[@]}" "tls:$QG_MY_TCP_PORT" diag 2>&1)
    has "$plain" "Data truncated for column 'b'" "$name over TLS diag: the warnings read"
    ok "$name over TLS diag: everything the client reads is the same with the shim" \
        [ "$plain" = "$shimmed" ] ||
        tap_diag "$(diff <(printf '%s\n' "$plain") <(printf '%s\n' "$shimmed") | head -n 10)"
    ok "$name over TLS diag: the server was asked" [ "$(probes "$log")" -ge 3 ]
done

# 2. mysqldump's output restored through each client.
my_sql <<'SQL' || tap_bail "cannot create the source tables"
CREATE DATABASE src;
USE src;
CREATE TABLE cjk (id INT PRIMARY KEY, a VARCHAR(100), b TEXT) DEFAULT CHARSET=utf8mb4;
INSERT INTO cjk VALUES (1, X'e4b8ade69687', X'27e8a1a85c27'), (2, X'f09f98802722', X'5c5c0a0d27'),
                       (3, X'e2809c5c6e275c', NULL), (4, 'plain', 'text');
CREATE TABLE lat (id INT PRIMARY KEY, a VARCHAR(100)) DEFAULT CHARSET=latin1;
INSERT INTO lat VALUES (1, X'e9e0fc27'), (2, X'5c27c3a9'), (3, X'a3b55c5c');
CREATE TABLE gbk (id INT PRIMARY KEY, a VARCHAR(100)) DEFAULT CHARSET=gbk;
INSERT INTO gbk VALUES (1, X'bf5c27'), (2, X'815c5c27d6d0cec4'), (3, X'955c0a');
SQL
dumpfile=$QG_MY_DIR/src.sql
env -u LD_PRELOAD mariadb-dump --no-defaults --socket="$QG_MY_SOCKET" -uroot src >"$dumpfile" ||
    tap_bail "mariadb-dump failed"
has "$(cat "$dumpfile")" "SET character_set_client = @saved_cs_client" \
    "the dump sets character_set_client from a variable around each table"
contents() { # DB: every row, as hex
    my_sql -e "SELECT id, HEX(a), HEX(b) FROM $1.cjk ORDER BY id;
               SELECT id, HEX(a) FROM $1.lat ORDER BY id; SELECT id, HEX(a) FROM $1.gbk ORDER BY id"
}
source_rows=$(contents src)
for name in pymysql mysqli; do
    read -ra run <<<"${CLIENT[$name]}"
    my_sql -e "CREATE DATABASE plain_$name; CREATE DATABASE shim_$name"
    out=$(timeout 120 "${run[@]}" "$QG_MY_SOCKET" restore "plain_$name" "$dumpfile" 2>&1)
    has "$out" "errors" "$name restore without the shim: done"
    log=$QG_MY_DIR/$name-restore.log
    shimmed=$(traced enforce "$log" timeout 120 "${run[@]}" "$QG_MY_SOCKET" restore \
        "shim_$name" "$dumpfile" 2>&1)
    has "$shimmed" " 0 errors" "$name restore under enforce: no statement fails" ||
        tap_diag "$shimmed"
    ok "$name restore under enforce: nothing blocked" [ "$(grep -c '"action":"blocked"' "$log")" -eq 0 ]
    ok "$name restore under enforce: the server was asked" [ "$(probes "$log")" -ge 1 ]
    ok "$name restore: the rows are the source's without the shim" \
        [ "$(contents "plain_$name")" = "$source_rows" ]
    ok "$name restore: and the same with the shim" [ "$(contents "shim_$name")" = "$source_rows" ]
done

# 4. Not asked: pipelined (a raw client writes the SET and the query in
# one write); with CLIENT_DEPRECATE_EOF, answered in turn: asked.
cd_wire() { (cd $W && "$@"); }
out=$(cd_wire timeout 60 "$PY" mysql_pipeline.py "$QG_MY_SOCKET" var-pipeline attack qgp_pipe_plain_$$ 2>&1)
ok "pipelined SET character_set_client = @v and the attack: injects without the shim" \
    [ "$(secrets "$out")" -eq 2 ]
log=$QG_MY_DIR/pipeline.log
out=$(cd_wire traced enforce "$log" timeout 60 "$PY" mysql_pipeline.py "$QG_MY_SOCKET" var-pipeline \
    attack qgp_pipe_$$ 2>&1)
has "$out" "quoteguard: blocked state_unknown" "pipelined: refused as before (state_unknown)"
lacks "$(cat "$QG_MY_LOG")" qgp_pipe_$$ "pipelined: the statement never reaches the server"
has "$out" "ROW: alive" "pipelined: the connection answers the next query"
ok "pipelined: the server was not asked" [ "$(probes "$log")" -eq 0 ]
out=$(cd_wire timeout 60 "$PY" mysql_pipeline.py "$QG_MY_SOCKET" var-eof attack qgp_eof_plain_$$ 2>&1)
ok "CLIENT_DEPRECATE_EOF, @v = 'gbk': injects without the shim" [ "$(secrets "$out")" -eq 2 ]
out=$(cd_wire with_shim enforce "$QG_MY_DIR/eof.log" timeout 60 "$PY" mysql_pipeline.py \
    "$QG_MY_SOCKET" var-eof attack qgp_eof_$$ 2>&1)
matches "$out" "quoteguard: blocked structure_mismatch at byte [0-9]+ \\(gbk\\)" \
    "CLIENT_DEPRECATE_EOF, @v = 'gbk': blocked under gbk (the answer read with OK packets)"
has "$out" "ROW: alive" "CLIENT_DEPRECATE_EOF: the connection answers the next query"

# A compressed connection (mysqli, MYSQLI_CLIENT_COMPRESS): followed, not asked.
out=$(timeout 60 php $W/mysql_probe.php "compress:$QG_MY_SOCKET" var attack qgp_zip_plain_$$ 2>&1)
has "$out" "COMPRESSION: ON" "compressed mysqli: the connection is compressed"
ok "compressed mysqli, @v = 'gbk': without the shim the attack injects" [ "$(secrets "$out")" -eq 2 ]
log=$QG_MY_DIR/compressed.log
out=$(traced enforce "$log" timeout 60 php $W/mysql_probe.php "compress:$QG_MY_SOCKET" var attack \
    qgp_zip_$$ 2>&1)
has "$out" "quoteguard: blocked state_unknown" "compressed mysqli: refused as before (state_unknown)"
has "$out" "ALIVE: 1" "compressed mysqli: the connection answers the next query"
ok "compressed mysqli: the server was not asked" [ "$(probes "$log")" -eq 0 ]

# A query that reads ROW_COUNT(), which the question would change: not asked.
log=$QG_MY_DIR/row-count.log
out=$(traced enforce "$log" timeout 60 "$PY" $W/mysql_probe.py "$QG_MY_SOCKET" row-count 2>&1)
has "$out" "quoteguard: blocked state_unknown" "a query that reads ROW_COUNT(): refused as before"
ok "a query that reads ROW_COUNT(): the server was not asked" [ "$(probes "$log")" -eq 0 ]
# Texts that read alike in every state need no question and are checked all
# the same: ROW_COUNT() as without the shim, an unterminated string blocked.
plain=$("$PY" $W/mysql_probe.py "$QG_MY_SOCKET" row-count 2>&1)
has "$out" "$(grep '^ALIKE:' <<<"$plain")" "ROW_COUNT() alone after it: passes, the same value as without the shim"
has "$out" "quoteguard: blocked unterminated" \
    "an unterminated string that reads alike: checked, blocked"

# Audit asks nothing, blocks nothing, logs state_unknown once for the
# connection.
log=$QG_MY_DIR/audit.log
out=$(traced audit "$log" timeout 60 "$PY" $W/mysql_probe.py "$QG_MY_SOCKET" var attack qgp_audit_$$ 3 2>&1)
ok "audit: the attack goes three times (audit never blocks)" [ "$(secrets "$out")" -eq 6 ]
ok "audit: logged as state_unknown once" [ "$(grep -c '"reason":"state_unknown"' "$log")" -eq 1 ] ||
    tap_diag "$(grep state_unknown "$log")"
ok "audit: the server was not asked" [ "$(probes "$log")" -eq 0 ]

# The server gone: the same error, at once.
plain=$(timeout 60 "$PY" $W/mysql_probe.py "$QG_MY_SOCKET" killed 2>&1)
shimmed=$(with_shim enforce "$QG_MY_DIR/killed.log" timeout 60 "$PY" $W/mysql_probe.py \
    "$QG_MY_SOCKET" killed 2>&1)
ok "a killed connection: the client sees the same as without the shim" [ "$plain" = "$shimmed" ] ||
    tap_diag "$plain / $shimmed"

# The server stopped (SIGSTOP for 15 s) while the question waits: after the
# front's 10 s the connection is given up, the client's write fails, and
# the answer that comes later is read by no one.
out=$(timeout 60 "$PY" $W/mysql_probe.py "$QG_MY_SOCKET" stopped "$QG_MY_PID" qgp_stop_plain_$$ 2>&1)
seconds() { sed -n 's/^SECONDS: //p' <<<"$1"; }
between() { [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }
waited=$(seconds "$out")
ok "server stopped: without the shim the query waits until it runs again" \
    between "${waited:-0}" 15 45 || tap_diag "waited ${waited:-?} s: $out"
log=$QG_MY_DIR/stopped.log
out=$(with_shim enforce "$log" timeout 60 "$PY" $W/mysql_probe.py "$QG_MY_SOCKET" stopped \
    "$QG_MY_PID" qgp_stop_$$ 2>&1)
waited=$(seconds "$out")
ok "server stopped: with the shim the question gives up after 10 s" \
    between "${waited:-0}" 10 14 || tap_diag "waited ${waited:-?} s"
has "$out" "Permission denied" "server stopped: the client's write fails (EACCES)"
lacks "$out" "RESULT:" "server stopped: no answer is read as the query's"
lacks "$out" "ALIVE: 1" "server stopped: the connection is given up"
has "$(cat "$log")" "left broken by the shim's own question about its state" \
    "server stopped: logged as wire_unguarded, with why"
lacks "$(cat "$QG_MY_LOG")" qgp_stop_$$ "server stopped: the query never reaches the server"

# node mysql2: a non-blocking socket, waited on for the answer.  It asks for
# session tracking, which reports the charset; sql_mode set by an EXECUTE
# is for the server to say.
modules=$(mktemp -d "${TMPDIR:-/tmp}/qg-npm.XXXXXX") || tap_bail "no temp dir"
qg_at_exit "rm -rf '$modules'"
cp tests/wire/node/package.json "$modules/"
command -v npm >/dev/null && (cd "$modules" && npm install --no-audit --no-fund --loglevel=error \
    >npm.log 2>&1) || tap_bail "npm install of mysql2 failed (node, npm and the npm registry are needed)"
export NODE_PATH=$modules/node_modules
node_run() { timeout 60 node tests/wire/node/node_mysql2_probe.js "$QG_MY_SOCKET" "$@"; }
out=$(node_run attack qgp_node_plain_$$ 2>&1)
ok "node, sql_mode set through EXECUTE: without the shim the attack injects" [ "$(secrets "$out")" -eq 2 ]
log=$QG_MY_DIR/node.log
out=$(traced enforce "$log" timeout 60 node tests/wire/node/node_mysql2_probe.js "$QG_MY_SOCKET" \
    attack qgp_node_$$ 2>&1)
has "$out" "quoteguard: blocked structure_mismatch" \
    "node: blocked as read with NO_BACKSLASH_ESCAPES, which the server gave"
lacks "$(cat "$QG_MY_LOG")" qgp_node_$$ "node: the statement never reaches the server"
has "$out" 'ALIVE: [{"a":"alive"}]' "node: the connection answers the next query"
ok "node: the server was asked" [ "$(probes "$log")" -eq 1 ]
plain=$(node_run legit qgp_node_legit 2>&1)
shimmed=$(with_shim enforce "$QG_MY_DIR/node-legit.log" timeout 60 node \
    tests/wire/node/node_mysql2_probe.js "$QG_MY_SOCKET" legit qgp_node_legit 2>&1)
has "$plain" "636166C3A9205C20E8A1A8" "node legit: the text with its backslash comes back"
ok "node legit: the same with the shim" [ "$plain" = "$shimmed" ] || tap_diag "$shimmed"

tap_done
