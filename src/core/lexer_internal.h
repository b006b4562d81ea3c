/* What the pure core's files share beyond include/quoteguard.h: the lexer
 * (lexer.c), its vector scans (block_skip.c, quick_scan.c), the checker and
 * the rewriter; and the switches tests and the benchmark use to compare the reference
 * implementation and each vector build. */
#ifndef QG_LEXER_INTERNAL_H
#define QG_LEXER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "quoteguard.h"

typedef struct encoding_dfa encoding_dfa_t;

/* The lexer's state (include/quoteguard.h declares it opaque): the core's
 * own readers keep it on their stack, through qg_lexer_init. */
struct qg_lexer {
    const qg_context *ctx;
    const unsigned char *sql;
    size_t len;
    size_t pos;
    size_t exec_comment_depth; /* MySQL: inside / *! … * / whose body is SQL */
    size_t last_mb_end;        /* end of the last multibyte character seen in code */
    size_t quiet_from;         /* the checker skips blocks from here on */
    qg_reading reading;
    bool multibyte;            /* the client encoding has multibyte characters */
    bool ambiguous;            /* S: saw a byte N may read otherwise (a trail byte
                                  that is a quote or backslash, a backslash
                                  S takes literally) */
    bool diverges;             /* S: N ends some literal elsewhere, or (PG) an
                                  invalid sequence that an escaper trusting lead
                                  bytes reads on past (looked for only by a lexer
                                  with findings) */
    bool unchecked_illformed;  /* S: in a literal S does not check (an
                                  introduced one, MySQL's b'' and x''), a byte
                                  that is no character of the connection's
                                  encoding: an escaper that trusts lead bytes
                                  may read past it */
    bool watch_escaped_quotes; /* S: count quotes escaped by a backslash, where a
                                  quote doubler's reading ends a literal */
    unsigned escaped_quotes;   /* S: their parity, bit 0 for ', bit 1 for " */
    size_t first_escaped_quote; /* S: where the lexer first read one, or 0 */
    bool doubler_parts;        /* S: a comment after an odd number of them */
    bool backslash_pair;       /* S: a backslash after a byte >= 0x80 and before a
                                  backslash or quote (qg_next_backslash_pair), at
                                  a byte before pairs_to */
    size_t pairs_to;           /* S: the bytes the block skip or the checker
                                  looked at for backslash_pair: [0, pairs_to) */
    qg_result *findings;       /* where encoding findings go, or NULL */
    const encoding_dfa_t *dfa; /* the encoding's quoted-text automaton, or NULL */
    int vectors;               /* the implementation of the scans it runs
                                  (src/core/vectors.c), picked at qg_lexer_init */
    size_t steps_until;        /* QG_READ_NAIVE_AWARE: a literal's quote after a
                                  lead byte and a trail 0x5c read as one
                                  character, where the lead and the quote make
                                  none (a step quote), is escaped before this
                                  offset (the escaper stepped over the lead
                                  alone) and from it on read after that
                                  character (the escaper copied it whole).  0,
                                  or one past a step quote of the literal at
                                  lx->pos, where the scan resumes (the checker
                                  read it up to there before) */
    size_t step_after;         /* one past the first step quote at or past
                                  steps_until in the literal just read, or 0 */
    size_t escaped_high_end;   /* S (MySQL): one past the last byte >= 0x80 a
                                  backslash escaped, or 0 */
};


void qg_lexer_init(qg_lexer *lx, const qg_context *ctx, const char *sql, size_t len,
                   qg_reading reading, qg_result *findings);
/* The lexer reads byte by byte from here on, as the scalar reference does. */
void qg_lexer_read_by_reference(qg_lexer *lx);

/* The implementations of the scans (src/core/vectors.c picks one per process,
 * the widest the CPU runs): the scalar reference, which reads byte by byte
 * (no quick scan, no block skip, no automaton) and has the checker compare
 * the readings wherever S saw an ambiguous byte; and the vector builds of
 * src/core/block_skip.c and quick_scan.c, SSE2, AVX2 and, for the quick
 * scan, AVX-512.  Tests
 * narrow the choice to compare them all (qg_allow_vectors returns the one
 * that runs then; QUOTEGUARD_FORCE_VECTORS narrows a whole process). */
enum { QG_VECTORS_REFERENCE, QG_VECTORS_SSE2, QG_VECTORS_AVX2, QG_VECTORS_AVX512, QG_IMPLEMENTATIONS };
enum { QG_VECTORS_WIDEST = QG_IMPLEMENTATIONS - 1, QG_VECTOR_BUILDS = QG_IMPLEMENTATIONS - QG_VECTORS_SSE2 };
int qg_cpu_vectors(void);
int qg_allow_vectors(int widest);
/* "reference", "sse2", "avx2", "avx512"; qg_vectors_named gives -1 for
 * another name. */
