/* The MySQL front's records of the client library's handles: per
 * connection (MYSQL) its session and the error of a blocked call, per
 * prepared statement (MYSQL_STMT) its connection and blocked error; and
 * the connection last used, for the escaper without a connection.  Pure
 * logic: no client library. */
#ifndef QG_MYSQL_CONNS_H
#define QG_MYSQL_CONNS_H

#include <stdbool.h>

#include "conn_map.h"
#include "guard.h"
#include "mysql_session.h"

/* ER_UNKNOWN_ERROR: a generic server error number, so that no program takes
 * a blocked query for a lost connection (2006) or a deadlock (1213) and
 * retries it. */
#define QG_MY_BLOCK_ERRNO 1105u
#define QG_MY_BLOCK_SQLSTATE "42000"

/* A blocked call's error, answered by the error readers until the next call. */
typedef struct qg_my_block {
    bool set;
    bool await_read; /* mysql_send_query was blocked: mysql_read_query_result fails */
    char sqlstate[6];
    char message[sizeof(((qg_decision *)0)->message)];
} qg_my_block;

typedef struct qg_my_conn {
    qg_conn_head head; /* the MYSQL handle */
    qg_my_session session;
    bool escape_upgrade_logged;
    bool real_escape_upgrade_logged;
    qg_my_block block;
} qg_my_conn;

typedef struct qg_my_stmt {
    qg_conn_head head; /* the MYSQL_STMT handle */
    void *mysql;
    bool may_hide; /* the prepared text may change the state unreported */
    qg_my_block block;
} qg_my_stmt;

/* The connections' map (its lock guards the sessions' published state). */
extern qg_conn_map qg_my_conns;

/* Records a block (a pending error) in b; an unowned b (a thread's
 * fallback) is counted too. */
void qg_my_block_set(qg_my_block *b, const qg_decision *d, bool await_read);
void qg_my_block_forget(qg_my_block *b);
/* In line: a call meets no block set. */
static inline void qg_my_block_clear(qg_my_block *b)
{
    if (b->set)
        qg_my_block_forget(b);
}

/* The entry of a handle, or NULL (no lock taken while none exists). */
qg_my_conn *qg_my_conn_find(const void *mysql);
qg_my_stmt *qg_my_stmt_find(const void *stmt);
/* The entry, added when missing; NULL without memory.  A connection's is
 * marked the last used. */
qg_my_conn *qg_my_conn_use(const void *mysql);
qg_my_stmt *qg_my_stmt_add(const void *stmt, void *mysql);
/* The handle is closed: its entry and pending error go. */
void qg_my_conn_close(const void *mysql);
void qg_my_stmt_close(const void *stmt);

/* The pending block of a handle, or NULL (no lookup while none is set). */
const qg_my_block *qg_my_conn_block(const void *mysql);
const qg_my_block *qg_my_stmt_block(const void *stmt);

/* The encoding mysql_escape_string must escape for on the connection last
 * used (while open), with *quotes_only (qg_my_escape_for_legacy); NULL when
 * latin1 rules are right there or none is open.  *first is true the first
 * time that connection needs it (to log the upgrade once). */
const qg_encoding *qg_my_last_used_escape(bool *quotes_only, bool *first);

#endif
