#!/bin/bash
# The wire front inside TLS: servers with TLS on (a self-signed certificate),
# clients whose driver speaks the protocol over the system OpenSSL.
# PostgreSQL: psycopg 3 as Debian ships it (libpq through ctypes,
# sslmode=require; the dlsym front gives it the libpq front, which checks
# before encryption) and pg8000 (ssl=True), after `SET client_encoding` and
# `SET standard_conforming_strings TO off` queries; MariaDB: PHP mysqli
# (mysqlnd, MYSQLI_CLIENT_SSL) and PDO_mysql with their escapers, PyMySQL
# (ssl={…}) with addslashes, and the mariadb client's script, after
# `SET NAMES`.  For each: the connection is encrypted (the server says so),
# the attack injects without the shim; with it the query is replaced by one
# the server answers with an ordinary error naming quoteguard, the attack's
# marker never reaches the server's log, the connection stays usable, and no
# `wire_unguarded` line says the connection went unread.  Legitimate text round-trips the same with and without the
# shim; audit changes nothing.  Non-blocking writers that wait on
# SSL_ERROR_WANT_WRITE (Python; C with and without partial writes) keep an
# exact stream around the replaced query.  psql and Ruby's mysql2 over TLS
# are checked once, by the libpq / libmariadb front (the library's own
# SSL_write carries the query past the wire front, which leaves it alone).  TLS the shim cannot follow (asyncio's memory BIOs, a BIO that
# hides the socket, an SSL_write from libssl's own handle) is refused in
# enforce before a query leaves (EACCES, the program fails with its own
# error) and passes in audit and with wire_unguarded = pass, said once.
# servers: pg mariadb
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/pg.sh
. tests/lib/mariadb.sh

qg_require_build clients/ssl_pg_pipeline clients/ssl_pg_hidden
pg_available || tap_skip_all "no PostgreSQL server binaries (or not root)"
my_available || tap_skip_all "no MariaDB server binaries (or not root)"
PY=/usr/bin/python3
command -v openssl >/dev/null || tap_bail "openssl is not installed (scripts/install-deps installs it)"
"$PY" -c 'import pg8000, psycopg, pymysql' ||
    tap_bail "python3-pg8000 / python3-psycopg / python3-pymysql are not installed"
php -r 'exit(extension_loaded("mysqli") ? 0 : 1);' || tap_bail "php8.2-mysql is not installed"
ruby -e 'require "mysql2"' 2>/dev/null || tap_bail "ruby-mysql2 is not installed"

QG_PG_SSL=1 pg_start || tap_bail "cannot start PostgreSQL with TLS"
pg_psql -c "CREATE TABLE users(name text, secret text);
            INSERT INTO users VALUES ('alice', 'secret_alice'), ('bob', 'secret_bob')" \
    || tap_bail "cannot create the table"
QG_MY_SSL=1 my_start || tap_bail "cannot start MariaDB with TLS"
my_sql -e "CREATE DATABASE qg;
           CREATE TABLE qg.users (name VARBINARY(64), secret VARCHAR(64));
           INSERT INTO qg.users VALUES ('alice', 'secret_alice'), ('bob', 'secret_bob');
           CREATE TABLE qg.rt (id INT, b VARBINARY(64))" || tap_bail "cannot create the tables"
# every PostgreSQL client below goes over TCP with TLS
export PGHOST=127.0.0.1 PGSSLMODE=require
MY=tls:$QG_MY_TCP_PORT

ATTACK_TAIL=27204f5220313d31202d2d20 # ' OR 1=1 --
secrets() { printf '%s\n' "$1" | grep -ac '^ROW: secret_'; }
W=tests/wire

