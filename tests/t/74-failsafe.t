#!/bin/bash
# Fail-safe behaviour: when the shim cannot decide — the client encoding is
# one it does not know, the shim runs out of memory, a real symbol is
# missing — enforce must block with a "quoteguard:" message and send
# nothing, audit must pass and log.  And the log: query bytes (newlines,
# quotes, ESC, JSON-looking text) cannot forge or split lines, every line
# is bounded JSON, and a password in an attack-shaped statement is not
# logged whole unless the operator asks for full queries.
# servers: pg mariadb
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/pg.sh
. tests/lib/mariadb.sh
. tests/lib/hardening.sh

qg_require_build clients/both_stub clients/pg_legacy clients/my_legacy
STUB=$QG_BUILD/clients/both_stub
STUB_PQ=$(qg_helper_build libstub_pq.so tests/clients/ext/stub_pq.c -shared -fPIC -Wl,-soname,libpq.so.5) ||
    tap_bail "cannot build the libpq stand-in"
STUB_MY=$(qg_helper_build libstub_mariadb.so tests/clients/ext/stub_mariadb.c -shared -fPIC -Wl,-soname,libmariadb.so.3) ||
    tap_bail "cannot build the libmariadb stand-in"
FAILALLOC=$(qg_helper_build libfailalloc.so tests/clients/ext/failalloc.c -shared -fPIC) ||
    tap_bail "cannot build the allocation-failure injector"
TMP=$(mktemp -d /tmp/qg-failsafe.XXXXXX)
qg_at_exit "rm -rf '$TMP'"

# ------------------------------------------- encodings the shim cannot know
# A real server only reports encodings the checker knows (every PostgreSQL
# client encoding, every MariaDB 10.11 client charset), so stand-in
# libraries report the names: none at all, and one nobody knows.
for mode in enforce audit; do
    for enc in "" KOI8_FAKE; do
        log=$TMP/pq-$mode-$enc.log
        out=$(STUB_PQ_ENCODING=$enc with_shim $mode "$log" "$STUB" pq "$STUB_PQ" "SELECT 1")
        [ -z "$enc" ] && out_name='(none)' || out_name=$enc
        if [ $mode = enforce ]; then
            has "$out" "SENT: 0" "pg $mode, client encoding $out_name: nothing reaches the library"
            has "$out" "PQERRORMESSAGE: ERROR:  quoteguard: blocked: unknown client encoding \"$enc\"" \
                "pg $mode, client encoding $out_name: PQerrorMessage says why (quoteguard:)"
            has "$out" "PQEXEC: null" "pg $mode: PQexec returns NULL when libpq has no PQmakeEmptyPGresult (no crash)"
            has "$(cat "$log")" '"event":"missing_symbol","detail":"PQmakeEmptyPGresult"' "pg $mode: the missing symbol is logged"
        else
            has "$out" "SENT: 1" "pg $mode, client encoding $out_name: the query is sent"
        fi
        has "$(cat "$log")" "\"action\":\"$([ $mode = enforce ] && echo blocked || echo logged)\",\"api\":\"PQexec\",\"dialect\":\"postgres\",\"encoding\":\"$enc\"" \
            "pg $mode, client encoding $out_name: logged as $([ $mode = enforce ] && echo blocked || echo logged)"
    done
    out=$(STUB_PQ_ENCODING=UTF8 with_shim $mode "$TMP/pq-known.log" "$STUB" pq "$STUB_PQ" "SELECT 1")
    has "$out" "SENT: 1" "pg $mode, a known encoding: the clean query is sent (the stand-in works)"

    # The MySQL front takes the state from the server only; a library that
    # cannot ask it (the stand-in has no mysql_store_result) leaves the
    # state unknown, whatever charset the library itself reports: a query
    # that does not read alike in every state (a backslash) is not checked.
    for cs in "" utf16 latin1; do
        log=$TMP/my-$mode-$cs.log
        out=$(STUB_MY_CHARSET=$cs with_shim $mode "$log" "$STUB" my "$STUB_MY" "SELECT 'a\\b'")
        [ -z "$cs" ] && out_name='(none)' || out_name=$cs
        if [ $mode = enforce ]; then
            has "$out" "SENT: 0" "mysql $mode, library charset $out_name, state unknown: nothing reaches the library"
            has "$out" "MYSQL_ERROR: quoteguard: blocked state_unknown:" \
                "mysql $mode, library charset $out_name: mysql_error says why"
            has "$out" "MYSQL_ERRNO: 1105" "mysql $mode, library charset $out_name: mysql_errno 1105"
        else
            has "$out" "SENT: 1" "mysql $mode, library charset $out_name, state unknown: the query is sent"
        fi
        matches "$(cat "$log")" "\"action\":\"$([ $mode = enforce ] && echo blocked || echo logged)\",\"api\":\"mysql_real_query\",\"dialect\":\"mysql\",\"encoding\":\"\",\"conn\":\"0x[0-9a-f]+\",\"reason\":\"state_unknown\"" \
            "mysql $mode, library charset $out_name: logged as state_unknown"
    done
    # Enforce logs each text it blocks; audit says once for the connection
    # that its state is unknown.
    log=$TMP/my-$mode-three.log
    out=$(with_shim $mode "$log" "$STUB" my "$STUB_MY" "SELECT 'a\\b'" "SELECT 'c\\d'" "SELECT 'e\\f'")
    want=$([ $mode = enforce ] && echo 3 || echo 1)
    ok "mysql $mode, state unknown, three texts: $want state_unknown line(s) logged" \
        [ "$(grep -c '"reason":"state_unknown"' "$log")" -eq "$want" ]
    has "$out" "SENT: $([ $mode = enforce ] && echo 0 || echo 3)" \
        "mysql $mode, state unknown, three texts: $([ $mode = enforce ] && echo none || echo all) sent"
    out=$(with_shim $mode "$TMP/my-alike-$mode.log" "$STUB" my "$STUB_MY" "SELECT 1")
    has "$out" "SENT: 1" "mysql $mode, state unknown: a query that reads alike in every state is sent"
