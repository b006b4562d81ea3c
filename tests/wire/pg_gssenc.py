"""A client that asks PostgreSQL for GSSAPI encryption (GSSENCRequest), as
libpq does with gssencmode=prefer when it holds Kerberos credentials.  Over
TCP the server answers 'G'; the client then writes its first GSSAPI token
(length-prefixed, as libpq frames them).  Prints the answer and what became
of the write.
   python3 pg_gssenc.py HOST PORT"""
import socket
import struct
import sys

host, port = sys.argv[1], int(sys.argv[2])
s = socket.create_connection((host, port))
s.sendall(struct.pack("!ii", 8, 80877104))
answer = s.recv(1)
print("ANSWER:", answer.decode())
if answer == b"G":
    token = b"\x60\x82\x01\x00" + b"\x00" * 60  # an ASN.1 GSS-API token's start
    try:
        s.sendall(struct.pack("!i", len(token)) + token)
        print("WRITE: sent")
    except OSError as e:
        print("WRITE: errno", e.errno)
s.close()
