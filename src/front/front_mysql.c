/* MySQL / MariaDB front: every query text is checked, with the character set
 * and quoting rules the SERVER applies to the connection, before the client
 * library sends it.  What the server applies is followed from its own words
 * (mysql_session.h); this file interposes the client library's entries and
 * reaches the library for the session.
 *
 * A blocked query is never sent: the entry returns nonzero and, until the
 * next query on that connection (or statement), mysql_errno / mysql_error /
 * mysql_sqlstate (mysql_stmt_*) answer with the shim's error (libmariadb has
 * no setter for them).  The connection stays usable.  The shim never
 * includes or links the client library: the types are opaque here and the
 * real entries are found at run time (real.h). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_libraries.h"
#include "config.h"
#include "front_mysql.h"
#include "front_wire.h"
#include "guard.h"
#include "hot.h"
#include "log.h"
#include "mysql_conns.h"
#include "mysql_escape.h"
#include "mysql_plan.h"
#include "mysql_session.h"
#include "mysql_state.h"
#include "mysql_statements.h"
#include "quoteguard.h"
#include "real.h"
#include "replacement.h"
#include "settings.h"
#include "wire_stream.h"

#define QG_EXPORT __attribute__((visibility("default")))

QG_REAL_FN(int, mysql_query, (MYSQL *, const char *), qg_mysql_sonames)
QG_REAL_FN(int, mysql_real_query, (MYSQL *, const char *, unsigned long), qg_mysql_sonames)
QG_REAL_FN(int, mysql_send_query, (MYSQL *, const char *, unsigned long), qg_mysql_sonames)
QG_REAL_FN(my_bool, mysql_read_query_result, (MYSQL *), qg_mysql_sonames)
QG_REAL_FN(int, mysql_next_result, (MYSQL *), qg_mysql_sonames)
QG_REAL_FN(MYSQL *, mysql_real_connect,
           (MYSQL *, const char *, const char *, const char *, const char *, unsigned int,
            const char *, unsigned long),
           qg_mysql_sonames)
QG_REAL_FN(int, mysql_set_character_set, (MYSQL *, const char *), qg_mysql_sonames)
QG_REAL_FN(my_bool, mysql_change_user, (MYSQL *, const char *, const char *, const char *),
           qg_mysql_sonames)
QG_REAL_FN(int, mysql_reset_connection, (MYSQL *), qg_mysql_sonames)
QG_REAL_FN(int, mysql_ping, (MYSQL *), qg_mysql_sonames)
QG_REAL_FN(void, mysql_close, (MYSQL *), qg_mysql_sonames)
QG_REAL_FN(unsigned int, mysql_errno, (MYSQL *), qg_mysql_sonames)
QG_REAL_FN(const char *, mysql_error, (MYSQL *), qg_mysql_sonames)
QG_REAL_FN(const char *, mysql_sqlstate, (MYSQL *), qg_mysql_sonames)
QG_REAL_FN(unsigned long, mysql_escape_string, (char *, const char *, unsigned long),
           qg_mysql_sonames)
QG_REAL_FN(unsigned long, mysql_real_escape_string,
           (MYSQL *, char *, const char *, unsigned long), qg_mysql_sonames)
QG_REAL_FN(const char *, mysql_character_set_name, (MYSQL *), qg_mysql_sonames)
QG_REAL_FN(int, mysql_get_optionv, (MYSQL *, int, void *, ...), qg_mysql_sonames)
QG_REAL_FN(int, mysql_get_socket, (MYSQL *), qg_mysql_sonames)
QG_REAL_FN(MYSQL_STMT *, mysql_stmt_init, (MYSQL *), qg_mysql_sonames)
QG_REAL_FN(int, mysql_stmt_prepare, (MYSQL_STMT *, const char *, unsigned long), qg_mysql_sonames)
QG_REAL_FN(int, mysql_stmt_execute, (MYSQL_STMT *), qg_mysql_sonames)
QG_REAL_FN(int, mariadb_stmt_execute_direct, (MYSQL_STMT *, const char *, size_t),
           qg_mysql_sonames)
QG_REAL_FN(my_bool, mysql_stmt_close, (MYSQL_STMT *), qg_mysql_sonames)
QG_REAL_FN(unsigned int, mysql_stmt_errno, (MYSQL_STMT *), qg_mysql_sonames)
QG_REAL_FN(const char *, mysql_stmt_error, (MYSQL_STMT *), qg_mysql_sonames)
QG_REAL_FN(const char *, mysql_stmt_sqlstate, (MYSQL_STMT *), qg_mysql_sonames)
QG_REAL_FN(unsigned long, mysql_thread_id, (MYSQL *), qg_mysql_sonames)
QG_REAL_FN(unsigned int, mysql_field_count, (MYSQL *), qg_mysql_sonames)
QG_REAL_FN(my_bool, mariadb_get_infov, (MYSQL *, int, void *, ...), qg_mysql_sonames)

/* The library's functions that the entries for a text and the escaper
 * call each time, looked up together: an entry tests the generation of the
 * real symbols (real.h) once for them all, not once a function
 * (docs/PERFORMANCE.md, the libmariadb front).  Kept for the generation
 * once mysql_real_query, which every MySQL client library has, is found:
 * the library is loaded then, and a function it lacks (MySQL's has no
 * mariadb_get_infov) stays NULL.  Until it is, each entry looks them up. */
