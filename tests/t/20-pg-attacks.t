#!/bin/bash
# Multibyte escaping attacks against a real PostgreSQL server through libpq.
#
# For each client encoding: what the byte-wise escaped attack does without
# the shim (injects, or is refused by the server itself), that the shim in
# enforce mode blocks it before it leaves the client (the statement is not in
# the server log) and keeps the connection usable, that audit mode lets it
# through and logs the finding; then that text escaped correctly with
# PQescapeStringConn passes the shim and round-trips byte for byte.
# servers: pg
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/pg.sh

qg_require_build clients/pg_legacy
pg_available || tap_skip_all "no PostgreSQL server binaries (or not root)"
pg_start || tap_bail "cannot start PostgreSQL"
LEGACY=$QG_BUILD/clients/pg_legacy
pg_psql -c "CREATE TABLE users(name text, secret text);
            INSERT INTO users VALUES ('alice', 'secret_alice'), ('bob', 'secret_bob')" \
    || tap_bail "cannot create the table"

# The attacker's input: <lead byte> ' OR 1=1 --
ATTACK_TAIL=27204f5220313d31202d2d20

# encoding  lead byte  without the shim  (server SQLSTATE when it refuses)
#  inject: the escaper's backslash becomes the trail byte of a character and
#          the quote ends the literal — every secret comes back
#  refuse: the server finds the bytes invalid or unmappable
#  safe:   single-byte encoding, byte-wise escaping is correct
CASES=(
    "UTF8 c8 refuse 22021"
    "SJIS 95 inject"
    "SHIFT_JIS_2004 95 inject"
    "BIG5 a5 inject"
    "GBK bf inject"
    "UHC 81 refuse 22P05"
    "GB18030 81 inject"
    "EUC_JP a4 refuse 22021"
    "LATIN1 e9 safe"
)

# Runs the attack; MARKER names the statement in the server log.  The
# server cannot log a statement it refuses to decode, so its ERROR lines are
# counted too.
attack() { # ENC LEAD MARKER [runner…]
    local enc=$1 lead=$2 marker=$3
    shift 3
    "$@" "$LEGACY" --encoding "$enc" --scs off --escape naive --after "SELECT 'alive_$enc'" \
        "SELECT /*$marker*/ secret FROM users WHERE name = '%s'" "$lead$ATTACK_TAIL"
}
server_log() { cat "$QG_PG_LOG"; }
server_errors() { grep -ac ' ERROR: ' "$QG_PG_LOG"; }