# ------------------------------------------------------------ PostgreSQL
for driver in psycopg pg8000; do
    api='wire:Parse' names='quoteguard: blocked structure_mismatch'
    # psycopg drops the text before the first colon of libpq's message (the severity)
    [ "$driver" = psycopg ] && api='PQsendQuery' names='blocked structure_mismatch'
    for case in "SJIS 95" "GBK bf"; do
        read -r enc lead <<<"$case"
        tag="pg $driver $enc over TLS"
        out=$("$PY" $W/pg_clients.py "$driver" "$enc" "$lead$ATTACK_TAIL" qgt_plain_${driver}_${enc}_$$ 2>&1)
        has "$out" "TLS: True" "$tag: the server sees an encrypted connection"
        ok "$tag: without the shim the attack injects (both secrets)" [ "$(secrets "$out")" -eq 2 ]

        marker=qgt_enforce_${driver}_${enc}_$$
        log=$QG_PG_DIR/enforce-$driver-$enc.log
        out=$(with_shim enforce "$log" "$PY" $W/pg_clients.py "$driver" "$enc" "$lead$ATTACK_TAIL" "$marker" 2>&1)
        has "$out" "TLS: True" "$tag: enforce: still encrypted"
        has "$out" "$names" "$tag: enforce: an ordinary error naming the block"
        lacks "$out" "ROW: secret_" "$tag: enforce: no secret leaks"
        lacks "$(cat "$QG_PG_LOG")" "$marker" "$tag: enforce: the attack never reaches the server"
        has "$out" "ALIVE: alive" "$tag: enforce: after a rollback the connection works"
        has "$(cat "$log")" "\"action\":\"blocked\",\"api\":\"$api\",\"dialect\":\"postgres\",\"encoding\":\"$enc\"" \
            "$tag: enforce: blocked ($api) with the encoding the server reported through TLS"
        lacks "$(cat "$log")" "wire_unguarded" "$tag: enforce: the connection is followed, not left unread"
    done
    plain=$("$PY" $W/pg_clients.py "$driver" SJIS - - 2>&1)
    log=$QG_PG_DIR/legit-$driver.log
    shimmed=$(with_shim enforce "$log" "$PY" $W/pg_clients.py "$driver" SJIS - - 2>&1)
    has "$plain" "ROW: e8a1a8275c" "pg $driver legit over TLS: 表'\\ round-trips in SJIS without the shim"
    ok "pg $driver legit over TLS: the same output with the shim" [ "$plain" = "$shimmed" ]
    lacks "$(cat "$log" 2>/dev/null)" '"action"' "pg $driver legit over TLS: nothing logged as a finding"
done

marker=qgt_audit_$$
log=$QG_PG_DIR/audit.log
out=$(with_shim audit "$log" "$PY" $W/pg_clients.py pg8000 SJIS "95$ATTACK_TAIL" "$marker" 2>&1)
ok "pg audit over TLS: the attack goes through unchanged" [ "$(secrets "$out")" -eq 2 ]
has "$(cat "$QG_PG_LOG")" "$marker" "pg audit over TLS: the statement reached the server as sent"
has "$(cat "$log")" '"action":"logged","api":"wire:Parse"' "pg audit over TLS: the finding is logged"

# A non-blocking writer: one SSL_write of a 16 MB pipeline of queries with
# the attack in the middle, retried with the same bytes whenever OpenSSL
# says SSL_ERROR_WANT_WRITE (the server stops reading while its answers are
# not read).  The stream around the replaced query stays exact.
pipeline=("$PY" $W/pg_tls_pipeline.py 127.0.0.1 "$PGPORT" "$PGUSER" "$PGDATABASE")
plain=$("${pipeline[@]}" qgt_pipe_plain_$$ 800 2>&1)
has "$plain" "WAITED: yes" "pg pipeline over TLS: the writes had to wait (SSL_ERROR_WANT_WRITE)"
ok "pg pipeline over TLS: without the shim the attack injects" [ "$(secrets "$plain")" -eq 2 ]
marker=qgt_pipe_$$
out=$(with_shim enforce "$QG_PG_DIR/pipeline.log" "${pipeline[@]}" "$marker" 800 2>&1)
has "$out" "WAITED: yes" "pg pipeline over TLS: enforce: the writes had to wait"
has "$out" "ERROR: quoteguard: blocked structure_mismatch" "pg pipeline over TLS: enforce: the attack is answered with an error"
lacks "$out" "ROW: secret_" "pg pipeline over TLS: enforce: no secret leaks"
lacks "$(cat "$QG_PG_LOG")" "$marker" "pg pipeline over TLS: enforce: the attack never reaches the server"
has "$out" "READY: 800" "pg pipeline over TLS: enforce: every query of the pipeline is answered"
ok "pg pipeline over TLS: enforce: the other 799 answers are identical" \
    [ "$(grep '^DIGEST' <<<"$out")" = "$(grep '^DIGEST' <<<"$plain")" ]
