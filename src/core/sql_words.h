/* The one reading of the SQL code between literals, quoted names and
 * comments, for both dialects: which class each byte is in (one table),
 * where a word ends, and MySQL's executable-comment markers.  The lexer
 * finds the structural tokens and uses the word classes to tell where a
 * token may start; code_tokens.h splits the code between those tokens
 * with these. */
#ifndef QG_SQL_WORDS_H
#define QG_SQL_WORDS_H

#include <stdbool.h>
#include <stddef.h>

#include "encoding_tables.h"

/* The class of each byte in code; each byte is in exactly one.  The
 * classes of a word's bytes come last, so that one compare tells them. */
enum qg_char_class {
    QG_CC_OTHER = 0, /* punctuation, control bytes, quotes: one byte each */
    QG_CC_SPACE,     /* ' ', \t, \n, \v, \f, \r: white space to both servers */
    QG_CC_OPERATOR,  /* + - * / < > = ~ ! # % ^ & | ` */
    QG_CC_AT,        /* '@': an operator; MySQL's variables start with it */
    QG_CC_QUESTION,  /* '?': a placeholder in MySQL, an operator in PG */
    QG_CC_DOT,
    QG_CC_HIGH,      /* 0x80-0xff: part of a character, a letter of a word */
    QG_CC_DOLLAR,
    QG_CC_DIGIT,
    QG_CC_LETTER     /* A-Z, a-z, '_' */
};

/* A set of classes, for qg_char_in. */
#define QG_CC(cls) (1u << (cls))
enum {
    QG_WORD_START = QG_CC(QG_CC_LETTER) | QG_CC(QG_CC_HIGH),
    QG_WORD_CONT = QG_WORD_START | QG_CC(QG_CC_DIGIT) | QG_CC(QG_CC_DOLLAR),
    /* PostgreSQL's operator characters (scan.l's op_chars) */
    QG_PG_OPERATOR = QG_CC(QG_CC_OPERATOR) | QG_CC(QG_CC_AT) | QG_CC(QG_CC_QUESTION)
};

extern const unsigned char qg_char_class[256];

static inline bool qg_char_in(unsigned char c, unsigned classes)
{
    return (classes >> qg_char_class[c]) & 1u;
}

/* An ASCII byte of a word (letter, digit, '$'), or one of `also`'s (ASCII) classes. */
static inline bool qg_ascii_word_byte(unsigned char c, unsigned also)
{
    return qg_char_class[c] >= QG_CC_DOLLAR || qg_char_in(c, also);
}

/* End of the word (keyword or unquoted name) at s[p], whose first byte
 * the caller checked: letters, digits, '$' and the bytes of `also`'s
 * classes; a character of a multibyte encoding `enc` whole, whatever its
 * trail bytes (NULL: every high byte alone).  A byte that starts no valid
 * character is one letter, as the servers take it. */
static inline size_t qg_word_end(const qg_encoding *enc, const unsigned char *s, size_t p,
                                 size_t end, unsigned also)
{
    for (;;) {
        while (p < end && qg_ascii_word_byte(s[p], also))
            p++;
        if (p >= end || s[p] < 0x80)
            return p;
        size_t n = enc ? encoding_char_len(enc, s + p, end - p) : 1;
        p += n ? n : 1;
    }
}

/* MySQL executable comments: slash-star-bang, and MariaDB's
 * slash-star-M-bang, optionally followed by a version of 5 or 6 digits
 * (50114 is 5.1.14, 100000 10.0.0).  Both servers read the body as SQL
 * when the version is at most theirs; MariaDB, from 50700 to 99999, only
 * in the M form (MySQL 5.7's syntax); MySQL reads the M form as an
 * ordinary comment.  A later version makes the whole an ordinary comment. */
typedef struct qg_exec_comment {
    unsigned long version; /* 0: none */
    bool mariadb;          /* the M form */
} qg_exec_comment;

/* At s[at], a slash and a star: the length of the executable-comment
 * marker there (its version included), filling *ec; 0 for an ordinary
 * comment. */
size_t qg_my_exec_comment(const unsigned char *s, size_t at, size_t len, qg_exec_comment *ec);

/* Whether every server runs the body: MariaDB 10 and MySQL 5.7 on. */
bool qg_my_exec_comment_always_runs(const qg_exec_comment *ec);

#endif
