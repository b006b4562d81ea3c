#!/bin/bash
# Multibyte escaping attacks against a real MariaDB server through libmariadb.
#
# For each client charset: what the byte-wise (addslashes) escaped attack
# does without the shim after a plain `SET NAMES` (injects, or is harmless),
# that the shim in enforce mode blocks it before it leaves the client (the
# statement is not in the general log), with an error mysql_errno /
# mysql_error / mysql_sqlstate report, and keeps the connection usable; that
# the same input escaped by mysql_real_escape_string passes untouched (after
# mysql_set_character_set, and after the plain SET NAMES, which Connector/C
# 3.3 follows); that mysql_escape_string is upgraded to the connection's
# charset; that audit mode lets the attack through and logs it.  Then
# legitimate text with 0x5c trail bytes round-trips byte-identical, and
# NO_BACKSLASH_ESCAPES.
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
           INSERT INTO qg.users VALUES ('alice', 'secret_alice'), ('bob', 'secret_bob');
           CREATE TABLE qg.rt (id INT, b VARBINARY(64))" || tap_bail "cannot create the tables"

# The attacker's input after the lead byte: ' OR 1=1 --
ATTACK_TAIL=27204f5220313d31202d2d20

# charset  lead byte  without the shim
#  inject: the escaper's backslash becomes the trail byte of a character and
#          the quote ends the literal — every secret comes back
#  safe:   no ASCII trail bytes: the server reads the escaped text as meant
CASES=(
    "gbk bf inject"
    "sjis 95 inject"
    "big5 a5 inject"
    "cp932 95 inject"
    "utf8mb4 c0 safe"
    "latin1 bf safe"
)

# my_legacy on database qg; MARKER names the statement in the general log.
legacy() { # MARKER [step…]
    local marker=$1
    shift
    "${RUNNER[@]}" "$LEGACY" "$QG_MY_SOCKET" db=qg \
        "template=SELECT /*$marker*/ secret FROM users WHERE name = '%s'" "$@"
}
general_log() { cat "$QG_MY_LOG"; }
rows_of() { printf '%s\n' "$1" | grep -ac '^ROW: secret_'; }

for case in "${CASES[@]}"; do
    read -r cs lead expect <<<"$case"
    tag="$cs $lead $expect"
    attack=$lead$ATTACK_TAIL

    marker=qgm_plain_${cs}_$$
    RUNNER=()
    out=$(legacy "$marker" set-names="$cs" escape=bytewise input="$attack")
    has "$(general_log)" "$marker" "$tag: without the shim the statement reaches the server"
    if [ "$expect" = inject ]; then
        ok "$tag: without the shim the attack injects (both secrets)" [ "$(rows_of "$out")" -eq 2 ]
    else
        has "$out" "ROWS: 0" "$tag: without the shim nothing is injected"
    fi

    marker=qgm_enforce_${cs}_$$
    log=$QG_MY_DIR/enforce-$cs.log
    RUNNER=(with_shim enforce "$log")
    out=$(legacy "$marker" set-names="$cs" escape=bytewise input="$attack" sql="SELECT 'alive_$cs'")
    if [ "$expect" = inject ]; then
        matches "$out" '^ERROR: 1105 42601 quoteguard: blocked structure_mismatch ' \
            "$tag: enforce blocks: mysql_errno 1105, mysql_sqlstate, mysql_error starting quoteguard:"
        lacks "$out" "ROW: secret_" "$tag: enforce: no secret leaks"
        lacks "$(general_log)" "$marker" "$tag: enforce: the statement is not in the general log"
        has "$out" "ROW: alive_$cs" "$tag: enforce: the connection stays usable"
        has "$(cat "$log")" "\"action\":\"blocked\",\"api\":\"mysql_real_query\",\"dialect\":\"mysql\",\"encoding\":\"$cs\"" \
            "$tag: enforce: the block is logged with the charset the server uses"
    elif [ "$cs" = utf8mb4 ]; then
        # C0 is an ill-formed lead byte right before the backslash: blocked
        # by the default MySQL ill-formed policy although harmless here.
        matches "$out" '^ERROR: 1105 22021 quoteguard: blocked illformed_before_quote ' \
            "$tag: enforce: the ill-formed lead byte before a backslash is blocked by default"
        has "$out" "ROW: alive_$cs" "$tag: enforce: the connection stays usable"
        out=$(QUOTEGUARD_MYSQL_ILLFORMED_QUOTE=log legacy "$marker" set-names="$cs" \
            escape=bytewise input="$attack")
        has "$out" "ROWS: 0" "$tag: with mysql_illformed_quote=log it runs, injecting nothing"
    else
        has "$out" "ROWS: 0" "$tag: enforce lets correctly escaped single-byte text through"
        has "$(general_log)" "$marker" "$tag: enforce: the statement reaches the server"
        lacks "$(cat "$log")" '"action"' "$tag: enforce: no finding logged"
    fi

    # Escaped correctly: passes untouched, injects nothing.
    [ "$expect" = inject ] || continue
    for how in set-charset set-names; do
        marker=qgm_real_${how}_${cs}_$$
        out=$(legacy "$marker" "$how=$cs" show-charset escape=real input="$attack")
        has "$out" "CHARSET: $cs" "$tag: after $how the client library's charset is $cs"
        has "$out" "ROWS: 0" "$tag: mysql_real_escape_string after $how: runs, injects nothing"
        lacks "$out" "ERROR:" "$tag: mysql_real_escape_string after $how: no error"
        has "$(general_log)" "$marker" "$tag: mysql_real_escape_string after $how: reaches the server"
    done

    # mysql_escape_string knows no connection and escapes as latin1.
    marker=qgm_legacy_plain_${cs}_$$
    RUNNER=()
    out=$(legacy "$marker" set-names="$cs" escape=legacy input="$attack")
    ok "$tag: without the shim mysql_escape_string lets the attack inject" [ "$(rows_of "$out")" -eq 2 ]
    marker=qgm_legacy_shim_${cs}_$$
    log=$QG_MY_DIR/legacy-$cs.log
    RUNNER=(with_shim enforce "$log")
    out=$(legacy "$marker" set-names="$cs" escape=legacy input="$attack")
    has "$out" "ROWS: 0" "$tag: with the shim mysql_escape_string escapes for $cs: nothing injected"
    lacks "$out" "ERROR:" "$tag: the upgraded escape passes the checker"
    has "$(general_log)" "$marker" "$tag: the upgraded escape reaches the server"
    has "$(cat "$log")" "\"event\":\"mysql_escape_string_upgraded\",\"detail\":\"escaping for charset $cs" \
        "$tag: the upgrade is logged"

    marker=qgm_audit_${cs}_$$
    log=$QG_MY_DIR/audit-$cs.log
    RUNNER=(with_shim audit "$log")
    out=$(legacy "$marker" via=query set-names="$cs" escape=bytewise input="$attack")
    ok "$tag: audit: the server runs it as sent (both secrets)" [ "$(rows_of "$out")" -eq 2 ]
    has "$(general_log)" "$marker" "$tag: audit: the statement reaches the server"
    matches "$(cat "$log")" "^\{.*\"action\":\"logged\",\"api\":\"mysql_query\",\"dialect\":\"mysql\",\"encoding\":\"$cs\".*\"reason\":\"structure_mismatch\".*\}$" \
        "$tag: audit: a JSON line records the finding"
