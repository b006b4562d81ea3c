"""A raw protocol client (PostgreSQL v3 or MySQL) whose bytes take a chosen
way to and from the socket, for the wire front's paths
(docs/SOCKET-PATHS.md).
   python3 stream_paths.py pg PATH INPUT_HEX MARKER
   python3 stream_paths.py mysql PATH INPUT_HEX MARKER SOCKET
PostgreSQL from PGHOST (a unix socket directory), PGPORT, PGUSER,
PGDATABASE: SET standard_conforming_strings TO off, then SET
client_encoding TO 'SJIS'.  MySQL as root without a password, database qg,
utf8mb4 in the handshake, then SET NAMES gbk.  INPUT_HEX is the
application's input, escaped byte-wise (a backslash before quote and
backslash, as addslashes does) into
   SELECT /*MARKER*/ secret FROM users WHERE name = '<escaped>'
PATH, the way bytes go:
   sendmmsg    every write with sendmmsg (each as two messages: its first
               byte, then the rest), every read with recvmmsg (two buffers)
   stdio       the socket as two stdio streams (fdopen "w" and "r"): fwrite
               and fflush out, getc and fread in
   pwritev2    every write with pwritev2 at offset -1 with RWF_NOWAIT and
               RWF_DSYNC (os.pwritev), waiting when the socket is full
   dprintf     every write with dprintf ("%s" for each run of bytes other
               than NUL, "%c" for each NUL)
   dup         every write after the connection starts through a duplicate
               (dup) of the socket
   scm-rights  every write after the connection starts through a copy of
               the socket received from the process itself with SCM_RIGHTS
   sendfile    the query written with sendfile from a file
   splice      the query written into a pipe, then spliced into the socket
   splice-read the first bytes of the answer to the SET of the encoding
               spliced out of the socket into a pipe and read from there
   exec        the query written after the program executed itself anew,
               through the socket it inherited (after-exec: that second
               program, QG_INHERITED_FD the descriptor)
   scm-other   the connection made in a child process (fork), which sends
               it to the parent with SCM_RIGHTS; the parent writes the query
A write or read the system refuses prints SEND-FAILED: or RECV-FAILED: and
the error; the query then goes (or the answer is read) the plain way.
Prints ROW: value and ERROR: message for each answer, and last ROW: alive
from a query sent the plain way on the same connection."""
import ctypes
import os
import select
import socket
import struct
import sys
import tempfile

from mysql_proto import lenenc

proto, path, hexinput, marker = sys.argv[1:5]
libc = ctypes.CDLL(None, use_errno=True)  # the process's own symbols: the shim's first


class IOVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


class MsgHdr(ctypes.Structure):
    _fields_ = [("name", ctypes.c_void_p), ("namelen", ctypes.c_uint32),
                ("iov", ctypes.POINTER(IOVec)), ("iovlen", ctypes.c_size_t),
                ("control", ctypes.c_void_p), ("controllen", ctypes.c_size_t),
                ("flags", ctypes.c_int)]


class MMsgHdr(ctypes.Structure):
    _fields_ = [("hdr", MsgHdr), ("len", ctypes.c_uint)]


def failed(what):
    err = ctypes.get_errno()
    return OSError(err, os.strerror(err), what)


def sendmmsg(fd, data):
    """Writes data as two messages of one sendmmsg: the count taken."""
    parts = [data[:1], data[1:]] if len(data) > 1 else [data]
    buffers = [ctypes.create_string_buffer(p, len(p)) for p in parts]
    iovs = [IOVec(ctypes.cast(b, ctypes.c_void_p), len(p)) for b, p in zip(buffers, parts)]
    vec = (MMsgHdr * len(parts))()
    for i, iov in enumerate(iovs):
        vec[i].hdr.iov = ctypes.pointer(iov)
        vec[i].hdr.iovlen = 1
    sent = libc.sendmmsg(fd, vec, len(parts), 0)
    if sent < 0:
        raise failed("sendmmsg")
    return sum(vec[i].len for i in range(sent))


def recvmmsg(fd):
    """Reads with recvmmsg into two buffers (MSG_WAITFORONE)."""
    buffers = [ctypes.create_string_buffer(16384) for _ in range(2)]
    iovs = [IOVec(ctypes.cast(b, ctypes.c_void_p), 16384) for b in buffers]
    vec = (MMsgHdr * 2)()
    for i, iov in enumerate(iovs):
        vec[i].hdr.iov = ctypes.pointer(iov)
        vec[i].hdr.iovlen = 1
    got = libc.recvmmsg(fd, vec, 2, 0x10000, None)  # MSG_WAITFORONE
    if got < 0:
        raise failed("recvmmsg")
    return b"".join(buffers[i].raw[:vec[i].len] for i in range(got))


libc.fdopen.restype = ctypes.c_void_p
libc.fdopen.argtypes = [ctypes.c_int, ctypes.c_char_p]
libc.fwrite.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_void_p]
libc.fread.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_void_p]
libc.fflush.argtypes = [ctypes.c_void_p]
libc.getc.argtypes = [ctypes.c_void_p]
libc.fileno.argtypes = [ctypes.c_void_p]


