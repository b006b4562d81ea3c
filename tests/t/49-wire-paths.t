#!/bin/bash
# Every way bytes reach a database socket is followed or refused
# (docs/SOCKET-PATHS.md), with a raw protocol client whose bytes take a
# chosen path (tests/wire/stream_paths.py), against PostgreSQL (UTF-8
# c3 95 27 escaped to c3 95 5c 27, read as SJIS) and MariaDB (UTF-8
# e4 bf 81 27 escaped to e4 bf 81 5c 27, read as GBK):
#  - followed: sendmmsg/recvmmsg, stdio streams (fdopen, fwrite, getc,
#    fread), dprintf, pwritev2 with RWF_NOWAIT and RWF_DSYNC, a duplicate
#    (dup) of the socket and a copy of it received with SCM_RIGHTS: the attack injects without the shim; with it
#    the server answers an error naming quoteguard, the marker never reaches
#    it and the connection works after; legitimate input gives the same
#    output with and without the shim;
#  - refused: the query written with sendfile or splice, the answer to the
#    SET of the encoding spliced out of the socket: the attack injects
#    without the shim; in enforce the call fails (EACCES) and the log names
#    quoteguard, nothing of it reaches the server and the connection works
#    after (the answer left unread is read the plain way, and the attack is
#    then blocked); in audit the call passes, said once.
#  - a socket whose start the shim did not see (inherited across exec, or
#    received with SCM_RIGHTS from another process): a query written on it
#    injects without the shim; in enforce the write fails (EACCES), named in
#    the log, and nothing reaches the server; in audit it passes, said once;
#  - sendfile and splice between descriptors that are not database
#    connections, and bytes that are no query on a socket inherited across
#    exec, under enforce, work as without the shim and log nothing;
#    copy_file_range into a database socket is refused by the kernel
#    (EINVAL) with and without the shim; pwritev2 with a flag the shim does
#    not know is refused (EACCES) where the kernel would refuse it too;
#    fcntl's commands with an int, a pointer or no argument answer as
#    without the shim.
# servers: pg mariadb
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
. tests/lib/shim.sh
. tests/lib/pg.sh
. tests/lib/mariadb.sh

qg_require_build
pg_available || tap_skip_all "no PostgreSQL server binaries (or not root)"
my_available || tap_skip_all "no MariaDB server binaries (or not root)"
pg_start || tap_bail "cannot start PostgreSQL"
my_start || tap_bail "cannot start MariaDB"
pg_psql -c "CREATE TABLE users(name text, secret text);
            INSERT INTO users VALUES ('alice', 'secret_alice'), ('bob', 'secret_bob'),
                                     ('o''hara', 'secret_ohara')" \
    || tap_bail "cannot create the PostgreSQL table"
my_sql -e "CREATE DATABASE qg;
           CREATE TABLE qg.users (name VARBINARY(64), secret VARCHAR(64));
           INSERT INTO qg.users VALUES ('alice', 'secret_alice'), ('bob', 'secret_bob'),
                                       ('o''hara', 'secret_ohara')" \
    || tap_bail "cannot create the MariaDB table"

PY=/usr/bin/python3
TAIL=27204f5220313d31202d2d20 # ' OR 1=1 --
secrets() { printf '%s\n' "$1" | grep -ac '^ROW: secret_'; }
declare -A ATTACK=([pg]=c395$TAIL [mysql]=e4bf81$TAIL)
declare -A SERVER_LOG=([pg]=$QG_PG_LOG [mysql]=$QG_MY_LOG)
PREFIX=()
client() { # PROTO PATH INPUT_HEX MARKER
    local proto=$1 socket=()
    shift
    [ "$proto" = mysql ] && socket=("$QG_MY_SOCKET")
    "${PREFIX[@]}" "$PY" tests/wire/stream_paths.py "$proto" "$@" "${socket[@]}" 2>&1
}
shimmed() { # MODE LOG PROTO PATH INPUT_HEX MARKER
    local PREFIX=(with_shim "$1" "$2")
    shift 2
    client "$@"
}

# The log has a blocked line, and its caller is not inside the shim.
blocked_outside_shim() { # LOG
    local line
    line=$(grep '"action":"blocked"' "$1") && [[ $line != *libquoteguard* ]]
}

