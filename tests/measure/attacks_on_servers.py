#!/usr/bin/python3
"""A sample of measure_rule's effective attacks, confirmed by the real servers.

Reads the lines measure_rule --sample writes ("pg|mysql ENCODING FLAGS
ESCAPER ATTACK TEMPLATE", the last two in hex: the attack, and the same
template with harmless values).

  plain  sends each attack and its template to the server, each in a
         transaction that is rolled back, and compares what the server did:
         an attack is confirmed where the server reads or answers it
         otherwise than the template: other statements as it parsed them
         (PostgreSQL's query ids of the statements it ran, which hash the
         parse tree without constant values: pg_stat_statements; MariaDB's
         statement digests, which hash the tokens without comments and
         literal values: performance_schema), a syntax error, another
         error, other result sets or row counts, other table contents.  Statements the server
         refuses before reading them (bytes its conversion cannot map) are
         counted apart; any other attack the server answers like the
         template is printed ("unconfirmed"), for the attack generator's S
         reading to be investigated.
  shim   (run under the shim in enforce mode) sends each attack with a
         marker comment before it, "/*qgv-N*/ "; every one must fail with
         quoteguard's error.  Prints the markers, for the caller to look for
         in the server's log.

PostgreSQL: a database in the attack's encoding where a server can use it
(no conversion: the server reads the client's bytes), else the UTF8 one;
backslash_quote = on, as S assumes (the server's default refuses \\' in
client-only encodings).  MariaDB has no gb18030: those lines are skipped.

The servers run with pg_stat_statements loaded and compute_query_id on, and
with performance_schema on (tests/t/19-rule-attacks-servers.t starts them so).

usage: attacks_on_servers.py plain|shim SAMPLE
env:   PGHOST PGPORT PGUSER PGDATABASE, QG_MY_SOCKET
"""
import codecs
import os
import sys

SERVER_ENCODINGS = {"UTF8", "EUC_JP", "EUC_JIS_2004", "EUC_CN", "EUC_KR", "EUC_TW", "MULE_INTERNAL",
                    "LATIN1", "WIN1252", "WIN1251", "KOI8R"}
COLUMNS = ["a", "b", "name", "note", "path", "body", "title", "tag"]
FIXTURE = [
    "CREATE TABLE t (%s, id int, kind text)" % ", ".join(c + " text" for c in COLUMNS),
    "INSERT INTO t VALUES (%s, 1, 'user'), (%s, 2, 'admin')" % (
        ", ".join("'p%d'" % i for i in range(8)), ", ".join("'q%d'" % i for i in range(8))),
    "CREATE TABLE users (name text, password text)",
    "INSERT INTO users VALUES ('alice', 'secret')",
]
PG_PRE_PARSE = {"22021", "22P05"}  # invalid in the encoding, no equivalent in the server's