const char *qg_vectors_name(int build);
int qg_vectors_named(const char *name);
/* The implementation that runs, picked once (again after qg_allow_vectors). */
extern int qg_vectors_picked __attribute__((visibility("hidden")));
int qg_pick_vectors(void);
static inline int qg_vectors_in_use(void)
{
    int picked = __atomic_load_n(&qg_vectors_picked, __ATOMIC_RELAXED);
    return picked >= 0 ? picked : qg_pick_vectors();
}

/* For the checker, between tokens of the S reading: advances over 64-byte
 * blocks in which S can find nothing — code without comments, identifiers
 * or dollar quotes, and single-quoted strings without a backslash, NUL or
 * high byte — and stops in code or at the opening quote of a string the
 * lexer must read.  Nothing at all in the reference implementation, which
 * the lexer ran on from its start (lx->vectors). */
void qg_lexer_skip_quiet(qg_lexer *lx);

/* What the quick scan settles of a text (qg_only_plain_strings). */
typedef enum qg_quick_reading {
    QG_QUICK_UNSETTLED, /* the lexer reads it */
    QG_QUICK_CLEAN,     /* clean as the server reads it and as every escaper does */
    QG_QUICK_DOUBLER,   /* clean as the server reads it; a quote doubler's
                           reading is compared (escaped_quote_before_comment in
                           src/core/checker.c holds) */
    QG_QUICK_MULTIBYTE, /* unsettled where a byte from 0x80 on stopped the scan:
                           read as letters, it may settle
                           (qg_only_plain_strings_as_letters) */
} qg_quick_reading;

/* For the checker: QG_QUICK_CLEAN when the text is code, closed plain strings,
 * comments and, in PG, closed quoted names only: no byte that can start or
 * end anything else (a backtick, dollar, NUL, high byte; a double quote in
 * MySQL), and every single quote outside comments and names closing a
 * string it opened.  A comment ("--", MySQL's "#", slash star)
 * counts where the quotes before it are even, and must be one the block
 * skip would pass (qg_comment_end, src/core/block_scalar.c).  A backslash is read
 * only where the server reads backslash escapes in plain strings: inside a
 * string, in a text where no quote follows x, b or & (X'', B'', U&'' read
 * it otherwise), it escapes the next byte.  Without a high byte both
 * readings agree on every quote: such text is clean in every encoding.  (A
 * build without SSE2 gives up on every backslash and slash, and on
 * comments where there are quotes.)  QG_QUICK_DOUBLER for such a text,
 * MySQL's where backslashes escape, where a quote escaped by a backslash
 * comes before a byte in a string of the server's (a quote doubler's
 * code) that may open something other than a string (a hash, slash,
 * dollar, two dashes) and a comment opener follows, and the doubler's
 * reading does not end at a backslash before that: the server's reading
 * is settled, the doubler's is not.  QG_QUICK_MULTIBYTE where it stopped
 * at a span with a high byte, in the AVX2 and AVX-512 builds: the reading
 * as letters goes on with it, and with no other text (stopped before any
 * high byte, that reading stops where the scan did).  Always
 * QG_QUICK_UNSETTLED in the reference implementation: its lexer reads
 * every text.  Not asked of the texts qg_pg_every_byte names: the lexer
 * reads those. */
qg_quick_reading qg_only_plain_strings(const qg_context *ctx, const char *sql, size_t len);

/* PG, where every plain string reads backslash escapes: whether s[0, len)
 * holds a backslash before a quote with a byte after it that may open PG
 * code (qg_doubler_code_in).  A quote doubler reads code from that quote
 * on, where a dollar quote, a quoted name or a comment may hide the
 * server's closing quote: the checker reads such a text byte by byte. */
bool qg_pg_doubler_code_after_escaped_quote(const unsigned char *s, size_t len);

