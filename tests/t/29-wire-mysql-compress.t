#!/bin/bash
# MariaDB's compressed protocol, followed at the wire front with zlib.  PHP
# mysqli (MYSQLI_CLIENT_COMPRESS, plain and over TLS) and PDO_mysql
# (PDO::MYSQL_ATTR_COMPRESS): after SET NAMES gbk, the escaped \xbf' attack,
# and after NO_BACKSLASH_ESCAPES the addslashes one, inject without the shim
# (both secrets, the marker in the general log) and are blocked with it
# (ERROR 1105 naming quoteguard, the marker never at the server, the
# connection usable and still compressed, nothing said unread); audit logs
# the attack and changes nothing.  A legitimate page is identical with the
# shim, also with a 20 MiB row written and read back (a query and a row past
# 16 MiB, in many frames), and an attack after 20 MiB of legitimate text is
# blocked.  The `mariadb` CLI with --compress runs compressed and is
# checked.  A raw compressed client: a query cut across two frames written a
# byte per call is blocked and the server's answer numbered after both
# frames; a frame that says it inflates to more than it does (which the
# server takes, so it injects) and a frame that does not inflate are
# refused with EACCES and `wire_unguarded` naming them.  MariaDB
# Connector/J with useCompression=true: the NO_BACKSLASH_ESCAPES attack
# blocked the same way, a legitimate prepared statement answered.  MySQLdb
# (libmariadb, checked by the library front) keeps its compression.
# servers: mariadb
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/mariadb.sh

qg_require_build
PY=/usr/bin/python3
MY_JAR=/usr/share/java/mariadb-java-client.jar
php -r 'exit(extension_loaded("mysqli") && extension_loaded("pdo_mysql") ? 0 : 1);' ||
    tap_bail "php8.2-mysql is not installed"
"$PY" -c 'import MySQLdb' || tap_bail "python3-mysqldb is not installed"
command -v java >/dev/null && [ -f "$MY_JAR" ] || tap_bail "java and libmariadb-java are needed"
my_available || tap_skip_all "no MariaDB server binaries (or not root)"

QG_MY_SSL=1 QG_MY_ARGS="--max-allowed-packet=128M" my_start || tap_bail "cannot start MariaDB with TLS"
my_sql -e "CREATE DATABASE qg; CREATE TABLE qg.users (name VARBINARY(64), secret VARCHAR(64));
           INSERT INTO qg.users VALUES ('alice', 'secret_alice'), ('bob', 'secret_bob');
           CREATE TABLE qg.big (id INT AUTO_INCREMENT PRIMARY KEY, v LONGBLOB);
           CREATE USER qg@'127.0.0.1'; GRANT ALL ON qg.* TO qg@'127.0.0.1'" ||
    tap_bail "cannot create the tables"

GBK_ATTACK=bf27204f5220313d31202d2d20 # GBK bf, then ' OR 1=1 --
NBE_ATTACK=27204f5220313d31202d2d20    # ' OR 1=1 --
secrets() { printf '%s\n' "$1" | grep -ac '^ROW: secret_'; }
unguarded() { grep -ac '"event":"wire_unguarded"' "$1"; }
in_general_log() { grep -ac "$1" "$QG_MY_LOG"; }
page() { php -d memory_limit=1G tests/wire/mysql_compress.php "$@" 2>&1; }