typedef struct lib_calls {
    mysql_query_fn query;
    mysql_real_query_fn real_query;
    mysql_send_query_fn send_query;
    mysql_real_escape_string_fn real_escape_string;
    mysql_thread_id_fn thread_id;
    mysql_field_count_fn field_count;
    mariadb_get_infov_fn get_infov;
    mysql_character_set_name_fn charset_name;
    unsigned generation; /* qg_real_generation when looked up; 0: never */
} lib_calls;
static lib_calls kept_calls;

__attribute__((noinline)) static void look_up_calls(void)
{
    unsigned now = __atomic_load_n(&qg_real_generation, __ATOMIC_ACQUIRE);
    lib_calls c = {
        .query = real_mysql_query(),
        .real_query = real_mysql_real_query(),
        .send_query = real_mysql_send_query(),
        .real_escape_string = real_mysql_real_escape_string(),
        .thread_id = real_mysql_thread_id(),
        .field_count = real_mysql_field_count(),
        .get_infov = real_mariadb_get_infov(),
        .charset_name = real_mysql_character_set_name(),
    };
    /* another thread may be writing the same functions in */
    __atomic_store_n(&kept_calls.query, c.query, __ATOMIC_RELAXED);
    __atomic_store_n(&kept_calls.real_query, c.real_query, __ATOMIC_RELAXED);
    __atomic_store_n(&kept_calls.send_query, c.send_query, __ATOMIC_RELAXED);
    __atomic_store_n(&kept_calls.real_escape_string, c.real_escape_string, __ATOMIC_RELAXED);
    __atomic_store_n(&kept_calls.thread_id, c.thread_id, __ATOMIC_RELAXED);
    __atomic_store_n(&kept_calls.field_count, c.field_count, __ATOMIC_RELAXED);
    __atomic_store_n(&kept_calls.get_infov, c.get_infov, __ATOMIC_RELAXED);
    __atomic_store_n(&kept_calls.charset_name, c.charset_name, __ATOMIC_RELAXED);
    if (c.real_query)
        __atomic_store_n(&kept_calls.generation, now, __ATOMIC_RELEASE);
}

/* Brings kept_calls to this generation: each entry that reads them does
 * first, and reads them then without a test of its own. */
QG_HOT static inline void calls_up_to_date(void)
{
    if (__atomic_load_n(&kept_calls.generation, __ATOMIC_ACQUIRE) !=
        __atomic_load_n(&qg_real_generation, __ATOMIC_ACQUIRE))
        look_up_calls();
}

/* The functions of kept_calls, read in an entry that brought them up to
 * date (one atomic load each: another thread may be writing them in). */
static inline unsigned long lib_thread_id(void *conn)
{
    mysql_thread_id_fn fn = __atomic_load_n(&kept_calls.thread_id, __ATOMIC_RELAXED);
    return fn ? fn(conn) : 0;
}

static inline unsigned lib_status(void *conn)
{
    mariadb_get_infov_fn get_info = __atomic_load_n(&kept_calls.get_infov, __ATOMIC_RELAXED);
    unsigned status = 0;
    if (!get_info || get_info(conn, MARIADB_CONNECTION_SERVER_STATUS, &status) != 0)
        return 0;
    return status;
}

static inline bool lib_result_set(void *conn)
{
    mysql_field_count_fn field_count = __atomic_load_n(&kept_calls.field_count, __ATOMIC_RELAXED);
    return field_count && field_count(conn) != 0;
}

static inline const char *lib_charset_name(MYSQL *mysql)
{
    mysql_character_set_name_fn fn = __atomic_load_n(&kept_calls.charset_name, __ATOMIC_RELAXED);
    return fn ? fn(mysql) : NULL;
}

/* The session's calls on the library, for an entry: kept_calls are
 * brought up to date first (its callbacks read them).  In line: the
 * session's code in line in an entry then calls the library directly. */
QG_HOT static inline __attribute__((always_inline)) const qg_my_server *session_server(void)
{
    static const qg_my_server server = {
        .map = &qg_my_conns,
        .ask = qg_my_lib_ask,
        .request_tracking = qg_my_lib_request_tracking,
        .thread_id = lib_thread_id,
        .status = lib_status,
        .result_set = lib_result_set,
        .report_item = qg_my_lib_report_item,
    };
    calls_up_to_date();
    return &server;
}

QG_HOT static bool tracking_enabled(void)
{
    const qg_settings *s = qg_settings_get();
    return s->mode != QG_MODE_OFF && s->active;
}

/* ------------------------------------------------------------- entries */

/* Whether a call on mysql is the library's own: inside the library's call
 * for a text on mysql (mysql_query's inner mysql_real_query, a
 * non-blocking call's), or inside a reconnect. */
