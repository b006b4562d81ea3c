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
#include "front_wire.h"
#include "guard.h"
#include "hot.h"
#include "log.h"
#include "pg_blocked.h"
#include "pg_check.h"
#include "pg_encoding.h"
#include "pg_pipeline.h"
#include "pg_rewrite.h"
#include "pg_state.h"
#include "real.h"
#include "settings.h"

#define QG_EXPORT __attribute__((visibility("default")))
/* A step of every query's path: in line, without a call's saving and
 * restoring of registers. */
#define IN_LINE inline __attribute__((always_inline))

/* libpq's public types and constants, as far as the shim needs them. */
typedef struct pg_conn PGconn;
typedef struct pg_result PGresult;
typedef unsigned int Oid;
enum { PGRES_COPY_OUT = 3, PGRES_COPY_IN = 4, PGRES_FATAL_ERROR = 7, PGRES_COPY_BOTH = 8 };
enum { PQTRANS_ACTIVE = 1, PQTRANS_INTRANS = 2 };
enum { PQERRORS_VERBOSE = 2, PQERRORS_SQLSTATE = 3 }; /* PGVerbosity */
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
QG_REAL_FN(PGresult *, PQgetResult, (PGconn *), qg_libpq_sonames)
QG_REAL_FN(int, PQresultStatus, (const PGresult *), qg_libpq_sonames)
QG_REAL_FN(void, PQfinish, (PGconn *), qg_libpq_sonames)
QG_REAL_FN(PGresult *, PQmakeEmptyPGresult, (PGconn *, int), qg_libpq_sonames)
QG_REAL_FN(const char *, PQparameterStatus, (const PGconn *, const char *), qg_libpq_sonames)
QG_REAL_FN(int, PQclientEncoding, (const PGconn *), qg_libpq_sonames)
QG_REAL_FN(char *, pg_encoding_to_char, (int), qg_libpq_sonames)
QG_REAL_FN(int, PQpipelineStatus, (const PGconn *), qg_libpq_sonames)
QG_REAL_FN(int, PQenterPipelineMode, (PGconn *), qg_libpq_sonames)
QG_REAL_FN(int, PQsocket, (const PGconn *), qg_libpq_sonames)
QG_REAL_FN(int, PQtransactionStatus, (const PGconn *), qg_libpq_sonames)
QG_REAL_FN(int, PQbackendPID, (const PGconn *), qg_libpq_sonames)
QG_REAL_FN(void, PQreset, (PGconn *), qg_libpq_sonames)
QG_REAL_FN(int, PQresetStart, (PGconn *), qg_libpq_sonames)

/* libpq's readers of a connection's state that a checked query calls, and
 * PQexec and its inner PQsendQuery, looked up together: a query tests the
 * generation of the real symbols (real.h) once for them all, not once a
 * function (docs/PERFORMANCE.md, "Choices in the code").  NULL: libpq has
 * none. */
typedef struct state_readers {
    PQexec_fn exec;
    PQsendQuery_fn send_query;
    PQsocket_fn socket;
    PQtransactionStatus_fn transaction_status;
    PQpipelineStatus_fn pipeline_status;
    PQclientEncoding_fn client_encoding;
    PQbackendPID_fn backend_pid;
    unsigned generation; /* qg_real_generation when looked up; 0: never */
} state_readers;
static state_readers kept_readers;

__attribute__((noinline)) static void look_up_readers(void)
{
    unsigned now = __atomic_load_n(&qg_real_generation, __ATOMIC_ACQUIRE);
    __atomic_store_n(&kept_readers.exec, real_PQexec(), __ATOMIC_RELAXED);
    __atomic_store_n(&kept_readers.send_query, real_PQsendQuery(), __ATOMIC_RELAXED);
    __atomic_store_n(&kept_readers.socket, real_PQsocket(), __ATOMIC_RELAXED);
    __atomic_store_n(&kept_readers.transaction_status, real_PQtransactionStatus(),
                     __ATOMIC_RELAXED);
    __atomic_store_n(&kept_readers.pipeline_status, real_PQpipelineStatus(), __ATOMIC_RELAXED);
    __atomic_store_n(&kept_readers.client_encoding, real_PQclientEncoding(), __ATOMIC_RELAXED);
    __atomic_store_n(&kept_readers.backend_pid, real_PQbackendPID(), __ATOMIC_RELAXED);
    __atomic_store_n(&kept_readers.generation, now, __ATOMIC_RELEASE);
}

/* The readers, of this generation; each is read from them with one
 * atomic load (another thread may be writing the same functions in). */
static inline const state_readers *libpq_readers(void)
{
    if (__atomic_load_n(&kept_readers.generation, __ATOMIC_ACQUIRE) !=
        __atomic_load_n(&qg_real_generation, __ATOMIC_ACQUIRE))
        look_up_readers();
    return &kept_readers; /* one address: the callers read it in place */
}

/* Blocked queries' messages, for the error readers. */
static qg_pg_registry blocked_results = QG_PG_REGISTRY_INIT;
static qg_pg_registry pending_conn_messages = QG_PG_REGISTRY_INIT;

/* A fork while another thread holds a registry's lock must not leave it
 * held in the child (conn_map.h). */
static void lock_registries(void)
{
    qg_conn_map_write_lock(&blocked_results);
    qg_conn_map_write_lock(&pending_conn_messages);
}

static void unlock_registries(void)
{
    qg_conn_map_unlock(&pending_conn_messages);
    qg_conn_map_unlock(&blocked_results);
}

static void registries_in_child(void)
{
    qg_conn_map_child_after_fork(&pending_conn_messages);
    qg_conn_map_child_after_fork(&blocked_results);
}