# ------------------------------------------------------- PHP (mysqlnd)
# cases: API SOCKET (over TLS: tls:PORT)
for case in "mysqli $QG_MY_SOCKET" "pdo $QG_MY_SOCKET" "mysqli tls:$QG_MY_TCP_PORT"; do
    read -r api sock <<<"$case"
    tag="mysql $api compressed" id=${api}_unix
    [ "$sock" = "$QG_MY_SOCKET" ] || tag="$tag over TLS" id=${api}_tls
    for attack in "gbk real_escape_string $GBK_ATTACK" "nbe addslashes $NBE_ATTACK"; do
        read -r setup escape hex <<<"$attack"
        what="$tag, $setup + $escape"
        marker=qgz_plain_${id}_${setup}_$$
        out=$(page "$sock" "$api" "$setup" "$escape" "$hex" "$marker")
        has "$out" "COMPRESSION: ON" "$what: without the shim the connection is compressed"
        ok "$what: without the shim the attack injects (both secrets)" [ "$(secrets "$out")" -eq 2 ]
        ok "$what: without the shim the statement reaches the server" [ "$(in_general_log "$marker")" -eq 1 ]

        marker=qgz_enforce_${id}_${setup}_$$
        log=$QG_MY_DIR/enforce-$id-$setup.log
        out=$(with_shim enforce "$log" php tests/wire/mysql_compress.php "$sock" "$api" "$setup" "$escape" "$hex" "$marker" 2>&1)
        has "$out" "COMPRESSION: ON" "$what: enforce: the connection is compressed"
        has "$out" "ERROR: 1105 45000 quoteguard: blocked structure_mismatch" \
            "$what: enforce: the attack fails with an ordinary error naming quoteguard"
        lacks "$out" "ROW: secret_" "$what: enforce: no secret leaks"
        ok "$what: enforce: the attack never reaches the server" [ "$(in_general_log "$marker")" -eq 0 ]
        has "$out" "ALIVE: alive" "$what: enforce: the connection stays usable"
        has "$out" "COMPRESSION AFTER: ON" "$what: enforce: and compressed"
        ok "$what: enforce: followed, nothing said unread" [ "$(unguarded "$log")" -eq 0 ]
    done

    log=$QG_MY_DIR/audit-$id.log
    marker=qgz_audit_${id}_$$
    out=$(with_shim audit "$log" php tests/wire/mysql_compress.php "$sock" "$api" gbk real_escape_string "$GBK_ATTACK" "$marker" 2>&1)
    ok "$tag: audit: the attack goes as sent" [ "$(secrets "$out")" -eq 2 ]
    has "$(cat "$log")" '"action":"logged","api":"wire:COM_QUERY"' "$tag: audit: the attack is read and logged"
    ok "$tag: audit: nothing said unread" [ "$(unguarded "$log")" -eq 0 ]

    plain=$(page "$sock" "$api" gbk real_escape_string - qgz_legit)
    shimmed=$(with_shim enforce "$QG_MY_DIR/legit-$id.log" php tests/wire/mysql_compress.php "$sock" "$api" gbk real_escape_string - qgz_legit 2>&1)
    has "$plain" "ROW: C4E3275C" "$tag: a legitimate page's text round-trips"
    ok "$tag: enforce: a legitimate page's output identical with the shim" [ "$plain" = "$shimmed" ]
done

# ----------------------------- past 16 MiB: many frames each way
for api in mysqli pdo; do
    tag="mysql $api compressed, a 20 MiB row"
    plain=$(page "$QG_MY_SOCKET" "$api" gbk real_escape_string big:20 qgz_big)
    shimmed=$(with_shim enforce "$QG_MY_DIR/big-$api.log" php -d memory_limit=1G tests/wire/mysql_compress.php "$QG_MY_SOCKET" "$api" gbk real_escape_string big:20 qgz_big 2>&1)
    has "$plain" "QUERY BYTES: past 16 MiB" "$tag: the INSERT is past 16 MiB"
    has "$plain" "READ: 20971520 bytes, as written" "$tag: without the shim the row is read back as written"
    ok "$tag: enforce: the page's output identical with the shim" [ "$plain" = "$shimmed" ]
    ok "$tag: enforce: nothing blocked, nothing said unread" \
        [ "$(grep -ac '"action":"blocked"\|"event":"wire_unguarded"' "$QG_MY_DIR/big-$api.log")" -eq 0 ]

    marker=qgz_bigplain_${api}_$$
    out=$(page "$QG_MY_SOCKET" "$api" gbk real_escape_string "big:20:$GBK_ATTACK" "$marker")
    ok "$tag then the attack: without the shim it injects" [ "$(secrets "$out")" -eq 2 ]
    marker=qgz_bigattack_${api}_$$
    out=$(with_shim enforce "$QG_MY_DIR/bigattack-$api.log" php -d memory_limit=1G tests/wire/mysql_compress.php "$QG_MY_SOCKET" "$api" gbk real_escape_string "big:20:$GBK_ATTACK" "$marker" 2>&1)
    has "$out" "ERROR: 1105 45000 quoteguard: blocked" "$tag then the attack: enforce: blocked with an error naming quoteguard"
    ok "$tag then the attack: enforce: it never reaches the server" [ "$(in_general_log "$marker")" -eq 0 ]
    has "$out" "ALIVE: alive" "$tag then the attack: enforce: the connection stays usable"