has "$out" "ALIVE: yes" "pg pipeline over TLS: enforce: the connection works after it"

# The same from C on OpenSSL itself, with SSL_MODE_ENABLE_PARTIAL_WRITE on
# (short counts: the program moves on past what was taken) and off.
for how in partial whole; do
    c_pipeline=("$QG_BUILD/clients/ssl_pg_pipeline" "$PGPORT" "$PGUSER" "$PGDATABASE")
    plain=$("${c_pipeline[@]}" qgt_cpipe_plain_${how}_$$ 800 "$how" 2>&1)
    ok "pg C pipeline over TLS ($how writes): without the shim the attack injects" [ "$(secrets "$plain")" -eq 2 ]
    has "$plain" "WAITED: yes" "pg C pipeline over TLS ($how writes): the writes had to wait (SSL_ERROR_WANT_WRITE)"
    marker=qgt_cpipe_${how}_$$
    out=$(with_shim enforce "$QG_PG_DIR/cpipe-$how.log" "${c_pipeline[@]}" "$marker" 800 "$how" 2>&1)
    [ "$how" = partial ] && has "$out" "SHORT WRITES: yes" "pg C pipeline over TLS (partial writes): enforce: OpenSSL returned short counts"
    has "$out" "ERROR: quoteguard: blocked structure_mismatch" "pg C pipeline over TLS ($how writes): enforce: the attack is answered with an error"
    lacks "$out" "ROW: secret_" "pg C pipeline over TLS ($how writes): enforce: no secret leaks"
    lacks "$(cat "$QG_PG_LOG")" "$marker" "pg C pipeline over TLS ($how writes): enforce: the attack never reaches the server"
    has "$out" "WAITED: yes" "pg C pipeline over TLS ($how writes): enforce: the writes had to wait"
    has "$out" "READY: 800" "pg C pipeline over TLS ($how writes): enforce: every query of the pipeline is answered"
    ok "pg C pipeline over TLS ($how writes): enforce: the other 799 answers are identical" \
        [ "$(grep '^DIGEST' <<<"$out")" = "$(grep '^DIGEST' <<<"$plain")" ]
    has "$out" "ALIVE: yes" "pg C pipeline over TLS ($how writes): enforce: the connection works after it"
done

# TLS the wire front cannot follow is refused in enforce before any of its
# bytes leaves: asyncio runs OpenSSL over memory BIOs and writes the socket
# itself, outside any SSL call.  Audit, and enforce with wire_unguarded =
# pass, let it pass; each says so once.
unguarded() { grep -ac '"event":"wire_unguarded"' "$1"; }
log=$QG_PG_DIR/asyncio.log
out=$(with_shim enforce "$log" "$PY" $W/pg_tls_asyncio.py 127.0.0.1 "$PGPORT" \
    "$PGUSER" "$PGDATABASE" qgt_asyncio_$$ 2>&1)
rc=$?
has "$out" "PermissionError: [Errno 13]" "pg asyncio over TLS (memory BIOs): enforce: its first TLS write fails with EACCES"
ok "pg asyncio over TLS (memory BIOs): enforce: the program ends with its own error, no signal" [ "$rc" -eq 1 ]
lacks "$out" "ROW: row_42" "pg asyncio over TLS (memory BIOs): enforce: no query ran"
lacks "$(cat "$QG_PG_LOG")" "qgt_asyncio_$$" "pg asyncio over TLS (memory BIOs): enforce: the query never reaches the server"
ok "pg asyncio over TLS (memory BIOs): enforce: said once (wire_unguarded)" [ "$(unguarded "$log")" -eq 1 ]
has "$(cat "$log")" '"level":"error","event":"wire_unguarded","detail":"quoteguard: refused (EACCES): a database connection that went on in TLS that' \
    "pg asyncio over TLS (memory BIOs): enforce: logged as a refusal naming quoteguard"