injects_without_shim() { # PROTO PATH
    local marker=qgp_plain_${1}_${2//-/_}_$$ out
    out=$(client "$1" "$2" "${ATTACK[$1]}" "$marker")
    ok "$1 $2: without the shim the attack injects" [ "$(secrets "$out")" -eq 3 ]
    has "$(cat "${SERVER_LOG[$1]}")" "$marker" "$1 $2: without the shim the marker reaches the server"
}

for proto in pg mysql; do
    for path in sendmmsg stdio dprintf pwritev2 dup scm-rights; do
        tag="$proto $path"
        injects_without_shim $proto $path
        marker=qgp_enforce_${proto}_${path//-/_}_$$
        out=$(shimmed enforce "$QG_PG_DIR/$proto-$path.log" $proto $path "${ATTACK[$proto]}" "$marker")
        has "$out" "ERROR: quoteguard: blocked" "$tag: enforce: an error naming quoteguard"
        ok "$tag: enforce: the log names the program's call, or none, never one inside the shim" \
            blocked_outside_shim "$QG_PG_DIR/$proto-$path.log"
        ok "$tag: enforce: no secret leaks" [ "$(secrets "$out")" -eq 0 ]
        lacks "$(cat "${SERVER_LOG[$proto]}")" "$marker" "$tag: enforce: the attack never reaches the server"
        has "$out" "ROW: alive" "$tag: enforce: the connection works after the block"
        for legit in 616c696365 6f27686172615c; do # alice, o'hara\ (a quote, a backslash)
            plain=$(client $proto $path $legit qgp_legit_$$)
            with=$(shimmed enforce "$QG_PG_DIR/legit.log" $proto $path $legit qgp_legit_$$)
            ok "$tag: legitimate $legit: the same output with the shim" [ "$plain" = "$with" ]
        done
        has "$(client $proto $path 616c696365 qgp_legit_$$)" "ROW: secret_alice" \
            "$tag: legitimate input finds its row"
    done

    for path in sendfile splice splice-read; do
        tag="$proto $path"
        injects_without_shim $proto $path
        marker=qgp_enforce_${proto}_${path//-/_}_$$
        log=$QG_PG_DIR/$proto-$path.log
        out=$(shimmed enforce "$log" $proto $path "${ATTACK[$proto]}" "$marker")
        if [ $path = splice-read ]; then
            has "$out" "RECV-FAILED: Permission denied" "$tag: enforce: the splice out of the socket fails"
            has "$(cat "$log")" "quoteguard: refused (EACCES): bytes moved by splice out of a database connection's socket cannot be checked" \
                "$tag: enforce: the log names quoteguard and the refusal"
            has "$out" "ERROR: quoteguard: blocked" "$tag: enforce: read the plain way, the answer sets the state that blocks the attack"
        else
            has "$out" "SEND-FAILED: Permission denied" "$tag: enforce: the call fails"
            has "$(cat "$log")" "quoteguard: refused (EACCES): bytes moved by ${path} into a database connection's socket cannot be checked" \
                "$tag: enforce: the log names quoteguard and the refusal"
        fi
        ok "$tag: enforce: no secret leaks" [ "$(secrets "$out")" -eq 0 ]
        lacks "$(cat "${SERVER_LOG[$proto]}")" "$marker" "$tag: enforce: the attack never reaches the server"
        has "$out" "ROW: alive" "$tag: enforce: nothing half-sent, the connection works after"
        log=$QG_PG_DIR/$proto-$path-audit.log
        out=$(shimmed audit "$log" $proto $path "${ATTACK[$proto]}" qgp_audit_$$)
        ok "$tag: audit: the call passes" [ "$(secrets "$out")" -eq 3 ]
        ok "$tag: audit: said once" [ "$(grep -Ec '"wire_(write|read)_refused"' "$log")" -eq 1 ]
    done
done

for proto in pg mysql; do
    for path in exec scm-other; do
        tag="$proto $path"
        injects_without_shim $proto $path
        marker=qgp_enforce_${proto}_${path//-/_}_$$
        log=$QG_PG_DIR/$proto-$path.log
        out=$(shimmed enforce "$log" $proto $path "${ATTACK[$proto]}" "$marker")
        has "$out" "SEND-FAILED: Permission denied" "$tag: enforce: the query on a socket whose start was not seen fails"
        has "$(cat "$log")" "quoteguard: refused (EACCES): a query written on a socket whose start the shim did not see" \
            "$tag: enforce: the log names quoteguard and the refusal"
        ok "$tag: enforce: no secret leaks" [ "$(secrets "$out")" -eq 0 ]
        lacks "$(cat "${SERVER_LOG[$proto]}")" "$marker" "$tag: enforce: the attack never reaches the server"
        log=$QG_PG_DIR/$proto-$path-audit.log
        out=$(shimmed audit "$log" $proto $path "${ATTACK[$proto]}" qgp_audit_$$)
        ok "$tag: audit: the query passes" [ "$(secrets "$out")" -eq 3 ]
        ok "$tag: audit: said once" [ "$(grep -c '"wire_write_refused"' "$log")" -eq 1 ]
    done
done

# Not database connections: a file copied with sendfile, bytes spliced
# through a pipe into a socket pair, a socket inherited across exec, under
# enforce.
others='
import os, socket, tempfile
src = tempfile.TemporaryFile(); src.write(b"file bytes"); src.flush()
dst = tempfile.TemporaryFile()
print("sendfile:", os.sendfile(dst.fileno(), src.fileno(), 0, 10))
a, b = socket.socketpair(); r, w = os.pipe(); os.write(w, b"pipe bytes")
print("splice:", os.splice(r, a.fileno(), 10), b.recv(10))
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM); s.bind(("127.0.0.1", 0)); s.listen(1)
c = socket.create_connection(s.getsockname()); peer, _ = s.accept()
os.write(w, b"tcp bytes!")
print("splice tcp:", os.splice(r, c.fileno(), 10), peer.recv(10))
import subprocess, sys
x, y = socket.socketpair()
subprocess.run([sys.executable, "-c", "import os, sys; os.write(int(sys.argv[1]), b\"Q inherited bytes\")",
                str(x.fileno())], pass_fds=[x.fileno()], check=True)
print("inherited:", y.recv(64))
'
plain=$("$PY" -c "$others" 2>&1)
log=$QG_PG_DIR/others.log
with=$(with_shim enforce "$log" "$PY" -c "$others" 2>&1)
ok "sendfile and splice between other descriptors: the same with the shim" [ "$plain" = "$with" ]
has "$with" "splice tcp: 10 b'tcp bytes!'" "sendfile and splice between other descriptors: they work"
has "$with" "inherited: b'Q inherited bytes'" "a socket inherited across exec that carries no query: its bytes pass"
lacks "$(cat "$log" 2>/dev/null)" "refused" "sendfile and splice between other descriptors: nothing refused"

# fcntl passes each command's argument on as the C library's takes it: an
# int (F_SETFL, F_DUPFD), a pointer the kernel reads and writes (F_SETLK, and
# F_GETLK in a child that finds the parent's lock), or none (F_GETFL).
fcntl_args='
import fcntl, os, struct, tempfile
f = tempfile.TemporaryFile(); fd = f.fileno()
fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)
print("nonblocking:", bool(fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_NONBLOCK))
copy = fcntl.fcntl(fd, fcntl.F_DUPFD, 200)
print("F_DUPFD from 200:", copy >= 200, os.fstat(copy).st_ino == os.fstat(fd).st_ino)
flock = "hhqqi4x"
fcntl.fcntl(fd, fcntl.F_SETLK, struct.pack(flock, fcntl.F_WRLCK, os.SEEK_SET, 3, 7, 0))
pid = os.fork()
if pid == 0:
    got = struct.unpack(flock, fcntl.fcntl(fd, fcntl.F_GETLK, struct.pack(flock, fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)))
    print("lock seen from a child:", got[0] == fcntl.F_WRLCK, got[2:4], got[4] == os.getppid(), flush=True)
    os._exit(0)
os.waitpid(pid, 0)
'
plain=$("$PY" -c "$fcntl_args" 2>&1)
with=$(with_shim enforce "$QG_PG_DIR/fcntl.log" "$PY" -c "$fcntl_args" 2>&1)
has "$plain" "lock seen from a child: True (3, 7) True" "fcntl: the commands work without the shim"
ok "fcntl with an int, a pointer or no argument: the same with the shim" [ "$plain" = "$with" ] ||
    tap_diag "without: $plain / with: $with"

copy_range='
import os, socket, tempfile
f = tempfile.TemporaryFile(); f.write(b"Q"); f.flush()
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect("%s/.s.PGSQL.%s" % (os.environ["PGHOST"], os.environ["PGPORT"]))
try:
    os.copy_file_range(f.fileno(), s.fileno(), 1, 0)
    print("copied")
except OSError as e:
    print("errno", e.errno)
'
has "$("$PY" -c "$copy_range" 2>&1)" "errno 22" "copy_file_range into a database socket: the kernel refuses (EINVAL)"
has "$(with_shim enforce "$QG_PG_DIR/copy.log" "$PY" -c "$copy_range" 2>&1)" "errno 22" \
    "copy_file_range into a database socket: the kernel refuses (EINVAL) with the shim"

# pwritev2 with a flag the shim does not know (RWF_ATOMIC, 0x40) on a
# PostgreSQL connection: the kernel refuses it on a socket (EOPNOTSUPP);
# the shim refuses it first (EACCES), naming quoteguard.
unknown_flag='
import os, socket, struct
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect("%s/.s.PGSQL.%s" % (os.environ["PGHOST"], os.environ["PGPORT"]))
body = struct.pack("!I", 196608) + b"user\0" + os.environ["PGUSER"].encode() + b"\0database\0" + \
    os.environ["PGDATABASE"].encode() + b"\0\0"
s.sendall(struct.pack("!I", len(body) + 4) + body)
got = b""
while not got.endswith(b"Z\0\0\0\x05I"):
    got += s.recv(4096)
try:
    os.pwritev(s.fileno(), [b"Q\0\0\0\x0dSELECT 1\0"], -1, 0x40)
    print("written")
except OSError as e:
    print("errno", e.errno)
'
has "$("$PY" -c "$unknown_flag" 2>&1)" "errno 95" "pwritev2 with an unknown flag: the kernel refuses it on a socket (EOPNOTSUPP)"
log=$QG_PG_DIR/unknown-flag.log
has "$(with_shim enforce "$log" "$PY" -c "$unknown_flag" 2>&1)" "errno 13" \
    "pwritev2 with an unknown flag on a database socket: refused with the shim (EACCES)"
has "$(cat "$log")" "quoteguard: refused (EACCES): bytes moved by pwritev2 with flags not known to the shim into a database connection's socket" \
    "pwritev2 with an unknown flag: the log names quoteguard and the refusal"

tap_done
