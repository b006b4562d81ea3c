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
#include "conn_map.h"
#include "front_mysql.h"
#include "front_wire.h"
#include "guard.h"
#include "hot.h"
#include "log.h"
#include "mysql_escape.h"
#include "mysql_session.h"
#include "mysql_state.h"
#include "mysql_statements.h"
#include "quoteguard.h"
#include "real.h"
#include "settings.h"
#include "wire_stream.h"

#define QG_EXPORT __attribute__((visibility("default")))

/* ER_UNKNOWN_ERROR: a generic server error number, so that no program takes
 * a blocked query for a lost connection (2006) or a deadlock (1213) and
 * retries it. */
#define BLOCK_ERRNO 1105u
#define BLOCK_SQLSTATE "42000"

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
QG_REAL_FN(my_bool, mysql_stmt_close, (MYSQL_STMT *), qg_mysql_sonames)
QG_REAL_FN(unsigned int, mysql_stmt_errno, (MYSQL_STMT *), qg_mysql_sonames)
QG_REAL_FN(const char *, mysql_stmt_error, (MYSQL_STMT *), qg_mysql_sonames)
QG_REAL_FN(const char *, mysql_stmt_sqlstate, (MYSQL_STMT *), qg_mysql_sonames)

QG_COLD static void report_missing(const char *name)
{
    qg_log_write_event(qg_settings_get(), "error", "missing_symbol", name);
}

QG_HOT static bool tracking_enabled(void)
{
    const qg_settings *s = qg_settings_get();
    return s->mode != QG_MODE_OFF && s->active;
}

/* ------------------------------------------------------------- entries */

/* A blocked call's error, answered by the error readers until the next call. */
typedef struct block_note {
    bool set;
    bool await_read; /* mysql_send_query was blocked: mysql_read_query_result fails */
    char sqlstate[6];
    char message[sizeof(((qg_decision *)0)->message)];
} block_note;

typedef struct conn_entry {
    qg_conn_head head; /* the MYSQL handle */
    qg_my_session session;
    bool escape_upgrade_logged;
    bool real_escape_upgrade_logged;
    block_note block;
} conn_entry;

typedef struct stmt_entry {
    qg_conn_head head; /* the MYSQL_STMT handle */
    MYSQL *mysql;
    bool may_hide; /* the prepared text may change the state unreported */
    block_note block;
} stmt_entry;

static qg_conn_map conns = QG_CONN_MAP_INIT(conn_entry);
static qg_conn_map stmts = QG_CONN_MAP_INIT(stmt_entry);
/* Notes set: zero means the error readers need no lookup. */
static unsigned long pending_blocks;
/* The connection last connected or queried, for mysql_escape_string. */
static conn_entry *last_used;

static void lock_maps(void)
{
    qg_conn_map_write_lock(&conns);
    qg_conn_map_write_lock(&stmts);
}

static void unlock_maps(void)
{
    qg_conn_map_unlock(&stmts);
    qg_conn_map_unlock(&conns);
}

static void renew_map_locks(void)
{
    qg_conn_map_child_after_fork(&conns);
    qg_conn_map_child_after_fork(&stmts);
}

__attribute__((constructor)) static void keep_maps_across_fork(void)
{
    pthread_atfork(lock_maps, unlock_maps, renew_map_locks);
}

static void clear_block(block_note *b)
{
    if (!b->set)
        return;
    b->set = b->await_read = false;
    __atomic_sub_fetch(&pending_blocks, 1, __ATOMIC_RELEASE);
}

static void set_block(block_note *b, const qg_decision *d, bool await_read)
{
    if (!b->set)
        __atomic_add_fetch(&pending_blocks, 1, __ATOMIC_RELEASE);
    b->set = true;
    b->await_read = await_read;
    snprintf(b->sqlstate, sizeof b->sqlstate, "%s",
             d->sqlstate && strlen(d->sqlstate) == 5 ? d->sqlstate : BLOCK_SQLSTATE);
    snprintf(b->message, sizeof b->message, "%s", d->message);
}

