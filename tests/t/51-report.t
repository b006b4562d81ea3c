#!/bin/bash
# quoteguard report: exact counts on a log with known content (findings of
# every action, events, a syslog-prefixed line, malformed lines); then the
# operator's loop on a real server: attacks through the wrapper in audit
# and enforce mode, the report of that log agrees with the log, and pasting
# an allow line for the attack's fingerprint into a config file lets exactly
# that query through.  The attacks get no ready allow line: without a shapes
# profile every finding is a likely attack (62-allow-shape.t shows the
# other side).  The counters the shim kept for those runs, read back with
# --counters and --prometheus, agree with the log.
# servers: pg
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/pg.sh

qg_require_build clients/pg_legacy
QG=$PWD/scripts/quoteguard
REPORT=$PWD/scripts/quoteguard-report
TMP=$(mktemp -d /tmp/qg-report.XXXXXX)
qg_at_exit 'rm -rf "$TMP"'
for v in $(env | sed -n 's/^\(QUOTEGUARD_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
unset LD_PRELOAD

# json_get FILE EXPR: a value from the --json output, EXPR in Python over r.
json_get() {
    python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}
is() { # got expected description
    [ "$1" = "$2" ]
    tap_result $? "$3" || tap_diag "got '$1', expected '$2'"
}

# ------------------------------------------------------- a log of known content
finding() { # time action reason encoding program caller api fingerprint [dialect [detail]]
    printf '{"time":"%s","pid":4242,"program":"%s","mode":"enforce","action":"%s","api":"%s","dialect":"%s","encoding":"%s","conn":"0x55d0c0a0","reason":"%s","offset":31,"span":[27,45],"excerpt":"SELECT 1 WHERE a = \x27\\u0095\\\\\x27 OR 1=1 --\x27","fingerprint":"%s","caller":"%s"%s}\n' \
        "$1" "$5" "$2" "$7" "${9:-postgres}" "$4" "$3" "$8" "$6" "${10:+,\"detail\":\"${10}\"}"
}
{
    echo '{"time":"2026-03-01T09:59:00.000Z","event":"attached","pid":4242,"program":"legacy","mode":"enforce","libraries":"libpq.so.5"}'
    finding 2026-03-01T10:00:01.000Z blocked structure_mismatch SJIS legacy 'legacy!main+0x10' PQexec 1111111111111111
    echo 'this line is application output, not a log line'
    finding 2026-03-01T10:00:05.000Z blocked structure_mismatch SJIS legacy 'legacy!main+0x10' PQexec 1111111111111111
    finding 2026-03-01T09:59:59.000Z logged invalid_sequence UTF8 php8.2 'pgsql.so+0x20' PQexec 2222222222222222
    echo '{"time":"2026-03-01T10:00:02.000Z","event":"attached","pid":4243,"program":"legacy","mode":"enforce","libraries":"libpq.so.5"}'
    echo '{"time":"2026-03-01T10:00:03.0'
    echo ''
    finding 2026-03-01T10:00:07.000Z allowed structure_mismatch GBK legacy 'legacy!main+0x10' PQexec 3333333333333333
    echo '[1, 2, 3]'
    echo '{"time":"2026-03-01T09:58:00.000Z","event":"attached","pid":4244,"program":"php8.2","mode":"audit","libraries":""}'
    finding 2026-03-01T10:00:09.000Z blocked none latin99 mysqlapp 0x1234 mysql_real_query 4444444444444444 mysql \
        'unknown client encoding; the query was not checked'
    echo '{"unrelated": true}'
    echo '{"time":"2026-03-01T10:00:04.000Z","pid":4245,"program":"legacy","level":"error","event":"config_error","detail":"bogus=\"1\" (environment): unknown key; using mode enforce"}'
    printf 'Mar  1 10:00:06 host quoteguard[4242]: '
    finding 2026-03-01T10:00:06.000Z logged structure_mismatch SJIS legacy 'legacy!main+0x10' PQexec 1111111111111111
} > "$TMP/known.log"

"$REPORT" --json "$TMP/known.log" > "$TMP/known.json"
ok "report --json exits 0 and prints JSON" python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$TMP/known.json"
is "$(json_get "$TMP/known.json" 'r["lines"]')" 14 "lines counted (blank lines not)"
is "$(json_get "$TMP/known.json" 'r["malformed"]')" 4 "4 malformed lines skipped (text, cut JSON, array, foreign object)"
is "$(json_get "$TMP/known.json" 'r["findings"]')" 6 "6 findings, the syslog-prefixed one included"
is "$(json_get "$TMP/known.json" 'r["actions"]')" "{'blocked': 3, 'logged': 2, 'allowed': 1}" "blocked/logged/allowed counts"
is "$(json_get "$TMP/known.json" 'r["first"], r["last"]')" "('2026-03-01T09:59:59.000Z', '2026-03-01T10:00:09.000Z')" \
    "first and last seen over findings, whatever the line order"
is "$(json_get "$TMP/known.json" '[(x["reason"], x["count"], x["blocked"]) for x in r["by_reason"]]')" \
    "[('structure_mismatch', 4, 2), ('invalid_sequence', 1, 0), ('none: unknown client encoding; the query was not checked', 1, 1)]" \
    "findings by reason, with the unknown-encoding detail"
is "$(json_get "$TMP/known.json" '[(x["program"], x["count"]) for x in r["by_program"]]')" \
    "[('legacy', 4), ('mysqlapp', 1), ('php8.2', 1)]" "findings by program"
is "$(json_get "$TMP/known.json" '[(x["program"], x["caller"], x["api"], x["count"]) for x in r["by_site"]][0]')" \
    "('legacy', 'legacy!main+0x10', 'PQexec', 4)" "findings by calling site"
is "$(json_get "$TMP/known.json" '[(x["encoding"], x["count"]) for x in r["by_encoding"]]')" \
    "[('postgres SJIS', 3), ('mysql latin99', 1), ('postgres GBK', 1), ('postgres UTF8', 1)]" "findings by encoding"
is "$(json_get "$TMP/known.json" '[(x["fingerprint"], x["count"]) for x in r["fingerprints"]]')" \
    "[('1111111111111111', 3), ('2222222222222222', 1), ('3333333333333333', 1), ('4444444444444444', 1)]" \
    "one entry per distinct fingerprint"
is "$(json_get "$TMP/known.json" 'r["fingerprints"][0]["excerpt"]')" "SELECT 1 WHERE a = '"$'\u0095'"\\' OR 1=1 --'" \
    "the excerpt is kept, JSON escapes decoded"
is "$(json_get "$TMP/known.json" 'r["attached"]')" "{'legacy': 2, 'php8.2': 1}" "start-up lines per program"
is "$(json_get "$TMP/known.json" '[(p["event"], p["count"]) for p in r["problems"]]')" "[('config_error', 1)]" \
    "configuration errors are listed"

text=$("$REPORT" "$TMP/known.log")
has "$text" "14 lines, 6 findings, 4 events, 4 malformed lines skipped" "text: the totals line"
has "$text" "findings: blocked 3, logged 2, allowed 1; first seen 2026-03-01T09:59:59.000Z, last seen 2026-03-01T10:00:09.000Z" \
    "text: actions and first/last seen"
lacks "$text" "allow = " "text: no ready allow line when nothing is known to be sent clean"
matches "$text" '^  shape \? at legacy!main\+0x10: 3× \(structure_mismatch 3\), postgres SJIS, legacy, 1 distinct queries, ' \
    "text: a likely attack with its count, reason, encoding and program"
matches "$text" '^  shape \? at legacy!main\+0x10: 1× .*# already allowed$' "text: a finding seen only as allowed is marked"
matches "$text" '^#   excerpt: SELECT 1 WHERE a = .\\x95\\\\. OR 1=1 --.$' "text: the excerpt's bytes are escaped for the terminal"
matches "$text" 'error config_error: bogus="1" \(environment\): unknown key' "text: the configuration error's text"
matches "$text" '^ +4 +legacy +legacy!main\+0x10 +PQexec ' "text: calling sites"
is "$("$QG" report "$TMP/known.log")" "$text" "quoteguard report dispatches to quoteguard-report"
"$REPORT" --json < "$TMP/known.log" > "$TMP/stdin.json"
is "$(cat "$TMP/stdin.json")" "$(cat "$TMP/known.json")" "the report reads standard input without a file"

"$REPORT" --json "$TMP/known.log" "$TMP/known.log" > "$TMP/twice.json"
is "$(json_get "$TMP/twice.json" 'r["findings"], r["malformed"], r["fingerprints"][0]["count"]')" "(12, 8, 6)" \
    "several files add up"
out=$("$REPORT" "$TMP/known.log" "$TMP/no-such.log" 2>"$TMP/err"); rc=$?
is "$rc" 1 "an unreadable file makes the exit status 1"
has "$(cat "$TMP/err")" "no-such.log" "the unreadable file is named"
has "$out" "6 findings" "the readable file is still reported"
out=$("$REPORT" --top 1 "$TMP/known.log")
has "$out" "… 2 more (--top 0 shows all)" "--top limits the rows of each table"

# ------------------------------------------- the operator's loop, real server
pg_available || { tap_diag "no PostgreSQL server here: real-log checks not run"; tap_done; }
pg_start || tap_bail "cannot start PostgreSQL"
pg_psql -c "CREATE TABLE users(name text, secret text); INSERT INTO users VALUES ('bob', 'secret_bob')" ||
    tap_bail "cannot create the table"
LEGACY=$QG_BUILD/clients/pg_legacy
attack() { # quoteguard-options… -- encoding lead
    local opts=()
    while [ "$1" != -- ]; do opts+=("$1"); shift; done
    QUOTEGUARD_COUNTERS_DIR=$TMP/counters "$QG" "${opts[@]}" -- "$LEGACY" --encoding "$2" --scs off --escape naive \
        "SELECT secret FROM users WHERE name = '%s'" "${3}27204f5220313d31202d2d20"
}
log=$TMP/real.log
: > "$TMP/empty.conf"
mkdir "$TMP/counters"
attack --config "$TMP/empty.conf" --mode audit --log "$log" -- SJIS 95 > "$TMP/out1"
attack --config "$TMP/empty.conf" --mode audit --log "$log" -- BIG5 a5 > "$TMP/out2"
attack --config "$TMP/empty.conf" --mode enforce --log "$log" -- SJIS 95 > "$TMP/out3"
has "$(cat "$TMP/out1")" "ROW: secret_bob" "audit through the wrapper: the attack reaches the server"
has "$(cat "$TMP/out3")" "quoteguard: blocked" "enforce through the wrapper: the attack is blocked"

"$REPORT" --json "$log" > "$TMP/real.json"
is "$(json_get "$TMP/real.json" 'r["actions"]["blocked"]')" "$(grep -c '"action":"blocked"' "$log")" \
    "real log: the blocked count agrees with the log"
is "$(json_get "$TMP/real.json" 'r["actions"]["logged"]')" "$(grep -c '"action":"logged"' "$log")" \
    "real log: the logged count agrees with the log"
ok "real log: something was blocked and something logged" \
    python3 -c 'import json,sys; a = json.load(open(sys.argv[1]))["actions"]; sys.exit(not (a["blocked"] > 0 and a["logged"] > 0))' "$TMP/real.json"
is "$(json_get "$TMP/real.json" 'r["malformed"]')" 0 "real log: every line is understood"
is "$(json_get "$TMP/real.json" 'sorted(r["attached"])')" "['pg_legacy']" "real log: start-up lines of pg_legacy"
is "$(json_get "$TMP/real.json" 'sorted(x["encoding"] for x in r["by_encoding"])')" "['postgres BIG5', 'postgres SJIS']" \
    "real log: findings by encoding"
is "$(json_get "$TMP/real.json" 'sorted({x["program"] for x in r["by_site"]})')" "['pg_legacy']" \
    "real log: calling sites are in pg_legacy"

lacks "$("$REPORT" "$log")" "allow = " "real log: no ready allow line for attacks"

# The counters of those three runs.
prom=$("$REPORT" --prometheus --counters "$TMP/counters")
metric() { printf '%s\n' "$prom" | sed -n "s/^$1 //p"; }
is "$(metric 'quoteguard_findings_total{program="pg_legacy",reason="structure_mismatch",action="logged"}')" \
    "$(grep -c '"action":"logged"' "$log")" "prometheus: logged findings agree with the log"
is "$(metric 'quoteguard_findings_total{program="pg_legacy",reason="structure_mismatch",action="blocked"}')" \
    "$(grep -c '"action":"blocked"' "$log")" "prometheus: blocked findings agree with the log"
is "$(metric 'quoteguard_queries_blocked_total{program="pg_legacy"}')" 1 "prometheus: one query was not sent"
is "$(metric 'quoteguard_processes{program="pg_legacy",state="exited"}')" 3 "prometheus: three processes, all exited"
checked=$(metric 'quoteguard_queries_checked_total{program="pg_legacy"}')
ok "prometheus: every run's queries were checked (SETs and the attack, $checked)" [ "${checked:-0}" -ge 6 ]
has "$prom" "# TYPE quoteguard_findings_total counter" "prometheus: the TYPE lines of the textfile format"
"$REPORT" --prometheus --counters "$TMP/counters" --output "$TMP/quoteguard.prom"
is "$(cat "$TMP/quoteguard.prom")" "$prom" "prometheus --output writes the same text to the file"
ok "… leaving no temporary file" [ -z "$(ls -A "$TMP" | grep '^\.quoteguard')" ]
counters=$("$REPORT" --counters "$TMP/counters")
has "$counters" "pg_legacy: 0 running, 3 exited; queries checked $checked, blocked 1" "--counters: the text summary"

# A forked child counts in a file of its own, not in its parent's.
cat > "$TMP/forker.c" <<'EOF2'
#include <libpq-fe.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
static void query(int n) {
    PGconn *c = PQconnectdb("");
    for (int i = 0; i < n; i++) PQclear(PQexec(c, "SELECT 1"));
    PQfinish(c);
}
int main(void) {
    query(2);
    pid_t child = fork();
    if (child == 0) { query(5); return 0; }
    waitpid(child, NULL, 0);
    query(1);
    printf("%d %d\n", (int)getpid(), (int)child);
    return 0;
}
EOF2
cc -I"$(pg_config --includedir)" -o "$TMP/forker" "$TMP/forker.c" -lpq || tap_bail "cannot build the fork client"
mkdir "$TMP/fork-counters"
read -r parent child < <(QUOTEGUARD_COUNTERS_DIR=$TMP/fork-counters "$QG" -q --config "$TMP/empty.conf" "$TMP/forker")
"$REPORT" --counters "$TMP/fork-counters" --json > "$TMP/fork.json"
is "$(json_get "$TMP/fork.json" '{x["pid"]: x["checked"] for x in r}['"$parent"']')" 3 \
    "fork: the parent counted its 3 queries in its file"
is "$(json_get "$TMP/fork.json" '{x["pid"]: x["checked"] for x in r}['"$child"']')" 5 \
    "fork: the child counted its 5 in a file of its own"
is "$(json_get "$TMP/fork.json" 'len(r)')" 2 "fork: two files, no more"

# check --pid on a running client shows its counters.
cat > "$TMP/sleeper.c" <<'EOF2'
#include <libpq-fe.h>
#include <unistd.h>
int main(void) {
    PGconn *c = PQconnectdb("");
    for (int i = 0; i < 3; i++) PQclear(PQexec(c, "SELECT 1"));
    sleep(30);
    PQfinish(c);
    return 0;
}
EOF2
cc -I"$(pg_config --includedir)" -o "$TMP/sleeper" "$TMP/sleeper.c" -lpq || tap_bail "cannot build the sleeping client"
mkdir "$TMP/pid-counters"
QUOTEGUARD_COUNTERS_DIR=$TMP/pid-counters "$QG" -q --config "$TMP/empty.conf" "$TMP/sleeper" & sleeper=$!
for i in $(seq 100); do
    [ "$("$REPORT" --counters "$TMP/pid-counters" --json | python3 -c 'import json,sys; print(sum(x["checked"] for x in json.load(sys.stdin)))')" = 3 ] && break
    sleep 0.1
done
out=$("$QG" check --pid "$sleeper")
matches "$out" "^counters: +$TMP/pid-counters/sleeper\.$sleeper\$" "check --pid names the process's counters file"
matches "$out" '^ +sleeper: 1 running, 0 exited; queries checked 3, blocked 0$' "… and shows its counts"
kill "$sleeper"

# Allow the attack's fingerprint by hand, run it in enforce: it passes, logged as allowed.
json_get "$TMP/real.json" '"\n".join("allow = " + x["fingerprint"] for x in r["fingerprints"] if x["encoding"] == "postgres SJIS")' \
    > "$TMP/allow.conf"
ok "real log: the report lists the SJIS finding's fingerprint" [ -s "$TMP/allow.conf" ]
: > "$TMP/allowed.log"
attack --config "$TMP/allow.conf" --mode enforce --log "$TMP/allowed.log" -- SJIS 95 > "$TMP/out4"
has "$(cat "$TMP/out4")" "ROW: secret_bob" "with the fingerprint allowed the query passes enforce"
lacks "$(cat "$TMP/allowed.log")" '"config_error"' "the pasted lines are a valid config"
has "$(cat "$TMP/allowed.log")" '"action":"allowed"' "the passed query is logged as allowed"
lacks "$(cat "$TMP/allowed.log")" '"action":"blocked"' "nothing else was blocked"
attack --config "$TMP/allow.conf" --mode enforce --log "$TMP/allowed.log" -- GBK bf > "$TMP/out5"
has "$(cat "$TMP/out5")" "quoteguard: blocked" "a different query is still blocked"

tap_done
