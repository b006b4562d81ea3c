#!/bin/bash
# No false positives at the wire, MySQL dialect: the statements of Debian's
# mariadb-test-data scripts (taken out by tests/corpus/mysqltest_check.c
# --emit, charset commands and all) replayed through PyMySQL, a driver that
# speaks the protocol itself (every statement a COM_QUERY), by
# tests/corpus/replay_driver.py, one connection per script, once on a server
# without the shim and once on an identical fresh server under it in
# enforce.  Every statement must get the same answer (ok and its row count,
# or the same error number), and the shim may block or log nothing but the
# reviewed statements below and a last canary script: SET NAMES gbk sent as
# a query and a quote escaped byte-wise after the lead byte 0xbf, which takes
# the backslash as its trail byte; it must be blocked, which proves the shim
# read the driver's packets.
#
# Sample, to keep the run to a few minutes: every ctype_* script of main/,
# its first 150 statements (the ones about character sets, as
# 81-mysql-corpus.t samples them), and every jp script, its first 30.  The
# emitter leaves out the statements that would stop or stall the server.
# servers: mariadb
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/hardening.sh
. tests/lib/mariadb.sh

MT=/usr/share/mysql/mysql-test
[ -d "$MT/suite/jp/t" ] || tap_skip_all "mariadb-test-data is not installed"
my_available || tap_skip_all "no MariaDB server binaries (or not root)"
PY=/usr/bin/python3
"$PY" -c 'import pymysql' || tap_bail "python3-pymysql is not installed (scripts/install-deps installs it)"
qg_require_build libquoteguard-check.a
EMIT=$(qg_helper_build mysqltest_check tests/corpus/mysqltest_check.c "$QG_BUILD/libquoteguard-check.a") ||
    tap_bail "cannot build tests/corpus/mysqltest_check.c"

# file:line — the statements whose answer or log differs under the shim,
# each one reviewed:
#  rejected   the server refuses the statement itself (the script expects
#             an error); the shim blocks it first
#  illformed  ctype_latin1.test:230-235,244 (MDEV-6752, truncated
#             characters) send, on a utf8 connection, a lone UTF-8 lead byte
#             C2 right before the closing quote, on purpose; the default
#             policy (mysql_illformed_quote = block) blocks an ill-formed
#             lead byte before a quote, the shape of the attack in the
#             character sets where such a byte swallows the quote
#  (ctype_latin1.test:236-241 send C2 before a letter: no reader takes
#  a quote into a character there, and that is no finding)
#  follows    reads the table a blocked INSERT above would have filled
# (the same statements 81-mysql-corpus.t and 15-corpus-mysqltest.t review;
# after a CALL, such as the test framework's mtr.add_suppression, the state
# is the caller's, which the server gives back when the procedure returns)
REVIEWED="
main/ctype_errors.test:56 rejected
main/ctype_latin1.test:230 illformed
main/ctype_latin1.test:231 illformed
main/ctype_latin1.test:232 illformed
main/ctype_latin1.test:233 illformed
main/ctype_latin1.test:234 illformed
main/ctype_latin1.test:235 illformed
main/ctype_latin1.test:244 illformed
main/ctype_latin1.test:245 follows
main/ctype_latin1.test:246 follows
main/ctype_recoding.test:127 rejected
"

WORK=$(mktemp -d /tmp/qg-pymysql.XXXXXX)
qg_at_exit "rm -rf $WORK"
LOG=$WORK/shim.log
start=$SECONDS
(cd "$MT" && "$EMIT" --emit main/ctype_*.test suite/jp/t/*.test) | awk '
    /^F / { file = $2; n = 0; keep = file ~ /\/jp\// ? 30 : 150 }
    /^[FC] / { print; next }
    /^[SK] / && n < keep { n++; print }' >"$WORK/records"
hex() { printf '%s' "$1" | od -An -v -tx1 | tr -d ' \n'; }
{
    echo "F canary"
    echo "S canary:1 $(hex "SET NAMES gbk")"
    echo "S canary:2 $(hex "SELECT table_name FROM information_schema.tables WHERE table_name = '"$'\xbf\\\''" OR 1=1 -- '")"
} >>"$WORK/records"
statements=$(grep -c '^S ' "$WORK/records")

replay() { # RUNNER…
    my_start || tap_bail "cannot start MariaDB"
    "$@" "$PY" tests/corpus/replay_driver.py pymysql "$QG_MY_SOCKET" <"$WORK/records"
    my_stop
}
replay env >"$WORK/plain"
replay with_shim enforce "$LOG" >"$WORK/shim"
tap_diag "mysql-test through PyMySQL: $(grep -c '^F ' "$WORK/records") scripts, $statements statements, in $((SECONDS - start))s" \
    "without the shim: $(awk '{ print $2 }' "$WORK/plain" | sort | uniq -c | awk '{ printf "%s %s, ", $2, $1 }')" \
    "under the shim: $(awk '{ print $2 }' "$WORK/shim" | sort | uniq -c | awk '{ printf "%s %s, ", $2, $1 }')"

ok "statements were taken out of the scripts (> 5000)" [ "$statements" -gt 5000 ]
ok "every statement was replayed, without and under the shim" \
    [ "$(wc -l <"$WORK/plain") $(wc -l <"$WORK/shim")" = "$statements $statements" ]
ok "the server accepted many of them (> 50 %)" [ "$(grep -c ' ok ' "$WORK/plain")" -gt $((statements / 2)) ]
reviewed=$(printf '%s\n' "$REVIEWED" | awk 'NF { print $1 }')
reviewed_re="^($(printf '%s' "$reviewed" | paste -sd '|')|canary:[0-9]+) "
differing() { diff <(grep -Ev "$reviewed_re" "$WORK/plain") <(grep -Ev "$reviewed_re" "$WORK/shim"); }
diffs=$(differing | grep -c '^[<>]')
ok "every statement but the reviewed ones gets the same answer and no finding under the shim ($diffs lines differ)" \
    [ "$diffs" -eq 0 ] || tap_diag "$(differing | head -n 20)"
gone=$(for at in $reviewed; do grep -q "^$at " "$WORK/plain" && cmp -s <(grep "^$at " "$WORK/plain") <(grep "^$at " "$WORK/shim") && echo "$at"; done)
ok "every reviewed statement still differs (or the table is out of date)" [ -z "$gone" ] ||
    tap_diag "no longer differs: $gone"
blocked=$(grep -E "$reviewed_re" "$WORK/shim" | grep -v '^canary:' | grep -c ' blocked')
tap_diag "reviewed: $(printf '%s\n' "$reviewed" | wc -l) statements, $blocked blocked under the shim"
matches "$(grep '^canary:2 ' "$WORK/plain")" '^canary:2 ok ([2-9]|[0-9]{2,})' \
    "the canary injects without the shim (every table)"
has "$(grep '^canary:2 ' "$WORK/shim")" "canary:2 blocked" "the canary is blocked under the shim"
has "$(cat "$LOG")" '"api":"wire:COM_QUERY"' "the shim read PyMySQL's packets at the wire"
tap_done
