"""A PostgreSQL client that speaks the v3 protocol over a raw socket, so that
a test chooses exactly how its bytes are split into calls and which messages
go out before the answers to earlier ones.  Connection from PGHOST (a unix
socket directory), PGPORT, PGUSER, PGDATABASE.
   python3 pg_raw.py SCENARIO INPUT_HEX MARKER
INPUT_HEX is the application's input; the program escapes it byte-wise
(backslash before quote and backslash, as addslashes does) into
   SELECT /*MARKER*/ secret FROM users WHERE name = '<escaped>'
SCENARIO says how the connection is used:
   split-startup    the StartupMessage written as its 4-byte length and then
                    the rest; then SET standard_conforming_strings TO off,
                    SET client_encoding TO 'SJIS' and the query, each answered
                    before the next
   pipeline-simple  SET standard_conforming_strings TO off (answered), then
                    Query(SET client_encoding TO 'SJIS') and Query(the query)
                    in one write
   pipeline-extended  the SET client_encoding as Parse/Bind/Execute/Sync, then
                    Query(the query), in one write
   pwritev          as split-startup, but with the StartupMessage in one
                    call and every later write and read made with pwritev2 and
                    preadv2 at offset -1 (os.pwritev, os.preadv)
   with-startup     the StartupMessage (options client_encoding=SJIS,
                    standard_conforming_strings=off) and Query(the query) in
                    one write
   threads          as split-startup, then a second thread writes
                    QG_RAW_THREAD_QUERIES (default 50) queries (SELECT 'rN'),
                    each its own write, and the query after them, while the
                    first reads their answers as they come: both threads use
                    the connection at once.  With thousands, the server's
                    answers fill the socket and it stops reading, so the
                    writer's writes wait for room that only the reader makes;
                    a shim that kept a waiting write's turn from the reader
                    would hang, which the watchdog turns into "HANG" and
                    exit status 3 after 120 seconds
   send-timeout     as split-startup, then queries written with SO_SNDTIMEO
                    of 1 s and never read until a write stops short or
                    fails with EAGAIN: prints how long that write took
   with-startup-default  the same without client_encoding: the server
                    takes the database's encoding and names it only in
                    its answer
Each answer is printed: ROW: value, ERROR: message; the last line, ALIVE:
alive, comes from a query after them on the same connection."""
import os
import socket
import struct
import sys
import threading
import time

scenario, hexinput, marker = sys.argv[1:4]


def start_watchdog():
    """After 120 seconds: "HANG" and exit status 3."""
    def hang():
        print("HANG", flush=True)
        os._exit(3)

    watchdog = threading.Timer(120, hang)
    watchdog.daemon = True
    watchdog.start()
    return watchdog


def message(kind, body):
    return kind + struct.pack("!I", len(body) + 4) + body


def query(sql):
    return message(b"Q", sql + b"\0")


def startup(params):
    body = struct.pack("!I", 196608)
    for key, value in params:
        body += key + b"\0" + value + b"\0"
    body += b"\0"
    return struct.pack("!I", len(body) + 4) + body


sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.connect("%s/.s.PGSQL.%s" % (os.environ["PGHOST"], os.environ["PGPORT"]))
buffered = b""


def receive():
    if scenario == "pwritev":
        buf = bytearray(65536)
        return bytes(buf[:os.preadv(sock.fileno(), [buf], -1)])
    return sock.recv(65536)


def send(data):
    if scenario != "pwritev":
        return sock.sendall(data)
    while data:
        data = data[os.pwritev(sock.fileno(), [data], -1):]


def recv_exact(n):
    global buffered
    while len(buffered) < n:
        chunk = receive()
        if not chunk:
            raise SystemExit("EOF from the server")
        buffered += chunk
    out, buffered = buffered[:n], buffered[n:]
    return out


def answers(ready_count):
    """Reads until ready_count ReadyForQuery messages, printing rows and errors."""
    while ready_count > 0:
        kind = recv_exact(1)
        (length,) = struct.unpack("!I", recv_exact(4))
        body = recv_exact(length - 4)
        if kind == b"D":
            (columns,) = struct.unpack("!H", body[:2])
            offset = 2
            values = []
            for _ in range(columns):
                (size,) = struct.unpack("!i", body[offset:offset + 4])
                offset += 4
                values.append(body[offset:offset + size] if size >= 0 else b"NULL")
                offset += max(size, 0)
            print("ROW:", b"|".join(values).decode("latin-1"))
        elif kind == b"E":
            fields = dict((f[:1], f[1:]) for f in body.split(b"\0") if f)
            print("ERROR:", fields.get(b"M", b"").decode("latin-1"))
        elif kind == b"Z":
            ready_count -= 1
        elif kind == b"R" and body[:4] != b"\0\0\0\0":
            raise SystemExit("authentication other than trust is not spoken here")


raw = bytes.fromhex(hexinput)
escaped = raw.replace(b"\\", b"\\\\").replace(b"'", b"\\'")
attack = b"SELECT /*" + marker.encode() + b"*/ secret FROM users WHERE name = '" + escaped + b"'"
params = [(b"user", os.environ["PGUSER"].encode()), (b"database", os.environ["PGDATABASE"].encode())]

if scenario in ("with-startup", "with-startup-default"):
    if scenario == "with-startup":
        params += [(b"client_encoding", b"SJIS")]
    params += [(b"standard_conforming_strings", b"off")]
    sock.sendall(startup(params) + query(attack))
    answers(2)
else:
    first = startup(params)
    if scenario == "split-startup":
        sock.sendall(first[:4])
        sock.sendall(first[4:])
    else:
        sock.sendall(first)
    answers(1)
    send(query(b"SET standard_conforming_strings TO off"))
    answers(1)
    set_sjis = b"SET client_encoding TO 'SJIS'"
    if scenario in ("split-startup", "pwritev"):
        send(query(set_sjis))
        answers(1)
        send(query(attack))
        answers(1)
    elif scenario == "threads":
        send(query(set_sjis))
        answers(1)
        count = int(os.environ.get("QG_RAW_THREAD_QUERIES", "50"))
        watchdog = start_watchdog()

        def writer():
            for i in range(count):
                sock.sendall(query(b"SELECT 'r%d'" % i))
            sock.sendall(query(attack))

        thread = threading.Thread(target=writer)
        thread.start()
        answers(count + 1)
        thread.join()
        watchdog.cancel()
    elif scenario == "send-timeout":
        # Queries written and never read: the server's answers fill the
        # socket, it stops reading, and a write waits until SO_SNDTIMEO
        # ends it with a short count or EAGAIN.
        watchdog = start_watchdog()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack("ll", 1, 0))
        filler = query(b"SELECT '" + b"x" * 4000 + b"'")
        while True:
            began = time.monotonic()
            try:
                if sock.send(filler) < len(filler):
                    break
            except BlockingIOError:
                break
        print("STOPPED after %.1f s" % (time.monotonic() - began), flush=True)
        os._exit(0)
    elif scenario == "pipeline-simple":
        sock.sendall(query(set_sjis) + query(attack))
        answers(2)
    elif scenario == "pipeline-extended":
        extended = (message(b"P", b"\0" + set_sjis + b"\0\0\0") +
                    message(b"B", b"\0\0\0\0\0\0\0\0") +
                    message(b"E", b"\0\0\0\0\0") + message(b"S", b""))
        sock.sendall(extended + query(attack))
        answers(2)
    else:
        raise SystemExit("unknown scenario " + scenario)
send(query(b"SELECT 'alive'"))
answers(1)
sock.sendall(message(b"X", b""))
sock.close()