done

# ------------------------------------------------- real symbols missing
log=$TMP/none.log
out=$(with_shim enforce "$log" "$STUB" none "SELECT 1")
has "$out" "PQEXEC: null" "no libpq at all: PQexec returns NULL (no crash)"
has "$out" "MYSQL_REAL_QUERY: 1" "no libmariadb at all: mysql_real_query fails"
has "$out" "MYSQL_ERROR: quoteguard: mysql_error not found in the client library" "no libmariadb: mysql_error says so"
for sym in PQexec mysql_real_query; do
    has "$(cat "$log")" "\"event\":\"missing_symbol\",\"detail\":\"$sym\"" "no client library: missing $sym logged as an error"
done

# --------------------------------------------------- servers from here on
pg_available || { ok "PostgreSQL server binaries (and root)" false; tap_done; }
my_available || { ok "MariaDB server binaries (and root)" false; tap_done; }
pg_start || tap_bail "cannot start PostgreSQL"
my_start || tap_bail "cannot start MariaDB"
my_sql -e "CREATE DATABASE qg;
           CREATE TABLE qg.users (name VARBINARY(64), secret VARCHAR(64));
           INSERT INTO qg.users VALUES ('alice', 'secret_alice'), ('bob', 'secret_bob')" ||
    tap_bail "cannot create the MariaDB table"
# ' OR 1=1 -- after the lead byte
TAIL=27204f5220313d31202d2d20

# ------------------------------------------------------- out of memory
# libfailalloc.so makes every allocation the shim itself asks for fail;
# libpq, libmariadb and the program allocate as usual.
oom() { # MODE LOG command…
    local mode=$1 log=$2
    shift 2
    qg_preload_env "$mode" "$log" "$FAILALLOC $QG_SHIM" "$@"
}
marker=qg_oom_pg_$$
out=$(oom enforce "$TMP/oom-pg.log" "$QG_BUILD/clients/pg_legacy" --encoding SJIS --scs off \
    --after "SELECT 'alive'" "SELECT /*$marker*/ '%s' AS v" "95$TAIL" 2>&1)
