/* A connection's session state (mysql_session.h). */
#include "mysql_session.h"

#include <stdio.h>
#include <string.h>

#include "hot.h"
#include "log.h"
#include "mysql_plan.h"
#include "mysql_statements.h"
#include "quoteguard.h"
#include "settings.h"

QG_COLD static void write_state(const qg_settings *settings, const qg_my_state *st, bool stale,
                                const char *source, const char *sql, size_t len)
{
    char detail[200];
    qg_my_state_describe(st, detail, sizeof detail);
    size_t n = strlen(detail);
    snprintf(detail + n, sizeof detail - n, " %s%s%s%.*s", source, stale ? " stale" : "",
             sql ? ": " : "", sql ? (int)(len < 64 ? len : 64) : 0, sql ? sql : "");
    qg_log_write_event(settings, "debug", "mysql_state", detail);
}

/* The recorded state at debug level: "asked" (read from the server),
 * "reported" (a session-tracking report), or "check" with the head of the
 * query about to be checked with it.  Tested in line: a query at a lower
 * level makes no call. */
static inline void log_state_of(const qg_my_state *st, bool stale, const char *source,
                                const char *sql, size_t len)
{
    const qg_settings *settings = qg_settings_get();
    if (settings->verbosity >= 2)
        write_state(settings, st, stale, source, sql, len);
}

static inline void log_state(const qg_my_session *s, const char *source, const char *sql, size_t len)
{
    log_state_of(&s->state, s->stale, source, sql, len);
}

static void publish(qg_my_session *s, const qg_my_server *srv, const qg_my_state *st)
{
    qg_conn_map_write_lock(srv->map);
    s->state = *st;
    qg_conn_map_unlock(srv->map);
    s->lib_charset_alike = NULL;
    s->enc = qg_encoding_find(QG_DIALECT_MYSQL, st->charset);
}

void qg_my_session_renew(qg_my_session *s)
{
    s->stale = s->setup = true;
    s->lib_charset_alike = NULL;
}

QG_COLD void qg_my_session_refresh(qg_my_session *s, const qg_my_server *srv, void *conn)
{
    qg_my_state st = s->state;
    bool covered = false;
    bool ok = srv->ask(conn, &st, &covered);
    unsigned long id = srv->thread_id(conn);
    if (id != s->thread_id) /* asking reconnected: a new session */
        s->setup = true;
    s->thread_id = id;
    if (ok && s->setup) {
        s->fresh_flags = st.flags;
        covered = covered || srv->request_tracking(conn);
        s->setup = false;
    }
    s->tracked = ok && covered;
    s->stale = !ok;
    s->result_open = false;
    s->quoting_bits = srv->status(conn) & QG_MY_QUOTING_BITS;
    s->asked = s->asked || ok;
    if (ok)
        publish(s, srv, &st);
    else
        qg_log_write_event(qg_settings_get(), "info", "mysql_state_unknown",
                           "could not read character_set_client and sql_mode");
    log_state(s, "asked", NULL, 0);
}

/* No answer is pending any more: what the texts sent may leave goes. */
static void unread_gone(qg_my_session *s)
{
    s->unread = 0;
    memset(&s->pending, 0, sizeof s->pending);
}

/* What a text that got an OK packet may have changed unreported.  A text
 * not read yet that is one statement whose first word changes nothing is
 * known so from that word (qg_my_single_inert): the check searched it for
 * a ';' already, and a reading would only copy the state and ask the same
 * word. */
static void note_text(qg_my_session *s, qg_my_plan *plan)
{
    if (!plan->read && qg_my_plan_single(plan) && qg_my_single_inert(plan->sql, plan->len)) {
        /* it changes nothing, whatever it names */
        s->may_hide = s->unread && s->may_hide;
        return;
    }
    qg_my_plan_read(plan, &s->state, NULL);
    /* while answers are unread, theirs count too */
    s->may_hide = (s->unread && s->may_hide) || qg_my_plan_may_change_unreported(plan);
    if (!qg_my_plan_inert(plan) && qg_my_plan_names_tracking(plan))
        s->stale = true; /* the program may change what is reported: no report says */
}

void qg_my_session_sending(qg_my_session *s, qg_my_plan *plan)
{
    note_text(s, plan);
}

static void pending_add(qg_my_pending *p, const qg_my_state *st)
{
    for (unsigned i = 0; i < p->count; i++)
        if (qg_my_state_equal(&p->states[i], st))
            return;
    if (p->count == QG_MY_PENDING_MAX)
        p->unknown = true; /* too many to check under each */
    else
        p->states[p->count++] = *st;
}

