"""Other socket users beside a database connection, in one process: a TCP
echo of 1 MiB of random bytes (client and server threads) and a MySQL query.
Prints digests, so that runs with and without the shim can be compared.
   python3 other_sockets.py SOCKET"""
import hashlib
import os
import socket
import sys
import threading

import pymysql

payload = os.urandom(1 << 20)
listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
listener.bind(("127.0.0.1", 0))
listener.listen(1)


def echo():
    conn, _ = listener.accept()
    while True:
        chunk = conn.recv(65536)
        if not chunk:
            break
        conn.sendall(chunk)
    conn.close()


thread = threading.Thread(target=echo)
thread.start()
client = socket.create_connection(listener.getsockname())
received = bytearray()
sender = threading.Thread(target=lambda: (client.sendall(payload), client.shutdown(socket.SHUT_WR)))
sender.start()
while True:
    chunk = client.recv(65536)
    if not chunk:
        break
    received += chunk
sender.join()
thread.join()
print("ECHO", "same" if bytes(received) == payload else "DIFFERENT", len(received))

db = pymysql.connect(unix_socket=sys.argv[1], user="root", database="qg", charset="utf8mb4")
cur = db.cursor()
cur.execute("SELECT name, secret FROM users ORDER BY name")
print("MYSQL", hashlib.sha256(repr(cur.fetchall()).encode()).hexdigest())
