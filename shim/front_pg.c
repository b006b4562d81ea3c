/* libpq front: every query text is checked, with the connection's current
 * client encoding and standard_conforming_strings, before libpq sends it.
 *
 * A blocked query never leaves the process.  PQexec, PQexecParams and
 * PQprepare return an error result that libpq made itself (so PQresultStatus,
 * PQclear … behave as usual); libpq has no call to put our text into a result
 * or a connection, so the error readers (PQresultErrorMessage,
 * PQresultErrorField, PQerrorMessage …) are interposed too and answer from a
 * registry of blocked results and of connections with a pending message.
 * PQsendQuery & co. return 0, with the message in PQerrorMessage.
 *
 * The shim never includes or links libpq: the types are opaque here and the
 * real entries are found at run time (real.h).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_libraries.h"
#include "config.h"
#include "encoding_tables.h"
#include "front_wire.h"
#include "guard.h"
#include "hot.h"
#include "log.h"
#include "pg_state.h"
#include "real.h"
#include "rewriter.h"
#include "settings.h"

#define QG_EXPORT __attribute__((visibility("default")))

/* libpq's public types and constants, as far as the shim needs them. */
typedef struct pg_conn PGconn;
typedef struct pg_result PGresult;
typedef unsigned int Oid;
enum { PGRES_FATAL_ERROR = 7 };
enum { PQTRANS_INTRANS = 2 };
enum {
    PG_DIAG_SEVERITY = 'S',
    PG_DIAG_SEVERITY_NONLOCALIZED = 'V',
    PG_DIAG_SQLSTATE = 'C',
    PG_DIAG_MESSAGE_PRIMARY = 'M'
};

QG_REAL_FN(PGresult *, PQexec, (PGconn *, const char *), qg_libpq_sonames)
QG_REAL_FN(int, PQsendQuery, (PGconn *, const char *), qg_libpq_sonames)
QG_REAL_FN(PGresult *, PQexecParams,
           (PGconn *, const char *, int, const Oid *, const char *const *, const int *,
            const int *, int),
           qg_libpq_sonames)
QG_REAL_FN(int, PQsendQueryParams,
           (PGconn *, const char *, int, const Oid *, const char *const *, const int *,
            const int *, int),
           qg_libpq_sonames)
QG_REAL_FN(PGresult *, PQprepare, (PGconn *, const char *, const char *, int, const Oid *),
           qg_libpq_sonames)
QG_REAL_FN(int, PQsendPrepare, (PGconn *, const char *, const char *, int, const Oid *),
           qg_libpq_sonames)
QG_REAL_FN(PGresult *, PQexecPrepared,
           (PGconn *, const char *, int, const char *const *, const int *, const int *, int),
           qg_libpq_sonames)
QG_REAL_FN(int, PQsendQueryPrepared,
           (PGconn *, const char *, int, const char *const *, const int *, const int *, int),
           qg_libpq_sonames)
QG_REAL_FN(char *, PQresultErrorMessage, (const PGresult *), qg_libpq_sonames)
QG_REAL_FN(char *, PQresultVerboseErrorMessage, (const PGresult *, int, int), qg_libpq_sonames)
QG_REAL_FN(char *, PQresultErrorField, (const PGresult *, int), qg_libpq_sonames)
QG_REAL_FN(char *, PQerrorMessage, (const PGconn *), qg_libpq_sonames)
QG_REAL_FN(void, PQclear, (PGresult *), qg_libpq_sonames)
QG_REAL_FN(void, PQfinish, (PGconn *), qg_libpq_sonames)
QG_REAL_FN(PGresult *, PQmakeEmptyPGresult, (PGconn *, int), qg_libpq_sonames)
QG_REAL_FN(const char *, PQparameterStatus, (const PGconn *, const char *), qg_libpq_sonames)
QG_REAL_FN(int, PQclientEncoding, (const PGconn *), qg_libpq_sonames)
QG_REAL_FN(char *, pg_encoding_to_char, (int), qg_libpq_sonames)
QG_REAL_FN(int, PQpipelineStatus, (const PGconn *), qg_libpq_sonames)
QG_REAL_FN(int, PQsocket, (const PGconn *), qg_libpq_sonames)
QG_REAL_FN(int, PQtransactionStatus, (const PGconn *), qg_libpq_sonames)

QG_COLD static void report_missing(const char *name)
{
    qg_log_write_event(qg_settings_get(), "error", "missing_symbol", name);
}

/* ---------------------------------------------------------------- registry */

/* The message of one blocked query, kept for a result or a connection. */
typedef struct blocked_message {
    const void *key; /* the PGresult or PGconn */
    struct blocked_message *next;
    char sqlstate[6];
    char primary[sizeof(((qg_decision *)0)->message)]; /* "quoteguard: …" */
    char text[sizeof(((qg_decision *)0)->message) + 1]; /* primary + "\n", as libpq ends messages */
} blocked_message;

