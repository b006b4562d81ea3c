#!/usr/bin/python3
"""Legitimate statements through real drivers to real servers, under the shim.

For each driver, client encoding and quoting mode: statements built by the
driver's own escaping from realistic values (Windows paths ending in a
backslash, regular expressions, prose with -- and /* */, SQL and JSON as
data, quotes, markup, code, base64, e-mail addresses, signatures, text with
characters whose trail byte is 0x5c, 0x7c or 0x60) are sent, and every one
must come back byte for byte: a statement the shim blocks ("quoteguard:"
in the error) counts as blocked.  Writes each escaped literal with its value
(hex) to DIR/escaped-DRIVER-ENCODING-MODE.txt for measure_rule --verify.

`drivers.py values pg|mysql STATEMENTS` prints the same statements' values
instead, for the PHP and Perl drivers (drivers.php, drivers.pl) to escape
and send:
  template N HEX          the N-th template's text ({0}, {1} … for literals)
  setting ENCODING MODE   the settings the statements after it are for
  stmt N AWARE HEX…       template N, one value a HEX; AWARE is 1 where a
                          value holds a character with a byte ' or \ after
                          its first (an escaper that reads byte by byte
                          writes that value otherwise than PQescapeStringConn)

usage: drivers.py pg|mysql STATEMENTS DIR
       drivers.py values pg|mysql STATEMENTS
"""
import os
import random
import sys

PATHS = ["C:\\temp\\", "C:\\Program Files\\App\\", "\\\\server\\share\\dir\\", "D:\\data\\x.txt",
         "C:\\", "\\", "..\\..\\", "C:\\Users\\o'neil\\"]
REGEXES = ["^\\d+(\\.\\d+)?$", "[a-z]+\\s*--\\s*'", "\\\\w+", "^[^'\"]*$", "\\'", "a\\"]
PROSE = ["see --help", "a -- b", "/* note */", "x */ y", "-- signature", "it's fine -- really",
         "--", "/*", "*/", "# not a comment", "price: 5$ or $$", "ok -- ' -- \""]
SQLISH = ["SELECT * FROM users WHERE name = 'x' -- c", "' OR 1=1 --", "{\"a\": \"b\\\"c\"}",
          "1); DELETE FROM t; --", "') /*", "E'\\n'", "`id`", "x UNION SELECT 1 #"]
QUOTES = ["it's", "\"quoted\"", "O'Brien", "'", "''", "\\'", "\\\"", "`", "'\\''", "\\\\'", "\\"]
MARKUP = ["<a href=\"x\">it's</a>", "<!-- c -->", "<p class='x'>--</p>"]
CODE = ["printf(\"%s\\n\", x); // it's", "if (a) { b = '\\\\'; }", "# comment\nx = 1", "x = y -- 1\ny = 2"]
EMAILS = ["o'neil@example.com", "a--b@example.net"]
SIGNATURES = ["-- \nJohn", "--\r\nSent from my phone", "\n--\n"]
B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

# Characters by codec, those whose encoding ends in 0x5c, 0x7c or 0x60 first.
RANGES = [(0x3041, 0x30ff), (0x4e00, 0x9fff), (0xac00, 0xd7a3), (0xff61, 0xff9f), (0xc0, 0x24f),
          (0x400, 0x4ff), (0x391, 0x3c9)]


def chars_of(codec):
    tricky, plain = [], []
    for lo, hi in RANGES:
        for cp in range(lo, hi + 1):
            ch = chr(cp)
            try:
                b = ch.encode(codec)
            except UnicodeEncodeError:
                continue
            if len(b) < 2 and b[0] < 0x80:
                continue
            (tricky if len(b) > 1 and b[-1] in (0x5c, 0x7c, 0x60) else plain).append(ch)
    return tricky, plain


