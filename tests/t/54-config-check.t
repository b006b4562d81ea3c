#!/bin/bash
# `quoteguard check --config FILE` (and `quoteguard check` on the file in
# use) as the validate step of a configuration-management run: exit 0 and
# one line for a good file, exit 78 and one line per problem for each bad
# file of a table — read by the shim's own parser (quoteguard-config) — and
# the library itself, given such a file, still runs in mode enforce.
# servers: none
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh

qg_require_build quoteguard-config
QG=$PWD/scripts/quoteguard
TMP=$(mktemp -d /tmp/qg-config-check.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
for v in $(env | sed -n 's/^\(QUOTEGUARD_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
unset LD_PRELOAD

cat > "$TMP/good.conf" <<'EOF2'
# audit first, then enforce
mode = audit
log = /var/log/quoteguard/quoteguard.log   # one file for every program
allow = 0123456789abcdef, shape:00000000000000ff@legacy+0x1234
allow = shape:fedcba9876543210
counters_dir = /run/quoteguard
EOF2
out=$("$QG" check --config "$TMP/good.conf"); rc=$?
ok "a good file: exit 0" [ "$rc" -eq 0 ] || tap_diag "exit $rc: $out"
is_line() { [ "$1" = "$2" ]; }
ok "a good file: one line saying so" is_line "$out" "$TMP/good.conf: no problems (read)"

# Each row: the file's text | what its one problem line must say ($TMP
# stands for the directory).
while IFS='|' read -r text expected; do
    printf '%b\n' "$text" > "$TMP/bad.conf"
    out=$("$QG" check --config "$TMP/bad.conf"); rc=$?
    ok "'$text': exit 78" [ "$rc" -eq 78 ] || tap_diag "exit $rc"
    lines=$(printf '%s\n' "$out" | grep -c .)
    ok "'$text': one line" [ "$lines" -eq 1 ] || tap_diag "$out"
    has "$out" "${expected//'$TMP'/$TMP}" "'$text': the line says what is wrong"
done <<'TABLE'
mode = "audit"|mode=""audit"" ($TMP/bad.conf line 1): unknown mode; expected enforce, audit, rewrite or off; values are written without quotes
mode = audti|unknown mode
bogus = 1|bogus="1" ($TMP/bad.conf line 1): unknown key
\n\nmode audit|line 3: "mode audit" is not a `key = value` line
allow = 12345|"12345" is not a fingerprint
allow = shape:12345|"shape:12345" is not shape:FINGERPRINT or shape:FINGERPRINT@SITE
allow = shape:0123456789abcdef@|is not shape:FINGERPRINT or shape:FINGERPRINT@SITE
log = relative.log|expected stderr, syslog, journal, syslog:SOCKET, journal:SOCKET or an absolute file path
log = syslog:relative.sock|expected stderr, syslog, journal
verbose = 3|expected 0, 1 or 2
log_full_query = maybe|expected 0 or 1
syslog_facility = local9|unknown syslog facility
mysql_illformed = drop|expected block, log or ignore
rewrite = most|expected needed or all
shapes = learn|shapes=learn needs shapes_file
shapes_file = profiles/%p|expected an absolute file path
counters_dir = run/quoteguard|expected an absolute directory path
TABLE

printf 'mode = "audit"\nbogus = 1\nverbose = 9\n' > "$TMP/three.conf"
out=$("$QG" check --config "$TMP/three.conf"); rc=$?
ok "three problems: exit 78" [ "$rc" -eq 78 ]
ok "three problems: three lines" [ "$(printf '%s\n' "$out" | grep -c .)" -eq 3 ] || tap_diag "$out"
has "$out" "three.conf line 3" "each line names its line in the file"

# The file in use: QUOTEGUARD_CONFIG, as the library reads it.
out=$(QUOTEGUARD_CONFIG=$TMP/three.conf "$QG" check); rc=$?
ok "check without a command validates \$QUOTEGUARD_CONFIG: exit 78" [ "$rc" -eq 78 ]
ok "… with its three lines" [ "$(printf '%s\n' "$out" | grep -c .)" -eq 3 ]
out=$(QUOTEGUARD_CONFIG=$TMP/three.conf QUOTEGUARD_MODE=bogus "$QG" check); rc=$?
has "$out" 'QUOTEGUARD_MODE="bogus" (environment): unknown mode' "a bad QUOTEGUARD_* variable is a problem too"
out=$("$QG" check --config "$TMP/missing.conf" 2>&1); rc=$?
ok "a missing --config file: exit 66" [ "$rc" -eq 66 ]

# With a command, problems make check fail as well.
printf 'int main(void) { return 0; }\n' > "$TMP/p.c" && cc -o "$TMP/p" "$TMP/p.c" -lpq
out=$("$QG" check --config "$TMP/three.conf" "$TMP/p"); rc=$?
ok "check COMMAND with a bad config: exit 78" [ "$rc" -eq 78 ]
matches "$out" '^mode: +enforce \(forced: the settings have problems\)$' "check COMMAND: the mode falls back to enforce"

# The library's own fallback stays enforce: its start-up line says so.
cat > "$TMP/c.c" <<'EOF2'
#include <libpq-fe.h>
int main(void) { return PQlibVersion() > 0 ? 0 : 1; }
EOF2
cc -I"$(pg_config --includedir)" -o "$TMP/c" "$TMP/c.c" -lpq || tap_bail "cannot build a libpq client"
printf 'mode = "audit"\n' > "$TMP/quoted.conf"
QUOTEGUARD_VERBOSE=1 QUOTEGUARD_CONFIG=$TMP/quoted.conf QUOTEGUARD_LOG=$TMP/run2.log LD_PRELOAD=$QG_SHIM "$TMP/c"
matches "$(cat "$TMP/run2.log")" '"event":"attached".*"mode":"enforce"' "the library given mode = \"audit\" runs in enforce"
matches "$(cat "$TMP/run2.log")" '"event":"config_error".*values are written without quotes' "and logs the problem"

tap_done