typedef struct registry {
    pthread_mutex_t lock;
    blocked_message *head;
    unsigned live; /* entries; read without the lock so that empty means no locking */
} registry;

static registry blocked_results = {PTHREAD_MUTEX_INITIALIZER, NULL, 0};
static registry pending_conn_messages = {PTHREAD_MUTEX_INITIALIZER, NULL, 0};

/* A fork while another thread holds a registry's lock must not leave it
 * held in the child. */
static void lock_registries(void)
{
    pthread_mutex_lock(&blocked_results.lock);
    pthread_mutex_lock(&pending_conn_messages.lock);
}

static void unlock_registries(void)
{
    pthread_mutex_unlock(&pending_conn_messages.lock);
    pthread_mutex_unlock(&blocked_results.lock);
}

__attribute__((constructor)) static void keep_registries_across_fork(void)
{
    pthread_atfork(lock_registries, unlock_registries, unlock_registries);
}

static bool registry_empty(registry *r)
{
    return __atomic_load_n(&r->live, __ATOMIC_ACQUIRE) == 0;
}

/* Unlinks and returns the entry for key; the caller holds the lock. */
static blocked_message *registry_unlink(registry *r, const void *key)
{
    for (blocked_message **link = &r->head; *link; link = &(*link)->next) {
        if ((*link)->key == key) {
            blocked_message *found = *link;
            *link = found->next;
            __atomic_sub_fetch(&r->live, 1, __ATOMIC_RELEASE);
            return found;
        }
    }
    return NULL;
}

/* When malloc fails, entries come from here, so that a blocked caller still
 * reads our message. */
#define FALLBACK_ENTRIES 16
QG_FAR_BSS static blocked_message fallback[FALLBACK_ENTRIES];
static bool fallback_used[FALLBACK_ENTRIES];

static blocked_message *entry_alloc(void)
{
    blocked_message *m = malloc(sizeof *m);
    for (size_t i = 0; !m && i < FALLBACK_ENTRIES; i++)
        if (!__atomic_exchange_n(&fallback_used[i], true, __ATOMIC_ACQUIRE))
            m = &fallback[i];
    return m;
}

static void entry_free(blocked_message *m)
{
    if (m >= fallback && m < fallback + FALLBACK_ENTRIES)
        __atomic_store_n(&fallback_used[m - fallback], false, __ATOMIC_RELEASE);
    else
        free(m);
}

static void registry_drop(registry *r, const void *key)
{
    if (registry_empty(r))
        return;
    pthread_mutex_lock(&r->lock);
    blocked_message *gone = registry_unlink(r, key);
    pthread_mutex_unlock(&r->lock);
    if (gone)
        entry_free(gone);
}

/* Records the decision's message for key, replacing an older one.  Without
 * any memory the query stays blocked; only our text is lost. */
static void registry_put(registry *r, const void *key, const qg_decision *d)
{
    blocked_message *m = entry_alloc();
    if (!m)
        return;
    m->key = key;
    snprintf(m->sqlstate, sizeof m->sqlstate, "%s", d->sqlstate ? d->sqlstate : "42000");
    snprintf(m->primary, sizeof m->primary, "%s", d->message);
    snprintf(m->text, sizeof m->text, "%s\n", d->message);
    pthread_mutex_lock(&r->lock);
    blocked_message *old = registry_unlink(r, key);
    m->next = r->head;
    r->head = m;
    __atomic_add_fetch(&r->live, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&r->lock);
    if (old)
        entry_free(old);
}

/* The entry for key, or NULL.  It stays valid after the lock is released
 * because only an operation on the same result (PQclear) or connection (its
 * next query) removes it, and libpq forbids those concurrently with a read. */
static const blocked_message *registry_find(registry *r, const void *key)
{
    if (registry_empty(r))
        return NULL;
    pthread_mutex_lock(&r->lock);
    const blocked_message *m = r->head;
    while (m && m->key != key)
        m = m->next;
    pthread_mutex_unlock(&r->lock);
    return m;
}

/* ------------------------------------------------------------------- check */

/* The encoding the server reports for itself ("" when it reports none). */
static const char *server_encoding(const PGconn *conn)
{
    PQparameterStatus_fn status = real_PQparameterStatus();
    const char *name = status ? status(conn, "server_encoding") : NULL;
    return name ? name : "";
}

/* The client encoding.  libpq keeps it as a number (PQclientEncoding),
 * read in one step where the name the server reported is a walk down the
 * list of every reported parameter.  But libpq takes a name it does not
 * know for SQL_ASCII (0), so for that one the reported name is read. */
