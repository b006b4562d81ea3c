/* What the vector scans share (src/core/block_skip.c, quick_scan.c): this
 * build's lanes (simd_sse2.h, simd_avx2.h, simd_avx512.h, picked by the
 * compiler's flags), the needle bytes the blocks are compared with, and
 * the parity of quotes and backslash runs over 64-byte blocks.  Included by
 * the scans' files alone, in each build. */
#ifndef QG_SCAN_LANES_H
#define QG_SCAN_LANES_H

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


/* The bytes the blocks are compared with, a lane of each, read from
 * memory by the compares themselves.  Each skip hides the table's address
 * from the optimiser (needle_table), which would otherwise build every
 * needle again in registers, three instructions, at every compare. */
#define NEEDLE(c) {[0 ... LANE - 1] = (c)}
typedef struct needles {
    unsigned char lane[20][LANE];
} needles;
static const needles needle_bytes __attribute__((aligned(LANE))) = {{
    NEEDLE('\''), NEEDLE('\\'), NEEDLE(0),   NEEDLE('-'),  NEEDLE('/'),  NEEDLE('*'),
    NEEDLE('"'),  NEEDLE('$'),  NEEDLE('`'), NEEDLE('#'),  NEEDLE(' '),  NEEDLE('x'),
    NEEDLE('b'),  NEEDLE('&'),  NEEDLE('\n'), NEEDLE('\r'), NEEDLE(0x0f), NEEDLE(UTF8_CONTS),
    NEEDLE(0xe0 - 0x80), NEEDLE(0xf0 - 0x80),
}};
enum {
    QUOTE, BACKSLASH, NUL, DASH, SLASH, STAR, DQUOTE, DOLLAR, BACKTICK, HASH,
    SPACE, LOWER_X, LOWER_B, AMPERSAND, /* for prefix_bits */
    NEWLINE, RETURN, /* for comment_end_in_span */
    /* for the multibyte validators */
    LOW_NIBBLE, CONTS, BELOW_THREE_BYTE_LEAD, BELOW_FOUR_BYTE_LEAD
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


#endif
#endif