static bool inside_reconnect(MYSQL *mysql)
{
    return qg_my_sending && (qg_my_sending == mysql || !qg_my_conn_find(mysql));
}

/* This front checks the connection's queries: the wire front must not;
 * and the log never writes into its socket.  A handle's socket is made
 * only with a session, by the library's mysql_real_connect (its automatic
 * reconnect's too, through this front's entry): it is handed over then,
 * and when a query finds a session new to the shim (a handle whose connect
 * it did not see, a new server thread). */
static void hand_over_from_wire(MYSQL *mysql)
{
    mysql_get_socket_fn socket_of = real_mysql_get_socket();
    if (socket_of) {
        int fd = socket_of(mysql);
        qg_wire_library_guarded(fd);
        qg_log_note_db_socket(fd);
    }
}

/* The entry to use for the text read as `plan` on mysql, up to date; NULL
 * without memory.  In line: each query takes it. */
QG_HOT static inline __attribute__((always_inline)) qg_my_conn *
entry_for_query(const qg_my_server *srv, MYSQL *mysql, qg_my_plan *plan)
{
    qg_my_conn *e = qg_my_conn_use(mysql);
    if (!e)
        return NULL;
    qg_my_block_clear(&e->block);
    if (qg_my_session_prepare(&e->session, srv, mysql, plan))
        hand_over_from_wire(mysql);
    return e;
}

/* ------------------------------------------------------------ checking */

/* A block the shim could not record in the connection map (no memory for
 * the entry): this thread's error readers answer with it until its next
 * query.  initial-exec: reading it never allocates. */
#define TLS_STATIC __attribute__((tls_model("initial-exec")))
static __thread MYSQL *orphan_mysql TLS_STATIC;
static __thread qg_my_block orphan TLS_STATIC;

/* Whether `name`, the client library's name of its charset, is the
 * session's charset.  The library's names are its own constant data, never
 * written in place: while the libraries loaded stay (qg_real_generation)
 * a name found equal once is equal at the same address, until the state
 * changes (which forgets it). */
QG_HOT static inline __attribute__((always_inline)) bool
lib_charset_is_state(qg_my_session *s, const char *name)
{
    unsigned generation = __atomic_load_n(&qg_real_generation, __ATOMIC_ACQUIRE);
    if (name == s->lib_charset_alike && generation == s->lib_charset_generation)
        return true;
    if (strcmp(name, s->state.charset) != 0)
        return false;
    s->lib_charset_alike = name;
    s->lib_charset_generation = generation;
    return true;
}

/* Whether a session made anew by the client library's automatic reconnect
 * would start in a state other than the one now (the library's charset,
 * the server's sql_mode as at connect).  In line: each query asks. */
QG_HOT static inline __attribute__((always_inline)) bool
reconnect_state_differs(qg_my_session *s, MYSQL *mysql)
{
    if (s->fresh_flags != s->state.flags)
        return true;
    const char *name = lib_charset_name(mysql);
    return name && !lib_charset_is_state(s, name);
}

/* qg_my_session_check of a text on a handle whose reconnect would start
 * in another state: when the library reconnects on its own
 * (MYSQL_OPT_RECONNECT, read on every such query: a program may set it in
 * the handle itself, or an option file at connect), with that state too.
 * Out of line: the common query meets no such handle. */
QG_HOT static __attribute__((noinline)) bool
reconnecting_check(qg_my_conn *e, MYSQL *mysql, const char *api, qg_my_plan *plan,
                   const void *caller, qg_decision *d)
{
    const qg_my_session *s = &e->session;
    mysql_get_optionv_fn get_option = real_mysql_get_optionv();
    my_bool reconnect = 0;
    bool reconnects =
        get_option && get_option(mysql, MYSQL_OPT_RECONNECT, &reconnect) == 0 && reconnect;
    const char *name = lib_charset_name(mysql);
    qg_my_state fresh = s->state;
    if (name)
        qg_my_state_set_charset(&fresh, name, strlen(name));
    fresh.flags = s->fresh_flags;
    bool differs = reconnects && !qg_my_state_equal(&fresh, &s->state);
    return qg_my_session_check(s, differs ? &fresh : NULL, mysql, api, plan, caller,
                               &e->session.told_unknown, d);
}

/* No memory for the entry: the server is asked for this query alone. */
QG_COLD static bool entryless_check(MYSQL *mysql, const char *api, qg_my_plan *plan,
                                    const void *caller, qg_decision *d)
{
    qg_log_write_event(qg_settings_get(), "error", "out_of_memory", api);
    hand_over_from_wire(mysql);
    qg_my_session alone = {.state = {.charset = ""}};
    bool covered;
    alone.stale = qg_my_plan_reads_alike(plan) || !qg_my_lib_ask(mysql, &alone.state, &covered);
    return qg_my_session_check(&alone, NULL, mysql, api, plan, caller, NULL, d);
}

/* Checks a text about to be sent on mysql (the guard passed it); true = send.
 * *out is the connection's entry, NULL when out of memory.  srv: the
 * entry's session_server(). */