static void forget_conn(void *entry)
{
    conn_entry *e = entry;
    if (__atomic_load_n(&last_used, __ATOMIC_RELAXED) == e)
        __atomic_store_n(&last_used, NULL, __ATOMIC_RELAXED);
    clear_block(&e->block);
}

static void forget_stmt(void *entry)
{
    clear_block(&((stmt_entry *)entry)->block);
}

/* Whether a call on mysql is the library's own, inside a reconnect. */
static bool inside_reconnect(MYSQL *mysql)
{
    return qg_my_sending && (qg_my_sending == mysql || !qg_conn_map_find(&conns, mysql));
}

static const qg_my_server server = {&conns,          qg_my_lib_ask,    qg_my_lib_request_tracking,
                                    qg_my_lib_thread_id, qg_my_lib_status, qg_my_lib_result_set,
                                    qg_my_lib_report_item};

/* The entry to use for a query on mysql, up to date; NULL without memory. */
QG_HOT static conn_entry *entry_for_query(MYSQL *mysql)
{
    conn_entry *e = qg_conn_map_get_or_add(&conns, mysql);
    if (!e)
        return NULL;
    clear_block(&e->block);
    qg_my_session_prepare(&e->session, &server, mysql);
    __atomic_store_n(&last_used, e, __ATOMIC_RELAXED);
    return e;
}

/* ------------------------------------------------------------ checking */

/* A block the shim could not record in the connection map (no memory for
 * the entry): this thread's error readers answer with it until its next
 * query.  initial-exec: reading it never allocates. */
#define TLS_STATIC __attribute__((tls_model("initial-exec")))
static __thread MYSQL *orphan_mysql TLS_STATIC;
static __thread block_note orphan TLS_STATIC;

/* The state a session made anew by the client library's automatic
 * reconnect starts with (the library's charset, the server's sql_mode as
 * at connect); false when the library does not reconnect or it is the
 * state now. */
static bool reconnect_state(const qg_my_session *s, MYSQL *mysql, qg_my_state *fresh)
{
    mysql_get_optionv_fn get_option = real_mysql_get_optionv();
    mysql_character_set_name_fn lib_charset = real_mysql_character_set_name();
    my_bool reconnect = 0;
    if (!get_option || get_option(mysql, MYSQL_OPT_RECONNECT, &reconnect) != 0 || !reconnect)
        return false;
    const char *name = lib_charset ? lib_charset(mysql) : NULL;
    *fresh = s->state;
    if (name)
        qg_my_state_set_charset(fresh, name, strlen(name));
    fresh->flags = s->fresh_flags;
    return !qg_my_state_equal(fresh, &s->state);
}

/* Checks a text about to be sent on mysql (guard entered); true = send.
 * *out is the connection's entry, NULL when out of memory. */
QG_HOT static bool connection_query_allowed(MYSQL *mysql, const char *api, const char *sql,
                                            size_t len, const void *caller, qg_decision *d,
                                            conn_entry **out)
{
    orphan_mysql = NULL;
    conn_entry *e = *out = entry_for_query(mysql);
    if (e) {
        qg_my_state fresh;
        bool resend = reconnect_state(&e->session, mysql, &fresh);
        return qg_my_session_check(&e->session, resend ? &fresh : NULL, mysql, api, sql, len,
                                   caller, d);
    }
    /* no memory for the entry: the server is asked for this query alone */
    qg_log_write_event(qg_settings_get(), "error", "out_of_memory", api);
    qg_my_session alone = {.state = {.charset = ""}};
    bool covered;
    alone.stale = !qg_my_lib_ask(mysql, &alone.state, &covered);
    return qg_my_session_check(&alone, NULL, mysql, api, sql, len, caller, d);
}

/* ------------------------------------------------------------- queries */

/* This front checks the connection's queries: the wire front must not;
 * and the log never writes into its socket. */
