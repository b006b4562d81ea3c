#!/bin/bash
# servers: pg mariadb
# The error an application shows for a blocked query names quoteguard, in
# every stack: drivers rework the client library's message before the
# program sees it (psycopg 3 cuts everything up to the first colon, psycopg2
# cuts a severity prefix, PHP and DBI pass it on, psql prints it whole).
# Each script sends a byte-wise escaped attack, prints the driver's error
# and then a query on the same connection.
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/pg.sh
. tests/lib/mariadb.sh

qg_require_build
PY=/usr/bin/python3
pg_available || tap_skip_all "no PostgreSQL server binaries (or not root)"
my_available || tap_skip_all "no MariaDB server binaries (or not root)"
pg_start || tap_bail "cannot start PostgreSQL"
my_start || tap_bail "cannot start MariaDB"
pg_psql -c "CREATE TABLE users(name text, secret text);
            INSERT INTO users VALUES ('alice', 'secret_alice'), ('bob', 'secret_bob')" \
    || tap_bail "cannot create the PostgreSQL table"
my_sql -e "CREATE DATABASE qg;
           CREATE TABLE qg.users (name VARBINARY(64), secret VARCHAR(64));
           INSERT INTO qg.users VALUES ('alice', 'secret_alice'), ('bob', 'secret_bob')" \
    || tap_bail "cannot create the MariaDB table"
T=$QG_PG_DIR

# ------------------------------------------------------------ PostgreSQL
# SJIS with backslash escapes on: the input 95 27 escaped byte-wise is
# 95 5c 27, and the server reads [95 5c] + a quote that ends the literal.
PG_SETS="SET client_encoding TO SJIS;SET standard_conforming_strings TO off;SET backslash_quote TO on;SET escape_string_warning TO off"

cat >"$T/pg.py" <<'PY'
import sys
driver, sets, mark = sys.argv[1], sys.argv[2], sys.argv[3]
if driver == "psycopg2":
    import psycopg2
    conn = psycopg2.connect("")
    conn.autocommit = True
else:
    import psycopg
    conn = psycopg.connect("", autocommit=True)
cur = conn.cursor()
for s in sets.split(";"):
    cur.execute(s)
def show(query):
    try:
        cur.execute(query)
        for row in cur.fetchall():
            print("ROW:", row[0])
    except Exception as e:
        print("ERROR:", str(e).strip().splitlines()[0])
show(b"SELECT /*" + mark.encode() + b"*/ secret FROM users WHERE name = '\x95\x5c' OR 1=1 --'")
show(b"SELECT 'alive'")
PY

cat >"$T/pg.php" <<'PHP'
<?php
$db = pg_connect("");
foreach (explode(";", $argv[1]) as $set)
    pg_query($db, $set);
function show($db, $sql) {
    $r = @pg_query($db, $sql);
    if ($r === false) { echo "ERROR: ", trim(pg_last_error($db)), "\n"; return; }
    while ($row = pg_fetch_row($r)) echo "ROW: ", $row[0], "\n";
}
show($db, "SELECT /*{$argv[2]}*/ secret FROM users WHERE name = '\x95\x5c' OR 1=1 --'");
show($db, "SELECT 'alive'");
PHP

cat >"$T/pg.pl" <<'PERL'
use strict;
use warnings;
use DBI;
my ($sets, $mark) = @ARGV;
my $dbh = DBI->connect("dbi:Pg:", undef, undef, {RaiseError => 0, PrintError => 0, AutoCommit => 1})
    or die "CONNERR: $DBI::errstr\n";
$dbh->do($_) for split /;/, $sets;
sub show {
    my $rows = $dbh->selectall_arrayref($_[0]);
    if (!$rows) { my ($line) = split /\n/, $dbh->errstr; print "ERROR: $line\n"; return; }
    print "ROW: $_->[0]\n" for @$rows;
}
show("SELECT /*$mark*/ secret FROM users WHERE name = '\x95\x5c' OR 1=1 --'");
show("SELECT 'alive'");
PERL

# pg_stack NAME MARK [RUNNER…]: the attack through one stack, run by RUNNER
# (with_shim …) or as it is.
pg_stack() {
    local stack=$1 mark=$2 s
    shift 2
    case $stack in
    psycopg2 | psycopg) "$@" "$PY" "$T/pg.py" "$stack" "$PG_SETS" "$mark" 2>&1 ;;
    php-pgsql) "$@" php "$T/pg.php" "$PG_SETS" "$mark" 2>&1 ;;
    dbd-pg) "$@" perl "$T/pg.pl" "$PG_SETS" "$mark" 2>&1 ;;
    psql)
        local -a cmds=() sets
        IFS=';' read -ra sets <<<"$PG_SETS"
        for s in "${sets[@]}"; do cmds+=(-c "$s"); done
        "$@" psql -X -q -A -t "${cmds[@]}" \
            -c "SELECT /*$mark*/ secret FROM users WHERE name = '"$'\x95\x5c'"' OR 1=1 --'" \
            -c "SELECT 'alive'" 2>&1 | sed 's/^psql:[^ ]* //; s/^\([a-z_]*\)$/ROW: \1/'
        ;;
    esac
}

