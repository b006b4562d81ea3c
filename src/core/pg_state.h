/* PostgreSQL session state a statement is read under: the client encoding
 * and standard_conforming_strings, and what a statement does to them.  Pure
 * functions (no client library), for every front that sees PostgreSQL
 * statements queued before their results are read (libpq's pipeline mode,
 * the wire protocol). */
#ifndef QG_PG_STATE_H
#define QG_PG_STATE_H

#include <stdbool.h>
#include <stddef.h>

#include "quoteguard.h"

/* The checker reads standard_conforming_strings at a backslash only: a
 * text without the byte 0x5c, checked as it is (not converted), gets the
 * same verdict and findings under either value.  A front that has not
 * looked the value up for such a text checks it with these flags. */
#define QG_PG_BACKSLASH_FREE_FLAGS QG_STD_STRINGS

/* What a statement does to one setting. */
typedef enum qg_pg_change {
    QG_PG_KEEPS = 0, /* nothing */
    QG_PG_SETS,      /* sets it to the value given */
    QG_PG_UNKNOWN    /* may set it to a value not known before it runs */
} qg_pg_change;

typedef struct qg_pg_effect {
    qg_pg_change encoding, scs;
    char encoding_name[32]; /* QG_PG_SETS: as written (the server's aliases apply) */
    bool scs_on;            /* QG_PG_SETS */
} qg_pg_effect;

/* What the statement text sql[0, len) does to the client encoding and
 * standard_conforming_strings when it runs: SET [SESSION | LOCAL] name
 * {TO | =} value, SET NAMES, RESET name | ALL, DISCARD ALL, and
 * set_config('name', 'value', …) with literal arguments are read exactly;
 * any other mention of either setting's name (set_config with other
 * arguments, a DO block or function body that sets it), and a text that
 * may set one with a name or string in Unicode escapes (U&"..." or
 * U&'...', where PostgreSQL reads \0063 as 'c'), is QG_PG_UNKNOWN. */
qg_pg_effect qg_pg_statement_effect(const char *sql, size_t len);

/* Whether a statement text sql[0, len) may hold a word that
 * qg_pg_statement_effect reads for a setting: one without keeps both the
 * client encoding and standard_conforming_strings, and is not read for
 * them (qg_pg_statement_effect asks first).  A letter pair each such word
 * holds, looked for sixteen pairs a step, 32 with AVX2. */
bool qg_pg_may_set(const char *sql, size_t len);

/* The states statements queued in a pipeline may meet: every client
 * encoding and standard_conforming_strings value the connection reported
 * while the pipeline was open and every one a statement queued in it sets.
 * Later statements are checked under each. */
#define QG_PG_MAX_ENCODINGS 8
typedef struct qg_pg_pending {
    char encodings[QG_PG_MAX_ENCODINGS][32];
    unsigned encoding_count;
    bool encoding_unknown; /* a queued statement sets one not known in advance */
    bool scs_off, scs_on;
} qg_pg_pending;

/* Adds the state the connection reports now. */
void qg_pg_pending_add_reported(qg_pg_pending *p, const char *encoding, bool scs_on);
/* Adds what a queued statement may set. */
void qg_pg_pending_add_effect(qg_pg_pending *p, const qg_pg_effect *e);

#endif
