/* The out-of-line scalar helpers of the block skip (block_scalar.h). */
#include "block_scalar.h"

#include <string.h>

#include "skip_plain.h"
#include "sql_words.h"

/* Where the text of the comment that starts at `at` ends: after a line
 * comment (PG and MySQL "--", MySQL "#"), at its newline (PG: or carriage
 * return; the newline is code) or the text's end; after a block comment
 * (nested in PG), past its end.  0 for a NUL or high byte inside, or no
 * end. */
static size_t comment_text_end(const unsigned char *s, size_t len, size_t at, bool pg)
{
    size_t i;
    if (s[at] != '/') {
        i = qg_skip_comment_text(s, at + (s[at] == '#' ? 1 : 2), len, false, pg);
        return i < len && (s[i] == 0 || s[i] >= 0x80) ? 0 : i;
    }
    size_t depth = 1;
    for (i = at + 2; (i = qg_skip_comment_text(s, i, len, true, pg)) < len; i++) {
        if (s[i] == 0 || s[i] >= 0x80)
            return 0;
        if (s[i] == '*' && i + 1 < len && s[i + 1] == '/') {
            i++;
            if (!pg || --depth == 0)
                return i + 1;
        } else if (pg && s[i] == '/' && i + 1 < len && s[i + 1] == '*') {
            i++;
            depth++;
        }
    }
    return 0;
}

/* The end of a comment that starts at `at` in code, when the lexer would
 * find nothing in it; 0 for anything else (no comment starts there). */
size_t qg_comment_end(const unsigned char *s, size_t len, size_t at, size_t start, bool pg)
{
    bool opens = at + 1 < len && ((s[at] == '-' && s[at + 1] == '-') ||
                                  (s[at] == '/' && s[at + 1] == '*'));
    if (!opens && !(s[at] == '#' && !pg))
        return 0;
    size_t end = comment_text_end(s, len, at, pg);
    return end && comment_is_quiet(s, len, at, start, end, pg) ? end : 0;
}

/* MySQL: quotes after an introducer (_latin1'...', _utf8 '...'): the
 * lexer checks such a string in the character set it names.  Any word
 * that starts with an underscore counts here, and so does a quote after a
 * quote: the string goes on after a doubled quote, and began before it,
 * maybe blocks before. */
uint64_t qg_introduced_quotes(const unsigned char *s, size_t pos, uint64_t quotes)
{
    uint64_t found = 0;
    for (; quotes; quotes &= quotes - 1) {
        size_t at = pos + (size_t)__builtin_ctzll(quotes);
        if (at > 0 && s[at - 1] == '\'') {
            found |= quotes & -quotes;
            continue;
        }
        while (at > 0 && qg_is_space(s[at - 1]))
            at--;
        size_t word = at;
        while (word > 0 && at - word < 64 && qg_ascii_word_byte(s[word - 1], 0))
            word--;
        if (word < at && s[word] == '_')
            found |= quotes & -quotes;
    }
    return found;
}

bool qg_introduced_string_in(const unsigned char *s, size_t len)
{
    const unsigned char *end = s + len;
    for (const unsigned char *u = memchr(s, '_', len); u;
         u = memchr(u + 1, '_', (size_t)(end - u - 1))) {
        if (u > s && qg_ascii_word_byte(u[-1], 0))
            continue; /* inside a word */
        const unsigned char *p = u + 1;
        while (p < end && qg_ascii_word_byte(*p, 0))
            p++;
        while (p < end && qg_is_space(*p))
            p++;
        if (p < end && *p == '\'')
            return true;
    }
    return false;
}

size_t qg_skip_comment_text(const unsigned char *s, size_t pos, size_t len, bool block, bool pg)
{
#ifdef __SSE2__
    if (block)
        return skip_plain_sse2(s, pos, len, STOP_BLOCK, true);
    return pg ? skip_plain_sse2(s, pos, len, STOP_LINE, true)
              : skip_plain_sse2(s, pos, len, STOP_MY_LINE, true);
#else
    return skip_plain_scalar(s, pos, len, block ? STOP_BLOCK : pg ? STOP_LINE : STOP_MY_LINE, true);
#endif
}

size_t qg_pg_continuation(const unsigned char *s, size_t len, size_t p)
{
    bool newline = false;
    while (p < len) {
        unsigned char c = s[p];
        if (c == '\n' || c == '\r') {
            newline = true;
            p++;
        } else if (c == ' ' || c == '\t' || c == '\f' || c == '\v') {
            p++;
        } else if (c == '-' && p + 1 < len && s[p + 1] == '-') {
            while (p < len && s[p] != '\n' && s[p] != '\r')
                p++;
        } else {
            return (c == '\'' && newline) ? p : 0;
        }
    }
    return 0;
}