__attribute__((constructor)) static void keep_registries_across_fork(void)
{
    pthread_atfork(lock_registries, unlock_registries, registries_in_child);
}

/* ------------------------------------------------------------------- check */

/* Counts the connections that ended or were reset (PQfinish, PQreset,
 * PQresetStart): what is kept of a connection's backend is read again
 * after any of them. */
static unsigned conns_renewed = 1;

static void note_conn_renewed(void)
{
    __atomic_add_fetch(&conns_renewed, 1, __ATOMIC_ACQ_REL);
}

/* A backend serves one database for its life, and server_encoding is that
 * database's: it is kept per connection and backend (its process ID), so
 * that libpq's list of reported parameters is not walked for it on every
 * query.  The encoding a text in a client encoding that server_decides is
 * checked in follows from the two encodings alone: it is kept beside, for
 * the last such client encoding.  `busy` while an entry is written: a
 * signal handler's query then neither reads nor writes it.  A reader takes
 * what it needs before it compares the key, so that a handler's write in
 * between is seen.  initial-exec: reading it never allocates. */
enum { KEPT_SERVERS = 4 };
typedef struct kept_server {
    const PGconn *conn;
    const char *name;    /* the shim's own name of the encoding */
    unsigned generation; /* qg_real_generation when kept; 0: empty */
    unsigned renewed;    /* conns_renewed when kept */
    int backend_pid;
    bool busy;
    bool converts;              /* qg_pg_set_checked_encoding's answer for `client` */
    const qg_encoding *client;  /* NULL: no client encoding kept */
    const qg_encoding *checked; /* the one a text in it is checked in */
    const char *checked_name;   /* that one's own name */
} kept_server;
static __thread kept_server kept_servers[KEPT_SERVERS] __attribute__((tls_model("initial-exec")));

/* A connection's backend as libpq reports it now: the key of its entry. */
typedef struct backend {
    kept_server *entry;
    unsigned generation;
    unsigned renewed;
    int pid;
} backend;

static IN_LINE backend backend_of(const state_readers *r, const void *conn)
{
    PQbackendPID_fn pid_of = __atomic_load_n(&r->backend_pid, __ATOMIC_RELAXED);
    return (backend){
        .entry = &kept_servers[((uintptr_t)conn / 16) % KEPT_SERVERS],
        .generation = __atomic_load_n(&qg_real_generation, __ATOMIC_ACQUIRE),
        .renewed = __atomic_load_n(&conns_renewed, __ATOMIC_ACQUIRE),
        .pid = pid_of ? pid_of(conn) : 0,
    };
}

/* Whether b's entry may be kept: a backend is known and no write is under way. */
static IN_LINE bool keepable(const backend *b)
{
    return b->pid != 0 && b->generation != 0 && !b->entry->busy;
}

/* Whether b's entry is kept for conn's backend, and may be read. */
static IN_LINE bool backend_kept(const backend *b, const void *conn)
{
    const kept_server *k = b->entry;
    return keepable(b) && k->generation == b->generation && k->renewed == b->renewed &&
           k->conn == conn && k->backend_pid == b->pid;
}

/* The encoding the server reports for itself ("" when it reports none). */
static const char *server_encoding(const void *conn)
{
    backend b = backend_of(libpq_readers(), conn);
    kept_server *k = b.entry;
    const char *kept_name = k->name;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (backend_kept(&b, conn))
        return kept_name;
    PQparameterStatus_fn status = real_PQparameterStatus();
    const char *name = status ? status(conn, "server_encoding") : NULL;
    if (!name)
        return "";
    const qg_encoding *enc = qg_encoding_find(QG_DIALECT_POSTGRES, name);
    if (keepable(&b) && enc && strcmp(qg_encoding_name(enc), name) == 0) {
        k->busy = true;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        k->generation = b.generation;
        k->renewed = b.renewed;
        k->conn = conn;
        k->backend_pid = b.pid;
        k->name = qg_encoding_name(enc);
        k->client = NULL;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        k->busy = false;
    }
    return name;
}

/* set_checked_encoding when the entry does not hold it: found, and kept in
 * the entry when the entry holds this backend's server encoding and the
 * encoding found is named by the shim's own name (libpq's may be freed). */
__attribute__((noinline)) static bool keep_checked_encoding(qg_query *q,
                                                            const qg_pg_client_encoding *c)
{
    bool converts = qg_pg_set_server_decided_encoding(q, c, server_encoding);
    backend b = backend_of(libpq_readers(), q->conn);
    kept_server *k = b.entry;
    if (!q->encoding || strcmp(q->encoding_name, qg_encoding_name(q->encoding)) != 0 ||
        !keepable(&b))
        return converts;
    k->busy = true;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (k->generation == b.generation && k->renewed == b.renewed && k->conn == q->conn &&
        k->backend_pid == b.pid) {
        k->client = c->enc;
        k->checked = q->encoding;
        k->checked_name = qg_encoding_name(q->encoding);
        k->converts = converts;
    }
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    k->busy = false;
    return converts;
}

/* qg_pg_set_checked_encoding, with the encoding a client encoding that
 * server_decides makes kept per backend. */
QG_HOT static IN_LINE bool set_checked_encoding(const state_readers *r, qg_query *q,
                                                const qg_pg_client_encoding *c)
{
    if (!c->server_decides)
        return qg_pg_set_checked_encoding(q, c, server_encoding);
    backend b = backend_of(r, q->conn);
    const kept_server *k = b.entry;
    const qg_encoding *client = k->client;
    const qg_encoding *checked = k->checked;
    const char *checked_name = k->checked_name;
    bool converts = k->converts;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (client != c->enc || !backend_kept(&b, q->conn))
        return keep_checked_encoding(q, c);
    q->encoding = checked;
    q->encoding_name = checked_name;
    return converts;
}