QG_HOT static inline __attribute__((always_inline)) bool
connection_query_allowed(const qg_my_server *srv, MYSQL *mysql, const char *api,
                         qg_my_plan *plan, const void *caller, qg_decision *d, qg_my_conn **out)
{
    orphan_mysql = NULL;
    qg_my_conn *e = *out = entry_for_query(srv, mysql, plan);
    if (!e)
        return entryless_check(mysql, api, plan, caller, d);
    if (reconnect_state_differs(&e->session, mysql))
        return reconnecting_check(e, mysql, api, plan, caller, d);
    return qg_my_session_check(&e->session, NULL, mysql, api, plan, caller,
                               &e->session.told_unknown, d);
}

/* Whether a prepared text may change the state unreported, read with the
 * connection's state (latin1 without an entry). */
static bool prepared_may_hide(const qg_my_conn *e, qg_my_plan *plan)
{
    static const qg_my_state latin1 = {.charset = "latin1"};
    qg_my_plan_read(plan, e ? &e->session.state : &latin1, NULL);
    return qg_my_plan_may_change_unreported(plan);
}

/* ------------------------------------------------------------- queries */

typedef enum query_api { API_QUERY, API_REAL_QUERY, API_SEND_QUERY } query_api;

static const char *const api_names[] = {"mysql_query", "mysql_real_query", "mysql_send_query"};

/* The real entry for api: mysql_query takes a C string, the others a
 * length.  Of kept_calls, brought up to date by the entry. */
typedef struct real_sender {
    mysql_query_fn plain;
    mysql_real_query_fn sized;
} real_sender;

static real_sender real_sender_for(query_api api)
{
    real_sender r = {NULL, NULL};
    if (api == API_QUERY)
        r.plain = __atomic_load_n(&kept_calls.query, __ATOMIC_RELAXED);
    else if (api == API_REAL_QUERY)
        r.sized = __atomic_load_n(&kept_calls.real_query, __ATOMIC_RELAXED);
    else
        r.sized = __atomic_load_n(&kept_calls.send_query, __ATOMIC_RELAXED);
    return r;
}

QG_HOT static int send_real(real_sender r, MYSQL *mysql, const char *sql, unsigned long len)
{
    return r.plain ? r.plain(mysql, sql) : r.sized(mysql, sql, len);
}

/* Sends, in place of a blocked query, the SIGNAL the wire front sends. */
QG_COLD static bool send_signal(real_sender real, MYSQL *mysql, const qg_decision *d)
{
    char text[QG_REPLACEMENT_MYSQL_SIGNAL_MAX];
    size_t len = qg_replacement_mysql_signal(text, sizeof text, d->message);
    return real.sized && real.sized(mysql, text, len) == 0;
}

/* An answer was read on mysql (rc: the reading call's failure): the last
 * of its text unless more results follow. */
static void note_read(qg_my_conn *e, MYSQL *mysql, int rc)
{
    qg_my_session_read_done(&e->session,
                            rc != 0 || !(lib_status(mysql) & QG_MY_STATUS_MORE_RESULTS_EXIST));
}

/* Whether a failed mysql_query / mysql_real_query sent its text and read
 * an answer: the server's error, not the library's own (2000 and up:
 * nothing sent, or the connection lost with its session). */
static bool server_answered(MYSQL *mysql)
{
    mysql_errno_fn errno_of = real_mysql_errno();
    return errno_of && errno_of(mysql) < 2000;
}

/* In line in each entry: its api is a constant there. */
QG_HOT static inline __attribute__((always_inline)) int
guarded_query(MYSQL *mysql, const char *sql, unsigned long len, query_api api, const void *caller)
{
    const qg_my_server *srv = session_server();
    real_sender real = real_sender_for(api);
    if (!real.plain && !real.sized) {
        qg_guard_report_missing(api_names[api]);
        return 1;
    }
    /* The library's own calls for the text are known by qg_my_sending
     * while it is sent, which is when the library makes them: the call is
     * not recorded in the guard, which passes only the texts the shim
     * hands the library (and the library's own queries, such as
     * mysql_set_character_set's). */
    if (!tracking_enabled() || !sql || inside_reconnect(mysql) || qg_guard_inside(mysql, sql, len))
        return send_real(real, mysql, sql, len);
    qg_decision d;
    qg_my_conn *e;
    qg_my_plan plan;
    qg_my_plan_init(&plan, sql, len);
    if (!connection_query_allowed(srv, mysql, api_names[api], &plan, caller, &d, &e)) {
        /* An asynchronous driver (Ruby's mysql2) waits for the socket to
         * turn readable and takes a failed send for a lost connection: it
         * gets a statement the server answers with an error naming us. */
        bool answered = api == API_SEND_QUERY && send_signal(real, mysql, &d);
        if (e && answered) { /* its answer comes in its place */
            qg_my_plan none;
            qg_my_plan_init(&none, "", 0);
            qg_my_session_queued(&e->session, &none);
        }
        if (e)
            qg_my_block_set(&e->block, &d, api == API_SEND_QUERY && !answered);
        else
            orphan_mysql = mysql, qg_my_block_set(&orphan, &d, api == API_SEND_QUERY && !answered);
        return answered ? 0 : 1;
    }
    /* With earlier answers unread, the library reads the first of them
     * for this call, not this text's: the text counts as queued. */
    bool queued = e && (api == API_SEND_QUERY || e->session.unread);
    /* answers read later need what the text may change now; a text of
     * one statement has none (the check searched it for a ';') */
    bool later = queued || !qg_my_plan_single(&plan);
    if (e && later)
        qg_my_session_sending(&e->session, &plan);
    qg_my_sending = mysql;
    int rc = send_real(real, mysql, sql, len);
    qg_my_sending = NULL;
    if (queued && (rc == 0 || (api != API_SEND_QUERY && server_answered(mysql))))
        qg_my_session_queued(&e->session, &plan);
    if (e && rc == 0 && api != API_SEND_QUERY)
        qg_my_session_answered(&e->session, srv, mysql, later ? NULL : &plan);
    if (queued && api != API_SEND_QUERY && (rc == 0 || server_answered(mysql)))
        note_read(e, mysql, rc);
    return rc;
}

