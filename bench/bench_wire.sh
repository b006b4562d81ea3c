#!/bin/bash
# What the wire front costs (bench/bench_wire.c), part of `make bench`:
#  - a descriptor that is not a database connection: write(2) to /dev/null,
#    read(2) from /dev/zero, send/recv on a unix stream socket, through the
#    shim and through libc's own entries, paired in one process;
#  - the wire front's own work per query (framing both directions) beside
#    the check alone, without a server;
#  - one query through the wire front vs through the libpq front, paired in
#    one process on two connections to a throwaway server; and the same
#    program without the shim, for the baseline of both;
#  - the same pairs over TCP with TLS (the wire front reads the wire
#    connection's queries in libpq's SSL_write) and over TCP without it.
# Environment: BUILD (build), BENCH_RUNS (5: runs of each), BENCH_WIRE_ROUNDS
# (200), BENCH_WIRE_PAIRS (5000).  Not a test: it reports, it does not judge.
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
RUNS=${BENCH_RUNS:-5}
ROUNDS=${BENCH_WIRE_ROUNDS:-200}
PAIRS=${BENCH_WIRE_PAIRS:-5000}
SHIM=$PWD/$BUILD/libquoteguard.so
BIN=$PWD/$BUILD/bench/bench_wire
[ -x "$BIN" ] && [ -f "$SHIM" ] || { echo "bench_wire: run make bench" >&2; exit 1; }
. tests/lib/pg.sh
QG_PG_SSL=1 pg_start >/dev/null || { echo "bench_wire: cannot start PostgreSQL" >&2; exit 1; }
pg_psql -qc "ALTER SYSTEM SET log_statement = 'none'" -c "SELECT pg_reload_conf()" >/dev/null
shim() { env QUOTEGUARD_CONFIG=/dev/null QUOTEGUARD_MODE=enforce LD_PRELOAD="$SHIM" "$@"; }

echo "== wire front: its own work per query beside the check alone (ns, no server)"
for _ in $(seq 1 "$RUNS"); do env -u LD_PRELOAD "$BIN" cpu 21; done
echo "== wire front: a descriptor that is not a database connection (ns added per call)"
for _ in $(seq 1 "$RUNS"); do shim "$BIN" fd "$ROUNDS"; done
echo "== wire front vs libpq front: one query (us), enforce"
for _ in $(seq 1 "$RUNS"); do shim "$BIN" pg "$PAIRS"; done
echo "== the same queries without the shim (both connections unguarded)"
for _ in $(seq 1 "$RUNS"); do env -u LD_PRELOAD "$BIN" pg "$PAIRS" 2>/dev/null || true; done
echo "== over TCP with TLS (sslmode=require): wire front (in SSL_write) vs libpq front (us), enforce"
for _ in $(seq 1 "$RUNS"); do PGHOST=127.0.0.1 PGSSLMODE=require shim "$BIN" pg "$PAIRS"; done
echo "== over TCP without TLS (sslmode=disable), enforce"
for _ in $(seq 1 "$RUNS"); do PGHOST=127.0.0.1 PGSSLMODE=disable shim "$BIN" pg "$PAIRS"; done
echo "== over TCP with TLS without the shim"
for _ in $(seq 1 "$RUNS"); do PGHOST=127.0.0.1 PGSSLMODE=require env -u LD_PRELOAD "$BIN" pg "$PAIRS"; done
