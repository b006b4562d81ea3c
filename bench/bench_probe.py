"""What the wire front's question about a MySQL connection's state costs a
client: PyMySQL rounds of two queries over a unix socket, timed.
   /usr/bin/python3 bench/bench_probe.py SOCKET [ROUNDS]
unknown: SET character_set_client = @v, then SELECT 'é' (under the shim in
enforce, the server is asked before the SELECT); known: SET
character_set_client = 'utf8mb4', then the same SELECT (nothing asked).
Prints the median of 5 runs of each, in microseconds a round; run it with
and without the shim (LD_PRELOAD, QUOTEGUARD_MODE=enforce): the question
costs the difference between unknown and known with the shim, less the same
difference without it.  Not a test: it reports, it does not judge."""
import statistics
import sys
import time

import pymysql

sock = sys.argv[1]
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
db = pymysql.connect(unix_socket=sock, user="root", charset="utf8mb4", autocommit=True)
cur = db.cursor()
cur.execute("SET @v = 'utf8mb4'")
SETS = {"unknown": "SET character_set_client = @v",
        "known": "SET character_set_client = 'utf8mb4'"}


def run(kind):
    start = time.perf_counter()
    for _ in range(rounds):
        cur.execute(SETS[kind])
        cur.execute("SELECT '\u00e9'")
        cur.fetchall()
    return (time.perf_counter() - start) / rounds * 1e6


times = {kind: [] for kind in SETS}
for _ in range(5):
    for kind in SETS:
        times[kind].append(run(kind))
for kind in SETS:
    print("%-8s %.1f us a round (runs: %s)" % (
        kind, statistics.median(times[kind]), " ".join("%.1f" % t for t in times[kind])))