QG_HOT QG_EXPORT int mysql_query(MYSQL *mysql, const char *q)
{
    return guarded_query(mysql, q, q ? strlen(q) : 0, API_QUERY, __builtin_return_address(0));
}

QG_HOT QG_EXPORT int mysql_real_query(MYSQL *mysql, const char *q, unsigned long length)
{
    return guarded_query(mysql, q, length, API_REAL_QUERY, __builtin_return_address(0));
}

QG_HOT QG_EXPORT int mysql_send_query(MYSQL *mysql, const char *q, unsigned long length)
{
    return guarded_query(mysql, q, length, API_SEND_QUERY, __builtin_return_address(0));
}

QG_HOT QG_EXPORT my_bool mysql_read_query_result(MYSQL *mysql)
{
    mysql_read_query_result_fn fn = real_mysql_read_query_result();
    if (!fn) {
        qg_guard_report_missing("mysql_read_query_result");
        return 1;
    }
    if (orphan_mysql == mysql && orphan.await_read) {
        orphan.await_read = false;
        return 1; /* nothing was sent */
    }
    if (!qg_guard_enter(mysql, NULL, 0))
        return fn(mysql);
    qg_my_conn *e = qg_my_conn_find(mysql);
    if (e && e->block.await_read) {
        /* nothing was sent: reading would wait for an answer forever */
        e->block.await_read = false;
        qg_guard_leave_call(mysql, NULL, 0);
        return 1;
    }
    const qg_my_server *srv = session_server();
    my_bool rc = fn(mysql);
    if (e && rc == 0)
        qg_my_session_answered(&e->session, srv, mysql, NULL);
    if (e)
        note_read(e, mysql, rc);
    qg_guard_leave_call(mysql, NULL, 0);
    return rc;
}

QG_EXPORT int mysql_next_result(MYSQL *mysql)
{
    mysql_next_result_fn fn = real_mysql_next_result();
    if (!fn) {
        qg_guard_report_missing("mysql_next_result");
        return -1;
    }
    qg_my_conn *e = qg_my_conn_find(mysql);
    if (!e || !qg_guard_enter(mysql, NULL, 0))
        return fn(mysql);
    const qg_my_server *srv = session_server();
    qg_my_session_result_read(&e->session, srv, mysql);
    int rc = fn(mysql);
    if (rc == 0)
        qg_my_session_answered(&e->session, srv, mysql, NULL);
    if (rc != -1) /* -1: no result was left to read */
        note_read(e, mysql, rc);
    qg_guard_leave_call(mysql, NULL, 0);
    return rc;
}

/* ------------------------------------------------ prepared statements */

QG_EXPORT MYSQL_STMT *mysql_stmt_init(MYSQL *mysql)
{
    mysql_stmt_init_fn fn = real_mysql_stmt_init();
    if (!fn) {
        qg_guard_report_missing("mysql_stmt_init");
        return NULL;
    }
    MYSQL_STMT *stmt = fn(mysql);
    if (stmt && tracking_enabled())
        qg_my_stmt_add(stmt, mysql);
    return stmt;
}

QG_EXPORT int mysql_stmt_prepare(MYSQL_STMT *stmt, const char *sql, unsigned long len)
{
    mysql_stmt_prepare_fn fn = real_mysql_stmt_prepare();
    if (!fn) {
        qg_guard_report_missing("mysql_stmt_prepare");
        return 1;
    }
    qg_my_stmt *s = qg_my_stmt_find(stmt);
    if (!s || !sql || !tracking_enabled() || !qg_guard_enter(stmt, sql, len))
        return fn(stmt, sql, len);
    qg_my_block_clear(&s->block);
    qg_decision d;
    qg_my_conn *e;
    qg_my_plan plan;
    qg_my_plan_init(&plan, sql, len);
    if (!connection_query_allowed(session_server(), s->mysql, "mysql_stmt_prepare", &plan,
                                  __builtin_return_address(0), &d, &e)) {
        qg_my_block_set(&s->block, &d, false);
        qg_guard_leave_call(stmt, sql, len);
        return 1;
    }
    qg_my_sending = s->mysql;
    int rc = fn(stmt, sql, len);
    qg_my_sending = NULL;
    s->may_hide = prepared_may_hide(e, &plan);
    qg_guard_leave_call(stmt, sql, len);
    return rc;
}

