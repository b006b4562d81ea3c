/* Reading the statements of a multi-statement text for their effect on the
 * session state (see mysql_statements.c).  Pure logic. */
#ifndef QG_MYSQL_STATEMENTS_H
#define QG_MYSQL_STATEMENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mysql_state.h"
#include "sql_words.h"

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

/* Besides a word's bytes, a dotted name's (the reader's words). */
#define QG_MY_NAME_BYTES QG_CC(QG_CC_DOT)

/* Every byte of eight with 0x20 set: a byte so folded equals a lower-case
 * letter only where it is that letter in either case (ASCII only, never
 * the locale's), and none is zero. */
#define QG_MY_FOLD8 UINT64_C(0x2020202020202020)
#define QG_MY_HIGH8 UINT64_C(0x8080808080808080)

/* The bytes of eight folded ones that are ASCII letters: each one's high
 * bit (a byte plus 0x1f reaches 0x80 from 'a' on, plus 0x05 from past 'z';
 * no sum carries into the next byte). */
static inline uint64_t qg_my_letter_bytes(uint64_t folded)
{
    uint64_t low = folded & UINT64_C(0x7f7f7f7f7f7f7f7f);
    return (low + UINT64_C(0x1f1f1f1f1f1f1f1f)) & ~(low + UINT64_C(0x0505050505050505)) &
           ~folded & QG_MY_HIGH8;
}

/* The first words of two to eight letters whose kind is known, each in its
 * own place of a table of 64 (mysql_statements.c): the place is the top
 * six bits of the word's bytes, folded, little-endian, zero past its end,
 * times QG_MY_KEYWORD_HASH, a constant under which no two of them share
 * one.  A place holds its word's folded bytes, so that any other word
 * found there is no keyword. */
#define QG_MY_KEYWORDS 64
#define QG_MY_KEYWORD_HASH UINT64_C(0xb32996b903695803)
#define QG_MY_KEYWORD_PLACE(folded) ((unsigned)(((folded) * QG_MY_KEYWORD_HASH) >> 58))

typedef struct qg_my_keyword {
    uint64_t folded; /* zero: an empty place (a folded word has no zero byte) */
    qg_my_word_kind kind;
} qg_my_keyword;

extern const qg_my_keyword qg_my_keywords[QG_MY_KEYWORDS];

/* The kind of a word of two to eight bytes, folded so. */
static inline qg_my_word_kind qg_my_keyword_kind(uint64_t folded)
{
    const qg_my_keyword *k = &qg_my_keywords[QG_MY_KEYWORD_PLACE(folded)];
    return k->folded == folded ? k->kind : QG_MY_WORD_OTHER;
}

/* A word of one to seven ASCII letters at w, with more than eight bytes
 * readable from it, that a byte no word holds ends within its first
 * eight: read from those eight bytes in one step, as qg_my_first_word
 * reads it.  False where w starts otherwise or the word goes on: a reading
 * byte by byte tells. */
static inline bool qg_my_short_word(const char *w, size_t avail, size_t *word_len,
                                    qg_my_word_kind *kind)
{
    if (avail <= 8)
        return false;
    uint64_t v;
    memcpy(&v, w, 8);
    v |= QG_MY_FOLD8;
    uint64_t others = ~qg_my_letter_bytes(v) & QG_MY_HIGH8;
    size_t n = others ? (size_t)__builtin_ctzll(others) / 8 : 8;
    if (n == 0 || n == 8)
        return false;
    unsigned char after = (unsigned char)w[n];
    if (after >= 0x80 || qg_ascii_word_byte(after, QG_MY_NAME_BYTES))
        return false;
    *word_len = n;
    *kind = n < 2 ? QG_MY_WORD_OTHER : qg_my_keyword_kind(v & ((UINT64_C(1) << (8 * n)) - 1));
    return true;
}

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
