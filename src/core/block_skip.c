/*
 * The checker's vector scans (lexer_internal.h).  The block skip: 64 bytes
 * at a time, string literals found by the parity of their quotes, the lexer
 * called only where something other than code and plain strings begins.
 * The quick scan: two lanes at a time (one in a text shorter than two; one
 * of 64 bytes in the AVX-512 build), whether a text is code, plain strings
 * and comments only.  Built three times: with SSE2 (16-byte lanes) as
 * qg_skip_quiet_sse2 and qg_quick_scan_sse2; compiled with -mavx2, with
 * 32-byte lanes as qg_skip_quiet_avx2 and qg_quick_scan_avx2 (with PCLMUL
 * for the quote parity and BMI2's shift for the automaton); and, compiled
 * with -mavx512bw too, the quick scan alone (SKIP_QUIET undefined) with
 * 64-byte lanes as qg_quick_scan_avx512.  The algorithm is written once,
 * here; each build's lanes and names are in its header (simd_sse2.h,
 * simd_avx2.h, simd_avx512.h); src/core/vectors.c puts each build's
 * functions in its table and picks the widest build the CPU runs.  The AVX2 build also counts characters for the rewriter's
 * padding, with the checker's tests of multibyte blocks
 * (qg_count_chars_avx2).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__AVX2__) || defined(__PCLMUL__)
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "block_scalar.h"
#include "encoding_tables.h"
#include "hot.h"
#include "lexer_internal.h"
#include "quoteguard.h"

#if defined(__AVX2__) || defined(__SSE2__)

#define BLOCK 64

/* The lanes of this build, and the scans it provides. */
#if defined(__AVX512BW__)
#include "simd_avx512.h"
#elif defined(__AVX2__)
#include "simd_avx2.h"
#else
#include "simd_sse2.h"
#endif

#define LANES (BLOCK / LANE)

/* Bit i of each mask stands for byte i of a 64-byte block. */
typedef struct block_masks {
    uint64_t quote;     /* ' */
    uint64_t backslash; /* \ */
    uint64_t bad;       /* NUL (and high bytes unless `high`): the lexer reads them */
    uint64_t special;   /* starts something other than a string when in code */
    uint64_t high;      /* high bytes, when counted apart */
} block_masks;

/* The bytes the blocks are compared with, a lane of each, read from
 * memory by the compares themselves.  Each skip hides the table's address
 * from the optimiser (needle_table), which would otherwise build every
 * needle again in registers, three instructions, at every compare. */
#define NEEDLE(c) {[0 ... LANE - 1] = (c)}
typedef struct needles {
    unsigned char lane[16][LANE];
} needles;
static const needles needle_bytes __attribute__((aligned(LANE))) = {{
    NEEDLE('\''), NEEDLE('\\'), NEEDLE(0),   NEEDLE('-'),  NEEDLE('/'),  NEEDLE('*'),
    NEEDLE('"'),  NEEDLE('$'),  NEEDLE('`'), NEEDLE('#'),  NEEDLE(' '),  NEEDLE('x'),
    NEEDLE('b'),  NEEDLE('&'),  NEEDLE('\n'), NEEDLE('\r'),
}};
enum {
    QUOTE, BACKSLASH, NUL, DASH, SLASH, STAR, DQUOTE, DOLLAR, BACKTICK, HASH,
    SPACE, LOWER_X, LOWER_B, AMPERSAND, /* for prefix_bits */
    NEWLINE, RETURN /* for comment_end_in_span */
};

static inline const needles *needle_table(void)
{
    const needles *table = &needle_bytes;
    __asm__("" : "+r"(table));
    return table;
}

static inline lane_t needle(const needles *table, int which)
{
    return load_lane(table->lane[which]);
}

#ifdef SKIP_QUIET
/* Masks of the 64 bytes in v[]; `after` is the byte that follows them (a
 * space at the end of the input), which completes the pairs "--" and
 * slash-star.  The following bytes are shifted in from the registers, so
 * that no load straddles what was just stored. */
static inline __attribute__((always_inline)) block_masks
classify_block(const needles *n, const lane_t v[LANES], unsigned char after, bool pg,
               bool high_apart)
{
    block_masks m = {0, 0, 0, 0, 0};
#pragma GCC unroll 4
    for (int i = 0; i < LANES; i++) {
        unsigned shift = (unsigned)(LANE * i);
        lane_t next = next_bytes(v[i], i + 1 < LANES ? v[i + 1] : one_byte(after));
        lane_t pairs = or_lanes(and_lanes(eq(v[i], needle(n, DASH)), eq(next, needle(n, DASH))),
                                and_lanes(eq(v[i], needle(n, SLASH)), eq(next, needle(n, STAR))));
        m.quote |= bits_of(eq(v[i], needle(n, QUOTE))) << shift;
        m.backslash |= bits_of(eq(v[i], needle(n, BACKSLASH))) << shift;
        lane_t bad = eq(v[i], needle(n, NUL));
        if (high_apart)
            m.high |= bits_of(v[i]) << shift; /* the top bit of each byte */
        else
            bad = or_lanes(bad, v[i]);
        m.bad |= bits_of(bad) << shift;
        lane_t others = pg ? eq(v[i], needle(n, DOLLAR))
                           : or_lanes(eq(v[i], needle(n, BACKTICK)), eq(v[i], needle(n, HASH)));
        m.special |= bits_of(or_lanes(or_lanes(pairs, eq(v[i], needle(n, DQUOTE))), others))
                     << shift;
    }
    return m;
}

static inline __attribute__((always_inline)) block_masks
classify_at(const needles *n, const unsigned char *p, unsigned char after, bool pg,
            bool high_apart)
{
    lane_t v[LANES];
    for (size_t i = 0; i < LANES; i++)
        v[i] = load_lane(p + LANE * i);
    return classify_block(n, v, after, pg, high_apart);
}

/* The masks of the `valid` (1..64) bytes from p to the end of the input
 * at s + len, bit 0 for p[0] and none past the end.  When the input holds
 * a whole block, its last 64 bytes are read and the masks shifted; else
 * the bytes are copied into a block of spaces. */
