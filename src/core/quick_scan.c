/*
 * The quick scan (lexer_internal.h, qg_only_plain_strings): two lanes at a
 * time (one in a text shorter than two; one of 64 bytes in the AVX-512
 * build), whether a text is code, plain strings and comments only.  Built
 * three times: with SSE2 (16-byte lanes) as qg_quick_scan_sse2; compiled
 * with -mavx2, with 32-byte lanes as qg_quick_scan_avx2; and compiled with
 * -mavx512bw too, with 64-byte lanes as qg_quick_scan_avx512.  Each
 * build's lanes and names are in its header (simd_sse2.h, simd_avx2.h,
 * simd_avx512.h); src/core/vectors.c picks the widest build the CPU runs.
 * The AVX2 and AVX-512 builds have a second entry, whose class rows read
 * the bytes from 0x80 on as letters, for a pair encoding's text made
 * letters in a copy; the AVX2 build a third, which reads a UTF-8 text so
 * and validates it as it reads (qg_only_plain_strings_as_letters).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "block_scalar.h"
#include "encoding_tables.h"
#include "hot.h"
#include "lexer_internal.h"
#include "quoteguard.h"
#include "scan_lanes.h"
#ifdef QUICK_SCAN_UTF8
#include "utf8_lanes.h"
#endif

#if defined(__AVX2__) || defined(__SSE2__)
/* A lane's bytes for the quick scan: quotes, dashes, hashes, slashes and
 * dollars (`opener`: each may start a comment or a dollar quote); where
 * PG's quoted names are read, double quotes; when backslashes are
 * followed, they and the bytes x, b and & in either case (`prefix`: a
 * string after them may read backslashes otherwise: X'', B'', PG U&''; in
 * the AVX2 and AVX-512 builds h and r too, from their class), as bit i
 * for byte i. */
typedef struct quick_bytes {
    uint64_t quote, dquote, dash, opener, backslash, prefix, underscore;
} quick_bytes;

/* What a UTF-8 text's scan validates (QUICK_SCAN_UTF8; NULL in the other
 * scans and builds). */
typedef struct utf8_watch utf8_watch;

static inline uint64_t prefix_bits(lane_t v, lane_t fold, lane_t x, lane_t b, lane_t ampersand)
{
    lane_t lower = or_lanes(v, fold);
#if LANE == 64
    return eq_bits(lower, x) | eq_bits(lower, b) | eq_bits(lower, ampersand);
#else
    return bits_of(or_lanes(or_lanes(eq(lower, x), eq(lower, b)), eq(lower, ampersand)));
#endif
}

/* Whether a span's bytes can be read: not when one stops the scan (NUL, a
 * high byte, a backtick, a double quote unless `names`, a backslash unless
 * followed); LANE_BACKSLASH when only backslashes do, LANE_NAME when only
 * double quotes do, LANE_HIGH when a high byte is among those that do (in
 * the builds that read multibyte characters as letters: the SSE2 build
 * says LANE_STOP). */
enum { LANE_READ, LANE_BACKSLASH, LANE_NAME, LANE_STOP, LANE_HIGH };

#ifdef __AVX2__
/* Each byte's class is the AND of a row picked by its low nibble and one
 * picked by its high nibble: the top three bits a quote, dash, or hash,
 * slash or dollar, the low ones a double quote or one per group of
 * stopping bytes (NUL and `; \; high).  Two shuffles instead of nine
 * compares.  Q_PREFIX_LETTER marks x, b, h and r in either case: the
 * nibbles of x and b (7, 5, 6, 4 high; 8, 2 low) make h and r too, and a
 * string rarely opens after those, so the escaping spans take them all for
 * prefixes and leave the few they stop at to the exact test, which made
 * the MySQL batches faster (docs/PERFORMANCE.md, "Choices in the code"). */
enum { Q_STOP_NUL = 0x01, Q_PREFIX_LETTER = 0x02, Q_STOP_BACKSLASH = 0x04, Q_DQUOTE = 0x08,
       Q_STOP_HIGH = 0x10, Q_STOPS = 0x15, Q_OPENER = 0x20, Q_DASH = 0x40, Q_QUOTE = 0x80 };
/* Where bytes from 0x80 on are letters, no byte needs Q_STOP_HIGH: the
 * rows of a MySQL text's reading as letters give its bit to the
 * underscore, which may start an introducer (introducer_among).  The
 * quiet spans stop at it, the spans read its bits. */
enum { Q_UNDERSCORE = Q_STOP_HIGH };
#if LANE == 64
#define EVERY_16(...) {__VA_ARGS__, __VA_ARGS__, __VA_ARGS__, __VA_ARGS__}
#else
#define EVERY_16(...) {__VA_ARGS__, __VA_ARGS__}
#endif
typedef struct quick_tables {
    unsigned char by_low[LANE], by_high[LANE], nibble[LANE];
    unsigned char stops[LANE], but_backslash[LANE], but_dquote[LANE], but_both[LANE];
    unsigned char ampersand[LANE]; /* with Q_PREFIX_LETTER, the prefix bytes and more */
    /* for quiet_lanes; minus is needle DASH again: read from the needle
     * table there, it cost PG OLTP time (docs/PERFORMANCE.md) */
    unsigned char stops_openers[LANE], dash[LANE], minus[LANE];
#if LANE == 64
    unsigned char dquote[LANE], opener[LANE], prefix_letter[LANE]; /* class bits */
#endif
    unsigned char backslash[LANE];              /* the class bit */
    unsigned char high_byte[LANE];              /* the class bit */
    unsigned char stops_openers_escaping[LANE]; /* escaping_block: one test for both */
    unsigned char underscore[LANE];             /* the class bit */
    bool introducers;                           /* the rows mark underscores */
} quick_tables;
#if LANE == 64
#define CLASS_BIT_ROWS                                                                             \
    .dquote = {[0 ... LANE - 1] = Q_DQUOTE}, .opener = {[0 ... LANE - 1] = Q_OPENER},             \
    .prefix_letter = {[0 ... LANE - 1] = Q_PREFIX_LETTER},
#else
#define CLASS_BIT_ROWS
#endif
/* The rows, with `high` the class of a byte from 0x80 on: Q_STOP_HIGH, or
 * none where such bytes are read as letters (QUICK_SCAN_LETTERS); and
 * `marked` Q_UNDERSCORE where underscores are marked (then `high` is
 * none), else none.  Every low nibble is a high byte's (in the marking
 * rows only f, the underscore's).  The bytes stop the spans where their
 * class has a bit of `stops`, and the quiet spans also at an
 * underscore. */
