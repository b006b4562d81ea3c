/* The one split of a query into tokens as the server reads it, for both
 * dialects: the lexer's tokens (literals, quoted names, comments, dollar
 * quotes) and, between them, the code split into words, numbers,
 * parameters, operators and punctuation with the character classes of
 * sql_words.h.  Everything that reads SQL past the checker (the rewriter,
 * query shapes, what a statement does to the session state) reads it
 * through this; what a reader makes of the tokens (folding, keywords,
 * names of several tokens) is its own. */
#ifndef QG_CODE_TOKENS_H
#define QG_CODE_TOKENS_H

#include <stdbool.h>
#include <stddef.h>

#include "lexer_internal.h"
#include "quoteguard.h"
#include "sql_words.h"

typedef enum qg_code_kind {
    QG_CODE_END = 0,
    QG_CODE_WORD,     /* keyword or unquoted name */
    QG_CODE_NUMBER,   /* digits, 0x / 0b forms, fraction, exponent */
    QG_CODE_PARAM,    /* PostgreSQL's $n, MySQL's ? */
    QG_CODE_OPERATOR, /* PostgreSQL: an operator as scan.l ends it; MySQL: a run of
                           operator characters but '@'; both: := */
    QG_CODE_PUNCT,    /* one byte (MySQL's '@' among them), or PostgreSQL's :: */
    QG_CODE_STRING,   /* the lexer's tokens, kind for kind */
    QG_CODE_QIDENT,
    QG_CODE_DOLLAR,
    QG_CODE_COMMENT,
    QG_CODE_EXEC_OPEN,  /* MySQL: an executable comment's marker, version included */
    QG_CODE_EXEC_CLOSE, /* MySQL: the end of an executable comment's body */
} qg_code_kind;

typedef struct qg_code_token {
    qg_code_kind kind;
    bool unterminated;   /* the lexer's tokens only: ran into the end of the input */
    qg_string_form form; /* the lexer's tokens only: QG_CODE_STRING's form */
    size_t start, end;
    qg_exec_comment exec; /* QG_CODE_EXEC_OPEN */
} qg_code_token;

/* The reader's position; a plain value, so that a reader may keep a copy
 * and go on from it later. */
typedef struct qg_code_tokens {
    const unsigned char *s;
    size_t len;
    size_t pos;
    size_t gap_end;                   /* the lexer's next token's start, or len */
    const qg_encoding *word_encoding; /* NULL: every high byte alone */
    bool mysql;
    bool in_exec_comment;
    bool have_lexed;
    qg_token lexed; /* the lexer's next token, when have_lexed */
    qg_lexer lx;
} qg_code_tokens;

void qg_code_tokens_init(qg_code_tokens *ct, const qg_context *ctx, const char *sql, size_t len);

/* Where the code between the lexer's tokens that the reader is in ends:
 * the start of the lexer's next token, or the end of the query. */
static inline size_t qg_code_gap_end(const qg_code_tokens *ct)
{
    return ct->gap_end;
}

/* End of a number that starts at s[p] (a digit, or '.' before one) and
 * goes on to at most `end`. */
size_t qg_number_end(const unsigned char *s, size_t p, size_t end);

size_t qg_pg_operator_end(const unsigned char *s, size_t start, size_t limit);
size_t qg_my_operator_end(const qg_code_tokens *ct, size_t p, size_t limit);

static inline bool qg_is_digit_byte(unsigned char c)
{
    return qg_char_class[c] == QG_CC_DIGIT;
}

/* The code token at ct->pos, which is before `limit` (in line: the readers'
 * own dispatch on the kind then follows this one's directly). */