/* The states a text read as `plan` may leave, added to what is pending. */
static void pending_from(qg_my_pending *pending, qg_my_plan *plan)
{
    qg_my_plan_walk w;
    qg_my_planned st;
    qg_my_plan_walk_init(&w, plan);
    while (qg_my_plan_walk_next(&w, &st)) {
        if (st.effect.unknown)
            pending->unknown = true;
        if (st.effect.changed)
            pending_add(pending, &st.after);
    }
}

void qg_my_session_queued(qg_my_session *s, qg_my_plan *plan)
{
    if (s->unread == 0)
        memset(&s->pending, 0, sizeof s->pending);
    s->unread++;
    qg_my_plan_read(plan, &s->state, NULL);
    if (qg_my_plan_may_change_unreported(plan))
        s->pending.unknown = true;
    /* from the state now and each one an earlier unread text may leave */
    qg_my_pending earlier = s->pending;
    pending_from(&s->pending, plan);
    for (unsigned i = 0; i < earlier.count; i++) {
        qg_my_plan from_earlier;
        qg_my_plan_init(&from_earlier, plan->sql, plan->len);
        qg_my_plan_read(&from_earlier, &earlier.states[i], NULL);
        pending_from(&s->pending, &from_earlier);
    }
}

void qg_my_session_read_done(qg_my_session *s, bool text_done)
{
    if (s->unread && text_done && --s->unread == 0)
        unread_gone(s);
}

/* Takes on the last OK packet's report. */
static void read_report(qg_my_session *s, const qg_my_server *srv, void *conn)
{
    qg_my_state st = s->state;
    const char *name, *value;
    size_t name_len, value_len;
    for (bool first = true; srv->report_item(conn, first, &name, &name_len); first = false) {
        bool tracking_list;
        if (!srv->report_item(conn, false, &value, &value_len) ||
            !qg_my_state_apply(&st, name, name_len, value, value_len, &tracking_list))
            s->stale = true;
        else if (tracking_list)
            s->tracked = qg_my_tracking_covers(value, value_len);
    }
    if (!qg_my_state_equal(&st, &s->state)) {
        publish(s, srv, &st);
        log_state(s, "reported", NULL, 0);
    }
}

void qg_my_session_ok(qg_my_session *s, const qg_my_server *srv, void *conn, qg_my_plan *plan)
{
    if (plan)
        note_text(s, plan);
    unsigned status = srv->status(conn);
    if (status & QG_MY_STATUS_SESSION_STATE_CHANGED)
        read_report(s, srv, conn);
    qg_my_session_note_quoting_bits(s, status);
    if (s->may_hide)
        s->stale = true;
}

bool qg_my_session_update(qg_my_session *s, const qg_my_server *srv, void *conn,
                          qg_my_plan *plan, unsigned long id)
{
    if (s->unread && id == s->thread_id)
        return false; /* the server's answer to a question would come after the program's */
    if (s->unread)
        unread_gone(s); /* a new session: the answers went with the old one */
    bool seen_new = !s->asked || id != s->thread_id;
    if (seen_new)
        qg_my_session_renew(s); /* a new session (or the first query seen) */
    if (s->stale && !(plan && qg_my_plan_reads_alike(plan)))
        qg_my_session_refresh(s, srv, conn);
    return seen_new;
}

void qg_my_session_executed(qg_my_session *s, const qg_my_server *srv, void *conn,
                            bool may_hide)
{
    if (!s->tracked || may_hide || srv->status(conn) & QG_MY_STATUS_SESSION_STATE_CHANGED)
        s->stale = true;
}

/* ------------------------------------------------------------ checking */

/* The decision when the state is not known, `detail` saying why.  Audit
 * says it once per *told (a connection's), enforce with every text it
 * blocks. */
QG_COLD static bool unknown_because(const void *conn, const char *api, const char *charset,
                                    const char *sql, size_t len, const void *caller,
                                    const char *detail, bool *told, qg_decision *d)
{
    const qg_settings *settings = qg_settings_get();
    bool block = settings->mode == QG_MODE_ENFORCE || settings->mode == QG_MODE_REWRITE;
    d->block = block;
    if (!block && told && *told)
        return true;
    if (!block && told)
        *told = true;
    qg_log_finding entry = {
        .api = api,
        .dialect = QG_DIALECT_MYSQL,
        .encoding = charset,
        .conn = conn,
        .action = block ? "blocked" : "logged",
        .reason_name = "state_unknown",
        .detail = detail,
        .sql = sql,
        .sql_len = len,
        .fingerprint = qg_guard_fingerprint(QG_REASON_NONE, charset, sql, len),
        .caller = caller,
    };
    qg_log_write_finding(settings, &entry);
    d->sqlstate = "HY000";
    snprintf(d->message, sizeof d->message,
             "quoteguard: blocked state_unknown: %s; the query was not checked", detail);
    return !block;
}