#define QUICK_ROWS(high, marked)                                                                   \
    {                                                                                              \
        .by_low = EVERY_16(LOW_HIGH(marked) | Q_STOP_NUL, LOW_HIGH(marked),                        \
                           LOW_HIGH(marked) | Q_DQUOTE | Q_PREFIX_LETTER,                          \
                           LOW_HIGH(marked) | Q_OPENER, LOW_HIGH(marked) | Q_OPENER,               \
                           LOW_HIGH(marked), LOW_HIGH(marked), LOW_HIGH(marked) | Q_QUOTE,         \
                           LOW_HIGH(marked) | Q_PREFIX_LETTER, LOW_HIGH(marked), LOW_HIGH(marked), \
                           LOW_HIGH(marked), LOW_HIGH(marked) | Q_STOP_BACKSLASH,                  \
                           LOW_HIGH(marked) | Q_DASH, LOW_HIGH(marked), Q_STOP_HIGH | Q_OPENER),   \
        .by_high =                                                                                 \
            EVERY_16(Q_STOP_NUL, 0, Q_DQUOTE | Q_OPENER | Q_DASH | Q_QUOTE, 0, Q_PREFIX_LETTER,    \
                     Q_STOP_BACKSLASH | Q_PREFIX_LETTER | (marked), Q_STOP_NUL | Q_PREFIX_LETTER,  \
                     Q_PREFIX_LETTER, high, high, high, high, high, high, high, high),             \
        .nibble = {[0 ... LANE - 1] = 0x0f},                                                       \
        .stops = {[0 ... LANE - 1] = (Q_STOPS | Q_DQUOTE) & ~(marked)},                            \
        .but_backslash = {[0 ... LANE - 1] =                                                       \
                              (Q_STOPS | Q_DQUOTE) & ~Q_STOP_BACKSLASH & ~(marked)},               \
        .but_dquote = {[0 ... LANE - 1] = Q_STOPS & ~(marked)},                                    \
        .but_both = {[0 ... LANE - 1] = Q_STOPS & ~Q_STOP_BACKSLASH & ~(marked)},                  \
        .ampersand = {[0 ... LANE - 1] = '&'},                                                     \
        .stops_openers = {[0 ... LANE - 1] = Q_STOPS | Q_DQUOTE | Q_OPENER},                       \
        .dash = {[0 ... LANE - 1] = Q_DASH}, .minus = {[0 ... LANE - 1] = '-'},                    \
        CLASS_BIT_ROWS.backslash = {[0 ... LANE - 1] = Q_STOP_BACKSLASH},                          \
        .underscore = {[0 ... LANE - 1] = (marked)},                                               \
        .high_byte = {[0 ... LANE - 1] = Q_STOP_HIGH & ~(marked)},                                 \
        .stops_openers_escaping = {[0 ... LANE - 1] =                                              \
                                       (Q_STOPS | Q_DQUOTE | Q_OPENER) & ~Q_STOP_BACKSLASH},       \
        .introducers = (marked) != 0,                                                              \
    }
#define LOW_HIGH(marked) (Q_STOP_HIGH & ~(marked))
static const quick_tables quick_rows __attribute__((aligned(LANE))) = QUICK_ROWS(Q_STOP_HIGH, 0);
static const quick_tables letter_rows __attribute__((aligned(LANE))) = QUICK_ROWS(0, 0);
static const quick_tables mysql_letter_rows __attribute__((aligned(LANE))) =
    QUICK_ROWS(0, Q_UNDERSCORE);
typedef quick_tables quick_table;
#if LANE == 64
/* Hidden from the optimiser, which would build the rows' bytes again in
 * registers in every span. */
static inline const quick_table *quick_table_hidden(const quick_table *table)
{
    __asm__("" : "+r"(table));
    return table;
}
#define QUICK_TABLE(rows) quick_table_hidden(rows)
#else
#define QUICK_TABLE(rows) (rows)
#endif

static inline __attribute__((always_inline)) lane_t class_of(lane_t v, lane_t nibble,
                                                            lane_t by_low, lane_t by_high)
{
    lane_t low = and_lanes(v, nibble), high = and_lanes(nibbles_down(v), nibble);
    return and_lanes(lookup(by_low, low), lookup(by_high, high));
}

static inline __attribute__((always_inline)) lane_t quick_class(const quick_table *t, lane_t v)
{
    return class_of(v, load_lane(t->nibble), load_lane(t->by_low), load_lane(t->by_high));
}

#if LANE == 64
/* The bytes whose class has one of the bits of `row`. */
static inline uint64_t class_bits(lane_t cls, const unsigned char *row)
{
    return _mm512_test_epi8_mask(cls, load_lane(row));
}

/* The 64 bytes at p (a span is one lane). */
static inline __attribute__((always_inline)) int
quick_classify(const quick_table *t, const unsigned char *p, int lanes, quick_bytes *b,
               bool names, bool escaping)
{
    (void)lanes;
    lane_t v = load_lane(p);
    lane_t cls = quick_class(t, v);
    const unsigned char *stopping = names ? t->but_dquote : escaping ? t->but_backslash : t->stops;
    if (class_bits(cls, stopping)) {
        if (class_bits(cls, t->high_byte))
            return LANE_HIGH;
        if (escaping)
            return LANE_STOP;
        if (!class_bits(cls, names ? t->but_both : t->but_backslash))
            return LANE_BACKSLASH;
        return !names && !class_bits(cls, t->but_dquote) ? LANE_NAME : LANE_STOP;
    }
    *b = (quick_bytes){0};
    b->quote = _mm512_movepi8_mask(cls); /* Q_QUOTE is the top bit */
    if (names)
        b->dquote = class_bits(cls, t->dquote);
    b->dash = class_bits(cls, t->dash);
    b->opener = class_bits(cls, t->opener);
    if (escaping) {
        b->backslash = class_bits(cls, t->backslash);
        b->prefix = class_bits(cls, t->prefix_letter) | eq_bits(v, load_lane(t->ampersand));
    }
    if (t->introducers)
        b->underscore = class_bits(cls, t->underscore);
    return LANE_READ;
}
#else

/* The bytes at p, `lanes` lanes of them. */
static inline __attribute__((always_inline)) int
quick_classify(const quick_table *t, const unsigned char *p, int lanes, quick_bytes *b,
               bool names, bool escaping)
{
    /* where one lane is read, the second is the first again */
    lane_t v[2] = {load_lane(p), load_lane(p + (size_t)LANE * (size_t)(lanes - 1))};
    lane_t cls[2] = {quick_class(t, v[0]), quick_class(t, v[1])};
    lane_t any = lanes > 1 ? or_lanes(cls[0], cls[1]) : cls[0];
    const unsigned char *stopping = names ? t->but_dquote : escaping ? t->but_backslash : t->stops;
    if (!_mm256_testz_si256(any, load_lane(stopping))) {
        if (!_mm256_testz_si256(any, load_lane(t->high_byte)))
            return LANE_HIGH;
        if (escaping)
            return LANE_STOP;
        if (_mm256_testz_si256(any, load_lane(names ? t->but_both : t->but_backslash)))
            return LANE_BACKSLASH;
        return !names && _mm256_testz_si256(any, load_lane(t->but_dquote)) ? LANE_NAME : LANE_STOP;
    }
    *b = (quick_bytes){0};
    _Pragma("GCC unroll 2") for (int k = 0; k < lanes; k++) {
        unsigned shift = (unsigned)(LANE * k);
        b->quote |= bits_of(cls[k]) << shift;
        if (names)
            b->dquote |= bits_of(_mm256_slli_epi16(cls[k], 4)) << shift;
        b->dash |= bits_of(_mm256_slli_epi16(cls[k], 1)) << shift;
        b->opener |= bits_of(_mm256_slli_epi16(cls[k], 2)) << shift;
        if (escaping) {
            b->backslash |= bits_of(_mm256_slli_epi16(cls[k], 5)) << shift;
            b->prefix |= bits_of(or_lanes(_mm256_slli_epi16(cls[k], 6),
                                          eq(v[k], load_lane(t->ampersand))))
                         << shift;
        }
    }
    /* most spans hold no underscore: one test of both lanes */
    if (t->introducers && !_mm256_testz_si256(any, load_lane(t->underscore)))
        for (int k = 0; k < lanes; k++)
            b->underscore |= bits_of(_mm256_slli_epi16(cls[k], 3)) << (LANE * k);
    return LANE_READ;
}
#endif
#else
typedef needles quick_table;
#define QUICK_TABLE(rows) needle_table()

