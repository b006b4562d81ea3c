#!/usr/bin/perl
# Legitimate statements escaped by Perl's DBI drivers and sent through them:
# DBD::Pg `quote` (libpq) and DBD::mysql `quote` (mysql_real_escape_string
# in libmariadb) after SET NAMES, the statement prepared by the server.  The values come from drivers.py
# ("drivers.py values", on stdin); every statement must come back byte for
# byte (as the server gives each value back when sent as a parameter), and
# one the shim blocks ("quoteguard" in the error) counts as blocked.
#
# DBD::Pg's quote doubles ' and \ byte by byte, whatever the client
# encoding: in SJIS, BIG5, GBK and GB18030 a value holding a character whose
# second byte is 0x5c is written otherwise than the server reads it.  Such
# statements (AWARE 1 in the values) are counted apart, as "misescaped".
#
# Prints "driver NAME ENCODING MODE sent N blocked N wrong N other N" per
# driver and setting (and "misescaped DBD::Pg …" likewise), as drivers.py
# does, and writes each escaped literal with its value (hex) to
# DIR/escaped-NAME-ENCODING-MODE.txt for measure_rule --verify.
#
# usage: perl drivers.pl pg|mysql DIR < values
# env:   PGHOST PGPORT PGUSER PGDATABASE (pg), QG_MY_SOCKET (mysql)
use strict;
use warnings;
use DBI;

my ($dialect, $out_dir) = @ARGV;
my (%templates, %counters, @examples, %files, @order);
my ($dbh, $enc, $mode);
my $name = $dialect eq 'pg' ? 'DBD::Pg' : 'DBD::mysql';
my %sql_mode = (default => '', NBE => 'NO_BACKSLASH_ESCAPES', ANSI_QUOTES => 'ANSI_QUOTES');

sub connect_setting {
    my $h;
    if ($dialect eq 'pg') {
        $h = DBI->connect("dbi:Pg:host=$ENV{PGHOST};port=$ENV{PGPORT};dbname=$ENV{PGDATABASE}",
                          $ENV{PGUSER}, '', {pg_enable_utf8 => 0, PrintError => 0, AutoCommit => 1})
            or die "cannot connect: $DBI::errstr\n";
        (my $scs = $mode) =~ s/^scs=//;
        $h->do("SET client_encoding TO '$enc'") && $h->do("SET standard_conforming_strings = $scs")
            && $h->do('SET escape_string_warning = off') or die "cannot set $enc $mode\n";
    } else {
        # Server-side prepare: DBD::mysql's own placeholder scan reads
        # quotes byte by byte, knowing neither the character set nor
        # NO_BACKSLASH_ESCAPES, and replaces a '?' inside a literal it lost
        # step with by NULL; the server reads the text as it is.
        $h = DBI->connect("dbi:mysql:mysql_socket=$ENV{QG_MY_SOCKET}", 'root', '',
                          {PrintError => 0, AutoCommit => 1, mysql_server_prepare => 1})
            or die "cannot connect: $DBI::errstr\n";
        $h->do("SET NAMES $enc") && $h->do("SET SESSION sql_mode = '$sql_mode{$mode}'")
            or die "cannot set $enc $mode\n";
    }
    return $h;
}

# The values the result must hold, in its order (drivers.py's
# ordered_result), and the ones it holds, as byte strings.
sub expected_and_got {
    my ($tpl, $values, $rows) = @_;
    if ($tpl =~ /UNION ALL/) {
        return ([sort @$values[0 .. 2]], [sort map { $_->[0] } @$rows]);
    }
    if ($tpl =~ /AS a WHERE/) {
        return ([$values->[0]], [map { $_->[0] } @$rows]);
    }
    return ($values, @$rows ? $rows->[0] : []);
}

sub same { my ($a, $b) = @_; return @$a == @$b && !grep { $a->[$_] ne $b->[$_] } 0 .. $#$a }

sub server_roundtrip {
    my ($v) = @_;
    my $sql = $dialect eq 'pg' ? 'SELECT $1::text' : 'SELECT ?';
    my ($r) = $dbh->selectrow_array($sql, undef, $v);
    return $r;
}

sub note {
    my ($c, $kind, $what) = @_;
    $c->{$kind}++;
    push @examples, "$kind: " . substr($what, 0, 300) if @examples < 6;
}

sub escaped_file {
    (my $m = $mode) =~ s/^scs=//;
    my $key = "$name-$enc-$m";
    open($files{$key}, '>', "$out_dir/escaped-$key.txt") or die "$!\n" unless $files{$key};
    return $files{$key};
}

while (my $line = <STDIN>) {
    chomp $line;
    my @f = split / /, $line;
    if ($f[0] eq 'template') {
        $templates{$f[1]} = pack('H*', $f[2]);
        next;
    }
    if ($f[0] eq 'setting') {
        (undef, $enc, $mode) = @f;
        $dbh->disconnect if $dbh;
        $dbh = connect_setting();
        next;
    }
    my ($tpl, $aware) = ($templates{$f[1]}, $f[2]);
    my @values = map { $_ eq '-' ? '' : pack('H*', $_) } @f[3 .. $#f];
    my @lits = map { $dbh->quote($_) } @values;
    my $file = escaped_file();
    print $file unpack('H*', $values[$_]), ' ', unpack('H*', $lits[$_]), "\n" for grep { $_ < @values } 0, 1;
    (my $sql = $tpl) =~ s/\{(\d)\}/$lits[$1]/g;
    my $kind = $dialect eq 'pg' && $aware ? 'misescaped' : 'driver';
    my $key = "$kind $name $enc $mode";
    push @order, $key unless $counters{$key};
    my $c = $counters{$key} ||= {sent => 0, blocked => 0, wrong => 0, other => 0};
    $c->{sent}++;
    # pg_direct / no bind values: the driver sends the text as it is.
    my $rows = $dbh->selectall_arrayref($sql);
    if (!$rows) {
        my $msg = $dbh->errstr // '';
        note($c, $msg =~ /quoteguard/ ? 'blocked' : 'other', "$msg | " . unpack('H*', $sql));
        next;
    }
    my ($want, $got) = expected_and_got($tpl, \@values, $rows);
    ($want, $got) = expected_and_got($tpl, [map { server_roundtrip($_) } @values], $rows)
        unless same($want, $got);
    note($c, 'wrong', unpack('H*', $sql)) unless same($want, $got);
}
for my $key (@order) {
    my $c = $counters{$key};
    printf "%s sent %d blocked %d wrong %d other %d\n", $key, @$c{qw(sent blocked wrong other)};
}
print "#   $_\n" for @examples;
