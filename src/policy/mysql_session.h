/* One MySQL / MariaDB connection's session as the shim follows it: the state
 * the server lexes queries with, when it must be asked for again, and the
 * check of a text with it.  The client library is reached only through the
 * callbacks of qg_my_server, which the front fills (this file links none).
 *
 * How the state is kept (see docs/DETECTION.md):
 *  - a new session (connect, reset, change of user, reconnect) is asked for
 *    character_set_client, sql_mode and session_track_system_variables, and
 *    the server is asked to report changes of character_set_client,
 *    sql_mode and session_track_system_variables from then on;
 *  - an OK packet's report gives the new values, however the change was
 *    made; a result set's end only says that something changed, and a text
 *    may change the state unreported (MariaDB reports no SET @@name without
 *    a scope): then the state is stale and asked for before the next check;
 *  - the server's quoting status bits changing to other than the state
 *    holds make it stale too;
 *  - a session whose application took sql_mode out of the tracked
 *    variables is asked before every check.
 * A state that could not be read is stale: the check then says
 * state_unknown rather than guessing. */
#ifndef QG_MYSQL_SESSION_H
#define QG_MYSQL_SESSION_H

#include <stdbool.h>
#include <stddef.h>

#include "conn_map.h"
#include "guard.h"
#include "mysql_plan.h"
#include "mysql_state.h"
#include "settings.h"

/* What a session needs from the client library, for one connection. */
typedef struct qg_my_server {
    /* The map whose lock guards the published state (the escapers read it
     * from any thread). */
    qg_conn_map *map;
    /* Runs the state query: the state, and whether changes of it are reported. */
    bool (*ask)(void *conn, qg_my_state *st, bool *covered);
    /* Asks the server to report changes of the state from now on. */
    bool (*request_tracking)(void *conn);
    unsigned long (*thread_id)(void *conn);
    unsigned (*status)(void *conn);    /* the server status flags of the last answer */
    bool (*result_set)(void *conn);    /* the last answer is a result set */
    /* The items of the last OK packet's system-variable report in order
     * (name, value, name, …); false after the last. */
    bool (*report_item)(void *conn, bool first, const char **data, size_t *len);
} qg_my_server;

/* The states the texts a program sent before reading their answers
 * (mysql_send_query) may leave for the texts it sends after them: the state
 * after each statement that changes it, from each state the text may start
 * in (a multi-statement text stops at its first failing statement). */
#define QG_MY_PENDING_MAX 8
typedef struct qg_my_pending {
    qg_my_state states[QG_MY_PENDING_MAX];
    unsigned count;
    bool unknown; /* one may leave a state only the server knows */
} qg_my_pending;

typedef struct qg_my_session {
    /* Written under the map's write lock; read without it by the thread
     * using the connection. */
    qg_my_state state;
    /* The rest belongs to the thread that uses the connection. */
    /* the checker's table of state.charset, or NULL; found when the state
     * is published, not by name on each check (docs/PERFORMANCE.md) */
    const struct qg_encoding *enc;
    unsigned fresh_flags;    /* the quoting flags a new session starts with */
    unsigned long thread_id; /* server thread; a change means a reconnect */
    unsigned quoting_bits;   /* the quoting status bits as last seen */
    bool stale;              /* ask the server before the next check */
    bool setup;              /* a new session: tracking is to be requested */
    bool tracked;            /* the server reports changes of charset and sql_mode */
    bool result_open;        /* a result set's end is still to be looked at */
    bool asked;              /* the state was read at least once */
    bool may_hide;           /* the text sent may change the state unreported */
    bool told_unknown;       /* audit: a text checked with the state unknown was logged */
    /* A charset name the client library gave, found to be state.charset,
     * and the generation of loaded libraries then (the front's); NULL
     * once the state changes. */
    const char *lib_charset_alike;
    unsigned lib_charset_generation;
    unsigned unread;         /* texts sent whose last answer is not read yet */
    qg_my_pending pending;   /* what those texts may leave */
} qg_my_session;

/* The session is made anew (reset, change of user): asked before the next check. */
void qg_my_session_renew(qg_my_session *s);
/* The server's status flags that say how it quotes. */
enum { QG_MY_QUOTING_BITS = QG_MY_STATUS_NO_BACKSLASH_ESCAPES | QG_MY_STATUS_ANSI_QUOTES };

/* The quoting status bits follow most changes of sql_mode, reported or not
 * (but stay as they were after a procedure restores its caller's
 * sql_mode): bits that changed to other than the state holds make it stale. */
static inline void qg_my_session_note_quoting_bits(qg_my_session *s, unsigned status)
{
    unsigned bits = status & QG_MY_QUOTING_BITS;
    unsigned as_flags = (bits & QG_MY_STATUS_NO_BACKSLASH_ESCAPES ? QG_NO_BACKSLASH_ESCAPES : 0) |
                        (bits & QG_MY_STATUS_ANSI_QUOTES ? QG_ANSI_QUOTES : 0);
    if (bits != s->quoting_bits && as_flags != s->state.flags)
        s->stale = true;
    s->quoting_bits = bits;
}

/* Once a result set was read: its end's status.  In line: most queries
 * follow a result set, whose end is looked at before the next. */
static inline void qg_my_session_result_read(qg_my_session *s, const qg_my_server *srv, void *conn)
{
    if (!s->result_open)
        return;
    s->result_open = false;
    unsigned status = srv->status(conn);
    if (status & QG_MY_STATUS_SESSION_STATE_CHANGED)
        s->stale = true; /* a result set's end reports a change without its value */
    qg_my_session_note_quoting_bits(s, status);
}

/* qg_my_session_prepare of a session on server thread `id` that is new,
 * stale or has answers unread. */
