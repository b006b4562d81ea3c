/* The wire front's own question to a MySQL server (src/wire/wire_probe.c):
 * when a statement left the connection's state for the server alone to know
 * and the client's next query needs it, the front asks the server before
 * that query goes, reads the whole answer itself, and checks the query under
 * the state the server gave.  The client never sees a byte of either.
 *
 * The question is `VALUES (@@character_set_client, @@sql_mode)` (MariaDB's
 * table value constructor, 10.3.3 and later).  A statement without tables
 * leaves the warnings as they were, and unlike a SELECT the table value
 * constructor leaves FOUND_ROWS() as it was; LAST_INSERT_ID() is untouched.
 * Only ROW_COUNT() changes (to -1), and every statement sets ROW_COUNT()
 * again as it ends (an error too), so the one statement that could read the
 * changed value is the client's query itself: a query that names ROW_COUNT
 * or runs other statements (CALL, EXECUTE) is not preceded by the question.
 *
 * This file builds the question and reads its answer; the front does the
 * I/O (src/front/front_wire_probe.c). */
#ifndef QG_WIRE_PROBE_H
#define QG_WIRE_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mysql_state.h"
#include "wire_frame.h"

/* Whether the front may ask the server about the state now, before query m
 * goes: the state is unknown and the connection is idle (every earlier
 * answer read, nothing of the client's stream before m unsent, no
 * compression), the server is a MariaDB that knows the question, and m is a
 * COM_QUERY that neither names ROW_COUNT nor runs other statements.  Inside
 * TLS the front asks only where it writes through the program's SSL object. */
bool qg_wire_probe_may(const qg_wire_conn *c, const qg_wire_msg *m);

/* The question's COM_QUERY packet (sequence 0). */
bool qg_wire_probe_packet(qg_wire_buf *out);

typedef enum qg_wire_probe_status {
    QG_PROBE_NEED,   /* the answer is not whole yet */
    QG_PROBE_DONE,   /* p[0, n) is the whole answer, nothing more: *st holds the state */
    QG_PROBE_ERROR,  /* p[0, n) is the whole answer, and it ends with an error */
    QG_PROBE_FAILED, /* not the answer to the question, or more than it */
} qg_wire_probe_status;

/* Reads the bytes received so far in answer to the question. */
qg_wire_probe_status qg_wire_probe_answer(const qg_wire_conn *c, const uint8_t *p, size_t n,
                                          qg_my_state *st);

/* The state the server gave is the connection's from now on. */
void qg_wire_probe_taken(qg_wire_conn *c, const qg_my_state *st);

#endif