static inline __attribute__((always_inline)) block_masks
classify_last_block(const needles *n, const unsigned char *s, size_t len, const unsigned char *p,
                    size_t valid, bool pg, bool high_apart)
{
    if (len >= BLOCK) {
        block_masks m = classify_at(n, s + len - BLOCK, ' ', pg, high_apart);
        unsigned shift = (unsigned)(BLOCK - valid);
        return (block_masks){m.quote >> shift, m.backslash >> shift, m.bad >> shift,
                             m.special >> shift, m.high >> shift};
    }
    unsigned char tail[BLOCK];
    memset(tail, ' ', sizeof tail);
    memcpy(tail, p, valid);
    return classify_at(n, tail, ' ', pg, high_apart);
}
#endif

/* Bit i set when an odd number of bits at or below i are set. */
static inline uint64_t prefix_xor(uint64_t x)
{
#ifdef __PCLMUL__
    /* A carry-less product with all ones is that prefix sum, mod 2. */
    __m128i all = _mm_set1_epi8((char)0xff);
    return (uint64_t)_mm_cvtsi128_si64(_mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)x), all, 0));
#else
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    return x;
#endif
}

#define EVEN_BITS 0x5555555555555555ull

/* Bytes that follow a run of an odd number of backslashes: escaped, where
 * every backslash escapes (`carry_in`: 1 when bit 0 is escaped).  Adding a
 * run's first bit carries to the byte after it; the run was odd when that
 * byte's position and the start's differ in parity.  Of a run that
 * reaches bit 63, the byte after it is lost: see escaped_bytes. */
static inline uint64_t escaped_by(uint64_t backslash, uint64_t carry_in)
{
    backslash &= ~carry_in; /* an escaped backslash escapes nothing */
    uint64_t starts = backslash & ~(backslash << 1);
    uint64_t after_even = (backslash + (starts & EVEN_BITS)) & ~backslash;
    uint64_t after_odd = (backslash + (starts & ~EVEN_BITS)) & ~backslash;
    return (after_even & ~EVEN_BITS) | (after_odd & EVEN_BITS) | carry_in;
}

/* escaped_by for a 64-byte block: a run that reaches the block's end
 * escapes the next block's first byte when it is odd (*carry: 1 into and
 * out of the block). */
static inline uint64_t escaped_bytes(uint64_t backslash, uint64_t *carry)
{
    uint64_t escaped = escaped_by(backslash, *carry);
    backslash &= ~*carry;
    uint64_t final_run = ~backslash ? (uint64_t)__builtin_clzll(~backslash) : BLOCK;
    *carry = final_run & 1;
    return escaped;
}

#ifdef SKIP_QUIET
/* Highest set bit of `bits` as a position in the block at `pos`. */
static inline size_t last_bit(size_t pos, uint64_t bits)
{
    return pos + 63 - (size_t)__builtin_clzll(bits);
}

/* The parity of the bits below bit `at` (0 to 64).  Most blocks have
 * none (no quote escaped by a backslash). */
static inline unsigned parity_below(uint64_t bits, unsigned at)
{
    if (!bits)
        return 0;
    return (unsigned)__builtin_parityll(at >= 64 ? bits : bits & ((1ull << at) - 1));
}

/* Where S reads backslash escapes, at a byte the automaton stopped at
 * between characters: whether S and N still read alike.  N takes a trail
 * byte 0x5c for an escape and S does not, which parts them only where a
 * quote or backslash follows it; S escaping a character is the lexer's.
 * *last_stop and *escaper (the last backslash that escapes) carry over
 * from the stops before. */
static inline bool stop_reads_alike(const unsigned char *p, size_t at, size_t end,
                                    size_t *last_stop, size_t *escaper)
{
    unsigned char c = p[at];
    bool after_trail = at > 0 && p[at - 1] == '\\' && *last_stop != at - 1;
    if ((c == '\'' || c == '\\') && after_trail)
        return false;
    if (c == '\\') {
        if (at > 0 && *escaper == at - 1) {
            *escaper = SIZE_MAX; /* an escaped backslash */
        } else {
            *escaper = at;
            if (at + 1 < end && p[at + 1] >= 0x80)
                return false;
        }
    }
    *last_stop = at;
    return true;
}

/* Whether the string bodies of a block (`content`) that hold high bytes
 * are valid characters, read by the automaton from their first high byte,
 * or from the block's start with the state `*chars` left inside a
 * character by the block before.  A quote, backslash or backtick the
 * automaton stops at between characters is one of the string's
 * characters here.  A string must end between characters, and so must the
 * input (`valid` bytes on).  Where S reads backslash escapes (`escapes`;
 * `escaped`: the bytes N takes as escaped), S must read them as N does
 * (stop_reads_alike) and escape no character. */
static bool multibyte_strings_valid(const encoding_dfa_t *dfa, const unsigned char *p,
                                    uint64_t content, uint64_t high, bool escapes,
                                    uint64_t escaped, size_t valid, uint64_t *chars)
{
    uint64_t state = *chars, before;
    size_t last_stop = SIZE_MAX, escaper = SIZE_MAX;
    if (state && !(content & 1))
        return false; /* the string closed inside a character */
    while (content) {
        unsigned from = (unsigned)__builtin_ctzll(content);
        uint64_t rest = content >> from;
        size_t end = ~rest ? from + (unsigned)__builtin_ctzll(~rest) : BLOCK;
        uint64_t body = end == BLOCK ? content : content & ((1ull << end) - 1);
        content &= ~body;
        if (!(high & body) && !state)
            continue; /* ASCII only */
        size_t at = state ? from : (size_t)__builtin_ctzll(high & body);
        if ((escaped >> at) & 1)
            return false; /* an escaped character (before it, S reads as N) */
        while (at < end) {
            at = dfa_run(dfa->rows, p, at, end, &state, &before);
            if (state == DFA_ERROR)
                return false;
            if (state == DFA_STOP) {
                if (escapes && !stop_reads_alike(p, at, end, &last_stop, &escaper))
                    return false;
                state = before;
                at++;
            }
        }
        if (state == dfa->ambiguous)
            state = 0; /* between characters, after a backslash trail byte */
        if (state && (end < BLOCK || end == valid))
            return false;
    }
    *chars = state; /* inside a character only when it goes on past the block */
    return true;
}

#ifdef __AVX2__
/* The 16 bytes of a nibble lookup table, in both halves of a lane. */
static inline lane_t lookup_rows(const unsigned char row[16])
{
    return _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)row));
}

static inline lane_t high_nibbles(lane_t v)
{
    return and_lanes(nibbles_down(v), _mm256_set1_epi8(0x0f));
}