class Pg:
    def __init__(self, shim):
        import psycopg2
        self.psycopg2 = psycopg2
        self.shim = shim
        self.conns = {}

    def db_for(self, enc):
        return "qgv_" + enc.lower() if enc in SERVER_ENCODINGS else os.environ["PGDATABASE"]

    def setup(self, encodings):
        if self.shim:
            return
        admin = self.psycopg2.connect("")
        admin.autocommit = True
        cur = admin.cursor()
        for enc in sorted({e for e in encodings if e in SERVER_ENCODINGS}):
            cur.execute("DROP DATABASE IF EXISTS %s" % self.db_for(enc))
            cur.execute("CREATE DATABASE %s TEMPLATE template0 ENCODING '%s' LOCALE 'C'" % (self.db_for(enc), enc))
        admin.close()
        for db in sorted({self.db_for(e) for e in encodings}):
            c = self.psycopg2.connect(dbname=db, client_encoding="SQL_ASCII")
            c.autocommit = True
            for s in ["DROP TABLE IF EXISTS t, users", "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"] + FIXTURE:
                c.cursor().execute(s)
            c.close()

    def cursor(self, enc, flags):
        key = (enc, flags)
        if key not in self.conns:
            for c in self.conns.values():
                c.close()
            self.conns.clear()
            c = self.psycopg2.connect(dbname=self.db_for(enc), client_encoding="SQL_ASCII")
            c.autocommit = True
            cur = c.cursor()
            for s in ["SET client_encoding TO '%s'" % enc,
                      "SET standard_conforming_strings = %s" % ("on" if flags & 1 else "off"),
                      "SET escape_string_warning = off", "SET backslash_quote = on",
                      "SET statement_timeout = '2s'"]:
                cur.execute(s)
            self.conns[key] = c
        return self.conns[key].cursor()

    def outcome(self, cur, sql):
        """What the server did with the statement, in a rolled back
        transaction, and the query ids (the hash of the parse tree without
        constant values, pg_stat_statements) of the statements it ran."""
        cur.execute("SELECT pg_stat_statements_reset()")
        cur.execute("BEGIN")
        try:
            cur.execute(sql)
            did = ("ok", cur.statusmessage, cur.rowcount, len(cur.description or ()))
            cur.execute("SELECT (SELECT count(*) FROM t), to_regclass('users') IS NOT NULL")
            did += tuple(cur.fetchone())
        except self.psycopg2.Error as e:
            did = ("error", e.pgcode)
        finally:
            cur.execute("ROLLBACK")
        cur.execute("SELECT queryid, calls FROM pg_stat_statements WHERE dbid = "
                    "(SELECT oid FROM pg_database WHERE datname = current_database()) "
                    "AND query NOT LIKE '%pg_stat_statements%' AND query NOT LIKE '%to_regclass%' ORDER BY 1")
        return did + tuple(cur.fetchall())

    def pre_parse(self, did):
        return did[0] == "error" and did[1] in PG_PRE_PARSE

    def syntax(self, did):
        return did[0] == "error" and did[1] == "42601"

    @property
    def error(self):
        return self.psycopg2.Error


class My:
    def __init__(self, shim):
        import MySQLdb
        self.MySQLdb = MySQLdb
        self.shim = shim
        self.conns = {}

    def connect(self):
        from MySQLdb.constants import CLIENT
        # MySQLdb decodes column names in the connection's character set:
        # the MariaDB names Python lacks, as the nearest codec (names are ASCII).
        codecs.register(lambda name: codecs.lookup(
            {"eucjpms": "euc_jp", "ujis": "euc_jp", "utf8mb3": "utf-8"}[name])
            if name in ("eucjpms", "ujis", "utf8mb3") else None)
        return self.MySQLdb.connect(unix_socket=os.environ["QG_MY_SOCKET"], user="root", db="qgv",
                                    use_unicode=False,
                                    client_flag=CLIENT.MULTI_STATEMENTS | CLIENT.MULTI_RESULTS)

    def reset(self):
        c = self.MySQLdb.connect(unix_socket=os.environ["QG_MY_SOCKET"], user="root")
        cur = c.cursor()
        cur.execute("DROP DATABASE IF EXISTS qgv")
        cur.execute("CREATE DATABASE qgv CHARACTER SET utf8mb4")
        cur.execute("USE qgv")
        for s in FIXTURE:
            cur.execute(s)
        c.commit()
        c.close()

    def setup(self, encodings):
        if not self.shim:
            self.reset()
            c = self.connect()
            c.cursor().execute("UPDATE performance_schema.setup_consumers SET ENABLED = 'YES' "
                               "WHERE NAME IN ('events_statements_current', 'events_statements_history')")
            c.close()

    def cursor(self, enc, flags):
        key = (enc, flags)
        if key not in self.conns:
            for c in self.conns.values():
                c.close()
            self.conns.clear()
            c = self.connect()
            c.autocommit(True)
            cur = c.cursor()
            modes = [m for bit, m in ((2, "NO_BACKSLASH_ESCAPES"), (4, "ANSI_QUOTES")) if flags & bit]
            cur.execute("SET NAMES %s" % enc)
            cur.execute("SET SESSION sql_mode = '%s'" % ",".join(modes))
            cur.execute("SET SESSION max_statement_time = 1")
            self.conns[key] = c
        return self.conns[key].cursor()

    def digest(self, cur):
        cur.execute("SELECT (SELECT count(*) FROM t), (SELECT count(*) FROM information_schema.tables "
                    "WHERE table_schema = 'qgv' AND table_name = 'users'), (SELECT count(*) FROM users)")
        return tuple(cur.fetchone())

    def outcome(self, cur, sql):
        """What the server did, in a rolled back transaction where it can,
        and the digests (the statement's tokens without comments and
        literal values, performance_schema) of the statements it read."""
        cur.execute("SELECT COALESCE(MAX(EVENT_ID), 0) FROM performance_schema.events_statements_history "
                    "WHERE THREAD_ID = (SELECT THREAD_ID FROM performance_schema.threads WHERE PROCESSLIST_ID = CONNECTION_ID())")
        before = cur.fetchone()[0]
        cur.execute("BEGIN")
        results = []
        try:
            cur.execute(sql)
            while True:
                results.append((cur.rowcount, len(cur.description or ())))
                if cur.nextset() is None:
                    break
            did = ("ok", tuple(results))
        except self.MySQLdb.Error as e:
            did = ("error", e.args[0], tuple(results))
        try:
            while cur.nextset() is not None:
                pass
        except self.MySQLdb.Error:
            pass
        cur.execute("SELECT DIGEST FROM performance_schema.events_statements_history "
                    "WHERE THREAD_ID = (SELECT THREAD_ID FROM performance_schema.threads WHERE PROCESSLIST_ID = CONNECTION_ID()) AND EVENT_ID > %d ORDER BY EVENT_ID" % before)
        did += tuple(r[0] for r in cur.fetchall())
        try:
            did += self.digest(cur)
        except self.MySQLdb.Error:
            did += ("tables gone",)
        cur.execute("ROLLBACK")
        # DDL commits itself: put the tables back when the statement changed them.
        try:
            changed = self.digest(cur) != (2, 1, 1)
        except self.MySQLdb.Error:
            changed = True
        if changed:
            self.conns.clear()
            self.reset()
        return did

    def pre_parse(self, did):
        return False

    def syntax(self, did):
        return did[0] == "error" and did[1] == 1064

    @property
    def error(self):
        return self.MySQLdb.Error


