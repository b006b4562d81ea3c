"""A client that starts TLS at a PostgreSQL connection's first byte, as
PostgreSQL 17's sslnegotiation=direct does (asyncpg's direct_tls, pgjdbc's
sslNegotiation=direct): the ClientHello, made by Python's ssl module over
memory BIOs as asyncio does, offers the ALPN protocol given (postgresql,
or http/1.1 for a TLS connection of another kind).  Prints what became of
the write and what the server answered.
   python3 pg_direct_tls.py HOST PORT ALPN"""
import socket
import ssl
import sys

host, port, alpn = sys.argv[1], int(sys.argv[2]), sys.argv[3]
context = ssl.create_default_context()
context.check_hostname = False
context.verify_mode = ssl.CERT_NONE
context.set_alpn_protocols([alpn])
incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
tls = context.wrap_bio(incoming, outgoing, server_hostname=host)
try:
    tls.do_handshake()
except ssl.SSLWantReadError:
    pass
hello = outgoing.read()
s = socket.create_connection((host, port))
try:
    s.sendall(hello)
    print("WRITE: sent", len(hello))
except OSError as e:
    print("WRITE: errno", e.errno)
    sys.exit(0)
s.settimeout(10)
try:
    answer = s.recv(4096)
    print("ANSWER:", "closed" if not answer else "%d bytes" % len(answer))
except OSError as e:
    print("ANSWER: errno", e.errno)
s.close()