QG_HOT static const char *client_encoding(const PGconn *conn)
{
    PQclientEncoding_fn id_of = real_PQclientEncoding();
    pg_encoding_to_char_fn to_name = real_pg_encoding_to_char();
    int id = id_of && to_name ? id_of(conn) : -1;
    const char *name = id > 0 ? to_name(id) : NULL;
    if (name && *name)
        return name;
    PQparameterStatus_fn status = real_PQparameterStatus();
    name = status ? status(conn, "client_encoding") : NULL;
    return name ? name : "";
}

/* The encoding the server checks a client's text against: a SQL_ASCII
 * client's text is checked against the server encoding (the server does
 * not convert it, but verifies it as its own); a SQL_ASCII server verifies
 * an encoding it cannot convert from as ASCII only.  A server that reports
 * no encoding leaves it unknown (""): blocked, not guessed. */
static const char *checked_encoding(const PGconn *conn, const char *client)
{
    const qg_encoding *enc = qg_encoding_find(QG_DIALECT_POSTGRES, client);
    if (!enc)
        return client;
    bool ascii_client = strcmp(qg_encoding_name(enc), "SQL_ASCII") == 0;
    if (!ascii_client && !qg_encoding_pg_client_only(enc))
        return client;
    const char *server = server_encoding(conn);
    bool ascii_server = strcmp(server, "SQL_ASCII") == 0;
    if (ascii_client)
        return ascii_server ? client : server;
    return ascii_server ? QG_PG_ASCII_ONLY : client;
}

QG_HOT static unsigned quoting_flags(const PGconn *conn)
{
    PQparameterStatus_fn status = real_PQparameterStatus();
    const char *scs = status ? status(conn, "standard_conforming_strings") : NULL;
    return scs && strcmp(scs, "on") == 0 ? QG_STD_STRINGS : 0;
}

/* Opens an intercepted query call.  False when it passes straight through:
 * nothing to check, the shim is off, or this is libpq's inner call for the
 * call being checked (PQexec calls PQsendQuery with the same text through its
 * PLT).  When true, the call is recorded until close_query(). */
QG_HOT static bool open_query(PGconn *conn, const char *sql)
{
    if (!conn || !sql)
        return false;
    /* A pending message lives until the next query on its connection. */
    registry_drop(&pending_conn_messages, conn);
    const qg_settings *s = qg_settings_get();
    if (s->mode == QG_MODE_OFF || !s->active)
        return false;
    /* this front checks the connection's queries: the wire front must not;
     * and the log never writes into its socket */
    PQsocket_fn socket_of = real_PQsocket();
    if (socket_of) {
        int fd = socket_of(conn);
        qg_wire_library_guarded(fd);
        qg_log_note_db_socket(fd);
    }
    /* libpq's texts are C strings: the pointer alone names the call. */
    return qg_guard_enter(conn, sql, 0);
}

QG_HOT static void close_query(void)
{
    qg_guard_leave();
}

/* PQsendQueryParams works in pipeline mode where PQsendQuery does not:
 * there the query goes as it is, so that libpq answers as it would. */
QG_HOT static bool pipeline_off(const PGconn *conn)
{
    PQpipelineStatus_fn pipeline = real_PQpipelineStatus();
    return !pipeline || pipeline(conn) == 0; /* PQ_PIPELINE_OFF; no symbol: no pipelines */
}

/* ------------------------------------------------------ pipeline state */

/* In pipeline mode a statement meets the state every statement queued
 * before it leaves, which libpq reports only once their results are read:
 * per connection, the states its pipeline's statements may meet
 * (shim/pg_state.h).  A connection is used by one thread at a time; the
 * lock guards the list only. */
typedef struct pipeline_states {
    const PGconn *conn;
    struct pipeline_states *next;
    qg_pg_pending pending;
    /* A statement this connection prepared may change the state: executed
     * in a pipeline (no text to read), it may set any value.  Kept while
     * the connection lives. */
    bool prepared_sets_state;
} pipeline_states;

static struct {
    pthread_mutex_t lock;
    pipeline_states *head;
    unsigned live;
} pipelines = {PTHREAD_MUTEX_INITIALIZER, NULL, 0};

static void lock_pipelines(void)
{
    pthread_mutex_lock(&pipelines.lock);
}

static void unlock_pipelines(void)
{
    pthread_mutex_unlock(&pipelines.lock);
}

__attribute__((constructor)) static void keep_pipelines_across_fork(void)
{
    pthread_atfork(lock_pipelines, unlock_pipelines, unlock_pipelines);
}

/* The connection's entry, made when `make`; NULL when there is none (or
 * no memory for one). */