class Conn:
    def __init__(self, sock):
        self.sock = sock
        self.fd = sock.fileno()
        self.out_fd = self.fd
        self.buffered = b""
        self.reader = self.writer = None
        if path == "stdio":
            self.writer = libc.fdopen(self.fd, b"w")
            self.reader = libc.fdopen(self.fd, b"r")
            if not self.writer or not self.reader:
                raise failed("fdopen")
            if libc.fileno(self.writer) != self.fd:
                raise SystemExit("fileno() of the stream is not the socket")

    def started(self):
        """The connection is up: dup and scm-rights write through a copy."""
        if path == "dup":
            self.out_fd = os.dup(self.fd)
        elif path == "scm-rights":
            left, right = socket.socketpair()
            left.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("i", self.fd))])
            _, control, _, _ = right.recvmsg(1, socket.CMSG_SPACE(4))
            self.out_fd = struct.unpack("i", control[0][2][:4])[0]
            left.close()
            right.close()

    def send(self, data, way=None):
        way = way or path
        if way == "stdio":
            if libc.fwrite(data, 1, len(data), self.writer) != len(data) or libc.fflush(self.writer):
                raise failed("fwrite")
            return
        if way == "sendfile" or way == "splice":
            return self.send_moved(data, way)
        while data:
            if way == "sendmmsg":
                n = sendmmsg(self.out_fd, data)
            elif way == "dprintf":
                n = self.dprintf(data)
            elif way == "pwritev2":
                try:
                    n = os.pwritev(self.out_fd, [data], -1, os.RWF_NOWAIT | os.RWF_DSYNC)
                except BlockingIOError:
                    select.select([], [self.out_fd], [])
                    continue
            else:
                n = os.write(self.out_fd, data)
            data = data[n:]

    def dprintf(self, data):
        run = data.split(b"\0", 1)[0]
        if run:
            n = libc.dprintf(self.out_fd, b"%s", run)
        else:
            n = libc.dprintf(self.out_fd, b"%c", 0)
        if n < 0:
            raise failed("dprintf")
        return n

    def send_moved(self, data, way):
        with tempfile.TemporaryFile() as f:
            f.write(data)
            f.flush()
            r, w = os.pipe()
            os.write(w, data)
            offset = 0
            while offset < len(data):
                if way == "sendfile":
                    n = os.sendfile(self.out_fd, f.fileno(), offset, len(data) - offset)
                else:
                    n = os.splice(r, self.out_fd, len(data) - offset)
                offset += n
            os.close(r)
            os.close(w)

    def receive(self, way=None):
        way = way or path
        if way == "sendmmsg":
            return recvmmsg(self.fd)
        if way == "splice-read":
            r, w = os.pipe()
            try:
                n = os.splice(self.fd, w, 65536)
                return os.read(r, n)
            finally:
                os.close(r)
                os.close(w)
        return self.sock.recv(65536)

    def fill(self, way):
        chunk = self.receive(way)
        if not chunk:
            raise SystemExit("EOF from the server")
        self.buffered += chunk

    def recv_exact(self, n, way=None):
        if (way or path) == "stdio":
            if n == 1:
                c = libc.getc(self.reader)
                if c < 0:
                    raise SystemExit("EOF from the server")
                return bytes([c])
            buf = ctypes.create_string_buffer(n)
            if libc.fread(buf, 1, n, self.reader) != n:
                raise SystemExit("EOF from the server")
            return buf.raw
        while len(self.buffered) < n:
            self.fill(way)
        out, self.buffered = self.buffered[:n], self.buffered[n:]
        return out


def attempt(action, label):
    """Runs action; False (after printing label-FAILED:) when the system refused it."""
    try:
        action()
        return True
    except OSError as e:
        print("%s-FAILED: %s" % (label, os.strerror(e.errno)))
        return False


def query_text():
    raw = bytes.fromhex(hexinput)
    escaped = raw.replace(b"\\", b"\\\\").replace(b"'", b"\\'")
    return b"SELECT /*" + marker.encode() + b"*/ secret FROM users WHERE name = '" + escaped + b"'"


def prefetch(conn):
    """splice-read: the first bytes of the answer to the SET of the encoding
    through a pipe (the rest, or all of it when refused, the plain way)."""
    if path == "splice-read":
        attempt(lambda: conn.fill("splice-read"), "RECV")


PLAIN = "plain"
REFUSABLE_WRITE = ("sendfile", "splice")


def query_way():
    return path if path in REFUSABLE_WRITE else None


def start_way():
    return PLAIN if path in REFUSABLE_WRITE + ("splice-read",) else None


# ---------------------------------------------------------------- PostgreSQL

def pg_message(kind, body):
    return kind + struct.pack("!I", len(body) + 4) + body


