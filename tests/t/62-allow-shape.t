#!/bin/bash
# A false positive with varying data is one allow line.  A legacy program
# keeps Latin-1 data but talks utf8mb4 to MariaDB and escapes with
# mysql_real_escape_string: `SELECT CONCAT('café', 'x')` has an ill-formed
# byte right before the closing quote (illformed_before_quote, which blocks),
# yet the server reads the statement as the program meant it, and with other
# data the program sends the same statement clean, so its shape is in the
# profile it learns.  `quoteguard report` puts that finding under likely
# false positives with an `allow = shape:…@site` line and the GBK attack from
# the same calling site under likely attacks, without one.  With the line
# pasted, enforce mode passes the false positive with other data and blocks
# the attack, another statement from the same site, and the same text from
# another program.
# servers: mariadb
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/mariadb.sh

qg_require_build clients/my_legacy quoteguard-config
my_available || tap_skip_all "no MariaDB server binaries (or not root)"
QG=$PWD/scripts/quoteguard
REPORT=$PWD/scripts/quoteguard-report
LEGACY=$QG_BUILD/clients/my_legacy
for v in $(env | sed -n 's/^\(QUOTEGUARD_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
unset LD_PRELOAD
my_start || tap_bail "cannot start MariaDB"
my_sql -e "CREATE DATABASE app; CREATE TABLE app.users(name varchar(20), secret varchar(20)) CHARACTER SET gbk;
           INSERT INTO app.users VALUES ('bob', 'secret_bob')" || tap_bail "cannot create the table"
TMP=$QG_MY_DIR/allow-shape
mkdir -p "$TMP"
: > "$TMP/empty.conf"

# The program: Latin-1 data, a utf8mb4 connection, mysql_real_escape_string.
app() { # config log mode hex [shapes-mode] [template]
    env ${5:+QUOTEGUARD_SHAPES=$5 QUOTEGUARD_SHAPES_FILE=$TMP/legacy.shapes} \
        "$QG" -q --config "$1" --log "$2" --mode "$3" -- \
        "$LEGACY" "$QG_MY_SOCKET" db=app charset=utf8mb4 escape=real \
        "template=${6:-SELECT CONCAT('%s', 'x') AS v}" "input=$4"
}
# The same program, the same call, fooled by SET NAMES gbk and addslashes.
attack() { # config log mode
    "$QG" -q --config "$1" --log "$2" --mode "$3" -- \
        "$LEGACY" "$QG_MY_SOCKET" db=app set-names=gbk escape=bytewise \
        "template=SELECT secret FROM users WHERE name = '%s'" input=bf27204f5220313d31202d2d20
}

# Normal traffic, learned; then the false positive and an attack, audited.
app "$TMP/empty.conf" "$TMP/learn.log" audit 63616665 learn > "$TMP/out"
has "$(cat "$TMP/out")" "ROW: cafex" "clean data runs"
app "$TMP/empty.conf" "$TMP/audit.log" audit 636166e9 learn > "$TMP/out"
has "$(cat "$TMP/out")" "ROWS: 1" "audit: the false positive (a Latin-1 byte before the quote) runs"
attack "$TMP/empty.conf" "$TMP/audit.log" audit > "$TMP/out"
has "$(cat "$TMP/out")" "secret_bob" "audit: the attack runs too (it is audit)"
ok "the finding lines carry the query's shape" grep -q '"shape":"[0-9a-f]\{16\}"' "$TMP/audit.log"

"$REPORT" --json "$TMP/audit.log" > "$TMP/report.json"
json() { python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$TMP/report.json" "$1"; }
ok "report: one likely false positive" [ "$(json 'len(r["likely_false_positive"])')" = 1 ]
ok "report: one likely attack" [ "$(json 'len(r["likely_attack"])')" = 1 ]
has "$(json 'r["likely_false_positive"][0]["reasons"]')" "illformed_before_quote" "the false positive is the Latin-1 query"
has "$(json 'r["likely_attack"][0]["encodings"]')" "gbk" "the attack is the GBK one"
text=$("$REPORT" "$TMP/audit.log")
allow=$(printf '%s\n' "$text" | grep -a '^allow = ')
matches "$allow" '^allow = shape:[0-9a-f]{16}@my_legacy[!+][^ ]*   # ' "text: a ready allow line by shape and calling site"
ok "text: exactly one allow line, none for the attack" [ "$(printf '%s\n' "$allow" | grep -ac .)" = 1 ]
has "$text" "likely attacks:" "text: the attack is listed as a likely attack"

# The same without the shim's profile: the report is given it instead.
app "$TMP/empty.conf" "$TMP/plain.log" audit 636166e9 > /dev/null
attack "$TMP/empty.conf" "$TMP/plain.log" audit > /dev/null
has "$("$REPORT" "$TMP/plain.log")" "no shapes profile: every finding counts as a likely attack" \
    "without a profile nothing is called a false positive"
with_profile=$("$REPORT" --shapes "$TMP/legacy.shapes" "$TMP/plain.log" | grep -a '^allow = ')
ok "with --shapes PROFILE the same allow line is printed" [ "${with_profile%%   #*}" = "${allow%%   #*}" ] ||
    tap_diag "$with_profile / $allow"

# Enforce with the line pasted.
printf '%s\n' "${allow%%   #*}" > "$TMP/allow.conf"
out=$("$QG" check --config "$TMP/allow.conf"); rc=$?
ok "the pasted line is a valid config" [ "$rc" -eq 0 ] || tap_diag "$out"
app "$TMP/allow.conf" "$TMP/enforce.log" enforce 7a7ae8 > "$TMP/out"
has "$(cat "$TMP/out")" "ROWS: 1" "enforce: the false positive with other data passes"
has "$(cat "$TMP/enforce.log")" '"action":"allowed"' "… logged as allowed"
attack "$TMP/allow.conf" "$TMP/enforce.log" enforce > "$TMP/out"
has "$(cat "$TMP/out")" "quoteguard: blocked" "enforce: the attack from the same site is blocked"
lacks "$(cat "$TMP/out")" "secret_bob" "… and leaks nothing"
app "$TMP/allow.conf" "$TMP/enforce.log" enforce 636166e9 "" "SELECT CONCAT('%s', 'x') AS v, 1" > "$TMP/out"
has "$(cat "$TMP/out")" "quoteguard: blocked" "enforce: another statement from the same site is blocked"
out=$("$QG" -q --config "$TMP/allow.conf" --log "$TMP/enforce.log" -- \
    mariadb -S "$QG_MY_SOCKET" -u root --default-character-set=utf8mb4 app \
    -e "SELECT CONCAT('caf"$'\xe9'"', 'x') AS v" 2>&1)
has "$out" "quoteguard: blocked" "enforce: the same statement from another program (site) is blocked"

tap_done