/* For the checker: qg_only_plain_strings with each character of more
 * than one byte read as a letter, where every such character reads as a
 * letter to the server and to every escaper; QG_QUICK_UNSETTLED where the
 * text holds a byte from 0x80 on that is in no whole character of the
 * encoding's, in a one-byte encoding, where the build has no such reading
 * (the reference implementation, SSE2), and in MySQL where a string
 * follows an introducer (the server reads it in the character set named).
 * - In a UTF-8 the text is read as it is, where no backslash stands next
 *   to a high byte: no byte of a character is below 0x80, and an escaper
 *   that takes a pair encoding's lead and trail where the server reads
 *   UTF-8 can take no byte it escapes for a trail (a backslash, the only
 *   one that can be a trail, follows no high byte).  The scan validates
 *   each byte as it reads it.
 * - In a pair encoding (Shift_JIS, BIG5, GBK, UHC, GB18030) it reads
 *   `copy` (room for len bytes and QG_LETTERS_SLACK more; NULL: none
 *   offered), the text with the trail bytes below 0x80 made 0xff, where a
 *   backslash that is no trail stands next to no high byte and no trail
 *   0x5c comes before a quote or a backslash.  Quotes are never trails
 *   there; an escaper that takes a trail 0x5c for a backslash escapes the
 *   byte after it, which is then neither a quote nor a backslash: every
 *   reading finds the same quotes.  Texts longer than the caller's copy
 *   are the block skip's.
 */
enum { QG_LETTERS_SLACK = 63 }; /* the last block written whole */
qg_quick_reading qg_only_plain_strings_as_letters(const qg_context *ctx, const char *sql,
                                                  size_t len, char *copy);