/* The client encoding.  libpq keeps it as a number (PQclientEncoding),
 * read in one step where the name the server reported is a walk down the
 * list of every reported parameter; what the shim derives from the number
 * is kept (pg_encoding.h), and libpq's name of the number is read only
 * when a number is first met.  But libpq takes a name it does not know for
 * SQL_ASCII (0), so for that one the reported name is read. */
static char *libpq_encoding_name(int id)
{
    pg_encoding_to_char_fn to_name = real_pg_encoding_to_char();
    return to_name ? to_name(id) : NULL; /* NULL: not kept, the name is read */
}

/* Into *out: where the thread's last numbers hold it, copied once. */
QG_HOT static IN_LINE void client_encoding(const state_readers *r, const PGconn *conn,
                                           qg_pg_client_encoding *out)
{
    PQclientEncoding_fn id_of = __atomic_load_n(&r->client_encoding, __ATOMIC_RELAXED);
    if (id_of && qg_pg_client_encoding_by_id(id_of(conn),
                                             __atomic_load_n(&qg_real_generation, __ATOMIC_ACQUIRE),
                                             libpq_encoding_name, out))
        return;
    PQparameterStatus_fn status = real_PQparameterStatus();
    *out = qg_pg_client_encoding_named(status ? status(conn, "client_encoding") : NULL);
}

QG_HOT static unsigned quoting_flags(const void *conn)
{
    PQparameterStatus_fn status = real_PQparameterStatus();
    const char *scs = status ? status(conn, "standard_conforming_strings") : NULL;
    return scs && scs[0] == 'o' && scs[1] == 'n' && scs[2] == '\0' ? QG_STD_STRINGS : 0;
}

/* How an intercepted query call goes on. */
typedef enum opened {
    PASS,   /* straight to libpq: nothing to check, the shim is off, or libpq's
             * inner call for the call being checked */
    CHECK,  /* checked */
    RECHECK /* libpq's inner call for the call being checked, whose state
             * changed in between or was left to it: checked, not recorded */
} opened;

/* The calls whose inner PQsend* call the shim may see. */
typedef enum outer_api { OUTER_EXEC, OUTER_EXEC_PARAMS, OUTER_PREPARE, OUTER_APIS } outer_api;

/* The calls being checked on this thread, as they were checked.  PQexec,
 * PQexecParams and PQprepare read the results still pending on the
 * connection before their inner PQsend* call (PQexec calls PQsendQuery with
 * the same text through its PLT), and those results may change the state
 * the query meets.  The inner call is skipped only while the state is the
 * one the outer call was checked under; else it is checked itself, under
 * the state libpq has read by then. */
typedef struct checked_call {
    const PGconn *conn;
    const char *sql;
    outer_api outer;
    bool unread;            /* results were unread: libpq reads them first */
    bool deferred;          /* not checked: left to the inner call */
    bool inner_blocked;
    struct checked_call *outer_call; /* the one it was made inside, if any */
    /* With no results unread (so not deferred): libpq's PQsendQuery,
     * looked up with the outer call's readers (libpq's outer call is
     * running, so its functions stay), to which the inner call passes as
     * it is; else NULL. */
    PQsendQuery_fn inner_passes_to;
    /* Only where results were unread, the one case where the inner call
     * may be checked again (RECHECK), and read only then: */
    const char *api;        /* the outer call's name and caller, for the log */
    const void *caller;
    int encoding_id;        /* PQclientEncoding; 0 (SQL_ASCII or a name libpq
                             * does not know) is never taken as unchanged */
    unsigned flags;         /* quoting_flags */
    qg_decision *inner;     /* where the inner call's blocking decision goes */
} checked_call;

/* The innermost, on its caller's stack (NULL: none): a call made inside it
 * (a signal handler's, a notice processor's) links its own in front and
 * takes it out again before it returns. */
static __thread checked_call *checked __attribute__((tls_model("initial-exec")));

/* Per outer call, the generation of the real symbols (real.h) in which
 * libpq was seen reaching its inner call through the PLT: from then on an
 * outer call with results unread can leave the check to the inner call,
 * which meets the state those results leave, exactly. */
static unsigned inner_seen[OUTER_APIS];

static int encoding_id(const state_readers *r, const PGconn *conn)
{
    PQclientEncoding_fn id_of = __atomic_load_n(&r->client_encoding, __ATOMIC_RELAXED);
    return id_of ? id_of(conn) : 0;
}

/* Whether the state libpq reports once it has read the results that were
 * unread when c was checked is the one c was checked under.  Out of line,
 * so that the common inner call (no results were unread) stays short. */
__attribute__((noinline)) static bool state_kept_over_unread(const checked_call *c,
                                                             const PGconn *conn)
{
    int id = encoding_id(libpq_readers(), conn);
    return id != 0 && id == c->encoding_id && quoting_flags(conn) == c->flags;
}

/* libpq reached c's inner call where the shim sees it (inner_seen). */
static IN_LINE void note_inner_reached(const checked_call *c)
{
    unsigned now = __atomic_load_n(&qg_real_generation, __ATOMIC_ACQUIRE);
    if (__atomic_load_n(&inner_seen[c->outer], __ATOMIC_RELAXED) != now)
        __atomic_store_n(&inner_seen[c->outer], now, __ATOMIC_RELAXED); /* once */
}

/* Whether an inner call may pass unchecked: it is libpq's for one of the
 * shim's own texts, or its state is the one its outer call was checked
 * under. */
