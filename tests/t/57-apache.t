#!/bin/bash
# Apache with mod_php as docs/DEPLOYMENT.md's "Apache with mod_php" describes it: one
# `export LD_PRELOAD=…` line in the envvars file apache2ctl reads (a private
# APACHE_CONFDIR here, so the machine's Apache is left alone) puts the shim
# into Apache's children and the PHP they run: `quoteguard check --pid`
# finds it there, and an SJIS attack through a PHP page is blocked.
# servers: pg apache
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/pg.sh

qg_require_build
MODULES=/usr/lib/apache2/modules
command -v apache2ctl >/dev/null && [ -f "$MODULES/libphp8.2.so" ] && command -v curl >/dev/null ||
    tap_bail "apache2, libapache2-mod-php8.2 or curl is missing (scripts/install-deps installs them)"
pg_available || tap_skip_all "no PostgreSQL server binaries (or not root)"
QG=$PWD/scripts/quoteguard
for v in $(env | sed -n 's/^\(QUOTEGUARD_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
unset LD_PRELOAD
pg_start || tap_bail "cannot start PostgreSQL"
pg_psql -c "CREATE TABLE users(name text, secret text); INSERT INTO users VALUES ('bob', 'secret_bob')" ||
    tap_bail "cannot create the table"

# Apache's children run as the test server's user, who may reach its socket.
T=$(mktemp -d /tmp/qg-apache.XXXXXX)
chmod 755 "$T"
CONF=$T/conf
qg_at_exit 'APACHE_CONFDIR=$CONF apache2ctl stop >/dev/null 2>&1; sleep 1; rm -rf "$T"'
mkdir -p "$CONF" "$T/www" "$T/run" "$T/lock" "$T/log"
chown "$QG_PG_USER" "$T/log"
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
{
    cat /etc/apache2/envvars
    echo "export APACHE_RUN_USER=$QG_PG_USER APACHE_RUN_GROUP=$(id -gn "$QG_PG_USER")"
    echo "export APACHE_PID_FILE=$T/run/apache2.pid APACHE_RUN_DIR=$T/run APACHE_LOCK_DIR=$T/lock APACHE_LOG_DIR=$T/log"
    echo "export QUOTEGUARD_CONFIG=/dev/null QUOTEGUARD_LOG=$T/log/quoteguard.log"
    echo "export LD_PRELOAD=$QG_SHIM"   # docs/DEPLOYMENT.md's line, with this tree's library
} > "$CONF/envvars"
cat > "$CONF/apache2.conf" <<EOF2
LoadModule mpm_prefork_module $MODULES/mod_mpm_prefork.so
LoadModule authz_core_module $MODULES/mod_authz_core.so
LoadModule php_module $MODULES/libphp8.2.so
ServerName localhost
Listen 127.0.0.1:$PORT
PidFile \${APACHE_PID_FILE}
User \${APACHE_RUN_USER}
Group \${APACHE_RUN_GROUP}
ErrorLog $T/log/error.log
DocumentRoot $T/www
StartServers 1
MinSpareServers 1
MaxSpareServers 1
<Directory $T/www>
    Require all granted
</Directory>
<FilesMatch "\.php\$">
    SetHandler application/x-httpd-php
</FilesMatch>
EOF2
cat > "$T/www/attack.php" <<PHP
<?php
\$db = pg_connect("host=$PGHOST port=$PGPORT user=$PGUSER dbname=$PGDATABASE");
pg_query(\$db, "SET client_encoding TO SJIS");
pg_query(\$db, "SET standard_conforming_strings TO off");
\$name = addslashes("\x95' OR 1=1 -- ");
\$r = @pg_query(\$db, "SELECT secret FROM users WHERE name = '\$name'");
if (\$r === false) echo "ERROR: ", pg_last_error(\$db), "\n";
else while (\$row = pg_fetch_row(\$r)) echo "ROW: ", \$row[0], "\n";
echo "CHILD: ", getmypid(), "\n";
PHP
chmod 644 "$T/www/attack.php"
chmod 711 "$QG_PG_DIR"

out=$(APACHE_CONFDIR=$CONF apache2ctl start 2>&1)
ok "apache2ctl start with the envvars line" [ $? -eq 0 ] || tap_diag "$out $(cat "$T/log/error.log" 2>/dev/null)"
for i in $(seq 50); do out=$(curl -s "http://127.0.0.1:$PORT/attack.php") && [ -n "$out" ] && break; sleep 0.2; done
has "$out" "ERROR:  quoteguard: blocked structure_mismatch" "the attack through mod_php is blocked"
lacks "$out" "secret_bob" "no secret leaks"
child=$(printf '%s\n' "$out" | sed -n 's/^CHILD: //p')
check=$("$QG" check --pid "${child:-0}"); rc=$?
ok "check --pid on the Apache child that ran PHP: the shim is there" [ "$rc" -eq 0 ] || tap_diag "$check"
matches "$(cat "$T/log/quoteguard.log" 2>/dev/null)" '"program":"apache2","mode":"enforce","action":"blocked"' \
    "the child logged the blocked finding"

tap_done
