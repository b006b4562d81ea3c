#!/usr/bin/env python3
"""Writes seed corpora for the fuzz targets into OUT/<target>/ (run time only,
never committed): statements from ../shared/corpus/pg-regress and the
MariaDB ctype tests, string literals from tests/unit/*.c, attack byte pairs,
and config lines.  Each seed carries the selector bytes its target reads
first (encoding index into fuzz/fuzz_common.h's table, flags, actions)."""
import hashlib
import os
import random
import re
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "..", "shared", "corpus", "pg-regress")
MYSQL_TESTS = "/usr/share/mysql/mysql-test/main"
MAX_SEED = 4096


def encoding_table():
    text = open(os.path.join(ROOT, "fuzz", "fuzz_common.h")).read()
    return re.findall(r'\{QG_DIALECT_(POSTGRES|MYSQL), "(\w+)"\}', text)


def c_string_literals(path):
    """Decodes the C string literals of a unit test (adjacent ones joined)."""
    text = open(path, encoding="latin-1").read()
    out = []
    for m in re.finditer(r'"((?:[^"\\\n]|\\.)*)"(?:\s*"((?:[^"\\\n]|\\.)*)")*', text):
        raw = "".join(re.findall(r'"((?:[^"\\\n]|\\.)*)"', m.group(0)))
        b = bytearray()
        i = 0
        while i < len(raw):
            c = raw[i]
            if c != "\\":
                b += c.encode("latin-1")
                i += 1
                continue
            n = raw[i + 1]
            if n == "x":
                j = i + 2
                while j < len(raw) and raw[j] in "0123456789abcdefABCDEF":
                    j += 1
                b.append(int(raw[i + 2:j], 16) & 0xFF)
                i = j
            elif n in "01234567":
                j = i + 1
                while j < len(raw) and j < i + 4 and raw[j] in "01234567":
                    j += 1
                b.append(int(raw[i + 1:j], 8) & 0xFF)
                i = j
            else:
                b += {"n": b"\n", "r": b"\r", "t": b"\t", "0": b"\0"}.get(n, n.encode("latin-1"))
                i += 2
        if len(b) >= 4:
            out.append(bytes(b))
    return out


def pg_statements(rng, count):
    stmts = []
    for root, _, files in os.walk(CORPUS):
        for name in sorted(files):
            if name.endswith(".sql"):
                data = open(os.path.join(root, name), "rb").read()
                stmts += [s.strip() + b";" for s in re.split(rb";\s*\n", data) if s.strip()]
    rng.shuffle(stmts)
    return [s[:MAX_SEED] for s in stmts[:count]]


def mysql_statements(rng, count):
    stmts = []
    if os.path.isdir(MYSQL_TESTS):
        for name in sorted(os.listdir(MYSQL_TESTS)):
            if name.startswith("ctype_") and name.endswith(".test"):
                data = open(os.path.join(MYSQL_TESTS, name), "rb").read()
                stmts += [s.strip() + b";" for s in data.split(b";\n")
                          if s.strip() and not s.lstrip().startswith((b"--", b"#"))]
    rng.shuffle(stmts)
    return [s[:MAX_SEED] for s in stmts[:count]]


ATTACKS = [
    b"SELECT * FROM t WHERE a = '\x95\x5c' OR 1=1 --'",
    b"SELECT * FROM t WHERE a = '\xbf\x5c' OR 1=1 -- '",
    b"SELECT * FROM t WHERE a = '\xa5\x5c' OR 1=1 -- '",
    b"SELECT * FROM t WHERE a = '\x81\x5c' OR 1=1 -- '",
    b"SELECT * FROM t WHERE a = '\xc8'' OR 1=1 --'",
    b"SELECT * FROM t WHERE a = '\\' OR 1=1 --'",
    b"SELECT 'C:\\dir\\', E'a\\'b', $q$x'y$q$, U&'\\0041' UESCAPE '!', B'01', X'ff' /* c /* n */ */",
    b"SELECT _binary'\xbf\x27', x'41', n'a', \"id\"\"x\", `b``q` # c\n/*!40101 SET NAMES gbk */",
    b"SELECT 'a'\n  'b' -- c\n 'd'",
]
CONFIG = [
    b"mode = enforce\nlog = syslog\nsyslog_facility = local3\n",
    b"mode = audit # trailing\nlog = /var/log/quoteguard.log\nverbose = 2\nlog_full_query = yes\n",
    b"allow = 0123456789abcdef, fedcba9876543210\nallow = 00000000000000ff\n",
    b"only_programs = php-fpm, psql\nskip_programs = pg_dump\n",
    b"mysql_illformed_quote = log\nmysql_illformed = ignore\n# comment\n\n",
    b"mode=rewrite\nMODE = off\nrewrite = all\nunknown = 1\nno equals sign\n",
]


def pg_stream(statements):
    """A PostgreSQL client stream: startup, then each statement as a Query
    or (every third) as Parse + Bind + Execute + Sync."""
    body = b"\0\3\0\0user\0qg\0\0"
    out = struct.pack(">I", len(body) + 4) + body
    for k, stmt in enumerate(statements):
        if k % 3 == 2:
            parse = b"s\0" + stmt + b"\0\0\0"
            out += b"P" + struct.pack(">I", len(parse) + 4) + parse
            out += b"B\0\0\0\x0e\0s\0\0\0\0\0\0\0" + b"E\0\0\0\x09\0\0\0\0\0" + b"S\0\0\0\4"
        else:
            out += b"Q" + struct.pack(">I", len(stmt) + 5) + stmt + b"\0"
    return out


