/* Rewrite mode for the libpq front: a PostgreSQL query that passed the
 * check, with its string literals as parameters, in memory of its own.  The
 * decision is the rewriter's (rewriter.h), in the connection state the
 * check read; this finds the memory and logs at verbosity 2.  No client
 * library: the front sends the result. */
#ifndef QG_PG_REWRITE_H
#define QG_PG_REWRITE_H

#include <stdbool.h>

#include "guard.h"
#include "pg_encoding.h"

/* A query to send with parameters.  One block holds everything: `local`
 * when it fits, so that most rewritten queries allocate nothing, else one
 * malloc (qg_pg_rewritten_release frees it). */
typedef struct qg_pg_rewritten {
    void *block;
    const char *text;
    const char *const *params;
    int nparams;
    _Alignas(sizeof(void *)) char local[2048];
} qg_pg_rewritten;

/* For q (dialect PostgreSQL, encoding and flags as checked) in settings s
 * (rewrite mode, the connection out of pipeline mode): true when rw->text
 * and rw->params are to be sent instead (qg_pg_rewritten_release
 * afterwards).  A query qg_rewrite_skip_reason() rules out is not read
 * further; server_encoding is asked only for one that is. */
bool qg_pg_rewrite(const qg_settings *s, const qg_query *q,
                   qg_pg_server_encoding_fn server_encoding, qg_pg_rewritten *rw);
void qg_pg_rewritten_release(qg_pg_rewritten *rw);

#endif