done

# mysql_send_query: the statement is replaced by a SIGNAL naming quoteguard,
# so mysql_read_query_result fails with the server's answer to it (an
# asynchronous driver that waits for the socket gets that answer).
marker=qgm_send_$$
RUNNER=(with_shim enforce "$QG_MY_DIR/send.log")
out=$(legacy "$marker" via=send set-names=gbk escape=bytewise input=bf$ATTACK_TAIL sql="SELECT 'alive_send'")
matches "$out" '^ERROR: 1105 42601 quoteguard: ' "mysql_send_query: blocked with a quoteguard error"
lacks "$(general_log)" "$marker" "mysql_send_query: the statement is not in the general log"
has "$out" "ROW: alive_send" "mysql_send_query: the connection stays usable"

# Legitimate text: characters whose trail byte is 0x5c, with a quote and a
# backslash after them, escaped by mysql_real_escape_string, pass the shim
# and come back byte-identical from a VARBINARY column.
ROUNDTRIPS=(
    "gbk 815c275c"     # GBK 0x81 0x5c, ' \
    "gbk bf5c"
    "big5 a55c275c"    # 功 ' \
    "sjis 955c275c"    # 表 ' \
    "sjis 835c"        # ソ
    "cp932 955c275c"   # 表 ' \
    "cp932 815f5c"     # ＼ (full-width backslash) then a backslash
    "utf8mb4 e8a1a8275cf09f9880" # 表 ' \ 😀
    "latin1 e95c27"    # é \ '
)
id=0
log=$QG_MY_DIR/roundtrip.log
RUNNER=(with_shim enforce "$log")
for rt in "${ROUNDTRIPS[@]}"; do
    read -r cs hex <<<"$rt"
    for how in set-charset set-names; do
        id=$((id + 1))
        out=$("${RUNNER[@]}" "$LEGACY" "$QG_MY_SOCKET" db=qg "$how=$cs" escape=real \
            "template=INSERT INTO rt VALUES ($id, '%s')" input="$hex" \
            sql="SELECT HEX(b) FROM rt WHERE id = $id")
        has "$out" "ROW: ${hex^^}" "$cs $hex ($how): mysql_real_escape_string text passes the shim and round-trips"
    done