static void hand_over_from_wire(MYSQL *mysql)
{
    mysql_get_socket_fn socket_of = real_mysql_get_socket();
    if (socket_of) {
        int fd = socket_of(mysql);
        qg_wire_library_guarded(fd);
        qg_log_note_db_socket(fd);
    }
}

typedef enum query_api { API_QUERY, API_REAL_QUERY, API_SEND_QUERY } query_api;

static const char *const api_names[] = {"mysql_query", "mysql_real_query", "mysql_send_query"};

/* The real entry for api: mysql_query takes a C string, the others a length. */
typedef struct real_sender {
    mysql_query_fn plain;
    mysql_real_query_fn sized;
} real_sender;

static real_sender real_sender_for(query_api api)
{
    real_sender r = {NULL, NULL};
    if (api == API_QUERY)
        r.plain = real_mysql_query();
    else
        r.sized = api == API_REAL_QUERY ? real_mysql_real_query() : real_mysql_send_query();
    return r;
}

QG_HOT static int send_real(real_sender r, MYSQL *mysql, const char *sql, unsigned long len)
{
    return r.plain ? r.plain(mysql, sql) : r.sized(mysql, sql, len);
}

/* Sends, in place of a blocked query, the SIGNAL the wire front sends. */
QG_COLD static bool send_signal(real_sender real, MYSQL *mysql, const qg_decision *d)
{
    char text[256];
    size_t len = qg_wire_mysql_signal(text, sizeof text, d->message);
    return real.sized && real.sized(mysql, text, len) == 0;
}

QG_HOT static int guarded_query(MYSQL *mysql, const char *sql, unsigned long len,
                                query_api api, const void *caller)
{
    real_sender real = real_sender_for(api);
    if (!real.plain && !real.sized) {
        report_missing(api_names[api]);
        return 1;
    }
    if (!tracking_enabled() || !sql || inside_reconnect(mysql) ||
        !qg_guard_enter(mysql, sql, len))
        return send_real(real, mysql, sql, len);
    hand_over_from_wire(mysql);
    qg_decision d;
    conn_entry *e;
    if (!connection_query_allowed(mysql, api_names[api], sql, len, caller, &d, &e)) {
        /* An asynchronous driver (Ruby's mysql2) waits for the socket to
         * turn readable and takes a failed send for a lost connection: it
         * gets a statement the server answers with an error naming us. */
        bool answered = api == API_SEND_QUERY && send_signal(real, mysql, &d);
        if (e)
            set_block(&e->block, &d, api == API_SEND_QUERY && !answered);
        else
            orphan_mysql = mysql, set_block(&orphan, &d, api == API_SEND_QUERY && !answered);
        qg_guard_leave();
        return answered ? 0 : 1;
    }
    /* answers read later need what the text may change now */
    bool later = api == API_SEND_QUERY || memchr(sql, ';', len);
    if (e && later)
        qg_my_session_sending(&e->session, sql, len);
    qg_my_sending = mysql;
    int rc = send_real(real, mysql, sql, len);
    qg_my_sending = NULL;
    if (e && rc == 0 && api != API_SEND_QUERY)
        qg_my_session_answered(&e->session, &server, mysql, later ? NULL : sql, len);
    qg_guard_leave();
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
        report_missing("mysql_read_query_result");
        return 1;
    }
    if (orphan_mysql == mysql && orphan.await_read) {
        orphan.await_read = false;
        return 1; /* nothing was sent */
    }
    if (qg_conn_map_empty(&conns) || !qg_guard_enter(mysql, NULL, 0))
        return fn(mysql);
    conn_entry *e = qg_conn_map_find(&conns, mysql);
    if (e && e->block.await_read) {
        /* nothing was sent: reading would wait for an answer forever */
        e->block.await_read = false;
        qg_guard_leave();
        return 1;
    }
    my_bool rc = fn(mysql);
    if (e && rc == 0)
        qg_my_session_answered(&e->session, &server, mysql, NULL, 0);
    qg_guard_leave();
    return rc;
}

