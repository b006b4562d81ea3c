#!/bin/bash
# PostgreSQL connections the shim cannot read: refused in enforce, passed and
# said once in audit.  Java's own TLS (JDBC, sslmode=require) and node's
# (its built-in OpenSSL) are refused at their first TLS byte, the socket
# given up so that the program does not wait for the server's timeout; a
# GSSENCRequest answered 'G' has its next write refused (EACCES), so does a
# direct TLS ClientHello (ALPN "postgresql", no SSLRequest before it) while
# one for another protocol goes, and so does a write from a message no
# framing can follow on (the Query before it goes and is answered).  Audit,
# and enforce with wire_unguarded = pass, let each pass and log
# `wire_unguarded` once.  (MySQL's compressed protocol, which the wire front
# reads, is tests/t/29-wire-mysql-compress.t.)
# servers: pg
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/pg.sh

qg_require_build
PY=/usr/bin/python3
PG_JAR=/usr/share/java/postgresql.jar
command -v java >/dev/null && [ -f "$PG_JAR" ] || tap_bail "java and libpostgresql-jdbc-java are needed"
command -v node >/dev/null || tap_bail "node is needed (scripts/install-deps)"
pg_available || tap_skip_all "no PostgreSQL server binaries (or not root)"

QG_PG_SSL=1 pg_start || tap_bail "cannot start PostgreSQL with TLS"
pg_psql -c "CREATE TABLE users(name text, secret text);
            INSERT INTO users VALUES ('alice', 'secret_alice'), ('bob', 'secret_bob')" >/dev/null ||
    tap_bail "cannot create the PG table"

secrets() { printf '%s\n' "$1" | grep -ac '^ROW: secret_'; }
unguarded() { grep -ac '"event":"wire_unguarded"' "$1"; }

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

# --------------------------------------------- PostgreSQL: direct TLS
# A ClientHello offering ALPN "postgresql" as a connection's first bytes:
# the server (15, before direct TLS) logs it as an invalid startup packet.
startup_errors() { grep -ac 'invalid length of startup packet' "$QG_PG_LOG"; }
direct() { "$@" "$PY" tests/wire/pg_direct_tls.py 127.0.0.1 "$PGPORT" "$ALPN" 2>&1; }
before=$(startup_errors)
out=$(ALPN=postgresql direct env)
has "$out" "WRITE: sent" "pg direct TLS: without the shim the ClientHello goes"
ok "pg direct TLS: without the shim the server reads it" [ "$(startup_errors)" -eq $((before + 1)) ]
log=$QG_PG_DIR/direct.log
out=$(ALPN=postgresql direct with_shim enforce "$log")
has "$out" "WRITE: errno 13" "pg direct TLS: enforce: the ClientHello is refused (EACCES)"
ok "pg direct TLS: enforce: nothing reaches the server" [ "$(startup_errors)" -eq $((before + 1)) ]
ok "pg direct TLS: enforce: said once (wire_unguarded)" [ "$(unguarded "$log")" -eq 1 ]
has "$(cat "$log")" 'PostgreSQL direct TLS' "pg direct TLS: enforce: the log names direct TLS"
log=$QG_PG_DIR/direct-audit.log
out=$(ALPN=postgresql direct with_shim audit "$log")
has "$out" "WRITE: sent" "pg direct TLS: audit: the ClientHello goes"
ok "pg direct TLS: audit: said once (wire_unguarded)" [ "$(unguarded "$log")" -eq 1 ]
log=$QG_PG_DIR/direct-http.log
before=$(startup_errors)
out=$(ALPN=http/1.1 direct with_shim enforce "$log")
has "$out" "WRITE: sent" "TLS for another protocol (ALPN http/1.1): enforce: the ClientHello goes"
ok "TLS for another protocol: enforce: it reaches the server as without the shim" \
    [ "$(startup_errors)" -eq $((before + 1)) ]
ok "TLS for another protocol: enforce: not taken for a database connection" \
    eval '[ ! -e "$log" ] || [ "$(unguarded "$log")" -eq 0 ]'

tap_done
