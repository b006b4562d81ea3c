#!/bin/bash
# Differential test: the checker's well-formedness verdict (qg_encoding_char_len
# walks the whole string) against the real MariaDB server for every multibyte
# character set a client can select.  MariaDB's verdict: converting the bytes
# from binary to the character set and back gives them back unchanged
# (CONVERT(… USING cs) replaces every ill-formed sequence by '?'; it checks the
# byte structure only, no mapping table is involved).  Every disagreement must
# fall into a named category; the counts are printed.
# servers: mariadb
set -u
cd "$(dirname "$0")/../.."
. tests/lib/mariadb.sh
BUILD=${BUILD:-build}
helper=$BUILD/diff/encoding_verdicts

if ! my_available; then
    echo "1..0 # SKIP no MariaDB server binaries or not root"
    exit 0
fi
make -s "$helper" >/dev/null || { echo "Bail out! cannot build $helper"; exit 1; }

charsets=(gbk sjis cp932 big5 euckr ujis eucjpms utf8mb3 utf8mb4 gb2312)
echo "1..$(( ${#charsets[@]} + 2 ))"
my_start >/dev/null || { echo "Bail out! cannot start MariaDB"; exit 1; }

work=$(mktemp -d /tmp/qg-diffmy.XXXXXX)
qg_at_exit "rm -rf $work"

"$helper" generate 61 2000 >"$work/samples.hex"
total_strings=$(wc -l <"$work/samples.hex")
{
    echo "CREATE DATABASE qgdiff; USE qgdiff;"
    echo "CREATE TABLE samples (id INT PRIMARY KEY, b VARBINARY(64));"
    awk '{ printf "%s(%d, X'\''%s'\'')", (NR % 500 == 1 ? "INSERT INTO samples VALUES " : ","), NR, $0;
           if (NR % 500 == 0) print ";" } END { if (NR % 500) print ";" }' "$work/samples.hex"
} | my_sql || { echo "Bail out! cannot load the samples"; exit 1; }

declare -A category_total=()
for cs in "${charsets[@]}"; do
    my_sql qgdiff -e "SELECT HEX(CONVERT(CONVERT(b USING $cs) USING binary)) = HEX(b)
                      FROM samples ORDER BY id" >"$work/server.$cs" 2>"$work/server.$cs.err"
    "$helper" check mysql "$cs" <"$work/samples.hex" | cut -d' ' -f1,4 >"$work/qg.$cs"
    paste -d' ' "$work/samples.hex" "$work/qg.$cs" "$work/server.$cs" | awk '
    {
        hex = $1; qg = $2; qg_nul_as_space = $3; server = $4
        if (qg == server)
            cat = "agree"
        else if (qg == 0 && server == 1 && qg_nul_as_space == 1)
            cat = "explained:nul-byte (NUL is a character in MariaDB; the checker reports NUL on its own, as nul_byte)"
        else if (qg == 0 && server == 1)
            cat = "UNEXPLAINED:checker-rejects-server-accepts"
        else
            cat = "UNEXPLAINED:checker-accepts-server-rejects"
        print cat "\t" hex
    }' >"$work/class.$cs"
    rows=$(wc -l <"$work/server.$cs")
    summary=$(cut -f1 "$work/class.$cs" | sort | uniq -c | awk '{ c = $1; $1 = ""; printf "%s%s=%d", sep, substr($0, 2), c; sep = "; " }')
    while read -r count cat; do
        category_total["$cat"]=$(( ${category_total["$cat"]:-0} + count ))
    done < <(cut -f1 "$work/class.$cs" | sed 's/ (.*//' | sort | uniq -c)
    bad=$(grep -c '^UNEXPLAINED' "$work/class.$cs")
    if [ "$rows" -eq "$total_strings" ] && [ "$bad" -eq 0 ]; then
        echo "ok - $cs: $rows strings vs MariaDB: $summary"
    else
        echo "not ok - $cs: $rows/$total_strings server rows, $bad unexplained: $summary"
        grep '^UNEXPLAINED' "$work/class.$cs" | head -n 8 | sed 's/^/# /'
        head -n 3 "$work/server.$cs.err" | sed 's/^/# /'
    fi
done

echo "# totals over ${#charsets[@]} MariaDB character sets, $total_strings strings each:"
unexplained=0
for key in $(printf '%s\n' "${!category_total[@]}" | sort); do
    echo "#   $key = ${category_total[$key]}"
    case $key in UNEXPLAINED*) unexplained=$((unexplained + category_total[$key])) ;; esac
done
if [ "$unexplained" -eq 0 ]; then
    echo "ok - no unexplained disagreement"
else
    echo "not ok - $unexplained unexplained disagreements"
fi

# "--" starts a comment before a space or control character: which high
# bytes are one depends on the character set's ctype table.  For every
# MySQL character set the checker knows and the server takes as a client
# set, the bytes after which "SELECT 1 --<byte>, 2" gives one column.
dash_sets=(latin1 latin2 latin5 latin7 cp1250 cp1251 cp1256 cp1257 cp850 cp852 cp866 koi8r koi8u
           ascii dec8 hp8 swe7 hebrew tis620 greek armscii8 keybcs2 macce macroman geostd8
           utf8mb3 utf8mb4 gbk sjis cp932 big5 euckr ujis eucjpms gb2312)
QG_MY_SOCKET=$QG_MY_SOCKET perl -MDBI -e '
    my $dbh = DBI->connect("DBI:mysql:mysql_socket=$ENV{QG_MY_SOCKET}", "root", "",
                           {RaiseError => 0, PrintError => 0}) or die "connect: $DBI::errstr";
    for my $cs (@ARGV) {
        $dbh->do("SET NAMES $cs") or die "SET NAMES $cs: " . $dbh->errstr;
        my @comment;
        for my $b (0x80 .. 0xff) {
            my $sth = $dbh->prepare("SELECT 1 --" . chr($b) . ", 2");
            push @comment, sprintf("%02x", $b) if $sth->execute && $sth->{NUM_OF_FIELDS} == 1;
        }
        print "$cs: @comment\n";
    }' "${dash_sets[@]}" >"$work/dash.server" 2>"$work/dash.err"
for cs in "${dash_sets[@]}"; do
    echo "$cs: $("$helper" dash "$cs")"
done | sed 's/ *$//' >"$work/dash.qg"
sed -i 's/ *$//' "$work/dash.server"
if [ "$(wc -l <"$work/dash.server")" -eq ${#dash_sets[@]} ] &&
    cmp -s "$work/dash.server" "$work/dash.qg"; then
    echo "ok - the high bytes after which -- starts a comment agree with MariaDB in ${#dash_sets[@]} character sets"
else
    echo "not ok - the high bytes after which -- starts a comment differ from MariaDB's"
    diff "$work/dash.server" "$work/dash.qg" | head -n 12 | sed 's/^/# /'
    head -n 3 "$work/dash.err" | sed 's/^/# /'
fi
