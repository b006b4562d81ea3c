#!/bin/bash
# The wire front against PostgreSQL: pg8000 (speaks the protocol itself,
# extended protocol: Parse), and psycopg 3 as Debian ships it (its ctypes
# binding resolves PQsendQuery from libpq's own handle; the dlsym front gives
# it the libpq front's, so it is checked there, once, and the wire front
# leaves its socket alone: 72-dlsym.t has it with the wire front off), after
# `SET client_encoding` / `SET
# standard_conforming_strings TO off` queries.  The byte-wise escaped attack
# injects without the shim; with it the message is replaced by one the server
# answers with an ordinary error naming quoteguard, the attack is not in the
# server log, and after a rollback the connection works.  The encoding comes
# from the server's ParameterStatus.  Legitimate text with 0x5c trail bytes
# round-trips the same with and without the shim.
# servers: pg
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/pg.sh

qg_require_build
pg_available || tap_skip_all "no PostgreSQL server binaries (or not root)"
PY=/usr/bin/python3
"$PY" -c 'import pg8000, psycopg' ||
    tap_bail "python3-pg8000 / python3-psycopg are not installed (scripts/install-deps installs them)"
pg_start || tap_bail "cannot start PostgreSQL"
pg_psql -c "CREATE TABLE users(name text, secret text);
            INSERT INTO users VALUES ('alice', 'secret_alice'), ('bob', 'secret_bob')" \
    || tap_bail "cannot create the table"

ATTACK_TAIL=27204f5220313d31202d2d20 # ' OR 1=1 --
CASES=("SJIS 95" "BIG5 a5" "GBK bf")
secrets() { printf '%s\n' "$1" | grep -ac '^ROW: secret_'; }
server_log() { cat "$QG_PG_LOG"; }

for driver in pg8000 psycopg; do
    api='wire:Parse' names='quoteguard: blocked structure_mismatch'
    # psycopg drops the text before the first colon of libpq's message (the severity)
    [ "$driver" = psycopg ] && api='PQsendQuery' names='blocked structure_mismatch'
    for case in "${CASES[@]}"; do
        read -r enc lead <<<"$case"
        tag="$driver $enc"
        marker=qgw_plain_${driver}_${enc}_$$
        out=$("$PY" tests/wire/pg_clients.py "$driver" "$enc" "$lead$ATTACK_TAIL" "$marker" 2>&1)
        ok "$tag: without the shim the attack injects (both secrets)" [ "$(secrets "$out")" -eq 2 ]

        marker=qgw_enforce_${driver}_${enc}_$$
        log=$QG_PG_DIR/enforce-$driver-$enc.log
        out=$(with_shim enforce "$log" "$PY" tests/wire/pg_clients.py "$driver" "$enc" "$lead$ATTACK_TAIL" "$marker" 2>&1)
        has "$out" "ERROR:" "$tag: enforce: the driver gets an ordinary server error"
        has "$out" "$names" "$tag: enforce: the error names the block"
        lacks "$out" "ROW: secret_" "$tag: enforce: no secret leaks"
        lacks "$(server_log)" "$marker" "$tag: enforce: the attack never reaches the server"
        has "$out" "ALIVE: alive" "$tag: enforce: after a rollback the connection works"
        has "$(cat "$log")" "\"action\":\"blocked\",\"api\":\"$api\",\"dialect\":\"postgres\",\"encoding\":\"$enc\"" \
            "$tag: enforce: blocked ($api) with the encoding the server reported"
    done
    plain=$("$PY" tests/wire/pg_clients.py "$driver" SJIS - - 2>&1)
    log=$QG_PG_DIR/legit-$driver.log
    shimmed=$(with_shim enforce "$log" "$PY" tests/wire/pg_clients.py "$driver" SJIS - - 2>&1 | grep -v '"event":"attached"')
    has "$plain" "ROW: e8a1a8275c" "$driver legit: 表'\\ round-trips in SJIS without the shim"
    ok "$driver legit: the same output with the shim" [ "$plain" = "$shimmed" ]
    lacks "$(cat "$log" 2>/dev/null)" '"action"' "$driver legit: nothing logged as a finding"
done

# In a transaction: the replacement raises, so the server aborts the
# transaction, and a program that ignores the error and commits commits nothing.
out=$("$PY" tests/wire/pg_txn.py qgw_txn_plain_$$ 2>&1)
has "$out" "COMMITTED ROWS: 1" "transaction: without the shim the INSERT before the attack is committed"
out=$(with_shim enforce "$QG_PG_DIR/txn.log" "$PY" tests/wire/pg_txn.py qgw_txn_$$ 2>&1)
has "$out" "ATTACK: error ignored" "transaction: enforce: the attack fails"
has "$out" "COMMITTED ROWS: 0" "transaction: enforce: the program's COMMIT commits nothing"

marker=qgw_audit_$$
log=$QG_PG_DIR/audit.log
out=$(with_shim audit "$log" "$PY" tests/wire/pg_clients.py pg8000 SJIS "95$ATTACK_TAIL" "$marker" 2>&1)
ok "audit: the attack goes through unchanged" [ "$(secrets "$out")" -eq 2 ]
has "$(cat "$log")" '"action":"logged","api":"wire:Parse"' "audit: the finding is logged"

out=$(QUOTEGUARD_WIRE=off with_shim enforce "$QG_PG_DIR/off.log" "$PY" tests/wire/pg_clients.py pg8000 SJIS "95$ATTACK_TAIL" qgw_off_$$ 2>&1)
ok "QUOTEGUARD_WIRE=off: the wire front does nothing" [ "$(secrets "$out")" -eq 2 ]

tap_done