/* Bit i set when byte i of the 64 at p is in `set`. */
static inline uint64_t set_bits(const nibble_set *set, const unsigned char *p)
{
    lane_t low_rows = lookup_rows(set->low), high_rows = lookup_rows(set->high);
    lane_t nibble = _mm256_set1_epi8(0x0f), none = _mm256_setzero_si256();
    uint64_t bits = 0;
    for (size_t i = 0; i < LANES; i++) {
        lane_t v = load_lane(p + LANE * i);
        lane_t hit = and_lanes(lookup(low_rows, and_lanes(v, nibble)),
                               lookup(high_rows, high_nibbles(v)));
        bits |= (uint64_t)(uint32_t)~_mm256_movemask_epi8(eq(hit, none)) << (LANE * i);
    }
    return bits;
}

/* The trail bytes among and after runs of bytes that may lead a character
 * (`leads`; carry_in: 1 when bit 0 is the trail of a lead before): each
 * run starts a character, so its every second byte is a trail, and so is
 * the byte after a run of odd length. */
static inline uint64_t pair_trails(uint64_t leads, uint64_t carry_in)
{
    uint64_t after = escaped_by(leads, carry_in);
    leads &= ~carry_in;
    uint64_t starts = leads & ~(leads << 1);
    uint64_t even_runs = leads & ~(leads + (starts & EVEN_BITS)); /* runs from even bits */
    return after | (even_runs & ~EVEN_BITS) | (leads & ~even_runs & EVEN_BITS);
}

/* The second digits of GB18030's four-byte characters in a block
 * (encoding_dfa.quads), from `digits`, the digits in trail places: in a
 * chain of them two bytes apart, the first, third … are the second bytes
 * of characters, the others the fourth.  Returns the second bytes; the
 * fourth ones are those two bytes after them. */
static inline uint64_t second_digits(uint64_t digits)
{
    const uint64_t every_fourth = 0x1111111111111111ull;
    uint64_t chains = digits | ((digits << 1) & (digits >> 1)); /* made contiguous */
    uint64_t starts = chains & ~(chains << 1), seconds = 0;
    for (unsigned r = 0; r < 4; r++) {
        uint64_t phase = every_fourth << r;
        seconds |= chains & ~(chains + (starts & phase)) & phase;
    }
    return seconds;
}

/* Where the automaton's characters are pairs (encoding_dfa.pairs): whether
 * the string bodies of the block at `pos` (`content`, of `valid` bytes on)
 * are valid characters, read 64 bytes at once.  The bytes of a run of
 * those that may lead a character alternate lead and trail (pair_trails);
 * a lead must be followed by a trail, and a high byte that starts no pair
 * must be a character alone.  In GB18030 a trail may also be a digit, the
 * second or fourth byte of a character: each second one must have a fourth
 * two bytes on.  *chars as in multibyte_strings_valid: the state after a
 * lead, or inside a four-byte character.  Where S reads backslash escapes,
 * S and N must read alike: no trail byte 0x5c before a quote or backslash,
 * no escape of a high byte.  False also where it cannot tell: the
 * automaton then reads them.  *follow: the bytes that begin no character.
 * Inlined: with the arguments its callers fix (the count's constants, the
 * block skip's builds) a long multibyte literal checks faster, for more
 * code (docs/PERFORMANCE.md, "Choices in the code"). */
static inline __attribute__((always_inline)) bool
pairs_valid(const encoding_dfa_t *dfa, const unsigned char *s, size_t len, size_t pos,
            uint64_t content, uint64_t high, uint64_t quote, uint64_t backslash, bool escapes,
            uint64_t *chars, uint64_t *follow)
{
    uint64_t state = *chars;
    if (dfa->ambiguous && state >= dfa->ambiguous)
        state -= dfa->ambiguous; /* the twin of a state reads on as it */
    uint64_t carry_in = state == dfa->after_lead || (dfa->quads && state == dfa->after_digit_lead);
    uint64_t fourth_first = 0; /* a fourth byte owed by the block before */
    if (dfa->quads && state == dfa->after_digit_lead)
        fourth_first = 1;
    else if (dfa->quads && state == dfa->after_digit)
        fourth_first = 2;
    else if (state && !carry_in)
        return false;
    /* The last block's bytes are copied into a block of spaces. */
    unsigned char tail[BLOCK];
    const unsigned char *p = s + pos;
    if (len - pos < BLOCK) {
        memset(tail, ' ', sizeof tail);
        memcpy(tail, p, len - pos);
        p = tail;
    }
    uint64_t leads = set_bits(&dfa->lead, p) & content;
    uint64_t trail = pair_trails(leads, carry_in);
    uint64_t lead = leads & ~trail, digits = 0, seconds = 0;
    uint64_t trails = set_bits(&dfa->trail, p);
    if (dfa->quads) {
        digits = trail & set_bits(&dfa->digit, p) & content;
        seconds = second_digits(digits & ~fourth_first);
        uint64_t owed = (seconds << 2) | fourth_first; /* fourth bytes */
        if ((owed & ~digits) || (seconds >> 62 == 1 && !(lead >> 63)))
            return false;
        trails |= digits;
    }
    if ((trail & ~(trails & content)) ||
        (high & content & ~leads & ~trail & ~set_bits(&dfa->single, p)))
        return false;
    if (escapes && ((((trail & backslash) << 1) & (quote | backslash)) ||
                    (escaped_by(backslash & content & ~trail, 0) & high)))
        return false;
    /* A four-byte character's third byte is a lead after its second. */
    *follow = trail | (seconds << 1) | (fourth_first >> 1);
    /* into the next block */
    if (seconds >> 63)
        *chars = dfa->after_digit;
    else if (seconds >> 62)
        *chars = dfa->after_digit_lead;
    else
        *chars = lead >> 63 ? dfa->after_lead : 0;
    return true;
}

/* Bit i set when byte i of the 64 at p is wrong in UTF-8 after the three
 * bytes before it (p[-3..-1] must be readable): the pair it makes with
 * the byte before is wrong (the tables), or it is or is not a
 * continuation where a lead two or three bytes before asks otherwise. */