static inline __attribute__((always_inline)) int
quick_classify(const quick_table *n, const unsigned char *p, int lanes, quick_bytes *b,
               bool names, bool escaping)
{
    quick_bytes found = {0};
    uint64_t others = 0;
    _Pragma("GCC unroll 2") for (int k = 0; k < lanes; k++) {
        lane_t v = load_lane(p + (size_t)LANE * (size_t)k);
        unsigned shift = (unsigned)(LANE * k);
#define IS(which) eq(v, needle(n, which))
        /* the top bit of each byte: high bytes too */
        others |= bits_of(or_lanes(or_lanes(v, IS(NUL)), IS(BACKTICK)));
        found.dquote |= bits_of(IS(DQUOTE)) << shift;
        found.backslash |= bits_of(IS(BACKSLASH)) << shift;
        found.quote |= bits_of(IS(QUOTE)) << shift;
        found.dash |= bits_of(IS(DASH)) << shift;
        found.opener |= bits_of(or_lanes(or_lanes(IS(HASH), IS(SLASH)), IS(DOLLAR))) << shift;
        if (escaping)
            found.prefix |= prefix_bits(v, needle(n, SPACE), needle(n, LOWER_X),
                                        needle(n, LOWER_B), needle(n, AMPERSAND))
                            << shift;
#undef IS
    }
    if (others | (names ? 0 : found.dquote) | (escaping ? 0 : found.backslash)) {
        if (escaping || others)
            return LANE_STOP;
        if (!(names ? 0 : found.dquote))
            return LANE_BACKSLASH;
        return found.backslash ? LANE_STOP : LANE_NAME;
    }
    *b = found;
    return LANE_READ;
}
#endif

/* The bytes equal to needle `which` among the `lanes` lanes at p. */
static inline __attribute__((always_inline)) uint64_t span_bits(const needles *n,
                                                               const unsigned char *p, int lanes,
                                                               int which)
{
    uint64_t bits = 0;
    _Pragma("GCC unroll 2") for (int k = 0; k < lanes; k++)
        bits |= eq_bits(load_lane(p + (size_t)LANE * (size_t)k), needle(n, which))
                << (LANE * k);
    return bits;
}

#ifdef QUICK_SCAN_UTF8
/* A UTF-8 text read as letters (QUICK_SCAN_UTF8) is validated as the scan
 * reads it: each lane it reads checked as UTF-8 after the three bytes
 * before each (utf8_lane_wrong) and for a backslash next to a high byte
 * (the conditions of qg_only_plain_strings_as_letters, lexer_internal.h).
 * A lane read twice is checked twice, which is harmless: all that counts
 * is that none is missed.  The bytes the scan steps over without reading
 * them are those of a comment that runs past its span, and such a comment
 * holds no byte from 0x80 on (qg_comment_end): ASCII after ASCII, nothing
 * to check.  `wrong`: a byte not 0 where one failed. */
struct utf8_watch {
    utf8_rows rows;
    lane_t wrong;
};

/* v's bytes one byte on, a NUL first: the bytes before a lane at the
 * text's start. */
static inline lane_t one_on(lane_t v)
{
    return _mm256_alignr_epi8(v, _mm256_permute2x128_si256(v, v, 0x08), 15);
}

/* The bytes of the lane v that are wrong, not 0, read after the bytes
 * before it (`before1` … `before3`).  `backslashes`: the lane may hold
 * one, or follow one; where the scan does not read escapes it reads no
 * lane that holds one, and a lane after a comment it stepped over starts
 * with the comment's newline or follows its closing slash. */
static inline __attribute__((always_inline)) lane_t lane_wrong(const utf8_rows *rows, lane_t v,
                                                              lane_t before1, lane_t before2,
                                                              lane_t before3, bool backslashes)
{
    lane_t wrong = utf8_lane_wrong(rows, v, before1, before2, before3);
    if (backslashes) {
        lane_t backslash = needle(needle_table(), BACKSLASH);
        /* the top bit where a high byte and a backslash are neighbours */
        lane_t next_to =
            or_lanes(and_lanes(v, eq(before1, backslash)), and_lanes(before1, eq(v, backslash)));
        wrong = or_lanes(wrong, _mm256_cmpgt_epi8(_mm256_setzero_si256(), next_to));
    }
    return wrong;
}

/* The `lanes` lanes at s + at into watch->wrong (NULs before the text),
 * loaded again where the optimiser takes them from quick_classify's
 * registers.  A span whose bytes and the three before it are ASCII has
 * nothing to check: one test of them all before any lane's work. */
static inline __attribute__((always_inline)) void
watch_span(utf8_watch *watch, const unsigned char *s, size_t at, int lanes, bool backslashes)
{
    if (__builtin_expect(at >= 3, 1)) {
        lane_t any = load_lane(s + at - 3);
        _Pragma("GCC unroll 4") for (int k = 0; k < lanes; k++)
            any = or_lanes(any, load_lane(s + at + (size_t)LANE * (size_t)k));
        if (!bits_of(any))
            return;
    }
    lane_t wrong = watch->wrong;
    _Pragma("GCC unroll 4") for (int k = 0; k < lanes; k++) {
        const unsigned char *p = s + at + (size_t)LANE * (size_t)k;
        lane_t v = load_lane(p), before1, before2, before3;
        if (k > 0 || at >= 3) {
            before1 = load_lane(p - 1);
            before2 = load_lane(p - 2);
            before3 = load_lane(p - 3);
        } else {
            before1 = at >= 1 ? load_lane(p - 1) : one_on(v);
            before2 = at >= 2 ? load_lane(p - 2) : one_on(before1);
            before3 = one_on(before2);
        }
        wrong = or_lanes(wrong, lane_wrong(&watch->rows, v, before1, before2, before3, backslashes));
    }
    watch->wrong = wrong;
}

#else
static inline void watch_span(utf8_watch *watch, const unsigned char *s, size_t at, int lanes,
                              bool backslashes)
{
    (void)watch, (void)s, (void)at, (void)lanes, (void)backslashes;
}
#endif

/* Where the text of a comment at `at` ends (as block_scalar.c reads it),
 * when it ends in the span of `lanes` lanes at span_at (where the quick scan found no NUL or high
 * byte), from the span's bytes: no scan, no call.  0 when it ends later. */
static inline __attribute__((always_inline)) size_t
comment_end_in_span(const unsigned char *s, size_t len, size_t at, size_t span_at, int lanes,
                    bool pg)
{
    const needles *n = needle_table();
    const unsigned char *p = s + span_at;
    size_t span = (size_t)LANE * (size_t)lanes;
    bool block = s[at] == '/';
    size_t text = at + (s[at] == '#' ? 1 : 2) - span_at;
    if (text >= span)
        return 0;
    uint64_t from = ~0ull << text;
    if (block) {
        uint64_t star = span_bits(n, p, lanes, STAR), slash = span_bits(n, p, lanes, SLASH);
        uint64_t closes = star & slash >> 1 & from;
        uint64_t nests = pg ? slash & star >> 1 & from : 0;
        if (!closes || (nests & ((closes & -closes) - 1)))
            return 0;
        return span_at + (size_t)__builtin_ctzll(closes) + 2;
    }
    uint64_t newline = span_bits(n, p, lanes, NEWLINE) | (pg ? span_bits(n, p, lanes, RETURN) : 0);
    if (newline & from)
        return span_at + (size_t)__builtin_ctzll(newline & from);
    return span_at + span == len ? len : 0;
}

