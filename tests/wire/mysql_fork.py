"""A PyMySQL connection made before fork(2), used by the child: the child's
attack (SET NAMES gbk, then addslashes) is blocked as the parent's would be.
   python3 mysql_fork.py SOCKET MARKER"""
import os
import sys

import pymysql

sock, marker = sys.argv[1:3]
db = pymysql.connect(unix_socket=sock, user="root", database="qg", charset="utf8mb4")
cur = db.cursor()
cur.execute("SET NAMES gbk")
pid = os.fork()
if pid == 0:
    raw = bytes.fromhex("bf27204f5220313d31202d2d20")
    esc = raw.replace(b"\\", b"\\\\").replace(b"'", b"\\'")
    try:
        cur.execute(b"SELECT /*" + marker.encode() + b"*/ secret FROM users WHERE name = '" + esc + b"'")
        for row in cur.fetchall():
            print("CHILD ROW:", row[0], flush=True)
    except pymysql.MySQLError as e:
        print("CHILD ERROR:", e.args[0], e.args[1], flush=True)
    cur.execute("SELECT 'alive'")
    print("CHILD ALIVE:", cur.fetchall()[0][0], flush=True)
    os._exit(0)
os.waitpid(pid, 0)