static IN_LINE bool state_as_checked(const PGconn *conn, const char *sql)
{
    const checked_call *c = checked;
    if (!c || c->conn != conn || c->sql != sql)
        return true;
    note_inner_reached(c);
    if (c->deferred)
        return false;
    /* nothing for libpq to read in between: nothing changed */
    return !c->unread || state_kept_over_unread(c, conn);
}

/* Opens an intercepted query call; one to check gets the process
 * settings in *settings. */
QG_HOT static IN_LINE opened open_query(const state_readers *r, PGconn *conn, const char *sql,
                                        const qg_settings **settings)
{
    if (!conn || !sql)
        return PASS;
    /* libpq's texts are C strings: the pointer alone names the call.  The
     * inner call leaves at once: the outer one did all that follows.  The
     * innermost checked call's own inner call is known by its record; a
     * text the shim hands libpq itself, by the guard's.  The outer call is
     * not recorded in the guard: libpq calls no query entry with its text
     * before the record is made, and a query of a signal handler in
     * between is another query. */
    const checked_call *c = checked;
    if ((c && c->conn == conn && c->sql == sql) || qg_guard_inside(conn, sql, 0)) {
        if (state_as_checked(conn, sql))
            return PASS;
        *settings = qg_settings_get();
        return RECHECK;
    }
    /* A pending message lives until the next query on its connection. */
    qg_pg_registry_drop(&pending_conn_messages, conn);
    const qg_settings *s = qg_settings_get();
    if (s->mode == QG_MODE_OFF || !s->active)
        return PASS;
    *settings = s;
    /* this front checks the connection's queries: the wire front must not;
     * and the log never writes into its socket.  A socket the wire front
     * already leaves to a library front was noted then (this front notes
     * it first), and a note is never taken back. */
    PQsocket_fn socket_of = __atomic_load_n(&r->socket, __ATOMIC_RELAXED);
    if (socket_of) {
        int fd = socket_of(conn);
        if (qg_wire_fd_entry(fd) != QG_WIRE_LIBRARY) {
            qg_log_note_db_socket(fd);
            qg_wire_library_takes(fd);
        }
    }
    return CHECK;
}

/* The name and calling site a query is checked and logged under: an
 * inner call's are its outer call's. */
static IN_LINE const char *api_name(opened how, const char *own)
{
    return how == RECHECK ? checked->api : own;
}

static IN_LINE const void *caller_of(opened how, const void *own)
{
    return how == RECHECK ? checked->caller : own;
}

/* Before libpq is called with a query: what it was checked under (or,
 * `deferred`, that its inner call checks it), into *c, for libpq's inner
 * call; `unread`: results were unread when it was checked.  c stays the
 * innermost record until end_checked(c). */
QG_HOT static IN_LINE void begin_checked(checked_call *c, const state_readers *r,
                                         const PGconn *conn, const char *sql, const char *api,
                                         const void *caller, outer_api outer, bool unread,
                                         bool deferred, qg_decision *d)
{
    c->conn = conn;
    c->sql = sql;
    c->outer = outer;
    c->unread = unread;
    c->deferred = deferred;
    c->inner_blocked = false;
    if (unread) {
        c->api = api;
        c->caller = caller;
        c->encoding_id = encoding_id(r, conn);
        c->flags = quoting_flags(conn);
        c->inner_passes_to = NULL;
        c->inner = d;
    } else {
        c->inner_passes_to = __atomic_load_n(&r->send_query, __ATOMIC_RELAXED);
    }
    c->outer_call = checked;
    __atomic_signal_fence(__ATOMIC_SEQ_CST); /* filled in before a handler can see it */
    checked = c;
}

/* After libpq returned: whether the inner call blocked the query (*d then
 * holds why); the record made before c is the innermost again. */
QG_HOT static IN_LINE bool end_checked(const checked_call *c)
{
    checked = c->outer_call;
    return c->inner_blocked;
}

/* A recheck that blocked: the outer call answers with the block. */
QG_COLD static void note_rechecked_block(const qg_decision *d)
{
    checked_call *c = checked;
    if (!c || !c->inner)
        return;
    *c->inner = *d;
    c->inner_blocked = true;
}

/* Whether a connection may have entered pipeline mode: libpq enters it
 * only in PQenterPipelineMode, which the shim interposes (and answers
 * dlsym with, front_dlsym.c), so until a program calls that no connection
 * is in it, and its status is not asked for on each query.  Set before
 * libpq is called and never cleared. */
static bool pipelines_entered;

/* PQsendQueryParams works in pipeline mode where PQsendQuery does not:
 * there the query goes as it is, so that libpq answers as it would. */
QG_HOT static IN_LINE bool pipeline_off(const state_readers *r, const PGconn *conn)
{
    if (!__atomic_load_n(&pipelines_entered, __ATOMIC_RELAXED))
        return true;
    PQpipelineStatus_fn pipeline = __atomic_load_n(&r->pipeline_status, __ATOMIC_RELAXED);
    return !pipeline || pipeline(conn) == 0; /* PQ_PIPELINE_OFF; no symbol: no pipelines */
}

/* Whether results of a query sent earlier are still to be read.  libpq
 * reads them (PQexec, PQexecParams, PQprepare) before it sends the next
 * query, and the state they report is the one that query meets: until then
 * a query is checked under every state the unread statements may leave, as
 * in a pipeline. */
QG_HOT static IN_LINE bool results_unread(const state_readers *r, const PGconn *conn)
{
    PQtransactionStatus_fn status = __atomic_load_n(&r->transaction_status, __ATOMIC_RELAXED);
    return status && status(conn) == PQTRANS_ACTIVE;
}

