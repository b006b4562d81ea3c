/* The SSE2 build: 16-byte lanes.  The vector helpers the scans are written
 * with, and the names of the scans this build provides; included by
 * scan_lanes.h alone, in the builds compiled with the baseline flags (SSE2
 * on x86-64). */
#ifndef QG_SIMD_SSE2_H
#define QG_SIMD_SSE2_H

#include <emmintrin.h>
#include <stdint.h>

#define LANE 16
typedef __m128i lane_t;
#define SKIP_QUIET qg_skip_quiet_sse2
#define QUICK_SCAN qg_quick_scan_sse2
static inline lane_t load_lane(const unsigned char *p)
{
    return _mm_loadu_si128((const __m128i *)p);
}
static inline lane_t eq(lane_t a, lane_t b)
{
    return _mm_cmpeq_epi8(a, b);
}
static inline lane_t or_lanes(lane_t a, lane_t b)
{
    return _mm_or_si128(a, b);
}
static inline lane_t and_lanes(lane_t a, lane_t b)
{
    return _mm_and_si128(a, b);
}
static inline uint64_t bits_of(lane_t m)
{
    return (uint16_t)_mm_movemask_epi8(m);
}
static inline uint64_t eq_bits(lane_t a, lane_t b)
{
    return bits_of(eq(a, b));
}
static inline lane_t next_bytes(lane_t v, lane_t follow)
{
    return _mm_or_si128(_mm_srli_si128(v, 1), _mm_slli_si128(follow, 15));
}
static inline lane_t one_byte(unsigned char c)
{
    return _mm_cvtsi32_si128(c);
}

#endif
