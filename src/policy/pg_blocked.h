/* What a blocked PostgreSQL statement leaves behind in the libpq front: its
 * message, kept for a result or a connection until libpq would drop that
 * (the error readers answer from it), and the statements the server is
 * told to run in its place.  Pure logic: no client library. */
#ifndef QG_PG_BLOCKED_H
#define QG_PG_BLOCKED_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "conn_map.h"
#include "guard.h"
#include "replacement.h"

#define QG_PG_MESSAGE_MAX sizeof(((qg_decision *)0)->message)

/* The message of one blocked query, kept for a result or a connection. */
typedef struct qg_pg_blocked {
    qg_conn_head head; /* key: the PGresult or PGconn */
    char sqlstate[6];
    char primary[QG_PG_MESSAGE_MAX]; /* "quoteguard: …" */
    /* "ERROR:  " + primary + "\n", as libpq words a server's error: drivers
     * cut the severity off at the first colon (psycopg 3) or by its words
     * (psycopg2), and what is left names quoteguard */
    char text[QG_PG_MESSAGE_MAX + 16];
    /* the same with the SQLSTATE after the severity, for the verbose form */
    char verbose[QG_PG_MESSAGE_MAX + 24];
} qg_pg_blocked;

/* A registry: a map from the key to its message (conn_map.h), whose
 * entries come from a reserve all registries share when malloc fails. */
typedef qg_conn_map qg_pg_registry;

#define QG_PG_RESERVED_MESSAGES 16
extern qg_pg_blocked qg_pg_reserved_messages[QG_PG_RESERVED_MESSAGES];
extern bool qg_pg_reserved_used[QG_PG_RESERVED_MESSAGES];
#define QG_PG_REGISTRY_INIT                                                                     \
    QG_CONN_MAP_INIT_RESERVE(qg_pg_blocked, qg_pg_reserved_messages, qg_pg_reserved_used)

/* Records the decision's message for key, replacing an older one.  Without
 * any memory (the reserve used up and the map's first slots full) only the
 * text is lost. */
void qg_pg_registry_put(qg_pg_registry *r, const void *key, const qg_decision *d);
/* Forgets key's entry, if any: on every query and PQclear, so the empty
 * registry is told in line, without a call or a lock. */
static inline void qg_pg_registry_drop(qg_pg_registry *r, const void *key)
{
    if (!qg_conn_map_empty(r))
        qg_conn_map_remove(r, key, NULL);
}
/* The entry for key, or NULL.  It stays valid after the lock is released
 * because only an operation on the same result (PQclear) or connection (its
 * next query) removes or rewrites it, and libpq forbids those concurrently
 * with a read. */
static inline const qg_pg_blocked *qg_pg_registry_find(qg_pg_registry *r, const void *key)
{
    return qg_conn_map_empty(r) ? NULL : qg_conn_map_find(r, key);
}

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
