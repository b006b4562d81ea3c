#!/bin/bash
# The shim reads SQL words, charset names and sql_mode in ASCII whatever the
# program's locale.  Under tr_TR.UTF-8 the C library folds 'I' to the dotless
# 'ı', so a locale-following comparison would not see
# "SET CHARACTER_SET_CLIENT = gbk" and would keep checking as latin1 while
# the server reads GBK.  The client calls setlocale(LC_ALL, "tr_TR.UTF-8")
# before it connects, as a program that follows its environment does.
# The locale is built into a temporary directory with localedef (Debian
# package locales, see scripts/install-deps); without it the test fails.
# servers: mariadb
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/mariadb.sh

qg_require_build clients/my_legacy
my_available || tap_skip_all "no MariaDB server binaries (or not root)"
LOCALES=$(mktemp -d /tmp/qg-locale.XXXXXX)
qg_at_exit 'rm -rf "$LOCALES"'
localedef -i tr_TR -f UTF-8 "$LOCALES/tr_TR.UTF-8" >/dev/null 2>&1 ||
    tap_bail "cannot build the tr_TR.UTF-8 locale with localedef (package locales)"
export LOCPATH=$LOCALES
lowered=$(LC_ALL=tr_TR.UTF-8 bash -c 'word=I; echo "${word,,}"')
ok "the locale is Turkish: 'I' lowers to the dotless 'ı'" [ "$lowered" = "ı" ]

my_start || tap_bail "cannot start MariaDB"
LEGACY=$QG_BUILD/clients/my_legacy
my_sql -e "CREATE DATABASE qg;
           CREATE TABLE qg.users (name VARBINARY(64), secret VARCHAR(64));
           INSERT INTO qg.users VALUES ('alice', 'secret_alice'), ('bob', 'secret_bob')" \
    || tap_bail "cannot create the table"

# The GBK attack: BF 27 escaped byte-wise to BF 5C 27.
PROBE=input=bf27204f5220313d31202d2d20
LOG=$QG_MY_DIR/locale.log
turkish() { # step…
    with_shim enforce "$LOG" "$LEGACY" "$QG_MY_SOCKET" locale=tr_TR.UTF-8 db=qg charset=latin1 "$@"
}
BLOCKED_GBK='^ERROR: 1105 42601 quoteguard: blocked structure_mismatch at byte [0-9]+ \(gbk\)'

out=$(turkish escape=bytewise "$PROBE")
has "$out" "LOCALE: tr_TR.UTF-8" "the client runs under tr_TR.UTF-8"
has "$out" "ROWS: 0" "latin1 connection: the probe is harmless and passes"
for switch in "SET CHARACTER_SET_CLIENT = gbk" "SET @@SESSION.CHARACTER_SET_CLIENT = GBK" \
    "SET NAMES GBK" "SET CHARACTER SET gbk"; do
    out=$(turkish sql="$switch" sql="SELECT @@character_set_client" escape=bytewise "$PROBE")
    has "$out" "ROW: gbk" "after [$switch] the server reads gbk"
    matches "$out" "$BLOCKED_GBK" "after [$switch] the GBK attack is blocked as gbk"
done

# ANSI_QUOTES: "..." is an identifier, where a backslash escapes nothing.
out=$(turkish "sql=SET SQL_MODE = 'ANSI_QUOTES'" 'sql=SELECT 1 AS "a\", 2 AS "b"')
has "$out" "ROW: 1|2" "after SET SQL_MODE = 'ANSI_QUOTES' the shim reads \"a\\\" as an identifier"
tap_done