static inline __attribute__((always_inline)) uint64_t utf8_wrong(const encoding_dfa_t *dfa,
                                                                 const unsigned char *p)
{
    lane_t before_high = lookup_rows(dfa->utf8_before_high);
    lane_t before_low = lookup_rows(dfa->utf8_before_low), high_rows = lookup_rows(dfa->utf8_high);
    lane_t nibble = _mm256_set1_epi8(0x0f), none = _mm256_setzero_si256();
    lane_t conts = _mm256_set1_epi8((char)UTF8_CONTS);
    lane_t three = _mm256_set1_epi8((char)0xe0), four = _mm256_set1_epi8((char)0xf0);
    uint64_t wrong = 0;
    for (size_t i = 0; i < LANES; i++) {
        lane_t v = load_lane(p + LANE * i), before = load_lane(p + LANE * i - 1);
        lane_t before2 = load_lane(p + LANE * i - 2), before3 = load_lane(p + LANE * i - 3);
        lane_t by_before = and_lanes(lookup(before_high, high_nibbles(before)),
                                     lookup(before_low, and_lanes(before, nibble)));
        lane_t pair = and_lanes(by_before, lookup(high_rows, high_nibbles(v)));
        lane_t asks = or_lanes(eq(_mm256_max_epu8(before2, three), before2),
                               eq(_mm256_max_epu8(before3, four), before3));
        lane_t bad = _mm256_xor_si256(pair, and_lanes(asks, conts));
        wrong |= (uint64_t)(uint32_t)~_mm256_movemask_epi8(eq(bad, none)) << (LANE * i);
    }
    return wrong;
}

/* Where the encoding is a UTF-8 (encoding_dfa.utf8): whether the block at
 * `pos` is valid UTF-8 after the bytes before it, and so the string bodies
 * in it (`content`); where S reads backslash escapes, no high byte may be
 * escaped.  *chars as in multibyte_strings_valid: what the bytes before
 * left open is read from them; what a body at the block's end leaves open
 * is the automaton's state after its last lead.  False also where bytes
 * outside the bodies are not UTF-8: the automaton then reads the bodies. */
static bool utf8_valid(const encoding_dfa_t *dfa, const unsigned char *s, size_t len, size_t pos,
                       uint64_t content, uint64_t high, uint64_t backslash, bool escapes,
                       uint64_t *chars)
{
    if (escapes && (escaped_by(backslash & content, 0) & high))
        return false;
    const unsigned char *p = s + pos;
    if (pos >= 3 && len - pos >= BLOCK) {
        if (utf8_wrong(dfa, p))
            return false;
    } else if (len >= BLOCK + 3 && (pos >= 3 || (s[0] | s[1] | s[2]) < 0x80)) {
        /* 64 bytes of the text, moved to the block: its first three bytes,
         * ASCII, cannot be wrong; at its end the last character must be
         * whole. */
        size_t at = pos < 3 ? 3 : len - BLOCK;
        uint64_t wrong = utf8_wrong(dfa, s + at);
        if ((pos < 3 ? wrong << (at - pos) : wrong >> (pos - at)) ||
            (pos >= 3 && (s[len - 1] >= 0xc0 || s[len - 2] >= 0xe0 || s[len - 3] >= 0xf0)))
            return false;
    } else {
        /* The block and three bytes before, spaces before the text and
         * after its end. */
        unsigned char copy[3 + BLOCK];
        size_t start = pos < 3 ? 3 - pos : 0;
        size_t end = len - pos < BLOCK ? 3 + len - pos : sizeof copy;
        memset(copy, ' ', sizeof copy);
        memcpy(copy + start, s + pos + start - 3, end - start);
        if (utf8_wrong(dfa, copy + 3))
            return false;
    }
    uint64_t state = 0;
    if ((content >> 63) && p[BLOCK - 1] >= 0x80) {
        size_t lead = BLOCK - 1; /* a character from 60 on ends with the block */
        while (lead > BLOCK - 3 && p[lead] < 0xc0)
            lead--;
        for (size_t at = lead; at < BLOCK && p[lead] >= 0xc0; at++)
            state = (dfa->rows[p[at]] >> state) & 63;
        if (state >= DFA_STOP)
            return false;
    }
    *chars = state; /* 0 also after a character that ends with the block */
    return true;
}
#else
/* SSE2 has no byte shuffle for the lookups: the automaton reads them. */
static inline bool pairs_valid(const encoding_dfa_t *dfa, const unsigned char *s, size_t len,
                               size_t pos, uint64_t content, uint64_t high, uint64_t quote,
                               uint64_t backslash, bool escapes, uint64_t *chars, uint64_t *follow)
{
    (void)dfa, (void)s, (void)len, (void)pos, (void)content, (void)high, (void)quote;
    (void)backslash, (void)escapes, (void)chars, (void)follow;
    return false;
}
static inline bool utf8_valid(const encoding_dfa_t *dfa, const unsigned char *s, size_t len,
                              size_t pos, uint64_t content, uint64_t high, uint64_t backslash,
                              bool escapes, uint64_t *chars)
{
    (void)dfa, (void)s, (void)len, (void)pos, (void)content, (void)high, (void)backslash;
    (void)escapes, (void)chars;
    return false;
}
#endif

/* The string bodies of the block at p (`valid` bytes on, in the text at
 * s), as multibyte_strings_valid reads them (`quote`, `backslash`: the
 * block's). */
static inline __attribute__((always_inline)) bool
strings_valid(const encoding_dfa_t *dfa, const unsigned char *s, const unsigned char *p,
              size_t valid, uint64_t content, uint64_t high, uint64_t quote, uint64_t backslash,
              bool escapes, uint64_t escaped, uint64_t *chars)
{
    if (!*chars && !(high & content))
        return true; /* ASCII strings only */
    size_t pos = (size_t)(p - s);
    uint64_t follow;
    if (dfa->pairs && pairs_valid(dfa, s, pos + valid, pos, content, high, quote, backslash,
                                  escapes, chars, &follow))
        return true;
    if (dfa->utf8 && utf8_valid(dfa, s, pos + valid, pos, content, high, backslash, escapes, chars))
        return true;
    return multibyte_strings_valid(dfa, p, content, high, escapes, escapes ? escaped : 0, valid,
                                   chars);
}

#ifdef __AVX2__
/* The UTF-8 continuation bytes (0x80-0xbf) of the block at p. */
static inline uint64_t continuations(const unsigned char *p)
{
    lane_t lead_min = _mm256_set1_epi8((char)0xc0); /* as signed bytes, above them */
    uint64_t bits = 0;
    for (size_t i = 0; i < LANES; i++)
        bits |= bits_of(_mm256_cmpgt_epi8(lead_min, load_lane(p + LANE * i))) << (LANE * i);
    return bits;
}