/* The quick scan at `at`, in the span of `lanes` lanes at span_at, with
 * bytes that may start a comment (`openers`: a hash, a slash, the second
 * of two dashes) or a PG dollar quote (a dollar): the end of the first
 * comment in code (in code when the quotes before it are even: `open` for
 * those before the lane, *quote for the lane's own), with *quote cut to
 * the quotes before it, *before_comment to the bits before it, *comment_at
 * to where it starts.  SIZE_MAX when none starts one (a division, PG's
 * hash operator, a PG parameter $1 or a MySQL dollar, bytes in strings); 0
 * when the lexer must read it (comment_end; a dollar that may open a
 * dollar quote, as any other than one before a digit may: a tag never
 * starts with one). */
static inline __attribute__((always_inline)) size_t
quick_comment(const unsigned char *s, size_t len, size_t at, size_t span_at, int lanes,
              uint64_t openers, uint64_t *quote, bool open, const qg_context *ctx,
              uint64_t *before_comment, size_t *comment_at)
{
    bool pg = ctx->dialect == QG_DIALECT_POSTGRES;
    for (; openers; openers &= openers - 1) {
        unsigned bit = (unsigned)__builtin_ctzll(openers);
        uint64_t before = (1ull << bit) - 1;
        if (open ^ __builtin_parityll(*quote & before))
            continue; /* in a string */
        size_t pos = at + bit;
        if (s[pos] == '$') {
            if (pg && !(pos + 1 < len && s[pos + 1] >= '0' && s[pos + 1] <= '9'))
                return 0;
            continue;
        }
        bool dashes = s[pos] == '-', hash = s[pos] == '#' && !pg;
        bool slash_star = s[pos] == '/' && pos + 1 < len && s[pos + 1] == '*';
        if (!dashes && !hash && !slash_star)
            continue; /* an operator */
        *quote &= before;
        *before_comment = before;
        size_t start = dashes ? pos - 1 : pos;
        *comment_at = start;
        size_t end = comment_end_in_span(s, len, start, span_at, lanes, pg);
        if (!end)
            return qg_comment_end(s, len, start, 0, pg);
        return comment_is_quiet(s, len, start, 0, end, pg) ? end : 0;
    }
    return SIZE_MAX;
}

/* Of a lane's quotes and double quotes, those that open or close a string
 * or a PG quoted name (`bits`), read from the state before the lane
 * (`open`; `in_name`: what is open is a name): the other kind is text
 * inside either.  `in_name` after them. */
typedef struct delimiters {
    uint64_t bits;
    bool in_name;
} delimiters;

static delimiters lane_delimiters(uint64_t quote, uint64_t dquote, bool open, bool in_name)
{
    uint64_t found = 0;
    for (uint64_t all = quote | dquote; all; all &= all - 1) {
        uint64_t bit = all & -all;
        bool is_dquote = (dquote & bit) != 0;
        if (open && is_dquote != in_name)
            continue;
        found |= bit;
        in_name = !open && is_dquote;
        open = !open;
    }
    return (delimiters){found, in_name};
}

/* Whether one of the bytes `bits` (bit k: s[at + k]) opens a MySQL
 * comment: a hash, or a slash before a star. */
static inline bool opens_mysql_comment(const unsigned char *s, size_t len, size_t at, uint64_t bits)
{
    for (; bits; bits &= bits - 1) {
        size_t pos = at + (size_t)__builtin_ctzll(bits);
        if (s[pos] == '#' || (s[pos] == '/' && pos + 1 < len && s[pos + 1] == '*'))
            return true;
    }
    return false;
}

/* MySQL, where backslashes escape: a quote doubler's reading of the text
 * as the scan goes (the checker's escaped_quote_before_comment asks for it
 * where a quote escaped by a backslash comes before something that may
 * open a comment).  Up to the first escaped quote it is the server's;
 * there its literal ends, and from there on, while no byte that may open
 * anything but a string (a hash, slash, dollar, two dashes) comes inside
 * a string of the server's, every string of the server's is code to it
 * and the reverse.  So the next backslash, in a string of the server's,
 * is in its code: its reading ends there (checker.c, path_take).  Without
 * one, its last literal is open at the text's end, and its reading ends
 * there: a comment in the server's code is text in one of its literals,
 * and the scan stops where a quote follows such a comment (quick_lanes).
 * Either way nothing is asked of it (docs/PERFORMANCE.md, "Choices in the
 * code"). */
typedef enum doubler_reading {
    DOUBLER_UNSEEN,  /* no escaped quote yet */
    DOUBLER_ALIVE,   /* strings only in its code since the first */
    DOUBLER_OPENER,  /* an opener came first: any comment opener asks for it */
    DOUBLER_SETTLED, /* it ends at a backslash, or is asked for */
} doubler_reading;

/* The doubler's reading over the bytes at `at` (bit k: byte at + k):
 * `escaped`, the quotes escaped by a backslash; `backslash`; `openers`,
 * hashes, slashes and dollars; `second_dashes`, the second of two dashes;
 * `in_string`, the bytes in the server's strings.  *asked: its reading is
 * compared. */
static inline __attribute__((always_inline)) void
follow_doubler(doubler_reading *reading, bool *asked, uint64_t escaped, uint64_t backslash,
               uint64_t openers, uint64_t second_dashes, uint64_t in_string,
               const unsigned char *s, size_t len, size_t at)
{
    if (*reading == DOUBLER_UNSEEN) {
        if (!escaped)
            return;
        uint64_t later = 0 - ((escaped & (0 - escaped)) << 1); /* after the first */
        backslash &= later;
        openers &= later;
        second_dashes &= later << 1; /* the pairs that start there */
        *reading = DOUBLER_ALIVE;
    }
    if (*reading == DOUBLER_ALIVE) {
        /* where each opener in its code starts (a pair's first dash; one
         * in the bytes before, at bit 0) */
        uint64_t starts = (openers | second_dashes >> 1 | (second_dashes & 1)) & in_string;
        uint64_t first_backslash = backslash & (0 - backslash);
        if (backslash && !(starts & (first_backslash - 1))) {
            *reading = DOUBLER_SETTLED;
            return;
        }
        if (!starts)
            return;
        *reading = DOUBLER_OPENER;
    }
    if (second_dashes || opens_mysql_comment(s, len, at, openers)) {
        *asked = true;
        *reading = DOUBLER_SETTLED;
    }
}

#ifdef __AVX2__
/* Where neither names nor escapes are read, on from i (past the text's
 * first byte) QUIET_SPAN bytes at a time while they are letters, digits,
 * quotes, single dashes and the like: nothing that stops the scan or opens
 * a comment or a dollar quote, and no dash after a dash (the byte before
 * each lane is read by a load one byte back).  Only their quotes count,
 * by the parity of their classes' top bits XORed together.  Returns where
 * the spans go on: before the bytes that hold such a byte (in the AVX-512
 * build, at its lane), or before the text's last QUIET_SPAN - 1 bytes. */
