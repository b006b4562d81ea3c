#!/bin/bash
# libmariadb texts sent before the answers to earlier ones are read
# (mysql_send_query, then another mysql_send_query or mysql_real_query
# before mysql_read_query_result): the server runs them in order, so a
# SET NAMES gbk among the earlier ones changes how it reads the later ones,
# but no answer has reported it yet.  The later text is checked under every
# state the earlier ones may leave, and where that is for the server to say,
# enforce blocks it with state_unknown.  The shim never asks the server for
# the state while answers are unread (its question's answer would come after
# them).
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
           INSERT INTO qg.users VALUES ('alice', 'secret_alice'), ('bob', 'secret_bob')" ||
    tap_bail "cannot create the table"
GBK_ATTACK=bf27204f5220313d31202d2d20 # bf ' OR 1=1 --, escaped byte-wise: bf 5c 27 …
# UTF-8 e4 b8 bf then an escaped quote: clean in latin1 and utf8mb4, gbk reads
# [e4 b8] [bf 5c] and a quote that ends the literal.
UTF8_ATTACK=e4b8bf27204f5220313d31202d2d20
attack() { printf "template=SELECT /*%s*/ secret FROM users WHERE name = '%%s'" "$1"; }

# way: the SET and the attack as two queued sends; the SET queued and the
# attack through mysql_real_query; the SET in an EXECUTE IMMEDIATE whose
# effect only the server knows.
declare -A FIRST=([send]="set-names=gbk" [real]="set-names=gbk"
    [immediate]="sql=EXECUTE IMMEDIATE 'SET NAMES gbk'")
declare -A SECOND=([send]=queue [real]=real [immediate]=queue)
for way in send real immediate; do
    for input in $GBK_ATTACK $UTF8_ATTACK; do
        tag="$way, input $input"
        run() { # MARK RUNNER…
            local mark=$1
            shift
            "$@" "$LEGACY" "$QG_MY_SOCKET" db=qg via=queue "${FIRST[$way]}" "via=${SECOND[$way]}" \
                "$(attack "$mark")" "input=$input" read via=real "sql=SELECT 'alive'"
        }
        out=$(run "qgm_pipe_plain_$$")
        has "$out" "ROW: secret_bob" "$tag: without the shim the attack injects"
        mark=qgm_pipe_${way}_${input:0:4}_$$
        log=$QG_MY_DIR/pipe-$way-$input.log
        out=$(run "$mark" with_shim enforce "$log")
        if [ "$way" = immediate ]; then
            matches "$out" '^ERROR: 1105 [0-9A-Z]{5} quoteguard: blocked state_unknown' \
                "$tag: blocked with state_unknown (the earlier text's effect is for the server to say)"
        else
            matches "$out" '^ERROR: 1105 [0-9A-Z]{5} quoteguard: blocked (structure_mismatch|illformed_before_quote) at byte [0-9]+ \(gbk\)' \
                "$tag: blocked under the gbk the queued SET NAMES leaves"
        fi
        lacks "$out" "secret_" "$tag: nothing leaks"
        has "$out" "ROW: alive" "$tag: the connection stays usable"
        lacks "$(cat "$QG_MY_LOG")" "$mark" "$tag: the attack never reaches the server"
    done
done

# Correctly escaped text sent the same way: the same answers with and without the shim.
for way in send real; do
    legit=(db=qg via=queue "${FIRST[$way]}" "via=${SECOND[$way]}" escape=real
           "template=SELECT HEX('%s')" input=955c4127 read via=real "sql=SELECT 'alive'")
    plain=$("$LEGACY" "$QG_MY_SOCKET" "${legit[@]}")
    shimmed=$(with_shim enforce "$QG_MY_DIR/pipe-ok-$way.log" "$LEGACY" "$QG_MY_SOCKET" "${legit[@]}")
    has "$plain" "ROW: 955C4127" "$way: escaped text after a queued SET NAMES gbk round-trips"
    ok "$way: identical results with and without the shim" [ "$plain" = "$shimmed" ]
    lacks "$(cat "$QG_MY_DIR/pipe-ok-$way.log")" '"action":"blocked"' "$way: nothing blocked"
done

# After the answers are read the state is the server's again: the state
# query runs, and the next attack is checked under gbk as reported.
out=$(with_shim enforce "$QG_MY_DIR/pipe-after.log" "$LEGACY" "$QG_MY_SOCKET" db=qg via=queue \
    set-names=gbk "sql=SELECT 1" read via=real "$(attack "qgm_pipe_after_$$")" input=$GBK_ATTACK state)
matches "$out" '^ERROR: 1105 [0-9A-Z]{5} quoteguard: blocked structure_mismatch at byte [0-9]+ \(gbk\)' \
    "after the queued answers are read: the attack is blocked under the reported gbk"
has "$out" "ROW: gbk|" "the server's state is gbk"

tap_done