/* Bytes of the character the automaton's `state` leaves open at `end`. */
static size_t open_bytes(const encoding_dfa_t *dfa, const unsigned char *end, uint64_t state)
{
    if (dfa->utf8) {
        size_t n = 1;
        while (end[-n] < 0xc0)
            n++;
        return n;
    }
    return state == dfa->after_digit_lead ? 3 : state == dfa->after_digit ? 2 : 1;
}

/* qg_count_chars (lexer_internal.h).  Flattened: utf8_valid inlined with
 * these constant arguments takes less time (docs/PERFORMANCE.md, "Choices
 * in the code"). */
__attribute__((flatten)) size_t COUNT_CHARS(const encoding_dfa_t *dfa, const unsigned char *s,
                                            size_t pos, size_t limit, size_t *chars)
{
    if (!dfa->pairs && !dfa->utf8)
        return pos;
    uint64_t state = 0;
    size_t n = *chars;
    for (; limit - pos >= BLOCK; pos += BLOCK) {
        const unsigned char *p = s + pos;
        uint64_t high = 0, follow = 0, after = state;
        for (size_t i = 0; i < LANES; i++)
            high |= bits_of(load_lane(p + LANE * i)) << (LANE * i);
        if (dfa->pairs ? !pairs_valid(dfa, s, limit, pos, ~0ull, high, 0, 0, false, &after, &follow)
                       : !utf8_valid(dfa, s, limit, pos, ~0ull, high, 0, false, &after))
            break;
        if (dfa->utf8)
            follow = continuations(p);
        n += BLOCK - (size_t)__builtin_popcountll(follow);
        state = after;
    }
    if (state) {
        pos -= open_bytes(dfa, s + pos, state); /* counted where it began */
        n--;
    }
    *chars = n;
    return pos;
}
#endif
#endif


#ifdef SKIP_QUIET
/* For the checker, which looks for a backslash pair (qg_next_backslash_pair)
 * in the whole text, the skip notes where it looked (lx->pairs_to: all of
 * [0, pairs_to)) and what it found (lx->backslash_pair).  Here: the bytes
 * up to `to` that no block read (the lexer's, a comment skipped whole). */
static inline void note_pairs_before(qg_lexer *lx, size_t to)
{
    if (lx->pairs_to < to) {
        lx->backslash_pair = lx->backslash_pair ||
                             qg_next_backslash_pair(lx->sql, lx->pairs_to, to, lx->len) < to;
        lx->pairs_to = to;
    }
}

/* And that it read the block of `valid` bytes at pos, and all blocks
 * since the last note. */
static inline void note_pairs_read(qg_lexer *lx, size_t pos, size_t valid)
{
    size_t end = pos + (valid < BLOCK ? valid : BLOCK);
    if (end > lx->pairs_to)
        lx->pairs_to = end;
}

/* And a block's `valid` bytes at pos that hold a backslash, by their masks
 * (`high` counted apart); the caller notes that it read up to the block's
 * end. */
static inline __attribute__((always_inline)) void
note_pairs_in_block(qg_lexer *lx, size_t pos, size_t valid, const block_masks *m, uint64_t live)
{
    const unsigned char *s = lx->sql;
    uint64_t after_high = (m->high << 1 | (pos > 0 && s[pos - 1] >= 0x80)) & m->backslash & live;
    if (!after_high)
        return; /* the common case: escapes after ASCII bytes */
    uint64_t before_escapable = (m->backslash | m->quote) >> 1;
    if (valid > BLOCK && (s[pos + BLOCK] == '\\' || s[pos + BLOCK] == '\''))
        before_escapable |= 1ull << 63;
    if (after_high & before_escapable)
        lx->backslash_pair = true;
}

/* Advances from lx->pos (in code) block by block while nothing in the
 * blocks needs the lexer.  Where something does, the lexer goes on from the
 * last code byte before it outside every string token (an anchor): a quote
 * may double the one before it, and in PG a string continues one before it
 * across whitespace with a newline, so the lexer must read whole tokens.
 * lx->quiet_from keeps later calls from scanning the same bytes again. */
