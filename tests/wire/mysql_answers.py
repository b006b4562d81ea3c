"""A PyMySQL program that calls procedures and prints everything the
protocol gives back to it, so that a run under the shim can be compared
byte for byte with one without it: for each statement its rows (as hex),
the affected rows, the last insert id, the server's info string, the
warnings, and ROW_COUNT() / FOUND_ROWS() after it.
   python3 mysql_answers.py SOCKET
The statements: on utf8mb4, CALL p_gbk() (SET NAMES gbk and a SELECT
inside), UTF-8 text; on gbk, CALL p_latin1(), GBK text with a 0x5c trail
byte; an UPDATE (its info string), an INSERT IGNORE that warns, a SELECT with
SQL_CALC_FOUND_ROWS."""
import sys

import pymysql

db = pymysql.connect(unix_socket=sys.argv[1], user="root", database="qg", charset="utf8mb4")
cur = db.cursor()


def show(sql):
    try:
        cur.execute(sql)
        while True:
            for row in cur.fetchall() or ():
                print("ROW:", " ".join(v.hex() if isinstance(v, bytes) else repr(v) for v in row))
            print("RESULT: rowcount", cur.rowcount, "lastrowid", cur.lastrowid,
                  "info", repr(cur._result.message), "warnings", cur._result.warning_count)
            if not cur.nextset():
                break
    except pymysql.MySQLError as e:
        print("ERROR:", e.args[0], e.args[1])


def after(sql):
    show(sql)
    show("SHOW WARNINGS")
    show("SELECT ROW_COUNT(), FOUND_ROWS()")


cur.execute("CREATE TEMPORARY TABLE t (id INT PRIMARY KEY AUTO_INCREMENT, s VARBINARY(32), n TINYINT)")
after("CALL p_gbk()")
after("SELECT HEX('\u4e3f\\'x') AS h")
after("INSERT IGNORE INTO t (s, n) VALUES ('\u4e3f\\'x', 1), ('b', 300)")
after("UPDATE t SET n = 2 WHERE s = 'b'")
after("SELECT SQL_CALC_FOUND_ROWS id, s FROM t LIMIT 1")
cur.execute("SET NAMES gbk")
after("CALL p_latin1()")
after(b"SELECT HEX('\xbf\x5c\\'x') AS h")
after(b"INSERT INTO t (s, n) VALUES ('\xbf\x5c\\'x', 3)")
after("SELECT ROW_COUNT()")