QG_COLD bool qg_my_state_unknown(const void *conn, const char *api, const char *charset,
                                 const char *sql, size_t len, const void *caller, bool *told,
                                 qg_decision *d)
{
    return unknown_because(conn, api, charset, sql, len, caller,
                           "the connection's character set and sql_mode could not be read "
                           "from the server",
                           told, d);
}

/* Whether an escaper fooled in sql[0, piece) is seen only with the text
 * after it: the escaper wrote its literals into the whole text and knows no
 * statement boundary, so its reading can lose step in this piece and find
 * it again in a later one (`'\''; SET NAMES x; DROP TABLE t; #'` from a
 * quote doubler).  Read with the piece's state, whatever the later
 * statements set: only a finding inside the piece counts. */
QG_COLD static bool fooled_across(const qg_my_state *st, const char *sql, size_t piece,
                                  size_t len)
{
    const qg_encoding *enc = qg_encoding_find(QG_DIALECT_MYSQL, st->charset);
    if (!enc || piece >= len)
        return false;
    qg_context ctx;
    qg_context_init(&ctx, QG_DIALECT_MYSQL, enc, st->flags);
    qg_result result;
    qg_check(&ctx, sql, len, &result);
    unsigned shown = result.count < QG_MAX_FINDINGS ? result.count : QG_MAX_FINDINGS;
    for (unsigned i = 0; i < shown; i++)
        if (result.findings[i].reason == QG_REASON_STRUCTURE_MISMATCH &&
            result.findings[i].offset < piece)
            return true;
    return false;
}

/* One piece of a multi-statement text, checked alone, or with the text
 * after it where only that shows the escaper fooled in it.  A piece that
 * reads alike in every state (`alike`: bytes below 0x80, no backslash) is
 * read by every escaper as by the server, so none was fooled in it: the
 * text after it is not read for that. */
QG_COLD static bool piece_allowed(const void *conn, const char *api, const qg_my_state *st,
                                  const char *sql, size_t piece, size_t len, bool alike,
                                  const void *caller, qg_decision *d)
{
    bool fooled = !alike && fooled_across(st, sql, piece, len);
    return qg_my_piece_check(conn, api, st, NULL, sql, fooled ? len : piece, caller, d);
}

/* The first byte at or after `from` that does not read alike in every
 * state, found by one scan of the text: `from` does not decrease from one
 * call to the next, and a scan goes on from where the last one stopped. */
typedef struct unalike_scan {
    bool scanned;
    size_t at; /* the first such byte after the last scan's start; len: none */
} unalike_scan;

static size_t unalike_from(unalike_scan *u, const char *sql, size_t len, size_t from)
{
    if (!u->scanned || from > u->at) {
        u->at = from + qg_my_alike_prefix(sql + from, len - from);
        u->scanned = true;
    }
    return u->at;
}

/* A text of several pieces, read as `plan`, checked statement by
 * statement: each with the state the ones before it leave, in pieces that
 * end where the state changes.  After one whose effect only the server
 * knows, the rest is checked only where it reads alike in every state.
 * `enc`: the table of the state the plan starts with, or NULL. */
QG_HOT static __attribute__((noinline)) bool
pieces_allowed(const void *conn, const char *api, qg_my_plan *plan, const qg_encoding *enc,
               const void *caller, bool *told, qg_decision *d)
{
    const char *sql = plan->sql;
    size_t len = plan->len;
    qg_my_state piece_state = plan->start;
    size_t piece_start = 0;
    unalike_scan scan = {.scanned = false};
    /* past a statement whose effect only the server knows: the first byte
     * that does not read alike */
    size_t unalike = len;
    bool known = true;
    qg_my_plan_walk w;
    qg_my_planned st;
    qg_my_plan_walk_init(&w, plan);
    while (qg_my_plan_walk_next(&w, &st)) {
        if (unalike < st.end) /* in this statement or one before it */
            return qg_my_state_unknown(conn, api, piece_state.charset, sql, len, caller, told,
                                       d);
        if ((st.effect.changed || st.effect.unknown) && st.end < len) {
            bool alike = unalike_from(&scan, sql, len, piece_start) >= st.end;
            if (!piece_allowed(conn, api, &piece_state, sql + piece_start, st.end - piece_start,
                               len - piece_start, alike, caller, d))
                return false;
            piece_start = st.end;
            piece_state = st.after;
        }
        if (known && st.effect.unknown) {
            known = false;
            unalike = unalike_from(&scan, sql, len, st.end);
        }
    }
    if (unalike < len)
        return qg_my_state_unknown(conn, api, piece_state.charset, sql, len, caller, told, d);
    return qg_my_piece_check(conn, api, &piece_state, piece_start == 0 ? enc : NULL,
                             sql + piece_start, len - piece_start, caller, d);
}

