#!/bin/bash
# Syslog that says what it does: a datagram to the socket syslog:PATH names
# (RFC 3164 head, the JSON line as the message), journald's native protocol
# with QUOTEGUARD_* fields (journal:PATH, and plain syslog where journald
# runs), a missing socket reported once on stderr with the count of lines
# lost; and a real systemd-journald, where this machine can run one in a
# private mount namespace, showing the fields in `journalctl -o json`.
# servers: pg
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/pg.sh

qg_require_build clients/pg_legacy
TMP=$(mktemp -d /tmp/qg-syslog.XXXXXX)
qg_at_exit "rm -rf '$TMP'"

pg_available || { ok "PostgreSQL server binaries (and root)" false; tap_done; }
pg_start || tap_bail "cannot start PostgreSQL"
TAIL=27204f5220313d31202d2d20
# The same SJIS attack as raw SQL, for a second finding in one process.
SECOND=$(printf "SELECT 'x\x95\\\\' OR 1=1 -- ' AS w")

# Binds a datagram socket at SOCKET, runs the command, prints what arrived,
# one datagram per line (Python repr), then the command's stderr and status.
receive() { # SOCKET command…
    python3 - "$@" <<'EOF'
import os, socket, subprocess, sys
path, cmd = sys.argv[1], sys.argv[2:]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
s.setblocking(False)
while True:
    try:
        print("DATAGRAM:", repr(s.recv(65536)))
    except BlockingIOError:
        break
for line in p.stderr.decode("latin-1").splitlines():
    print("STDERR:", line)
print("STDOUT:", p.stdout.decode("latin-1").replace("\n", " | "))
print("EXIT:", p.returncode)
EOF
}

# exported: receive runs it in a child shell
export QG_SHIM QG_BUILD SECOND TAIL
attack() { # MODE LOG [VAR=VALUE…] — the attack, then a second one
    local mode=$1 log=$2
    shift 2
    env -u QUOTEGUARD_VERBOSE -u QUOTEGUARD_ALLOW QUOTEGUARD_CONFIG=/dev/null QUOTEGUARD_MODE="$mode" \
        QUOTEGUARD_LOG="$log" LD_PRELOAD="$QG_SHIM" "$@" "$QG_BUILD/clients/pg_legacy" --encoding SJIS \
        --scs off --after "$SECOND" "SELECT '%s' AS v" "95$TAIL"
}
export -f attack

# ------------------------------------------------------- syslog:SOCKET
out=$(receive "$TMP/log.sock" bash -c 'attack audit "syslog:$1" QUOTEGUARD_SYSLOG_FACILITY=local3' _ \
    "$TMP/log.sock")
has "$out" "EXIT: 0" "syslog:SOCKET, audit: the program runs"
ok "syslog:SOCKET: three datagrams, the attached line and one per finding" \
    [ "$(grep -c '^DATAGRAM:' <<<"$out")" = 3 ] && [ "$(grep -c '"reason":"structure_mismatch"' <<<"$out")" = 2 ] ||
    tap_diag "$out"
# local3 (19) * 8 + info (6) = 158
matches "$out" "^DATAGRAM: b'<158>quoteguard\\[[0-9]+\\]: \\{\"time\":[^}]*\"event\":\"attached\"" \
    "syslog:SOCKET: the attached line at priority info"
# local3 (19) * 8 + warning (4) = 156
matches "$out" "^DATAGRAM: b'<156>quoteguard\\[[0-9]+\\]: \\{\"time\":.*\"action\":\"logged\".*\"reason\":\"structure_mismatch\".*\\}'$" \
    "syslog:SOCKET: <PRI> of the configured facility, ident quoteguard[pid], the JSON line, no newline"
lacks "$out" "STDERR:" "syslog:SOCKET: nothing on stderr"

# ------------------------------------------------------ journal:SOCKET
out=$(receive "$TMP/journal.sock" bash -c 'attack audit "journal:$1"' _ "$TMP/journal.sock")
first=$(grep -m1 '^DATAGRAM:.*QUOTEGUARD_REASON' <<<"$out")
for field in 'SYSLOG_FACILITY=10' 'SYSLOG_IDENTIFIER=quoteguard' 'SYSLOG_PID=' \
    'MESSAGE={"time":' 'QUOTEGUARD_ACTION=logged' 'QUOTEGUARD_REASON=structure_mismatch' \
    'QUOTEGUARD_ENCODING=SJIS' 'QUOTEGUARD_API=PQexec' 'QUOTEGUARD_MODE=audit' 'QUOTEGUARD_SPAN=[' \
    'QUOTEGUARD_FINGERPRINT=' 'QUOTEGUARD_EXCERPT='; do
    has "$first" "\\n$field" "journal:SOCKET: the datagram has $field"