for how in audit pass; do
    log=$QG_PG_DIR/asyncio-$how.log
    if [ "$how" = audit ]; then
        out=$(with_shim audit "$log" "$PY" $W/pg_tls_asyncio.py 127.0.0.1 "$PGPORT" "$PGUSER" "$PGDATABASE" qgt_asyncio_${how}_$$ 2>&1)
    else
        out=$(QUOTEGUARD_WIRE_UNGUARDED=pass with_shim enforce "$log" "$PY" $W/pg_tls_asyncio.py 127.0.0.1 "$PGPORT" "$PGUSER" "$PGDATABASE" qgt_asyncio_${how}_$$ 2>&1)
    fi
    has "$out" "ROW: row_42" "pg asyncio over TLS (memory BIOs): $how: its bytes pass unchanged"
    ok "pg asyncio over TLS (memory BIOs): $how: said once to be unread (wire_unguarded)" [ "$(unguarded "$log")" -eq 1 ]
    has "$(cat "$log")" '"level":"warning","event":"wire_unguarded","detail":"quoteguard: not checked:' \
        "pg asyncio over TLS (memory BIOs): $how: logged as a warning"
done

# The system OpenSSL on the socket, but not where the shim can follow it: a
# BIO of the program's own that hides the descriptor from SSL_get_fd, and an
# SSL_write looked up in libssl's own handle.  Refused in enforce: the query
# never leaves; audit lets it pass and says so.
hidden_sql="SELECT 'hidden_' || 42"
for how in bio handle; do
    before=$(grep -ac "$hidden_sql" "$QG_PG_LOG")
    log=$QG_PG_DIR/hidden-$how.log
    out=$(with_shim enforce "$log" "$QG_BUILD/clients/ssl_pg_hidden" "$PGPORT" "$PGUSER" "$PGDATABASE" "$how" 2>&1)
    rc=$?
    [ "$how" = bio ] && has "$out" "SSL_get_fd: none" "pg TLS over a BIO of the program's own: SSL_get_fd finds no socket"
    has "$out" "ssl_pg_hidden: SSL_write failed" "pg TLS the shim cannot tie to its socket ($how): enforce: SSL_write fails"
    ok "pg TLS the shim cannot tie to its socket ($how): enforce: the program exits with its own error" [ "$rc" -eq 1 ]
    ok "pg TLS the shim cannot tie to its socket ($how): enforce: the query never reaches the server" \
        [ "$(grep -ac "$hidden_sql" "$QG_PG_LOG")" -eq "$before" ]
    ok "pg TLS the shim cannot tie to its socket ($how): enforce: said once (wire_unguarded)" [ "$(unguarded "$log")" -eq 1 ]
    has "$(cat "$log")" '"level":"error","event":"wire_unguarded"' "pg TLS the shim cannot tie to its socket ($how): enforce: logged as a refusal"
    log=$QG_PG_DIR/hidden-$how-audit.log
    out=$(with_shim audit "$log" "$QG_BUILD/clients/ssl_pg_hidden" "$PGPORT" "$PGUSER" "$PGDATABASE" "$how" 2>&1)
    has "$out" "ROW: hidden_42" "pg TLS the shim cannot tie to its socket ($how): audit: its bytes pass unchanged"
    ok "pg TLS the shim cannot tie to its socket ($how): audit: said once to be unread (wire_unguarded)" [ "$(unguarded "$log")" -eq 1 ]
done

# psql: libpq's queries are the libpq front's; the wire front, which sees
# them again in libpq's SSL_write, leaves them alone.
script=$QG_PG_DIR/psql.sql
write_psql_script() { # RUN
    {
        printf "SELECT ssl AS tls FROM pg_stat_ssl WHERE pid = pg_backend_pid();\n"
        printf "SET standard_conforming_strings = off;\n"
        printf "SET client_encoding = 'SJIS';\n"
        printf "SELECT /*qgt_psql_%s*/ secret FROM users WHERE name = '\x95\x5c' OR 1=1 --'\n;\n" "$1"
        printf "SELECT 'still_' || 'alive' AS v;\n"
    } >"$script"
}
write_psql_script plain_$$
out=$("$QG_PG_BIN/psql" -X -At -f "$script" 2>&1)
ok "psql over TLS: the server sees an encrypted connection" [ "$(printf '%s\n' "$out" | head -n 1)" = t ]
ok "psql over TLS: without the shim the attack injects" [ "$(printf '%s\n' "$out" | grep -c '^secret_')" -eq 2 ]
write_psql_script shim_$$
log=$QG_PG_DIR/psql.log
out=$(with_shim enforce "$log" "$QG_PG_BIN/psql" -X -At -f "$script" 2>&1)
has "$out" "quoteguard: blocked" "psql over TLS: enforce: the attack is blocked"
lacks "$out" "secret_" "psql over TLS: enforce: no secret leaks"
has "$out" "still_alive" "psql over TLS: enforce: the next statement runs"
lacks "$(cat "$QG_PG_LOG")" "qgt_psql_shim_$$" "psql over TLS: enforce: the attack never reaches the server"
has "$(cat "$log")" '"program":"psql","mode":"enforce","action":"blocked","api":"PQsendQuery"' \
    "psql over TLS: checked by the libpq front"