QG_HOT static inline __attribute__((always_inline)) bool
text_allowed(const void *conn, const char *api, const qg_my_state *st, const qg_encoding *enc,
             qg_my_plan *plan, const void *caller, bool *told, qg_decision *d)
{
    qg_my_plan_read(plan, st, NULL);
    if (plan->noted == 0) /* one piece (a text of one statement, read or not) */
        return qg_my_piece_check(conn, api, &plan->start, enc, plan->sql, plan->len, caller, d);
    return pieces_allowed(conn, api, plan, enc, caller, told, d);
}

/* The text checked under the other states it may meet: a reconnect's
 * (`fresh`, or NULL) and those the texts whose answers are unread may
 * leave.  Each is a reading of its own. */
QG_COLD static bool other_states_allowed(const qg_my_session *s, const qg_my_state *fresh,
                                         const void *conn, const char *api,
                                         const qg_my_plan *plan, const void *caller,
                                         bool *told, qg_decision *d)
{
    const char *sql = plan->sql;
    size_t len = plan->len;
    qg_my_plan other;
    qg_my_plan_init(&other, sql, len);
    if (fresh && !text_allowed(conn, api, fresh, NULL, &other, caller, told, d))
        return false;
    if (!s->unread)
        return true;
    if (s->pending.unknown && !qg_my_reads_alike(sql, len))
        return unknown_because(conn, api, s->state.charset, sql, len, caller,
                               "a text sent before, whose answer is not read yet, may change "
                               "character_set_client or sql_mode to what only the server knows",
                               told, d);
    for (unsigned i = 0; i < s->pending.count; i++)
        if (!text_allowed(conn, api, &s->pending.states[i], NULL, &other, caller, told, d))
            return false;
    return true;
}

QG_HOT bool qg_my_state_check(const qg_my_state *st, const qg_encoding *enc, const void *conn,
                              const char *api, qg_my_plan *plan, const void *caller, bool *told,
                              qg_decision *d)
{
    log_state_of(st, false, "check", plan->sql, plan->len);
    return text_allowed(conn, api, st, enc, plan, caller, told, d);
}

/* qg_my_session_check of a session whose state is stale. */
QG_COLD static bool stale_check(const qg_my_session *s, const void *conn, const char *api,
                                qg_my_plan *plan, const void *caller, bool *told, qg_decision *d)
{
    if (!qg_my_plan_reads_alike(plan))
        return qg_my_state_unknown(conn, api, s->state.charset, plan->sql, plan->len, caller,
                                   told, d);
    /* every state reads it so: the last one known, or latin1 */
    qg_my_state alike = s->state;
    if (!alike.charset[0])
        qg_my_state_set_charset(&alike, "latin1", 6);
    log_state(s, "check", plan->sql, plan->len);
    return text_allowed(conn, api, &alike, NULL, plan, caller, told, d);
}

QG_HOT bool qg_my_session_check_read(const qg_my_session *s, const qg_my_state *fresh,
                                     const void *conn, const char *api, qg_my_plan *plan,
                                     const void *caller, bool *told, qg_decision *d)
{
    if (s->stale) {
        if (!stale_check(s, conn, api, plan, caller, told, d))
            return false;
    } else {
        log_state(s, "check", plan->sql, plan->len);
        /* a text of one statement is one piece: its plan is read only
         * when what follows asks (most answers are result sets: never) */
        bool allowed = qg_my_plan_single(plan)
                           ? qg_my_piece_check(conn, api, &s->state, s->enc, plan->sql,
                                               plan->len, caller, d)
                           : text_allowed(conn, api, &s->state, s->enc, plan, caller, told, d);
        if (!allowed)
            return false;
    }
    if (!fresh && !s->unread)
        return true;
    return other_states_allowed(s, fresh, conn, api, plan, caller, told, d);
}
