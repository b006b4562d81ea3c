"""pg8000 point selects, for counting instructions per query under callgrind
(bench/bench_fronts.sh): pg8000 speaks the protocol itself, so the shim's
wire front is what guards it.  The key is in the text, so each query is
a statement pg8000 has not prepared before: Parse, Bind, Describe,
Execute, Sync (up to 1000 queries).  Connection from PGHOST (the socket's directory),
PGPORT, PGUSER, PGDATABASE.
   python3 bench_pg8000.py QUERIES
Prints "QUERIES ok"."""
import os
import sys

import pg8000

queries = int(sys.argv[1])
conn = pg8000.connect(user=os.environ["PGUSER"], database=os.environ["PGDATABASE"],
                      unix_sock="%s/.s.PGSQL.%s" % (os.environ["PGHOST"], os.environ["PGPORT"]))
cur = conn.cursor()
for i in range(queries):
    cur.execute("SELECT c FROM qg_bench WHERE id = %d" % (1 + (i * 7919) % 1000))
    if not cur.fetchall():
        sys.exit("bench_pg8000: no row")
conn.close()
print(queries, "ok")