for stack in psycopg2 psycopg php-pgsql dbd-pg psql; do
    mark=qgm_err_${stack//-/_}_plain_$$
    out=$(pg_stack "$stack" "$mark")
    has "$out" "ROW: secret_bob" "$stack: without the shim the attack injects"
    mark=qgm_err_${stack//-/_}_shim_$$
    out=$(pg_stack "$stack" "$mark" with_shim enforce "$T/$stack.log")
    matches "$out" '^ERROR: .*quoteguard: blocked structure_mismatch' \
        "$stack: the application's error names quoteguard"
    lacks "$out" "secret_" "$stack: no secret leaks"
    has "$out" "ROW: alive" "$stack: the connection stays usable after the block"
    lacks "$(cat "$QG_PG_LOG")" "$mark" "$stack: the attack never reaches the server"
done

# --------------------------------------------------------- MySQL / MariaDB
# GBK: the input bf 27 escaped byte-wise is bf 5c 27, read as [bf 5c] + a quote.
cat >"$T/my.py" <<'PY'
import sys
import MySQLdb
socket, mark = sys.argv[1], sys.argv[2]
conn = MySQLdb.connect(unix_socket=socket, user="root", db="qg")
cur = conn.cursor()
cur.execute(b"SET NAMES gbk")
def show(query):
    try:
        cur.execute(query)
        for row in cur.fetchall():
            print("ROW:", row[0].decode() if isinstance(row[0], bytes) else row[0])
    except Exception as e:
        print("ERROR:", str(e).strip().splitlines()[0])
show(b"SELECT /*" + mark.encode() + b"*/ secret FROM users WHERE name = '\xbf\x5c' OR 1=1 -- '")
show(b"SELECT 'alive'")
PY

cat >"$T/my.pl" <<'PERL'
use strict;
use warnings;
use DBI;
my ($socket, $mark) = @ARGV;
my $dbh = DBI->connect("DBI:mysql:database=qg;mysql_socket=$socket", 'root', '',
                       {RaiseError => 0, PrintError => 0}) or die "CONNERR: $DBI::errstr\n";
$dbh->do('SET NAMES gbk');
sub show {
    my $rows = $dbh->selectall_arrayref($_[0]);
    if (!$rows) { my ($line) = split /\n/, $dbh->errstr; print "ERROR: $line\n"; return; }
    print "ROW: $_->[0]\n" for @$rows;
}
show("SELECT /*$mark*/ secret FROM users WHERE name = '\xbf\x5c' OR 1=1 -- '");
show("SELECT 'alive'");
PERL

cat >"$T/my.php" <<'PHP'
<?php
mysqli_report(MYSQLI_REPORT_OFF);
$db = new mysqli("localhost", "root", "", "qg", 0, $argv[1]);
$db->query("SET NAMES gbk");
function show($db, $sql) {
    $r = $db->query($sql);
    if ($r === false) { echo "ERROR: ", $db->error, "\n"; return; }
    while ($row = $r->fetch_row()) echo "ROW: ", $row[0], "\n";
}
show($db, "SELECT /*{$argv[2]}*/ secret FROM users WHERE name = '\xbf\x5c' OR 1=1 -- '");
show($db, "SELECT 'alive'");
PHP

# my_stack NAME MARK [RUNNER…]
my_stack() {
    local stack=$1 mark=$2
    shift 2
    case $stack in
    mysqldb) "$@" "$PY" "$T/my.py" "$QG_MY_SOCKET" "$mark" 2>&1 ;;
    dbd-mysql) "$@" perl "$T/my.pl" "$QG_MY_SOCKET" "$mark" 2>&1 ;;
    php-mysqli) "$@" php "$T/my.php" "$QG_MY_SOCKET" "$mark" 2>&1 ;;
    esac
}

for stack in mysqldb dbd-mysql php-mysqli; do
    mark=qgm_err_${stack//-/_}_plain_$$
    out=$(my_stack "$stack" "$mark")
    has "$out" "ROW: secret_bob" "$stack: without the shim the attack injects"
    mark=qgm_err_${stack//-/_}_shim_$$
    out=$(my_stack "$stack" "$mark" with_shim enforce "$T/$stack.log")
    matches "$out" '^ERROR: .*quoteguard: blocked structure_mismatch' \
        "$stack: the application's error names quoteguard"
    lacks "$out" "secret_" "$stack: no secret leaks"
    has "$out" "ROW: alive" "$stack: the connection stays usable after the block"
    lacks "$(cat "$QG_MY_LOG")" "$mark" "$stack: the attack never reaches the server"
done

tap_done
