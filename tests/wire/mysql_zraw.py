"""A MySQL client that speaks the compressed protocol over a raw socket (as
root without a password, database qg), so that a test chooses exactly how
its frames are made and cut.
   python3 mysql_zraw.py SOCKET SCENARIO CHARSET INPUT_HEX MARKER
The handshake response asks for CLIENT_COMPRESS and CHARSET's default
collation; INPUT_HEX is the application's input, escaped byte-wise
(backslash before quote and backslash) into
   SELECT /*MARKER*/ secret FROM users WHERE name = '<escaped>'
SCENARIO:
   frames   the query's packet cut across two compressed frames, each
            written a byte per call
   long     the query's frame says it inflates to more bytes than it does
            (a server takes what inflates)
   corrupt  the query's frame is not a zlib stream
Prints ROW: value and ERROR: message for each answer, the sequence number
of the answer's first frame and how many frames the query went in, then
ROW: alive from a query after it on the same connection; WRITE: errno N
when a write fails."""
import socket
import struct
import sys
import zlib

from mysql_proto import lenenc, packet_io

path, scenario, charset, hexinput, marker = sys.argv[1:6]
COLLATIONS = {"gbk": 28, "utf8mb4": 45}

sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.connect(path)
recv_exact, packet, send = packet_io(sock)


# ------------------------------------------------ compressed frames
inflated = b""
first_seq = None


def frame_in():
    global inflated, first_seq
    header = recv_exact(7)
    size = header[0] | header[1] << 8 | header[2] << 16
    plain = header[4] | header[5] << 8 | header[6] << 16
    if first_seq is None:
        first_seq = header[3]
    body = recv_exact(size)
    inflated += zlib.decompress(body) if plain else body


def zpacket():
    global inflated
    while len(inflated) < 4 or len(inflated) < 4 + int.from_bytes(inflated[:3], "little"):
        frame_in()
    length = int.from_bytes(inflated[:3], "little")
    body = inflated[4:4 + length]
    inflated = inflated[4 + length:]
    return body


def frame(seq, plain, claimed=None, corrupt=False):
    body = zlib.compress(plain)
    if corrupt:
        body = body[:2] + bytes(b ^ 0x5a for b in body[2:])
    size = len(plain) if claimed is None else claimed
    return struct.pack("<I", len(body))[:3] + bytes([seq]) + struct.pack("<I", size)[:3] + body


def write(data, bytewise=False):
    try:
        if bytewise:
            for i in range(len(data)):
                sock.sendall(data[i:i + 1])
        else:
            sock.sendall(data)
    except OSError as e:
        print("WRITE: errno", e.errno)
        raise SystemExit(0)


def run(sql, how="one"):
    global first_seq
    first_seq = None
    command = struct.pack("<I", len(sql) + 1)[:3] + b"\0" + b"\x03" + sql
    if how == "frames":
        cut = len(command) // 2
        write(frame(0, command[:cut]), True)
        write(frame(1, command[cut:]), True)
        sent = 2
    else:
        write(frame(0, command, len(command) + 100 if how == "long" else None, how == "corrupt"))
        sent = 1
    first = zpacket()
    print("ANSWER SEQ:", first_seq, "after", sent, "frames")
    if first[0] == 0xff:
        print("ERROR:", first[9:].decode("latin-1"))
        return
    if first[0] == 0x00:
        return
    columns, _ = lenenc(first, 0)
    for _ in range(columns):
        zpacket()
    zpacket()  # EOF after the column definitions
    while True:
        row = zpacket()
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


seq, greeting = packet()
caps = 0x0001 | 0x0008 | 0x0020 | 0x0200 | 0x2000 | 0x8000 | 0x80000  # ... compress, 4.1, secure, plugin auth
response = (struct.pack("<IIB", caps, 1 << 24, COLLATIONS[charset]) + b"\0" * 23 +
            b"root\0" + b"\0" + b"qg\0" + b"mysql_native_password\0")
send(seq + 1, response)
_, answer = packet()
if answer[0] != 0x00:
    raise SystemExit("authentication failed: %r" % answer)
raw = bytes.fromhex(hexinput)
escaped = raw.replace(b"\\", b"\\\\").replace(b"'", b"\\'")
try:
    run(b"SELECT /*" + marker.encode() + b"*/ secret FROM users WHERE name = '" + escaped + b"'",
        scenario)
    run(b"SELECT 'alive'")
except (SystemExit, zlib.error, ConnectionError) as e:
    print("END:", e)
sock.close()