def mysql_stream(statements):
    """A MySQL client stream after authentication: COM_QUERY, every third a
    COM_STMT_PREPARE, and a COM_PING."""
    out = b""
    for k, stmt in enumerate(statements):
        payload = (b"\x16" if k % 3 == 2 else b"\x03") + stmt
        out += struct.pack("<I", len(payload))[:3] + b"\0" + payload
    return out + b"\1\0\0\0\x0e"


def mysql_answers(k, deprecate_eof):
    """A MySQL server's answers to COM_QUERYs: result sets of 1-3 columns and
    0-3 rows (ended by an EOF, or with CLIENT_DEPRECATE_EOF an OK), OKs,
    errors, one in the middle of the rows."""
    def packet(seq, payload):
        return struct.pack("<I", len(payload))[:3] + bytes([seq]) + payload
    eof = b"\xfe\0\0\x02\0"
    end = b"\xfe\0\0\x02\0\0\0" if deprecate_eof else eof
    out = b""
    for j in range(6):
        columns, rows = 1 + (k + j) % 3, (k + 2 * j) % 4
        if (k + j) % 5 == 4:
            out += packet(1, b"\0\0\0\x02\0\0\0")  # OK
            continue
        seq = 1
        out += packet(seq, bytes([columns]))
        for c in range(columns):
            seq += 1
            out += packet(seq, b"\3def\0\0\0\1c\0\x0c\x21\0\x0b\0\0\0\x03\0\0\0\0\0")
        if not deprecate_eof:
            seq += 1
            out += packet(seq, eof)
        for r in range(rows):
            seq += 1
            if (k + j + r) % 7 == 6:
                out += packet(seq, b"\xff\x28\x04#HY000oops")  # an error in the rows
                break
            out += packet(seq, b"\x01" + bytes([0x30 + r]) * columns)
        else:
            out += packet(seq + 1, end)
    return out


def write(dirpath, data):
    os.makedirs(dirpath, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(dirpath, name), "wb") as f:
        f.write(data)


def main():
    out = sys.argv[1]
    rng = random.Random(7)
    table = encoding_table()
    pg = [i for i, (d, _) in enumerate(table) if d == "POSTGRES"]
    my = [i for i, (d, _) in enumerate(table) if d == "MYSQL"]
    unit = []
    unit_dir = os.path.join(ROOT, "tests", "unit")
    for name in sorted(os.listdir(unit_dir)):
        if name.endswith(".c"):
            unit += c_string_literals(os.path.join(unit_dir, name))
    pg_sql = pg_statements(rng, 400) + ATTACKS + unit
    my_sql = mysql_statements(rng, 200) + ATTACKS + unit

    for sql, indexes in ((pg_sql, pg), (my_sql, my)):
        for k, stmt in enumerate(sql):
            enc = indexes[k % len(indexes)]
            flags = rng.randrange(8)
            write(os.path.join(out, "fuzz_lexer"), bytes([enc, flags]) + stmt)
            write(os.path.join(out, "fuzz_checker"), bytes([enc, flags, 0, 0]) + stmt)
            if indexes is pg:
                write(os.path.join(out, "fuzz_rewriter"), bytes([enc, flags, k & 3]) + stmt)
    # fuzz_mysql_state: selector = part | (index among the MySQL rows) << 2
    for k, stmt in enumerate(my_sql[:300]):
        sel = (k % len(my)) << 2 & 0xFC
        write(os.path.join(out, "fuzz_mysql_state"), bytes([sel | 2, k & 6]) + stmt)
        write(os.path.join(out, "fuzz_mysql_state"), bytes([sel | 3, k & 2]) + stmt[:64])
    for mode in (b"", b"NO_BACKSLASH_ESCAPES", b"MYSQL40,ANSI", b"REAL_AS_FLOAT,ANSI_QUOTES"):
        write(os.path.join(out, "fuzz_mysql_state"), bytes([0, 0]) + mode)
        write(os.path.join(out, "fuzz_mysql_state"),
              bytes([1, 0]) + b"character_set_client\0GBK\0sql_mode\0" + mode)
    for enc in range(len(table)):
        for stmt in ATTACKS + unit[:20]:
            write(os.path.join(out, "fuzz_encoding"), bytes([enc]) + stmt)
    for k in range(0, 60, 4):
        chunk = pg_sql[k:k + 4] + [b"X" + pg_sql[k]]
        for mode in (0, 4):
            write(os.path.join(out, "fuzz_wire"), bytes([mode, k, k % 16]) + pg_stream(chunk))
        chunk = my_sql[k:k + 4] + [b"X" + my_sql[k]]
        for mode in (3, 7):
            write(os.path.join(out, "fuzz_wire"), bytes([mode, k, k % 16]) + mysql_stream(chunk))
        # the server's answers to commands written before them (byte 2's high half)
        for mode in (3, 0x13):
            answers = mysql_answers(k, mode & 0x10)
            write(os.path.join(out, "fuzz_wire"), bytes([mode, k, 0x60 | k % 16]) + answers)
    for text in CONFIG:
        for errlen in (0, 1, 8, 39):
            write(os.path.join(out, "fuzz_config"), bytes([errlen]) + text)


if __name__ == "__main__":
    main()
