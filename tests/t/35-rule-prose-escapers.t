#!/bin/bash
# What people really write passes, through the escaper named, against the
# real servers (docs/DETECTION.md, condition 4 and the ill-formed
# sequences of MySQL): a prose comment with an apostrophe after a literal
# ending in a character with a 0x5c trail byte (psycopg2 in SJIS, BIG5,
# GBK with standard_conforming_strings off and on, '' and E''; MySQLdb,
# DBD::mysql quote and PDO::quote in gbk, sjis, big5 after --, # and
# /* */), and the values libmariadb and mysqlnd escape a byte of that
# they take for an invalid lead (eucjpms 8f ab b1 -> 8f ab 5c b1, euckr
# bc 9d -> 5c bc 9d).  Each client prints what the server answered: the
# same with the shim in enforce mode as without it, and in audit mode
# nothing is logged but the shim's attaching.  And the escaper models
# `make measure` uses (tests/measure/escapers.h) write what libmariadb's
# mysql_real_escape_string and mysqlnd's real_escape_string write, byte for
# byte, for every byte 0x80-0xff alone and before a quote, a letter, a
# backslash or a trail byte, lead and trail pairs, and eucjpms three-byte
# characters, in every multibyte character set whose escaper escapes a
# lead byte it takes for invalid.
# servers: pg mariadb
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/pg.sh
. tests/lib/mariadb.sh

qg_require_build measure/measure_rule
pg_available || tap_skip_all "no PostgreSQL server binaries"
my_available || tap_skip_all "no MariaDB server binaries (or not root)"
/usr/bin/python3 -c 'import psycopg2, MySQLdb' 2>/dev/null || tap_skip_all "no psycopg2 or MySQLdb"
perl -MDBD::mysql -e 1 2>/dev/null || tap_skip_all "no DBD::mysql"
php -r 'exit(extension_loaded("pdo_mysql") ? 0 : 1);' || tap_skip_all "no PHP pdo_mysql"
pg_start || tap_bail "cannot start PostgreSQL"
my_start || tap_bail "cannot start MariaDB"
work=$QG_MY_DIR

cat >"$work/pg_cases.py" <<'PY'
import sys
import psycopg2

# (client encoding, value, query with %s where psycopg2 puts the literal)
CASES = [
    ("SJIS", "\u8868", "SELECT %s AS v -- it's fine"),
    ("SJIS", "\u8868", "SELECT %s AS v /* it's */"),
    ("SJIS", "\u8868\\", "SELECT %s AS v -- it's"),
    ("SJIS", "\u767a\u8868", "SELECT %s AS v -- don't cache\n, 'x' AS w /* the 'w' column */"),
    ("BIG5", "\u529f", "SELECT %s AS v -- it's"),
    ("GBK", "\u7e17", "SELECT %s AS v -- it's"),
]
for scs in ("off", "on"):
    for encoding, value, query in CASES:
        # psycopg2 writes E'' where the connection starts with scs off
        conn = psycopg2.connect("", options="-c standard_conforming_strings=" + scs)
        conn.set_client_encoding(encoding)
        cur = conn.cursor()
        sql = cur.mogrify(query, (value,))
        try:
            cur.execute(sql)
            print("psycopg2", scs, encoding, sql.hex(), "->", repr(cur.fetchall()))
        except psycopg2.Error as e:
            print("psycopg2", scs, encoding, sql.hex(), "-> ERROR", e.pgcode)
        conn.close()
PY

cat >"$work/my_cases.py" <<'PY'
import sys
import MySQLdb