/* Whether an outer call with results unread leaves its check to its inner
 * call: their state is known once libpq has read them, before the inner
 * call, and libpq is known to reach the inner call where the shim sees it. */
static IN_LINE bool defer_to_inner(const state_readers *r, const PGconn *conn, bool unread,
                                   outer_api outer)
{
    return unread &&
           __atomic_load_n(&inner_seen[outer], __ATOMIC_RELAXED) ==
               __atomic_load_n(&qg_real_generation, __ATOMIC_ACQUIRE) &&
           pipeline_off(r, conn);
}

/* A prepared statement executed before its results are read (in a
 * pipeline, or by PQsendQueryPrepared) may set any state. */
static void note_prepared_executed(const PGconn *conn)
{
    const state_readers *r = libpq_readers();
    if (pipeline_off(r, conn) && !results_unread(r, conn))
        qg_pg_pipeline_ended(conn);
    qg_pg_pipeline_executes_prepared(conn);
}

/* Describes the query into *q with the connection's state as libpq
 * reports it now, and checks it under every state the server may read it
 * in: with results unread or in pipeline mode, every state the statements
 * sent before it may leave.  `read_later`: the call returns before the
 * query's results are read (PQsend*), so what it sets counts for the
 * queries sent before they are.  True = send it; false: *d says why (a
 * text sent may leave *d unwritten). */
QG_HOT static IN_LINE bool check(const state_readers *r, const qg_settings *s, PGconn *conn,
                                 const char *api, const char *sql, const void *caller, qg_query *q,
                                 qg_decision *d, bool read_later, bool unread)
{
    /* The text's length, and whether it holds a backslash, in one pass. */
    const char *backslash = strchrnul(sql, '\\');
    size_t len = (size_t)(backslash - sql) + (*backslash ? strlen(backslash) : 0);
    /* Field by field: the encoding and the flags are set below. */
    q->dialect = QG_DIALECT_POSTGRES;
    q->view = NULL;
    q->conn = conn;
    q->api = api;
    q->sql = sql;
    q->len = len;
    q->caller = caller;
    qg_pg_client_encoding client;
    client_encoding(r, conn, &client);
    bool converts = set_checked_encoding(r, q, &client);
    bool queued = unread || !pipeline_off(r, conn);
    /* standard_conforming_strings says only how a backslash is read: a
     * text the server reads without one is read alike under either value
     * (QG_PG_BACKSLASH_FREE_FLAGS), so its value is not looked up
     * for it.  It is for a text with one, for one the server converts
     * (a character may become a backslash), for the states a pipeline
     * keeps and for rewrite mode, which writes literals by it. */
    unsigned flags =
        *backslash || converts || queued || __builtin_expect(s->mode == QG_MODE_REWRITE, 0)
            ? quoting_flags(conn)
            : QG_PG_BACKSLASH_FREE_FLAGS;
    q->flags = flags;
    if (queued)
        return qg_pg_check_in_pipeline(q, converts, server_encoding, d);
    qg_pg_pipeline_ended(conn);
    /* The checker in line, on what is known here rather than on *q read
     * again (the calls above had its address): a text it finds clean
     * passes with nothing to report and *d left as it was; any other is
     * judged by the guard, into *d. */
    bool allowed =
        converts ? qg_pg_check_conversion(q, server_encoding, d)
                 : qg_guard_clean_in_line(s, QG_DIALECT_POSTGRES, q->encoding, flags, NULL, sql,
                                          len) ||
                       qg_guard_query(q, d);
    if (allowed && read_later)
        qg_pg_note_unread(q, quoting_flags);
    return allowed;
}

/* check() for the calls off the hot path: one copy of it for them all. */
__attribute__((noinline)) static bool query_allowed(const state_readers *r, const qg_settings *s,
                                                    PGconn *conn, const char *api, const char *sql,
                                                    const void *caller, qg_decision *d,
                                                    bool read_later, bool unread)
{
    qg_query q;
    return check(r, s, conn, api, sql, caller, &q, d, read_later, unread);
}

/* A statement that fails on the server aborts the transaction it is in; a
 * blocked one must too, or a program that ignores the error and commits
 * would commit the rest.  So inside a transaction block the server is told
 * to fail, with a message that names us in its log. */
static void abort_open_transaction(PGconn *conn)
{
    const state_readers *r = libpq_readers();
    PQtransactionStatus_fn status = __atomic_load_n(&r->transaction_status, __ATOMIC_RELAXED);
    PQexec_fn exec = real_PQexec();
    PQclear_fn clear = real_PQclear();
    if (!status || !exec || !clear || status(conn) != PQTRANS_INTRANS || !pipeline_off(r, conn))
        return;
    bool entered = qg_guard_enter(conn, qg_pg_abort_transaction, 0);
    clear(exec(conn, qg_pg_abort_transaction));
    if (entered)
        qg_guard_leave();
}

/* libpq's PQexec, PQexecParams and PQprepare discard the results still
 * unread before they send; a blocked one does too, so that the connection
 * goes on as after any of them.  A COPY among them is left to libpq, as
 * its next such call ends it. */
static void discard_unread(PGconn *conn)
{
    PQgetResult_fn get = real_PQgetResult();
    PQresultStatus_fn status_of = real_PQresultStatus();
    PQclear_fn clear = real_PQclear();
    const state_readers *r = libpq_readers();
    if (!get || !status_of || !clear || !pipeline_off(r, conn) || !results_unread(r, conn))
        return;
    PGresult *res;
    while ((res = get(conn)) != NULL) {
        int status = status_of(res);
        clear(res);
        if (status == PGRES_COPY_IN || status == PGRES_COPY_OUT || status == PGRES_COPY_BOTH)
            return;
    }
}

