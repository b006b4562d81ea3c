#!/usr/bin/perl
# CGI-style search, DBI + DBD::mysql, written the right way for its time:
# both fields go through $dbh->quote (mysql_real_escape_string, which knows
# the connection's character set and writes \' for a quote).  A correct
# application that quoteguard must leave alone.  APP_CHARSET as in
# my_lookup.cgi (default sjis).
use strict;
use warnings;
use DBI;

sub url_decode {
    my ($s) = @_;
    $s =~ tr/+/ /;
    $s =~ s/%([0-9A-Fa-f]{2})/chr hex $1/ge;
    return $s;
}

my %param;
for my $pair (split /[&;]/, $ENV{QUERY_STRING} // '') {
    my ($key, $value) = split /=/, $pair, 2;
    $param{url_decode($key)} = url_decode($value // '');
}
my $charset = $ENV{APP_CHARSET} || 'sjis';

my $dbh = DBI->connect("dbi:mysql:database=shop;mysql_socket=$ENV{QG_MY_SOCKET}", 'root', '',
                       {RaiseError => 0, PrintError => 0, AutoCommit => 1})
    or do { print "Status: 500\r\n\r\ncannot connect\n"; exit 0 };
$dbh->do("SET NAMES $charset");

my $sql = "SELECT id, name, city FROM users WHERE name = " . $dbh->quote($param{name} // '')
        . " OR city = " . $dbh->quote($param{city} // '') . " ORDER BY id";
my $rows = $dbh->selectall_arrayref($sql);

print "Content-Type: text/plain; charset=$charset\r\n\r\n";
if ($rows) {
    print join("\t", @$_), "\n" for @$rows;
    print scalar(@$rows), " rows\n";
} else {
    print "query failed: ", $dbh->errstr, "\n";
}
$dbh->disconnect;
