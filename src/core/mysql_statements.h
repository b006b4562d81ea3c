/* Reading the statements of a multi-statement text for their effect on the
 * session state (see mysql_statements.c).  Pure logic. */
#ifndef QG_MYSQL_STATEMENTS_H
#define QG_MYSQL_STATEMENTS_H

#include <stdbool.h>
#include <stddef.h>

#include "mysql_state.h"

/* What one statement does to the state once the server ran it: the parts
 * it sets to a value read from its text, and the parts it may set to a
 * value only the server knows. */
typedef struct qg_my_change {
    bool charset_set, flags_set;         /* charset / flags hold the new value */
    bool charset_unknown, flags_unknown; /* only the server knows the new value */
    /* flags_unknown because a SET gives the session's sql_mode the value of
     * an expression: the server's status bits right after it tell them */
    bool flags_in_status;
    char charset[QG_MY_CHARSET_MAX];
    unsigned flags;
} qg_my_change;

/* The server a text is sent to, where known: whether an executable comment
 * runs depends on it. */
typedef struct qg_my_server_kind {
    bool mariadb;
    unsigned long version; /* 100311 for 10.3.11; 0: not known */
} qg_my_server_kind;

typedef struct qg_my_effect {
    bool changed;  /* *st now holds what the statement sets */
    bool unknown;  /* it may change the state in a way only the server knows */
    bool nonempty; /* the statement has any code */
    /* CALL or EXECUTE: it runs statements of its own (a procedure's own
     * SETs of character_set_client and sql_mode end with it: the server
     * gives the caller's back when it returns) */
    bool runs_other;
    /* it holds an executable comment that some servers do not run: read
     * for another server, it may do otherwise */
    bool server_decides;
    qg_my_change change; /* what it sets, part by part */
    /* PREPARE name FROM …, EXECUTE name, DEALLOCATE / DROP PREPARE name:
     * the name (in the text), and what the prepared text sets when run */
    bool prepares, executes, deallocates;
    const char *stmt_name;
    size_t stmt_name_len;
    qg_my_change prepared;
} qg_my_effect;

/* Reads the statement at the start of sql[0, len), lexed with *st (which it
 * updates); returns the statement's length, its ';' included.  `server`
 * may be NULL (an executable comment that not every server runs is then for
 * the server to say). */
size_t qg_my_read_statement_on(qg_my_state *st, const qg_my_server_kind *server, const char *sql,
                               size_t len, qg_my_effect *fx);
/* The same for a server not known. */
size_t qg_my_read_statement(qg_my_state *st, const char *sql, size_t len, qg_my_effect *fx);

/* Whether two statement names (as read in a text: bare or back-quoted) are
 * the same prepared statement's (names compare case-insensitively). */
bool qg_my_stmt_name_is(const char *a, size_t a_len, const char *b, size_t b_len);

/* Whether a statement that starts with word[0, len) leaves the charset and
 * sql_mode as they were (a stored function it calls may still change
 * them: the server's report after the text tells) and names no prepared
 * statement (PREPARE, DEALLOCATE and DROP PREPARE do), as the reader reads
 * it. */
bool qg_my_inert_first_word(const char *word, size_t len);

/* What a statement's first word says of it, from the word alone. */
typedef enum qg_my_word_kind {
    QG_MY_WORD_OTHER, /* the statement must be read to know */
    QG_MY_WORD_INERT, /* qg_my_inert_first_word */
    QG_MY_WORD_RUNS,  /* CALL or EXECUTE: it runs other statements */
} qg_my_word_kind;

qg_my_word_kind qg_my_first_word_kind(const char *word, size_t len);

/* The word a text starts with, after white space, as the reader reads it
 * (its bytes up to the first high byte are ASCII in every character set,
 * and a keyword holds none), and its kind: false when the text starts
 * otherwise (a comment, a quote, punctuation). */
bool qg_my_first_word(const char *sql, size_t len, size_t *start, size_t *word_len,
                      qg_my_word_kind *kind);

/* Whether the text reads alike in every client character set and quoting
 * mode the server accepts: only bytes below 0x80 and no backslash. */
bool qg_my_reads_alike(const char *sql, size_t len);
/* How many bytes at the text's start read so. */
size_t qg_my_alike_prefix(const char *sql, size_t len);

/* Whether a text, lexed from the state *st, may change the state without
 * the server reporting it: MariaDB reports no change made by SET @@name
 * without a scope (directly, through EXECUTE IMMEDIATE or in a procedure),
 * so a text that names a system variable so, or has a statement that runs
 * others (CALL, EXECUTE, after any comment), may; one statement whose
 * first word changes nothing (SELECT, UPDATE, ...) only reads what it
 * names.  st NULL: latin1 without quoting flags, for a text of one
 * statement. */
bool qg_my_may_change_unreported(const qg_my_state *st, const char *sql, size_t len);

/* Whether a text names a system variable so (@@name), anywhere: it may
 * change the state unreported. */
bool qg_my_names_system_variable(const char *sql, size_t len);

/* Whether a text names session-tracking variables: it may change what the
 * server reports, which no report tells. */
bool qg_my_names_tracking(const char *sql, size_t len);

#endif
