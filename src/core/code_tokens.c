/* The one split of a query into tokens (see code_tokens.h). */
#include "code_tokens.h"

#include <string.h>

#include "encoding_tables.h"

size_t qg_number_end(const unsigned char *s, size_t p, size_t end)
{
    bool hex = p + 1 < end && s[p] == '0' && (s[p + 1] | 0x20) == 'x';
    while (p < end) {
        unsigned char c = s[p];
        bool more = qg_char_in(c, QG_CC(QG_CC_DIGIT) | QG_CC(QG_CC_LETTER)) || c == '.' ||
                    ((c == '+' || c == '-') && !hex && (s[p - 1] | 0x20) == 'e');
        if (!more)
            break;
        p++;
    }
    return p;
}

/* scan.l: a multi-character operator cannot end in + or - unless it holds
 * one of ~ ! @ # % ^ & | ` ?. */
size_t qg_pg_operator_end(const unsigned char *s, size_t start, size_t limit)
{
    size_t end = start;
    bool keeps_sign = false;
    while (end < limit && qg_char_in(s[end], QG_PG_OPERATOR)) {
        keeps_sign |= strchr("~!@#%^&|`?", s[end]) != NULL; /* s[end] is no NUL */
        end++;
    }
    if (!keeps_sign)
        while (end - start > 1 && (s[end - 1] == '+' || s[end - 1] == '-'))
            end--;
    return end;
}

/* MySQL: a run of operator characters, up to an executable comment's
 * marker or, inside one, its end; '@' is a token of its own. */
size_t qg_my_operator_end(const qg_code_tokens *ct, size_t p, size_t limit)
{
    const unsigned char *s = ct->s;
    for (p++; p < limit && qg_char_class[s[p]] == QG_CC_OPERATOR; p++) {
        bool pair = p + 1 < limit;
        if (pair && s[p] == '/' && s[p + 1] == '*')
            break;
        if (pair && ct->in_exec_comment && s[p] == '*' && s[p + 1] == '/')
            break;
    }
    return p;
}

void qg_code_tokens_init(qg_code_tokens *ct, const qg_context *ctx, const char *sql, size_t len)
{
    ct->s = (const unsigned char *)sql;
    ct->len = len;
    ct->pos = 0;
    ct->word_encoding = qg_encoding_is_single_byte(ctx->encoding) ? NULL : ctx->encoding;
    ct->mysql = ctx->dialect == QG_DIALECT_MYSQL;
    ct->in_exec_comment = false;
    qg_lexer_init(&ct->lx, ctx, sql, len, QG_READ_SERVER, NULL);
    ct->have_lexed = qg_lexer_next(&ct->lx, &ct->lexed);
    ct->gap_end = ct->have_lexed ? ct->lexed.start : len;
}