QG_EXPORT int mysql_next_result(MYSQL *mysql)
{
    mysql_next_result_fn fn = real_mysql_next_result();
    if (!fn) {
        report_missing("mysql_next_result");
        return -1;
    }
    conn_entry *e = qg_conn_map_empty(&conns) ? NULL : qg_conn_map_find(&conns, mysql);
    if (!e || !qg_guard_enter(mysql, NULL, 0))
        return fn(mysql);
    qg_my_session_result_read(&e->session, &server, mysql);
    int rc = fn(mysql);
    if (rc == 0)
        qg_my_session_answered(&e->session, &server, mysql, NULL, 0);
    qg_guard_leave();
    return rc;
}

/* ------------------------------------------------ prepared statements */

QG_EXPORT MYSQL_STMT *mysql_stmt_init(MYSQL *mysql)
{
    mysql_stmt_init_fn fn = real_mysql_stmt_init();
    if (!fn) {
        report_missing("mysql_stmt_init");
        return NULL;
    }
    MYSQL_STMT *stmt = fn(mysql);
    stmt_entry *s = stmt && tracking_enabled() ? qg_conn_map_get_or_add(&stmts, stmt) : NULL;
    if (s)
        s->mysql = mysql;
    return stmt;
}

QG_EXPORT int mysql_stmt_prepare(MYSQL_STMT *stmt, const char *sql, unsigned long len)
{
    mysql_stmt_prepare_fn fn = real_mysql_stmt_prepare();
    if (!fn) {
        report_missing("mysql_stmt_prepare");
        return 1;
    }
    stmt_entry *s = qg_conn_map_empty(&stmts) ? NULL : qg_conn_map_find(&stmts, stmt);
    if (!s || !sql || !tracking_enabled() || !qg_guard_enter(stmt, sql, len))
        return fn(stmt, sql, len);
    clear_block(&s->block);
    qg_decision d;
    conn_entry *e;
    if (!connection_query_allowed(s->mysql, "mysql_stmt_prepare", sql, len,
                                  __builtin_return_address(0), &d, &e)) {
        set_block(&s->block, &d, false);
        qg_guard_leave();
        return 1;
    }
    qg_my_sending = s->mysql;
    int rc = fn(stmt, sql, len);
    qg_my_sending = NULL;
    s->may_hide = qg_my_may_change_unreported(e ? &e->session.state : NULL, sql, len);
    qg_guard_leave();
    return rc;
}

/* What an executed statement changed is asked for before the next check. */
QG_EXPORT int mysql_stmt_execute(MYSQL_STMT *stmt)
{
    mysql_stmt_execute_fn fn = real_mysql_stmt_execute();
    if (!fn) {
        report_missing("mysql_stmt_execute");
        return 1;
    }
    stmt_entry *s = qg_conn_map_empty(&stmts) ? NULL : qg_conn_map_find(&stmts, stmt);
    MYSQL *outer = qg_my_sending;
    qg_my_sending = s ? s->mysql : outer; /* a reconnect inside is the library's */
    int rc = fn(stmt);
    qg_my_sending = outer;
    conn_entry *e = s ? qg_conn_map_find(&conns, s->mysql) : NULL;
    if (e)
        qg_my_session_executed(&e->session, &server, s->mysql, s->may_hide);
    return rc;
}

QG_EXPORT my_bool mysql_stmt_close(MYSQL_STMT *stmt)
{
    mysql_stmt_close_fn fn = real_mysql_stmt_close();
    if (stmt)
        qg_conn_map_remove(&stmts, stmt, forget_stmt);
    if (fn)
        return fn(stmt);
    report_missing("mysql_stmt_close");
    return 1;
}

/* ------------------------------------------------------------ sessions */

