#!/bin/bash
# Start-ups an operator wraps as they are, with no extra option: a #!/bin/sh
# start script that execs psql, `env psql`, `nice psql`, `sudo -u USER psql`
# (sudo resets the environment: the wrapper passes the preload on with env)
# and PHP's pgsql extension.  Each runs an SJIS attack through a real
# server: without the shim it injects, under the wrapper it is blocked and
# never reaches the server.
# servers: pg
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/pg.sh

qg_require_build quoteguard-config
pg_available || tap_skip_all "no PostgreSQL server binaries (or not root)"
command -v php >/dev/null && php -r 'exit(function_exists("pg_connect") ? 0 : 1);' ||
    tap_bail "php with the pgsql extension is missing (scripts/install-deps installs php-pgsql)"
QG=$PWD/scripts/quoteguard
for v in $(env | sed -n 's/^\(QUOTEGUARD_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
unset LD_PRELOAD
pg_start || tap_bail "cannot start PostgreSQL"
pg_psql -c "CREATE TABLE users(name text, secret text); INSERT INTO users VALUES ('bob', 'secret_bob')" ||
    tap_bail "cannot create the table"
TMP=$QG_PG_DIR/launch
mkdir -p "$TMP" && chmod 755 "$TMP"
: > "$TMP/empty.conf"
chmod 644 "$TMP/empty.conf"

# The connection in one word, so that launchers that reset the environment
# (sudo) still reach the test server; the attack as a byte-wise escaper
# leaves it: 0x95 0x5c is one SJIS character to the server.
CONN="host=$PGHOST port=$PGPORT user=$PGUSER dbname=$PGDATABASE"
attack_args() { # marker
    printf '%s\0' "$CONN" -At -c "SET client_encoding TO SJIS" -c "SET standard_conforming_strings TO off" \
        -c "SELECT /*$1*/ secret FROM users WHERE name = '"$'\x95'"\\' OR 1=1 -- '"
}
mapfile -d '' -t plain < <(attack_args "qgm_plain_$$")
out=$(psql "${plain[@]}" 2>&1)
has "$out" "secret_bob" "without the shim the attack through psql injects"

# guarded DESCRIPTION MARKER OUT LOG: blocked, logged, never at the server.
guarded() {
    has "$3" "quoteguard: blocked structure_mismatch" "$1: the attack is blocked"
    lacks "$3" "secret_bob" "$1: no secret leaks"
    has "$(cat "$4" 2>/dev/null)" '"action":"blocked"' "$1: the finding is logged"
    lacks "$(cat "$QG_PG_LOG")" "$2" "$1: the statement never reached the server"
}

printf '#!/bin/sh\n# a service start script\nexec psql "$@"\n' > "$TMP/start.sh"
chmod 755 "$TMP/start.sh"
mapfile -d '' -t args < <(attack_args "qgm_script_$$")
out=$("$QG" --config "$TMP/empty.conf" --log "$TMP/script.log" "$TMP/start.sh" "${args[@]}" 2>&1)
guarded "a #!/bin/sh start script execing psql" "qgm_script_$$" "$out" "$TMP/script.log"

mapfile -d '' -t args < <(attack_args "qgm_env_$$")
out=$("$QG" --config "$TMP/empty.conf" --log "$TMP/env.log" env TZ=UTC psql "${args[@]}" 2>&1)
guarded "env psql" "qgm_env_$$" "$out" "$TMP/env.log"

mapfile -d '' -t args < <(attack_args "qgm_nice_$$")
out=$("$QG" --config "$TMP/empty.conf" --log "$TMP/nice.log" nice -n 5 psql "${args[@]}" 2>&1)
guarded "nice -n 5 psql" "qgm_nice_$$" "$out" "$TMP/nice.log"

if command -v sudo >/dev/null && [ "$(id -u)" -eq 0 ]; then
    touch "$TMP/sudo.log" && chown "$QG_PG_USER" "$TMP/sudo.log"
    mapfile -d '' -t args < <(attack_args "qgm_sudo_$$")
    out=$("$QG" --config "$TMP/empty.conf" --log "$TMP/sudo.log" sudo -u "$QG_PG_USER" psql "${args[@]}" 2>&1)
    guarded "sudo -u $QG_PG_USER psql" "qgm_sudo_$$" "$out" "$TMP/sudo.log"
    out=$("$QG" check --config "$TMP/empty.conf" sudo -u "$QG_PG_USER" psql)
    has "$out" "sudo resets the environment: LD_PRELOAD and QUOTEGUARD_* are passed on with env" \
        "check says how the preload gets past sudo"
else
    tap_result 1 "sudo is installed and the test runs as root (scripts/install-deps installs sudo)"
fi

cat > "$TMP/legacy.php" <<'PHP'
<?php
$db = pg_connect($argv[2]);
foreach (["SET client_encoding TO SJIS", "SET standard_conforming_strings TO off"] as $set)
    pg_query($db, $set);
$name = addslashes("\x95' OR 1=1 -- ");
$result = @pg_query($db, "SELECT /*{$argv[1]}*/ secret FROM users WHERE name = '$name'");
if ($result === false)
    echo "ERROR: ", trim(pg_last_error($db)), "\n";
else
    while ($row = pg_fetch_row($result))
        echo "ROW: ", $row[0], "\n";
PHP
out=$(php "$TMP/legacy.php" "qgm_php_plain_$$" "$CONN" 2>&1)
has "$out" "ROW: secret_bob" "without the shim the PHP attack injects"
out=$("$QG" --config "$TMP/empty.conf" --log "$TMP/php.log" php "$TMP/legacy.php" "qgm_php_$$" "$CONN" 2>&1)
guarded "php with pgsql.so" "qgm_php_$$" "$out" "$TMP/php.log"

tap_done
