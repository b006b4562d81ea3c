#!/bin/bash
# The vulnerable PHP application (tests/e2e/php, addslashes + pg_query under
# GBK and SJIS) served by `php -S`, attacked by Debian's sqlmap with
# --tamper=unmagicquotes (%bf%27) and by a hand-made SJIS request, three times:
# without quoteguard (the attack must succeed), under `quoteguard --mode
# enforce` (nothing exploitable, every page unchanged) and under audit (the
# log holds the attack's findings).  pgsql.so is loaded with RTLD_DEEPBIND.
set -u
. "$(dirname "$0")/../lib.sh"
require php sqlmap curl
require_shim
php -m 2>/dev/null | grep -qx pgsql || { fail "php-pgsql is installed (run make deps)"; exit 1; }

pg_start >/dev/null && e2e_load_data || { fail "PostgreSQL started with the application data"; exit 1; }

# The legitimate visits: every page, multibyte names in each page's encoding,
# an apostrophe and a backslash (which addslashes escapes correctly).
browse_paths=(
    "index.php"
    "gbk_search.php?name=alice"
    "gbk_search.php?name=%D6%D0%CE%C4"
    "gbk_search.php?name=o%27brien"
    "gbk_search.php?name=nobody"
    "gbk_city.php?city=Par"
    "gbk_city.php?city=%B1%B1"
    "gbk_city.php?city=C:%5C"
    "sjis_user.php?name=%93%FA%96%7B"
    "sjis_user.php?name=o%27brien"
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

# The UTF-8 form, in the server log, of a lead byte that swallowed the
# backslash followed by the quote that then closed the literal:
# GBK bf 5c = 縗, SJIS 95 5c = 表.
breakout_gbk=$'\xe7\xb8\x97\''
breakout_sjis=$'\xe8\xa1\xa8\''

# Runs sqlmap against one page; output in $e2e_tmp/sqlmap-LABEL.out.
#   sqlmap_attack LABEL PAGE PARAM VALUE
# Level 3 so that the quote-then-comment boundaries are always tried (at
# level 1 they are tried only when the heuristic request happens to put its
# quote first); default techniques; a 5 s request timeout and a time bound.
sqlmap_attack() {
    local out=$e2e_tmp/sqlmap-$1.out
    rm -rf "${e2e_tmp:?}/sqlmap" "${e2e_tmp:?}/home"
    mkdir -p "$e2e_tmp/home"
    # HOME and TMPDIR: sqlmap leaves its history and temp dirs there.
    (cd "$e2e_tmp" && HOME=$e2e_tmp/home TMPDIR=$e2e_tmp TERM=dumb timeout -k 5 150 \
        sqlmap -u "$PHP_URL/$2?$3=$4" -p "$3" --batch --tamper=unmagicquotes \
            --level=3 --risk=1 --timeout=5 --retries=0 --dbms=PostgreSQL \
            --flush-session --output-dir="$e2e_tmp/sqlmap" --disable-coloring \
            -D public -T secrets --dump) >"$out" 2>&1 </dev/null
    echo "$out"
}

# What sqlmap found, as comment lines.
sqlmap_found() { # outfile
    grep -E 'identified the following|Type: |Title: |all tested parameters|not injectable' "$1" |
        sed 's/^ *//' | note
}

requests_served() { # php log
    grep -c '\]: GET ' "$1"
}

# The SJIS page cannot be reached with 0xbf (a katakana in SJIS): a request
# with the SJIS lead byte 0x95, as an attacker would write it by hand.
sjis_attack_path="sjis_user.php?name=%95%27%20UNION%20SELECT%20id,owner,secret%20FROM%20secrets--%20"

attack_pages=("gbk_search.php name alice" "gbk_city.php city Par")

# ------------------------------------------------------------ no quoteguard
php_start none "" || { fail "php -S starts"; exit 1; }
browse "$e2e_tmp/browse-plain"
if grep -q 'query failed' "$e2e_tmp/browse-plain" || [ "$(grep -c '^200$' "$e2e_tmp/browse-plain")" -ne ${#browse_paths[@]} ]; then
    fail "legitimate pages work without quoteguard"
    note <"$e2e_tmp/browse-plain"
else
    pass "legitimate pages work without quoteguard (${#browse_paths[@]} pages)"
fi
got_through_plain=0 attacks=0
for page in "${attack_pages[@]}"; do
    set -- $page
    attacks=$((attacks + 1))
    say "sqlmap --tamper=unmagicquotes against $1?$2=, no quoteguard:"
    out=$(sqlmap_attack "plain-$1" "$1" "$2" "$3")
    sqlmap_found "$out"
    if grep -q 'sqlmap identified the following injection point' "$out" && grep -qF "$E2E_FLAG" "$out"; then
        got_through_plain=$((got_through_plain + 1))
        pass "without quoteguard sqlmap finds the injection in $1 and dumps the secret"
    else
        fail "without quoteguard sqlmap finds the injection in $1 and dumps the secret"
        tail -n 15 "$out" | note
    fi
done
attacks=$((attacks + 1))
curl -s --globoff "$PHP_URL/$sjis_attack_path" >"$e2e_tmp/sjis-plain"
if grep -qF "$E2E_FLAG" "$e2e_tmp/sjis-plain"; then
    got_through_plain=$((got_through_plain + 1))
    pass "without quoteguard the SJIS 0x95' request leaks the secret"
else
    fail "without quoteguard the SJIS 0x95' request leaks the secret"
fi
breakouts_plain=$(( $(server_saw "$QG_PG_LOG" "$breakout_gbk") + $(server_saw "$QG_PG_LOG" "$breakout_sjis") ))
ok $([ "$breakouts_plain" -gt 0 ]; echo $?) "without quoteguard the server received $breakouts_plain statement(s) with a broken-out quote"
browse "$e2e_tmp/browse-plain-after"
same_output "without quoteguard the pages are unchanged after the attack" "$e2e_tmp/browse-plain" "$e2e_tmp/browse-plain-after"
php_stop "$PHP_PID"

# ------------------------------------------------------------------ enforce
log=$e2e_tmp/enforce.log
QG_WRAPPER_OPTS=(-v) # debug events: the dlopen of pgsql.so
php_start enforce "$log" || { fail "php -S starts under quoteguard"; exit 1; }
QG_WRAPPER_OPTS=()
php_log=$e2e_tmp/php-$PHP_PORT.log
browse "$e2e_tmp/browse-enforce"
same_output "under enforce every legitimate page answers as without quoteguard" "$e2e_tmp/browse-plain" "$e2e_tmp/browse-enforce"
ok $([ "$(count_findings "$log" blocked)" -eq 0 ]; echo $?) "under enforce the legitimate pages cause no finding"
server_before=$(( $(server_saw "$QG_PG_LOG" "$breakout_gbk") + $(server_saw "$QG_PG_LOG" "$breakout_sjis") ))
served_before=$(requests_served "$php_log")
got_through_enforce=0
for page in "${attack_pages[@]}"; do
    set -- $page
    say "sqlmap --tamper=unmagicquotes against $1?$2=, quoteguard --mode enforce:"
    out=$(sqlmap_attack "enforce-$1" "$1" "$2" "$3")
    sqlmap_found "$out"
    if grep -q 'sqlmap identified the following injection point' "$out" || grep -qF "$E2E_FLAG" "$out"; then
        got_through_enforce=$((got_through_enforce + 1))
        fail "under enforce sqlmap finds nothing exploitable in $1"
        tail -n 25 "$out" | note
    elif grep -q 'all tested parameters do not appear to be injectable' "$out"; then
        pass "under enforce sqlmap finds nothing exploitable in $1"
    else
        fail "under enforce sqlmap finds nothing exploitable in $1 (sqlmap did not finish its tests)"
        tail -n 15 "$out" | note
    fi
done
curl -s --globoff "$PHP_URL/$sjis_attack_path" >"$e2e_tmp/sjis-enforce"
if grep -qF "$E2E_FLAG" "$e2e_tmp/sjis-enforce"; then
    got_through_enforce=$((got_through_enforce + 1))
    fail "under enforce the SJIS 0x95' request is refused"
else
    ok $(grep -q 'query failed: ERROR:  quoteguard: blocked' "$e2e_tmp/sjis-enforce"; echo $?) \
        "under enforce the SJIS 0x95' request is refused with an ordinary query error"
fi
served=$(( $(requests_served "$php_log") - served_before ))
blocked=$(count_findings "$log" blocked)
server_after=$(( $(server_saw "$QG_PG_LOG" "$breakout_gbk") + $(server_saw "$QG_PG_LOG" "$breakout_sjis") ))
ok $([ "$blocked" -gt 0 ]; echo $?) "under enforce the shim blocked $blocked of the attack's queries ($served requests served)"
ok $([ "$server_after" = "$server_before" ]; echo $?) \
    "under enforce no statement with a broken-out quote reached the server ($((server_after - server_before)))"
browse "$e2e_tmp/browse-enforce-after"
same_output "under enforce the pages are unchanged after the attack" "$e2e_tmp/browse-plain" "$e2e_tmp/browse-enforce-after"
# RTLD_DEEPBIND: the start-up line, the dlopen of pgsql.so, and findings made
# inside calls that pgsql.so made.
programs=$(attached_programs "$log" | paste -sd ' ')
ok $([ -n "$programs" ]; echo $?) "the shim's start-up line is in the log (program ${programs:-none})"
ok $(grep '"event":"dlopen_deepbind_cleared"' "$log" | grep -q '/pgsql\.so"'; echo $?) \
    "the shim saw php load pgsql.so with RTLD_DEEPBIND and kept itself in the path"
ok $(grep '"action":"blocked"' "$log" | grep '"api":"PQexec"' | grep -q '"caller":"pgsql\.so'; echo $?) \
    "the blocked queries were PQexec calls made by pgsql.so"
say "blocked, by reason: $(sed -n 's/.*"reason":"\([a-z_]*\)".*/\1/p' "$log" | sort | uniq -c | awk '{print $2 "=" $1}' | paste -sd ' ')"
php_stop "$PHP_PID"

# -------------------------------------------------------------------- audit
log=$e2e_tmp/audit.log
php_start audit "$log" || { fail "php -S starts under quoteguard audit"; exit 1; }
browse "$e2e_tmp/browse-audit"
same_output "under audit every legitimate page answers as without quoteguard" "$e2e_tmp/browse-plain" "$e2e_tmp/browse-audit"
say "sqlmap --tamper=unmagicquotes against gbk_search.php?name=, quoteguard --mode audit:"
out=$(sqlmap_attack "audit-gbk_search.php" gbk_search.php name alice)
sqlmap_found "$out"
ok $(grep -qF "$E2E_FLAG" "$out"; echo $?) "under audit the queries pass: sqlmap still dumps the secret"
logged=$(count_findings "$log" logged)
ok $([ "$logged" -gt 0 ] && grep '"action":"logged"' "$log" | grep -q '"reason":"structure_mismatch"'; echo $?) \
    "under audit the log holds the attack: $logged finding(s), structure_mismatch among them"
php_stop "$PHP_PID"

say "php: $attacks attack(s) (sqlmap on ${#attack_pages[@]} pages, one SJIS request):" \
    "$got_through_plain got through without quoteguard, $got_through_enforce under enforce;" \
    "${#browse_paths[@]} legitimate pages identical before and after, with and without quoteguard"
exit 0