/* What a blocked PQexec/PQexecParams/PQprepare returns: libpq's own empty
 * error result, registered so that the error readers give our message.
 * PQerrorMessage(conn) carries it too, as after any failed PQexec.
 * (Rewrite mode blocks like enforce; only queries that pass are rewritten.) */
QG_COLD static PGresult *blocked_result(PGconn *conn, const qg_decision *d)
{
    discard_unread(conn);
    abort_open_transaction(conn);
    qg_pg_registry_put(&pending_conn_messages, conn, d);
    PQmakeEmptyPGresult_fn make = real_PQmakeEmptyPGresult();
    if (!make) {
        qg_guard_report_missing("PQmakeEmptyPGresult");
        return NULL;
    }
    PGresult *res = make(conn, PGRES_FATAL_ERROR);
    if (res)
        qg_pg_registry_put(&blocked_results, res, d);
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
    char text[QG_PG_FAILING_STATEMENT_MAX];
    qg_pg_failing_statement(text, sizeof text, d);
    PQsendQueryParams_fn send = real_PQsendQueryParams();
    if (!send) {
        qg_guard_report_missing("PQsendQueryParams");
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
    if (!pipeline_off(libpq_readers(), conn))
        return fail_in_pipeline(conn, d);
    abort_open_transaction(conn);
    qg_pg_registry_put(&pending_conn_messages, conn, d);
    return 0;
}

/* ----------------------------------------------------------- rewrite */

/* Rewrite mode, for a query `q` that passed the check: true when rw->text
 * and rw->params are to be sent instead (pg_rewrite.h). */
QG_HOT static bool rewrite_query(const qg_settings *s, PGconn *conn, const qg_query *q,
                                 qg_pg_rewritten *rw)
{
    if (__builtin_expect(s->mode != QG_MODE_REWRITE, 1) || !pipeline_off(libpq_readers(), conn))
        return false;
    return qg_pg_rewrite(s, q, server_encoding, rw);
}

/* Rewrite mode only: libpq's function that sends the parameters. */
#define IN_REWRITE(s, real_fn)                                                                     \
    (__builtin_expect((s)->mode == QG_MODE_REWRITE, 0) ? real_fn() : NULL)

QG_HOT static PGresult *exec_allowed(const qg_settings *s, PGconn *conn, const qg_query *q,
                                     PQexec_fn real)
{
    qg_pg_rewritten rw;
    PQexecParams_fn with_params = IN_REWRITE(s, real_PQexecParams);
    if (!with_params || !rewrite_query(s, conn, q, &rw))
        return real(conn, q->sql);
    bool entered = qg_guard_enter(conn, rw.text, 0); /* libpq's inner calls for it */
    PGresult *res = with_params(conn, rw.text, rw.nparams, NULL, rw.params, NULL, NULL, 0);
    if (entered)
        qg_guard_leave();
    qg_pg_rewritten_release(&rw);
    return res;
}

QG_HOT static int send_allowed(const qg_settings *s, PGconn *conn, const qg_query *q,
                               PQsendQuery_fn real)
{
    qg_pg_rewritten rw;
    PQsendQueryParams_fn with_params = IN_REWRITE(s, real_PQsendQueryParams);
    if (!with_params || !rewrite_query(s, conn, q, &rw))
        return real(conn, q->sql);
    bool entered = qg_guard_enter(conn, rw.text, 0); /* libpq's inner calls for it */
    int sent = with_params(conn, rw.text, rw.nparams, NULL, rw.params, NULL, NULL, 0);
    if (entered)
        qg_guard_leave();
    qg_pg_rewritten_release(&rw);
    return sent;
}

/* ------------------------------------------------------- query entries */

/* A blocked PQsend*: libpq's inner call for an outer one that passed
 * leaves the answer to it. */
QG_COLD static int send_blocked(PGconn *conn, opened how, const qg_decision *d)
{
    if (how == RECHECK) {
        note_rechecked_block(d);
        return 0;
    }
    return blocked_send(conn, d);
}

/* After libpq ran a query that passed: when its inner call blocked it
 * (the state changed in between), the block's error result instead of
 * what libpq returned. */
QG_HOT static PGresult *exec_result(PGconn *conn, const checked_call *c, PGresult *res,
                                    const qg_decision *d)
{
    if (!end_checked(c))
        return res;
    PQclear_fn clear = real_PQclear();
    if (res && clear)
        clear(res);
    return blocked_result(conn, d);
}

QG_HOT QG_EXPORT PGresult *PQexec(PGconn *conn, const char *query)
{
    const state_readers *r = libpq_readers();
    PQexec_fn real = __atomic_load_n(&r->exec, __ATOMIC_RELAXED);
    if (!real) {
        qg_guard_report_missing("PQexec");
        return NULL;
    }
    const qg_settings *s = NULL;
    opened how = open_query(r, conn, query, &s);
    if (how == PASS)
        return real(conn, query);
    const char *api = api_name(how, "PQexec");
    const void *caller = caller_of(how, __builtin_return_address(0));
    bool unread = results_unread(r, conn);
    bool deferred = defer_to_inner(r, conn, unread, OUTER_EXEC);
    qg_decision d;
    qg_query q;
    PGresult *res;
    if (deferred || check(r, s, conn, api, query, caller, &q, &d, false, unread)) {
        checked_call c;
        begin_checked(&c, r, conn, query, api, caller, OUTER_EXEC, unread, deferred, &d);
        res = exec_result(conn, &c, deferred ? real(conn, query) : exec_allowed(s, conn, &q, real),
                          &d);
    } else {
        res = blocked_result(conn, &d);
    }
    return res;
}

/* PQsendQuery past the common inner call; `caller`: PQsendQuery's. */
QG_HOT __attribute__((noinline)) static int send_query(PGconn *conn, const char *query,
                                                       const void *caller)
{
    PQsendQuery_fn real = real_PQsendQuery();
    if (!real) {
        qg_guard_report_missing("PQsendQuery");
        return 0;
    }
    const state_readers *r = libpq_readers();
    const qg_settings *s = NULL;
    opened how = open_query(r, conn, query, &s);
    if (how == PASS)
        return real(conn, query);
    qg_decision d;
    qg_query q;
    return check(r, s, conn, api_name(how, "PQsendQuery"), query, caller_of(how, caller), &q, &d,
                 true, results_unread(r, conn))
               ? send_allowed(s, conn, &q, real)
               : send_blocked(conn, how, &d);
}

QG_HOT QG_EXPORT int PQsendQuery(PGconn *conn, const char *query)
{
    /* PQexec's own call, on every PQexec: compared with the record first.
     * With no results unread when it was checked, it passes with no call
     * of the shim's own: nothing to save and restore (docs/PERFORMANCE.md,
     * "Choices in the code"). */
    const checked_call *c = checked;
    if (c && c->conn == conn && c->sql == query && c->inner_passes_to) {
        note_inner_reached(c);
        return c->inner_passes_to(conn, query);
    }
    return send_query(conn, query, __builtin_return_address(0));
}

QG_EXPORT PGresult *PQexecParams(PGconn *conn, const char *command, int nParams,
                                 const Oid *paramTypes, const char *const *paramValues,
                                 const int *paramLengths, const int *paramFormats,
                                 int resultFormat)
{
    PQexecParams_fn real = real_PQexecParams();
    if (!real) {
        qg_guard_report_missing("PQexecParams");
        return NULL;
    }
    const state_readers *r = libpq_readers();
    const qg_settings *s = NULL;
    opened how = open_query(r, conn, command, &s);
    if (how == PASS)
        return real(conn, command, nParams, paramTypes, paramValues, paramLengths, paramFormats,
                    resultFormat);
    const char *api = api_name(how, "PQexecParams");
    const void *caller = caller_of(how, __builtin_return_address(0));
    bool unread = results_unread(r, conn);
    bool deferred = defer_to_inner(r, conn, unread, OUTER_EXEC_PARAMS);
    qg_decision d;
    PGresult *res;
    if (deferred || query_allowed(r, s, conn, api, command, caller, &d, false, unread)) {
        checked_call c;
        begin_checked(&c, r, conn, command, api, caller, OUTER_EXEC_PARAMS, unread, deferred, &d);
        res = exec_result(conn, &c,
                          real(conn, command, nParams, paramTypes, paramValues, paramLengths,
                               paramFormats, resultFormat),
                          &d);
    } else {
        res = blocked_result(conn, &d);
    }
    return res;
}

QG_EXPORT int PQsendQueryParams(PGconn *conn, const char *command, int nParams,
                                const Oid *paramTypes, const char *const *paramValues,
                                const int *paramLengths, const int *paramFormats,
                                int resultFormat)
{
    PQsendQueryParams_fn real = real_PQsendQueryParams();
    if (!real) {
        qg_guard_report_missing("PQsendQueryParams");
        return 0;
    }
    const state_readers *r = libpq_readers();
    const qg_settings *s = NULL;
    opened how = open_query(r, conn, command, &s);
    if (how == PASS)
        return real(conn, command, nParams, paramTypes, paramValues, paramLengths, paramFormats,
                    resultFormat);
    qg_decision d;
    int sent = query_allowed(r, s, conn, api_name(how, "PQsendQueryParams"), command,
                             caller_of(how, __builtin_return_address(0)), &d, true,
                             results_unread(r, conn))
                   ? real(conn, command, nParams, paramTypes, paramValues, paramLengths,
                          paramFormats, resultFormat)
                   : send_blocked(conn, how, &d);
    return sent;
}

QG_EXPORT PGresult *PQprepare(PGconn *conn, const char *stmtName, const char *query,
                              int nParams, const Oid *paramTypes)
{
    PQprepare_fn real = real_PQprepare();
    if (!real) {
        qg_guard_report_missing("PQprepare");
        return NULL;
    }
    const state_readers *r = libpq_readers();
    const qg_settings *s = NULL;
    opened how = open_query(r, conn, query, &s);
    if (how == PASS)
        return real(conn, stmtName, query, nParams, paramTypes);
    const char *api = api_name(how, "PQprepare");
    const void *caller = caller_of(how, __builtin_return_address(0));
    bool unread = results_unread(r, conn);
    bool deferred = defer_to_inner(r, conn, unread, OUTER_PREPARE);
    qg_decision d;
    PGresult *res;
    if (deferred || query_allowed(r, s, conn, api, query, caller, &d, false, unread)) {
        qg_pg_pipeline_prepared(conn, query, strlen(query));
        checked_call c;
        begin_checked(&c, r, conn, query, api, caller, OUTER_PREPARE, unread, deferred, &d);
        res = exec_result(conn, &c, real(conn, stmtName, query, nParams, paramTypes), &d);
    } else {
        res = blocked_result(conn, &d);
    }
    return res;
}

QG_EXPORT int PQsendPrepare(PGconn *conn, const char *stmtName, const char *query, int nParams,
                            const Oid *paramTypes)
{
    PQsendPrepare_fn real = real_PQsendPrepare();
    if (!real) {
        qg_guard_report_missing("PQsendPrepare");
        return 0;
    }
    const state_readers *r = libpq_readers();
    const qg_settings *s = NULL;
    opened how = open_query(r, conn, query, &s);
    if (how == PASS)
        return real(conn, stmtName, query, nParams, paramTypes);
    qg_decision d;
    bool allowed = query_allowed(r, s, conn, api_name(how, "PQsendPrepare"), query,
                                 caller_of(how, __builtin_return_address(0)), &d, false,
                                 results_unread(r, conn));
    if (allowed)
        qg_pg_pipeline_prepared(conn, query, strlen(query));
    int sent =
        allowed ? real(conn, stmtName, query, nParams, paramTypes) : send_blocked(conn, how, &d);
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
        qg_guard_report_missing("PQexecPrepared");
        return NULL;
    }
    qg_pg_registry_drop(&pending_conn_messages, conn);
    return real(conn, stmtName, nParams, paramValues, paramLengths, paramFormats, resultFormat);
}