done

# --------------------------------------------- the mariadb client (--compress)
script=$QG_MY_DIR/cli.sql
write_script() { # INPUT-LINE
    printf "SHOW SESSION STATUS LIKE 'Compression';\nSET NAMES gbk;\n%s\nSELECT 'still_alive';\n" "$1" >"$script"
}
cli() { "$@" mariadb --no-defaults -S "$QG_MY_SOCKET" -uroot --compress --force qg <"$script" 2>&1; }
attack_line() { printf "SELECT secret, '%s' FROM users WHERE name = '\xbf\\\\' OR 1=1 -- ';" "$1"; }
write_script "$(attack_line qgz_cli_plain_$$)"
out=$(cli env)
matches "$out" '^Compression.ON' "mysql mariadb CLI --compress: without the shim the connection is compressed"
ok "mysql mariadb CLI --compress: without the shim the attack injects" [ "$(grep -ac '^secret_' <<<"$out")" -eq 2 ]
marker=qgz_cli_$$
write_script "$(attack_line "$marker")"
log=$QG_MY_DIR/cli.log
out=$(cli with_shim enforce "$log")
matches "$out" '^Compression.ON' "mysql mariadb CLI --compress: enforce: the connection is compressed"
matches "$out" 'ERROR 1105 \(45000\) at line 3: quoteguard: blocked structure_mismatch' \
    "mysql mariadb CLI --compress: enforce: the attack fails with an error naming quoteguard"
lacks "$out" "secret_" "mysql mariadb CLI --compress: enforce: no secret leaks"
has "$out" "still_alive" "mysql mariadb CLI --compress: enforce: the rest of the script runs"
ok "mysql mariadb CLI --compress: enforce: the attack never reaches the server" [ "$(in_general_log "$marker")" -eq 0 ]
ok "mysql mariadb CLI --compress: enforce: followed, nothing said unread" [ "$(unguarded "$log")" -eq 0 ]
write_script $'SELECT HEX(\'\xc4\xe3\\\'\\\\\'), \'qgz_legit\';' # GBK c4 e3, a quote, a backslash
plain=$(cli env)
shimmed=$(cli with_shim enforce "$QG_MY_DIR/cli-legit.log")
ok "mysql mariadb CLI --compress: legitimate output identical with the shim" [ "$plain" = "$shimmed" ]
has "$plain" "C4E3275C" "mysql mariadb CLI --compress: the legitimate text round-trips"

# ----------------------------------- a raw client: frames cut, lengths, corruption
zraw() { # RUNNER… -- SCENARIO INPUT MARKER
    local -a runner=()
    while [ "$1" != -- ]; do runner+=("$1"); shift; done
    (cd tests/wire && "${runner[@]}" timeout 60 "$PY" mysql_zraw.py "$QG_MY_SOCKET" "$2" gbk "$3" "$4" 2>&1)
}
out=$(zraw env -- frames "$GBK_ATTACK" qgz_frames_plain_$$)
ok "raw compressed, a query across two frames: without the shim the attack injects" [ "$(secrets "$out")" -eq 2 ]
has "$out" "ANSWER SEQ: 2 after 2 frames" "raw compressed, a query across two frames: the server numbers its answer after both"
marker=qgz_frames_$$
log=$QG_MY_DIR/zraw-frames.log
out=$(zraw with_shim enforce "$log" -- frames "$GBK_ATTACK" "$marker")
has "$out" "ERROR: quoteguard: blocked structure_mismatch" "raw compressed, a query across two frames a byte per write: enforce: blocked"
has "$out" "ANSWER SEQ: 2 after 2 frames" "raw compressed, a query across two frames: enforce: the answer numbered as without the shim"
has "$out" "ROW: alive" "raw compressed, a query across two frames: enforce: the connection stays usable"
ok "raw compressed, a query across two frames: enforce: the attack never reaches the server" [ "$(in_general_log "$marker")" -eq 0 ]
out=$(zraw with_shim enforce "$QG_MY_DIR/zraw-legit.log" -- frames c4e3275c qgz_frames_legit_$$)
has "$out" "ROW: alive" "raw compressed, a legitimate query across two frames: enforce: answered, the connection usable"
ok "raw compressed, a legitimate query across two frames: enforce: it reaches the server" [ "$(in_general_log qgz_frames_legit_$$)" -eq 1 ]

