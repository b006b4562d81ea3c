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

/* libpq's public types and constants, as far as the shim needs them. */
typedef struct pg_conn PGconn;
typedef struct pg_result PGresult;
typedef unsigned int Oid;
enum { PGRES_FATAL_ERROR = 7 };
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
QG_REAL_FN(void, PQfinish, (PGconn *), qg_libpq_sonames)
QG_REAL_FN(PGresult *, PQmakeEmptyPGresult, (PGconn *, int), qg_libpq_sonames)
QG_REAL_FN(const char *, PQparameterStatus, (const PGconn *, const char *), qg_libpq_sonames)
QG_REAL_FN(int, PQclientEncoding, (const PGconn *), qg_libpq_sonames)
QG_REAL_FN(char *, pg_encoding_to_char, (int), qg_libpq_sonames)
QG_REAL_FN(int, PQpipelineStatus, (const PGconn *), qg_libpq_sonames)
QG_REAL_FN(int, PQsocket, (const PGconn *), qg_libpq_sonames)
QG_REAL_FN(int, PQtransactionStatus, (const PGconn *), qg_libpq_sonames)

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

/* The encoding the server reports for itself ("" when it reports none). */
static const char *server_encoding(const void *conn)
{
    PQparameterStatus_fn status = real_PQparameterStatus();
    const char *name = status ? status(conn, "server_encoding") : NULL;
    return name ? name : "";
}

/* The client encoding.  libpq keeps it as a number (PQclientEncoding),
 * read in one step where the name the server reported is a walk down the
 * list of every reported parameter; what the shim derives from the number
 * is kept (pg_encoding.h).  But libpq takes a name it does not know for
 * SQL_ASCII (0), so for that one the reported name is read. */
QG_HOT static qg_pg_client_encoding client_encoding(const PGconn *conn)
{
    PQclientEncoding_fn id_of = real_PQclientEncoding();
    pg_encoding_to_char_fn to_name = real_pg_encoding_to_char();
    qg_pg_client_encoding kept;
    if (id_of && to_name &&
        qg_pg_client_encoding_by_id(id_of(conn),
                                    __atomic_load_n(&qg_real_generation, __ATOMIC_ACQUIRE),
                                    to_name, &kept))
        return kept;
    PQparameterStatus_fn status = real_PQparameterStatus();
    return qg_pg_client_encoding_named(status ? status(conn, "client_encoding") : NULL);
}

QG_HOT static unsigned quoting_flags(const PGconn *conn)
{
    PQparameterStatus_fn status = real_PQparameterStatus();
    const char *scs = status ? status(conn, "standard_conforming_strings") : NULL;
    return scs && scs[0] == 'o' && scs[1] == 'n' && scs[2] == '\0' ? QG_STD_STRINGS : 0;
}

/* Opens an intercepted query call.  False when it passes straight through:
 * nothing to check, the shim is off, or this is libpq's inner call for the
 * call being checked (PQexec calls PQsendQuery with the same text through its
 * PLT).  When true, the call is recorded until close_query(). */