done
has "$(cat "$log")" '"event":"attached"' "round trips ran under the shim"
lacks "$(cat "$log")" '"action"' "round trips: no finding logged"

# The same legitimate character escaped byte-wise is what the shim exists
# for: the doubled backslash would swallow the closing quote.
out=$(with_shim enforce "$QG_MY_DIR/naive.log" "$LEGACY" "$QG_MY_SOCKET" db=qg set-names=sjis \
    escape=bytewise "template=SELECT '%s'" input=955c)
matches "$out" '^ERROR: 1105 [0-9A-Z]{5} quoteguard: blocked ' "sjis 955c escaped byte-wise: blocked"

# NO_BACKSLASH_ESCAPES: a backslash no longer escapes, so addslashes output
# '\' OR 1=1 -- ' ends the literal after the backslash.
NBE="sql=SET sql_mode = 'NO_BACKSLASH_ESCAPES'"
marker=qgm_nbe_plain_$$
RUNNER=()
out=$(legacy "$marker" "$NBE" escape=bytewise input=$ATTACK_TAIL)
ok "NO_BACKSLASH_ESCAPES: without the shim addslashes output injects" [ "$(rows_of "$out")" -eq 2 ]
out=$(legacy "$marker" "$NBE" escape=legacy input=$ATTACK_TAIL)
ok "NO_BACKSLASH_ESCAPES: without the shim mysql_escape_string output injects" [ "$(rows_of "$out")" -eq 2 ]
marker=qgm_nbe_shim_$$
log=$QG_MY_DIR/nbe.log
RUNNER=(with_shim enforce "$log")
out=$(legacy "$marker" "$NBE" escape=bytewise input=$ATTACK_TAIL sql="SELECT 'alive_nbe'")
matches "$out" '^ERROR: 1105 42601 quoteguard: blocked structure_mismatch ' \
    "NO_BACKSLASH_ESCAPES: addslashes output blocked"
lacks "$(general_log)" "$marker" "NO_BACKSLASH_ESCAPES: the statement is not in the general log"
has "$out" "ROW: alive_nbe" "NO_BACKSLASH_ESCAPES: the connection stays usable"
marker=qgm_nbe_real_$$
out=$(legacy "$marker" "$NBE" escape=real input=$ATTACK_TAIL escape=legacy input=$ATTACK_TAIL)
ok "NO_BACKSLASH_ESCAPES: mysql_real_escape_string and the upgraded mysql_escape_string run, injecting nothing" \
    [ "$(printf '%s\n' "$out" | grep -c '^ROWS: 0$')" -eq 2 ]
lacks "$out" "ERROR:" "NO_BACKSLASH_ESCAPES: quote doubling passes the checker"
has "$(cat "$log")" "\"event\":\"mysql_escape_string_upgraded\",\"detail\":\"escaping for charset utf8mb4 with NO_BACKSLASH_ESCAPES" \
    "NO_BACKSLASH_ESCAPES: the mysql_escape_string upgrade is logged"

# A carriage return does not end MariaDB's line comments, only a newline
# does: the quote after it is comment text, and the query runs as sent.
hex=$(printf "SELECT 'kept' # it\r's\n, 'lost'" | od -An -tx1 | tr -d ' \n')
out=$(with_shim enforce "$QG_MY_DIR/cr.log" "$LEGACY" "$QG_MY_SOCKET" db=qg sqlhex="$hex")
has "$out" "ROW: kept|lost" \
    "a quote after a carriage return in a # comment: the query runs, the next line is code"
lacks "$(cat "$QG_MY_DIR/cr.log")" '"action"' "the carriage return in a comment: no finding"

# In latin1 a no-break space after -- starts a comment, as a space does
# (MariaDB's ctype table calls it one): the quote in "l'été" is comment text.
hex=$(printf "SELECT 'kept' --\xa0l'\xe9t\xe9\n, 'next'" | od -An -tx1 | tr -d ' \n')
out=$(with_shim enforce "$QG_MY_DIR/nbsp.log" "$LEGACY" "$QG_MY_SOCKET" db=qg charset=latin1 \
    sqlhex="$hex")
has "$out" "ROW: kept|next" "latin1: a quote after --, then a no-break space: the query runs"
lacks "$(cat "$QG_MY_DIR/nbsp.log")" '"action"' "latin1: the no-break space comment: no finding"

# An introducer before a carriage return still names the literal's set: the
# latin1 byte e9 is no ill-formed UTF-8 before a quote.
out=$(with_shim enforce "$QG_MY_DIR/intro.log" "$LEGACY" "$QG_MY_SOCKET" db=qg charset=utf8mb4 \
    sqlhex="$(printf "SELECT _latin1\r'\xe9'" | od -An -tx1 | tr -d ' \n')")
has "$out" 'ROW: \xc3\xa9' "utf8mb4: _latin1, a carriage return, then a latin1 literal: the query runs"

tap_done
