"""Turns a PostgreSQL server log into replay records
(tests/corpus/replay_driver.py): the statements each script sent, as the
server received them, in order.  The server logged every statement
(log_statement = all) with log_line_prefix = '@@qgrec %c %u %d@@ ' (session,
user, database); each script ran in a database of its own, named in the
order file.

   python3 pg_log_records.py LOG ORDER > records
   ORDER: one "DATABASE NAME" a line (the database a script ran in, its name)
Output: "F NAME" per script, "U USER" when the script opened a new session
(psql's \\c), "S NAME:N HEX" for its Nth statement; "S NAME:N~ HEX" when it
names an object by the OID it had on the server that ran the script: one of
psql's describe queries (\\d …), or a statement compared with an OID that
psql's \\gset filled in (`WHERE oid = 16453`).  On another server the same
OID may name another object or none, so their row counts do not compare."""
import re
import sys

NAMES_AN_OID = re.compile(
    rb"pg_catalog\..*(?:'[0-9]{4,}'|= [0-9]{4,}\b)|\boid = [0-9]{4,}\b", re.S)
RECORD = re.compile(rb"^@@qgrec (\S+) (\S*) (\S*)@@ LOG:  statement: ", re.M)

log = open(sys.argv[1], "rb").read()
by_db = {}
starts = list(RECORD.finditer(log))
for i, m in enumerate(starts):
    end = starts[i + 1].start() if i + 1 < len(starts) else len(log)
    # the record runs to the next prefixed line (other log lines carry it too)
    nxt = log.find(b"\n@@qgrec ", m.end(), end + 1)
    text = log[m.end():nxt if nxt >= 0 else end].rstrip(b"\n")
    session, user, db = (g.decode() for g in m.groups())
    by_db.setdefault(db, []).append((session, user, text))

out = sys.stdout
for line in open(sys.argv[2]):
    db, name = line.split()
    out.write("F %s\n" % name)
    session = None
    for n, (sess, user, text) in enumerate(by_db.get(db, []), 1):
        if session is not None and sess != session:
            out.write("U %s\n" % user)
        session = sess
        mark = "~" if NAMES_AN_OID.search(text) else ""
        out.write("S %s:%d%s %s\n" % (name, n, mark, text.hex()))