for case in "${CASES[@]}"; do
    read -r enc lead expect sqlstate <<<"$case"
    tag="$enc $lead $expect"

    marker=qgm_plain_${enc}_$$
    errors=$(server_errors)
    out=$(attack "$enc" "$lead" "$marker")
    case $expect in
    inject)
        has "$out" "ROW: secret_bob" "$tag: without the shim the attack injects (other users' secrets)"
        has "$(server_log)" "$marker" "$tag: without the shim the statement reaches the server" ;;
    refuse)
        has "$out" "ERROR: $sqlstate " "$tag: without the shim the server itself refuses it ($sqlstate)"
        ok "$tag: the refusal is the server's (in its log)" [ "$(server_errors)" -gt "$errors" ] ;;
    safe)
        lacks "$out" "ROW: secret_" "$tag: without the shim nothing is injected (byte-wise escaping is right here)"
        has "$(server_log)" "$marker" "$tag: without the shim the statement reaches the server" ;;
    esac

    marker=qgm_enforce_${enc}_$$
    log=$QG_PG_DIR/enforce-$enc.log
    errors=$(server_errors)
    out=$(attack "$enc" "$lead" "$marker" with_shim enforce "$log")
    if [ "$expect" = safe ]; then
        lacks "$out" "quoteguard:" "$tag: enforce lets correctly escaped single-byte text through"
        has "$(server_log)" "$marker" "$tag: enforce: the statement reaches the server"
        lacks "$(cat "$log")" '"action"' "$tag: enforce: no finding logged"
    else
        matches "$out" '^ERROR: [0-9A-Z]{5} quoteguard: blocked ' "$tag: enforce blocks with a quoteguard error"
        lacks "$out" "ROW: secret_" "$tag: enforce: no secret leaks"
        lacks "$(server_log)" "$marker" "$tag: enforce: the statement is not in the server log"
        ok "$tag: enforce: the server saw nothing to refuse" [ "$(server_errors)" -eq "$errors" ]
        has "$out" "ROW: alive_$enc" "$tag: enforce: the connection stays usable"
        has "$(cat "$log")" "\"action\":\"blocked\",\"api\":\"PQexec\",\"dialect\":\"postgres\",\"encoding\":\"$enc\"" \
            "$tag: enforce: the block is logged"
    fi

    marker=qgm_audit_${enc}_$$
    log=$QG_PG_DIR/audit-$enc.log
    out=$(attack "$enc" "$lead" "$marker" with_shim audit "$log")
    case $expect in
    inject)
        has "$out" "ROW: secret_bob" "$tag: audit: the server runs it as sent"
        has "$(server_log)" "$marker" "$tag: audit: the statement reaches the server" ;;
    refuse)
        matches "$out" "^ERROR: $sqlstate (invalid|character)" "$tag: audit: the server's own error comes back" ;;
    safe)
        lacks "$out" "ROW: secret_" "$tag: audit: the server runs it as sent"
        has "$(server_log)" "$marker" "$tag: audit: the statement reaches the server" ;;
    esac
    if [ "$expect" = safe ]; then
        lacks "$(cat "$log")" '"action"' "$tag: audit: no finding logged"
    else
        matches "$(cat "$log")" "^\{.*\"action\":\"logged\",\"api\":\"PQexec\",\"dialect\":\"postgres\",\"encoding\":\"$enc\".*\"reason\":\"[a-z_]+\".*\}$" \
            "$tag: audit: a JSON line records the finding"
    fi
done

# Legitimate text: characters whose trail byte is 0x5c (and a quote and a
# backslash after them) escaped by PQescapeStringConn pass the shim and come
# back byte-identical, with either setting of standard_conforming_strings.
ROUNDTRIPS=(
    "SJIS 955c275c"            # 表 ' \
    "SJIS 835c"                # ソ
    "SJIS 8140"                # ideographic space
    "SHIFT_JIS_2004 955c"      # 表
    "BIG5 a55c275c"            # 功 ' \
    "GBK 815c"
    "GBK bf5c27"
    "GB18030 815c"
    "GB18030 81308130"         # four-byte character
    "UHC b0a1"                 # 가
    "EUC_JP a4a2a5bd"          # あソ
    "UTF8 e8a1a8275c"          # 表 ' \
    "LATIN1 e95c27"            # é \ '
)
for rt in "${ROUNDTRIPS[@]}"; do
    read -r enc hex <<<"$rt"
    for scs in off on; do
        log=$QG_PG_DIR/roundtrip.log
        out=$(with_shim enforce "$log" "$LEGACY" --encoding "$enc" --scs "$scs" --escape conn \
            --after "SELECT encode(convert_to(v, '$enc'), 'hex') FROM rt" \
            "CREATE TEMP TABLE rt AS SELECT '%s'::text AS v" "$hex")
        has "$out" "ROW: $hex" "$enc $hex (scs $scs): PQescapeStringConn text passes the shim and round-trips"
    done
done
has "$(cat "$QG_PG_DIR/roundtrip.log")" '"event":"attached"' "round trips ran under the shim"
lacks "$(cat "$QG_PG_DIR/roundtrip.log")" '"action"' "round trips: no finding logged"

# The same legitimate character escaped byte-wise is what the shim exists
# for: the doubled backslash would swallow the closing quote.
out=$(with_shim enforce "$QG_PG_DIR/naive.log" "$LEGACY" --encoding SJIS --scs off --escape naive \
    "SELECT '%s'::text" 955c)
matches "$out" '^ERROR: [0-9A-Z]{5} quoteguard: blocked ' "SJIS 955c escaped byte-wise: blocked"

tap_done
