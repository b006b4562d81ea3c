#!/bin/bash
# A legacy Perl DBI + DBD::mysql script (Debian's DBD::mysql is linked to
# libmariadb) under the shim: hand-escaped input (s/'/\\'/g) after a plain
# SET NAMES gbk is blocked and DBI reports our error; quote(), placeholders
# and ordinary queries work as before.
# servers: mariadb
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/mariadb.sh

qg_require_build
my_available || tap_skip_all "no MariaDB server binaries (or not root)"
dbd=$(perl -MDBD::mysql -e 'print $INC{"DBD/mysql.pm"}' 2>/dev/null) ||
    tap_skip_all "no DBD::mysql"
dbd_so=$(find "$(dirname "$(dirname "$dbd")")/auto/DBD/mysql" -name mysql.so 2>/dev/null | head -n 1)
ldd "$dbd_so" 2>/dev/null | grep -q 'libmariadb\.so\.3' ||
    tap_skip_all "DBD::mysql is not linked to libmariadb.so.3"
my_start || tap_bail "cannot start MariaDB"
my_sql -e "CREATE DATABASE qg;
           CREATE TABLE qg.users (name VARBINARY(64), secret VARCHAR(64));
           INSERT INTO qg.users VALUES ('alice', 'secret_alice'), ('bob', 'secret_bob')" \
    || tap_bail "cannot create the table"

SCRIPT=$QG_MY_DIR/legacy.pl
cat >"$SCRIPT" <<'PERL'
use strict;
use warnings;
use DBI;
my ($socket, $marker) = @ARGV;
my $dbh = DBI->connect("DBI:mysql:database=qg;mysql_socket=$socket", 'root', '',
                       {RaiseError => 0, PrintError => 0})
    or die "CONNERR: $DBI::errstr\n";
sub show {
    my ($sql, @bind) = @_;
    my $rows = $dbh->selectall_arrayref($sql, undef, @bind);
    if (!$rows) {
        printf "ERROR: %s %s %s\n", $dbh->err // '-', $dbh->state // '-', $dbh->errstr // '-';
        return;
    }
    print 'ROW: ', join('|', map { $_ // '\N' } @$_), "\n" for @$rows;
    print 'ROWS: ', scalar(@$rows), "\n";
}
show('SELECT name FROM users ORDER BY name');
$dbh->do('SET NAMES gbk') or print "ERROR: SET NAMES\n";
my $input = "\xbf' OR 1=1 -- ";
(my $escaped = $input) =~ s/'/\\'/g;
show("SELECT /*$marker*/ secret FROM users WHERE name = '$escaped'");
show("SELECT 'alive'");
show('SELECT secret FROM users WHERE name = ' . $dbh->quote($input));
show('SELECT secret FROM users WHERE name = ?', $input);
$dbh->disconnect;
PERL

out=$(perl "$SCRIPT" "$QG_MY_SOCKET" "qgm_dbd_plain_$$")
has "$out" "ROW: secret_bob" "without the shim the hand-escaped input injects"

log=$QG_MY_DIR/dbd.log
marker=qgm_dbd_shim_$$
out=$(with_shim enforce "$log" perl "$SCRIPT" "$QG_MY_SOCKET" "$marker")
has "$out" "ROW: alice
ROW: bob
ROWS: 2" "under the shim an ordinary query works"
matches "$out" '^ERROR: 1105 42601 quoteguard: blocked structure_mismatch at byte [0-9]+ \(gbk\)' \
    "under the shim the hand-escaped input is blocked; DBI's err, state and errstr carry our error"
lacks "$out" "ROW: secret_" "under the shim no secret leaks"
lacks "$(cat "$QG_MY_LOG")" "$marker" "under the shim the blocked statement is not in the general log"
has "$out" "ROW: alive" "under the shim the handle stays usable"
ok "under the shim quote() and placeholders run, injecting nothing" \
    [ "$(printf '%s\n' "$out" | grep -c '^ROWS: 0$')" -eq 2 ]
has "$(cat "$log")" '"api":"mysql_real_query","dialect":"mysql","encoding":"gbk"' \
    "the block is logged"

tap_done
