/* The multibyte validators over 64-byte blocks: whether the string bodies
 * of a block are valid characters of the encoding, as lead and trail pairs
 * (SJIS, BIG5, GBK, UHC, EUC-KR; GB18030's four-byte characters as two
 * pairs), as UTF-8 by nibble lookups, else by the encoding's automaton.
 * Inlined into the block skip (src/core/block_skip.c) and the character
 * count, in the builds that skip blocks. */
#ifndef QG_MULTIBYTE_BLOCKS_H
#define QG_MULTIBYTE_BLOCKS_H

#include "scan_lanes.h"
#include "utf8_lanes.h"

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
/* A nibble set's rows, each in both halves of a lane. */
typedef struct set_rows {
    lane_t low, high;
} set_rows;

static inline __attribute__((always_inline)) set_rows set_rows_of(const nibble_set *set)
{
    return (set_rows){lookup_rows(set->low), lookup_rows(set->high)};
}

/* Bit i set when byte i of a lane, by its low and its high nibble, is in
 * the set of `rows`. */
static inline __attribute__((always_inline)) uint64_t lane_in_set(set_rows rows, lane_t low,
                                                                 lane_t high)
{
    lane_t hit = and_lanes(lookup(rows.low, low), lookup(rows.high, high));
    return (uint32_t)~_mm256_movemask_epi8(eq(hit, _mm256_setzero_si256()));
}

/* Bit i set when byte i of the 64 at p is in `set`. */
static inline uint64_t set_bits(const nibble_set *set, const unsigned char *p)
{
    set_rows rows = set_rows_of(set);
    lane_t nibble = _mm256_set1_epi8(0x0f);
    uint64_t bits = 0;
#pragma GCC unroll 4
    for (size_t i = 0; i < LANES; i++) {
        lane_t v = load_lane(p + LANE * i);
        bits |= lane_in_set(rows, and_lanes(v, nibble), and_lanes(nibbles_down(v), nibble))
                << (LANE * i);
    }
    return bits;
}

/* The bytes that lead a character among those that may (`leads`; carry_in:
 * 1 when bit 0 is the trail of a lead before): each run of them starts a
 * character, so a lead is at an even distance from its run's start, and
 * the byte after each lead is its trail.  Adding the first bit of each run
 * that starts on an even bit clears that run, which picks the runs; each
 * takes the bits of its start's parity. */
static inline uint64_t pair_leads(uint64_t leads, uint64_t carry_in)
{
    leads &= ~carry_in;
    uint64_t starts = leads & ~(leads << 1);
    uint64_t even_runs = leads & ~(leads + (starts & EVEN_BITS));
    return leads & ~(even_runs ^ EVEN_BITS);
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
 * those that may lead a character alternate lead and trail (pair_leads);
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
    /* The last block: the input's last 64 bytes, their bits shifted down
     * to the block's (none past the input's end), else its bytes copied
     * into a block of spaces. */
    unsigned char tail[BLOCK];
    const unsigned char *p = s + pos;
    unsigned shift = 0;
    if (len - pos < BLOCK) {
        if (len >= BLOCK) {
            shift = (unsigned)(BLOCK - (len - pos));
            p = s + len - BLOCK;
        } else {
            memset(tail, ' ', sizeof tail);
            memcpy(tail, p, len - pos);
            p = tail;
        }
    }
    uint64_t leads = (set_bits(&dfa->lead, p) >> shift) & content;
    uint64_t lead = pair_leads(leads, carry_in), digits = 0, seconds = 0;
    uint64_t trail = lead << 1 | carry_in;
    uint64_t trails = set_bits(&dfa->trail, p) >> shift;
    if (dfa->quads) {
        digits = trail & (set_bits(&dfa->digit, p) >> shift) & content;
        seconds = second_digits(digits & ~fourth_first);
        uint64_t owed = (seconds << 2) | fourth_first; /* fourth bytes */
        if ((owed & ~digits) || (seconds >> 62 == 1 && !(lead >> 63)))
            return false;
        trails |= digits;
    }
    if (trail & ~(trails & content))
        return false;
    /* High bytes that neither lead nor end a pair, most often none. */
    uint64_t alone = high & content & ~leads & ~trail;
    if (alone && (alone & ~(set_bits(&dfa->single, p) >> shift)))
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
 * bytes before it (p[-3..-1] must be readable). */
static inline __attribute__((always_inline)) uint64_t utf8_wrong(const encoding_dfa_t *dfa,
                                                                 const unsigned char *p)
{
    utf8_rows rows = utf8_rows_of(dfa);
    lane_t none = _mm256_setzero_si256();
    uint64_t wrong = 0;
#pragma GCC unroll 4
    for (size_t i = 0; i < LANES; i++) {
        const unsigned char *q = p + LANE * i;
        lane_t bad = utf8_lane_wrong(&rows, load_lane(q), load_lane(q - 1), load_lane(q - 2),
                                     load_lane(q - 3));
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
 * outside the bodies are not UTF-8: the automaton then reads the bodies.
 * Inlined, as pairs_valid: a call in each block with multibyte literals
 * cost more than the code it saves (docs/PERFORMANCE.md, "Choices in the
 * code"). */
static inline __attribute__((always_inline)) bool
utf8_valid(const encoding_dfa_t *dfa, const unsigned char *s, size_t len, size_t pos,
           uint64_t content, uint64_t high, uint64_t backslash, bool escapes, uint64_t *chars)
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
    /* Read on only where the block ends inside a character: utf8_wrong
     * found each byte right after those before it. */
    uint64_t state = 0;
    const unsigned char *end = p + BLOCK;
    if ((content >> 63) && end[-1] >= 0x80 &&
        (end[-1] >= 0xc0 || end[-2] >= 0xe0 || end[-3] >= 0xf0)) {
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

/* What a block's validation knows of its last byte: whether the server
 * reads it as part of a character begun before it (a trail byte). */
typedef enum { LAST_NOT_TRAIL, LAST_TRAIL, LAST_UNKNOWN } last_byte;

/* The string bodies of the block at p (`valid` bytes on, in the text at
 * s), as multibyte_strings_valid reads them (`quote`, `backslash`: the
 * block's).  *last: how the server reads the block's last byte, where
 * they are valid. */
static inline __attribute__((always_inline)) bool
strings_valid(const encoding_dfa_t *dfa, const unsigned char *s, const unsigned char *p,
              size_t valid, uint64_t content, uint64_t high, uint64_t quote, uint64_t backslash,
              bool escapes, uint64_t escaped, uint64_t *chars, last_byte *last)
{
    *last = LAST_NOT_TRAIL; /* a trail follows a high byte; in UTF-8, one is high */
    if (!*chars && !(high & content))
        return true; /* ASCII strings only */
    size_t pos = (size_t)(p - s);
    uint64_t follow;
    if (dfa->pairs && pairs_valid(dfa, s, pos + valid, pos, content, high, quote, backslash,
                                  escapes, chars, &follow)) {
        *last = follow >> 63 ? LAST_TRAIL : LAST_NOT_TRAIL;
        return true;
    }
    if (dfa->utf8 && utf8_valid(dfa, s, pos + valid, pos, content, high, backslash, escapes, chars))
        return true;
    *last = LAST_UNKNOWN;
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
        while (*(end - n) < 0xc0) /* not end[-n]: -n would wrap, n being unsigned */
            n++;
        return n;
    }
    return state == dfa->after_digit_lead ? 3 : state == dfa->after_digit ? 2 : 1;
}
#endif
#endif

#endif
