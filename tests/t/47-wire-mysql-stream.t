#!/bin/bash
# The wire front follows a MySQL stream however the client splits its calls
# (raw protocol client, tests/wire/mysql_raw.py): a greeting read as its
# 4-byte header and then the body is recognised, and the GBK attack
# (bf 27 escaped to bf 5c 27) that injects without the shim is blocked with
# an error naming quoteguard; legitimate input gives the same output with
# and without the shim.
# A duplicate (dup, dup2, dup3, F_DUPFD, F_DUPFD_CLOEXEC, a copy received
# with SCM_RIGHTS) of the socket of a
# connection that the libmariadb front checks: a COM_QUERY written raw
# through it injects without the shim; with it the write fails (EACCES) and
# the log says that quoteguard refused it; the connection still works
# through libmariadb.
# The socket itself written through a stdio stream (fdopen) or spliced from
# a pipe: the same.
# servers: mariadb
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/mariadb.sh

qg_require_build clients/my_dup
my_available || tap_skip_all "no MariaDB server binaries (or not root)"
my_start || tap_bail "cannot start MariaDB"
my_sql -e "CREATE DATABASE qg;
           CREATE TABLE qg.users (name VARBINARY(64), secret VARCHAR(64));
           INSERT INTO qg.users VALUES ('alice', 'secret_alice'), ('bob', 'secret_bob'),
                                       ('o''hara', 'secret_ohara')" || tap_bail "cannot create the tables"

PY=/usr/bin/python3
TAIL=27204f5220313d31202d2d20 # ' OR 1=1 --
secrets() { printf '%s\n' "$1" | grep -ac '^ROW: secret_'; }
RAW=("$PY" tests/wire/mysql_raw.py "$QG_MY_SOCKET")

for scenario in split-greeting; do
    marker=qgs_plain_${scenario//-/_}_$$
    out=$("${RAW[@]}" $scenario gbk bf$TAIL "$marker" 2>&1)
    ok "$scenario: without the shim the attack injects" [ "$(secrets "$out")" -eq 3 ]
    has "$(cat "$QG_MY_LOG")" "$marker" "$scenario: without the shim the marker reaches the server"
    marker=qgs_enforce_${scenario//-/_}_$$
    out=$(with_shim enforce "$QG_MY_DIR/$scenario.log" "${RAW[@]}" $scenario gbk bf$TAIL "$marker" 2>&1)
    has "$out" "ERROR: quoteguard: blocked" "$scenario: enforce: an error naming quoteguard"
    ok "$scenario: enforce: no secret leaks" [ "$(secrets "$out")" -eq 0 ]
    lacks "$(cat "$QG_MY_LOG")" "$marker" "$scenario: enforce: the attack never reaches the server"
    has "$out" "ROW: alive" "$scenario: enforce: the connection works after the block"
    for legit in 616c696365 6f27686172615c; do # alice, o'hara\ (a quote, a backslash)
        plain=$("${RAW[@]}" $scenario gbk $legit qgs_legit_$$ 2>&1)
        shimmed=$(with_shim enforce "$QG_MY_DIR/legit.log" "${RAW[@]}" $scenario gbk $legit qgs_legit_$$ 2>&1)
        ok "$scenario: legitimate $legit: the same output with the shim" [ "$plain" = "$shimmed" ]
    done
    has "$("${RAW[@]}" $scenario gbk 616c696365 qgs_legit_$$)" "ROW: secret_alice" \
        "$scenario: legitimate input finds its row"
done

attack_sql() { printf 'SELECT /*%s*/ secret FROM users WHERE name = '"'"'\xbf\x5c\x27 OR 1=1 -- '"'"'' "$1"; }
for how in dup dup2 dup3 F_DUPFD F_DUPFD_CLOEXEC SCM_RIGHTS fdopen splice; do
    marker=qgs_dup_plain_${how}_$$
    out=$("$QG_BUILD/clients/my_dup" "$QG_MY_SOCKET" $how "$(attack_sql $marker)" 2>&1)
    ok "$how of libmariadb's socket: without the shim the raw attack injects" [ "$(secrets "$out")" -eq 3 ]
    marker=qgs_dup_enforce_${how}_$$
    log=$QG_MY_DIR/dup-$how.log
    out=$(with_shim enforce "$log" "$QG_BUILD/clients/my_dup" "$QG_MY_SOCKET" $how "$(attack_sql $marker)" 2>&1)
    has "$out" "WRITE-FAILED: Permission denied" "$how: enforce: the raw write fails"
    ok "$how: enforce: no secret leaks" [ "$(secrets "$out")" -eq 0 ]
    lacks "$(cat "$QG_MY_LOG")" "$marker" "$how: enforce: the attack never reaches the server"
    case $how in
    fdopen) refusal="quoteguard: refused (EACCES): stdio (fdopen) on the socket" ;;
    splice) refusal="quoteguard: refused (EACCES): bytes moved by splice into a database connection's socket" ;;
    *) refusal="quoteguard: refused (EACCES): bytes written through a duplicate of the socket" ;;
    esac
    has "$(cat "$log")" "$refusal" "$how: enforce: the log names quoteguard and the refusal"
    has "$out" "ROW: alive" "$how: enforce: the connection works through libmariadb"
done

tap_done
