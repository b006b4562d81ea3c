#!/bin/bash
# The dlsym front: psycopg 3 as Debian ships it loads libpq with ctypes
# (RTLD_LOCAL) and resolves PQsendQuery from libpq's own handle, around the
# preload.  With the wire front off (QUOTEGUARD_WIRE=off) only the libpq
# front can guard it: dlsym on libpq's handle must answer with the shim's
# PQsendQuery.  The byte-wise escaped attack after SET client_encoding and
# standard_conforming_strings off queries injects without the shim and is
# blocked by the libpq front with it (never reaching the server); a
# legitimate text round-trips the same.  With both fronts on, one check per
# query: the libpq front's, the wire front leaving the socket alone.
# (70-threads.t runs ThreadSanitizer clients, whose runtime calls dlsym
# before any constructor: the front must answer them without recursion.)
# servers: pg
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/pg.sh

qg_require_build
pg_available || tap_skip_all "no PostgreSQL server binaries (or not root)"
PY=/usr/bin/python3
"$PY" -c 'import psycopg' || tap_bail "python3-psycopg is not installed (scripts/install-deps installs it)"
[ "$(uname -m)" = x86_64 ] || tap_skip_all "the dlsym front is built for x86-64 only"
pg_start || tap_bail "cannot start PostgreSQL"
pg_psql -c "CREATE TABLE users(name text, secret text);
            INSERT INTO users VALUES ('alice', 'secret_alice'), ('bob', 'secret_bob')" \
    || tap_bail "cannot create the table"

ATTACK_TAIL=27204f5220313d31202d2d20 # ' OR 1=1 --
secrets() { printf '%s\n' "$1" | grep -ac '^ROW: secret_'; }
page() { # RUNNER… -- ENCODING INPUT_HEX MARKER
    local -a runner=()
    while [ "$1" != -- ]; do runner+=("$1"); shift; done
    shift
    "${runner[@]}" "$PY" tests/wire/pg_clients.py psycopg "$@"
}

for case in "SJIS 95" "GBK bf"; do
    read -r enc lead <<<"$case"
    marker=qgd_plain_${enc}_$$
    out=$(page env -- "$enc" "$lead$ATTACK_TAIL" "$marker" 2>&1)
    ok "psycopg $enc: without the shim the attack injects (both secrets)" [ "$(secrets "$out")" -eq 2 ]

    marker=qgd_wire_off_${enc}_$$
    log=$QG_PG_DIR/wire-off-$enc.log
    out=$(QUOTEGUARD_WIRE=off page with_shim enforce "$log" -- "$enc" "$lead$ATTACK_TAIL" "$marker" 2>&1)
    has "$out" "blocked structure_mismatch" "psycopg $enc, wire front off: the libpq front blocks the attack"
    lacks "$out" "ROW: secret_" "psycopg $enc, wire front off: no secret leaks"
    lacks "$(cat "$QG_PG_LOG")" "$marker" "psycopg $enc, wire front off: the attack never reaches the server"
    has "$out" "ALIVE: alive" "psycopg $enc, wire front off: after a rollback the connection works"
    matches "$(cat "$log")" "\"action\":\"blocked\",\"api\":\"PQ[A-Za-z]+\",\"dialect\":\"postgres\",\"encoding\":\"$enc\"" \
        "psycopg $enc, wire front off: logged as blocked by a libpq entry"
done

log=$QG_PG_DIR/both.log
out=$(page with_shim enforce "$log" -- SJIS "95$ATTACK_TAIL" qgd_both_$$ 2>&1)
has "$out" "blocked structure_mismatch" "psycopg, both fronts on: the attack is blocked"
ok "psycopg, both fronts on: one finding, the libpq front's" \
    [ "$(grep -c '"action":"blocked"' "$log") $(grep -c '"api":"wire:' "$log")" = "1 0" ]

# The libpq front knows that no connection is in pipeline mode until
# PQenterPipelineMode is called: looked up on libpq's handle, it must be the
# shim's too.
same=$(with_shim enforce "$QG_PG_DIR/pipeline.log" "$PY" -c '
import ctypes, sys
libpq = ctypes.CDLL("libpq.so.5")
shim = ctypes.CDLL(sys.argv[1])
def address(lib):
    return ctypes.cast(lib.PQenterPipelineMode, ctypes.c_void_p).value
print("shim" if address(libpq) == address(shim) else "libpq")' "$QG_SHIM" 2>&1)
ok "dlsym on libpq's handle: PQenterPipelineMode is the shim's" [ "$same" = shim ]

plain=$(page env -- SJIS - - 2>&1)
log=$QG_PG_DIR/legit.log
shimmed=$(QUOTEGUARD_WIRE=off page with_shim enforce "$log" -- SJIS - - 2>&1 | grep -v '"event":"attached"')
has "$plain" "ROW: e8a1a8275c" "psycopg legit: 表'\\ round-trips in SJIS without the shim"
ok "psycopg legit, wire front off: the same output with the shim" [ "$plain" = "$shimmed" ]
lacks "$(cat "$log" 2>/dev/null)" '"action"' "psycopg legit: nothing logged as a finding"
tap_done