QG_EXPORT int PQsendQueryPrepared(PGconn *conn, const char *stmtName, int nParams,
                                  const char *const *paramValues, const int *paramLengths,
                                  const int *paramFormats, int resultFormat)
{
    PQsendQueryPrepared_fn real = real_PQsendQueryPrepared();
    if (!real) {
        qg_guard_report_missing("PQsendQueryPrepared");
        return 0;
    }
    qg_pg_registry_drop(&pending_conn_messages, conn);
    note_prepared_executed(conn);
    return real(conn, stmtName, nParams, paramValues, paramLengths, paramFormats, resultFormat);
}

/* ------------------------------------------------------------- pipelines */

QG_EXPORT int PQenterPipelineMode(PGconn *conn)
{
    __atomic_store_n(&pipelines_entered, true, __ATOMIC_RELAXED);
    PQenterPipelineMode_fn real = real_PQenterPipelineMode();
    if (!real) {
        qg_guard_report_missing("PQenterPipelineMode");
        return 0;
    }
    return real(conn);
}

/* -------------------------------------------------------- error readers */

QG_EXPORT char *PQerrorMessage(const PGconn *conn)
{
    const qg_pg_blocked *m = qg_pg_registry_find(&pending_conn_messages, conn);
    if (m)
        return (char *)m->text;
    PQerrorMessage_fn real = real_PQerrorMessage();
    if (!real) {
        qg_guard_report_missing("PQerrorMessage");
        return (char *)"";
    }
    return real(conn);
}

