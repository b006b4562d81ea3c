/* The letter-pair filter before PostgreSQL's setting reader
 * (qg_pg_may_set, src/core/pg_state.h), in each build of the vector
 * table (src/core/vectors.c): byte by byte, the reference; sixteen pairs
 * a step; 32 a step.  It calls no other file of the project. */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "lexer_internal.h"
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PAIRS_AVX2 1
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

/* The letter pairs, lower case, of which each word the setting reader
 * (src/core/pg_state.c) looks for (set_config, RESET, DISCARD, NAMES,
 * client_encoding, standard_conforming_strings) holds one, and SET too: "et"
 * (set_config, reset, set), "di" (discard), "am" (names), "ie"
 * (client_encoding), "nf" (standard_conforming_strings).  A byte with
 * 0x20 set equals a lower-case letter only where it is that letter in
 * either case. */
#define SETTING_PAIRS(PAIR)                                                                 \
    PAIR('e', 't') PAIR('d', 'i') PAIR('a', 'm') PAIR('i', 'e') PAIR('n', 'f')

#define PAIR_IS(x, y) || (a == (x) && b == (y))

bool qg_pg_may_set_bytes(const char *s, size_t len)
{
    for (size_t i = 0; i + 1 < len; i++) {
        unsigned char a = (unsigned char)s[i] | 0x20, b = (unsigned char)s[i + 1] | 0x20;
        if (false SETTING_PAIRS(PAIR_IS))
            return true;
    }
    return false;
}

#ifdef __SSE2__
#define PAIR_HIT(x, y)                                                                      \
    hit = _mm_or_si128(hit, _mm_and_si128(_mm_cmpeq_epi8(a, _mm_set1_epi8(x)),             \
                                          _mm_cmpeq_epi8(b, _mm_set1_epi8(y))));

/* Whether the sixteen pairs of bytes a[i], b[i] hold one of those pairs. */
static inline bool pairs16(__m128i a, __m128i b)
{
    a = _mm_or_si128(a, _mm_set1_epi8(0x20));
    b = _mm_or_si128(b, _mm_set1_epi8(0x20));
    __m128i hit = _mm_setzero_si128();
    SETTING_PAIRS(PAIR_HIT)
    return _mm_movemask_epi8(hit) != 0;
}

/* Sixteen pairs a step (out of line: the frame its short texts' copy
 * needs is not the AVX2 filter's). */
__attribute__((noinline)) bool qg_pg_may_set_sse2(const char *s, size_t len)
{
    if (len < 17) {
        char tail[32] = {0}; /* zero bytes pair with nothing */
        memcpy(tail, s, len);
        return pairs16(_mm_loadu_si128((const __m128i *)tail),
                       _mm_loadu_si128((const __m128i *)(tail + 1)));
    }
    /* the pairs from s[at] on, sixteen a step; the last step ends at the
     * text's end, over pairs read already */
    for (size_t at = 0;; at += 16) {
        if (at > len - 17)
            at = len - 17;
        if (pairs16(_mm_loadu_si128((const __m128i *)(s + at)),
                    _mm_loadu_si128((const __m128i *)(s + at + 1))))
            return true;
        if (at == len - 17)
            return false;
    }
}

#ifdef PAIRS_AVX2
/* The AVX2 filter, 32 pairs a step, each byte classed by two nibble
 * look-ups: the pairs a byte may begin (first_*), the ones it may end
 * (second_*), a bit each; a pair is one where a byte's first bits meet
 * the next byte's second bits.  The letters' high nibbles are 4 or 6 (t:
 * 5 or 7), so either case matches and nothing else does. */
#define NIBBLES(a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, q)                              \
    _mm256_setr_epi8(a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, q, a, b, c, d, e, f, g, h, i, \
                     j, k, l, m, n, o, q)
enum { PAIR_ET = 1, PAIR_DI = 2, PAIR_AM = 4, PAIR_IE = 8, PAIR_NF = 16 };

__attribute__((target("avx2"))) static inline __m256i pair_bits(__m256i v, __m256i by_low,
                                                                 __m256i by_high)
{
    const __m256i nibble = _mm256_set1_epi8(0x0f);
    __m256i low = _mm256_and_si256(v, nibble);
    __m256i high = _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble);
    return _mm256_and_si256(_mm256_shuffle_epi8(by_low, low), _mm256_shuffle_epi8(by_high, high));
}

__attribute__((target("avx2"))) bool qg_pg_may_set_avx2(const char *s, size_t len)
{
    if (len < 33)
        return qg_pg_may_set_sse2(s, len);
    /* e, d, a, i, n by their low nibble; either case's high nibble */
    const __m256i first_low = NIBBLES(0, PAIR_AM, 0, 0, PAIR_DI, PAIR_ET, 0, 0, 0, PAIR_IE, 0, 0,
                                      0, 0, PAIR_NF, 0);
    const __m256i first_high = NIBBLES(0, 0, 0, 0, 0x1f, 0, 0x1f, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    /* t, i, m, e, f by their low nibble; t's high nibble, the others' */
    const __m256i second_low = NIBBLES(0, 0, 0, 0, PAIR_ET, PAIR_IE, PAIR_NF, 0, 0, PAIR_DI, 0, 0,
                                       0, PAIR_AM, 0, 0);
    const int others = PAIR_DI | PAIR_AM | PAIR_IE | PAIR_NF;
    const __m256i second_high =
        NIBBLES(0, 0, 0, 0, others, PAIR_ET, others, PAIR_ET, 0, 0, 0, 0, 0, 0, 0, 0);
    /* the pairs from s[at] on, 32 a step; the last step ends at the text's
     * end, over pairs read already */
    for (size_t at = 0;; at += 32) {
        if (at > len - 33)
            at = len - 33;
        __m256i first = pair_bits(_mm256_loadu_si256((const __m256i *)(s + at)), first_low,
                                  first_high);
        __m256i second = pair_bits(_mm256_loadu_si256((const __m256i *)(s + at + 1)),
                                   second_low, second_high);
        if (!_mm256_testz_si256(first, second))
            return true;
        if (at == len - 33)
            return false;
    }
}
#endif
#endif
