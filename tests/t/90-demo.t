#!/bin/bash
# The README's first command, end to end: scripts/demo must show every attack
# injecting without quoteguard and blocked with it, and legitimate text passing.
# servers: pg mariadb
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
qg_require_build clients/pg_legacy clients/my_legacy

out=$(scripts/demo 2>&1)
status=$?
ok "demo exits 0" [ "$status" -eq 0 ]
has "$out" "without quoteguard           INJECTED (2 rows" "unprotected PostgreSQL client is injected"
matches "$out" "quoteguard --mode enforce +BLOCKED +\(quoteguard: blocked structure_mismatch.*\(SJIS\)" "enforce blocks the SJIS attack"
matches "$out" "quoteguard --mode rewrite +BLOCKED" "rewrite blocks it too"
matches "$out" "quoteguard --mode enforce +BLOCKED +\(quoteguard: blocked structure_mismatch.*\(gbk\)" "enforce blocks the GBK attack"
matches "$out" "quoteguard --mode audit +INJECTED" "audit passes it"
has "$out" "PostgreSQL server log: 2 statement(s)" "only the unprotected and audit runs reached PostgreSQL"
has "$out" "MariaDB general log:   2 statement(s)" "only the unprotected and audit runs reached MariaDB"
has "$out" '"action":"blocked","api":"PQexec"' "the log line names the API"
has "$out" "ROW: 955c835c" "SJIS text round-trips"
has "$out" "ROW: 815C" "GBK text round-trips"
has "$out" "Summary: injected without quoteguard: 2/2; blocked with it: 3/3" "summary"
lacks "$(ls -d /tmp/qg-demo.* 2>/dev/null)" "qg-demo" "the demo cleaned up its temp dir"
tap_done
