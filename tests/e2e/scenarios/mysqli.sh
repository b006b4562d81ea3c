#!/bin/bash
# PHP mysqli pages (tests/e2e/php/my_*.php: mysqlnd speaks the MySQL protocol
# itself, so only the shim's wire front sees their queries) served by
# `php -S`, connection character set gbk chosen with a SET NAMES query, input
# escaped with real_escape_string (my_gbk_search.php) or addslashes
# (my_gbk_city.php).  Attacked by Debian's sqlmap with --tamper=unmagicquotes
# (%bf%27) and by a hand-made 0xbf' UNION request: without quoteguard the
# attack must succeed; under `quoteguard --mode enforce` sqlmap finds nothing,
# no statement with a broken-out quote reaches the server and every
# legitimate page answers byte for byte as without it; under audit the
# hand-made request passes and is logged.
set -u
. "$(dirname "$0")/../lib.sh"
require php sqlmap curl
require_shim
php -m 2>/dev/null | grep -qx mysqli || { fail "php-mysql is installed (run make deps)"; exit 1; }

my_start >/dev/null && e2e_load_mysql_data || { fail "MariaDB started with the application data"; exit 1; }

# The legitimate visits: multibyte names in gbk, an apostrophe and a
# backslash (which both escapers escape correctly).  No gbk character with a
# 0x5c trail byte: the escapers double that byte, so such a page fails on the
# server alone (a syntax error, with or without quoteguard).
browse_paths=(
    "my_gbk_search.php?name=alice"
    "my_gbk_search.php?name=%D6%D0%CE%C4"
    "my_gbk_search.php?name=o%27brien"
    "my_gbk_search.php?name=nobody"
    "my_gbk_city.php?city=Paris"
    "my_gbk_city.php?city=%B1%B1%BE%A9"
    "my_gbk_city.php?city=St.%20John%27s"
    "my_gbk_city.php?city=C:%5C"
)

# Fetches every page into one file: path, HTTP status, body.
browse() { # outfile
    local path
    : >"$1"
    for path in "${browse_paths[@]}"; do
        echo "== $path" >>"$1"
        curl -s --globoff -o "$e2e_tmp/page" -w '%{http_code}\n' "$PHP_URL/$path" >>"$1"
        cat "$e2e_tmp/page" >>"$1"
    done
}

# The bytes of a statement whose quote broke out: the gbk lead byte 0xbf
# took the escaper's backslash as its trail byte (the general log holds the
# statement as the client sent it).
breakout=$'\xbf\\\''
breakouts() { server_saw "$QG_MY_LOG" "$breakout"; }

# Runs sqlmap against one page; output in $e2e_tmp/sqlmap-LABEL.out.
#   sqlmap_attack LABEL PAGE PARAM VALUE
# Level 3 so that the quote-then-comment boundaries are always tried; default
# techniques; a 5 s request timeout and a time bound.
sqlmap_attack() {
    local out=$e2e_tmp/sqlmap-$1.out
    rm -rf "${e2e_tmp:?}/sqlmap" "${e2e_tmp:?}/home"
    mkdir -p "$e2e_tmp/home"
    # HOME and TMPDIR: sqlmap leaves its history and temp dirs there.
    (cd "$e2e_tmp" && HOME=$e2e_tmp/home TMPDIR=$e2e_tmp TERM=dumb timeout -k 5 150 \
        sqlmap -u "$PHP_URL/$2?$3=$4" -p "$3" --batch --tamper=unmagicquotes \
            --level=3 --risk=1 --timeout=5 --retries=0 --dbms=MySQL \
            --flush-session --output-dir="$e2e_tmp/sqlmap" --disable-coloring \
            -D shop -T secrets --dump) >"$out" 2>&1 </dev/null
    echo "$out"
}

sqlmap_found() { # outfile
    grep -E 'identified the following|Type: |Title: |all tested parameters|not injectable' "$1" |
        sed 's/^ *//' | note
}

attack_pages=("my_gbk_search.php name alice" "my_gbk_city.php city Paris")
union_path="my_gbk_city.php?city=%bf%27%20UNION%20SELECT%20id,owner,secret%20FROM%20secrets--%20"

