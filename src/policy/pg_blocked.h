/* What a blocked PostgreSQL statement leaves behind in the libpq front: its
 * message, kept for a result or a connection until libpq would drop that
 * (the error readers answer from it), and the statements the server is
 * told to run in its place.  Pure logic: no client library. */
#ifndef QG_PG_BLOCKED_H
#define QG_PG_BLOCKED_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "guard.h"
#include "replacement.h"

#define QG_PG_MESSAGE_MAX sizeof(((qg_decision *)0)->message)

/* The message of one blocked query, kept for a result or a connection. */
typedef struct qg_pg_blocked {
    const void *key; /* the PGresult or PGconn */
    struct qg_pg_blocked *next;
    char sqlstate[6];
    char primary[QG_PG_MESSAGE_MAX]; /* "quoteguard: …" */
    /* "ERROR:  " + primary + "\n", as libpq words a server's error: drivers
     * cut the severity off at the first colon (psycopg 3) or by its words
     * (psycopg2), and what is left names quoteguard */
    char text[QG_PG_MESSAGE_MAX + 16];
    /* the same with the SQLSTATE after the severity, for the verbose form */
    char verbose[QG_PG_MESSAGE_MAX + 24];
} qg_pg_blocked;

typedef struct qg_pg_registry {
    pthread_mutex_t lock;
    qg_pg_blocked *head;
    unsigned live; /* entries; read without the lock so that empty means no locking */
} qg_pg_registry;

#define QG_PG_REGISTRY_INIT {PTHREAD_MUTEX_INITIALIZER, NULL, 0}

/* Records the decision's message for key, replacing an older one.  Without
 * any memory (a few entries are kept in reserve) only the text is lost. */
void qg_pg_registry_put(qg_pg_registry *r, const void *key, const qg_decision *d);
/* Forgets key's entry, if any: on every query and PQclear, so the empty
 * registry is told in line, without a call or a lock. */
void qg_pg_registry_unlink_key(qg_pg_registry *r, const void *key);
static inline void qg_pg_registry_drop(qg_pg_registry *r, const void *key)
{
    if (__atomic_load_n(&r->live, __ATOMIC_ACQUIRE) != 0)
        qg_pg_registry_unlink_key(r, key);
}
/* The entry for key, or NULL.  It stays valid after the lock is released
 * because only an operation on the same result (PQclear) or connection (its
 * next query) removes it, and libpq forbids those concurrently with a read. */
const qg_pg_blocked *qg_pg_registry_find(qg_pg_registry *r, const void *key);
/* For fork: a registry's lock held by another thread must not stay held
 * in the child. */
void qg_pg_registry_lock(qg_pg_registry *r);
void qg_pg_registry_unlock(qg_pg_registry *r);

/* What the server runs in place of a statement blocked inside a
 * transaction block: it fails, so that the transaction aborts as for any
 * failed statement, with a message that names quoteguard in its log. */
extern const char qg_pg_abort_transaction[];

/* Writes to out (cap bytes) the statement that fails on the server with
 * d's message and sqlstate (42000 when it has none), sent in a pipeline in
 * place of the blocked one: src/core/replacement.h's, as the wire front
 * sends.  It holds none of the query.  Returns out. */
const char *qg_pg_failing_statement(char *out, size_t cap, const qg_decision *d);
/* Room for any qg_pg_failing_statement. */
#define QG_PG_FAILING_STATEMENT_MAX QG_REPLACEMENT_PG_RAISE_MAX

#endif
