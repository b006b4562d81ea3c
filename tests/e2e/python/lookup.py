#!/usr/bin/python3
"""CGI-style user lookup with psycopg2, ported from Python 2 the quick way.

The request is handled as bytes (os.environb), so the query is built with
bytes %-formatting: the name from QUERY_STRING, a backslash put before every
' and \\ byte, pasted into a '' literal with standard_conforming_strings off.
The client encoding comes from the server configuration (APP_CHARSET,
default SJIS).  A lead byte before the quote swallows the backslash.
Do not copy.
"""
import os
import sys
from urllib.parse import unquote_to_bytes

import psycopg2


def params():
    found = {}
    for pair in os.environb.get(b"QUERY_STRING", b"").split(b"&"):
        key, _, value = pair.partition(b"=")
        found[unquote_to_bytes(key.replace(b"+", b" "))] = unquote_to_bytes(value.replace(b"+", b" "))
    return found


def main():
    charset = os.environ.get("APP_CHARSET", "SJIS")
    out = sys.stdout.buffer
    conn = psycopg2.connect("")  # the PG* environment
    conn.autocommit = True
    conn.set_client_encoding(charset)
    cur = conn.cursor()
    cur.execute("SET standard_conforming_strings = off")
    cur.execute("SET backslash_quote = on")
    cur.execute("SET escape_string_warning = off")

    name = params().get(b"name", b"").replace(b"\\", b"\\\\").replace(b"'", b"\\'")
    out.write(b"Content-Type: text/plain; charset=" + charset.encode() + b"\r\n\r\n")
    try:
        cur.execute(b"SELECT id, name, city FROM users WHERE name = '%s' ORDER BY id" % name)
    except psycopg2.Error as err:
        out.write(b"query failed: " + str(err).strip().encode("utf-8", "replace") + b"\n")
        return
    rows = cur.fetchall()
    codec = psycopg2.extensions.encodings[conn.encoding]
    for row in rows:
        out.write(b"\t".join(str(v).encode(codec) for v in row) + b"\n")
    out.write(b"%d rows\n" % len(rows))


main()
