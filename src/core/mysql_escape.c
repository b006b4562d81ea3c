/* The escaper (mysql_escape.h). */
#include "mysql_escape.h"

#include <string.h>

size_t qg_my_escape(const qg_encoding *enc, bool quotes_only, char *to, const char *from_bytes,
                    size_t len)
{
    const unsigned char *from = (const unsigned char *)from_bytes;
    char *o = to;
    size_t i = 0;
    while (i < len) {
        unsigned char b = from[i];
        if (b >= 0x80) {
            size_t n = qg_encoding_char_len(enc, from + i, len - i);
            if (n >= 1) {
                memcpy(o, from + i, n);
                o += n;
                i += n;
                continue;
            }
            if (!quotes_only)
                *o++ = '\\';
            *o++ = (char)b;
            i++;
            continue;
        }
        i++;
        if (quotes_only) {
            if (b == '\'')
                *o++ = '\'';
            *o++ = (char)b;
            continue;
        }
        char esc = 0;
        switch (b) {
        case 0: esc = '0'; break;
        case '\n': esc = 'n'; break;
        case '\r': esc = 'r'; break;
        case 0x1a: esc = 'Z'; break;
        case '\\': case '\'': case '"': esc = (char)b; break;
        default: break;
        }
        if (esc) {
            *o++ = '\\';
            *o++ = esc;
        } else {
            *o++ = (char)b;
        }
    }
    *o = '\0';
    return (size_t)(o - to);
}

const qg_encoding *qg_my_escape_for_server(const qg_my_state *st, const char *lib_charset,
                                           bool lib_quotes_only, bool *quotes_only)
{
    *quotes_only = st->flags & QG_NO_BACKSLASH_ESCAPES;
    bool same_quoting = *quotes_only == lib_quotes_only;
    /* Equal names give one encoding, or none (unknown): NULL either way,
     * without the two look-ups by name. */
    if (lib_charset && same_quoting && strcmp(st->charset, lib_charset) == 0)
        return NULL;
    const qg_encoding *enc = qg_encoding_find(QG_DIALECT_MYSQL, st->charset);
    if (enc && lib_charset && same_quoting && qg_encoding_find(QG_DIALECT_MYSQL, lib_charset) == enc)
        return NULL;
    return enc;
}

const qg_encoding *qg_my_escape_for_legacy(const qg_my_state *st, bool *quotes_only)
{
    const qg_encoding *enc = qg_encoding_find(QG_DIALECT_MYSQL, st->charset);
    *quotes_only = st->flags & QG_NO_BACKSLASH_ESCAPES;
    return enc && (*quotes_only || qg_encoding_has_ascii_trail(enc)) ? enc : NULL;
}
