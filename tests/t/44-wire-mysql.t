#!/bin/bash
# The wire front against MariaDB: drivers that speak the protocol themselves.
#
# PHP 8.2 mysqli and PDO_mysql (mysqlnd) and PyMySQL, after a plain
# `SET NAMES gbk|sjis|big5|cp932` query that their escapers never learn:
# the attack (real_escape_string / PDO::quote / addslashes of a lead byte and
# a quote) injects without the shim; with it the statement is replaced by a
# SIGNAL the server answers with an ordinary error naming quoteguard, the
# attack never reaches the server (general log), and the next query on the
# same connection works.  Audit passes it and logs it; QUOTEGUARD_WIRE=off
# turns the front off.  Legitimate pages (text with 0x5c trail bytes, the
# charset set the way the driver knows, prepared statements) print the same
# bytes with and without the shim; a TCP echo and a curl download in the
# same process / under the shim are byte-identical.  A connection made before
# fork(2) is guarded in the child.
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
my_start || tap_bail "cannot start MariaDB"
my_sql -e "CREATE DATABASE qg;
           CREATE TABLE qg.users (name VARBINARY(64), secret VARCHAR(64));
           INSERT INTO qg.users VALUES ('alice', 'secret_alice'), ('bob', 'secret_bob');
           CREATE TABLE qg.rt (id INT, b VARBINARY(64))" || tap_bail "cannot create the tables"

W=tests/wire
PY=/usr/bin/python3
ATTACK_TAIL=27204f5220313d31202d2d20 # ' OR 1=1 --
general_log() { cat "$QG_MY_LOG"; }
secrets() { printf '%s\n' "$1" | grep -ac '^ROW: secret_'; }

# charset, lead byte, a legitimate text with a 0x5c trail byte, a quote and a backslash
CASES=(
    "gbk bf bf5c275c"
    "sjis 95 955c275c"
    "big5 a5 a55c275c"
    "cp932 95 955c275c"
)
# client program and its escaper
CLIENTS=(
    "mysqli real_escape_string"
    "pdo real_escape_string"
    "mysqli addslashes"
    "pymysql addslashes"
)

page() { # RUNNER… -- CLIENT ESCAPE CHARSET INPUT MARKER
    local -a runner=()
    while [ "$1" != -- ]; do runner+=("$1"); shift; done
    shift
    local client=$1 escape=$2 cs=$3 input=$4 marker=$5
    if [ "$client" = pymysql ]; then
        "${runner[@]}" "$PY" $W/mysql_pymysql.py "$QG_MY_SOCKET" "$cs" "$input" "$marker"
    else
        "${runner[@]}" php $W/mysql_page.php "$QG_MY_SOCKET" "$client" "$cs" "$escape" "$input" "$marker"
    fi
}

for case in "${CASES[@]}"; do
    read -r cs lead legit <<<"$case"
    for c in "${CLIENTS[@]}"; do
        read -r client escape <<<"$c"
        tag="$client $escape $cs"
        marker=qgw_plain_${client}_${escape}_${cs}_$$
        out=$(page env -- "$client" "$escape" "$cs" "$lead$ATTACK_TAIL" "$marker" 2>&1)
        ok "$tag: without the shim the attack injects (both secrets)" [ "$(secrets "$out")" -eq 2 ]

        marker=qgw_enforce_${client}_${escape}_${cs}_$$
        log=$QG_MY_DIR/enforce-$client-$escape-$cs.log
        out=$(page with_shim enforce "$log" -- "$client" "$escape" "$cs" "$lead$ATTACK_TAIL" "$marker" 2>&1)
        matches "$out" '^ERROR: 1105 (45000 )?quoteguard: blocked structure_mismatch' \
            "$tag: enforce: the driver gets an ordinary server error 1105 naming quoteguard"
        lacks "$out" "ROW: secret_" "$tag: enforce: no secret leaks"
        lacks "$(general_log)" "$marker" "$tag: enforce: the attack never reaches the server"
        has "$out" "ALIVE: alive" "$tag: enforce: the next query on the connection works"
        has "$(cat "$log")" "\"action\":\"blocked\",\"api\":\"wire:COM_QUERY\",\"dialect\":\"mysql\",\"encoding\":\"$cs\"" \
            "$tag: enforce: logged as blocked at the wire with the server's charset"
    done

    for client in mysqli pdo; do
        plain=$(php $W/mysql_legit.php "$QG_MY_SOCKET" "$client" "$cs" "$legit" 2>&1)
        log=$QG_MY_DIR/legit-$client-$cs.log
        shimmed=$(with_shim enforce "$log" php $W/mysql_legit.php "$QG_MY_SOCKET" "$client" "$cs" "$legit" 2>&1)
        has "$plain" "ROW: 2 ${legit^^}" "$client $cs legit: the text round-trips without the shim"
        ok "$client $cs legit: the page is byte-identical with the shim" [ "$plain" = "$shimmed" ]
        lacks "$(cat "$log" 2>/dev/null)" '"action"' "$client $cs legit: nothing logged as a finding"
    done