out=$(zraw env -- long "$GBK_ATTACK" qgz_long_plain_$$)
ok "raw compressed, a frame that inflates to less than it says: without the shim the server takes it (injects)" \
    [ "$(secrets "$out")" -eq 2 ]
for scenario in long corrupt; do
    marker=qgz_${scenario}_$$
    log=$QG_MY_DIR/zraw-$scenario.log
    out=$(zraw with_shim enforce "$log" -- "$scenario" "$GBK_ATTACK" "$marker")
    has "$out" "WRITE: errno 13" "raw compressed, $scenario frame: enforce: the write fails with EACCES"
    ok "raw compressed, $scenario frame: enforce: it never reaches the server" [ "$(in_general_log "$marker")" -eq 0 ]
    has "$(cat "$log")" '"level":"error","event":"wire_unguarded","detail":"quoteguard: refused (EACCES): a database connection that went on in MySQL compressed data that does not inflate as its frame header says' \
        "raw compressed, $scenario frame: enforce: logged as a refusal naming quoteguard"
done
log=$QG_MY_DIR/zraw-long-audit.log
out=$(zraw with_shim audit "$log" -- long "$GBK_ATTACK" qgz_long_audit_$$)
ok "raw compressed, long frame: audit: passes as without the shim" [ "$(secrets "$out")" -eq 2 ]
ok "raw compressed, long frame: audit: said once (wire_unguarded)" [ "$(unguarded "$log")" -eq 1 ]

# ------------------------------------- MariaDB Connector/J, useCompression
jdbc() { # RUNNER… -- INPUT MARKER
    local -a runner=()
    while [ "$1" != -- ]; do runner+=("$1"); shift; done
    "${runner[@]}" java -cp "$MY_JAR" tests/wire/JdbcLegacy.java \
        "jdbc:mariadb://127.0.0.1:$QG_MY_TCP_PORT/qg?useCompression=true" qg \
        "SET sql_mode = 'NO_BACKSLASH_ESCAPES'" addslashes "$2" "$3" 2>&1
}
out=$(jdbc env -- "' OR 1=1 -- " qgz_jdbc_plain_$$)
has "$out" "COMPRESSION: ON" "Connector/J useCompression: without the shim the connection is compressed"
ok "Connector/J useCompression: without the shim the attack injects" [ "$(secrets "$out")" -eq 2 ]
marker=qgz_jdbc_$$
log=$QG_MY_DIR/jdbc.log
out=$(jdbc with_shim enforce "$log" -- "' OR 1=1 -- " "$marker")
has "$out" "COMPRESSION: ON" "Connector/J useCompression: enforce: the connection is compressed"
has "$out" "quoteguard: blocked structure_mismatch" "Connector/J useCompression: enforce: an SQLException naming quoteguard"
lacks "$out" "ROW: secret_" "Connector/J useCompression: enforce: no secret leaks"
has "$out" "ALIVE: alive" "Connector/J useCompression: enforce: the connection stays usable"
ok "Connector/J useCompression: enforce: the attack never reaches the server" [ "$(in_general_log "$marker")" -eq 0 ]
out=$(jdbc with_shim enforce "$QG_MY_DIR/jdbc-legit.log" -- - qgz_jdbc_legit)
has "$out" "ROW: true" "Connector/J useCompression: enforce: a legitimate prepared statement answered as written"

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
out=$(mysqldb env -- qgz_mdb_plain_$$ 2>&1)
ok "mysql MySQLdb compress=1: without the shim the attack injects" [ "$(secrets "$out")" -eq 2 ]
marker=qgz_mdb_$$
log=$QG_MY_DIR/mysqldb.log
out=$(mysqldb with_shim enforce "$log" -- "$marker" 2>&1)
has "$out" "COMPRESSION: ON" "mysql MySQLdb compress=1: enforce: the library's connection keeps its compression"
has "$out" "ERROR: 1105 quoteguard: blocked" "mysql MySQLdb compress=1: enforce: the attack is blocked by the libmariadb front"
ok "mysql MySQLdb compress=1: enforce: the attack never reaches the server" [ "$(in_general_log "$marker")" -eq 0 ]
has "$out" "ALIVE: alive" "mysql MySQLdb compress=1: enforce: the connection stays usable"
ok "mysql MySQLdb compress=1: enforce: nothing said unread" [ "$(unguarded "$log")" -eq 0 ]

tap_done
