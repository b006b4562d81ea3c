/* The vector scans' scalar helpers (src/core/block_skip.c, quick_scan.c): the same in every
 * vector build, so written once here; the out-of-line ones are compiled once
 * (block_scalar.c), the small ones inline where the scans call them. */
#ifndef QG_BLOCK_SCALAR_H
#define QG_BLOCK_SCALAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lexer_internal.h"
#include "sql_words.h"

/* Whether a quote after c may open a string that reads backslashes
 * otherwise than a plain one, where they escape: X'', B'', PG U&''. */
static inline bool is_prefix(unsigned char c)
{
    static const bool prefix_byte[256] = {['x'] = 1, ['X'] = 1, ['b'] = 1, ['B'] = 1, ['&'] = 1};
    return prefix_byte[c];
}

/* PG: whether the code byte at `at` may lie between two parts of one
 * string (only whitespace back to a quote); then the lexer goes on from
 * `start`, where the skip began. */
static inline bool in_continuation_gap(const unsigned char *s, size_t start, size_t at)
{
    while (at > start && qg_is_space(s[at]))
        at--;
    return s[at] == '\'' && at > start;
}

/* Whether the lexer would find nothing in the comment from `at` to `end`
 * (where its text ends): not so for a MySQL executable comment, for "--" not
 * followed by a space in MySQL, for a PG line comment between two parts of
 * one string (from `start`, where the skip began). */
static inline __attribute__((always_inline)) bool
comment_is_quiet(const unsigned char *s, size_t len, size_t at, size_t start, size_t end, bool pg)
{
    if (s[at] == '/') {
        qg_exec_comment ec;
        return pg || !qg_my_exec_comment(s, at, len, &ec);
    }
    if (!pg)
        return s[at] == '#' || at + 2 >= len || qg_is_space_or_control(s[at + 2]);
    /* (Nothing after its newline, as at the end of a statement: no part.) */
    return end + 1 >= len ||
           !(at > 0 && in_continuation_gap(s, start, at - 1) && qg_pg_continuation(s, len, end));
}

/* The end of a comment that starts at `at` in code, when the lexer would
 * find nothing in it; 0 for anything else (no comment starts there). */
size_t qg_comment_end(const unsigned char *s, size_t len, size_t at, size_t start, bool pg);

/* Quotes after a prefix that changes how backslashes read (where they
 * escape: X'', B'', PG U&''; where they do not: PG E''), in a block at
 * `pos` of the input s; only looked for in blocks with a backslash.  A
 * quote after a quote too: it may go on with such a string that began
 * before the doubled quote, blocks before.  Inline: the block skip asks
 * for each string that opens in a block with a backslash, a Shift_JIS
 * literal's 0x5c trail bytes (docs/PERFORMANCE.md, "Choices in the code"). */
static inline uint64_t qg_quotes_after_prefix(const unsigned char *s, size_t pos, uint64_t quotes,
                                              bool escapes)
{
    uint64_t found = 0;
    for (; quotes; quotes &= quotes - 1) {
        size_t at = pos + (size_t)__builtin_ctzll(quotes);
        unsigned char before = at > 0 ? s[at - 1] : ' ';
        if (before == '\'' || (escapes ? is_prefix(before) : (before | 0x20) == 'e'))
            found |= quotes & -quotes;
    }
    return found;
}

/* MySQL: quotes after an introducer (_latin1'...', _utf8 '...'): the
 * lexer checks such a string in the character set it names.  Any word
 * that starts with an underscore counts here, and so does a quote after a
 * quote: the string goes on after a doubled quote, and began before it,
 * maybe blocks before. */
uint64_t qg_introduced_quotes(const unsigned char *s, size_t pos, uint64_t quotes);

/* MySQL: whether a quote in s[0, len) follows an introducer, the same
 * words read forward from each underscore that starts one (a text has
 * fewer underscores than quotes). */
bool qg_introduced_string_in(const unsigned char *s, size_t len);

#endif