has "$out" "STATUS: PGRES_FATAL_ERROR" "pg, shim out of memory, enforce: the attack fails"
lacks "$(cat "$QG_PG_LOG")" "$marker" "pg, shim out of memory, enforce: the attack never reaches the server"
has "$out" "ROW: alive" "pg, shim out of memory: the connection stays usable"
has "$out" "ERRMSG: ERROR:  quoteguard: blocked" "pg, shim out of memory, enforce: the error message says quoteguard: blocked"
has "$(cat "$TMP/oom-pg.log")" '"action":"blocked","api":"PQexec"' "pg, shim out of memory, enforce: the finding is logged"
marker=qg_oom_pg_audit_$$
out=$(oom audit "$TMP/oom-pg-audit.log" "$QG_BUILD/clients/pg_legacy" --encoding SJIS --scs off \
    "SELECT /*$marker*/ '%s' AS v" "a5c3" 2>&1)
has "$out" "ROW: " "pg, shim out of memory, audit: a clean query passes"
has "$(cat "$QG_PG_LOG")" "$marker" "pg, shim out of memory, audit: it reached the server"

my_oom() { # MODE LOG MARKER
    oom "$1" "$2" "$QG_BUILD/clients/my_legacy" "$QG_MY_SOCKET" db=qg set-names=gbk escape=bytewise \
        "template=SELECT /*$3*/ secret FROM users WHERE name = '%s'" input="bf$TAIL" sql="SELECT 'alive'" 2>&1
}
marker=qg_oom_my_$$
out=$(my_oom enforce "$TMP/oom-my.log" "$marker")
lacks "$out" "ROW: secret_" "mysql, shim out of memory, enforce: no secret leaks"
lacks "$(cat "$QG_MY_LOG")" "$marker" "mysql, shim out of memory, enforce: the attack never reaches the server"
matches "$out" '^ERROR: 1105 [0-9A-Z]{5} quoteguard: blocked' "mysql, shim out of memory, enforce: mysql_error says quoteguard: blocked"
has "$out" "ROW: alive" "mysql, shim out of memory: the connection stays usable"
marker=qg_oom_my_audit_$$
out=$(my_oom audit "$TMP/oom-my-audit.log" "$marker")
has "$(cat "$QG_MY_LOG")" "$marker" "mysql, shim out of memory, audit: the query passes"
has "$(cat "$TMP/oom-my-audit.log")" '"level":"error","event":"out_of_memory"' "mysql, shim out of memory, audit: logged as an error"

# ------------------------------------------------------ log forging
# Findings only, one per blocked query: checks every line of LOG; prints
# problems, nothing when all is well.
check_log_lines() { # LOG EXPECTED_FINDINGS MAX_EXCERPT
    python3 - "$@" <<'EOF'
import json, sys
path, expected, max_excerpt = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
data = open(path, "rb").read()
lines = data.split(b"\n")
if lines[-1] != b"":
    print("log does not end with a newline")
findings = 0
for n, raw in enumerate(lines[:-1], 1):
    if len(raw) + 1 > 4096:
        print(f"line {n}: {len(raw) + 1} bytes")
    bad = [b for b in raw if b < 0x20 or b >= 0x7f]
    if bad:
        print(f"line {n}: raw bytes {bytes(bad[:8])!r}")
    try:
        obj = json.loads(raw)
    except ValueError as e:
        print(f"line {n}: not JSON: {e}: {raw[:120]!r}")
        continue
    if not isinstance(obj, dict) or "time" not in obj:
        print(f"line {n}: not a quoteguard line")
    if "reason" in obj:
        findings += 1
        if len(obj.get("excerpt", "")) > max_excerpt:
            print(f"line {n}: excerpt of {len(obj['excerpt'])} bytes")
        if "allowed" in obj.get("action", "") or obj.get("forged") is not None:
            print(f"line {n}: forged field")
if findings != expected:
    print(f"{findings} finding lines, expected {expected}")
EOF
}
# The payload: newline, CR, a JSON line of its own, quotes, ESC sequences,
# NUL-free; hex of: \n{"time":"x","action":"allowed","forged":1}\r\n\x1b[2J\x1b]0;owned\x07 "'\\
FORGE=0a7b2274696d65223a2278222c22616374696f6e223a22616c6c6f776564222c22666f72676564223a317d0d0a1b5b324a1b5d303b6f776e6564072022275c
log=$TMP/forge-pg.log
for api in exec send params prepare; do
    with_shim enforce "$log" "$QG_BUILD/clients/pg_legacy" --encoding SJIS --scs off --api $api \
        "SELECT '%s' AS v" "95$TAIL$FORGE$FORGE" >/dev/null 2>&1