def gen_value(rng, chars):
    tricky, plain = chars
    parts = []
    for _ in range(rng.randint(1, 3)):
        kind = rng.randrange(12)
        if kind == 0: parts.append(rng.choice(PATHS))
        elif kind == 1: parts.append(rng.choice(REGEXES))
        elif kind == 2: parts.append(rng.choice(PROSE))
        elif kind == 3: parts.append(rng.choice(SQLISH))
        elif kind == 4: parts.append(rng.choice(QUOTES))
        elif kind == 5: parts.append(rng.choice(MARKUP))
        elif kind == 6: parts.append(rng.choice(CODE))
        elif kind == 7: parts.append("".join(rng.choice(B64) for _ in range(4 * rng.randint(1, 8))))
        elif kind == 8: parts.append(rng.choice(EMAILS))
        elif kind == 9: parts.append(rng.choice(SIGNATURES))
        else:
            for _ in range(rng.randint(1, 6)):
                pool = tricky if tricky and rng.random() < 0.5 else plain
                if pool:
                    parts.append(rng.choice(pool))
                if rng.random() < 0.15:
                    parts.append(rng.choice([" ", "\\", "'", "-", ", ", "\\\\", "\"", "/"]))
    if rng.random() < 0.3 and tricky:
        parts.append(rng.choice(tricky))  # a value that ends in a 0x5c trail byte
    return "".join(parts)


TEMPLATES = [
    "SELECT {0}", "SELECT {0}, {1}", "SELECT {0}, {1}, {2}, {3}",
    "SELECT {0} AS a WHERE {1} = {1}",
    "SELECT x FROM (SELECT {0} AS x UNION ALL SELECT {1} UNION ALL SELECT {2}) s ORDER BY 1",
    "SELECT {0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}",
    "SELECT {0} /* svc */, {1}",
]


def statements(rng, chars, count):
    for _ in range(count):
        tpl = rng.choice(TEMPLATES)
        n = max(int(c) for c in tpl if c.isdigit()) + 1
        yield tpl, [gen_value(rng, chars) for _ in range(n)]


class Counter:
    def __init__(self):
        self.sent = self.blocked = self.wrong = self.other = 0
        self.examples = []

    def note(self, kind, what):
        setattr(self, kind, getattr(self, kind) + 1)
        if len(self.examples) < 3:
            self.examples.append("%s: %r" % (kind, what[:300]))


def ordered_result(tpl, values, rows):
    """The values the statement's result must hold, in its order."""
    if "UNION ALL" in tpl:
        return sorted(values[:3]), sorted(r[0] for r in rows)
    if "AS a WHERE" in tpl:
        return [values[0]], [r[0] for r in rows]
    return values, list(rows[0]) if rows else []


PG_ENCODINGS = ["UTF8", "EUC_JP", "SJIS", "BIG5", "GBK", "GB18030", "UHC", "LATIN1"]
PG_SETTINGS = [(e, scs) for e in PG_ENCODINGS for scs in ("on", "off")]
MY_MODES = {"default": "", "NBE": "NO_BACKSLASH_ESCAPES", "ANSI_QUOTES": "ANSI_QUOTES"}
MY_CODECS = {"utf8mb4": "utf-8", "sjis": "shift_jis", "cp932": "cp932", "gbk": "gbk", "big5": "big5",
             "euckr": "euc_kr", "latin1": "latin-1", "cp1251": "cp1251"}
MY_SETTINGS = [(cs, m) for cs in MY_CODECS for m in MY_MODES]
PG_SEED, MY_SEED = 20261205, 20261206


def pg_codec(enc):
    """The Python codec of a PostgreSQL encoding (psycopg2's table, without psycopg2)."""
    return {"UTF8": "utf-8", "EUC_JP": "euc_jp", "SJIS": "cp932", "BIG5": "big5", "GBK": "gbk",
            "GB18030": "gb18030", "UHC": "cp949", "LATIN1": "latin-1"}[enc]


def naive_differs(value, codec):
    """Whether a byte-wise escaper writes the value otherwise than an
    encoding-aware one: a character with ' or \\ among its later bytes."""
    return any(len(b) > 1 and (b"\\" in b[1:] or b"'" in b[1:])
               for b in (ch.encode(codec) for ch in value))