static inline __attribute__((always_inline)) void skip_quiet_blocks(qg_lexer *lx, bool pg,
                                                                    bool mb, bool escapes)
{
    const unsigned char *s = lx->sql;
    size_t len = lx->len, start = lx->pos, pos = start;
    size_t anchor = pos;    /* the last anchor so far */
    uint64_t in_string = 0; /* all ones while a string is open at the block start */
    uint64_t chars = 0;     /* mb: automaton state, inside a character across blocks */
    size_t open_quote = 0;  /* in_string: where that string opened */
    /* MySQL mb: qg_introduced_quotes has passed open_quote already, so the
     * blocks the string goes on into need not ask again. */
    bool open_introduced_asked = false;
    uint64_t escape_carry = 0; /* 1: N escapes the block's first byte */
    /* Where the lexer counts quotes escaped by a backslash (a quote
     * doubler's literal ends there): their parity at pos and at anchor. */
    unsigned escaped_quotes = lx->escaped_quotes & 1, anchor_escaped = escaped_quotes;
    /* MySQL: after an odd number of double quotes escaped by a backslash
     * (in "" strings, the lexer's), a quote doubler's "" literal is open,
     * and the next single-quoted string may show where it ends
     * (doubler_sees_literal in src/core/lexer.c): the lexer reads on up to
     * that string.  Where no double quote follows, none ends it. */
    if ((lx->escaped_quotes & 2) && lx->findings && !lx->doubler_parts) {
        if (qg_quote_after(s, len, start, 2))
            return;
        lx->escaped_quotes &= ~2u;
    }
    const needles *n = needle_table();
    if (mb)
        note_pairs_before(lx, start);
    for (;;) {
        const unsigned char *p = s + pos;
        size_t valid = len - pos;
        uint64_t chars_before = chars;
        block_masks m = valid > BLOCK ? classify_at(n, p, p[BLOCK], pg, mb)
                                      : classify_last_block(n, s, len, p, valid, pg, mb);
        uint64_t live = valid >= BLOCK ? ~0ull : (1ull << valid) - 1;
        uint64_t quotes = m.quote, bad = m.bad, escaped = 0;
        if ((m.backslash & live) || escape_carry) {
            /* N takes every backslash as an escape; S too where `escapes`. */
            escaped = escaped_bytes(m.backslash & live, &escape_carry);
            if (escapes) {
                /* Escaped quotes do not count (as N reads them; strings_valid
                 * finds where S reads a trail byte otherwise, within a
                 * block: a run of backslashes at its end is the lexer's). */
                quotes &= ~escaped;
                bad |= m.backslash & (1ull << 63);
            } else {
                /* S reads them literally: the readings agree while N
                 * escapes no quote, in this block or the next. */
                bad |= quotes & escaped;
            }
        }
        uint64_t escaped_quote = lx->watch_escaped_quotes && escapes ? m.quote & escaped & live : 0;
        uint64_t inside = prefix_xor(quotes) ^ in_string;
        if (m.backslash & live) {
            if (mb)
                note_pairs_in_block(lx, pos, valid, &m, live);
            /* Strings of other rules are the lexer's.  The quotes are right
             * up to the first string that opens after such a prefix. */
            bad |= qg_quotes_after_prefix(s, pos, quotes & inside & live, escapes);
            if (in_string && qg_quotes_after_prefix(s, open_quote, 1, escapes))
                bad |= 1; /* the string open since a block before */
        }
        bool introducers_asked = !pg && mb && (m.high & inside & live);
        if (introducers_asked) {
            bad |= qg_introduced_quotes(s, pos, quotes & inside & live);
            if (in_string && !open_introduced_asked && qg_introduced_quotes(s, open_quote, 1))
                bad |= 1;
        }
        uint64_t problem = (bad | ((m.special | m.high | m.backslash) & ~inside)) & live;
        uint64_t anchors = ~inside & ~m.quote & ~m.special & ~bad & ~m.high & ~m.backslash;
        if (problem && !((inside >> __builtin_ctzll(problem)) & 1)) {
            /* A plain comment in code: skipped, once the strings before
             * it are found valid; the blocks go on after it. */
            unsigned at = (unsigned)__builtin_ctzll(problem);
            uint64_t ahead = (1ull << at) - 1;
            size_t after = qg_comment_end(s, len, pos + at, start, pg);
            if (after && (!mb || strings_valid(lx->dfa, s, p, valid, inside & ~quotes & ahead,
                                               m.high & ahead, m.quote, m.backslash, escapes,
                                               escaped & ahead, &chars))) {
                escaped_quotes ^= parity_below(escaped_quote, at);
                unsigned kinds = escaped_quotes | (lx->escaped_quotes & 2);
                if (kinds && lx->findings && qg_quote_after(s, len, pos + at, kinds))
                    lx->doubler_parts = true; /* as doubler_sees_literal in src/core/lexer.c */
                if (mb) {
                    note_pairs_read(lx, pos, valid);
                    note_pairs_before(lx, after < len ? after : len);
                }
                if (after >= len) {
                    lx->pos = len;
                    lx->quiet_from = len + 1;
                    return;
                }
                pos = anchor = after;
                anchor_escaped = escaped_quotes;
                in_string = escape_carry = 0;
                continue;
            }
        }
        /* Multibyte text is checked only in blocks that pass: else the
         * lexer goes on before its first high byte. */
        if (mb && (problem || !strings_valid(lx->dfa, s, p, valid, inside & ~quotes & live,
                                             m.high & live, m.quote, m.backslash, escapes, escaped,
                                             &chars)))
            problem |= (m.high & live) | (chars_before ? 1 : 0); /* 1: a character from the block before */
        if (!problem && valid > BLOCK) {
            if (anchors) {
                anchor = last_bit(pos, anchors);
                anchor_escaped = escaped_quotes ^ parity_below(escaped_quote, (unsigned)(anchor - pos));
            }
            escaped_quotes ^= parity_below(escaped_quote, BLOCK);
            in_string = (inside >> 63) ? ~0ull : 0;
            if (in_string && quotes) /* its quote is the block's last */
                open_quote = last_bit(pos, quotes);
            open_introduced_asked = introducers_asked || (open_introduced_asked && !quotes);
            pos += BLOCK;
            continue;
        }
        /* The first problem, or the end of the input: there in code, the
         * lexer has nothing left to read. */
        unsigned stop = problem ? (unsigned)__builtin_ctzll(problem) : (unsigned)valid;
        bool open = (inside >> (problem ? stop : stop - 1)) & 1; /* valid >= 1 */
        uint64_t before = stop == BLOCK ? ~0ull : (1ull << stop) - 1;
        if (anchors & before) {
            anchor = last_bit(pos, anchors & before);
            anchor_escaped = escaped_quotes ^ parity_below(escaped_quote, (unsigned)(anchor - pos));
        }
        if (!problem && !open) {
            lx->pos = len; /* ends in code: nothing left */
        } else {
            if (pg && in_continuation_gap(s, start, anchor)) {
                anchor = start;
                anchor_escaped = lx->escaped_quotes & 1;
            }
            lx->pos = anchor;
            lx->escaped_quotes = (lx->escaped_quotes & ~1u) | anchor_escaped;
        }
        /* Stopped at once by a high byte this skip does not read: such
         * text keeps the lexer busy for a while; leave it the next block
         * too. */
        if (mb)
            note_pairs_read(lx, pos, valid);
        size_t at = pos + stop;
        bool busy = problem && pos == start && s[at] >= 0x80;
        lx->quiet_from = at + 1 + (busy ? BLOCK : 0);
        return;
    }
}

/* Not QG_HOT: in the hot section its two builds would spread what every
 * query runs (the quick scan, the fronts) over many more pages, each one
 * more miss after a round trip (docs/PERFORMANCE.md, "Choices in the
 * code"); the statements that come here are long or need the lexer anyway. */
void SKIP_QUIET(qg_lexer *lx)
{
    /* Where ' is never a trail byte, quotes can be counted and multibyte
     * text inside strings is checked here too: as pairs where it can be,
     * else by the automaton.  Where the server reads backslash escapes in
     * plain strings, so does N: they are followed here. */
    bool pg = lx->ctx->dialect == QG_DIALECT_POSTGRES;
    bool escapes = qg_plain_strings_escape(lx->ctx);
    bool mb = lx->dfa && !lx->dfa->quote_trail;
    if (pg && mb)
        skip_quiet_blocks(lx, true, true, escapes);
    else if (pg)
        skip_quiet_blocks(lx, true, false, escapes);
    else if (mb)
        skip_quiet_blocks(lx, false, true, escapes);
    else
        skip_quiet_blocks(lx, false, false, escapes);
}
#endif

