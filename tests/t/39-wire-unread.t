#!/bin/bash
# Wire connections the shim cannot read: refused in enforce, passed and said
# once in audit.  MariaDB's compressed protocol: enforce hides the server's
# offer of compression from the clients the wire front reads, so the
# `mariadb` client with --compress runs uncompressed and is checked (the
# attack injects without the shim, is blocked with it, absent from the
# general log; a legitimate script's rows are identical); PHP's mysqlnd
# (mysqli MYSQLI_CLIENT_COMPRESS, PDO::MYSQL_ATTR_COMPRESS) asks for
# compression whatever the server offers, so its handshake response goes as a
# login the server refuses, without compression, for the user
# 'quoteguard: compression refused' (the connect fails with the server's
# error naming quoteguard, plain and over TLS; the attack never reaches the
# server; the page goes on and connects without compression); MySQLdb (libmariadb, checked by the
# library front) keeps its compression.  PostgreSQL: Java's own TLS (JDBC,
# sslmode=require) and node's (its built-in OpenSSL) are refused at their
# first TLS byte, the socket given up so that the program does not wait for
# the server's timeout; a GSSENCRequest
# answered 'G' has its next write refused (EACCES), and so does a write from
# a message no framing can follow on (the Query before it goes and is
# answered).  Audit, and enforce with
# wire_unguarded = pass, let each pass and log `wire_unguarded` once.
# servers: pg mariadb
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/pg.sh
. tests/lib/mariadb.sh

qg_require_build
PY=/usr/bin/python3
PG_JAR=/usr/share/java/postgresql.jar
php -r 'exit(extension_loaded("mysqli") && extension_loaded("pdo_mysql") ? 0 : 1);' ||
    tap_bail "php8.2-mysql is not installed"
"$PY" -c 'import MySQLdb' || tap_bail "python3-mysqldb is not installed"
command -v java >/dev/null && [ -f "$PG_JAR" ] || tap_bail "java and libpostgresql-jdbc-java are needed"
command -v node >/dev/null || tap_bail "node is needed (scripts/install-deps)"
pg_available || tap_skip_all "no PostgreSQL server binaries (or not root)"
my_available || tap_skip_all "no MariaDB server binaries (or not root)"

QG_MY_SSL=1 my_start || tap_bail "cannot start MariaDB with TLS"
my_sql -e "CREATE DATABASE qg; CREATE TABLE qg.users (name VARBINARY(64), secret VARCHAR(64));
           INSERT INTO qg.users VALUES ('alice', 'secret_alice'), ('bob', 'secret_bob')" ||
    tap_bail "cannot create the table"
QG_PG_SSL=1 pg_start || tap_bail "cannot start PostgreSQL with TLS"
pg_psql -c "CREATE TABLE users(name text, secret text);
            INSERT INTO users VALUES ('alice', 'secret_alice'), ('bob', 'secret_bob')" >/dev/null ||
    tap_bail "cannot create the PG table"

ATTACK=bf27204f5220313d31202d2d20 # GBK bf, then ' OR 1=1 --
secrets() { printf '%s\n' "$1" | grep -ac '^ROW: secret_'; }
unguarded() { grep -ac '"event":"wire_unguarded"' "$1"; }
in_general_log() { grep -ac "$1" "$QG_MY_LOG"; }

