#!/bin/bash
# End-to-end: real legacy applications (PHP pgsql and mysqli, Perl, Python, psql, pgbench)
# under quoteguard, attacked by sqlmap.  See tests/e2e/README.md.
# servers: pg mariadb php-S
exec "$(dirname "$0")/../e2e/run"
