"""A legacy PyMySQL program: SET NAMES as a query, then a query whose input
was escaped byte-wise (addslashes).  With "multi", both in one text.
   python3 mysql_pymysql.py SOCKET CHARSET INPUT_HEX MARKER [multi]
SOCKET tls:PORT: over TLS to 127.0.0.1:PORT, the certificate not verified."""
import sys

import pymysql
from pymysql.constants import CLIENT

sock, charset, hexinput, marker = sys.argv[1:5]
multi = sys.argv[5:] == ["multi"]
if sock.startswith("tls:"):
    where = {"host": "127.0.0.1", "port": int(sock[4:]), "ssl": {"verify_mode": False}}
else:
    where = {"unix_socket": sock}
db = pymysql.connect(user="root", database="qg", charset="utf8mb4",
                     client_flag=CLIENT.MULTI_STATEMENTS if multi else 0, **where)
cur = db.cursor()
if sock.startswith("tls:"):
    cur.execute("SHOW SESSION STATUS LIKE 'Ssl_version'")
    print("TLS:", cur.fetchall()[0][1])
raw = bytes.fromhex(hexinput)
esc = raw.replace(b"\\", b"\\\\").replace(b"'", b"\\'")
sql = b"SELECT /*" + marker.encode() + b"*/ secret FROM users WHERE name = '" + esc + b"'"
if multi:
    sql = b"SET NAMES " + charset.encode() + b"; " + sql
else:
    cur.execute("SET NAMES " + charset)
try:
    cur.execute(sql)
    while True:
        for row in cur.fetchall():
            print("ROW:", row[0])
        if not cur.nextset():
            break
except pymysql.MySQLError as e:
    print("ERROR:", e.args[0], e.args[1])
cur.execute("SELECT 'alive'")
print("ALIVE:", cur.fetchall()[0][0])
