"""PyMySQL after statements whose effect on the connection's state only the
server knows.
   python3 mysql_probe.py SOCKET var attack|legit MARKER [TIMES]
   python3 mysql_probe.py SOCKET names-default MARKER
   python3 mysql_probe.py SOCKET restore DB DUMPFILE
   python3 mysql_probe.py SOCKET diag
   python3 mysql_probe.py SOCKET row-count
   python3 mysql_probe.py SOCKET killed
   python3 mysql_probe.py SOCKET stopped SERVER_PID MARKER
var: SET @v = 'gbk', SET character_set_client = @v, then the attack (bf 27
' OR 1=1 -- escaped by addslashes, in a SELECT of the secrets) or a GBK
character whose trail byte is 0x5c next to a quote, escaped for GBK;
TIMES of them (1 by default).
names-default: SET NAMES gbk, SET NAMES DEFAULT (the server's character
set), then UTF-8 text with quotes and backslashes, escaped by PyMySQL.
restore: the statements of a mysqldump file, one query each, into DB.
diag: what the client reads around such statements: affected rows, insert
ids, warning counts, ROW_COUNT(), FOUND_ROWS(), LAST_INSERT_ID(), SHOW
WARNINGS.  row-count: a query that reads ROW_COUNT() after such a statement,
then ones that read alike in every state.
killed: such a statement, then the connection is killed from another one,
then a query that needs the state (no answer can come).  stopped: such a
statement, then the server is stopped (SIGSTOP) for 15 s while a query that
needs the state goes; prints how long the query took, and whether the
connection answers once the server runs again.
SOCKET tls:PORT: over TLS to 127.0.0.1:PORT, the certificate not verified.
Each answer is printed; then the connection still answers."""
import sys
import time

import pymysql

sock, mode = sys.argv[1:3]
if sock.startswith("tls:"):
    where = {"host": "127.0.0.1", "port": int(sock[4:]), "ssl": {"verify_mode": False}}
else:
    where = {"unix_socket": sock}
db = pymysql.connect(user="root", database="qg", charset="utf8mb4", autocommit=True, **where)
cur = db.cursor()
if sock.startswith("tls:"):
    cur.execute("SHOW SESSION STATUS LIKE 'Ssl_version'")
    print("TLS:", cur.fetchall()[0][1])


def run(sql, label=None):
    try:
        n = cur.execute(sql)
        rows = cur.fetchall()
        result = cur._result  # the answer's warning count and info string
        print(label or "OK:", n, cur.lastrowid, result.warning_count, result.message, rows)
        return rows
    except pymysql.MySQLError as e:
        print("ERROR:", e.args[0], e.args[1])
        return None


if mode == "var":
    what, marker = sys.argv[3:5]
    times = int(sys.argv[5]) if len(sys.argv) > 5 else 1
    run("SET @v = 'gbk'")
    run("SET character_set_client = @v")
    if what == "attack":
        raw = bytes.fromhex("bf27204f5220313d31202d2d20")
        esc = raw.replace(b"\\", b"\\\\").replace(b"'", b"\\'")
        sql = b"SELECT /*" + marker.encode() + b"*/ secret FROM users WHERE name = '" + esc + b"'"
    else:
        sql = b"SELECT /*" + marker.encode() + b"*/ HEX('\xbf\x5c\\'x') AS h"
    for _ in range(times):
        run(sql, "RESULT:")
elif mode == "names-default":
    marker = sys.argv[3]
    run("SET NAMES gbk")
    run("SET NAMES DEFAULT")
    text = "caf\u00e9 \u8868 \u4e2d 'q' \\ \"d\" \U0001f600"
    run("SELECT /*" + marker + "*/ HEX(" + db.escape(text) + ") AS h", "RESULT:")
elif mode == "restore":
    dbname, path = sys.argv[3:5]
    cur.execute("USE `" + dbname + "`")
    statements = errors = 0
    pending = b""
    with open(path, "rb") as f:
        for line in f:
            if not pending and (line.startswith(b"--") or not line.strip()):
                continue
            pending += line
            if pending.rstrip().endswith(b";"):
                statements += 1
                try:
                    cur.execute(pending.rstrip())
                    cur.fetchall()
                except pymysql.MySQLError as e:
                    errors += 1
                    print("ERROR:", e.args[0], e.args[1][:200])
                pending = b""
    print("RESTORED:", statements, "statements,", errors, "errors")