/* What an executed statement changed is asked for before the next check. */
QG_EXPORT int mysql_stmt_execute(MYSQL_STMT *stmt)
{
    mysql_stmt_execute_fn fn = real_mysql_stmt_execute();
    if (!fn) {
        qg_guard_report_missing("mysql_stmt_execute");
        return 1;
    }
    qg_my_stmt *s = qg_my_stmt_find(stmt);
    MYSQL *outer = qg_my_sending;
    qg_my_sending = s ? s->mysql : outer; /* a reconnect inside is the library's */
    int rc = fn(stmt);
    qg_my_sending = outer;
    qg_my_conn *e = s ? qg_my_conn_find(s->mysql) : NULL;
    if (e)
        qg_my_session_executed(&e->session, session_server(), s->mysql, s->may_hide);
    return rc;
}

/* Prepares and executes a text in one call: the library writes
 * COM_STMT_PREPARE and COM_STMT_EXECUTE together on the socket, or — to a
 * server that cannot take them so — calls mysql_stmt_prepare and
 * mysql_stmt_execute, its inner calls for the same text and length. */
QG_EXPORT int mariadb_stmt_execute_direct(MYSQL_STMT *stmt, const char *sql, size_t length)
{
    mariadb_stmt_execute_direct_fn fn = real_mariadb_stmt_execute_direct();
    if (!fn) {
        qg_guard_report_missing("mariadb_stmt_execute_direct");
        return 1;
    }
    qg_my_stmt *s = qg_my_stmt_find(stmt);
    unsigned long given = (unsigned long)length; /* as the inner mysql_stmt_prepare gets it */
    if (!s || !sql || !tracking_enabled() || !qg_guard_enter(stmt, sql, given))
        return fn(stmt, sql, length);
    size_t len = length == (size_t)-1 ? strlen(sql) : length;
    qg_my_block_clear(&s->block);
    qg_decision d;
    qg_my_conn *e;
    qg_my_plan plan;
    qg_my_plan_init(&plan, sql, len);
    const qg_my_server *srv = session_server();
    if (!connection_query_allowed(srv, s->mysql, "mariadb_stmt_execute_direct", &plan,
                                  __builtin_return_address(0), &d, &e)) {
        /* the library reports a failed direct execution on both handles */
        qg_my_block_set(&s->block, &d, false);
        if (e)
            qg_my_block_set(&e->block, &d, false);
        qg_guard_leave_call(stmt, sql, given);
        return 1;
    }
    s->may_hide = prepared_may_hide(e, &plan);
    MYSQL *outer = qg_my_sending;
    qg_my_sending = s->mysql;
    int rc = fn(stmt, sql, length);
    qg_my_sending = outer;
    if (e)
        qg_my_session_executed(&e->session, srv, s->mysql, s->may_hide);
    qg_guard_leave_call(stmt, sql, given);
    return rc;
}

QG_EXPORT my_bool mysql_stmt_close(MYSQL_STMT *stmt)
{
    mysql_stmt_close_fn fn = real_mysql_stmt_close();
    if (stmt)
        qg_my_stmt_close(stmt);
    if (fn)
        return fn(stmt);
    qg_guard_report_missing("mysql_stmt_close");
    return 1;
}

/* ------------------------------------------------------------ sessions */

QG_EXPORT MYSQL *mysql_real_connect(MYSQL *mysql, const char *host, const char *user,
                                    const char *passwd, const char *db, unsigned int port,
                                    const char *unix_socket, unsigned long clientflag)
{
    mysql_real_connect_fn fn = real_mysql_real_connect();
    if (!fn) {
        qg_guard_report_missing("mysql_real_connect");
        return NULL;
    }
    qg_wire_library_connect_begin();
    if (!tracking_enabled() || inside_reconnect(mysql)) {
        MYSQL *connected = fn(mysql, host, user, passwd, db, port, unix_socket, clientflag);
        qg_wire_library_connect_end();
        if (connected && tracking_enabled()) /* a reconnect: its socket becomes the handle's */
            hand_over_from_wire(connected);
        return connected;
    }
    /* The library runs the program's init commands (MYSQL_INIT_COMMAND)
     * inside, through mysql_real_query: each is checked as any query, under
     * the new session's state, asked for first; a blocked one fails the
     * connect with its error. */
    MYSQL *connected = fn(mysql, host, user, passwd, db, port, unix_socket, clientflag);
    qg_wire_library_connect_end();
    if (connected)
        hand_over_from_wire(connected);
    qg_my_conn *e = connected ? qg_my_conn_use(connected) : NULL;
    if (e) {
        qg_my_block_clear(&e->block);
        (void)qg_my_session_prepare(&e->session, session_server(), connected, NULL);
    }
    return connected;
}

