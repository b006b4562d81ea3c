"""Legacy PostgreSQL programs on drivers that speak the protocol themselves
(pg8000) or reach libpq around the preload (psycopg 3's ctypes binding):
client_encoding and standard_conforming_strings set by queries, then a query
whose input was escaped byte-wise (addslashes).  Connection from PGHOST,
PGPORT, PGUSER, PGDATABASE; with PGSSLMODE=require over TLS (pg8000: to
PGHOST:PGPORT with ssl=True, which does not verify the certificate).
   python3 pg_clients.py DRIVER ENCODING INPUT_HEX MARKER
   DRIVER: pg8000 | psycopg; INPUT_HEX "-" runs the legitimate page instead."""
import codecs
import os
import sys

driver, encoding, hexinput, marker = sys.argv[1:5]
PY_CODEC = {"SJIS": "shift_jis", "BIG5": "big5", "GBK": "gbk", "UTF8": "utf-8"}[encoding]

if driver == "pg8000":
    import pg8000

    if os.environ.get("PGSSLMODE") == "require":
        # Debian's pg8000 1.10: ssl=True wraps the socket without verifying
        where = {"host": os.environ["PGHOST"], "port": int(os.environ["PGPORT"]), "ssl": True}
    else:
        where = {"unix_sock": "%s/.s.PGSQL.%s" % (os.environ["PGHOST"], os.environ["PGPORT"])}
    conn = pg8000.connect(user=os.environ["PGUSER"], database=os.environ["PGDATABASE"], **where)
    Error = pg8000.Error

    def run(sql_bytes):
        cur = conn.cursor()
        cur.execute(sql_bytes.decode(PY_CODEC))
        return cur.fetchall() if cur.description else []
else:
    import psycopg

    conn = psycopg.connect("")
    Error = psycopg.Error

    def run(sql_bytes):
        cur = conn.execute(sql_bytes)
        return cur.fetchall() if cur.description else []

if os.environ.get("PGSSLMODE") == "require":
    print("TLS:", run(b"SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")[0][0])
run(b"SET client_encoding TO '" + encoding.encode() + b"'")
run(b"SET standard_conforming_strings TO off")
conn.commit()

if hexinput == "-":
    # legitimate: a text with 0x5c trail bytes, escaped for the encoding
    # (every character whole), stored and read back
    text = codecs.decode("955c275c", "hex").decode("shift_jis") if encoding == "SJIS" else "a'b\\c"
    lit = text.replace("\\", "\\\\").replace("'", "''").encode(PY_CODEC)
    run(b"CREATE TEMP TABLE rt (b text)")
    run(b"INSERT INTO rt VALUES ('" + lit + b"')")
    for row in run(b"SELECT b, encode(convert_to(b, 'UTF8'), 'hex') FROM rt WHERE b = '" + lit + b"'"):
        print("ROW:", row[1])
    conn.commit()
    print("DONE")
    sys.exit(0)

raw = bytes.fromhex(hexinput)
esc = raw.replace(b"\\", b"\\\\").replace(b"'", b"\\'")
sql = b"SELECT /*" + marker.encode() + b"*/ secret FROM users WHERE name = '" + esc + b"'"
try:
    for row in run(sql):
        print("ROW:", row[0])
    conn.commit()
except Error as e:
    print("ERROR:", str(e).replace("\n", " "))
    conn.rollback()
print("ALIVE:", run(b"SELECT 'alive'")[0][0])
