#!/bin/bash
# Quiet by default: with no log destination chosen, a program's output is
# byte for byte what it is without the shim unless a query is blocked; a
# blocked query is one line on stderr; audit findings go to syslog, and when
# there is none that is said once.  Choosing a destination or a verbosity
# brings the start-up line back.
# servers: pg mariadb
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/pg.sh
. tests/lib/mariadb.sh

qg_require_build clients/pg_legacy
TMP=$(mktemp -d /tmp/qg-quiet.XXXXXX)
qg_at_exit "rm -rf '$TMP'"

pg_available || { ok "PostgreSQL server binaries (and root)" false; tap_done; }
my_available || { ok "MariaDB server binaries (and root)" false; tap_done; }
pg_start || tap_bail "cannot start PostgreSQL"
my_start || tap_bail "cannot start MariaDB"
TAIL=27204f5220313d31202d2d20

# The shim with nothing configured (an empty config file: a file on the
# machine must not change what the test sees), in MODE; VAR=VALUE words
# before the command set what a case chooses.
bare_shim() { # MODE [VAR=VALUE…] command…
    local mode=$1
    shift
    env -u QUOTEGUARD_LOG -u QUOTEGUARD_VERBOSE -u QUOTEGUARD_ALLOW -u QUOTEGUARD_ONLY_PROGRAMS \
        -u QUOTEGUARD_SKIP_PROGRAMS QUOTEGUARD_CONFIG=/dev/null QUOTEGUARD_MODE="$mode" \
        LD_PRELOAD="$QG_SHIM" "$@"
}

without=$("$QG_PG_BIN/psql" -X -Atc 'select 1' 2>&1)
my_without=$(my_sql -e 'select 1' 2>&1)
for mode in enforce audit rewrite; do
    with=$(bare_shim $mode "$QG_PG_BIN/psql" -X -Atc 'select 1' 2>&1)
    ok "psql -Atc 'select 1' 2>&1, $mode: byte-identical with and without the shim" \
        [ "$with" = "$without" ] || tap_diag "without: $without" "with: $with"
    with=$(bare_shim $mode mariadb --no-defaults \
        --socket="$QG_MY_SOCKET" -uroot --batch --skip-column-names -e 'select 1' 2>&1)
    ok "mariadb -e 'select 1' 2>&1, $mode: byte-identical with and without the shim" \
        [ "$with" = "$my_without" ] || tap_diag "without: $my_without" "with: $with"
done
ok "the shim was loaded in those runs (its attached line when asked for)" \
    grep -q '"event":"attached"' <(bare_shim enforce QUOTEGUARD_VERBOSE=1 "$QG_PG_BIN/psql" -X -Atc 'select 1' 2>&1)

# A blocked query: one line on stderr, the finding.
bare_shim enforce "$QG_BUILD/clients/pg_legacy" --encoding SJIS --scs off \
    --after "SELECT 'alive'" "SELECT '%s' AS v" "95$TAIL" >"$TMP/enforce.out" 2>"$TMP/enforce.err"
has "$(cat "$TMP/enforce.out")" "quoteguard: blocked" "enforce, nothing configured: the attack is blocked"
ok "enforce, nothing configured: stderr is one line, the blocked finding" \
    [ "$(wc -l <"$TMP/enforce.err")" = 1 ] || tap_diag "$(cat "$TMP/enforce.err")"
has "$(cat "$TMP/enforce.err")" '"action":"blocked","api":"PQexec"' "enforce: that line is the finding"

# Audit: findings go to syslog; here there is none, which is said once,
# with the count of lines lost.
if [ -e /dev/log ] || [ -e /run/systemd/journal/socket ]; then
    ok "# SKIP this machine has a syslog socket; tests/t/78-syslog.t covers syslog" true
else
    bare_shim audit "$QG_BUILD/clients/pg_legacy" --encoding SJIS --scs off \
        --after "SELECT 'alive'" "SELECT '%s' AS v" "95$TAIL" >"$TMP/audit.out" 2>"$TMP/audit.err"
    lacks "$(cat "$TMP/audit.out")" "quoteguard: blocked" "audit, nothing configured: the attack passes"
    lacks "$(cat "$TMP/audit.err")" '"action":"logged"' "audit, nothing configured: no finding on stderr"
    ok "audit, no syslog: stderr is one line saying the finding was lost and why" \
        [ "$(grep -c '"event":"log_lines_lost".*cannot send to syslog socket /dev/log: No such file or directory; 1 log line lost so far' "$TMP/audit.err")" = 1 ] &&
        [ "$(wc -l <"$TMP/audit.err")" = 1 ] || tap_diag "$(cat "$TMP/audit.err")"
fi

# Asked for: a verbosity, or a destination.
out=$(bare_shim audit QUOTEGUARD_VERBOSE=1 "$QG_PG_BIN/psql" -X -Atc 'select 1' 2>&1)
matches "$out" '^\{.*"event":"attached"' "QUOTEGUARD_VERBOSE=1: the attached line on stderr"
out=$(bare_shim audit QUOTEGUARD_LOG=stderr "$QG_PG_BIN/psql" -X -Atc 'select 1' 2>&1)
matches "$out" '^\{.*"event":"attached"' "QUOTEGUARD_LOG=stderr: the attached line on stderr"
out=$(bare_shim audit QUOTEGUARD_LOG="$TMP/chosen.log" "$QG_PG_BIN/psql" -X -Atc 'select 1' 2>&1)
ok "QUOTEGUARD_LOG=FILE: stderr is as without the shim" [ "$out" = "$without" ]
has "$(cat "$TMP/chosen.log")" '"event":"attached"' "QUOTEGUARD_LOG=FILE: the attached line is in the file"

tap_done