# ------------------------------------------------------------ no quoteguard
php_start none "" || { fail "php -S starts"; exit 1; }
browse "$e2e_tmp/browse-plain"
if grep -q 'query failed' "$e2e_tmp/browse-plain" || [ "$(grep -c '^200$' "$e2e_tmp/browse-plain")" -ne ${#browse_paths[@]} ]; then
    fail "legitimate pages work without quoteguard"
    note <"$e2e_tmp/browse-plain"
else
    pass "legitimate pages work without quoteguard (${#browse_paths[@]} pages)"
fi
ok $([ "$(grep -c '<tr>' "$e2e_tmp/browse-plain")" -eq 6 ]; echo $?) \
    "without quoteguard the legitimate pages find their 6 rows"
for page in "${attack_pages[@]}"; do
    set -- $page
    say "sqlmap --tamper=unmagicquotes against $1?$2=, no quoteguard:"
    out=$(sqlmap_attack "plain-$1" "$1" "$2" "$3")
    sqlmap_found "$out"
    if grep -q 'sqlmap identified the following injection point' "$out" && grep -qF "$E2E_FLAG" "$out"; then
        pass "without quoteguard sqlmap finds the injection in $1 and dumps the secret"
    else
        fail "without quoteguard sqlmap finds the injection in $1 and dumps the secret"
        tail -n 15 "$out" | note
    fi
done
curl -s --globoff "$PHP_URL/$union_path" >"$e2e_tmp/union-plain"
ok $(grep -qF "$E2E_FLAG" "$e2e_tmp/union-plain"; echo $?) "without quoteguard the 0xbf' UNION request leaks the secret"
breakouts_plain=$(breakouts)
ok $([ "$breakouts_plain" -gt 0 ]; echo $?) \
    "without quoteguard the server received $breakouts_plain statement(s) with a broken-out quote"
php_stop "$PHP_PID"

# ------------------------------------------------------------------ enforce
log=$e2e_tmp/enforce.log
php_start enforce "$log" || { fail "php -S starts under quoteguard"; exit 1; }
php_log=$e2e_tmp/php-$PHP_PORT.log
browse "$e2e_tmp/browse-enforce"
same_output "under enforce every legitimate page answers as without quoteguard" "$e2e_tmp/browse-plain" "$e2e_tmp/browse-enforce"
ok $([ "$(count_findings "$log" blocked)" -eq 0 ]; echo $?) "under enforce the legitimate pages cause no finding"
server_before=$(breakouts)
for page in "${attack_pages[@]}"; do
    set -- $page
    say "sqlmap --tamper=unmagicquotes against $1?$2=, quoteguard --mode enforce:"
    out=$(sqlmap_attack "enforce-$1" "$1" "$2" "$3")
    sqlmap_found "$out"
    if grep -q 'sqlmap identified the following injection point' "$out" || grep -qF "$E2E_FLAG" "$out"; then
        fail "under enforce sqlmap finds nothing exploitable in $1"
        tail -n 25 "$out" | note
    elif grep -q 'all tested parameters do not appear to be injectable' "$out"; then
        pass "under enforce sqlmap finds nothing exploitable in $1"
    else
        fail "under enforce sqlmap finds nothing exploitable in $1 (sqlmap did not finish its tests)"
        tail -n 15 "$out" | note
    fi
done
curl -s --globoff "$PHP_URL/$union_path" >"$e2e_tmp/union-enforce"
ok $(! grep -qF "$E2E_FLAG" "$e2e_tmp/union-enforce" && grep -q 'query failed: quoteguard: blocked' "$e2e_tmp/union-enforce"; echo $?) \
    "under enforce the 0xbf' UNION request is refused with an ordinary query error"
blocked=$(count_findings "$log" blocked)
ok $([ "$blocked" -gt 0 ] && grep '"action":"blocked"' "$log" | grep -q '"api":"wire:COM_QUERY","dialect":"mysql","encoding":"gbk"'; echo $?) \
    "under enforce the shim's wire front blocked $blocked of the attack's queries, read as gbk"
server_after=$(breakouts)
ok $([ "$server_after" = "$server_before" ]; echo $?) \
    "under enforce no statement with a broken-out quote reached the server ($((server_after - server_before)))"
browse "$e2e_tmp/browse-enforce-after"
same_output "under enforce the pages are unchanged after the attack" "$e2e_tmp/browse-plain" "$e2e_tmp/browse-enforce-after"
say "served $(grep -c '\]: GET ' "$php_log") requests; blocked, by reason:" \
    "$(sed -n 's/.*"reason":"\([a-z_]*\)".*/\1/p' "$log" | sort | uniq -c | awk '{print $2 "=" $1}' | paste -sd ' ')"
php_stop "$PHP_PID"

# -------------------------------------------------------------------- audit
log=$e2e_tmp/audit.log
php_start audit "$log" || { fail "php -S starts under quoteguard audit"; exit 1; }
browse "$e2e_tmp/browse-audit"
same_output "under audit every legitimate page answers as without quoteguard" "$e2e_tmp/browse-plain" "$e2e_tmp/browse-audit"
curl -s --globoff "$PHP_URL/$union_path" >"$e2e_tmp/union-audit"
ok $(grep -qF "$E2E_FLAG" "$e2e_tmp/union-audit" && grep '"action":"logged"' "$log" | grep -q '"api":"wire:COM_QUERY"'; echo $?) \
    "under audit the 0xbf' UNION request passes and its finding is logged"
php_stop "$PHP_PID"
exit 0