QG_EXPORT int mysql_set_character_set(MYSQL *mysql, const char *csname)
{
    mysql_set_character_set_fn fn = real_mysql_set_character_set();
    if (!fn) {
        qg_guard_report_missing("mysql_set_character_set");
        return 1;
    }
    if (!tracking_enabled() || inside_reconnect(mysql) || !qg_guard_enter(mysql, NULL, 0))
        return fn(mysql, csname);
    int rc = fn(mysql, csname);
    qg_my_conn *e = qg_my_conn_find(mysql);
    if (e) {
        qg_my_block_clear(&e->block);
        qg_my_plan none; /* the library's own text: its OK packet reports */
        qg_my_plan_init(&none, "", 0);
        if (rc == 0)
            qg_my_session_answered(&e->session, session_server(), mysql, &none);
    }
    qg_guard_leave_call(mysql, NULL, 0);
    return rc;
}

/* Both make the session anew: tracking is requested and the state read again. */
static void forget_session(MYSQL *mysql)
{
    qg_my_conn *e = qg_my_conn_find(mysql);
    if (e) {
        qg_my_block_clear(&e->block);
        qg_my_session_renew(&e->session);
    }
}

QG_EXPORT my_bool mysql_change_user(MYSQL *mysql, const char *user, const char *passwd,
                                    const char *db)
{
    mysql_change_user_fn fn = real_mysql_change_user();
    if (!fn) {
        qg_guard_report_missing("mysql_change_user");
        return 1;
    }
    my_bool rc = fn(mysql, user, passwd, db);
    forget_session(mysql);
    return rc;
}

QG_EXPORT int mysql_reset_connection(MYSQL *mysql)
{
    mysql_reset_connection_fn fn = real_mysql_reset_connection();
    if (!fn) {
        qg_guard_report_missing("mysql_reset_connection");
        return 1;
    }
    int rc = fn(mysql);
    forget_session(mysql);
    return rc;
}

/* mysql_ping reconnects when automatic reconnect is on: a reconnect inside
 * is the library's (the next check sees the new session's thread). */
QG_EXPORT int mysql_ping(MYSQL *mysql)
{
    mysql_ping_fn fn = real_mysql_ping();
    if (!fn) {
        qg_guard_report_missing("mysql_ping");
        return 1;
    }
    MYSQL *outer = qg_my_sending;
    qg_my_sending = mysql;
    int rc = fn(mysql);
    qg_my_sending = outer;
    return rc;
}

QG_EXPORT void mysql_close(MYSQL *mysql)
{
    mysql_close_fn fn = real_mysql_close();
    /* inside a reconnect the library closes the old session of a handle
     * that lives on: the entry stays */
    if (mysql && !inside_reconnect(mysql))
        qg_my_conn_close(mysql);
    if (fn)
        fn(mysql);
    else
        qg_guard_report_missing("mysql_close");
}

/* ------------------------------------------------------- error readers */

/* The pending block of a connection: a thread's own when its entry could
 * not be recorded. */
static const qg_my_block *conn_block(MYSQL *mysql)
{
    return orphan_mysql == mysql ? &orphan : qg_my_conn_block(mysql);
}

QG_EXPORT unsigned int mysql_errno(MYSQL *mysql)
{
    if (conn_block(mysql))
        return QG_MY_BLOCK_ERRNO;
    mysql_errno_fn fn = real_mysql_errno();
    return fn ? fn(mysql) : QG_MY_BLOCK_ERRNO;
}

QG_EXPORT const char *mysql_error(MYSQL *mysql)
{
    const qg_my_block *b = conn_block(mysql);
    if (b)
        return b->message;
    mysql_error_fn fn = real_mysql_error();
    return fn ? fn(mysql) : "quoteguard: mysql_error not found in the client library";
}

QG_EXPORT const char *mysql_sqlstate(MYSQL *mysql)
{
    const qg_my_block *b = conn_block(mysql);
    if (b)
        return b->sqlstate;
    mysql_sqlstate_fn fn = real_mysql_sqlstate();
    return fn ? fn(mysql) : "HY000";
}

QG_EXPORT unsigned int mysql_stmt_errno(MYSQL_STMT *stmt)
{
    if (qg_my_stmt_block(stmt))
        return QG_MY_BLOCK_ERRNO;
    mysql_stmt_errno_fn fn = real_mysql_stmt_errno();
    return fn ? fn(stmt) : QG_MY_BLOCK_ERRNO;
}

QG_EXPORT const char *mysql_stmt_error(MYSQL_STMT *stmt)
{
    const qg_my_block *b = qg_my_stmt_block(stmt);
    if (b)
        return b->message;
    mysql_stmt_error_fn fn = real_mysql_stmt_error();
    return fn ? fn(stmt) : "quoteguard: mysql_stmt_error not found in the client library";
}

