"""A PostgreSQL client whose one write holds a Query and then a message no
framing can follow (a length of 3): prints what became of the write and
every answer the server gave.
   python3 pg_unframed.py SOCKET_DIR PORT USER DATABASE"""
import socket
import struct
import sys

sock_dir, port, user, database = sys.argv[1:5]
s = socket.socket(socket.AF_UNIX)
s.connect("%s/.s.PGSQL.%s" % (sock_dir, port))
params = b"user\0%s\0database\0%s\0client_encoding\0UTF8\0\0" % (user.encode(), database.encode())
s.sendall(struct.pack("!ii", 8 + len(params), 196608) + params)


def answers():
    data = b""
    while True:
        while len(data) >= 5 and len(data) >= 1 + struct.unpack("!i", data[1:5])[0]:
            n = 1 + struct.unpack("!i", data[1:5])[0]
            yield data[:1], data[5:n]
            data = data[n:]
        more = s.recv(65536)
        if not more:
            return
        data += more


reader = answers()
for kind, body in reader:
    if kind == b"Z":
        break
sql = b"SELECT 'unframed_' || 41\0"
try:
    s.sendall(b"Q" + struct.pack("!i", 4 + len(sql)) + sql + b"Q\0\0\0\x03junk")
    print("WRITE: sent")
except OSError as e:
    print("WRITE: errno", e.errno)
for kind, body in reader:
    if kind == b"D":
        print("ROW:", body[6:].decode())
    elif kind == b"E":
        print("SERVER ERROR:", body.decode("latin-1").replace("\0", " "))
print("END")
