#!/usr/bin/perl
# CGI-style user lookup, DBI + DBD::mysql: the connection character set comes
# from the server configuration (APP_CHARSET, default sjis) and is chosen with
# SET NAMES; the name comes from QUERY_STRING, escaped by hand (a backslash
# before every ' and \ byte) and pasted into a '' literal.  In sjis or gbk a
# lead byte before the quote swallows the backslash.  Do not copy.
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

(my $name = $param{name} // '') =~ s/(['\\])/\\$1/g;
my $rows = $dbh->selectall_arrayref(
    "SELECT id, name, city FROM users WHERE name = '$name' ORDER BY id");

print "Content-Type: text/plain; charset=$charset\r\n\r\n";
if ($rows) {
    print join("\t", @$_), "\n" for @$rows;
    print scalar(@$rows), " rows\n";
} else {
    print "query failed: ", $dbh->errstr, "\n";
}
$dbh->disconnect;