#define QUIET_SPAN 128
#if LANE == 64
static inline __attribute__((always_inline)) size_t
quiet_lanes(const quick_table *t, const unsigned char *s, size_t len, size_t i,
            uint64_t *quote_parity, utf8_watch *watch)
{
    (void)watch; /* UTF-8 is validated in the AVX2 build */
    uint64_t parity = *quote_parity;
    lane_t minus = load_lane(t->minus);
    for (; i + QUIET_SPAN <= len; i += QUIET_SPAN) {
        const unsigned char *p = s + i;
        lane_t cls0 = quick_class(t, load_lane(p)), cls1 = quick_class(t, load_lane(p + LANE));
        uint64_t stop0 = class_bits(cls0, t->stops_openers) |
                         (class_bits(cls0, t->dash) & eq_bits(load_lane(p - 1), minus));
        uint64_t stop1 = class_bits(cls1, t->stops_openers) |
                         (class_bits(cls1, t->dash) & eq_bits(load_lane(p + LANE - 1), minus));
        if (stop0 | stop1) {
            if (!stop0) {
                parity ^= _mm512_movepi8_mask(cls0);
                i += LANE;
            }
            break;
        }
        parity ^= _mm512_movepi8_mask(_mm512_xor_si512(cls0, cls1));
    }
    *quote_parity = parity;
    return i;
}
#else
static inline __attribute__((always_inline)) size_t
quiet_lanes(const quick_table *t, const unsigned char *s, size_t len, size_t i,
            uint64_t *quote_parity, utf8_watch *watch)
{
    lane_t stopping = load_lane(t->stops_openers), dash = load_lane(t->dash);
    lane_t minus = load_lane(t->minus);
    for (; i + QUIET_SPAN <= len; i += QUIET_SPAN) {
        lane_t found = _mm256_setzero_si256(), quotes = _mm256_setzero_si256();
        _Pragma("GCC unroll 4") for (size_t k = 0; k < QUIET_SPAN / LANE; k++) {
            const unsigned char *p = s + i + LANE * k;
            lane_t cls = quick_class(t, load_lane(p));
            lane_t second_dash = and_lanes(and_lanes(cls, dash), eq(load_lane(p - 1), minus));
            found = or_lanes(found, or_lanes(and_lanes(cls, stopping), second_dash));
            quotes = _mm256_xor_si256(quotes, cls);
        }
        if (!_mm256_testz_si256(found, found))
            break;
        if (watch)
            watch_span(watch, s, i, QUIET_SPAN / LANE, false);
        *quote_parity ^= bits_of(quotes);
    }
    return i;
}
#endif

/* Of the BLOCK bytes at p, those right after a backslash or a prefix
 * byte, with no state carried from one block to the next: p[-1] is
 * read. */
typedef struct bytes_after {
    uint64_t backslash, prefix;
} bytes_after;

#if LANE == 64
/* The rows the blocks are compared with, loaded once before the loop,
 * and each block's bytes, loaded once: all kept in registers
 * (in_register).  Where the optimiser folded the loads into the compares
 * that read them, the MySQL batches ran slower (docs/PERFORMANCE.md,
 * "Choices in the code"). */
typedef struct escaping_rows {
    lane_t nibble, by_low, by_high, ending, dash, backslash, prefix_letter;
    lane_t backslash_byte, minus, ampersand;
} escaping_rows;

/* The optimiser can no longer fold the load that made `row` into the
 * instructions that read it. */
static inline __attribute__((always_inline)) lane_t in_register(lane_t row)
{
    __asm__("" : "+v"(row));
    return row;
}

static inline __attribute__((always_inline)) escaping_rows escaping_rows_of(const quick_table *t)
{
    const needles *n = needle_table();
    return (escaping_rows){
        in_register(load_lane(t->nibble)), in_register(load_lane(t->by_low)),
        in_register(load_lane(t->by_high)), in_register(load_lane(t->stops_openers_escaping)),
        in_register(load_lane(t->dash)), in_register(load_lane(t->backslash)),
        in_register(load_lane(t->prefix_letter)), in_register(needle(n, BACKSLASH)),
        in_register(needle(n, DASH)), in_register(needle(n, AMPERSAND))};
}

/* The block at p where backslashes escape: its quotes and backslashes
 * (the rest of *b may be left unset) and the bytes after backslashes and
 * prefixes (here also after h and r: Q_PREFIX_LETTER).  Returns the bytes
 * that end quiet_escaping_spans: one that stops the scan, an opener, a
 * dash after a dash, a backslash after a backslash. */
static inline __attribute__((always_inline)) uint64_t
escaping_block(const escaping_rows *r, const unsigned char *p, quick_bytes *b, bytes_after *after)
{
    lane_t v = in_register(load_lane(p)), w = in_register(load_lane(p - 1));
    lane_t cls = class_of(v, r->nibble, r->by_low, r->by_high);
    b->quote = _mm512_movepi8_mask(cls);
    b->backslash = _mm512_test_epi8_mask(cls, r->backslash);
    uint64_t prefix = _mm512_test_epi8_mask(cls, r->prefix_letter) | eq_bits(v, r->ampersand);
    *after = (bytes_after){eq_bits(w, r->backslash_byte), prefix << 1 | is_prefix(p[-1])};
    return _mm512_test_epi8_mask(cls, r->ending) |
           (_mm512_test_epi8_mask(cls, r->dash) & eq_bits(w, r->minus)) |
           (b->backslash & after->backslash);
}
#else
typedef const quick_table *escaping_rows;

static inline const quick_table *escaping_rows_of(const quick_table *t)
{
    return t;
}

/* as above, the classes kept in lanes: whether a byte ends the spans is
 * found by one test of both lanes (all ones for any), and only the
 * quotes, backslashes and prefixes become masks (the moves to masks are
 * what cost here; with a mask for each class, the MySQL batches took
 * 1.14-1.17 times as long). */
static inline __attribute__((always_inline)) uint64_t
escaping_block(const escaping_rows *rows, const unsigned char *p, quick_bytes *b,
               bytes_after *after)
{
    const quick_table *t = *rows;
    lane_t nibble = load_lane(t->nibble), by_low = load_lane(t->by_low);
    lane_t by_high = load_lane(t->by_high), ending = load_lane(t->stops_openers_escaping);
    lane_t dash = load_lane(t->dash), backslash_class = load_lane(t->backslash);
    lane_t minus = load_lane(t->minus), ampersand = load_lane(t->ampersand);
    lane_t backslash_byte = needle(needle_table(), BACKSLASH);
    lane_t ends = _mm256_setzero_si256();
    uint64_t quote = 0, backslash = 0, prefix = 0;
    _Pragma("GCC unroll 2") for (size_t k = 0; k < LANES; k++) {
        unsigned shift = (unsigned)(LANE * k);
        lane_t v = load_lane(p + LANE * k), before = load_lane(p + LANE * k - 1);
        lane_t cls = class_of(v, nibble, by_low, by_high);
        /* the class bits that end the spans after a dash and after a backslash */
        lane_t pairs = or_lanes(and_lanes(dash, eq(before, minus)),
                                and_lanes(backslash_class, eq(before, backslash_byte)));
        ends = or_lanes(ends, and_lanes(cls, or_lanes(ending, pairs)));
        quote |= bits_of(cls) << shift; /* Q_QUOTE is the top bit */
        backslash |= bits_of(_mm256_slli_epi16(cls, 5)) << shift;
        prefix |= bits_of(or_lanes(_mm256_slli_epi16(cls, 6), eq(v, ampersand))) << shift;
    }
    if (!_mm256_testz_si256(ends, ends))
        return ~0ull;
    b->quote = quote;
    b->backslash = backslash;
    *after = (bytes_after){backslash << 1 | (p[-1] == '\\'), prefix << 1 | is_prefix(p[-1])};
    return 0;
}
#endif