ok "psql over TLS: checked once (one finding)" [ "$(grep -ac '"action"' "$log")" -eq 1 ]
lacks "$(cat "$log")" '"api":"wire:' "psql over TLS: not checked again at the wire"
lacks "$(cat "$log")" "wire_unguarded" "psql over TLS: nothing said to be unread"

# ----------------------------------------------------------------- MariaDB
page() { # RUNNER… -- CLIENT CHARSET INPUT MARKER
    local -a runner=()
    while [ "$1" != -- ]; do runner+=("$1"); shift; done
    shift
    local client=$1 cs=$2 input=$3 marker=$4
    if [ "$client" = pymysql ]; then
        "${runner[@]}" "$PY" $W/mysql_pymysql.py "$MY" "$cs" "$input" "$marker"
    else
        "${runner[@]}" php $W/mysql_page.php "$MY" "$client" "$cs" real_escape_string "$input" "$marker"
    fi
}
for client in mysqli pdo pymysql; do
    for case in "gbk bf" "sjis 95"; do
        read -r cs lead <<<"$case"
        tag="mysql $client $cs over TLS"
        out=$(page env -- "$client" "$cs" "$lead$ATTACK_TAIL" qgt_plain_${client}_${cs}_$$ 2>&1)
        matches "$out" '^TLS: TLSv1' "$tag: the server sees an encrypted connection"
        ok "$tag: without the shim the attack injects (both secrets)" [ "$(secrets "$out")" -eq 2 ]

        marker=qgt_enforce_${client}_${cs}_$$
        log=$QG_MY_DIR/enforce-$client-$cs.log
        out=$(page with_shim enforce "$log" -- "$client" "$cs" "$lead$ATTACK_TAIL" "$marker" 2>&1)
        matches "$out" '^TLS: TLSv1' "$tag: enforce: still encrypted"
        matches "$out" '^ERROR: 1105 (45000 )?quoteguard: blocked structure_mismatch' \
            "$tag: enforce: an ordinary server error 1105 naming quoteguard"
        lacks "$out" "ROW: secret_" "$tag: enforce: no secret leaks"
        lacks "$(cat "$QG_MY_LOG")" "$marker" "$tag: enforce: the attack never reaches the server"
        has "$out" "ALIVE: alive" "$tag: enforce: the next query on the connection works"
        has "$(cat "$log")" "\"action\":\"blocked\",\"api\":\"wire:COM_QUERY\",\"dialect\":\"mysql\",\"encoding\":\"$cs\"" \
            "$tag: enforce: blocked at the wire with the charset the SET NAMES set"
        lacks "$(cat "$log")" "wire_unguarded" "$tag: enforce: the connection is followed, not left unread"
    done
done

plain=$(php $W/mysql_legit.php "$MY" mysqli sjis 955c275c 2>&1)
log=$QG_MY_DIR/legit.log
shimmed=$(with_shim enforce "$log" php $W/mysql_legit.php "$MY" mysqli sjis 955c275c 2>&1)
has "$plain" "ROW: 2 955C275C" "mysql mysqli legit over TLS: the text round-trips without the shim"
ok "mysql mysqli legit over TLS: the page is byte-identical with the shim" [ "$plain" = "$shimmed" ]
lacks "$(cat "$log" 2>/dev/null)" '"action"' "mysql mysqli legit over TLS: nothing logged as a finding"