static pipeline_states *pipeline_find(const PGconn *conn, bool make)
{
    if (!make && __atomic_load_n(&pipelines.live, __ATOMIC_ACQUIRE) == 0)
        return NULL;
    lock_pipelines();
    pipeline_states *p = pipelines.head;
    while (p && p->conn != conn)
        p = p->next;
    if (!p && make && (p = calloc(1, sizeof *p)) != NULL) {
        p->conn = conn;
        p->next = pipelines.head;
        pipelines.head = p;
        __atomic_add_fetch(&pipelines.live, 1, __ATOMIC_RELEASE);
    }
    unlock_pipelines();
    return p;
}

/* Unlinks the connection's entry; the caller frees it. */
static pipeline_states *pipeline_unlink(const PGconn *conn, bool keep_prepared)
{
    if (__atomic_load_n(&pipelines.live, __ATOMIC_ACQUIRE) == 0)
        return NULL;
    lock_pipelines();
    pipeline_states *gone = NULL;
    for (pipeline_states **link = &pipelines.head; *link; link = &(*link)->next) {
        pipeline_states *p = *link;
        if (p->conn != conn)
            continue;
        if (keep_prepared && p->prepared_sets_state) {
            memset(&p->pending, 0, sizeof p->pending);
        } else {
            gone = p;
            *link = p->next;
            __atomic_sub_fetch(&pipelines.live, 1, __ATOMIC_RELEASE);
        }
        break;
    }
    unlock_pipelines();
    return gone;
}

/* Out of pipeline mode every result has been read: libpq's state is the
 * server's, and the states the pipeline's statements might meet go. */
static void pipeline_forget(const PGconn *conn)
{
    free(pipeline_unlink(conn, true));
}

/* A prepared statement that may change the state (its text is read once,
 * here): noted for a pipeline that may execute it later. */
static void note_prepared(const PGconn *conn, const char *sql)
{
    qg_pg_effect effect = qg_pg_statement_effect(sql, strlen(sql));
    if (effect.encoding == QG_PG_KEEPS && effect.scs == QG_PG_KEEPS)
        return;
    pipeline_states *p = pipeline_find(conn, true);
    if (p)
        p->prepared_sets_state = true;
}

/* A prepared statement executed in a pipeline: where the connection
 * prepared one that may change the state, the statements after it are
 * checked under every state. */
static void note_prepared_executed(const PGconn *conn)
{
    static const qg_pg_effect any = {.encoding = QG_PG_UNKNOWN, .scs = QG_PG_UNKNOWN};
    if (pipeline_off(conn))
        return;
    pipeline_states *p = pipeline_find(conn, false);
    if (p && p->prepared_sets_state)
        qg_pg_pending_add_effect(&p->pending, &any);
}

/* ------------------------------------------------------------------ check */

/* The name a query is checked under when a statement queued before it in
 * the pipeline sets the client encoding to a value not known in advance:
 * the guard blocks it as an unknown encoding. */
static const char unknown_pipeline_encoding[] = "set in the pipeline to a value not known in advance";

/* Checks q (encoding_name and flags set) as the server reads it: where its
 * conversion to the server encoding makes ASCII of a client character,
 * through the converted view.  True = send it. */
static bool check_converted(PGconn *conn, qg_query *q, qg_decision *d)
{
    const qg_encoding *enc = qg_encoding_find(QG_DIALECT_POSTGRES, q->encoding_name);
    bool converts = enc && qg_encoding_converts_to_ascii(enc);
    const char *server = converts ? server_encoding(conn) : "";
    if (converts && !*server) {
        /* Which conversion the server runs is not known: not guessed. */
        q->encoding_name = "(no server_encoding reported to read the conversion by)";
        return qg_guard_query(q, d);
    }
    const qg_ascii_conversion *table = converts ? qg_conversion_to_ascii(enc, server) : NULL;
    size_t count = table ? qg_server_view_count(enc, table, q->sql, q->len) : 0;
    if (count == 0)
        return qg_guard_query(q, d);
    char *text = malloc(q->len + 1);
    qg_converted_char *chars = malloc(count * sizeof *chars);
    bool allowed = false;
    if (text && chars) {
        qg_server_view view;
        qg_server_view_build(enc, table, q->sql, q->len, text, chars, &view);
        q->view = &view;
        allowed = qg_guard_query(q, d);
        q->view = NULL;
    } else {
        /* Not read as the server reads it, so not sent. */
        q->encoding_name = "(no memory for the converted text)";
        allowed = qg_guard_query(q, d);
    }
    free(text);
    free(chars);
    return allowed;
}

/* The query with the connection's state as libpq reports it now. */
QG_HOT static qg_query describe_query(PGconn *conn, const char *api, const char *sql,
                                      const void *caller)
{
    return (qg_query){
        .dialect = QG_DIALECT_POSTGRES,
        .encoding_name = checked_encoding(conn, client_encoding(conn)),
        .flags = quoting_flags(conn),
        .conn = conn,
        .api = api,
        .sql = sql,
        .len = strlen(sql),
        .caller = caller,
    };
}