def main():
    mode, path = sys.argv[1], sys.argv[2]
    samples = [line.split() for line in open(path) if line.strip()]
    for dialect in ("pg", "mysql"):
        lines = [s for s in samples if s[0] == dialect]
        if not lines:
            continue
        server = Pg(mode == "shim") if dialect == "pg" else My(mode == "shim")
        skipped = [s for s in lines if dialect == "mysql" and s[1] == "gb18030"]
        lines = [s for s in lines if s not in skipped]
        server.setup({s[1] for s in lines})
        counts = dict(sample=len(lines), confirmed=0, syntax=0, error=0, result=0, refused=0,
                      unconfirmed=0, skipped=len(skipped), sent=0, blocked=0, template_fails=0)
        for n, (_, enc, flags, esc, attack, template) in enumerate(lines):
            cur = server.cursor(enc, int(flags))
            attack, template = bytes.fromhex(attack), bytes.fromhex(template)
            if mode == "shim":
                marker = "qgv-%s-%d" % (dialect, n)
                counts["sent"] += 1
                try:
                    cur.execute(b"/*" + marker.encode() + b"*/ " + attack)
                    print("not blocked %s %s %s %s %s" % (marker, enc, flags, esc, attack.hex()))
                except server.error as e:
                    if "quoteguard" in str(e):
                        counts["blocked"] += 1
                    else:
                        print("not blocked %s %s %s %s %s: %s" % (marker, enc, flags, esc, attack.hex(), e))
                print("marker %s" % marker)
                continue
            want, got = server.outcome(cur, template), server.outcome(cur, attack)
            if want[0] != "ok":
                counts["template_fails"] += 1
                if counts["template_fails"] <= 5:
                    print("template fails %s %s %s %r %s" % (dialect, enc, flags, want, template.hex()))
            if server.pre_parse(got):
                counts["refused"] += 1
                print("refused %s %s %s %s %s %s" % (dialect, enc, flags, esc, got[1], attack.hex()))
            elif got == want:
                counts["unconfirmed"] += 1
                if counts["unconfirmed"] <= 20:
                    print("unconfirmed %s %s %s %s %s" % (dialect, enc, flags, esc, attack.hex()))
            else:
                counts["confirmed"] += 1
                counts["syntax" if server.syntax(got) else "error" if got[0] == "error" else "result"] += 1
        keys = ("sent", "blocked") if mode == "shim" else \
            ("sample", "confirmed", "syntax", "error", "result", "refused", "unconfirmed", "skipped",
             "template_fails")
        print("%s %s %s" % (mode, dialect, " ".join("%s %d" % (k, counts[k]) for k in keys)))


if __name__ == "__main__":
    main()