/* A lane's bytes for the quick scan: quotes, dashes, hashes, slashes and
 * dollars (`opener`: each may start a comment or a dollar quote); where
 * PG's quoted names are read, double quotes; when backslashes are
 * followed, they and the bytes x, b and & in either case (`prefix`: a
 * string after them may read backslashes otherwise: X'', B'', PG U&''), as
 * bit i for byte i. */
typedef struct quick_bytes {
    uint64_t quote, dquote, dash, opener, backslash, prefix;
} quick_bytes;

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
 * double quotes do. */
enum { LANE_READ, LANE_BACKSLASH, LANE_NAME, LANE_STOP };

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
#if LANE == 64
#define EVERY_16(...) {__VA_ARGS__, __VA_ARGS__, __VA_ARGS__, __VA_ARGS__}
#else
#define EVERY_16(...) {__VA_ARGS__, __VA_ARGS__}
#endif
typedef struct quick_tables {
    unsigned char by_low[LANE], by_high[LANE], nibble[LANE];
    unsigned char stops[LANE], but_backslash[LANE], but_dquote[LANE], but_both[LANE];
    unsigned char fold[LANE], x[LANE], b[LANE], ampersand[LANE]; /* for prefix_bits */
    /* for quiet_lanes; minus is needle DASH again: read from the needle
     * table there, it cost PG OLTP time (docs/PERFORMANCE.md) */
    unsigned char stops_openers[LANE], dash[LANE], minus[LANE];
#if LANE == 64
    unsigned char dquote[LANE], opener[LANE], prefix_letter[LANE]; /* class bits */
#endif
    unsigned char backslash[LANE];              /* the class bit */
    unsigned char stops_openers_escaping[LANE]; /* escaping_block: one test for both */
} quick_tables;
static const quick_tables quick_rows __attribute__((aligned(LANE))) = {
    /* every low nibble is a high byte's */
    .by_low = EVERY_16(
        Q_STOP_HIGH | Q_STOP_NUL, Q_STOP_HIGH, Q_STOP_HIGH | Q_DQUOTE | Q_PREFIX_LETTER,
        Q_STOP_HIGH | Q_OPENER, Q_STOP_HIGH | Q_OPENER, Q_STOP_HIGH, Q_STOP_HIGH,
        Q_STOP_HIGH | Q_QUOTE, Q_STOP_HIGH | Q_PREFIX_LETTER, Q_STOP_HIGH, Q_STOP_HIGH,
        Q_STOP_HIGH, Q_STOP_HIGH | Q_STOP_BACKSLASH, Q_STOP_HIGH | Q_DASH, Q_STOP_HIGH,
        Q_STOP_HIGH | Q_OPENER),
    .by_high = EVERY_16(
        Q_STOP_NUL, 0, Q_DQUOTE | Q_OPENER | Q_DASH | Q_QUOTE, 0, Q_PREFIX_LETTER,
        Q_STOP_BACKSLASH | Q_PREFIX_LETTER, Q_STOP_NUL | Q_PREFIX_LETTER, Q_PREFIX_LETTER,
        Q_STOP_HIGH, Q_STOP_HIGH, Q_STOP_HIGH, Q_STOP_HIGH, Q_STOP_HIGH, Q_STOP_HIGH,
        Q_STOP_HIGH, Q_STOP_HIGH),
    .nibble = {[0 ... LANE - 1] = 0x0f},
    .stops = {[0 ... LANE - 1] = Q_STOPS | Q_DQUOTE},
    .but_backslash = {[0 ... LANE - 1] = (Q_STOPS | Q_DQUOTE) & ~Q_STOP_BACKSLASH},
    .but_dquote = {[0 ... LANE - 1] = Q_STOPS},
    .but_both = {[0 ... LANE - 1] = Q_STOPS & ~Q_STOP_BACKSLASH},
    .fold = {[0 ... LANE - 1] = 0x20},
    .x = {[0 ... LANE - 1] = 'x'},
    .b = {[0 ... LANE - 1] = 'b'},
    .ampersand = {[0 ... LANE - 1] = '&'},
    .stops_openers = {[0 ... LANE - 1] = Q_STOPS | Q_DQUOTE | Q_OPENER},
    .dash = {[0 ... LANE - 1] = Q_DASH},
    .minus = {[0 ... LANE - 1] = '-'},
#if LANE == 64
    .dquote = {[0 ... LANE - 1] = Q_DQUOTE},
    .opener = {[0 ... LANE - 1] = Q_OPENER},
    .prefix_letter = {[0 ... LANE - 1] = Q_PREFIX_LETTER},
#endif
    .backslash = {[0 ... LANE - 1] = Q_STOP_BACKSLASH},
    .stops_openers_escaping = {[0 ... LANE - 1] =
                                   (Q_STOPS | Q_DQUOTE | Q_OPENER) & ~Q_STOP_BACKSLASH},
};
typedef quick_tables quick_table;
#if LANE == 64
/* Hidden from the optimiser, which would build the rows' bytes again in
 * registers in every span. */
static inline const quick_table *quick_table_hidden(void)
{
    const quick_table *table = &quick_rows;
    __asm__("" : "+r"(table));
    return table;
}
#define QUICK_TABLE quick_table_hidden()
#else
#define QUICK_TABLE (&quick_rows)
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
        b->prefix = prefix_bits(v, load_lane(t->fold), load_lane(t->x), load_lane(t->b),
                                load_lane(t->ampersand));
    }
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
            b->prefix |= prefix_bits(v[k], load_lane(t->fold), load_lane(t->x), load_lane(t->b),
                                     load_lane(t->ampersand))
                         << shift;
        }
    }
    return LANE_READ;
}
#endif
#else
typedef needles quick_table;
#define QUICK_TABLE needle_table()

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
 * the quotes before it, *before_comment to the bits before it.  SIZE_MAX when none starts one (a division, PG's
 * hash operator, a PG parameter $1 or a MySQL dollar, bytes in strings); 0
 * when the lexer must read it (comment_end; a dollar that may open a
 * dollar quote, as any other than one before a digit may: a tag never
 * starts with one). */
static inline __attribute__((always_inline)) size_t
quick_comment(const unsigned char *s, size_t len, size_t at, size_t span_at, int lanes,
              uint64_t openers, uint64_t *quote, bool open, const qg_context *ctx,
              uint64_t *before_comment)
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
            uint64_t *quote_parity)
{
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
            uint64_t *quote_parity)
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
 * count.  Returns where the spans go on (*escape_carry: 1 where that
 * byte is escaped; *quote_parity: a string is open there when odd). */
