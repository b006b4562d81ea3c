/* What the fronts share: check one query of one connection, log, decide. */
#ifndef QG_GUARD_H
#define QG_GUARD_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "quoteguard.h"

typedef struct qg_query {
    qg_dialect dialect;
    const char *encoding_name; /* as the server names the client encoding */
    unsigned flags;            /* QG_STD_STRINGS … */
    const void *conn;
    const char *api;           /* name of the intercepted function */
    const char *sql;
    size_t len;
    const void *caller;        /* return address of the intercepted call */
} qg_query;

typedef struct qg_decision {
    bool block;                 /* the query must not be sent */
    const char *sqlstate;       /* for the synthetic error */
    char message[512];          /* "quoteguard: …", when block */
} qg_decision;

/* Runs the checker and applies mode, allow-list and logging.
 * Returns true when the query may be sent. */
bool qg_guard_query(const qg_query *q, qg_decision *out);

/* Per-thread re-entrancy guard: libpq calls its own exported entries. */
bool qg_guard_enter(void);
void qg_guard_leave(void);

/* 64-bit FNV-1a fingerprint of a finding (reason, encoding, query bytes). */
unsigned long long qg_guard_fingerprint(qg_reason reason, const char *encoding,
                                        const char *sql, size_t len);

#endif