QG_EXPORT const char *mysql_stmt_sqlstate(MYSQL_STMT *stmt)
{
    const qg_my_block *b = qg_my_stmt_block(stmt);
    if (b)
        return b->sqlstate;
    mysql_stmt_sqlstate_fn fn = real_mysql_stmt_sqlstate();
    return fn ? fn(stmt) : "HY000";
}

/* ------------------------------------------------------------ escaping */

/* The upgrade of mysql_real_escape_string, logged once a connection. */
QG_COLD static void log_real_escape_upgrade(const qg_encoding *enc, bool quotes_only,
                                            const char *lib, bool lib_quotes_only)
{
    char detail[160];
    snprintf(detail, sizeof detail, "escaping for charset %s%s: the client library escapes as %s%s",
             qg_encoding_name(enc), quotes_only ? " with NO_BACKSLASH_ESCAPES" : "",
             lib ? lib : "(unknown)", lib_quotes_only ? " with NO_BACKSLASH_ESCAPES" : "");
    qg_log_write_event(qg_settings_get(), "info", "mysql_real_escape_string_upgraded", detail);
}

/* The stale state of a connection asked for, where the server can be asked. */
QG_COLD static void refresh_for_escape(const qg_my_server *srv, qg_my_conn *e, MYSQL *mysql)
{
    if (!e->session.unread && qg_guard_enter(mysql, NULL, 0)) {
        qg_my_session_refresh(&e->session, srv, mysql);
        qg_guard_leave_call(mysql, NULL, 0);
    }
}

/* The encoding the shim escapes for on e's connection in place of the
 * library (with *quotes_only), or NULL: the library's escaping is the
 * server's, or the server's state is not known. */
QG_HOT static const qg_encoding *server_escape(const qg_my_server *srv, qg_my_conn *e,
                                               MYSQL *mysql, bool *quotes_only)
{
    if (e->session.stale)
        refresh_for_escape(srv, e, mysql);
    if (e->session.stale)
        return NULL;
    const char *lib = lib_charset_name(mysql);
    bool lib_quotes_only = lib_status(mysql) & QG_MY_STATUS_NO_BACKSLASH_ESCAPES;
    bool server_quotes_only = e->session.state.flags & QG_NO_BACKSLASH_ESCAPES;
    if (lib && lib_quotes_only == server_quotes_only && lib_charset_is_state(&e->session, lib))
        return NULL; /* the library escapes as the server reads */
    const qg_encoding *enc =
        qg_my_escape_for_server(&e->session.state, lib, lib_quotes_only, quotes_only);
    if (enc && !__atomic_exchange_n(&e->real_escape_upgrade_logged, true, __ATOMIC_RELAXED))
        log_real_escape_upgrade(enc, *quotes_only, lib, lib_quotes_only);
    return enc;
}

/* mysql_real_escape_string escapes with the library's idea of the charset
 * and of NO_BACKSLASH_ESCAPES, stale after a plain SET NAMES without
 * tracking, a CALL or a reset: the shim escapes for what the server has
 * whenever the two differ. */
QG_EXPORT unsigned long mysql_real_escape_string(MYSQL *mysql, char *to, const char *from,
                                                 unsigned long length)
{
    const qg_my_server *srv = session_server();
    qg_my_conn *e = !tracking_enabled() || !to || !from ? NULL : qg_my_conn_find(mysql);
    bool quotes_only;
    const qg_encoding *enc = e ? server_escape(srv, e, mysql, &quotes_only) : NULL;
    if (enc)
        return qg_my_escape(enc, quotes_only, to, from, length);
    mysql_real_escape_string_fn fn =
        __atomic_load_n(&kept_calls.real_escape_string, __ATOMIC_RELAXED);
    if (fn)
        return fn(mysql, to, from, length);
    qg_guard_report_missing("mysql_real_escape_string");
    return (unsigned long)-1;
}

/* mysql_escape_string has no connection and escapes as latin1 with
 * backslashes.  The shim escapes instead for the connection the program
 * most recently connected or queried on (while it is open) — with one
 * connection open, that one — when latin1 rules would be unsafe there:
 * a charset whose trail bytes can be ASCII, or NO_BACKSLASH_ESCAPES.
 * Without any open connection the real function runs. */
QG_EXPORT unsigned long mysql_escape_string(char *to, const char *from, unsigned long length)
{
    mysql_escape_string_fn fn = real_mysql_escape_string();
    bool quotes_only = false, first_upgrade = false;
    const qg_encoding *enc = NULL;
    if (tracking_enabled() && to && from)
        enc = qg_my_last_used_escape(&quotes_only, &first_upgrade);
    if (!enc) {
        if (fn)
            return fn(to, from, length);
        qg_guard_report_missing("mysql_escape_string");
        return (unsigned long)-1;
    }
    if (first_upgrade) {
        char detail[160];
        snprintf(detail, sizeof detail, "escaping for charset %s%s of the last used connection",
                 qg_encoding_name(enc), quotes_only ? " with NO_BACKSLASH_ESCAPES" : "");
        qg_log_write_event(qg_settings_get(), "info", "mysql_escape_string_upgraded", detail);
    }
    return qg_my_escape(enc, quotes_only, to, from, length);
}