done
matches "$first" "^DATAGRAM: b'PRIORITY=4\\\\n" "journal:SOCKET: KEY=value lines from the first byte"
lacks "$out" "STDERR:" "journal:SOCKET: nothing on stderr"

# ------------------------------------------------- no socket listening
out=$(attack audit "syslog:$TMP/nobody.sock" 2>&1 >/dev/null)
ok "syslog to a missing socket: the first loss said once, with the count so far" \
    [ "$(grep -c "\"event\":\"log_lines_lost\".*cannot send to syslog socket $TMP/nobody.sock: No such file or directory; 1 log line lost so far" <<<"$out")" = 1 ] ||
    tap_diag "$out"
# the attached line and the two findings
ok "syslog to a missing socket: and the total at exit; nothing else on stderr" \
    [ "$(grep -c '3 log lines lost in all' <<<"$out")" = 1 ] && [ "$(wc -l <<<"$out")" = 2 ] || tap_diag "$out"

# ----------------------------------------------- a real systemd-journald
JOURNALD=/lib/systemd/systemd-journald
if [ "$(id -u)" != 0 ] || [ ! -x "$JOURNALD" ] || ! command -v unshare >/dev/null ||
    ! command -v journalctl >/dev/null; then
    ok "# SKIP a real journald needs root, unshare, systemd-journald and journalctl" true
    tap_done
fi
# A private mount namespace: journald's sockets and journal live on tmpfs
# there, and no other process on the machine sees them.
cat >"$TMP/journald.sh" <<'EOF'
set -u
out=$1 shim=$2 client=$3 second=$4 tail=$5
mkdir -p /run/systemd /run/log
mount -t tmpfs tmpfs /run/systemd && mount -t tmpfs tmpfs /run/log || exit 3
[ -d /var/log/journal ] && { mount -t tmpfs tmpfs /var/log/journal || exit 3; }
/lib/systemd/systemd-journald &
jpid=$!
for i in $(seq 1 100); do [ -S /run/systemd/journal/socket ] && break; sleep 0.05; done
run() { # LOG MARK
    env -u QUOTEGUARD_VERBOSE QUOTEGUARD_CONFIG=/dev/null QUOTEGUARD_MODE=audit QUOTEGUARD_LOG=$1 \
        LD_PRELOAD=$shim "$client" --encoding SJIS --scs off "SELECT '%s' AS $2" "95$tail" >/dev/null 2>&1
}
run syslog native_mark
run syslog:/run/systemd/journal/dev-log classic_mark
sleep 0.5
journalctl -D /run/log/journal -o json --no-pager SYSLOG_IDENTIFIER=quoteguard >"$out" 2>&1
kill $jpid
wait $jpid 2>/dev/null
EOF
timeout 60 unshare -m --propagation private bash "$TMP/journald.sh" "$TMP/journal.json" "$QG_SHIM" \
    "$QG_BUILD/clients/pg_legacy" "$SECOND" "$TAIL"
status=$?
if [ $status = 3 ]; then
    ok "# SKIP cannot mount tmpfs in a private namespace here" true
    tap_done
fi
ok "journald ran and journalctl answered (status $status)" [ $status = 0 ] && [ -s "$TMP/journal.json" ] ||
    tap_diag "$(cat "$TMP/journal.json" 2>/dev/null)"
python3 - "$TMP/journal.json" >"$TMP/journal.summary" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    msg = e.get("MESSAGE", "")
    mark = "native" if "native_mark" in msg else "classic" if "classic_mark" in msg else "other"
    fields = sorted(k for k in e if k.startswith("QUOTEGUARD_"))
    print(mark, e.get("_TRANSPORT"), e.get("PRIORITY"), e.get("SYSLOG_FACILITY"),
          e.get("QUOTEGUARD_REASON", "-"), e.get("QUOTEGUARD_ACTION", "-"), ",".join(fields))
EOF
summary=$(cat "$TMP/journal.summary")
tap_diag "journalctl -o json, per quoteguard entry: mark _TRANSPORT PRIORITY SYSLOG_FACILITY REASON ACTION fields" "$summary"
matches "$summary" '^native journal 4 10 structure_mismatch logged .*QUOTEGUARD_FINGERPRINT' \
    "journald, log = syslog: native transport, priority warning, facility authpriv, QUOTEGUARD_REASON and the other fields"
matches "$summary" '^classic syslog 4 10 - - $' \
    "journald, log = syslog:/run/systemd/journal/dev-log: the syslog transport, the JSON in MESSAGE only"

tap_done