bool qg_my_session_update(qg_my_session *s, const qg_my_server *srv, void *conn,
                          qg_my_plan *plan, unsigned long id);
/* Brings the session up to date before a check of the text read as `plan`
 * (NULL: none, as at connect): a new server thread (a reconnect, or the
 * first query seen) or a stale state is asked for, unless the text reads
 * alike in every state.  Asking costs a round trip and sets ROW_COUNT().
 * True when the session is new to the shim (its first query, or a new
 * server thread).  In line: each query asks, and most find the session as
 * it was. */
static inline __attribute__((always_inline)) bool
qg_my_session_prepare(qg_my_session *s, const qg_my_server *srv, void *conn, qg_my_plan *plan)
{
    qg_my_session_result_read(s, srv, conn);
    unsigned long id = srv->thread_id(conn);
    if (!s->unread && s->asked && id == s->thread_id && !s->stale)
        return false;
    return qg_my_session_update(s, srv, conn, plan, id);
}
/* Asks the server now; a failure leaves the state stale. */
void qg_my_session_refresh(qg_my_session *s, const qg_my_server *srv, void *conn);
/* Before a text is sent whose answer is read later (mysql_send_query, a
 * multi-statement text): what it may change unreported.  `plan`: the
 * text's, read with the session's state here unless it was (by the check). */
void qg_my_session_sending(qg_my_session *s, qg_my_plan *plan);
/* A text was sent whose answers the program reads later (mysql_send_query,
 * or any text sent while earlier answers are unread): the texts sent before
 * they are read are checked under every state it may leave too, and the
 * server is not asked meanwhile (its answer would come after theirs). */
void qg_my_session_queued(qg_my_session *s, qg_my_plan *plan);
/* An answer was read; `text_done`: the last of its text (an error, or no
 * more results to come). */
void qg_my_session_read_done(qg_my_session *s, bool text_done);
/* qg_my_session_answered of an OK packet. */
void qg_my_session_ok(qg_my_session *s, const qg_my_server *srv, void *conn, qg_my_plan *plan);
/* After the server answered (an OK packet or a result set's head) the text
 * of `plan` (NULL: the one given to qg_my_session_sending).  A result set's
 * text changes nothing unreported: only an OK packet's is read.  In line:
 * a result set's head needs no more than that it is one. */
static inline void qg_my_session_answered(qg_my_session *s, const qg_my_server *srv, void *conn,
                                          qg_my_plan *plan)
{
    if (!s->tracked)
        s->stale = true; /* nothing is reported: ask before the next check */
    if (srv->result_set(conn))
        s->result_open = true;
    else
        qg_my_session_ok(s, srv, conn, plan);
}

/* After a prepared statement ran (its text may change the state
 * unreported: may_hide): what it changed is asked for before the next check. */
void qg_my_session_executed(qg_my_session *s, const qg_my_server *srv, void *conn,
                            bool may_hide);

/* Checks the text of `plan` about to be sent with the session's state
 * (a text of several statements is read with it, and the plan kept for
 * what follows; one of a single statement is not read) and, when `fresh`
 * is not NULL, with that state too (a session the library's automatic
 * reconnect would make).  True = send it; *d as qg_guard_query; `told` as
 * qg_my_state_unknown's. */
bool qg_my_session_check_read(const qg_my_session *s, const qg_my_state *fresh,
                              const void *conn, const char *api, qg_my_plan *plan,
                              const void *caller, bool *told, qg_decision *d);
/* A piece of text checked with state *st, whose charset's table is `enc`
 * (NULL: found by name).  In line: each query's text is one. */
static inline bool qg_my_piece_check(const void *conn, const char *api, const qg_my_state *st,
                                     const struct qg_encoding *enc, const char *sql, size_t len,
                                     const void *caller, qg_decision *d)
{
    qg_query q = {
        .dialect = QG_DIALECT_MYSQL,
        .encoding_name = st->charset,
        .encoding = enc,
        .flags = st->flags,
        .conn = conn,
        .api = api,
        .sql = sql,
        .len = len,
        .caller = caller,
    };
    return qg_guard_query(&q, d);
}

/* qg_my_session_check_read, with the most common text in line: one
 * statement, under the one state known, not logged, goes straight to the
 * guard. */
static inline bool qg_my_session_check(const qg_my_session *s, const qg_my_state *fresh,
                                       const void *conn, const char *api, qg_my_plan *plan,
                                       const void *caller, bool *told, qg_decision *d)
{
    if (s->stale || fresh || s->unread || qg_settings_get()->verbosity >= 2 ||
        !qg_my_plan_single(plan))
        return qg_my_session_check_read(s, fresh, conn, api, plan, caller, told, d);
    return qg_my_piece_check(conn, api, &s->state, s->enc, plan->sql, plan->len, caller, d);
}
/* qg_my_session_check of a text that meets the one state *st and no
 * other (no reconnect, no answers unread): the wire front's, which follows
 * each state a text may meet itself.  `enc`: the checker's table of
 * st->charset where the caller keeps it, else NULL (found by name). */
bool qg_my_state_check(const qg_my_state *st, const struct qg_encoding *enc, const void *conn,
                       const char *api, qg_my_plan *plan, const void *caller, bool *told,
                       qg_decision *d);
/* The decision when the state is not known: enforce blocks and logs a
 * state_unknown finding for each text; audit sends, and logs one while
 * *told (the connection's, set here) is false, or every time when `told`
 * is NULL. */
bool qg_my_state_unknown(const void *conn, const char *api, const char *charset,
                         const char *sql, size_t len, const void *caller, bool *told,
                         qg_decision *d);

#endif
