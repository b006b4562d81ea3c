"""PostgreSQL over TLS the way asyncio drivers (asyncpg, aiopg) do it: the
system OpenSSL over memory BIOs, the socket written by the event loop
outside any SSL call, so the SSL object has no descriptor.  Runs one query
and prints its row.
   python3 pg_tls_asyncio.py HOST PORT USER DATABASE MARKER"""
import asyncio
import ssl
import struct
import sys

host, port, user, database, marker = sys.argv[1:6]


async def message(reader):
    head = await reader.readexactly(5)
    return head[:1], await reader.readexactly(struct.unpack("!i", head[1:])[0] - 4)


async def main():
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(struct.pack("!ii", 8, 80877103))
    if await reader.readexactly(1) != b"S":
        sys.exit("the server refused TLS")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    await writer.start_tls(ctx)
    params = b"user\0" + user.encode() + b"\0database\0" + database.encode() + b"\0\0"
    writer.write(struct.pack("!ii", 8 + len(params), 196608) + params)
    while (await message(reader))[0] != b"Z":
        pass
    sql = b"SELECT /*" + marker.encode() + b"*/ 'row_' || 42\0"
    writer.write(b"Q" + struct.pack("!i", 4 + len(sql)) + sql)
    while True:
        kind, body = await message(reader)
        if kind == b"D":
            print("ROW:", body[6:].decode())
        elif kind == b"E":
            print("ERROR:", body.decode("latin-1"))
        elif kind == b"Z":
            break
    writer.close()


asyncio.run(main())