/* quiet_lanes where backslashes escape: on from i (past the text's first
 * byte), 64 bytes at a time while, besides what quiet_lanes passes, each
 * backslash is in a string and escapes the byte after it (none follows
 * another) and no string opens after a prefix.  The escaped quotes do not
 * count (*escaped_quotes: their parity; follow_doubler follows them where
 * *doubler is not settled).  Returns where the spans go on (*escape_carry: 1 where
 * that byte is escaped; *quote_parity: a string is open there when
 * odd). */
static inline __attribute__((always_inline)) size_t
quiet_escaping_spans(const quick_table *t, const unsigned char *s, size_t len, size_t i,
                     uint64_t *quote_parity, uint64_t *escape_carry, unsigned *escaped_quotes,
                     doubler_reading *doubler, bool *doubler_asked, utf8_watch *watch)
{
    /* Escapes are read off the byte before, which holds while no
     * backslash is escaped: not where byte i - 1 is one. */
    if ((s[i - 1] == '\\') != (*escape_carry != 0))
        return i;
    uint64_t open = __builtin_parityll(*quote_parity) ? ~0ull : 0; /* all ones in a string */
    escaping_rows rows = escaping_rows_of(t);
    for (; i + BLOCK <= len; i += BLOCK) {
        quick_bytes b;
        bytes_after after;
        if (escaping_block(&rows, s + i, &b, &after))
            break;
        if (watch)
            watch_span(watch, s, i, LANES, true);
        uint64_t quote = b.quote & ~after.backslash;
        uint64_t in_string = prefix_xor(quote) ^ open;
        /* a backslash in code; a string that opens after a prefix */
        if ((b.backslash & ~in_string) | (quote & after.prefix & in_string))
            break;
        *escaped_quotes ^= (unsigned)__builtin_parityll(b.quote & after.backslash);
        if (*doubler != DOUBLER_SETTLED)
            follow_doubler(doubler, doubler_asked, b.quote & after.backslash, b.backslash, 0, 0,
                           in_string, s, len, i);
        open = 0 - (in_string >> 63); /* all ones when the top bit is set */
    }
    *quote_parity = open & 1; /* only its parity counts */
    *escape_carry = s[i - 1] == '\\';
    return i;
}
#endif

/* Whether one of the quotes `quotes` (bit k: s[at + k], after the
 * text's first byte) follows a prefix byte. */
static inline bool quotes_follow_prefix(const unsigned char *s, size_t at, uint64_t quotes)
{
    for (; quotes; quotes &= quotes - 1)
        if (is_prefix(s[at + (size_t)__builtin_ctzll(quotes) - 1]))
            return true;
    return false;
}

/* Whether the rows mark underscores (QUICK_ROWS). */
static inline bool marks_underscores(const quick_table *table)
{
#ifdef __AVX2__
    return table->introducers;
#else
    (void)table; /* the SSE2 build reads no text as letters */
    return false;
#endif
}

/* MySQL: whether a quote follows an introducer (qg_introduced_string_in)
 * from one of the underscores `bits` on (bit k: s[at + k]).  One after a
 * word byte starts none (most texts hold only such, in names); from the
 * first that may start one, the scalar search reads the rest. */
static inline __attribute__((always_inline)) bool
introducer_among(const unsigned char *s, size_t len, size_t at, uint64_t bits)
{
    for (; bits; bits &= bits - 1) {
        size_t u = at + (size_t)__builtin_ctzll(bits);
        if (u == 0 || !qg_ascii_word_byte(s[u - 1], 0))
            return qg_introduced_string_in(s + u, len - u);
    }
    return false;
}

/* introducer_among for the underscores in s[from, to) (from > 0), which
 * the spans stepped over: a comment's text. */
static bool introducer_between(const unsigned char *s, size_t len, size_t from, size_t to)
{
    for (const unsigned char *u = memchr(s + from, '_', to - from); u;
         u = memchr(u + 1, '_', (size_t)(s + to - u - 1)))
        if (!qg_ascii_word_byte(u[-1], 0))
            return qg_introduced_string_in(u, len - (size_t)(u - s));
    return false;
}

/* The quick scan's spans of `lanes` lanes from i on (`quote_parity`: of
 * the delimiters before i; the text holds at least a span).  Where
 * `names`, PG's quoted names are read (*name_open: one is open where the
 * scan stops); else double quotes stop the scan.  Where
 * `escaping`, a backslash must be inside a string, where it escapes the
 * next byte; the quote it escapes does not count; and no string may open
 * after a prefix.  MySQL, where backslashes escape: *doubler_comment is
 * set where a quote doubler's reading is to be compared (follow_doubler),
 * and a comment holding a backslash stops the scan (the checker's
 * escaped_quote_before_comment pairs backslashes in comments too).
 * `watch`: where not NULL, every byte the scan passes is validated. */
