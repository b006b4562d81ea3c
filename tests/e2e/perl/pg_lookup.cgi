#!/usr/bin/perl
# CGI-style user lookup, DBI + DBD::Pg: the client encoding comes from the
# server configuration (APP_CHARSET, default GBK), the name from QUERY_STRING,
# escaped by hand (a backslash before every ' and \ byte) and pasted into an
# E'' literal.  In GBK or SJIS a lead byte before the quote turns the
# backslash into its trail byte, and the quote closes the literal.
# (quotemeta() would not do for this demonstration: it puts a backslash before
# every non-word byte, so no SQL text can follow a broken-out quote.)
# Do not copy.
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
my $charset = $ENV{APP_CHARSET} || 'GBK';

# Connection settings come from the PG* environment; pg_enable_utf8 => 0:
# bytes in, bytes out, since the page is not UTF-8.
my $dbh = DBI->connect('dbi:Pg:', undef, undef,
                       {RaiseError => 0, PrintError => 0, AutoCommit => 1, pg_enable_utf8 => 0})
    or do { print "Status: 500\r\n\r\ncannot connect\n"; exit 0 };
$dbh->do("SET client_encoding TO '$charset'");
# As servers did before the 2006 fix: \' accepted in every client encoding.
$dbh->do("SET backslash_quote = on");

(my $name = $param{name} // '') =~ s/(['\\])/\\$1/g;
my $rows = $dbh->selectall_arrayref(
    "SELECT id, name, city FROM users WHERE name = E'$name' ORDER BY id");

print "Content-Type: text/plain; charset=$charset\r\n\r\n";
if ($rows) {
    print join("\t", @$_), "\n" for @$rows;
    print scalar(@$rows), " rows\n";
} else {
    print "query failed: ", $dbh->errstr, "\n";
}
$dbh->disconnect;