done
problems=$(check_log_lines "$log" 4 64)
ok "pg: 4 blocked queries with forged log text: 4 finding lines, each JSON, no raw control bytes, excerpt <= 64 bytes" \
    [ -z "$problems" ] || tap_diag "$problems"
lacks "$(cat "$log")" '"forged":1' "pg: the forged JSON never appears unescaped"

log=$TMP/forge-my.log
for via in real query send; do
    with_shim enforce "$log" "$QG_BUILD/clients/my_legacy" "$QG_MY_SOCKET" db=qg via=$via set-names=gbk \
        escape=bytewise input="bf$TAIL$FORGE" >/dev/null 2>&1
done
problems=$(check_log_lines "$log" 3 64)
ok "mysql: 3 blocked queries with forged log text: 3 finding lines, each JSON, no raw control bytes, excerpt <= 64 bytes" \
    [ -z "$problems" ] || tap_diag "$problems"

# A 20 kB attack with full queries asked for: the line is cut, still JSON.
long=$(head -c 10000 /dev/zero | tr '\0' 'A' | od -An -v -tx1 | tr -d ' \n')
log=$TMP/forge-long.log
QUOTEGUARD_LOG_FULL_QUERY=1 with_shim enforce "$log" "$QG_BUILD/clients/pg_legacy" --encoding SJIS --scs off \
    "SELECT '%s' AS v" "95$TAIL$FORGE$long$long" >/dev/null 2>&1
problems=$(check_log_lines "$log" 1 100000)
ok "pg: a 20 kB attack logged in full: one line <= 4096 bytes, JSON, no raw control bytes" \
    [ -z "$problems" ] || tap_diag "$problems"
has "$(cat "$log")" '"truncated":true' "pg: the cut line says \"truncated\":true"

# --------------------------------------------------- passwords in the log
SECRET=Tr0ub4dor-and-correct-horse-battery-staple-0123456789-abcdefghijklmnopqrstuvwxyz
secret_hex=$(printf '%s' "$SECRET" | od -An -v -tx1 | tr -d ' \n')
log=$TMP/password.log
out=$(with_shim enforce "$log" "$QG_BUILD/clients/pg_legacy" --encoding SJIS --scs off \
    "ALTER ROLE qgtest PASSWORD '%s'" "95${TAIL}${secret_hex}" 2>&1)
has "$out" "ERROR: 42601 quoteguard: blocked" "ALTER ROLE … PASSWORD with an attack-shaped password: blocked"
problems=$(check_log_lines "$log" 1 64)
ok "ALTER ROLE … PASSWORD: one finding line, excerpt <= 64 bytes" [ -z "$problems" ] || tap_diag "$problems"
lacks "$(cat "$log")" "$SECRET" "ALTER ROLE … PASSWORD: the whole password is not in the log"
lacks "$(cat "$QG_PG_LOG")" "$SECRET" "ALTER ROLE … PASSWORD: nor in the server's log (never sent)"
log=$TMP/password-full.log
QUOTEGUARD_LOG_FULL_QUERY=1 with_shim enforce "$log" "$QG_BUILD/clients/pg_legacy" --encoding SJIS --scs off \
    "ALTER ROLE qgtest PASSWORD '%s'" "95${TAIL}${secret_hex}" >/dev/null 2>&1
has "$(cat "$log")" "$SECRET" "with QUOTEGUARD_LOG_FULL_QUERY=1 the operator gets the whole statement"

tap_done