static inline __attribute__((always_inline)) int
quick_lanes(const quick_table *table, const unsigned char *s, size_t len, size_t *from,
            uint64_t *quote_parity, bool *name_open, const qg_context *ctx, int lanes, bool names,
            bool escaping, bool *doubler_comment, utf8_watch *watch)
{
    const size_t span = (size_t)LANE * (size_t)lanes;
    bool in_name = names && *name_open;
    bool mysql_escapes = ctx->dialect == QG_DIALECT_MYSQL && qg_plain_strings_escape(ctx);
    uint64_t escape_carry = 0; /* 1: the next span's first byte is escaped */
    unsigned escaped_quotes = 0; /* their parity before the span */
    doubler_reading doubler = mysql_escapes ? DOUBLER_UNSEEN : DOUBLER_SETTLED;
    for (size_t i = *from; i < len;) {
        uint64_t escaped_quote = 0; /* the span's */
#ifdef __AVX2__
        /* Where escapes are read, a block before the end is enough: in a
         * statement the bytes after its first backslash are often fewer
         * than QUIET_SPAN (docs/PERFORMANCE.md, "Choices in the code"). */
        if (!names && i > 0 && i + (escaping ? BLOCK : QUIET_SPAN) <= len &&
            (i = escaping ? quiet_escaping_spans(table, s, len, i, quote_parity, &escape_carry,
                                                 &escaped_quotes, &doubler, doubler_comment, watch)
                          : quiet_lanes(table, s, len, i, quote_parity, watch)) == len)
            break;
#endif
        /* The last span overlaps the one before, and a span after a
         * comment may start inside the one before: its first i - at bytes
         * were read already. */
        size_t at = i + span <= len ? i : len - span;
        unsigned seen = (unsigned)(i - at);
        quick_bytes b;
        int lane = quick_classify(table, s + at, lanes, &b, names, escaping);
        if (lane != LANE_READ) {
            *from = i;
            if (names)
                *name_open = in_name;
            return lane;
        }
        if (watch)
            watch_span(watch, s, at, lanes, escaping);
        if (marks_underscores(table) && (b.underscore >> seen) &&
            introducer_among(s, len, i, b.underscore >> seen))
            return LANE_STOP;
        uint64_t quote = b.quote >> seen;
        unsigned char before = at > 0 ? s[at - 1] : ' ';
        uint64_t dashes = b.dash & (b.dash << 1 | (before == '-'));
        uint64_t openers = (b.opener | dashes) >> seen;
        bool open = __builtin_parityll(*quote_parity);
        if (names && ((b.dquote >> seen) | in_name)) {
            delimiters d = lane_delimiters(quote, b.dquote >> seen, open, in_name);
            quote = d.bits;
            in_name = d.in_name;
        }
        uint64_t backslash = 0, in_string = 0;
        if (escaping) {
            /* No branch on whether the span holds a backslash: in a text
             * with escapes, about half the spans do, and it would guess
             * wrong.  A backslash escaped by one is rare. */
            backslash = b.backslash >> seen;
            uint64_t escaped;
            if (!(backslash & (backslash << 1 | escape_carry))) {
                /* no backslash escaped: each escapes the byte after it */
                escaped = backslash << 1 | escape_carry;
                escape_carry = span - seen == 64 ? backslash >> 63
                                                 : (escaped >> (span - seen)) & 1;
            } else if (span - seen == 64) {
                escaped = escaped_bytes(backslash, &escape_carry);
            } else {
                escaped = escaped_by(backslash, escape_carry);
                escape_carry = (escaped >> (span - seen)) & 1; /* the byte after the span */
            }
            escaped_quote = quote & escaped;
            quote &= ~escaped;
            in_string = prefix_xor(quote) ^ (open ? ~0ull : 0);
            uint64_t after_prefix = (b.prefix << 1 | is_prefix(before)) >> seen;
            /* a backslash in code; a quote that opens a string after a
             * prefix (b.prefix may hold h and r too: each is tested) */
            uint64_t opening = quote & after_prefix & in_string;
            if ((backslash & ~in_string) || (opening && quotes_follow_prefix(s, i, opening)))
                return LANE_STOP;
        }
        if (openers) {
            /* A quote doubler reads an escaped quote as a literal's end: a
             * comment after an odd number of them is inside its literal,
             * and may hide the quote that leaves over where one follows
             * (the lexer's and the checker's: doubler_sees_literal in
             * src/core/lexer.c). */
            uint64_t all_quotes = quote, before_comment = 0;
            size_t comment_at = 0;
            size_t end = quick_comment(s, len, i, at, lanes, openers, &quote, open, ctx,
                                       &before_comment, &comment_at);
            if (!end)
                return LANE_STOP;
            if (end != SIZE_MAX) {
                /* (where escapes are not read, the span's own bytes held no
                 * backslash) */
                if (mysql_escapes && (escaping || end > at + span) &&
                    memchr(s + comment_at, '\\', end - comment_at))
                    return LANE_STOP;
                /* the span's bytes up to the comment's opener (the rest are
                 * read again from its end) */
                uint64_t through = before_comment << 1 | 1;
                if (escaping && doubler != DOUBLER_SETTLED)
                    follow_doubler(&doubler, doubler_comment, escaped_quote & through,
                                   backslash & through, (b.opener >> seen) & through,
                                   (dashes >> seen) & through, in_string, s, len, i);
                escaped_quotes ^= (unsigned)__builtin_parityll(escaped_quote & before_comment);
                if (escaped_quotes &&
                    qg_quote_after(s, len, i + (size_t)__builtin_popcountll(before_comment), 1))
                    return LANE_STOP;
                *quote_parity ^= quote;
                /* A comment that ends inside the span, with nothing after it
                 * that opens another: the span's later quotes count and the
                 * next span follows as usual, so the next load need not
                 * wait for the comment's end.  (Where names or escapes are
                 * read, the span's other bits took the comment's quotes
                 * for delimiters.) */
                size_t span_end = at + span;
                if (!names && !escaping && end < span_end) {
                    uint64_t after = ~0ull << (end - i);
                    if (!(openers & after)) {
                        *quote_parity ^= all_quotes & after;
                        i = span_end;
                        continue;
                    }
                }
                if (marks_underscores(table) && end > at + span &&
                    introducer_between(s, len, at + span, end))
                    return LANE_STOP;
                in_name = false; /* the comment is in code */
                i = end;
                escape_carry = 0;
                continue;
            }
        }
        if (escaping && doubler != DOUBLER_SETTLED)
            follow_doubler(&doubler, doubler_comment, escaped_quote, backslash, b.opener >> seen,
                           dashes >> seen, in_string, s, len, i);
        *quote_parity ^= quote;
        escaped_quotes ^= (unsigned)__builtin_parityll(escaped_quote);
        i = at + span;
    }
    return LANE_READ;
}

/* quick_lanes two lanes at a time where the text holds two. */
static inline __attribute__((always_inline)) int
quick_spans(const quick_table *table, const unsigned char *s, size_t len, size_t *from,
            uint64_t *quote_parity, bool *name_open, const qg_context *ctx, bool names,
            bool escaping, bool *doubler_comment, utf8_watch *watch)
{
    if (LANE < 64 && len >= 2 * (size_t)LANE)
        return quick_lanes(table, s, len, from, quote_parity, name_open, ctx, 2, names, escaping,
                           doubler_comment, watch);
    return quick_lanes(table, s, len, from, quote_parity, name_open, ctx, 1, names, escaping,
                       doubler_comment, watch);
}

/* Whether a quote in s[0, upto) follows a prefix byte (len: the text's,
 * at least a lane). */
static bool quote_after_prefix(const needles *n, const unsigned char *s, size_t len, size_t upto)
{
    for (size_t i = 0; i < upto; i += LANE) {
        size_t at = i + LANE <= len ? i : len - LANE;
        lane_t v = load_lane(s + at);
        uint64_t prefix = prefix_bits(v, needle(n, SPACE), needle(n, LOWER_X), needle(n, LOWER_B),
                                      needle(n, AMPERSAND));
        uint64_t quote = eq_bits(v, needle(n, QUOTE));
        if (upto - at < LANE)
            quote &= (1ull << (upto - at)) - 1;
        if (quote & (prefix << 1 | (at > 0 && is_prefix(s[at - 1]))))
            return true;
    }
    return false;
}

/* MySQL: whether the string open at `from` (where the quotes before it
 * are odd) follows a prefix.  The text before `from` holds no backslash:
 * strings that closed there read alike either way, and MySQL's strings do
 * not go on across whitespace as PG's do.  Everything after the text's
 * last quote before `from` is the open string's, and that quote opened it
 * or doubled one: X'' and B'' end at their first quote, so after a doubled
 * quote the string is a plain one. */
static bool open_string_after_prefix(const unsigned char *s, size_t from, uint64_t quote_parity)
{
    if (!__builtin_parityll(quote_parity))
        return false;
    const unsigned char *quote = memrchr(s, '\'', from);
    return !quote || (quote > s && is_prefix(quote[-1]));
}

/* What the scan found where its spans ended with `lane`: an odd count of
 * delimiters leaves the last string open. */
static inline qg_quick_reading settled(int lane, uint64_t quote_parity)
{
    if (lane == LANE_HIGH)
        return QG_QUICK_MULTIBYTE;
    return lane == LANE_READ && !__builtin_parityll(quote_parity) ? QG_QUICK_CLEAN
                                                                  : QG_QUICK_UNSETTLED;
}

/* Where the scan goes on out of line: the text (padded where short), the
 * byte it goes on from, the delimiters before it.  Passed by its address,
 * so that the calls' arguments fit in registers and the scan that calls
 * them saves no more of its own. */
typedef struct scan_rest {
    const unsigned char *s;
    size_t len, from;
    uint64_t quote_parity;
} scan_rest;

static qg_quick_reading quick_scan_rest(const quick_table *table, const scan_rest *rest,
                                        const qg_context *ctx, bool names);
