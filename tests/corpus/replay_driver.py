"""Replays corpus statements through a driver that speaks the protocol
itself (pg8000 for PostgreSQL, PyMySQL for MySQL/MariaDB) and prints the
server's answer to each, so that a run under the shim can be compared with a
run without it, statement by statement.

   python3 replay_driver.py pg8000 SOCKET_DIR PORT ADMIN_USER < records
   python3 replay_driver.py pymysql SOCKET < records

Records, one a line:
   F name              a new script: a new connection on a fresh database
                       (pg8000: made from the template regress_base;
                       pymysql: test, emptied, as tests/clients/my_corpus does)
   U user              pg8000: a new session as that user on the same database
                       (the script reconnected, psql's \\c)
   C charset           pymysql: the driver's own character-set call
   S where HEX         a statement, its bytes in hex, sent as they are
   K where             a statement left out (tests/corpus/mysqltest_check.c
                       --emit leaves out those that would stall the server)
Output, one line per statement: "where ok ROWS", "where error CODE" (the
SQLSTATE, or the MySQL error number), "where blocked" (the error names
quoteguard) or "where lost EXCEPTION" (the driver gave up on the
connection; the next statement runs on a new one), followed by
" finding:REASON" for each finding the shim logged while it ran (the shim's
log is QUOTEGUARD_LOG, read as it grows)."""
import os
import re
import sys

BLOCKED = b"quoteguard"
SQLSTATE = re.compile(r"[0-9A-Z]{5}")
SEVERITIES = ("ERROR", "FATAL", "PANIC")


def pg8000_session():
    import pg8000
    import pg8000.core

    core = pg8000.core
    original = core.Connection.handle_PARAMETER_STATUS

    def keep_latin1(self, data, ps):
        # Statements go out byte for byte and results come back as bytes:
        # latin-1 maps every byte to one character and back, whatever
        # client_encoding the script chose.
        original(self, data, ps)
        self._client_encoding = "latin-1"

    core.Connection.handle_PARAMETER_STATUS = keep_latin1
    # Every row at once (pg8000 refuses a result larger than its row cache
    # under autocommit).
    core.Connection._row_cache_size_bin = core.i_pack(0)
    # The statement text is sent as the corpus has it: no placeholder rewriting.
    core.convert_paramstyle = lambda style, query: (query, lambda args: ())

    sock_dir, port, admin_user = sys.argv[2:5]
    sock = "%s/.s.PGSQL.%s" % (sock_dir, port)

    def connect(user, database):
        conn = pg8000.connect(user=user, unix_sock=sock, database=database)
        conn.autocommit = True
        # every result column as text (no binary decoding that could fail)
        conn.pg_types = core.defaultdict(lambda: (core.FC_TEXT, lambda d, o, n: bytes(d[o:o + n])))
        return conn

    state = {"conn": None, "db": None, "n": 0}

    def close():
        if state["conn"] is not None:
            try:
                state["conn"].close()
            except Exception:
                pass
            state["conn"] = None

    def new_script(name):
        close()
        admin = connect(admin_user, "postgres")
        cur = admin.cursor()
        if state["db"]:
            cur.execute("DROP DATABASE IF EXISTS %s WITH (FORCE)" % state["db"])
        state["n"] += 1
        state["db"] = "replay_%d" % state["n"]
        cur.execute("CREATE DATABASE %s TEMPLATE regress_base" % state["db"])
        admin.close()
        state["user"] = admin_user
        state["conn"] = connect(admin_user, state["db"])

    def new_user(user):
        close()
        state["user"] = user
        state["conn"] = connect(user, state["db"])

    def run(sql):
        if state["conn"] is None:
            state["conn"] = connect(state["user"], state["db"])
        cur = state["conn"].cursor()
        try:
            # COPY FROM STDIN gets no rows; COPY TO STDOUT goes nowhere
            cur.execute(sql.decode("latin-1"), stream=CopyStream())
            rows = len(cur.fetchall()) if cur.description else max(cur.rowcount, 0)
            return "ok %d" % rows
        except pg8000.ProgrammingError as e:
            text = " ".join(str(a) for a in e.args).encode("latin-1", "replace")
            if BLOCKED in text:
                return "blocked"
            # the fields in their order: severity (twice), then the SQLSTATE
            codes = [a for a in e.args if SQLSTATE.fullmatch(str(a)) and a not in SEVERITIES]
            return "error %s" % (codes[0] if codes else "?")
        except Exception as e:  # the connection is out of step: a new one
            close()
            return "lost %s" % type(e).__name__

    return new_script, new_user, None, run