/* Checks the text of q (described now) under every state the server may
 * read it in: the connection's as libpq reports it, and in pipeline mode
 * every state a statement queued before it may leave.  A text that passes
 * in a pipeline adds the states it may set.  True = send it. */
static bool check(PGconn *conn, const qg_query *described, qg_decision *d)
{
    qg_query q = *described;
    if (pipeline_off(conn)) {
        pipeline_forget(conn);
        return check_converted(conn, &q, d);
    }
    pipeline_states *p = pipeline_find(conn, true);
    if (!p) {
        q.encoding_name = "(no memory for the pipeline's states)";
        return check_converted(conn, &q, d);
    }
    qg_pg_pending_add_reported(&p->pending, described->encoding_name,
                               described->flags & QG_STD_STRINGS);
    const qg_pg_pending *states = &p->pending;
    bool allowed = true;
    for (unsigned scs = 0; allowed && scs < 2; scs++) {
        if (!(scs ? states->scs_on : states->scs_off))
            continue;
        q.flags = scs ? QG_STD_STRINGS : 0;
        for (unsigned i = 0; allowed && i < states->encoding_count; i++) {
            q.encoding_name = checked_encoding(conn, states->encodings[i]);
            allowed = check_converted(conn, &q, d);
        }
        if (allowed && states->encoding_unknown) {
            q.encoding_name = unknown_pipeline_encoding;
            allowed = check_converted(conn, &q, d);
        }
    }
    if (allowed) {
        qg_pg_effect effect = qg_pg_statement_effect(q.sql, q.len);
        qg_pg_pending_add_effect(&p->pending, &effect);
    }
    return allowed;
}

static bool query_allowed(PGconn *conn, const char *api, const char *sql, const void *caller,
                          qg_decision *d)
{
    qg_query q = describe_query(conn, api, sql, caller);
    return check(conn, &q, d);
}

/* A statement that fails on the server aborts the transaction it is in; a
 * blocked one must too, or a program that ignores the error and commits
 * would commit the rest.  So inside a transaction block the server is told
 * to fail, with a message that names us in its log. */
static void abort_open_transaction(PGconn *conn)
{
    static const char fail[] =
        "DO $quoteguard$BEGIN RAISE EXCEPTION 'quoteguard blocked a statement in this "
        "transaction' USING ERRCODE = '42501'; END$quoteguard$";
    PQtransactionStatus_fn status = real_PQtransactionStatus();
    PQexec_fn exec = real_PQexec();
    PQclear_fn clear = real_PQclear();
    if (!status || !exec || !clear || status(conn) != PQTRANS_INTRANS || !pipeline_off(conn))
        return;
    bool entered = qg_guard_enter(conn, fail, 0);
    clear(exec(conn, fail));
    if (entered)
        qg_guard_leave();
}

/* What a blocked PQexec/PQexecParams/PQprepare returns: libpq's own empty
 * error result, registered so that the error readers give our message.
 * PQerrorMessage(conn) carries it too, as after any failed PQexec.
 * (Rewrite mode blocks like enforce; only queries that pass are rewritten.) */
QG_COLD static PGresult *blocked_result(PGconn *conn, const qg_decision *d)
{
    abort_open_transaction(conn);
    registry_put(&pending_conn_messages, conn, d);
    PQmakeEmptyPGresult_fn make = real_PQmakeEmptyPGresult();
    if (!make) {
        report_missing("PQmakeEmptyPGresult");
        return NULL;
    }
    PGresult *res = make(conn, PGRES_FATAL_ERROR);
    if (res)
        registry_put(&blocked_results, res, d);
    return res;
}

/* In pipeline mode a blocked statement is replaced by one that fails on the
 * server with our message, in its place: the application reads an error
 * result for it as for any statement the server rejects, and the server
 * aborts the pipeline's transaction (an explicit one stays aborted, so a
 * COMMIT queued after it commits nothing) and skips what follows up to the
 * next sync.  The message goes as ASCII without quotes, backslashes, dollar
 * or percent signs; it holds none of the query. */
QG_COLD static int fail_in_pipeline(PGconn *conn, const qg_decision *d)
{
    char text[sizeof d->message + 160], message[sizeof d->message];
    size_t n = 0;
    for (const char *c = d->message; *c && n + 1 < sizeof message; c++) {
        if (*c >= ' ' && *c <= '~' && !strchr("'\\$%", *c))
            message[n++] = *c;
        else
            message[n++] = '?';
    }
    message[n] = '\0';
    snprintf(text, sizeof text,
             "DO $quoteguard$BEGIN RAISE EXCEPTION '%s' USING ERRCODE = '%.5s'; END$quoteguard$",
             message, d->sqlstate ? d->sqlstate : "42000");
    PQsendQueryParams_fn send = real_PQsendQueryParams();
    if (!send) {
        report_missing("PQsendQueryParams");
        return 0;
    }
    bool entered = qg_guard_enter(conn, text, 0);
    int sent = send(conn, text, 0, NULL, NULL, NULL, NULL, 0);
    if (entered)
        qg_guard_leave();
    return sent;
}