/* Whitespace to both servers' lexers: space, \t, \n, \v, \f, \r. */
static inline bool qg_is_space(unsigned char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* MySQL: an ASCII byte after "--" that makes it a comment (the set's
 * ctype table may add high bytes: qg_encoding_dash_space). */
static inline bool qg_is_space_or_control(unsigned char c)
{
    return c <= 0x20 || c == 0x7f;
}

/* Whether the bytes a and b follow each other in s[from, to): memchr
 * finds each a in a few instructions where a byte loop takes several a
 * byte. */
static inline bool qg_pair_in(const unsigned char *s, size_t from, size_t to, unsigned char a,
                              unsigned char b)
{
    const unsigned char *end = s + to;
    for (const unsigned char *p = s + from; (p = memchr(p, a, (size_t)(end - p))) && p + 1 < end;
         p++)
        if (p[1] == b)
            return true;
    return false;
}

/* Whether "--" or slash-star opens in s[from, to). */
static inline bool qg_comment_opener_in(const unsigned char *s, size_t from, size_t to)
{
    return qg_pair_in(s, from, to, '-', '-') || qg_pair_in(s, from, to, '/', '*');
}

/* Whether s[from, to) holds a byte that may open a token of PG code: past
 * a quote escaped by a backslash a quote doubler reads code, where a
 * dollar quote, a quoted name or a comment may hide the server's closing
 * quote or the next escaped one. */
static inline bool qg_doubler_code_in(const unsigned char *s, size_t from, size_t to)
{
    return memchr(s + from, '$', to - from) || memchr(s + from, '"', to - from) ||
           qg_comment_opener_in(s, from, to);
}

/* Whether a quote a quote doubler's literal may end at follows `from`:
 * a single quote where `kinds` has bit 0 (an odd number of escaped ones
 * before), a double quote where it has bit 1. */
static inline bool qg_quote_after(const unsigned char *s, size_t len, size_t from, unsigned kinds)
{
    return ((kinds & 1) && memchr(s + from, '\'', len - from)) ||
           ((kinds & 2) && memchr(s + from, '"', len - from));
}

/* The first backslash in s[from, to) (s[0, len) the text) that follows a
 * byte 0x80 or more and comes before a backslash or quote, or `to`: the
 * only backslashes an escaper may leave where the server reads otherwise
 * (elsewhere every escaper and the server read them alike).  Backslashes
 * are rare in text, and memchr finds each in a few instructions. */
static inline size_t qg_next_backslash_pair(const unsigned char *s, size_t from, size_t to,
                                            size_t len)
{
    for (size_t b = from; b < to; b++) {
        const unsigned char *hit = memchr(s + b, '\\', to - b);
        if (!hit)
            return to;
        b = (size_t)(hit - s);
        if (b > 0 && s[b - 1] >= 0x80 && b + 1 < len && (s[b + 1] == '\\' || s[b + 1] == '\''))
            return b;
    }
    return to;
}

/* Whether the server reads backslash escapes in plain strings. */
static inline bool qg_plain_strings_escape(const qg_context *ctx)
{
    bool pg = ctx->dialect == QG_DIALECT_POSTGRES;
    return !(ctx->flags & (pg ? QG_STD_STRINGS : QG_NO_BACKSLASH_ESCAPES));
}

/* Whether the checker reads the text byte by byte from the start, asking
 * the quick scans nothing: PG's, where plain strings read backslash
 * escapes and a quote doubler reads code after an escaped quote
 * (qg_pg_doubler_code_after_escaped_quote, asked only then). */
static inline bool qg_pg_every_byte(const qg_context *ctx, const char *sql, size_t len)
{
    return ctx->dialect == QG_DIALECT_POSTGRES && qg_plain_strings_escape(ctx) &&
           qg_pg_doubler_code_after_escaped_quote((const unsigned char *)sql, len);
}

/* For the block skip: the first byte from pos on that ends the text of a
 * line comment (PG: \n or \r; MySQL: \n only) or may end a block comment
 * or nest one (star, slash), or that is NUL or a high byte; len when none
 * does. */
size_t qg_skip_comment_text(const unsigned char *s, size_t pos, size_t len, bool block, bool pg);

/* PG: after a closing quote at pos - 1, the literal goes on when only
 * whitespace with at least one newline (and -- comments) separates it from
 * another quote.  Returns the position of that quote, or 0. */
size_t qg_pg_continuation(const unsigned char *s, size_t len, size_t pos);

/* For the rewriter's padding, where the automaton's characters are pairs
 * or UTF-8: counts the characters of s[pos, limit) (pos between two), 64
 * bytes at a time while each block holds valid characters only (a quote,
 * backslash or NUL is one, where the automaton would stop).  Returns where
 * it stopped, between two characters, and adds those before it to *chars;
 * pos where no such build runs (the reference implementation, SSE2). */
size_t qg_count_chars(const encoding_dfa_t *dfa, const unsigned char *s, size_t pos, size_t limit,
                      size_t *chars);

/* One implementation of the scans, complete: a build's own functions and,
 * where it has none of its own, the next narrower build's (the AVX-512
 * build skips blocks and counts characters with AVX2's; the SSE2 build
 * counts none), down to the reference's, which settles nothing, skips
 * nothing and counts nothing.  src/core/vectors.c holds the tables and is
 * the one place that calls through them; tests read them to compare every
 * implementation with the reference. */
typedef struct qg_scans {
    qg_quick_reading (*quick_scan)(const qg_context *ctx, const char *sql, size_t len);
    qg_quick_reading (*utf8_scan)(const qg_context *ctx, const encoding_dfa_t *dfa, const char *sql,
                                  size_t len);
    bool (*pair_letters)(const encoding_dfa_t *dfa, const unsigned char *s, size_t len,
                         unsigned char *copy);
    qg_quick_reading (*quick_scan_letters)(const qg_context *ctx, const char *sql, size_t len);
    void (*skip_quiet)(qg_lexer *lx);
    size_t (*count_chars)(const encoding_dfa_t *dfa, const unsigned char *s, size_t pos,
                          size_t limit, size_t *chars);
    bool (*pg_may_set)(const char *sql, size_t len); /* qg_pg_may_set */
} qg_scans;
/* The table of an implementation (QG_VECTORS_…); one the CPU cannot run
 * is the widest it can. */
const qg_scans *qg_scans_of(int implementation);

/* qg_pg_may_set's builds (src/core/pg_state.c): byte by byte (the
 * reference), sixteen pairs a step, 32 (shorter texts: sixteen). */
bool qg_pg_may_set_bytes(const char *sql, size_t len);
bool qg_pg_may_set_sse2(const char *sql, size_t len);
bool qg_pg_may_set_avx2(const char *sql, size_t len);

/* The vector builds' scans (src/core/block_skip.c, quick_scan.c). */
void qg_skip_quiet_sse2(qg_lexer *lx);
void qg_skip_quiet_avx2(qg_lexer *lx);
qg_quick_reading qg_quick_scan_sse2(const qg_context *ctx, const char *sql, size_t len);
qg_quick_reading qg_quick_scan_avx2(const qg_context *ctx, const char *sql, size_t len);
qg_quick_reading qg_quick_scan_avx512(const qg_context *ctx, const char *sql, size_t len);
qg_quick_reading qg_quick_scan_utf8_avx2(const qg_context *ctx, const encoding_dfa_t *dfa,
                                         const char *sql, size_t len);
bool qg_pair_letters_avx2(const encoding_dfa_t *dfa, const unsigned char *s, size_t len,
                          unsigned char *copy);
qg_quick_reading qg_quick_scan_letters_avx2(const qg_context *ctx, const char *sql, size_t len);
qg_quick_reading qg_quick_scan_letters_avx512(const qg_context *ctx, const char *sql, size_t len);
size_t qg_count_chars_avx2(const encoding_dfa_t *dfa, const unsigned char *s, size_t pos,
                           size_t limit, size_t *chars);

#endif