QG_EXPORT char *PQresultErrorMessage(const PGresult *res)
{
    const qg_pg_blocked *m = qg_pg_registry_find(&blocked_results, res);
    if (m)
        return (char *)m->text;
    PQresultErrorMessage_fn real = real_PQresultErrorMessage();
    if (!real) {
        qg_guard_report_missing("PQresultErrorMessage");
        return (char *)"";
    }
    return real(res);
}

/* verbosity and show_context are libpq enums (int-sized). The caller frees
 * the answer with PQfreemem, which is free(). */
QG_EXPORT char *PQresultVerboseErrorMessage(const PGresult *res, int verbosity, int show_context)
{
    const qg_pg_blocked *m = qg_pg_registry_find(&blocked_results, res);
    if (m && verbosity == PQERRORS_SQLSTATE) {
        char severity_and_code[32];
        snprintf(severity_and_code, sizeof severity_and_code, "ERROR:  %s\n", m->sqlstate);
        return strdup(severity_and_code);
    }
    if (m)
        return strdup(verbosity == PQERRORS_VERBOSE ? m->verbose : m->text);
    PQresultVerboseErrorMessage_fn real = real_PQresultVerboseErrorMessage();
    if (!real) {
        qg_guard_report_missing("PQresultVerboseErrorMessage");
        return NULL;
    }
    return real(res, verbosity, show_context);
}

QG_EXPORT char *PQresultErrorField(const PGresult *res, int fieldcode)
{
    const qg_pg_blocked *m = qg_pg_registry_find(&blocked_results, res);
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
        qg_guard_report_missing("PQresultErrorField");
        return NULL;
    }
    return real(res, fieldcode);
}

/* ------------------------------------------------------------ lifetimes */

/* PQclear with a result blocked, or libpq's function still to look up. */
__attribute__((noinline)) static void clear_result(PGresult *res)
{
    /* Dropped before the real free, so that a new result at the same
     * address can never find the old entry. */
    qg_pg_registry_drop(&blocked_results, res);
    PQclear_fn real = real_PQclear();
    if (!real) {
        qg_guard_report_missing("PQclear");
        return;
    }
    real(res);
}

QG_HOT QG_EXPORT void PQclear(PGresult *res)
{
    /* With no result blocked, libpq's own at once: nothing to save and
     * restore around a call of ours (as in PQsendQuery). */
    PQclear_fn real = cached_PQclear();
    if (real && qg_conn_map_empty(&blocked_results)) {
        real(res);
        return;
    }
    clear_result(res);
}

/* A reset connection is a new backend, maybe of another database. */
QG_EXPORT void PQreset(PGconn *conn)
{
    note_conn_renewed();
    PQreset_fn real = real_PQreset();
    if (!real) {
        qg_guard_report_missing("PQreset");
        return;
    }
    real(conn);
}

QG_EXPORT int PQresetStart(PGconn *conn)
{
    note_conn_renewed();
    PQresetStart_fn real = real_PQresetStart();
    if (!real) {
        qg_guard_report_missing("PQresetStart");
        return 0;
    }
    return real(conn);
}

QG_EXPORT void PQfinish(PGconn *conn)
{
    note_conn_renewed();
    qg_pg_registry_drop(&pending_conn_messages, conn);
    qg_pg_pipeline_forget(conn);
    PQfinish_fn real = real_PQfinish();
    if (!real) {
        qg_guard_report_missing("PQfinish");
        return;
    }
    real(conn);
}