class CopyStream:
    def readinto(self, buf):
        return 0

    def write(self, data):
        pass


def pymysql_session():
    import pymysql

    sock = sys.argv[2]
    state = {"conn": None}

    def connect():
        conn = pymysql.connect(unix_socket=sock, user="root", password="", charset="latin1",
                               use_unicode=False, autocommit=True, read_timeout=5, write_timeout=5,
                               client_flag=pymysql.constants.CLIENT.MULTI_STATEMENTS,
                               init_command="SET SESSION default_storage_engine = MyISAM")
        with conn.cursor() as cur:
            cur.execute("DROP DATABASE IF EXISTS test")
            cur.execute("CREATE DATABASE test")
        conn.select_db("test")
        return conn

    def close():
        if state["conn"] is not None:
            try:
                state["conn"].close()
            except Exception:
                pass
            state["conn"] = None

    def new_script(name):
        close()
        state["conn"] = connect()

    def set_charset(charset):
        try:
            state["conn"].set_charset(charset)
        except Exception:
            pass  # a charset the server refuses: the connection keeps its own

    def run(sql):
        if state["conn"] is None:
            state["conn"] = connect()
        cur = state["conn"].cursor()
        try:
            cur.execute(sql)
            rows = len(cur.fetchall()) if cur.description else max(cur.rowcount, 0)
            while cur.nextset():
                rows += len(cur.fetchall()) if cur.description else 0
            return "ok %d" % rows
        except pymysql.err.MySQLError as e:
            if len(e.args) >= 2 and BLOCKED in str(e.args[1]).encode("latin-1", "replace"):
                return "blocked"
            if e.args and e.args[0] in (2006, 2013):
                close()
            return "error %s" % (e.args[0] if e.args else "?")
        except Exception as e:
            close()
            return "lost %s" % type(e).__name__

    return new_script, None, set_charset, run


REASON = re.compile(rb'"reason":"([a-z_]+)"')


def findings_since(log, seen):
    """The reasons of the findings the shim's log gained past offset seen[0]."""
    if not log:
        return ""
    try:
        with open(log, "rb") as f:
            f.seek(seen[0])
            new = f.read()
    except OSError:
        return ""
    new = new[:new.rfind(b"\n") + 1]  # whole lines only
    seen[0] += len(new)
    return "".join(" finding:%s" % m.group(1).decode() for m in REASON.finditer(new))


def main():
    new_script, new_user, set_charset, run = (pg8000_session if sys.argv[1] == "pg8000" else pymysql_session)()
    out = sys.stdout
    log = os.environ.get("QUOTEGUARD_LOG")
    seen = [0]
    findings_since(log, seen)
    for record in sys.stdin.buffer:
        kind, _, rest = record.rstrip(b"\n").partition(b" ")
        if kind == b"F":
            new_script(rest.decode())
        elif kind == b"U" and new_user:
            new_user(rest.decode())
        elif kind == b"C" and set_charset:
            set_charset(rest.decode())
        elif kind == b"S":
            where, _, hexsql = rest.partition(b" ")
            answer = run(bytes.fromhex(hexsql.decode()))
            out.write("%s %s%s\n" % (where.decode(), answer, findings_since(log, seen)))
            out.flush()


main()