def pg_answers(conn, way=None):
    """Reads until ReadyForQuery, printing rows and errors."""
    while True:
        kind = conn.recv_exact(1, way)
        (length,) = struct.unpack("!I", conn.recv_exact(4, way))
        body = conn.recv_exact(length - 4, way)
        if kind == b"D":
            (size,) = struct.unpack("!i", body[2:6])
            print("ROW:", body[6:6 + size].decode("latin-1"))
        elif kind == b"E":
            fields = dict((f[:1], f[1:]) for f in body.split(b"\0") if f)
            print("ERROR:", fields.get(b"M", b"").decode("latin-1"))
        elif kind == b"R" and body[:4] != b"\0\0\0\0":
            raise SystemExit("authentication other than trust is not spoken here")
        elif kind == b"Z":
            return


def pg_run(conn, sql, way=None, read_way=None):
    if attempt(lambda: conn.send(pg_message(b"Q", sql + b"\0"), way), "SEND"):
        pg_answers(conn, read_way)


def pg_setup():
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect("%s/.s.PGSQL.%s" % (os.environ["PGHOST"], os.environ["PGPORT"]))
    conn = Conn(sock)
    body = struct.pack("!I", 196608)
    for key, value in ((b"user", os.environ["PGUSER"]), (b"database", os.environ["PGDATABASE"])):
        body += key + b"\0" + value.encode() + b"\0"
    conn.send(struct.pack("!I", len(body) + 5) + body + b"\0", start_way())
    pg_answers(conn, start_way())
    conn.started()
    pg_run(conn, b"SET standard_conforming_strings TO off", start_way(), start_way())
    set_sjis = pg_message(b"Q", b"SET client_encoding TO 'SJIS'\0")
    conn.send(set_sjis, start_way())
    prefetch(conn)
    pg_answers(conn, start_way())
    return conn


def pg_queries(conn):
    pg_run(conn, query_text(), query_way(), start_way())
    pg_run(conn, b"SELECT 'alive'", PLAIN, PLAIN)
    conn.send(pg_message(b"X", b""), PLAIN)


# --------------------------------------------------------------------- MySQL

def my_packet(conn, way=None):
    header = conn.recv_exact(4, way)
    length = header[0] | header[1] << 8 | header[2] << 16
    return header[3], conn.recv_exact(length, way)


def my_send(conn, seq, payload, way=None):
    conn.send(struct.pack("<I", len(payload))[:3] + bytes([seq]) + payload, way)


def my_answer(conn, way=None):
    _, first = my_packet(conn, way)
    if first[0] == 0xff:
        print("ERROR:", first[9:].decode("latin-1"))
        return
    if first[0] == 0x00:
        return
    columns, _ = lenenc(first, 0)
    for _ in range(columns + 1):  # the definitions, then EOF
        my_packet(conn, way)
    while True:
        _, row = my_packet(conn, way)
        if row[0] == 0xfe and len(row) < 9:
            return
        if row[0] == 0xff:
            print("ERROR:", row[9:].decode("latin-1"))
            return
        size, offset = lenenc(row, 0)
        print("ROW:", b"NULL" if size is None else row[offset:offset + size].decode("latin-1"))


def my_run(conn, sql, way=None, read_way=None):
    if attempt(lambda: my_send(conn, 0, b"\x03" + sql, way), "SEND"):
        my_answer(conn, read_way)


def my_setup():
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(sys.argv[5])
    conn = Conn(sock)
    seq, _ = my_packet(conn, start_way())
    caps = 0x0001 | 0x0008 | 0x0200 | 0x2000 | 0x8000 | 0x80000
    response = (struct.pack("<IIB", caps, 1 << 24, 45) + b"\0" * 23 +  # utf8mb4_general_ci
                b"root\0" + b"\0" + b"qg\0" + b"mysql_native_password\0")
    my_send(conn, seq + 1, response, start_way())
    _, answer = my_packet(conn, start_way())
    if answer[0] != 0x00:
        raise SystemExit("authentication failed: %r" % answer)
    conn.started()
    my_send(conn, 0, b"\x03SET NAMES gbk", start_way())
    prefetch(conn)
    my_answer(conn, start_way())
    return conn


def my_queries(conn):
    my_run(conn, query_text(), query_way(), start_way())
    my_run(conn, b"SELECT 'alive'", PLAIN, PLAIN)
    my_send(conn, 0, b"\x01", PLAIN)


def from_fd(fd):
    return Conn(socket.socket(fileno=fd))


setup, queries = (pg_setup, pg_queries) if proto == "pg" else (my_setup, my_queries)
if path == "after-exec":
    queries(from_fd(int(os.environ["QG_INHERITED_FD"])))
elif path == "scm-other":
    left, right = socket.socketpair()
    child = os.fork()
    if child == 0:
        conn = setup()
        left.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("i", conn.fd))])
        sys.stdout.flush()
        os._exit(0)
    _, control, _, _ = right.recvmsg(1, socket.CMSG_SPACE(4))
    os.waitpid(child, 0)
    queries(from_fd(struct.unpack("i", control[0][2][:4])[0]))
else:
    conn = setup()
    if path == "exec":
        os.set_inheritable(conn.fd, True)
        sys.stdout.flush()
        os.environ["QG_INHERITED_FD"] = str(conn.fd)
        os.execv(sys.executable, [sys.executable, sys.argv[0], proto, "after-exec"] + sys.argv[3:])
    queries(conn)
sys.stdout.flush()
os._exit(0)