# ------------------------------------------------------- PHP (mysqlnd)
# cases: API SOCKET (over TLS: tls:PORT)
for case in "mysqli $QG_MY_SOCKET" "pdo $QG_MY_SOCKET" "mysqli tls:$QG_MY_TCP_PORT"; do
    read -r api sock <<<"$case"
    tag="mysql $api compressed" id=${api}_unix
    [ "$sock" = "$QG_MY_SOCKET" ] || tag="$tag over TLS" id=${api}_tls
    page() { php tests/wire/mysql_compress.php "$sock" "$api" gbk "$@"; }
    out=$(page "$ATTACK" qgu_plain_${id}_$$ 2>&1)
    has "$out" "COMPRESSION: ON" "$tag: without the shim the connection is compressed"
    ok "$tag: without the shim the attack injects (both secrets)" [ "$(secrets "$out")" -eq 2 ]

    marker=qgu_enforce_${id}_$$
    log=$QG_MY_DIR/enforce-$id.log
    out=$(with_shim enforce "$log" php tests/wire/mysql_compress.php "$sock" "$api" gbk "$ATTACK" "$marker" 2>&1)
    rc=$?
    matches "$out" "^CONNECT ERROR: 1045 .*Access denied for user 'quoteguard: compression refused'" \
        "$tag: enforce: the connect fails with the server's error, naming quoteguard"
    lacks "$out" "ROW: secret_" "$tag: enforce: no secret leaks"
    ok "$tag: enforce: the attack never reaches the server" [ "$(in_general_log "$marker")" -eq 0 ]
    has "$out" "UNCOMPRESSED AFTER: works" "$tag: enforce: the page goes on and connects without compression"
    ok "$tag: enforce: the program ends normally" [ "$rc" -eq 0 ]
    ok "$tag: enforce: said once (wire_unguarded)" [ "$(unguarded "$log")" -eq 1 ]
    has "$(cat "$log")" '"level":"error","event":"wire_unguarded","detail":"quoteguard: refused (EACCES): a database connection that went on in the MySQL compressed protocol, which the client asked for (its login went as one the server refuses, naming quoteguard)' \
        "$tag: enforce: logged as a refusal naming quoteguard and compression"
    rm -f "$log"

    for how in audit pass; do
        marker=qgu_${how}_${id}_$$
        log=$QG_MY_DIR/$how-$id.log
        rm -f "$log"
        if [ "$how" = audit ]; then
            out=$(with_shim audit "$log" php tests/wire/mysql_compress.php "$sock" "$api" gbk "$ATTACK" "$marker" 2>&1)
        else
            out=$(QUOTEGUARD_WIRE_UNGUARDED=pass with_shim enforce "$log" php tests/wire/mysql_compress.php "$sock" "$api" gbk "$ATTACK" "$marker" 2>&1)
        fi
        has "$out" "COMPRESSION: ON" "$tag: $how: the connection stays compressed"
        ok "$tag: $how: its queries pass unread (the attack goes as sent)" [ "$(in_general_log "$marker")" -eq 1 ]
        ok "$tag: $how: said once (wire_unguarded)" [ "$(unguarded "$log")" -eq 1 ]
        has "$(cat "$log")" '"level":"warning","event":"wire_unguarded","detail":"quoteguard: not checked:' \
            "$tag: $how: logged as a warning"
    done
    plain=$(page - qgu_legit_${id}_$$ 2>&1)
    shimmed=$(with_shim audit "$QG_MY_DIR/legit-$id.log" php tests/wire/mysql_compress.php "$sock" "$api" gbk - qgu_legit_${id}_$$ 2>&1)
    has "$plain" "ROW: C4E3275C" "$tag: a legitimate page's text round-trips"
    ok "$tag: audit: a legitimate page's output identical with the shim" [ "$plain" = "$shimmed" ]
done

# --------------------------------------------- the mariadb client (--compress)
script=$QG_MY_DIR/cli.sql
write_script() { # MARKER INPUT-LINE
    printf "SHOW SESSION STATUS LIKE 'Compression';\nSET NAMES gbk;\n%s\nSELECT 'still_alive';\n" "$2" >"$script"
}
cli() { "$@" mariadb --no-defaults -S "$QG_MY_SOCKET" -uroot --compress --force qg <"$script" 2>&1; }
attack_line() { printf "SELECT secret, '%s' FROM users WHERE name = '\xbf\\\\' OR 1=1 -- ';" "$1"; }
write_script - "$(attack_line qgu_cli_plain_$$)"
out=$(cli env)
matches "$out" '^Compression.ON' "mysql mariadb CLI --compress: without the shim the connection is compressed"
ok "mysql mariadb CLI --compress: without the shim the attack injects" [ "$(grep -ac '^secret_' <<<"$out")" -eq 2 ]
marker=qgu_cli_$$
write_script - "$(attack_line "$marker")"
log=$QG_MY_DIR/cli.log
out=$(cli with_shim enforce "$log")
matches "$out" '^Compression.OFF' "mysql mariadb CLI --compress: enforce: the server's offer hidden, the connection runs uncompressed"
matches "$out" 'ERROR 1105 \(45000\) at line 3: quoteguard: blocked structure_mismatch' \
    "mysql mariadb CLI --compress: enforce: the attack fails with an error naming quoteguard"