QG_EXPORT MYSQL *mysql_real_connect(MYSQL *mysql, const char *host, const char *user,
                                    const char *passwd, const char *db, unsigned int port,
                                    const char *unix_socket, unsigned long clientflag)
{
    mysql_real_connect_fn fn = real_mysql_real_connect();
    if (!fn) {
        report_missing("mysql_real_connect");
        return NULL;
    }
    if (!tracking_enabled() || inside_reconnect(mysql) || !qg_guard_enter(mysql, NULL, 0))
        return fn(mysql, host, user, passwd, db, port, unix_socket, clientflag);
    MYSQL *connected = fn(mysql, host, user, passwd, db, port, unix_socket, clientflag);
    if (connected)
        hand_over_from_wire(connected);
    conn_entry *e = connected ? qg_conn_map_get_or_add(&conns, connected) : NULL;
    if (e) {
        clear_block(&e->block);
        qg_my_session_renew(&e->session);
        qg_my_session_refresh(&e->session, &server, connected);
        __atomic_store_n(&last_used, e, __ATOMIC_RELAXED);
    }
    qg_guard_leave();
    return connected;
}

QG_EXPORT int mysql_set_character_set(MYSQL *mysql, const char *csname)
{
    mysql_set_character_set_fn fn = real_mysql_set_character_set();
    if (!fn) {
        report_missing("mysql_set_character_set");
        return 1;
    }
    if (!tracking_enabled() || inside_reconnect(mysql) || !qg_guard_enter(mysql, NULL, 0))
        return fn(mysql, csname);
    int rc = fn(mysql, csname);
    conn_entry *e = qg_conn_map_find(&conns, mysql);
    if (e) {
        clear_block(&e->block);
        if (rc == 0) /* the library sent SET NAMES: its OK packet reports */
            qg_my_session_answered(&e->session, &server, mysql, "", 0);
    }
    qg_guard_leave();
    return rc;
}

/* Both make the session anew: tracking is requested and the state read again. */
static void forget_session(MYSQL *mysql)
{
    conn_entry *e = qg_conn_map_empty(&conns) ? NULL : qg_conn_map_find(&conns, mysql);
    if (e) {
        clear_block(&e->block);
        qg_my_session_renew(&e->session);
    }
}