static inline __attribute__((always_inline)) size_t
quiet_escaping_spans(const quick_table *t, const unsigned char *s, size_t len, size_t i,
                     uint64_t *quote_parity, uint64_t *escape_carry, unsigned *escaped_quotes)
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
        uint64_t quote = b.quote & ~after.backslash;
        uint64_t in_string = prefix_xor(quote) ^ open;
        /* a backslash in code; a string that opens after a prefix */
        if ((b.backslash & ~in_string) | (quote & after.prefix & in_string))
            break;
        *escaped_quotes ^= (unsigned)__builtin_parityll(b.quote & after.backslash);
        open = 0 - (in_string >> 63); /* all ones when the top bit is set */
    }
    *quote_parity = open & 1; /* only its parity counts */
    *escape_carry = s[i - 1] == '\\';
    return i;
}
#endif

/* The quick scan's spans of `lanes` lanes from i on (`quote_parity`: of
 * the delimiters before i; the text holds at least a span).  Where
 * `names`, PG's quoted names are read (*name_open: one is open where the
 * scan stops); else double quotes stop the scan.  Where
 * `escaping`, a backslash must be inside a string, where it escapes the
 * next byte; the quote it escapes does not count; and no string may open
 * after a prefix. */
static inline __attribute__((always_inline)) int
quick_lanes(const quick_table *table, const unsigned char *s, size_t len, size_t *from,
            uint64_t *quote_parity, bool *name_open, const qg_context *ctx, int lanes, bool names,
            bool escaping)
{
    const size_t span = (size_t)LANE * (size_t)lanes;
    bool in_name = names && *name_open;
    uint64_t escape_carry = 0; /* 1: the next span's first byte is escaped */
    unsigned escaped_quotes = 0; /* their parity before the span */
    for (size_t i = *from; i < len;) {
        uint64_t escaped_quote = 0; /* the span's */
#ifdef __AVX2__
        if (!names && i > 0 && i + QUIET_SPAN <= len &&
            (i = escaping ? quiet_escaping_spans(table, s, len, i, quote_parity, &escape_carry,
                                                 &escaped_quotes)
                          : quiet_lanes(table, s, len, i, quote_parity)) == len)
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
        if (escaping) {
            /* No branch on whether the span holds a backslash: in a text
             * with escapes, about half the spans do, and it would guess
             * wrong.  A backslash escaped by one is rare. */
            uint64_t backslash = b.backslash >> seen;
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
            uint64_t in_string = prefix_xor(quote) ^ (open ? ~0ull : 0);
            uint64_t after_prefix = (b.prefix << 1 | is_prefix(before)) >> seen;
            /* a backslash in code; a quote that opens a string after a prefix */
            if ((backslash & ~in_string) | (quote & after_prefix & in_string))
                return LANE_STOP;
        }
        if (openers) {
            /* A quote doubler reads an escaped quote as a literal's end: a
             * comment after an odd number of them is inside its literal,
             * and may hide the quote that leaves over where one follows
             * (the lexer's and the checker's: doubler_sees_literal in
             * src/core/lexer.c). */
            uint64_t all_quotes = quote, before_comment = 0;
            size_t end = quick_comment(s, len, i, at, lanes, openers, &quote, open, ctx,
                                       &before_comment);
            if (!end)
                return LANE_STOP;
            if (end != SIZE_MAX) {
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
                in_name = false; /* the comment is in code */
                i = end;
                escape_carry = 0;
                continue;
            }
        }
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
            bool escaping)
{
    if (LANE < 64 && len >= 2 * (size_t)LANE)
        return quick_lanes(table, s, len, from, quote_parity, name_open, ctx, 2, names, escaping);
    return quick_lanes(table, s, len, from, quote_parity, name_open, ctx, 1, names, escaping);
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

/* On from the lane where the quick scan met a backslash, in a text where
 * the server reads backslash escapes: out of line, so that the scan of
 * every other text keeps its registers.  In PG a string there may have
 * begun anywhere before (a doubled quote goes on with U&'', a newline
 * with B''): no quote before may follow a prefix. */
static __attribute__((noinline)) bool quick_scan_escaping(const quick_table *table,
                                                          const unsigned char *s, size_t len,
                                                          size_t from, uint64_t quote_parity,
                                                          const qg_context *ctx)
{
    if (ctx->dialect == QG_DIALECT_POSTGRES ? quote_after_prefix(needle_table(), s, len, from)
                                            : open_string_after_prefix(s, from, quote_parity))
        return false;
    bool no_name = false; /* names are not read here */
    return quick_spans(table, s, len, &from, &quote_parity, &no_name, ctx, false, true) ==
               LANE_READ &&
           !__builtin_parityll(quote_parity);
}

/* On from the lane where the quick scan met a PG quoted name (a double
 * quote): out of line, as above. */
static __attribute__((noinline)) bool quick_scan_names(const quick_table *table,
                                                       const unsigned char *s, size_t len,
                                                       size_t from, uint64_t quote_parity,
                                                       const qg_context *ctx)
{
    bool in_name = false;
    int lane = quick_spans(table, s, len, &from, &quote_parity, &in_name, ctx, true, false);
    if (lane == LANE_BACKSLASH && qg_plain_strings_escape(ctx) && !in_name)
        return quick_scan_escaping(table, s, len, from, quote_parity, ctx);
    return lane == LANE_READ && !__builtin_parityll(quote_parity);
}

QG_HOT bool QUICK_SCAN(const qg_context *ctx, const char *sql, size_t len)
{
    const unsigned char *s = (const unsigned char *)sql;
    const quick_table *table = QUICK_TABLE;
    if (len == 0)
        return true; /* nothing to read; sql may be NULL */
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
    bool no_name = false; /* names are read in quick_scan_names */
    int lane = quick_spans(table, s, len, &from, &quote_parity, &no_name, ctx, false, false);
    if (lane == LANE_NAME && ctx->dialect == QG_DIALECT_POSTGRES)
        return quick_scan_names(table, s, len, from, quote_parity, ctx);
    if (lane == LANE_BACKSLASH && qg_plain_strings_escape(ctx))
        return quick_scan_escaping(table, s, len, from, quote_parity, ctx);
    /* An odd count leaves the last string open. */
    return lane == LANE_READ && !__builtin_parityll(quote_parity);
}
#endif
