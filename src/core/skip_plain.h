/* Runs of plain bytes: how far a reader in one state may skip before a
 * byte that can end the state (a quote, a comment opener, a NUL, a high
 * byte), the reference one byte at a time and SSE2 sixteen at a time.
 * Static and inlined where used: the lexer's inner loop, and the scans'
 * scalar helpers (block_scalar.c) for comment text. */
#ifndef QG_SKIP_PLAIN_H
#define QG_SKIP_PLAIN_H

#include <stdbool.h>
#include <stddef.h>

/* Bytes that can end a run of plain bytes, per state (bit per state). */
enum {
    STOP_PG_CODE = 1,
    STOP_MY_CODE = 2,
    STOP_QUOTED = 4,
    STOP_DOLLAR = 8,
    STOP_BLOCK = 16,
    STOP_LINE = 32,   /* PG's line comment: either newline byte ends it */
    STOP_MY_LINE = 64 /* MySQL's: only \n does */
};
static const unsigned char stop_table[256] = {
    [0x00] = STOP_PG_CODE | STOP_MY_CODE | STOP_QUOTED | STOP_DOLLAR | STOP_BLOCK | STOP_LINE |
             STOP_MY_LINE,
    ['\n'] = STOP_LINE | STOP_MY_LINE,
    ['\r'] = STOP_LINE,
    ['\''] = STOP_PG_CODE | STOP_MY_CODE | STOP_QUOTED,
    ['"'] = STOP_PG_CODE | STOP_MY_CODE | STOP_QUOTED,
    ['`'] = STOP_MY_CODE | STOP_QUOTED,
    ['\\'] = STOP_QUOTED,
    ['$'] = STOP_PG_CODE | STOP_DOLLAR,
    ['-'] = STOP_PG_CODE | STOP_MY_CODE,
    ['/'] = STOP_PG_CODE | STOP_MY_CODE | STOP_BLOCK,
    ['*'] = STOP_MY_CODE | STOP_BLOCK,
    ['#'] = STOP_MY_CODE,
};

/* The reference: one table lookup per byte. */
static inline size_t skip_plain_scalar(const unsigned char *s, size_t pos, size_t len,
                                       unsigned mask, bool stop_high)
{
    while (pos < len) {
        unsigned char c = s[pos];
        if (c >= 0x80 ? stop_high : (stop_table[c] & mask) != 0)
            break;
        pos++;
    }
    return pos;
}

#ifdef __SSE2__
#include <emmintrin.h>

/* Bit i set when byte i of v is in the stop set of `mask`.  Inlined with a
 * constant mask, the switch folds away and the needles become constants. */
static inline __attribute__((always_inline)) unsigned stop_bits(__m128i v, unsigned mask)
{
#define EQ(c) _mm_cmpeq_epi8(v, _mm_set1_epi8((char)(c)))
    __m128i hit;
    switch (mask) {
    case STOP_PG_CODE:
        hit = _mm_or_si128(_mm_or_si128(_mm_or_si128(EQ(0), EQ('\'')), _mm_or_si128(EQ('"'), EQ('$'))),
                           _mm_or_si128(EQ('-'), EQ('/')));
        break;
    case STOP_MY_CODE:
        hit = _mm_or_si128(
            _mm_or_si128(_mm_or_si128(EQ(0), EQ('\'')), _mm_or_si128(EQ('"'), EQ('`'))),
            _mm_or_si128(_mm_or_si128(EQ('-'), EQ('/')), _mm_or_si128(EQ('*'), EQ('#'))));
        break;
    case STOP_QUOTED:
        hit = _mm_or_si128(_mm_or_si128(_mm_or_si128(EQ(0), EQ('\'')), _mm_or_si128(EQ('"'), EQ('`'))),
                           EQ('\\'));
        break;
    case STOP_DOLLAR:
        hit = _mm_or_si128(EQ(0), EQ('$'));
        break;
    case STOP_BLOCK:
        hit = _mm_or_si128(_mm_or_si128(EQ(0), EQ('*')), EQ('/'));
        break;
    case STOP_LINE:
        hit = _mm_or_si128(_mm_or_si128(EQ(0), EQ('\n')), EQ('\r'));
        break;
    default: /* STOP_MY_LINE */
        hit = _mm_or_si128(EQ(0), EQ('\n'));
        break;
    }
#undef EQ
    return (unsigned)_mm_movemask_epi8(hit);
}

/* Sixteen bytes at a time; high bytes stop through their own top bit. */
static inline __attribute__((always_inline)) size_t
skip_plain_sse2(const unsigned char *s, size_t pos, size_t len, unsigned mask, bool stop_high)
{
    while (pos + 16 <= len) {
        __m128i v = _mm_loadu_si128((const __m128i *)(s + pos));
        unsigned bits = stop_bits(v, mask);
        if (stop_high)
            bits |= (unsigned)_mm_movemask_epi8(v);
        if (bits)
            return pos + (size_t)__builtin_ctz(bits);
        pos += 16;
    }
    if (pos == len || len < 16)
        return skip_plain_scalar(s, pos, len, mask, stop_high);
    /* The last bytes: the input's last 16, without those before pos. */
    __m128i v = _mm_loadu_si128((const __m128i *)(s + len - 16));
    unsigned bits = stop_bits(v, mask);
    if (stop_high)
        bits |= (unsigned)_mm_movemask_epi8(v);
    bits >>= 16 - (len - pos);
    return bits ? pos + (size_t)__builtin_ctz(bits) : len;
}
#endif

#endif