elif mode == "diag":
    run("CREATE TEMPORARY TABLE d (id INT AUTO_INCREMENT PRIMARY KEY, b VARCHAR(4))")
    run("SET sql_mode = ''")
    run("INSERT INTO d (b) VALUES ('a'), ('b'), ('c'), ('d'), ('e')")
    run("SET @v = @@character_set_client")
    # FOUND_ROWS() of a SELECT, then statements that keep it
    run("SELECT SQL_CALC_FOUND_ROWS id FROM d ORDER BY id LIMIT 2")
    run("SET character_set_client = @v")
    run("INSERT INTO d (b) VALUES ('\u00e9t\u00e9 long'), ('\u00e0')", "INSERT:")
    run("SELECT ROW_COUNT(), FOUND_ROWS(), LAST_INSERT_ID(), @@warning_count", "AFTER:")
    run("SHOW WARNINGS", "WARNINGS:")
    # warnings of a statement, then one that needs the state and uses no table
    run("INSERT INTO d (b) VALUES ('truncated here')")
    run("SET character_set_client = @v")
    run("SELECT '\u00e9' AS e, @@warning_count", "SELECT:")
    run("SHOW WARNINGS", "WARNINGS:")
    # an UPDATE's affected rows, then a query that needs the state
    run("UPDATE d SET b = 'z' WHERE id <= 3", "UPDATE:")
    run("SET character_set_client = @v")
    run("SELECT FOUND_ROWS(), '\u00e9\\\\' AS e", "FOUND:")
    run("DELETE FROM d WHERE id = 1", "DELETE:")
    run("SET character_set_client = @v")
    run("UPDATE d SET b = '\u00fc' WHERE id = 2", "UPDATE:")
    run("SELECT ROW_COUNT(), FOUND_ROWS(), LAST_INSERT_ID()", "AFTER:")
elif mode == "row-count":
    run("CREATE TEMPORARY TABLE r (a INT)")
    run("INSERT INTO r VALUES (1), (2)")
    run("SET character_set_client = @@character_set_client")
    run("SELECT ROW_COUNT(), '\u00e9' AS e", "RESULT:")
    # texts that read alike in every state: checked under the last state
    # known, without the question
    run("SELECT ROW_COUNT() AS n", "ALIKE:")
    run("SELECT 'unterminated", "UNTERMINATED:")
elif mode == "killed":
    run("SET character_set_client = @@character_set_client")
    other = pymysql.connect(unix_socket=sock, user="root", autocommit=True)
    other.cursor().execute("KILL CONNECTION %d" % db.thread_id())
    other.close()
    try:
        run("SELECT '\u00e9' AS e", "RESULT:")
    except pymysql.err.InterfaceError as e:
        print("INTERFACE ERROR:", e.args)
    sys.exit(0)
elif mode == "stopped":
    import os
    import signal
    import threading
    pid, marker = int(sys.argv[3]), sys.argv[4]
    run("SET character_set_client = @@character_set_client")
    start = time.monotonic()
    os.kill(pid, signal.SIGSTOP)
    threading.Timer(15, os.kill, (pid, signal.SIGCONT)).start()
    # kill() returns before the server's threads stop: one still running
    # could answer the front's question.  The query goes once all have.
    def stopped_threads():
        states = []
        for task in os.listdir("/proc/%d/task" % pid):
            try:
                with open("/proc/%d/task/%s/stat" % (pid, task)) as f:
                    states.append(f.read().rsplit(")", 1)[1].split()[0])
            except FileNotFoundError:
                pass
        return all(state in ("T", "t") for state in states)
    while not stopped_threads():
        if time.monotonic() - start > 5:
            print("SERVER NOT STOPPED")
            break
        time.sleep(0.01)
    try:
        run("SELECT /*" + marker + "*/ '\u00e9' AS e", "RESULT:")
    except pymysql.err.InterfaceError as e:
        print("INTERFACE ERROR:", e.args)
    print("SECONDS:", int(time.monotonic() - start))
    time.sleep(max(0, 16 - (time.monotonic() - start)))
try:
    run("SELECT 'alive'", "ALIVE:")
except pymysql.err.InterfaceError as e:
    print("INTERFACE ERROR:", e.args)
