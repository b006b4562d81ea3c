/*
 * Rewrite mode (PostgreSQL): a simple statement is re-sent with its string
 * literals in value positions replaced by $1..$n and their decoded values
 * passed as text parameters of unknown type (OID 0), so the server never
 * parses the data as SQL.
 *
 * Pure logic: no client library, no heap allocation.  The caller passes its
 * buffers; when they are too small the answer says how much is needed.
 * A literal is replaced only where a parameter of unknown type is provably
 * resolved like the literal; anything else stays in place, and a query that
 * is not a single SELECT/INSERT/UPDATE/DELETE/VALUES/WITH statement is not
 * rewritten at all.  With QG_REWRITE_PLAIN_AS_IS (the shim's default) a
 * query is rewritten only when a literal to replace is not plain text.
 * The rules and the reasons behind them are in src/core/rewriter.c.
 *
 * Each replacement keeps the literal's length in characters ("$1" padded
 * with spaces, newlines kept), so error positions the server reports for the
 * rewritten text are those of the original.
 *
 * What an application can still tell (tests/t/60-rewrite.t shows them):
 *  - a value the column's type rejects ("invalid input syntax for type
 *    integer") fails at bind time: same SQLSTATE and message, but no cursor
 *    position and a CONTEXT line naming the parameter;
 *  - in a statement with two errors, a parse-time one (unknown column) is
 *    reported before such an input error, where the literal's came first;
 *  - the statement text the server sees (pg_stat_activity, its log) has $n;
 *    queries that call current_query() are never rewritten;
 *  - with plan_cache_mode = force_generic_plan the server plans without the
 *    values, so rows of a query without ORDER BY may come in another order.
 */
#ifndef QG_REWRITER_H
#define QG_REWRITER_H

#include <stdbool.h>
#include <stddef.h>

#include "quoteguard.h"

/* Options of qg_rewrite_query(). */
enum {
    /* The server encoding is UTF8: Unicode escapes (E'\u…', U&'…') in a UTF8
     * client encoding decode to the same characters the server would make. */
    QG_REWRITE_SERVER_UTF8 = 1u << 0,
    /* Send the query as it is when every literal to replace is plain text:
     * ASCII without a backslash or a doubled quote.  Such a literal reads
     * the same in every encoding and under every quoting rule, so a
     * parameter would only add the extended protocol's cost. */
    QG_REWRITE_PLAIN_AS_IS = 1u << 1
};

typedef enum qg_rewrite_status {
    QG_REWRITE_UNCHANGED = 0, /* send the query as it is; rw->why says why */
    QG_REWRITE_DONE,          /* rw->text, rw->params[0..nparams) are ready */
    QG_REWRITE_NO_ROOM        /* rewritable, but a buffer is too small: see the sizes */
} qg_rewrite_status;

/* The most parameters one statement can carry in the protocol. */
#define QG_REWRITE_MAX_PARAMS 65535

typedef struct qg_rewrite {
    /* In: the caller's buffers (NULL with capacity 0 to measure). */
    char *text;              /* the rewritten query, NUL-terminated */
    size_t text_cap;
    char *values;            /* the decoded values, each NUL-terminated, back to back */
    size_t values_cap;
    const char **params;     /* params[i] points at value i inside `values` */
    size_t params_cap;
    /* Out (sizes are filled for DONE and NO_ROOM). */
    size_t text_len;         /* bytes of text without its NUL (needs text_len + 1) */
    size_t values_len;       /* bytes of values, NULs included */
    size_t nparams;          /* parameters (entries of params) */
    const char *why;         /* UNCHANGED: a short static reason, for debug logs */
} qg_rewrite;

/* Decides whether `sql` (len bytes, in ctx's client encoding and quoting
 * rules; ctx->dialect must be QG_DIALECT_POSTGRES) can be sent with
 * parameters, and builds the rewritten text and values into rw's buffers.
 * The query must already have passed qg_check(). */
qg_rewrite_status qg_rewrite_query(const qg_context *ctx, unsigned options, const char *sql,
                                   size_t len, qg_rewrite *rw);

/* Why qg_rewrite_query() with these options answers UNCHANGED without
 * reading `sql` further (no quote, or with QG_REWRITE_PLAIN_AS_IS nothing
 * but plain text), or NULL when it has to read on.  A caller need not
 * gather the connection's state to ask. */
const char *qg_rewrite_skip_reason(const char *sql, size_t len, unsigned options);

#endif