def emit_values(dialect, total):
    settings, seed = (PG_SETTINGS, PG_SEED) if dialect == "pg" else (MY_SETTINGS, MY_SEED)
    for i, tpl in enumerate(TEMPLATES):
        print("template %d %s" % (i, tpl.encode().hex()))
    per = total // len(settings) + 1
    rng = random.Random(seed)
    for enc, mode in settings:
        codec = pg_codec(enc) if dialect == "pg" else MY_CODECS[enc]
        print("setting %s %s" % (enc, mode if dialect == "mysql" else "scs=" + mode))
        for tpl, values in statements(rng, chars_of(codec), per):
            aware = any(naive_differs(v, codec) for v in values)
            print("stmt %d %d %s" % (TEMPLATES.index(tpl), aware,
                                     " ".join(v.encode(codec).hex() or "-" for v in values)))


def run_pg(total, out_dir):
    import psycopg2
    settings = PG_SETTINGS
    per = total // len(settings) + 1
    counters = {}
    rng = random.Random(PG_SEED)
    for enc, scs in settings:
        # psycopg2 writes E'' when standard_conforming_strings is off at
        # connection start: set there, as a server configured so does.
        conn = psycopg2.connect(options="-c standard_conforming_strings=%s -c escape_string_warning=off" % scs)
        conn.autocommit = True
        conn.set_client_encoding(enc)
        cur = conn.cursor()
        codec = pg_codec(enc)
        chars = chars_of(codec)
        c = counters.setdefault(("psycopg2", enc, "scs=" + scs), Counter())
        with open(os.path.join(out_dir, "escaped-psycopg2-%s-%s.txt" % (enc, scs)), "w") as f:
            for tpl, values in statements(rng, chars, per):
                for v in values[:2]:
                    f.write("%s %s\n" % (v.encode(codec).hex(), cur.mogrify("%s", (v,)).hex()))
                c.sent += 1
                try:
                    cur.execute(tpl.replace("{", "%(").replace("}", ")s"),
                                {str(i): v for i, v in enumerate(values)})
                    expect, got = ordered_result(tpl, values, cur.fetchall())
                    if expect != got:
                        c.note("wrong", cur.query.decode(codec, "replace"))
                except psycopg2.Error as e:
                    msg = str(e)
                    c.note("blocked" if "quoteguard" in msg else "other",
                           msg + " | " + repr(values))
        conn.close()
    return counters


def run_mysql(total, out_dir):
    import MySQLdb
    sock = os.environ["QG_MY_SOCKET"]
    modes, codecs, settings = MY_MODES, MY_CODECS, MY_SETTINGS
    per = total // len(settings) + 1
    counters = {}
    rng = random.Random(MY_SEED)
    for cs, mode in settings:
        conn = MySQLdb.connect(unix_socket=sock, user="root", charset=cs, use_unicode=True)
        conn.autocommit(True)
        cur = conn.cursor()
        cur.execute("SET SESSION sql_mode = '%s'" % modes[mode])
        codec = codecs[cs]
        chars = chars_of(codec)
        c = counters.setdefault(("MySQLdb", cs, mode), Counter())
        with open(os.path.join(out_dir, "escaped-MySQLdb-%s-%s.txt" % (cs, mode)), "w") as f:
            for tpl, values in statements(rng, chars, per):
                for v in values[:2]:
                    f.write("%s %s\n" % (v.encode(codec).hex(), conn.literal(v).hex()))
                c.sent += 1
                try:
                    cur.execute(tpl.replace("{", "%(").replace("}", ")s"),
                                {str(i): v for i, v in enumerate(values)})
                    rows = [tuple(x.decode(codec) if isinstance(x, bytes) else x for x in r)
                            for r in cur.fetchall()]
                    expect, got = ordered_result(tpl, values, rows)
                    if expect != got:
                        c.note("wrong", repr(values))
                except MySQLdb.Error as e:
                    msg = str(e)
                    c.note("blocked" if "quoteguard" in msg else "other", msg + " | " + repr(values))
        conn.close()
    return counters


def main():
    if sys.argv[1] == "values":
        emit_values(sys.argv[2], int(sys.argv[3]))
        return
    dialect, total, out_dir = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    counters = run_pg(total, out_dir) if dialect == "pg" else run_mysql(total, out_dir)
    for (driver, enc, mode), c in sorted(counters.items()):
        print("driver %s %s %s sent %d blocked %d wrong %d other %d" %
              (driver, enc, mode, c.sent, c.blocked, c.wrong, c.other))
        for e in c.examples:
            print("#   " + e)


if __name__ == "__main__":
    main()