static inline __attribute__((always_inline)) void qg_code_token_at(qg_code_tokens *ct, size_t limit,
                                                                   qg_code_token *t)
{
    const unsigned char *s = ct->s;
    size_t p = ct->pos;
    unsigned char c = s[p];
    bool more = p + 1 < limit;
    t->start = p;
    switch (qg_char_class[c]) {
    case QG_CC_LETTER:
    case QG_CC_HIGH:
        t->kind = QG_CODE_WORD;
        p = qg_word_end(ct->word_encoding, s, p, limit, 0);
        break;
    case QG_CC_DIGIT:
        t->kind = QG_CODE_NUMBER;
        p = qg_number_end(s, p, limit);
        break;
    case QG_CC_DOT:
        if (more && qg_is_digit_byte(s[p + 1])) {
            t->kind = QG_CODE_NUMBER;
            p = qg_number_end(s, p, limit);
        } else {
            t->kind = QG_CODE_PUNCT;
            p++;
        }
        break;
    case QG_CC_DOLLAR:
        if (!ct->mysql && more && qg_is_digit_byte(s[p + 1])) {
            t->kind = QG_CODE_PARAM;
            for (p++; p < limit && qg_is_digit_byte(s[p]); p++)
                ;
        } else {
            t->kind = QG_CODE_PUNCT;
            p++;
        }
        break;
    case QG_CC_QUESTION:
        if (ct->mysql) {
            t->kind = QG_CODE_PARAM;
            p++;
        } else {
            t->kind = QG_CODE_OPERATOR;
            p = qg_pg_operator_end(s, p, limit);
        }
        break;
    case QG_CC_OPERATOR:
    case QG_CC_AT:
        if (!ct->mysql) {
            t->kind = QG_CODE_OPERATOR;
            p = qg_pg_operator_end(s, p, limit);
            break;
        }
        if (c == '@') { /* MySQL's lexer returns '@' alone: @name, @@scope.name, 'u'@'h' */
            t->kind = QG_CODE_PUNCT;
            p++;
            break;
        }
        if (c == '/' && more && s[p + 1] == '*') {
            size_t marker = qg_my_exec_comment(s, p, limit, &t->exec);
            if (marker) {
                t->kind = QG_CODE_EXEC_OPEN;
                ct->in_exec_comment = true;
                p += marker;
                break;
            }
        }
        if (c == '*' && more && s[p + 1] == '/' && ct->in_exec_comment) {
            t->kind = QG_CODE_EXEC_CLOSE;
            ct->in_exec_comment = false;
            p += 2;
            break;
        }
        t->kind = QG_CODE_OPERATOR;
        p = qg_my_operator_end(ct, p, limit);
        break;
    default:
        if (c == ':' && more && s[p + 1] == '=') {
            t->kind = QG_CODE_OPERATOR; /* assignment, named argument */
            p += 2;
        } else if (c == ':' && more && s[p + 1] == ':' && !ct->mysql) {
            t->kind = QG_CODE_PUNCT; /* cast */
            p += 2;
        } else {
            t->kind = QG_CODE_PUNCT;
            p++;
        }
        break;
    }
    t->end = p;
    ct->pos = p;
}

/* The next token into *t; false (and QG_CODE_END) at the end. */
static inline __attribute__((always_inline)) bool qg_code_next(qg_code_tokens *ct, qg_code_token *t)
{
    size_t limit = ct->gap_end;
    while (ct->pos < limit && qg_char_class[ct->s[ct->pos]] == QG_CC_SPACE)
        ct->pos++;
    if (ct->pos < limit) {
        qg_code_token_at(ct, limit, t);
        return true;
    }
    if (!ct->have_lexed) {
        t->kind = QG_CODE_END;
        t->start = t->end = ct->len;
        return false;
    }
    qg_token lexed = ct->lexed;
    ct->pos = lexed.end;
    ct->have_lexed = qg_lexer_next(&ct->lx, &ct->lexed);
    ct->gap_end = ct->have_lexed ? ct->lexed.start : ct->len;
    t->start = lexed.start;
    t->end = lexed.end;
    t->form = lexed.form;
    t->unterminated = lexed.unterminated;
    static const qg_code_kind kinds[] = {[QG_TOK_STRING] = QG_CODE_STRING,
                                         [QG_TOK_IDENT] = QG_CODE_QIDENT,
                                         [QG_TOK_DOLLAR] = QG_CODE_DOLLAR,
                                         [QG_TOK_COMMENT] = QG_CODE_COMMENT};
    t->kind = kinds[lexed.kind];
    return true;
}

#endif