# (charset, value, query with %s where mysql_real_escape_string's literal goes)
CASES = [
    ("gbk", b"\xbf\x5c", b"SELECT HEX(%s) AS v -- it's fine"),
    ("gbk", b"\xbf\x5c", b"SELECT HEX(%s) AS v # it's fine"),
    ("gbk", b"\xbf\x5c", b"SELECT HEX(%s) AS v /* it's */"),
    ("sjis", b"\x95\x5c", b"SELECT HEX(%s) AS v -- it's fine"),
    ("big5", b"\xa5\x5c", b"SELECT HEX(%s) AS v -- don't cache"),
    ("utf8mb4", b"it's", b"SELECT HEX(%s) AS v -- it's fine"),
    ("eucjpms", b"caf\x8f\xab\xb1", b"SELECT HEX(%s) AS v"),
    ("eucjpms", b"\x8f\xab\xb1", b"SELECT HEX(%s), HEX(%s) AS v -- it's"),
    ("euckr", b"\xbc\x9d", b"SELECT HEX(%s) AS v"),
    ("euckr", b"\xbc\x9d\xb0\xa1", b"SELECT HEX(%s), HEX(%s) AS v"),
    ("euckr", b"a\xbc\x9db", b"SELECT HEX(%s) AS v"),
]
for charset, value, template in CASES:
    conn = MySQLdb.connect(unix_socket=sys.argv[1], user="root", charset=charset,
                           use_unicode=False)
    sql = template.replace(b"%s", b"'" + conn.escape_string(value) + b"'")
    try:
        conn.query(sql)
        print("MySQLdb", charset, sql.hex(), "->", conn.store_result().fetch_row(maxrows=0))
    except MySQLdb.Error as e:
        print("MySQLdb", charset, sql.hex(), "-> ERROR", e.args[0])
    conn.close()
PY