lacks "$out" "secret_" "mysql mariadb CLI --compress: enforce: no secret leaks"
has "$out" "still_alive" "mysql mariadb CLI --compress: enforce: the rest of the script runs"
ok "mysql mariadb CLI --compress: enforce: the attack never reaches the server" [ "$(in_general_log "$marker")" -eq 0 ]
ok "mysql mariadb CLI --compress: enforce: followed, nothing said unread" [ "$(unguarded "$log")" -eq 0 ]
write_script - $'SELECT HEX(\'\xc4\xe3\\\'\\\\\'), \'qgu_legit\';' # GBK c4 e3, a quote, a backslash
plain=$(cli env)
shimmed=$(cli with_shim enforce "$QG_MY_DIR/cli-legit.log")
ok "mysql mariadb CLI --compress: legitimate rows identical with the shim (all but the Compression line)" \
    [ "$(grep -av '^Compression' <<<"$plain")" = "$(grep -av '^Compression' <<<"$shimmed")" ]
has "$plain" "C4E3275C" "mysql mariadb CLI --compress: the legitimate text round-trips"
write_script - "$(attack_line qgu_cli_audit_$$)"
log=$QG_MY_DIR/cli-audit.log
out=$(cli with_shim audit "$log")
matches "$out" '^Compression.ON' "mysql mariadb CLI --compress: audit: no byte changed, the connection compressed"
ok "mysql mariadb CLI --compress: audit: the attack goes as sent" [ "$(in_general_log qgu_cli_audit_$$)" -eq 1 ]
ok "mysql mariadb CLI --compress: audit: said once (wire_unguarded)" [ "$(unguarded "$log")" -eq 1 ]