/* What a blocked PQsend* returns: 0, with the message in PQerrorMessage;
 * in pipeline mode, what the failing statement sent in its place does. */
QG_COLD static int blocked_send(PGconn *conn, const qg_decision *d)
{
    if (!pipeline_off(conn))
        return fail_in_pipeline(conn, d);
    abort_open_transaction(conn);
    registry_put(&pending_conn_messages, conn, d);
    return 0;
}

/* ----------------------------------------------------------- rewrite */

/* A query to send with parameters.  One block holds everything: `local`
 * when it fits, so that most rewritten queries allocate nothing, else one
 * malloc (rewritten_release frees it). */
typedef struct rewritten {
    void *block;
    const char *text;
    const char *const *params;
    int nparams;
    _Alignas(sizeof(void *)) char local[2048];
} rewritten;

static void rewritten_release(rewritten *rw)
{
    if (rw->block != rw->local)
        free(rw->block);
}

static bool server_is_utf8(const PGconn *conn)
{
    return strcmp(server_encoding(conn), "UTF8") == 0;
}

/* Rewrite mode, for a query `q` that passed the check: true when rw->text
 * and rw->params are to be sent instead (rewritten_release afterwards).  The
 * decision is shim/rewriter.c's, in the connection's state the check read;
 * this only finds the memory.  A query qg_rewrite_skip_reason() rules out
 * is not read further. */
QG_HOT static bool rewrite_query(PGconn *conn, const qg_query *q, rewritten *rw)
{
    const qg_settings *s = qg_settings_get();
    if (s->mode != QG_MODE_REWRITE || !pipeline_off(conn))
        return false;
    const char *sql = q->sql, *api = q->api;
    size_t len = q->len;
    char detail[QG_LOG_LINE_MAX / 2];
    unsigned options = s->rewrite_all ? 0 : QG_REWRITE_PLAIN_AS_IS;
    const char *why = qg_rewrite_skip_reason(sql, len, options);
    if (!why) {
        const qg_encoding *enc = qg_encoding_find(QG_DIALECT_POSTGRES, q->encoding_name);
        /* The rewriter decodes literals in the client encoding; where the
         * conversion makes ASCII of some character the server decodes
         * another text. */
        if (!enc || (qg_encoding_converts_to_ascii(enc) &&
                     qg_conversion_to_ascii(enc, server_encoding(conn))))
            return false;
        qg_context ctx;
        qg_context_init(&ctx, QG_DIALECT_POSTGRES, enc, q->flags);
        if (server_is_utf8(conn))
            options |= QG_REWRITE_SERVER_UTF8;

        /* One pass into buffers of the largest possible size: the text keeps
         * its length or shrinks, values are no longer than their literals,
         * and every parameter takes a literal of at least two bytes. */
        size_t max_params =
            len / 2 + 1 < QG_REWRITE_MAX_PARAMS ? len / 2 + 1 : QG_REWRITE_MAX_PARAMS;
        size_t params_bytes = max_params * sizeof(const char *);
        size_t need = params_bytes + 2 * (len + 1);
        char *block = need <= sizeof rw->local ? rw->local : malloc(need);
        if (!block)
            return false; /* the query passed the check: it may go as it is */
        qg_rewrite out = {
            .params = (const char **)(void *)block,
            .params_cap = max_params,
            .text = block + params_bytes,
            .text_cap = len + 1,
            .values = block + params_bytes + len + 1,
            .values_cap = len + 1,
        };
        rw->block = block;
        if (qg_rewrite_query(&ctx, options, sql, len, &out) == QG_REWRITE_DONE) {
            if (s->verbosity >= 2) {
                /* The rewritten text holds no literal values, only $n. */
                snprintf(detail, sizeof detail, "%s: %zu parameters: %s", api, out.nparams,
                         out.text);
                qg_log_write_event(s, "debug", "rewritten", detail);
            }
            rw->text = out.text;
            rw->params = out.params;
            rw->nparams = (int)out.nparams;
            return true;
        }
        rewritten_release(rw);
        why = out.why ? out.why : "more parameters than fit";
    }
    if (s->verbosity >= 2) {
        snprintf(detail, sizeof detail, "%s: sent as it is: %s", api, why);
        qg_log_write_event(s, "debug", "rewrite_skipped", detail);
    }
    return false;
}

