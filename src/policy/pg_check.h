/* The libpq front's check of one query as the server will read it: in the
 * encoding the server checks the text against, through the server's
 * conversion where that makes ASCII of a client character, and in pipeline
 * mode under every state the statements queued before it may leave.  The
 * connection is reached only through the server-encoding callback. */
#ifndef QG_PG_CHECK_H
#define QG_PG_CHECK_H

#include <stdbool.h>

#include "guard.h"
#include "pg_encoding.h"
#include "pg_state.h"

/* qg_pg_set_checked_encoding for a client encoding that server_decides. */
bool qg_pg_set_server_decided_encoding(qg_query *q, const qg_pg_client_encoding *c,
                                       qg_pg_server_encoding_fn server_encoding);

/* Sets the encoding q is checked in for client encoding c: c's own, or
 * the one the server encoding makes it (qg_pg_checked_encoding).  True
 * when the server's conversion from it may make ASCII of a character. */
static inline bool qg_pg_set_checked_encoding(qg_query *q, const qg_pg_client_encoding *c,
                                              qg_pg_server_encoding_fn server_encoding)
{
    if (c->server_decides)
        return qg_pg_set_server_decided_encoding(q, c, server_encoding);
    q->encoding = c->enc;
    q->encoding_name = c->name;
    return c->converts_to_ascii;
}

/* qg_pg_check_converted for a client encoding whose conversion to the
 * server encoding may make ASCII of a character. */
bool qg_pg_check_conversion(qg_query *q, qg_pg_server_encoding_fn server_encoding,
                            qg_decision *d);

/* Checks q (encoding and flags set; `converts` as qg_pg_set_checked_encoding
 * said) through the guard, under the process settings s; where the
 * conversion to the server encoding makes ASCII of a character, the text
 * as the server reads it.  True = send it. */
static inline bool qg_pg_check_converted(const qg_settings *s, qg_query *q, bool converts,
                                         qg_pg_server_encoding_fn server_encoding, qg_decision *d)
{
    return converts ? qg_pg_check_conversion(q, server_encoding, d)
                    : qg_guard_query_in_line(s, q, d);
}

/* Checks q under each state in `states` (every client encoding and
 * standard_conforming_strings value listed; an unknown encoding blocks in
 * enforce): for a statement written before the statements ahead of it were
 * answered.  True = send it. */
bool qg_pg_check_states(const qg_query *q, qg_pg_server_encoding_fn server_encoding,
                        const qg_pg_pending *states, qg_decision *d);

/* The same for a connection in pipeline mode: under the state libpq
 * reports (q's) and every state a statement queued before it may leave
 * (pg_pipeline.h); a text that passes adds the states it may set. */
bool qg_pg_check_in_pipeline(const qg_query *q, bool converts,
                             qg_pg_server_encoding_fn server_encoding, qg_decision *d);

/* The connection's quoting flags (QG_STD_STRINGS) as libpq reports them
 * now: the front's reader of them. */
typedef unsigned (*qg_pg_quoting_fn)(const void *conn);

/* A query q that passed (encoding as checked) was sent and its results
 * are still to be read: what it may set counts for the queries sent before
 * they are (checked with qg_pg_check_in_pipeline), with the state the
 * connection reports now (`quoting` read only for a text that may set
 * one). */
void qg_pg_note_unread(const qg_query *q, qg_pg_quoting_fn quoting);

#endif
