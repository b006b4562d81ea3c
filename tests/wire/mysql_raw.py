"""A MySQL client that speaks the protocol over a raw socket (as root without
a password, database qg), so that a test chooses exactly how its reads and
writes are split.
   python3 mysql_raw.py SOCKET SCENARIO CHARSET INPUT_HEX MARKER
The handshake response asks for CHARSET's default collation; INPUT_HEX is the
application's input, escaped byte-wise (backslash before quote and
backslash) into
   SELECT /*MARKER*/ secret FROM users WHERE name = '<escaped>'
SCENARIO:
   split-greeting   the greeting and every answer read as the 4-byte packet
                    header, then the body
Prints ROW: value and ERROR: message for each answer, then ROW: alive from a
query after it on the same connection."""
import socket
import struct
import sys

from mysql_proto import lenenc, packet_io

path, scenario, charset, hexinput, marker = sys.argv[1:6]
COLLATIONS = {"gbk": 28, "sjis": 13, "big5": 1, "utf8mb4": 45}

sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.connect(path)
recv_exact, packet, send = packet_io(sock)


def run(sql):
    send(0, b"\x03" + sql)
    _, first = packet()
    if first[0] == 0xff:
        print("ERROR:", first[9:].decode("latin-1"))
        return
    if first[0] == 0x00:
        return
    columns, _ = lenenc(first, 0)
    for _ in range(columns):
        packet()
    packet()  # EOF after the column definitions
    while True:
        _, row = packet()
        if row[0] == 0xfe and len(row) < 9:
            return
        if row[0] == 0xff:
            print("ERROR:", row[9:].decode("latin-1"))
            return
        values, offset = [], 0
        for _ in range(columns):
            size, offset = lenenc(row, offset)
            values.append(b"NULL" if size is None else row[offset:offset + size])
            offset += size or 0
        print("ROW:", b"|".join(values).decode("latin-1"))


if scenario != "split-greeting":
    raise SystemExit("unknown scenario " + scenario)
seq, greeting = packet()
caps = 0x0001 | 0x0008 | 0x0200 | 0x2000 | 0x8000 | 0x80000  # long password, db, 4.1, transactions, secure, plugin auth
response = (struct.pack("<IIB", caps, 1 << 24, COLLATIONS[charset]) + b"\0" * 23 +
            b"root\0" + b"\0" + b"qg\0" + b"mysql_native_password\0")
send(seq + 1, response)
_, answer = packet()
if answer[0] != 0x00:
    raise SystemExit("authentication failed: %r" % answer)
raw = bytes.fromhex(hexinput)
escaped = raw.replace(b"\\", b"\\\\").replace(b"'", b"\\'")
run(b"SELECT /*" + marker.encode() + b"*/ secret FROM users WHERE name = '" + escaped + b"'")
run(b"SELECT 'alive'")
send(0, b"\x01")
sock.close()
