#!/bin/bash
# A false positive with varying data is one allow line.  A program that
# escapes correctly (PQescapeStringConn, standard_conforming_strings on)
# sends `SELECT '<data>' || '--x'`; data ending in a backslash is the known
# false positive of the rule (docs/DETECTION.md).  The same program sends
# the statement clean with other data, so its shape is in the profile it
# learns.  `quoteguard report` puts that finding under likely false
# positives with an `allow = shape:…@site` line and the SJIS attack from the
# same calling site under likely attacks, without one.  With the line pasted,
# enforce mode passes the false positive with other data and blocks the
# attack, the same text from another program, and another shape.
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/pg.sh

qg_require_build clients/pg_legacy quoteguard-config
pg_available || tap_skip_all "no PostgreSQL server binaries (or not root)"
QG=$PWD/scripts/quoteguard
REPORT=$PWD/scripts/quoteguard-report
LEGACY=$QG_BUILD/clients/pg_legacy
for v in $(env | sed -n 's/^\(QUOTEGUARD_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
unset LD_PRELOAD
pg_start || tap_bail "cannot start PostgreSQL"
pg_psql -c "CREATE TABLE users(name text, secret text); INSERT INTO users VALUES ('bob', 'secret_bob')" ||
    tap_bail "cannot create the table"
TMP=$QG_PG_DIR/allow-shape
mkdir -p "$TMP"
: > "$TMP/empty.conf"
TEMPLATE="SELECT '%s' || '--x' AS v"

# The program: data escaped by PQescapeStringConn, scs on.
app() { # config log mode hex [shapes-mode]
    env ${5:+QUOTEGUARD_SHAPES=$5 QUOTEGUARD_SHAPES_FILE=$TMP/legacy.shapes} \
        "$QG" -q --config "$1" --log "$2" --mode "$3" -- \
        "$LEGACY" --encoding UTF8 --scs on --escape conn "$TEMPLATE" "$4"
}
attack() { # config log mode
    "$QG" -q --config "$1" --log "$2" --mode "$3" -- \
        "$LEGACY" --encoding SJIS --scs off --escape naive \
        "SELECT secret FROM users WHERE name = '%s'" 9527204f5220313d31202d2d20
}

# Normal traffic, learned; then the false positive and an attack, audited.
app "$TMP/empty.conf" "$TMP/learn.log" audit 6162 learn > "$TMP/out"
has "$(cat "$TMP/out")" "ab--x" "clean data runs"
app "$TMP/empty.conf" "$TMP/audit.log" audit 615c learn > "$TMP/out"
has "$(cat "$TMP/out")" 'a\--x' "audit: the false positive (data ending in a backslash) runs"
attack "$TMP/empty.conf" "$TMP/audit.log" audit > "$TMP/out"
has "$(cat "$TMP/out")" "secret_bob" "audit: the attack runs too (it is audit)"
ok "the finding lines carry the query's shape" grep -q '"shape":"[0-9a-f]\{16\}"' "$TMP/audit.log"

"$REPORT" --json "$TMP/audit.log" > "$TMP/report.json"
json() { python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$TMP/report.json" "$1"; }
ok "report: one likely false positive" [ "$(json 'len(r["likely_false_positive"])')" = 1 ]
ok "report: one likely attack" [ "$(json 'len(r["likely_attack"])')" = 1 ]
has "$(json 'r["likely_false_positive"][0]["excerpt"]')" "SELECT 'a\\' || '--x'" "the false positive is the backslash query"
has "$(json 'r["likely_attack"][0]["encodings"]')" "SJIS" "the attack is the SJIS one"
text=$("$REPORT" "$TMP/audit.log")
allow=$(printf '%s\n' "$text" | grep -a '^allow = ')
matches "$allow" '^allow = shape:[0-9a-f]{16}@pg_legacy[!+][^ ]*   # ' "text: a ready allow line by shape and calling site"
ok "text: exactly one allow line, none for the attack" [ "$(printf '%s\n' "$allow" | grep -ac .)" = 1 ]
has "$text" "likely attacks:" "text: the attack is listed as a likely attack"

# The same without the shim's profile: the report is given it instead.
app "$TMP/empty.conf" "$TMP/plain.log" audit 615c > /dev/null
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
app "$TMP/allow.conf" "$TMP/enforce.log" enforce 7a7a7a5c > "$TMP/out"
has "$(cat "$TMP/out")" 'zzz\--x' "enforce: the false positive with other data passes"
has "$(cat "$TMP/enforce.log")" '"action":"allowed"' "… logged as allowed"
attack "$TMP/allow.conf" "$TMP/enforce.log" enforce > "$TMP/out"
has "$(cat "$TMP/out")" "quoteguard: blocked" "enforce: the attack from the same site is blocked"
lacks "$(cat "$TMP/out")" "secret_bob" "… and leaks nothing"
out=$("$QG" -q --config "$TMP/allow.conf" --log "$TMP/enforce.log" -- \
    "$LEGACY" --encoding UTF8 --scs on --escape conn "SELECT '%s' || '--x' AS v, 1" 615c)
has "$out" "quoteguard: blocked" "enforce: another shape from the same site is blocked"
PSQL=$(ls -d /usr/lib/postgresql/*/bin/psql | sort -V | tail -n 1)
out=$("$QG" -q --config "$TMP/allow.conf" --log "$TMP/enforce.log" -- "$PSQL" -At -c "SELECT 'a\\' || '--x' AS v" 2>&1)
has "$out" "quoteguard: blocked" "enforce: the same statement from another program (site) is blocked"

tap_done
