/* The AVX2 build: 32-byte lanes.  The vector helpers the scans are written
 * with, and the names of the scans this build provides; included by
 * scan_lanes.h alone, in the builds compiled with -mavx2 -mbmi2 -mpclmul. */
#ifndef QG_SIMD_AVX2_H
#define QG_SIMD_AVX2_H

#include <immintrin.h>
#include <stdint.h>

#define LANE 32
typedef __m256i lane_t;
#define SKIP_QUIET qg_skip_quiet_avx2
#define QUICK_SCAN qg_quick_scan_avx2
#define COUNT_CHARS qg_count_chars_avx2
#define QUICK_SCAN_LETTERS qg_quick_scan_letters_avx2
#define QUICK_SCAN_UTF8 qg_quick_scan_utf8_avx2
#define PAIR_LETTERS qg_pair_letters_avx2
static inline lane_t load_lane(const unsigned char *p)
{
    return _mm256_loadu_si256((const __m256i *)p);
}
static inline lane_t eq(lane_t a, lane_t b)
{
    return _mm256_cmpeq_epi8(a, b);
}
static inline lane_t or_lanes(lane_t a, lane_t b)
{
    return _mm256_or_si256(a, b);
}
static inline lane_t and_lanes(lane_t a, lane_t b)
{
    return _mm256_and_si256(a, b);
}
static inline uint64_t bits_of(lane_t m)
{
    return (uint32_t)_mm256_movemask_epi8(m);
}
static inline uint64_t eq_bits(lane_t a, lane_t b)
{
    return bits_of(eq(a, b));
}
static inline lane_t lookup(lane_t row, lane_t index)
{
    return _mm256_shuffle_epi8(row, index);
}
static inline lane_t nibbles_down(lane_t v)
{
    return _mm256_srli_epi16(v, 4);
}
/* The bytes one further on: v's bytes 1-31, then follow's byte 0. */
static inline lane_t next_bytes(lane_t v, lane_t follow)
{
    return _mm256_alignr_epi8(_mm256_permute2x128_si256(v, follow, 0x21), v, 1);
}
/* The bytes whose bit is set in `bits` (bit i: byte i) all ones, the
 * others zero: each byte of `bits` spread over eight, each of those
 * keeping its own bit. */
static inline lane_t bytes_of_bits(uint32_t bits)
{
    const lane_t spread = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                                           2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
    const lane_t bit = _mm256_set1_epi64x((long long)0x8040201008040201ull);
    lane_t v = _mm256_shuffle_epi8(_mm256_set1_epi32((int)bits), spread);
    return _mm256_cmpeq_epi8(_mm256_and_si256(v, bit), bit);
}
static inline lane_t one_byte(unsigned char c)
{
    return _mm256_zextsi128_si256(_mm_cvtsi32_si128(c));
}

#endif
