"""pg8000 inside a transaction: an INSERT, then the attack, whose error the
program ignores, then COMMIT.  A blocked statement must abort the
transaction as a failed one does, so the INSERT is not committed.
   python3 pg_txn.py MARKER   (connection from PGHOST, PGPORT, PGUSER, PGDATABASE)"""
import os
import sys

import pg8000

marker = sys.argv[1]
sock = "%s/.s.PGSQL.%s" % (os.environ["PGHOST"], os.environ["PGPORT"])


def connect():
    return pg8000.connect(user=os.environ["PGUSER"], unix_sock=sock,
                          database=os.environ["PGDATABASE"])


conn = connect()
cur = conn.cursor()
cur.execute("SET client_encoding TO 'SJIS'")
cur.execute("SET standard_conforming_strings TO off")
conn.commit()
cur.execute("INSERT INTO users VALUES ('" + marker + "', 'inserted')")
raw = bytes.fromhex("9527204f5220313d31202d2d20")
esc = raw.replace(b"\\", b"\\\\").replace(b"'", b"\\'")
try:
    cur.execute((b"SELECT secret FROM users WHERE name = '" + esc + b"'").decode("shift_jis"))
    print("ATTACK: ran")
except pg8000.Error as e:
    print("ATTACK: error ignored")
try:
    conn.commit()
except pg8000.Error as e:
    print("COMMIT: error")
check = connect().cursor()
check.execute("SELECT count(*) FROM users WHERE name = %s", (marker,))
print("COMMITTED ROWS:", check.fetchall()[0][0])