cat >"$work/dbd.pl" <<'PERL'
use strict;
use warnings;
use DBI;
for my $case (["eucjpms", "caf\x8f\xab\xb1"], ["euckr", "\xbc\x9d"],
              ["euckr", "\xbc\x9d\xb0\xa1"], ["gbk", "\xbf\x5c"]) {
    my ($charset, $value) = @$case;
    my $dbh = DBI->connect("DBI:mysql:mysql_socket=$ARGV[0]", 'root', '',
                           {RaiseError => 0, PrintError => 0}) or die "CONNERR\n";
    $dbh->do("SET NAMES $charset");
    my $sql = 'SELECT HEX(' . $dbh->quote($value) . ") AS v -- it's fine";
    my $rows = $dbh->selectall_arrayref($sql);
    printf "DBD::mysql %s %s -> %s\n", $charset, unpack('H*', $sql),
        $rows ? join('|', map { @$_ } @$rows) : 'ERROR ' . ($dbh->err // '-');
    $dbh->disconnect;
}
PERL

cat >"$work/pdo.php" <<'PHP'
<?php
foreach ([["euckr", "\xbc\x9d"], ["euckr", "a\xbc\x9d\xb0\xa1"], ["gbk", "\xbf\x5c"],
          ["sjis", "\x95\x5c"]] as [$charset, $value]) {
    $pdo = new PDO("mysql:unix_socket=$argv[1];charset=$charset", "root", "",
                   [PDO::ATTR_EMULATE_PREPARES => true]);
    $sql = "SELECT HEX(" . $pdo->quote($value) . ") AS v -- it's fine";
    try {
        printf("PDO::quote %s %s -> %s\n", $charset, bin2hex($sql),
               $pdo->query($sql)->fetchAll(PDO::FETCH_NUM)[0][0]);
    } catch (PDOException $e) {
        printf("PDO::quote %s %s -> ERROR %s\n", $charset, bin2hex($sql), $e->getCode());
    }
}
PHP

cat >"$work/quirks.py" <<'PY'
import sys
import MySQLdb

def values():
    for b in range(0x80, 0x100):
        for tail in (b"", b"'", b"x", b"\\", b"\xa1", b"\xa1\xa1"):
            yield bytes([b]) + tail
    for lead in range(0x81, 0xff, 3):
        for trail in list(range(0x40, 0x80, 7)) + list(range(0x80, 0xff, 5)):
            yield bytes([lead, trail]) + b"'"
    for mid in range(0xa1, 0xff, 9):
        for last in range(0xa1, 0xff, 11):
            yield b"caf\x8f" + bytes([mid, last]) + b"'"

conn = MySQLdb.connect(unix_socket=sys.argv[1], user="root", charset=sys.argv[2],
                       use_unicode=False)
for v in values():
    print(v.hex(), (b"'" + conn.escape_string(v) + b"'").hex())
PY
cat >"$work/quirks.php" <<'PHP'
<?php
$m = new mysqli(null, "root", "", "", 0, $argv[1]);
$m->set_charset($argv[2]);
foreach (explode("\n", trim(stream_get_contents(STDIN))) as $line) {
    $hex = strtok($line, " ");
    printf("%s %s\n", $hex, bin2hex("'" . $m->real_escape_string(hex2bin($hex)) . "'"));
}
PHP
MEASURE=$QG_BUILD/measure/measure_rule
for charset in sjis cp932 gbk big5 gb2312 euckr ujis eucjpms utf8mb4; do
    /usr/bin/python3 "$work/quirks.py" "$QG_MY_SOCKET" "$charset" >"$work/libmariadb.$charset" ||
        tap_bail "MySQLdb could not escape in $charset"
    php "$work/quirks.php" "$QG_MY_SOCKET" "$charset" <"$work/libmariadb.$charset" \
        >"$work/mysqlnd.$charset" || tap_bail "mysqli could not escape in $charset"
    read -r n bad < <("$MEASURE" --verify mysql_real_escape mysql "$charset" 0 <"$work/libmariadb.$charset" 2>/dev/null)
    ok "$charset: the model writes what libmariadb writes ($n values, ${bad:-?} differ)" [ "${n:-0}" -gt 2000 -a "${bad:-1}" -eq 0 ]
    read -r n bad < <("$MEASURE" --verify mysqlnd mysql "$charset" 0 <"$work/mysqlnd.$charset" 2>/dev/null)
    ok "$charset: the model writes what mysqlnd writes ($n values, ${bad:-?} differ)" [ "${n:-0}" -gt 2000 -a "${bad:-1}" -eq 0 ]
done

run_all() {
    "$@" /usr/bin/python3 "$work/pg_cases.py"
    "$@" /usr/bin/python3 "$work/my_cases.py" "$QG_MY_SOCKET"
    "$@" perl "$work/dbd.pl" "$QG_MY_SOCKET"
    "$@" php "$work/pdo.php" "$QG_MY_SOCKET"
}
plain=$(run_all env 2>&1)
statements=$(printf '%s\n' "$plain" | grep -c ' -> ')
ok "without the shim every statement runs ($statements)" [ "$statements" -eq 31 ]
lacks "$plain" "ERROR" "no error without the shim"
# The escapers wrote the bytes the cases are about.
has "$plain" "psycopg2 off SJIS 53454c454354204527955c5c5c27" "psycopg2 wrote E'<95 5c 5c 5c>' (scs off)"
has "$plain" "psycopg2 on SJIS 53454c4543542027955c27" "psycopg2 wrote '<95 5c>' (scs on)"
has "$plain" "MySQLdb eucjpms 53454c4543542048455828276361668fab5cb127" "libmariadb wrote 8f ab 5c b1"
has "$plain" "MySQLdb euckr 53454c4543542048455828275cbc9d27" "libmariadb wrote 5c bc 9d"
has "$plain" "PDO::quote euckr 53454c4543542048455828275cbc9d27" "mysqlnd wrote 5c bc 9d"
has "$plain" "DBD::mysql eucjpms 53454c4543542048455828276361668fab5cb127" "DBD::mysql quote wrote 8f ab 5c b1"
has "$plain" "MySQLdb eucjpms 53454c4543542048455828276361668fab5cb127292041532076 -> ((b'6361668FABB1',),)" \
    "the server reads the eucjpms value back unchanged"
has "$plain" "PDO::quote euckr 53454c4543542048455828275cbc9d27292041532076202d2d20697427732066696e65 -> BC9D" \
    "the server reads the euckr value back unchanged"

enforce=$(run_all with_shim enforce "$work/enforce.log" 2>&1)
ok "enforce: every client gets what it got without the shim" [ "$enforce" = "$plain" ] ||
    tap_diag "$(diff <(printf '%s\n' "$plain") <(printf '%s\n' "$enforce") | head -n 10)"
lacks "$(cat "$work/enforce.log" 2>/dev/null)" '"reason"' "enforce: nothing blocked or logged"
audit=$(run_all with_shim audit "$work/audit.log" 2>&1)
ok "audit: every client gets what it got without the shim" [ "$audit" = "$plain" ]
has "$(cat "$work/audit.log" 2>/dev/null)" '"event":"attached"' "audit: the shim was attached"
lacks "$(cat "$work/audit.log" 2>/dev/null)" '"reason"' "audit: no finding logged"
tap_done