# The mariadb client: its own copy of the client library, the system libssl.
marker=qgt_cli_$$
printf "SHOW SESSION STATUS LIKE 'Ssl_version';\nSET NAMES gbk;\nSELECT secret, '%s' FROM users WHERE name = '\xbf\\\\' OR 1=1 -- ';\nSELECT 'still_alive';\n" \
    "$marker" >"$QG_MY_DIR/cli.sql"
cli() { "$@" mariadb --no-defaults -h127.0.0.1 -P"$QG_MY_TCP_PORT" --ssl --skip-ssl-verify-server-cert \
    -uroot --force qg <"$QG_MY_DIR/cli.sql" 2>&1; }
out=$(cli env)
matches "$out" '^Ssl_version.TLSv1' "mysql mariadb CLI over TLS: the server sees an encrypted connection"
ok "mysql mariadb CLI over TLS: without the shim the attack injects" [ "$(grep -c '^secret_' <<<"$out")" -eq 2 ]
sed -i "s/$marker/${marker}_shim/" "$QG_MY_DIR/cli.sql"
log=$QG_MY_DIR/cli.log
out=$(cli with_shim enforce "$log")
matches "$out" 'ERROR 1105 \(45000\) at line 3: quoteguard: blocked structure_mismatch' \
    "mysql mariadb CLI over TLS: enforce: the statement fails with an error naming quoteguard"
lacks "$out" "secret_" "mysql mariadb CLI over TLS: enforce: no secret leaks"
has "$out" "still_alive" "mysql mariadb CLI over TLS: enforce: the rest of the script runs"
lacks "$(cat "$QG_MY_LOG")" "${marker}_shim" "mysql mariadb CLI over TLS: enforce: the attack never reaches the server"
lacks "$(cat "$log")" "wire_unguarded" "mysql mariadb CLI over TLS: enforce: the connection is followed"

# Ruby's mysql2 on libmariadb: the libmariadb front checks its queries, and
# the wire front, which sees them again in libmariadb's SSL_write, leaves
# them alone.
out=$(ruby $W/mysql_ruby.rb "$MY" gbk "bf$ATTACK_TAIL" qgt_rb_plain_$$ 2>&1)
matches "$out" '^TLS: TLSv1' "mysql Ruby mysql2 over TLS: the server sees an encrypted connection"
ok "mysql Ruby mysql2 over TLS: without the shim the attack injects" [ "$(secrets "$out")" -eq 2 ]
marker=qgt_rb_$$
log=$QG_MY_DIR/ruby.log
out=$(with_shim enforce "$log" ruby $W/mysql_ruby.rb "$MY" gbk "bf$ATTACK_TAIL" "$marker" 2>&1)
matches "$out" '^ERROR: 1105 quoteguard: blocked structure_mismatch' "mysql Ruby mysql2 over TLS: enforce: an ordinary Mysql2::Error naming quoteguard"
has "$out" "ALIVE: alive" "mysql Ruby mysql2 over TLS: enforce: the connection stays usable"
lacks "$(cat "$QG_MY_LOG")" "$marker" "mysql Ruby mysql2 over TLS: enforce: the attack never reaches the server"
has "$(cat "$log")" '"action":"blocked","api":"mysql_send_query"' "mysql Ruby mysql2 over TLS: checked by the libmariadb front"
ok "mysql Ruby mysql2 over TLS: checked once (one finding)" [ "$(grep -ac '"action"' "$log")" -eq 1 ]
lacks "$(cat "$log")" '"api":"wire:' "mysql Ruby mysql2 over TLS: not checked again at the wire"
lacks "$(cat "$log")" "wire_unguarded" "mysql Ruby mysql2 over TLS: nothing said to be unread"

marker=qgt_my_audit_$$
log=$QG_MY_DIR/audit.log
out=$(page with_shim audit "$log" -- pymysql gbk "bf$ATTACK_TAIL" "$marker" 2>&1)
ok "mysql audit over TLS: the attack goes through unchanged" [ "$(secrets "$out")" -eq 2 ]
has "$(cat "$QG_MY_LOG")" "$marker" "mysql audit over TLS: the statement reached the server as sent"
has "$(cat "$log")" '"action":"logged","api":"wire:COM_QUERY"' "mysql audit over TLS: the finding is logged"

tap_done