#ifdef QUICK_SCAN_UTF8
static qg_quick_reading quick_scan_rest_watched(const quick_table *table, const scan_rest *rest,
                                                const qg_context *ctx, bool names,
                                                utf8_watch *watch);
#endif

/* The scan goes on out of line (quick_scan_rest) in the build that
 * matches `watch`. */
static inline __attribute__((always_inline)) qg_quick_reading
go_on(const quick_table *table, const scan_rest *rest, const qg_context *ctx, bool names,
      utf8_watch *watch)
{
#ifdef QUICK_SCAN_UTF8
    if (watch)
        return quick_scan_rest_watched(table, rest, ctx, names, watch);
#else
    (void)watch; /* validated in the AVX2 build */
#endif
    return quick_scan_rest(table, rest, ctx, names);
}

/* On from the lane where the quick scan met a backslash, in a text where
 * the server reads backslash escapes: out of line, so that the scan of
 * every other text keeps its registers.  In PG a string there may have
 * begun anywhere before (a doubled quote goes on with U&'', a newline
 * with B''): no quote before may follow a prefix. */
static inline __attribute__((always_inline)) qg_quick_reading
escaping_scan(const quick_table *table, const scan_rest *rest, const qg_context *ctx,
              utf8_watch *watch)
{
    const unsigned char *s = rest->s;
    size_t len = rest->len, from = rest->from;
    uint64_t quote_parity = rest->quote_parity;
    if (ctx->dialect == QG_DIALECT_POSTGRES ? quote_after_prefix(needle_table(), s, len, from)
                                            : open_string_after_prefix(s, from, quote_parity))
        return QG_QUICK_UNSETTLED;
    bool no_name = false; /* names are not read here */
    bool doubler_comment = false;
    int lane = quick_spans(table, s, len, &from, &quote_parity, &no_name, ctx, false, true,
                           &doubler_comment, watch);
    if (lane != LANE_READ || __builtin_parityll(quote_parity))
        return lane == LANE_HIGH ? QG_QUICK_MULTIBYTE : QG_QUICK_UNSETTLED;
    return doubler_comment ? QG_QUICK_DOUBLER : QG_QUICK_CLEAN;
}

/* On from the lane where the quick scan met a PG quoted name (a double
 * quote): out of line, as above. */
static inline __attribute__((always_inline)) qg_quick_reading
names_scan(const quick_table *table, const scan_rest *rest, const qg_context *ctx,
           utf8_watch *watch)
{
    scan_rest on = *rest;
    bool in_name = false, no_doubler = false; /* PG's */
    int lane = quick_spans(table, on.s, on.len, &on.from, &on.quote_parity, &in_name, ctx, true,
                           false, &no_doubler, watch);
    if (lane == LANE_BACKSLASH && qg_plain_strings_escape(ctx) && !in_name)
        return go_on(table, &on, ctx, false, watch);
    return settled(lane, on.quote_parity);
}

/* The parts out of line (`names`: the names scan, else the escaping
 * scan), built twice, with no watch and with one, so that the scan of a
 * text that is not validated tests no watch in its loops. */
static __attribute__((noinline)) qg_quick_reading
quick_scan_rest(const quick_table *table, const scan_rest *rest, const qg_context *ctx, bool names)
{
    return names ? names_scan(table, rest, ctx, NULL) : escaping_scan(table, rest, ctx, NULL);
}

#ifdef QUICK_SCAN_UTF8
static __attribute__((noinline)) qg_quick_reading
quick_scan_rest_watched(const quick_table *table, const scan_rest *rest, const qg_context *ctx,
                        bool names, utf8_watch *watch)
{
    return names ? names_scan(table, rest, ctx, watch) : escaping_scan(table, rest, ctx, watch);
}
#endif

static inline __attribute__((always_inline)) qg_quick_reading
quick_scan_with(const quick_table *table, const qg_context *ctx, const char *sql, size_t len,
                utf8_watch *watch)
{
    const unsigned char *s = (const unsigned char *)sql;
    if (len == 0)
        return QG_QUICK_CLEAN; /* nothing to read; sql may be NULL */
    unsigned char padded[LANE];
    if (len < LANE) {
#if LANE == 64
        /* a masked load reads no byte past the text's end */
        __m512i spaces = _mm512_set1_epi8(' ');
        __mmask64 text = _bzhi_u64(~0ull, (unsigned)len);
        _mm512_storeu_si512(padded, _mm512_mask_loadu_epi8(spaces, text, s));
#else
        memset(padded, ' ', sizeof padded);
        memcpy(padded, s, len);
#endif
        s = padded;
        len = LANE;
    }
    uint64_t quote_parity = 0;
    size_t from = 0;
    bool no_name = false;         /* names are read in names_scan */
    bool no_doubler_comment = false; /* no escape read here */
    int lane = quick_spans(table, s, len, &from, &quote_parity, &no_name, ctx, false, false,
                           &no_doubler_comment, watch);
    if (__builtin_expect(lane == LANE_READ, 1))
        return settled(lane, quote_parity);
    scan_rest rest = {s, len, from, quote_parity};
    if (lane == LANE_NAME && ctx->dialect == QG_DIALECT_POSTGRES)
        return go_on(table, &rest, ctx, true, watch);
    if (lane == LANE_BACKSLASH && qg_plain_strings_escape(ctx))
        return go_on(table, &rest, ctx, false, watch);
    return settled(lane, quote_parity);
}

QG_HOT qg_quick_reading QUICK_SCAN(const qg_context *ctx, const char *sql, size_t len)
{
    return quick_scan_with(QUICK_TABLE(&quick_rows), ctx, sql, len, NULL);
}

#ifdef QUICK_SCAN_LETTERS
/* Not QG_HOT, as the block skip: only texts with characters of more than
 * one byte come here. */
qg_quick_reading QUICK_SCAN_LETTERS(const qg_context *ctx, const char *sql, size_t len)
{
    if (ctx->dialect == QG_DIALECT_MYSQL) /* each with its rows known */
        return quick_scan_with(QUICK_TABLE(&mysql_letter_rows), ctx, sql, len, NULL);
    return quick_scan_with(QUICK_TABLE(&letter_rows), ctx, sql, len, NULL);
}
#endif

#ifdef QUICK_SCAN_UTF8
/* QUICK_SCAN_LETTERS on a UTF-8 text as it is, validated as it is read
 * (utf8_watch): one reading where a validation and a scan were two. */
qg_quick_reading QUICK_SCAN_UTF8(const qg_context *ctx, const encoding_dfa_t *dfa, const char *sql,
                                 size_t len)
{
    const unsigned char *s = (const unsigned char *)sql;
    utf8_watch watch = {utf8_rows_of(dfa), _mm256_setzero_si256()};
    qg_quick_reading reading =
        ctx->dialect == QG_DIALECT_MYSQL
            ? quick_scan_with(QUICK_TABLE(&mysql_letter_rows), ctx, sql, len, &watch)
            : quick_scan_with(QUICK_TABLE(&letter_rows), ctx, sql, len, &watch);
    if (reading == QG_QUICK_UNSETTLED || !_mm256_testz_si256(watch.wrong, watch.wrong))
        return QG_QUICK_UNSETTLED;
    /* The last character must be whole: the spaces a short text is
     * padded with were read after it, a longer text's end is read here. */
    if (len >= LANE && (s[len - 1] >= 0xc0 || s[len - 2] >= 0xe0 || s[len - 3] >= 0xf0))
        return QG_QUICK_UNSETTLED;
    return reading;
}
#endif
#endif