# ------------------------------ MySQLdb: libmariadb, checked by its front
mysqldb() { # RUNNER… -- MARKER
    local -a runner=()
    while [ "$1" != -- ]; do runner+=("$1"); shift; done
    "${runner[@]}" "$PY" -c '
import sys, MySQLdb
c = MySQLdb.connect(unix_socket=sys.argv[1], user="root", db="qg", compress=1)
cur = c.cursor()
cur.execute("SHOW SESSION STATUS LIKE %s", ("Compression",))
print("COMPRESSION:", cur.fetchone()[1])
cur.execute("SET NAMES gbk")
try:
    cur.execute(b"SELECT /*" + sys.argv[2].encode() + b"*/ secret FROM users WHERE name = '"'"'\xbf\\'"'"' OR 1=1 -- '"'"'")
    for r in cur.fetchall(): print("ROW:", r[0])
except MySQLdb.Error as e:
    print("ERROR:", e.args[0], e.args[1])
cur.execute("SELECT %s", ("alive",))
print("ALIVE:", cur.fetchone()[0])' "$QG_MY_SOCKET" "$2"
}
out=$(mysqldb env -- qgu_mdb_plain_$$ 2>&1)
ok "mysql MySQLdb compress=1: without the shim the attack injects" [ "$(secrets "$out")" -eq 2 ]
marker=qgu_mdb_$$
log=$QG_MY_DIR/mysqldb.log
out=$(mysqldb with_shim enforce "$log" -- "$marker" 2>&1)
has "$out" "COMPRESSION: ON" "mysql MySQLdb compress=1: enforce: the library's connection keeps its compression"
has "$out" "ERROR: 1105 quoteguard: blocked" "mysql MySQLdb compress=1: enforce: the attack is blocked by the libmariadb front"
ok "mysql MySQLdb compress=1: enforce: the attack never reaches the server" [ "$(in_general_log "$marker")" -eq 0 ]
has "$out" "ALIVE: alive" "mysql MySQLdb compress=1: enforce: the connection stays usable"
ok "mysql MySQLdb compress=1: enforce: nothing said unread" [ "$(unguarded "$log")" -eq 0 ]

# ------------------------------------------- PostgreSQL: JDBC over JSSE
jdbc() { # RUNNER… -- MARKER
    local -a runner=()
    while [ "$1" != -- ]; do runner+=("$1"); shift; done
    "${runner[@]}" java -cp "$PG_JAR" tests/wire/JdbcLegacy.java \
        "jdbc:postgresql://127.0.0.1:$PGPORT/$PGDATABASE?sslmode=require" "$PGUSER" \
        "SET standard_conforming_strings TO off" double "\\' OR 1=1 -- " "$2"
}
out=$(jdbc env -- qgu_jdbc_plain_$$ 2>&1)
ok "pg JDBC over TLS (JSSE): without the shim the attack injects" [ "$(secrets "$out")" -eq 2 ]
has "$(cat "$QG_PG_LOG")" "qgu_jdbc_plain_$$" "pg JDBC over TLS (JSSE): without the shim the statement is in the server's log"
marker=qgu_jdbc_$$
log=$QG_PG_DIR/jdbc.log
out=$(jdbc with_shim enforce "$log" -- "$marker" 2>&1)
rc=$?
lacks "$out" "ROW: secret_" "pg JDBC over TLS (JSSE): enforce: no secret leaks"
ok "pg JDBC over TLS (JSSE): enforce: the connection fails with an exception (exit 1), no signal" [ "$rc" -eq 1 ]
lacks "$(cat "$QG_PG_LOG")" "$marker" "pg JDBC over TLS (JSSE): enforce: the attack never reaches the server"
ok "pg JDBC over TLS (JSSE): enforce: said once (wire_unguarded)" [ "$(unguarded "$log")" -eq 1 ]
has "$(cat "$log")" '"level":"error","event":"wire_unguarded","detail":"quoteguard: refused (EACCES): a database connection that went on in TLS that' \
    "pg JDBC over TLS (JSSE): enforce: logged as a refusal naming quoteguard and TLS"
for how in audit pass; do
    marker=qgu_jdbc_${how}_$$
    log=$QG_PG_DIR/jdbc-$how.log
    if [ "$how" = audit ]; then
        out=$(jdbc with_shim audit "$log" -- "$marker" 2>&1)
    else
        out=$(QUOTEGUARD_WIRE_UNGUARDED=pass jdbc with_shim enforce "$log" -- "$marker" 2>&1)
    fi
    ok "pg JDBC over TLS (JSSE): $how: its bytes pass unread (the attack as without the shim)" [ "$(secrets "$out")" -eq 2 ]
    ok "pg JDBC over TLS (JSSE): $how: said once (wire_unguarded)" [ "$(unguarded "$log")" -eq 1 ]
done

# ------------------------------- PostgreSQL: node's own TLS (built-in OpenSSL)
node_tls() { "$@" node tests/wire/node/node_pg_tls.js 127.0.0.1 "$PGPORT" "$PGUSER" "$PGDATABASE" "$marker" 2>&1; }
marker=qgu_node_plain_$$
out=$(node_tls env)
has "$out" "ROW: node_42" "pg node over its own TLS: without the shim the query runs"
marker=qgu_node_$$
log=$QG_PG_DIR/node.log
started=$SECONDS
out=$(node_tls with_shim enforce "$log")
has "$out" "TLS ERROR:" "pg node over its own TLS: enforce: the TLS connection fails (its ClientHello refused)"
lacks "$out" "ROW: node_42" "pg node over its own TLS: enforce: no query ran"
ok "pg node over its own TLS: enforce: the program ends at once, not at the server's timeout (the socket is given up)" \
    [ $((SECONDS - started)) -lt 30 ]
lacks "$(cat "$QG_PG_LOG")" "$marker" "pg node over its own TLS: enforce: the query never reaches the server"
ok "pg node over its own TLS: enforce: said once (wire_unguarded)" [ "$(unguarded "$log")" -eq 1 ]
marker=qgu_node_audit_$$
log=$QG_PG_DIR/node-audit.log
out=$(node_tls with_shim audit "$log")
has "$out" "ROW: node_42" "pg node over its own TLS: audit: its bytes pass unread"
ok "pg node over its own TLS: audit: said once (wire_unguarded)" [ "$(unguarded "$log")" -eq 1 ]

# ------------------------- PostgreSQL: a message no framing can follow
unframed() { "$@" timeout 60 "$PY" tests/wire/pg_unframed.py "$PGHOST" "$PGPORT" "$PGUSER" "$PGDATABASE" 2>&1; }
broken() { grep -ac 'invalid message length' "$QG_PG_LOG"; }
before=$(broken)
out=$(unframed env)
has "$out" "WRITE: sent" "pg unframable message: without the shim the write goes"
ok "pg unframable message: without the shim the server reads the broken message" [ "$(broken)" -eq $((before + 1)) ]
before=$(broken)
log=$QG_PG_DIR/unframed.log
out=$(unframed with_shim enforce "$log")
has "$out" "WRITE: errno 13" "pg unframable message: enforce: the write fails with EACCES from the broken message on"
has "$out" "ROW: unframed_41" "pg unframable message: enforce: the Query before it went and its answer is read"
has "$out" "END" "pg unframable message: enforce: the program reaches its end (the server closed, no hang)"
ok "pg unframable message: enforce: the broken message never reaches the server" [ "$(broken)" -eq "$before" ]
ok "pg unframable message: enforce: said once (wire_unguarded)" [ "$(unguarded "$log")" -eq 1 ]
has "$(cat "$log")" 'that went on in a stream the wire front cannot frame cannot be checked' \
    "pg unframable message: enforce: the log says the stream cannot be framed"
log=$QG_PG_DIR/unframed-audit.log
out=$(unframed with_shim audit "$log")
has "$out" "WRITE: sent" "pg unframable message: audit: the write goes"
ok "pg unframable message: audit: the server reads it as without the shim" [ "$(broken)" -eq $((before + 1)) ]
ok "pg unframable message: audit: said once (wire_unguarded)" [ "$(unguarded "$log")" -eq 1 ]

# ------------------------------------- PostgreSQL: GSSAPI encryption asked
out=$("$PY" tests/wire/pg_gssenc.py 127.0.0.1 "$PGPORT" 2>&1)
has "$out" "ANSWER: G" "pg GSSENCRequest over TCP: the server answers 'G'"
has "$out" "WRITE: sent" "pg GSSENCRequest over TCP: without the shim the client's token goes"
log=$QG_PG_DIR/gss.log
out=$(with_shim enforce "$log" "$PY" tests/wire/pg_gssenc.py 127.0.0.1 "$PGPORT" 2>&1)
has "$out" "WRITE: errno 13" "pg GSSENCRequest answered 'G': enforce: the next write fails with EACCES"
ok "pg GSSENCRequest answered 'G': enforce: said once (wire_unguarded)" [ "$(unguarded "$log")" -eq 1 ]
has "$(cat "$log")" 'that went on in PostgreSQL GSSAPI encryption cannot be checked' "pg GSSENCRequest answered 'G': enforce: the log names GSSAPI encryption"
log=$QG_PG_DIR/gss-audit.log
out=$(with_shim audit "$log" "$PY" tests/wire/pg_gssenc.py 127.0.0.1 "$PGPORT" 2>&1)
has "$out" "WRITE: sent" "pg GSSENCRequest answered 'G': audit: the token goes"
ok "pg GSSENCRequest answered 'G': audit: said once (wire_unguarded)" [ "$(unguarded "$log")" -eq 1 ]

tap_done
