/* Reading the statements of a multi-statement text for their effect on the
 * session state (see mysql_statements.c).  Pure logic. */
#ifndef QG_MYSQL_STATEMENTS_H
#define QG_MYSQL_STATEMENTS_H

#include <stdbool.h>
#include <stddef.h>

#include "mysql_state.h"

typedef struct qg_my_effect {
    bool changed;  /* *st now holds what the statement sets */
    bool unknown;  /* it may change the state in a way only the server knows */
    bool nonempty; /* the statement has any code */
    bool runs_other; /* CALL or EXECUTE: it runs statements of its own */
} qg_my_effect;

/* Reads the statement at the start of sql[0, len), lexed with *st (which it
 * updates); returns the statement's length, its ';' included. */
size_t qg_my_read_statement(qg_my_state *st, const char *sql, size_t len, qg_my_effect *fx);

/* Whether the text reads alike in every client character set and quoting
 * mode the server accepts: only bytes below 0x80 and no backslash. */
bool qg_my_reads_alike(const char *sql, size_t len);

/* Whether a text, lexed from the state *st, may change the state without
 * the server reporting it: MariaDB reports no change made by SET @@name
 * without a scope (directly, through EXECUTE IMMEDIATE or in a procedure),
 * so a text that names a system variable so, or has a statement that runs
 * others (CALL, EXECUTE, after any comment), may.  st NULL: latin1
 * without quoting flags, for a text of one statement. */
bool qg_my_may_change_unreported(const qg_my_state *st, const char *sql, size_t len);

/* Whether a text names session-tracking variables: it may change what the
 * server reports, which no report tells. */
bool qg_my_names_tracking(const char *sql, size_t len);

/* For the wire front, which cannot ask the server: what a text does to the
 * charset (in place, `cap` bytes) and quoting flags once the server ran it.
 * *changed: whether it changes them.  False when the effect is for the
 * server to say (an expression, CALL, EXECUTE, a compound statement, a
 * multi-statement text that changes the state). */
bool qg_mysql_text_effect(char *charset, size_t cap, unsigned *flags, const char *sql,
                          size_t len, bool *changed);

#endif
