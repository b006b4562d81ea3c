"""A legacy PyMySQL program: SET NAMES as a query, then a query whose input
was escaped byte-wise (addslashes).
   python3 mysql_pymysql.py SOCKET CHARSET INPUT_HEX MARKER"""
import sys
import pymysql

sock, charset, hexinput, marker = sys.argv[1:5]
db = pymysql.connect(unix_socket=sock, user="root", database="qg", charset="utf8mb4")
cur = db.cursor()
cur.execute("SET NAMES " + charset)
raw = bytes.fromhex(hexinput)
esc = raw.replace(b"\\", b"\\\\").replace(b"'", b"\\'")
sql = b"SELECT /*" + marker.encode() + b"*/ secret FROM users WHERE name = '" + esc + b"'"
try:
    cur.execute(sql)
    for row in cur.fetchall():
        print("ROW:", row[0])
except pymysql.MySQLError as e:
    print("ERROR:", e.args[0], e.args[1])
cur.execute("SELECT 'alive'")
print("ALIVE:", cur.fetchall()[0][0])
