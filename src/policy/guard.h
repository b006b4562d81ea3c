/* What the fronts share: check one query of one connection, log, decide. */
#ifndef QG_GUARD_H
#define QG_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "context.h"
#include "hot.h"
#include "quoteguard.h"
#include "settings.h" /* the fronts read the settings too */

typedef struct qg_query {
    qg_dialect dialect;
    const char *encoding_name; /* as the server names the client encoding */
    const qg_encoding *encoding; /* its table when the front has it, else NULL: found by name */
    unsigned flags;            /* QG_STD_STRINGS … */
    const qg_server_view *view; /* PG: the text as the server reads it after converting it, or NULL */
    const void *conn;
    const char *api;           /* name of the intercepted function */
    const char *sql;
    size_t len;
    const void *caller;        /* return address of the intercepted call */
} qg_query;

typedef struct qg_decision {
    bool block;                 /* the query must not be sent */
    const char *sqlstate;       /* for the synthetic error */
    char message[512];          /* "quoteguard: …", when block */
} qg_decision;

/* Runs the checker and applies mode, allow-list and logging.
 * An allow-listed fingerprint stops its reason from blocking this query (the
 * query is checked again without it, so other reasons still block); its
 * findings are logged with action "allowed".
 * Returns true when the query may be sent.  Off mode or an inactive program:
 * true without looking.  An unknown encoding cannot be checked: blocked in
 * enforce/rewrite (sqlstate 22023), logged in audit.  When blocked,
 * out->sqlstate is "22021" for invalid_sequence and illformed*, "42601"
 * otherwise.  With shapes (settings shapes = learn | enforce), a query that
 * passes is learned, or — enforce — is an "unknown_shape" finding when its
 * shape is not in the profile, treated like the others.  A clean query
 * allocates nothing and logs nothing. */
bool qg_guard_query(const qg_query *q, qg_decision *out);
/* The same with explicit settings (tests; qg_guard_query uses qg_settings_get()). */
bool qg_guard_query_with(const qg_settings *s, const qg_query *q, qg_decision *out);

/* Set once a query has reached the guard, which then announced the shim
 * if the start-up probe had not (attach.h). */
extern bool qg_guard_announce_tried QG_LOCAL;

/* The checker's context for a text of `dialect` read in enc with `flags`
 * and `view` (qg_query's), with the settings' actions for MySQL's
 * ill-formed texts. */
static inline void qg_guard_context(const qg_settings *s, qg_dialect dialect,
                                    const qg_encoding *enc, unsigned flags,
                                    const qg_server_view *view, qg_context *ctx)
{
    qg_context_fill(ctx, dialect, enc, flags);
    ctx->view = view;
    if (dialect == QG_DIALECT_MYSQL) {
        ctx->action[QG_REASON_ILLFORMED_QUOTE] = s->mysql_illformed_quote;
        ctx->action[QG_REASON_ILLFORMED] = s->mysql_illformed;
    }
}

/* For a front that holds the process settings s: true when they let a
 * clean query pass with nothing to log, count or learn (clean_in_line),
 * the text's encoding table enc is known, and the checker, run in line
 * with no call of the guard's own, finds sql[0, len) clean: the query
 * passes, and nothing is to be reported (docs/PERFORMANCE.md, "Choices in
 * the code").  False for any other query, which the front hands to
 * qg_guard_query (one the checker does not find clean is checked again
 * there, to be judged); the front describes it only then. */
static inline bool qg_guard_clean_in_line(const qg_settings *s, qg_dialect dialect,
                                          const qg_encoding *enc, unsigned flags,
                                          const qg_server_view *view, const char *sql,
                                          size_t len)
{
    if (!s->clean_in_line || !enc || !__atomic_load_n(&qg_guard_announce_tried, __ATOMIC_RELAXED))
        return false;
    qg_context ctx;
    qg_guard_context(s, dialect, enc, flags, view, &ctx);
    return qg_check(&ctx, sql, len, NULL) == QG_VERDICT_CLEAN;
}