QG_HOT static bool open_query(PGconn *conn, const char *sql)
{
    if (!conn || !sql)
        return false;
    /* libpq's texts are C strings: the pointer alone names the call.  The
     * inner call leaves at once: the outer one did all that follows. */
    if (!qg_guard_enter(conn, sql, 0))
        return false;
    /* A pending message lives until the next query on its connection. */
    qg_pg_registry_drop(&pending_conn_messages, conn);
    const qg_settings *s = qg_settings_get();
    if (s->mode == QG_MODE_OFF || !s->active) {
        qg_guard_leave();
        return false;
    }
    /* this front checks the connection's queries: the wire front must not;
     * and the log never writes into its socket */
    PQsocket_fn socket_of = real_PQsocket();
    if (socket_of) {
        int fd = socket_of(conn);
        qg_wire_library_guarded(fd);
        qg_log_note_db_socket(fd);
    }
    return true;
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

/* A prepared statement executed in a pipeline may set any state. */
static void note_prepared_executed(const PGconn *conn)
{
    if (!pipeline_off(conn))
        qg_pg_pipeline_executes_prepared(conn);
}

/* Describes the query into *q with the connection's state as libpq
 * reports it now, and checks it under every state the server may read it
 * in.  True = send it. */
QG_HOT static bool check(PGconn *conn, const char *api, const char *sql, const void *caller,
                         qg_query *q, qg_decision *d)
{
    *q = (qg_query){
        .dialect = QG_DIALECT_POSTGRES,
        .flags = quoting_flags(conn),
        .conn = conn,
        .api = api,
        .sql = sql,
        .len = strlen(sql),
        .caller = caller,
    };
    qg_pg_client_encoding client = client_encoding(conn);
    bool converts = qg_pg_set_checked_encoding(q, &client, server_encoding);
    if (!pipeline_off(conn))
        return qg_pg_check_in_pipeline(q, converts, server_encoding, d);
    qg_pg_pipeline_ended(conn);
    return qg_pg_check_converted(q, converts, server_encoding, d);
}

static bool query_allowed(PGconn *conn, const char *api, const char *sql, const void *caller,
                          qg_decision *d)
{
    qg_query q;
    return check(conn, api, sql, caller, &q, d);
}

/* A statement that fails on the server aborts the transaction it is in; a
 * blocked one must too, or a program that ignores the error and commits
 * would commit the rest.  So inside a transaction block the server is told
 * to fail, with a message that names us in its log. */
static void abort_open_transaction(PGconn *conn)
{
    PQtransactionStatus_fn status = real_PQtransactionStatus();
    PQexec_fn exec = real_PQexec();
    PQclear_fn clear = real_PQclear();
    if (!status || !exec || !clear || status(conn) != PQTRANS_INTRANS || !pipeline_off(conn))
        return;
    bool entered = qg_guard_enter(conn, qg_pg_abort_transaction, 0);
    clear(exec(conn, qg_pg_abort_transaction));
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
    if (!pipeline_off(conn))
        return fail_in_pipeline(conn, d);
    abort_open_transaction(conn);
    qg_pg_registry_put(&pending_conn_messages, conn, d);
    return 0;
}

/* ----------------------------------------------------------- rewrite */

/* Rewrite mode, for a query `q` that passed the check: true when rw->text
 * and rw->params are to be sent instead (pg_rewrite.h). */
QG_HOT static bool rewrite_query(PGconn *conn, const qg_query *q, qg_pg_rewritten *rw)
{
    const qg_settings *s = qg_settings_get();
    if (__builtin_expect(s->mode != QG_MODE_REWRITE, 1) || !pipeline_off(conn))
        return false;
    return qg_pg_rewrite(s, q, server_encoding, rw);
}

/* Rewrite mode only: libpq's function that sends the parameters. */
#define IN_REWRITE(real_fn)                                                                        \
    (__builtin_expect(qg_settings_get()->mode == QG_MODE_REWRITE, 0) ? real_fn() : NULL)

QG_HOT static PGresult *exec_allowed(PGconn *conn, const qg_query *q, PQexec_fn real)
{
    qg_pg_rewritten rw;
    PQexecParams_fn with_params = IN_REWRITE(real_PQexecParams);
    if (!with_params || !rewrite_query(conn, q, &rw))
        return real(conn, q->sql);
    bool entered = qg_guard_enter(conn, rw.text, 0); /* libpq's inner calls for it */
    PGresult *res = with_params(conn, rw.text, rw.nparams, NULL, rw.params, NULL, NULL, 0);
    if (entered)
        qg_guard_leave();
    qg_pg_rewritten_release(&rw);
    return res;
}

QG_HOT static int send_allowed(PGconn *conn, const qg_query *q, PQsendQuery_fn real)
{
    qg_pg_rewritten rw;
    PQsendQueryParams_fn with_params = IN_REWRITE(real_PQsendQueryParams);
    if (!with_params || !rewrite_query(conn, q, &rw))
        return real(conn, q->sql);
    bool entered = qg_guard_enter(conn, rw.text, 0); /* libpq's inner calls for it */
    int sent = with_params(conn, rw.text, rw.nparams, NULL, rw.params, NULL, NULL, 0);
    if (entered)
        qg_guard_leave();
    qg_pg_rewritten_release(&rw);
    return sent;
}

/* ------------------------------------------------------- query entries */

QG_HOT QG_EXPORT PGresult *PQexec(PGconn *conn, const char *query)
{
    PQexec_fn real = real_PQexec();
    if (!real) {
        qg_guard_report_missing("PQexec");
        return NULL;
    }
    if (!open_query(conn, query))
        return real(conn, query);
    qg_decision d;
    qg_query q;
    PGresult *res = check(conn, "PQexec", query, __builtin_return_address(0), &q, &d)
                        ? exec_allowed(conn, &q, real)
                        : blocked_result(conn, &d);
    close_query();
    return res;
}

QG_HOT QG_EXPORT int PQsendQuery(PGconn *conn, const char *query)
{
    PQsendQuery_fn real = real_PQsendQuery();
    if (!real) {
        qg_guard_report_missing("PQsendQuery");
        return 0;
    }
    if (!open_query(conn, query))
        return real(conn, query);
    qg_decision d;
    qg_query q;
    int sent = check(conn, "PQsendQuery", query, __builtin_return_address(0), &q, &d)
                   ? send_allowed(conn, &q, real)
                   : blocked_send(conn, &d);
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
        qg_guard_report_missing("PQexecParams");
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
        qg_guard_report_missing("PQsendQueryParams");
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
        qg_guard_report_missing("PQprepare");
        return NULL;
    }
    if (!open_query(conn, query))
        return real(conn, stmtName, query, nParams, paramTypes);
    qg_decision d;
    bool allowed = query_allowed(conn, "PQprepare", query, __builtin_return_address(0), &d);
    if (allowed)
        qg_pg_pipeline_prepared(conn, query, strlen(query));
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
        qg_guard_report_missing("PQsendPrepare");
        return 0;
    }
    if (!open_query(conn, query))
        return real(conn, stmtName, query, nParams, paramTypes);
    qg_decision d;
    bool allowed = query_allowed(conn, "PQsendPrepare", query, __builtin_return_address(0), &d);
    if (allowed)
        qg_pg_pipeline_prepared(conn, query, strlen(query));
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

QG_HOT QG_EXPORT void PQclear(PGresult *res)
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

QG_EXPORT void PQfinish(PGconn *conn)
{
    qg_pg_registry_drop(&pending_conn_messages, conn);
    qg_pg_pipeline_forget(conn);
    PQfinish_fn real = real_PQfinish();
    if (!real) {
        qg_guard_report_missing("PQfinish");
        return;
    }
    real(conn);
}