QG_HOT static PGresult *exec_allowed(PGconn *conn, const qg_query *q, PQexec_fn real)
{
    rewritten rw;
    PQexecParams_fn with_params = real_PQexecParams();
    if (!with_params || !rewrite_query(conn, q, &rw))
        return real(conn, q->sql);
    bool entered = qg_guard_enter(conn, rw.text, 0); /* libpq's inner calls for it */
    PGresult *res = with_params(conn, rw.text, rw.nparams, NULL, rw.params, NULL, NULL, 0);
    if (entered)
        qg_guard_leave();
    rewritten_release(&rw);
    return res;
}

QG_HOT static int send_allowed(PGconn *conn, const qg_query *q, PQsendQuery_fn real)
{
    rewritten rw;
    PQsendQueryParams_fn with_params = real_PQsendQueryParams();
    if (!with_params || !rewrite_query(conn, q, &rw))
        return real(conn, q->sql);
    bool entered = qg_guard_enter(conn, rw.text, 0); /* libpq's inner calls for it */
    int sent = with_params(conn, rw.text, rw.nparams, NULL, rw.params, NULL, NULL, 0);
    if (entered)
        qg_guard_leave();
    rewritten_release(&rw);
    return sent;
}

/* ------------------------------------------------------- query entries */

QG_HOT QG_EXPORT PGresult *PQexec(PGconn *conn, const char *query)
{
    PQexec_fn real = real_PQexec();
    if (!real) {
        report_missing("PQexec");
        return NULL;
    }
    if (!open_query(conn, query))
        return real(conn, query);
    qg_decision d;
    qg_query q = describe_query(conn, "PQexec", query, __builtin_return_address(0));
    PGresult *res = check(conn, &q, &d) ? exec_allowed(conn, &q, real) : blocked_result(conn, &d);
    close_query();
    return res;
}

QG_HOT QG_EXPORT int PQsendQuery(PGconn *conn, const char *query)
{
    PQsendQuery_fn real = real_PQsendQuery();
    if (!real) {
        report_missing("PQsendQuery");
        return 0;
    }
    if (!open_query(conn, query))
        return real(conn, query);
    qg_decision d;
    qg_query q = describe_query(conn, "PQsendQuery", query, __builtin_return_address(0));
    int sent = check(conn, &q, &d) ? send_allowed(conn, &q, real) : blocked_send(conn, &d);
    close_query();
    return sent;
}

QG_EXPORT PGresult *PQexecParams(PGconn *conn, const char *command, int nParams,
                                 const Oid *paramTypes, const char *const *paramValues,
                                 const int *paramLengths, const int *paramFormats,
                                 int resultFormat)
{
    PQexecParams_fn real = real_PQexecParams();
    if (!real) {
        report_missing("PQexecParams");
        return NULL;
    }
    if (!open_query(conn, command))
        return real(conn, command, nParams, paramTypes, paramValues, paramLengths, paramFormats,
                    resultFormat);
    qg_decision d;
    PGresult *res =
        query_allowed(conn, "PQexecParams", command, __builtin_return_address(0), &d)
            ? real(conn, command, nParams, paramTypes, paramValues, paramLengths, paramFormats,
                   resultFormat)
            : blocked_result(conn, &d);
    close_query();
    return res;
}

QG_EXPORT int PQsendQueryParams(PGconn *conn, const char *command, int nParams,
                                const Oid *paramTypes, const char *const *paramValues,
                                const int *paramLengths, const int *paramFormats,
                                int resultFormat)
{
    PQsendQueryParams_fn real = real_PQsendQueryParams();
    if (!real) {
        report_missing("PQsendQueryParams");
        return 0;
    }
    if (!open_query(conn, command))
        return real(conn, command, nParams, paramTypes, paramValues, paramLengths, paramFormats,
                    resultFormat);
    qg_decision d;
    int sent = query_allowed(conn, "PQsendQueryParams", command, __builtin_return_address(0), &d)
                   ? real(conn, command, nParams, paramTypes, paramValues, paramLengths,
                          paramFormats, resultFormat)
                   : blocked_send(conn, &d);
    close_query();
    return sent;
}

QG_EXPORT PGresult *PQprepare(PGconn *conn, const char *stmtName, const char *query,
                              int nParams, const Oid *paramTypes)
{
    PQprepare_fn real = real_PQprepare();
    if (!real) {
        report_missing("PQprepare");
        return NULL;
    }
    if (!open_query(conn, query))
        return real(conn, stmtName, query, nParams, paramTypes);
    qg_decision d;
    bool allowed = query_allowed(conn, "PQprepare", query, __builtin_return_address(0), &d);
    if (allowed)
        note_prepared(conn, query);
    PGresult *res =
        allowed ? real(conn, stmtName, query, nParams, paramTypes) : blocked_result(conn, &d);
    close_query();
    return res;
}

