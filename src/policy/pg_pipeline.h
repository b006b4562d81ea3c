/* The states a libpq connection's pipeline may leave for its next
 * statement.  In pipeline mode a statement meets the state every statement
 * queued before it leaves, which libpq reports only once their results are
 * read: per connection, the states its pipeline's statements may meet
 * (qg_pg_pending, pg_state.h), in a connection map.  A connection is used
 * by one thread at a time; the map's lock guards the map only.  Pure logic:
 * the front says whether the connection is in pipeline mode. */
#ifndef QG_PG_PIPELINE_H
#define QG_PG_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>

#include "conn_map.h"
#include "hot.h"
#include "pg_state.h"

typedef struct qg_pg_pipeline {
    qg_conn_head head; /* the PGconn */
    qg_pg_pending pending;
    /* A statement this connection prepared may change the state: executed
     * in a pipeline (no text to read), it may set any value.  Kept while
     * the connection lives. */
    bool prepared_sets_state;
} qg_pg_pipeline;

/* The connection's entry, made when missing; NULL without memory. */
qg_pg_pipeline *qg_pg_pipeline_of(const void *conn);
/* The connections with states kept (pg_pipeline.c). */
extern qg_conn_map qg_pg_pipelines QG_LOCAL;

/* qg_pg_pipeline_ended for a connection with states kept. */
void qg_pg_pipeline_ended_kept(const void *conn);

/* Out of pipeline mode every result has been read: libpq's state is the
 * server's, and the states the pipeline's statements might meet go.  With
 * none kept (nearly every query), answered in line. */
static inline void qg_pg_pipeline_ended(const void *conn)
{
    if (!qg_conn_map_empty(&qg_pg_pipelines))
        qg_pg_pipeline_ended_kept(conn);
}
/* The connection is gone. */
void qg_pg_pipeline_forget(const void *conn);
/* A statement the connection prepared (its text is read once, here): one
 * that may change the state is noted for a pipeline that executes it. */
void qg_pg_pipeline_prepared(const void *conn, const char *sql, size_t len);
/* A prepared statement queued in the connection's pipeline: where the
 * connection prepared one that may change the state, the statements after
 * it are checked under every state. */
void qg_pg_pipeline_executes_prepared(const void *conn);

#endif
