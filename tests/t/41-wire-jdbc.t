#!/bin/bash
# JDBC drivers, which speak the protocols themselves in Java: PostgreSQL's
# (libpostgresql-jdbc-java; extended protocol: Parse) after `SET
# standard_conforming_strings TO off` with an escaper that only doubles
# quotes, and MariaDB Connector/J (libmariadb-java; COM_QUERY) after `SET
# sql_mode = 'NO_BACKSLASH_ESCAPES'` with addslashes.  Over TCP on
# 127.0.0.1 (neither driver uses unix sockets here).  Injected without the
# shim; blocked with it at the wire, the attack absent from the server's
# log, the connection still usable; a prepared statement's answer is the same
# with and without the shim.
# servers: pg mariadb
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/pg.sh
. tests/lib/mariadb.sh

qg_require_build
PG_JAR=/usr/share/java/postgresql.jar
MY_JAR=/usr/share/java/mariadb-java-client.jar
command -v java >/dev/null && [ -f "$PG_JAR" ] && [ -f "$MY_JAR" ] ||
    tap_bail "java, libpostgresql-jdbc-java and libmariadb-java are needed (scripts/install-deps)"
pg_available || tap_skip_all "no PostgreSQL server binaries (or not root)"
my_available || tap_skip_all "no MariaDB server binaries (or not root)"

pg_start || tap_bail "cannot start PostgreSQL"
pg_psql -qc "ALTER SYSTEM SET listen_addresses = '127.0.0.1'" >/dev/null &&
    pg_as_server_user "$QG_PG_BIN/pg_ctl" -D "$QG_PG_DIR/data" -l "$QG_PG_LOG" -w -t 30 restart >/dev/null ||
    tap_bail "cannot make PostgreSQL listen on 127.0.0.1"
pg_psql -c "CREATE TABLE users(name text, secret text);
            INSERT INTO users VALUES ('alice', 'secret_alice'), ('bob', 'secret_bob')" >/dev/null ||
    tap_bail "cannot create the PG table"
QG_MY_TCP_PORT=$((PGPORT + 1)) my_start || tap_bail "cannot start MariaDB"
my_sql -e "CREATE DATABASE qg; CREATE TABLE qg.users (name VARBINARY(64), secret VARCHAR(64));
           INSERT INTO qg.users VALUES ('alice', 'secret_alice'), ('bob', 'secret_bob');
           CREATE USER qg@'127.0.0.1'; GRANT ALL ON qg.* TO qg@'127.0.0.1'" ||
    tap_bail "cannot create the MariaDB table"
secrets() { printf '%s\n' "$1" | grep -ac '^ROW: secret_'; }

# name  jar  url  user  setup  escaper  attack  server log  api
CASES=(
    "postgresql|$PG_JAR|jdbc:postgresql://127.0.0.1:$PGPORT/$PGDATABASE|$PGUSER|SET standard_conforming_strings TO off|double|\\' OR 1=1 -- |$QG_PG_LOG|wire:Parse"
    "mariadb|$MY_JAR|jdbc:mariadb://127.0.0.1:$((PGPORT + 1))/qg|qg|SET sql_mode = 'NO_BACKSLASH_ESCAPES'|addslashes|' OR 1=1 -- |$QG_MY_LOG|wire:COM_QUERY"
)
for case in "${CASES[@]}"; do
    IFS='|' read -r name jar url user setup escaper attack server_log api <<<"$case"
    jdbc() { # INPUT MARKER, run by "${RUNNER[@]}"
        "${RUNNER[@]}" java -cp "$jar" tests/wire/JdbcLegacy.java "$url" "$user" "$setup" "$escaper" "$@"
    }
    RUNNER=(env)
    out=$(jdbc "$attack" qgw_jdbc_plain_${name}_$$ 2>&1)
    ok "$name JDBC: without the shim the attack injects" [ "$(secrets "$out")" -eq 2 ]
    marker=qgw_jdbc_${name}_$$
    log=$QG_MY_DIR/jdbc-$name.log
    RUNNER=(with_shim enforce "$log")
    out=$(jdbc "$attack" "$marker" 2>&1)
    has "$out" "quoteguard: blocked structure_mismatch" "$name JDBC: enforce: an SQLException naming quoteguard"
    lacks "$out" "ROW: secret_" "$name JDBC: enforce: no secret leaks"
    has "$out" "ALIVE: alive" "$name JDBC: enforce: the connection stays usable"
    lacks "$(cat "$server_log")" "$marker" "$name JDBC: enforce: the attack never reaches the server"
    has "$(cat "$log")" "\"action\":\"blocked\",\"api\":\"$api\"" "$name JDBC: blocked at the wire ($api)"
    RUNNER=(env)
    plain=$(jdbc - - 2>&1)
    RUNNER=(with_shim enforce "$QG_MY_DIR/jdbc-legit-$name.log")
    shimmed=$(jdbc - - 2>&1)
    has "$plain" "ROW: true" "$name JDBC legit: a prepared statement round-trips a'b\\c and a kanji"
    ok "$name JDBC legit: the same output with the shim" [ "$plain" = "$shimmed" ]
done

tap_done