done

# SET NAMES and the attack in one multi-statement text: each statement is
# checked with the state the ones before it leave.
out=$("$PY" $W/mysql_pymysql.py "$QG_MY_SOCKET" gbk "bf$ATTACK_TAIL" qgw_multi_plain_$$ multi 2>&1)
ok "multi-statement SET NAMES gbk; SELECT …: without the shim the attack injects" [ "$(secrets "$out")" -eq 2 ]
marker=qgw_multi_$$
log=$QG_MY_DIR/multi.log
out=$(with_shim enforce "$log" "$PY" $W/mysql_pymysql.py "$QG_MY_SOCKET" gbk "bf$ATTACK_TAIL" "$marker" multi 2>&1)
lacks "$out" "ROW: secret_" "multi-statement: enforce: no secret leaks"
lacks "$(general_log)" "$marker" "multi-statement: enforce: the text never reaches the server"
has "$(cat "$log")" '"action":"blocked","api":"wire:COM_QUERY","dialect":"mysql","encoding":"gbk"' \
    "multi-statement: the SELECT is read as gbk, the charset the SET before it sets"

# A connection made before fork(2): the child inherits what the shim knows of it.
out=$("$PY" $W/mysql_fork.py "$QG_MY_SOCKET" qgw_fork_plain_$$ 2>&1)
ok "fork: without the shim the child's attack injects" [ "$(printf '%s\n' "$out" | grep -c '^CHILD ROW: secret_')" -eq 2 ]
marker=qgw_fork_$$
out=$(with_shim enforce "$QG_MY_DIR/fork.log" "$PY" $W/mysql_fork.py "$QG_MY_SOCKET" "$marker" 2>&1)
matches "$out" '^CHILD ERROR: 1105 quoteguard: blocked structure_mismatch at byte [0-9]+ \(gbk\)' \
    "fork: the child's attack is blocked, read as gbk from the SET NAMES the parent sent"
has "$out" "CHILD ALIVE: alive" "fork: the child's connection stays usable"
lacks "$(general_log)" "$marker" "fork: the child's attack never reaches the server"

marker=qgw_audit_$$
log=$QG_MY_DIR/audit.log
out=$(page with_shim audit "$log" -- mysqli real_escape_string gbk "bf$ATTACK_TAIL" "$marker" 2>&1)
ok "audit: the attack goes through unchanged" [ "$(secrets "$out")" -eq 2 ]
has "$(general_log)" "$marker" "audit: the statement reached the server as sent"
has "$(cat "$log")" '"action":"logged","api":"wire:COM_QUERY"' "audit: the finding is logged"

marker=qgw_off_$$
out=$(QUOTEGUARD_WIRE=off page with_shim enforce "$QG_MY_DIR/off.log" -- mysqli real_escape_string gbk "bf$ATTACK_TAIL" "$marker" 2>&1)
ok "QUOTEGUARD_WIRE=off: the wire front does nothing" [ "$(secrets "$out")" -eq 2 ]

plain=$("$PY" $W/other_sockets.py "$QG_MY_SOCKET" 2>&1)
shimmed=$(with_shim enforce "$QG_MY_DIR/other.log" "$PY" $W/other_sockets.py "$QG_MY_SOCKET" 2>&1)
has "$shimmed" "ECHO same 1048576" "other sockets: a 1 MiB TCP echo in the same process is byte-identical"
ok "other sockets: the database answer is the same with the shim" [ "$plain" = "$shimmed" ]

dir=$QG_MY_DIR/http
mkdir -p "$dir" && head -c 300000 /dev/urandom >"$dir/blob"
port=$((20000 + $$ % 20000))
env -u LD_PRELOAD "$PY" -m http.server --bind 127.0.0.1 --directory "$dir" "$port" >/dev/null 2>&1 &
http_pid=$!
qg_at_exit "kill $http_pid 2>/dev/null"
for _ in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.05; done
got=$(with_shim enforce "$QG_MY_DIR/curl.log" curl -s "http://127.0.0.1:$port/blob" | sha256sum)
ok "curl under the shim downloads a file byte-identical" [ "$got" = "$(sha256sum <"$dir/blob")" ]

tap_done
