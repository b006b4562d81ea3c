/* The AVX-512 build: 64-byte lanes, the quick scan only
 * (src/core/quick_scan.c).  The vector helpers it is written with, and the
 * names of the scans this build provides; included by scan_lanes.h alone, in
 * the build compiled with -mavx2 -mbmi2 -mpclmul -mavx512f -mavx512bw. */
#ifndef QG_SIMD_AVX512_H
#define QG_SIMD_AVX512_H

#include <immintrin.h>
#include <stdint.h>

/* The quick scan only: one 64-byte lane a span, its masks straight from
 * the compares. */
#define LANE 64
typedef __m512i lane_t;
#define QUICK_SCAN qg_quick_scan_avx512
#define QUICK_SCAN_LETTERS qg_quick_scan_letters_avx512
static inline lane_t load_lane(const unsigned char *p)
{
    return _mm512_loadu_si512((const void *)p);
}
static inline uint64_t eq_bits(lane_t a, lane_t b)
{
    return _mm512_cmpeq_epi8_mask(a, b);
}
static inline lane_t or_lanes(lane_t a, lane_t b)
{
    return _mm512_or_si512(a, b);
}
static inline lane_t and_lanes(lane_t a, lane_t b)
{
    return _mm512_and_si512(a, b);
}
/* Byte i of the result: row's byte index[i] (0-15) of the same 16. */
static inline lane_t lookup(lane_t row, lane_t index)
{
    return _mm512_shuffle_epi8(row, index);
}
/* Each byte's high nibble in its low bits (with the next byte's low bits
 * above, for a mask to clear). */
static inline lane_t nibbles_down(lane_t v)
{
    return _mm512_srli_epi16(v, 4);
}

#endif
