/* UTF-8 validated a lane at a time by nibble lookups, after the three
 * bytes before each byte: shared by the multibyte validators
 * (multibyte_blocks.h) and the quick scan of a UTF-8 text
 * (src/core/quick_scan.c).  The AVX2 build's. */
#ifndef QG_UTF8_LANES_H
#define QG_UTF8_LANES_H

#include "encoding_tables.h"
#include "scan_lanes.h"

#ifdef __AVX2__
/* The 16 bytes of a nibble lookup table, in both halves of a lane. */
static inline lane_t lookup_rows(const unsigned char row[16])
{
    return _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)row));
}

static inline lane_t high_nibbles(const needles *n, lane_t v)
{
    return and_lanes(nibbles_down(v), needle(n, LOW_NIBBLE));
}

/* A UTF-8's nibble rows (encoding_dfa.utf8_before_high, utf8_before_low,
 * utf8_high), each in both halves of a lane. */
typedef struct utf8_rows {
    lane_t before_high, before_low, high;
} utf8_rows;

static inline __attribute__((always_inline)) utf8_rows utf8_rows_of(const encoding_dfa_t *dfa)
{
    return (utf8_rows){lookup_rows(dfa->utf8_before_high), lookup_rows(dfa->utf8_before_low),
                       lookup_rows(dfa->utf8_high)};
}

/* The bytes of the lane v that are wrong in UTF-8 after the three bytes
 * before each (`before1` … `before3`), not 0: the pair a byte makes with
 * the byte before is wrong (the rows), or it is or is not a continuation
 * where a lead two or three bytes before asks otherwise.  A three-byte
 * lead (from 0xe0 on) less 0x60, and a four-byte lead (from 0xf0 on) less
 * 0x70, saturated at 0, keep their top bit, which every other byte
 * loses: two subtractions where a compare each took two.  The constants
 * from memory: one load each, where building them in registers takes
 * three instructions each. */
static inline __attribute__((always_inline)) lane_t utf8_lane_wrong(const utf8_rows *r, lane_t v,
                                                                   lane_t before1, lane_t before2,
                                                                   lane_t before3)
{
    const needles *n = needle_table();
    lane_t nibble = needle(n, LOW_NIBBLE), conts = needle(n, CONTS);
    lane_t below_three = needle(n, BELOW_THREE_BYTE_LEAD);
    lane_t below_four = needle(n, BELOW_FOUR_BYTE_LEAD);
    lane_t by_before = and_lanes(lookup(r->before_high, high_nibbles(n, before1)),
                                 lookup(r->before_low, and_lanes(before1, nibble)));
    lane_t pair = and_lanes(by_before, lookup(r->high, high_nibbles(n, v)));
    lane_t asks = or_lanes(_mm256_subs_epu8(before2, below_three),
                           _mm256_subs_epu8(before3, below_four));
    return _mm256_xor_si256(pair, and_lanes(asks, conts));
}

#endif

#endif