QG_EXPORT my_bool mysql_change_user(MYSQL *mysql, const char *user, const char *passwd,
                                    const char *db)
{
    mysql_change_user_fn fn = real_mysql_change_user();
    if (!fn) {
        report_missing("mysql_change_user");
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
        report_missing("mysql_reset_connection");
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
        report_missing("mysql_ping");
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
        qg_conn_map_remove(&conns, mysql, forget_conn);
    if (fn)
        fn(mysql);
    else
        report_missing("mysql_close");
}

/* ------------------------------------------------------- error readers */

/* The note of a pending block for handle in map, or NULL (fast when none). */
static const block_note *pending_note(qg_conn_map *map, const void *handle)
{
    if (orphan_mysql == handle && map == &conns)
        return &orphan;
    if (!__atomic_load_n(&pending_blocks, __ATOMIC_ACQUIRE))
        return NULL;
    const void *entry = qg_conn_map_find(map, handle);
    const block_note *b = !entry         ? NULL
                          : map == &conns ? &((const conn_entry *)entry)->block
                                          : &((const stmt_entry *)entry)->block;
    return b && b->set ? b : NULL;
}

QG_EXPORT unsigned int mysql_errno(MYSQL *mysql)
{
    if (pending_note(&conns, mysql))
        return BLOCK_ERRNO;
    mysql_errno_fn fn = real_mysql_errno();
    return fn ? fn(mysql) : BLOCK_ERRNO;
}

QG_EXPORT const char *mysql_error(MYSQL *mysql)
{
    const block_note *b = pending_note(&conns, mysql);
    if (b)
        return b->message;
    mysql_error_fn fn = real_mysql_error();
    return fn ? fn(mysql) : "quoteguard: mysql_error not found in the client library";
}

QG_EXPORT const char *mysql_sqlstate(MYSQL *mysql)
{
    const block_note *b = pending_note(&conns, mysql);
    if (b)
        return b->sqlstate;
    mysql_sqlstate_fn fn = real_mysql_sqlstate();
    return fn ? fn(mysql) : "HY000";
}

QG_EXPORT unsigned int mysql_stmt_errno(MYSQL_STMT *stmt)
{
    if (pending_note(&stmts, stmt))
        return BLOCK_ERRNO;
    mysql_stmt_errno_fn fn = real_mysql_stmt_errno();
    return fn ? fn(stmt) : BLOCK_ERRNO;
}

QG_EXPORT const char *mysql_stmt_error(MYSQL_STMT *stmt)
{
    const block_note *b = pending_note(&stmts, stmt);
    if (b)
        return b->message;
    mysql_stmt_error_fn fn = real_mysql_stmt_error();
    return fn ? fn(stmt) : "quoteguard: mysql_stmt_error not found in the client library";
}

QG_EXPORT const char *mysql_stmt_sqlstate(MYSQL_STMT *stmt)
{
    const block_note *b = pending_note(&stmts, stmt);
    if (b)
        return b->sqlstate;
    mysql_stmt_sqlstate_fn fn = real_mysql_stmt_sqlstate();
    return fn ? fn(stmt) : "HY000";
}

/* ------------------------------------------------------------ escaping */

/* mysql_real_escape_string escapes with the library's idea of the charset
 * and of NO_BACKSLASH_ESCAPES, stale after a plain SET NAMES without
 * tracking, a CALL or a reset: the shim escapes for what the server has
 * whenever the two differ. */
QG_EXPORT unsigned long mysql_real_escape_string(MYSQL *mysql, char *to, const char *from,
                                                 unsigned long length)
{
    mysql_real_escape_string_fn fn = real_mysql_real_escape_string();
    mysql_character_set_name_fn lib_charset = real_mysql_character_set_name();
    conn_entry *e = !tracking_enabled() || !to || !from || qg_conn_map_empty(&conns)
                        ? NULL
                        : qg_conn_map_find(&conns, mysql);
    if (e && e->session.stale && qg_guard_enter(mysql, NULL, 0)) {
        qg_my_session_refresh(&e->session, &server, mysql);
        qg_guard_leave();
    }
    const char *lib = lib_charset ? lib_charset(mysql) : NULL;
    bool lib_quotes_only = qg_my_lib_status(mysql) & SERVER_STATUS_NO_BACKSLASH_ESCAPES;
    bool quotes_only;
    const qg_encoding *enc =
        e && !e->session.stale
            ? qg_my_escape_for_server(&e->session.state, lib, lib_quotes_only, &quotes_only)
            : NULL;
    if (enc && !__atomic_exchange_n(&e->real_escape_upgrade_logged, true, __ATOMIC_RELAXED)) {
        char detail[160];
        snprintf(detail, sizeof detail, "escaping for charset %s%s: the client library escapes as %s%s",
                 qg_encoding_name(enc), quotes_only ? " with NO_BACKSLASH_ESCAPES" : "",
                 lib ? lib : "(unknown)", lib_quotes_only ? " with NO_BACKSLASH_ESCAPES" : "");
        qg_log_write_event(qg_settings_get(), "info", "mysql_real_escape_string_upgraded", detail);
    }
    if (enc)
        return qg_my_escape(enc, quotes_only, to, from, length);
    if (fn)
        return fn(mysql, to, from, length);
    report_missing("mysql_real_escape_string");
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
    if (tracking_enabled() && to && from) {
        /* decided under the lock: the entry may be closed by another thread */
        qg_conn_map_read_lock(&conns);
        conn_entry *e = __atomic_load_n(&last_used, __ATOMIC_RELAXED);
        if (e) {
            enc = qg_my_escape_for_legacy(&e->session.state, &quotes_only);
            if (enc)
                first_upgrade =
                    !__atomic_exchange_n(&e->escape_upgrade_logged, true, __ATOMIC_RELAXED);
        }
        qg_conn_map_unlock(&conns);
    }
    if (!enc) {
        if (fn)
            return fn(to, from, length);
        report_missing("mysql_escape_string");
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
