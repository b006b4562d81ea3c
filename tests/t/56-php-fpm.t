#!/bin/bash
# php-fpm as docs/DEPLOYMENT.md's "php-fpm pools" describes it: `quoteguard enable` on
# Debian's php8.2-fpm unit (in a scratch root) writes the drop-in; php-fpm
# started with that drop-in's environment (as systemd would start it, with
# a pool of its own, clear_env = yes) has the shim in its worker
# (`quoteguard check --pid`), and the worker uses the drop-in's settings
# although clear_env empties its environment: the master read them when it
# loaded PHP's database extensions, before it forked.  An SJIS attack
# through the pool is logged in audit and blocked in enforce.
# servers: pg php-fpm
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/pg.sh

qg_require_build quoteguard-config
FPM=$(command -v php-fpm8.2) && command -v cgi-fcgi >/dev/null ||
    tap_bail "php8.2-fpm and cgi-fcgi are missing (scripts/install-deps installs php-fpm and libfcgi-bin)"
UNIT=/lib/systemd/system/php8.2-fpm.service
[ -f "$UNIT" ] || tap_bail "$UNIT is missing (php8.2-fpm)"
pg_available || tap_skip_all "no PostgreSQL server binaries (or not root)"
QG=$PWD/scripts/quoteguard
for v in $(env | sed -n 's/^\(QUOTEGUARD_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
unset LD_PRELOAD
pg_start || tap_bail "cannot start PostgreSQL"
pg_psql -c "CREATE TABLE users(name text, secret text); INSERT INTO users VALUES ('bob', 'secret_bob')" ||
    tap_bail "cannot create the table"
TMP=$QG_PG_DIR/fpm
mkdir -p "$TMP" && chmod 755 "$TMP"
fpm_pid=
qg_at_exit 'kill "$fpm_pid" 2>/dev/null; wait "$fpm_pid" 2>/dev/null'

# The unit as Debian ships it, in a scratch root; its program is the host's.
ROOT=$TMP/root
mkdir -p "$ROOT/etc/systemd/system" "$ROOT/usr/sbin"
cp "$UNIT" "$ROOT/etc/systemd/system/"
ln -s "$FPM" "$ROOT/usr/sbin/php-fpm8.2"

cat > "$TMP/attack.php" <<PHP
<?php
\$db = pg_connect("host=$PGHOST port=$PGPORT user=$PGUSER dbname=$PGDATABASE");
pg_query(\$db, "SET client_encoding TO SJIS");
pg_query(\$db, "SET standard_conforming_strings TO off");
\$name = addslashes("\x95' OR 1=1 -- ");
\$r = @pg_query(\$db, "SELECT secret FROM users WHERE name = '\$name'");
if (\$r === false) echo "ERROR: ", pg_last_error(\$db), "\n";
else while (\$row = pg_fetch_row(\$r)) echo "ROW: ", \$row[0], "\n";
echo "WORKER: ", getmypid(), " ENV: [", getenv("QUOTEGUARD_MODE"), "]\n";
PHP

# run_pool MODE: enable with MODE, start php-fpm with the drop-in's
# environment, send one request; sets out, worker.
run_pool() {
    local mode=$1 env_args=() line
    out=$("$QG" enable --root "$ROOT" --mode "$mode" --log "$TMP/$mode.log" php8.2-fpm 2>&1)
    ok "enable php8.2-fpm --mode $mode: exit 0" [ $? -eq 0 ] || tap_diag "$out"
    while IFS= read -r line; do
        env_args+=("$line")
    done < <(sed -n 's/^Environment="\(.*\)"$/\1/p' "$ROOT/etc/systemd/system/php8.2-fpm.service.d/quoteguard.conf")
    printf '[global]\npid = %s/fpm.pid\nerror_log = %s/fpm-%s.err\ndaemonize = no\n[www]\nlisten = %s/fpm.sock\npm = static\npm.max_children = 1\nclear_env = yes\n' \
        "$TMP" "$TMP" "$mode" "$TMP" > "$TMP/fpm.conf"
    rm -f "$TMP/fpm.sock"
    env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin QUOTEGUARD_CONFIG=/dev/null "${env_args[@]}" \
        "$FPM" --nodaemonize -R --fpm-config "$TMP/fpm.conf" & fpm_pid=$!
    for i in $(seq 100); do [ -S "$TMP/fpm.sock" ] && break; sleep 0.1; done
    out=$(SCRIPT_FILENAME=$TMP/attack.php REQUEST_METHOD=GET cgi-fcgi -bind -connect "$TMP/fpm.sock" 2>&1)
    worker=$(printf '%s\n' "$out" | sed -n 's/^WORKER: \([0-9]*\) .*/\1/p')
}

run_pool audit
has "$out" "ENV: []" "audit: clear_env left the worker no QUOTEGUARD_MODE"
check=$("$QG" check --pid "${worker:-0}"); rc=$?
ok "check --pid on the worker: the shim is there" [ "$rc" -eq 0 ] || tap_diag "$check"
has "$out" "ROW: secret_bob" "audit: the attack runs (audit mode from the drop-in)"
matches "$(cat "$TMP/audit.log" 2>/dev/null)" '"program":"php-fpm8.2","mode":"audit","action":"logged".*"reason":"structure_mismatch"' \
    "audit: the worker logged the finding to the drop-in's log file"
kill "$fpm_pid"; wait "$fpm_pid" 2>/dev/null

run_pool enforce
has "$out" "ERROR:  quoteguard: blocked structure_mismatch" "enforce: the attack through the pool is blocked"
lacks "$out" "secret_bob" "enforce: no secret leaks"
matches "$(cat "$TMP/enforce.log" 2>/dev/null)" '"program":"php-fpm8.2","mode":"enforce","action":"blocked"' \
    "enforce: logged as blocked by the worker"
kill "$fpm_pid"; wait "$fpm_pid" 2>/dev/null

tap_done