QG_EXPORT int PQsendPrepare(PGconn *conn, const char *stmtName, const char *query, int nParams,
                            const Oid *paramTypes)
{
    PQsendPrepare_fn real = real_PQsendPrepare();
    if (!real) {
        report_missing("PQsendPrepare");
        return 0;
    }
    if (!open_query(conn, query))
        return real(conn, stmtName, query, nParams, paramTypes);
    qg_decision d;
    bool allowed = query_allowed(conn, "PQsendPrepare", query, __builtin_return_address(0), &d);
    if (allowed)
        note_prepared(conn, query);
    int sent = allowed ? real(conn, stmtName, query, nParams, paramTypes) : blocked_send(conn, &d);
    close_query();
    return sent;
}

/* Prepared statements carry no query text; they are intercepted only
 * because they are the connection's next query, which ends a pending message. */
QG_EXPORT PGresult *PQexecPrepared(PGconn *conn, const char *stmtName, int nParams,
                                   const char *const *paramValues, const int *paramLengths,
                                   const int *paramFormats, int resultFormat)
{
    PQexecPrepared_fn real = real_PQexecPrepared();
    if (!real) {
        report_missing("PQexecPrepared");
        return NULL;
    }
    registry_drop(&pending_conn_messages, conn);
    return real(conn, stmtName, nParams, paramValues, paramLengths, paramFormats, resultFormat);
}

QG_EXPORT int PQsendQueryPrepared(PGconn *conn, const char *stmtName, int nParams,
                                  const char *const *paramValues, const int *paramLengths,
                                  const int *paramFormats, int resultFormat)
{
    PQsendQueryPrepared_fn real = real_PQsendQueryPrepared();
    if (!real) {
        report_missing("PQsendQueryPrepared");
        return 0;
    }
    registry_drop(&pending_conn_messages, conn);
    note_prepared_executed(conn);
    return real(conn, stmtName, nParams, paramValues, paramLengths, paramFormats, resultFormat);
}

/* -------------------------------------------------------- error readers */

QG_EXPORT char *PQerrorMessage(const PGconn *conn)
{
    const blocked_message *m = registry_find(&pending_conn_messages, conn);
    if (m)
        return (char *)m->text;
    PQerrorMessage_fn real = real_PQerrorMessage();
    if (!real) {
        report_missing("PQerrorMessage");
        return (char *)"";
    }
    return real(conn);
}

QG_EXPORT char *PQresultErrorMessage(const PGresult *res)
{
    const blocked_message *m = registry_find(&blocked_results, res);
    if (m)
        return (char *)m->text;
    PQresultErrorMessage_fn real = real_PQresultErrorMessage();
    if (!real) {
        report_missing("PQresultErrorMessage");
        return (char *)"";
    }
    return real(res);
}

/* verbosity and show_context are libpq enums (int-sized). The caller frees
 * the answer with PQfreemem, which is free(). */
QG_EXPORT char *PQresultVerboseErrorMessage(const PGresult *res, int verbosity, int show_context)
{
    const blocked_message *m = registry_find(&blocked_results, res);
    if (m)
        return strdup(m->text);
    PQresultVerboseErrorMessage_fn real = real_PQresultVerboseErrorMessage();
    if (!real) {
        report_missing("PQresultVerboseErrorMessage");
        return NULL;
    }
    return real(res, verbosity, show_context);
}

QG_EXPORT char *PQresultErrorField(const PGresult *res, int fieldcode)
{
    const blocked_message *m = registry_find(&blocked_results, res);
    if (m) {
        static char severity[] = "ERROR";
        switch (fieldcode) {
        case PG_DIAG_SEVERITY:
        case PG_DIAG_SEVERITY_NONLOCALIZED:
            return severity;
        case PG_DIAG_SQLSTATE:
            return (char *)m->sqlstate;
        case PG_DIAG_MESSAGE_PRIMARY:
            return (char *)m->primary;
        default:
            return NULL;
        }
    }
    PQresultErrorField_fn real = real_PQresultErrorField();
    if (!real) {
        report_missing("PQresultErrorField");
        return NULL;
    }
    return real(res, fieldcode);
}

/* ------------------------------------------------------------ lifetimes */

QG_HOT QG_EXPORT void PQclear(PGresult *res)
{
    /* Dropped before the real free, so that a new result at the same
     * address can never find the old entry. */
    registry_drop(&blocked_results, res);
    PQclear_fn real = real_PQclear();
    if (!real) {
        report_missing("PQclear");
        return;
    }
    real(res);
}

QG_EXPORT void PQfinish(PGconn *conn)
{
    registry_drop(&pending_conn_messages, conn);
    free(pipeline_unlink(conn, false));
    PQfinish_fn real = real_PQfinish();
    if (!real) {
        report_missing("PQfinish");
        return;
    }
    real(conn);
}