/* qg_guard_query for a front that holds the process settings s, a clean
 * query decided in line (qg_guard_clean_in_line). */
static inline bool qg_guard_query_in_line(const qg_settings *s, const qg_query *q, qg_decision *out)
{
    if (!qg_guard_clean_in_line(s, q->dialect, q->encoding, q->flags, q->view, q->sql, q->len))
        return qg_guard_query(q, out);
    out->block = false;
    out->sqlstate = NULL;
    out->message[0] = '\0';
    return true;
}

/* Per-thread record of the intercepted calls in flight.  A client library
 * calls its own exported entries for the call being checked (mysql_query
 * calls mysql_real_query), and those inner calls must not be checked twice
 * (the libpq front knows libpq's by a record of its own, front_pg.c); but
 * a query issued while another is in flight on the same thread — from a
 * signal handler, a libpq notice processor, a MariaDB LOAD DATA LOCAL
 * callback — is another query and must be checked.
 *
 * qg_guard_enter(conn, sql, len) returns false when this thread is already
 * inside an intercepted call on the same connection that sends the same text
 * (same pointer and length), or inside a call on that connection whose
 * queries are the library's own (entered with sql == NULL:
 * mysql_set_character_set's SET NAMES);
 * the caller then calls the real function directly and must NOT leave.
 * After a true, leave exactly once: qg_guard_leave_call with the same
 * arguments, or qg_guard_leave (the innermost call in flight) where calls
 * always end in the order opposite to the one they began in (the libpq
 * front's own texts).  A libmariadb non-blocking call
 * (mysql_real_query_start) runs the library's call in a coroutine that a
 * later call may outlast, so the MySQL front leaves by its arguments.
 * The shim enters too before it hands the library a text of its own (a
 * rewritten query, a state query), so that the library's inner calls for it
 * pass.  Async-signal-safe: a handler that interrupts enter or leave sees
 * either the record before or after. */
bool qg_guard_enter(const void *conn, const char *sql, size_t len);

/* The calls in flight on this thread: a byte a recorded call, set once its
 * record is filled in.  Each byte is written by one store and all are read
 * by one load, so that a thread with no call in flight (nearly every
 * query) looks at no record.  initial-exec: reading it never allocates. */
typedef union qg_guard_call_flags {
    unsigned char slot[8];
    uint64_t all;
} qg_guard_call_flags;
extern __thread qg_guard_call_flags qg_guard_calls_ready __attribute__((tls_model("initial-exec")));

/* qg_guard_inside past the test for no call in flight. */
bool qg_guard_inside_recorded(const void *conn, const char *sql, size_t len);

/* What qg_guard_enter(conn, sql, len) would refuse, without recording a
 * call: for a front that knows its library's inner calls by a record of
 * its own and needs only to pass the texts the shim hands the library.
 * With no call in flight, answered in line. */
static inline bool qg_guard_inside(const void *conn, const char *sql, size_t len)
{
    return __atomic_load_n(&qg_guard_calls_ready.all, __ATOMIC_RELAXED) != 0 &&
           qg_guard_inside_recorded(conn, sql, len);
}
void qg_guard_leave(void);
void qg_guard_leave_call(const void *conn, const char *sql, size_t len);

/* Logs that the client library has no function `name` the front needs (an
 * error event, missing_symbol); the front then refuses the call. */
void qg_guard_report_missing(const char *name);

/* 64-bit FNV-1a fingerprint of a finding: over qg_reason_name(reason), a 0
 * byte, the canonical encoding name (or the unknown name as given), a 0 byte,
 * then the query bytes.  Logged and allow-listed as 16 lower-case hex digits. */
unsigned long long qg_guard_fingerprint(qg_reason reason, const char *encoding,
                                        const char *sql, size_t len);

#endif
